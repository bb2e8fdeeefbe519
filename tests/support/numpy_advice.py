"""Read NumPy's huge-page advice for new arrays in this process without changing it."""

from numpy.core import multiarray


def huge_page_advice():
    """Whether NumPy now advises huge pages for new large arrays (set and set back: NumPy has no getter)."""
    now = multiarray._set_madvise_hugepage(True)
    multiarray._set_madvise_hugepage(now)
    return now
