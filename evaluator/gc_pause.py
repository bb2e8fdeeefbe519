"""Python's cyclic garbage collector held off while inputs are read.

Reading a COCO file builds millions of small lists and floats that form no reference
cycles, yet every one of them counts towards the collector's thresholds, so it keeps
scanning the growing heap: reading the 16× benchmark set (136,032 reference and 131,113
predicted buildings, 70 MB of JSON) ran ten full collections and took 4.4 s of CPU, 2.5 s
with the collector held off. Objects are still freed by reference counting meanwhile;
only cycles wait for the next collection after the block.
"""

import contextlib
import gc

__all__ = ["paused_gc"]


@contextlib.contextmanager
def paused_gc():
    """Context manager: no automatic cyclic collection inside the block.

    The collector's previous state comes back at the end, also on an exception, so a
    caller that had disabled it keeps it disabled.

    Examples
    --------
    >>> with paused_gc():
    ...     gc.isenabled()
    False
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
