"""Read a JSON input file, every failure an :class:`~.errors.InputFormatError` that names the file."""

import json
import sys
from pathlib import Path

from .errors import InputFormatError

__all__ = ["read_json"]


def read_json(path, object_hook=None):
    """Parse a JSON file, turning every failure into an :class:`InputFormatError`.

    ``object_hook`` is :func:`json.load`'s: called with each object as it is parsed.
    """
    path = Path(path)
    try:
        with path.open("r", encoding="utf-8") as handle:
            return json.load(handle, object_hook=object_hook)
    except FileNotFoundError:
        raise InputFormatError(f"{path}: file not found; check the path") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputFormatError(f"{path}: expected JSON but it cannot be parsed ({exc})") from None
    except RecursionError:
        raise InputFormatError(f"{path}: expected COCO JSON but it nests deeper than Python can parse "
                               f"({sys.getrecursionlimit()} levels); check the file") from None
    except OSError as exc:
        raise InputFormatError(f"{path}: cannot be read ({exc.strerror})") from None
