"""``python -m polytopo.models.training``: see :mod:`polytopo.models.training.cli`."""

from .cli import main

__all__ = []

raise SystemExit(main())
