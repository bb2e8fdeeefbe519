"""``python -m polytopo.evaluator``: see :mod:`polytopo.evaluator.cli`."""

import sys

from .cli import main

__all__ = []

if __name__ == "__main__":
    sys.exit(main())
