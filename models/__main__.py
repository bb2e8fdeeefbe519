"""``python -m polytopo.models``: see :mod:`polytopo.models.cli`."""

import sys

from .cli import main

__all__ = []

if __name__ == "__main__":
    sys.exit(main())
