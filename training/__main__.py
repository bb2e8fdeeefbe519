"""``python -m polytopo.training``: see :mod:`polytopo.training.cli`."""

from .cli import main

__all__ = []

raise SystemExit(main())
