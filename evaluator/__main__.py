"""``python -m polytopo.evaluator``: see :mod:`polytopo.evaluator.cli.evaluate`."""

import sys

from .cli.evaluate import main

__all__ = []

if __name__ == "__main__":
    sys.exit(main())
