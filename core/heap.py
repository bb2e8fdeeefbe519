"""Give freed heap memory back to the operating system.

GEOS geometries live on the C heap (``malloc``). When an evaluation drops many of them
at once (the boundary bands and ring regions once the pair metrics are done: about 90
MiB at the 4x benchmark set), glibc keeps the freed pages, and the Python objects made
afterwards (records, their columns) do not reuse them: they come from Python's own
arenas. The process's resident memory then keeps both. :func:`return_freed_heap` asks
glibc to unmap the free pages (``malloc_trim``); elsewhere (another C library,
another system) it does nothing.
"""

import ctypes
import ctypes.util
import functools
import sys

__all__ = ["return_freed_heap"]


@functools.cache
def _malloc_trim():
    """The C library's ``malloc_trim`` (glibc), or None where it has none."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def return_freed_heap():
    """Unmap the free pages of the C heap; returns True when glibc released any.

    Takes milliseconds; numbers and objects are untouched (only free memory is returned).
    """
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
