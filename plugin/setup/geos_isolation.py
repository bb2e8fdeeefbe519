"""Keep shapely on the GEOS library it was built with when it runs inside QGIS (Linux).

The QGIS executables (``qgis``, ``qgis_process``) link the distribution's GEOS (3.11 on
Debian 12), so its symbols sit in the process's global scope. A shapely wheel carries
its own, newer GEOS (3.13 for shapely 2.1) under a private file name, but when its
extension modules are loaded the dynamic linker resolves their GEOS calls against the
global scope first: shapely then runs the distribution's GEOS through headers of
another version. That breaks calls outright (``to_wkb`` fails with "WKB output
dimension must be 2 or 3") and changes overlay results.

Loading shapely's extension modules with ``RTLD_DEEPBIND`` makes them look in their own
dependencies first, so shapely uses its bundled GEOS while QGIS keeps its own. The two
never share GEOS objects: geometry crosses between them as WKB only. This must happen
before anything else in the process imports shapely.
"""

import importlib
import os
import sys

__all__ = ["SHAPELY_EXTENSIONS", "import_shapely_with_own_geos", "shapely_geos_mismatch"]

#: shapely's compiled modules, all linked against GEOS.
SHAPELY_EXTENSIONS = ("shapely.lib", "shapely._geos", "shapely._geometry_helpers")


def import_shapely_with_own_geos():
    """Import shapely so that it binds to its own GEOS, and say whether that worked.

    Returns
    -------
    str or None
        None when shapely uses the GEOS it was built with (or is not installed: the
        dependency check reports that). Otherwise a message explaining that shapely
        was imported earlier (by another plugin) against QGIS's GEOS, and how to fix it.

    Notes
    -----
    Only Linux has ``RTLD_DEEPBIND``; on other systems shapely is imported as usual
    (Windows and macOS resolve symbols per library, so the problem does not arise).
    NumPy is imported first, without the flag, so only shapely's own modules get it.
    """
    deep_bind = getattr(os, "RTLD_DEEPBIND", None)
    if deep_bind is None or not sys.platform.startswith("linux"):
        return None
    if "shapely.lib" not in sys.modules:
        try:
            importlib.import_module("numpy")
        except ImportError:
            return None
        flags = sys.getdlopenflags()
        sys.setdlopenflags(flags | deep_bind)
        try:
            for name in SHAPELY_EXTENSIONS:
                importlib.import_module(name)
        except ImportError:
            return None
        finally:
            sys.setdlopenflags(flags)
    if shapely_geos_mismatch():
        return ("Expected shapely to use the GEOS it was built with but another module imported it first "
                "against QGIS's own GEOS, which gives wrong or failing geometry operations; restart QGIS with "
                "PolyTopo loaded before other plugins that use shapely, or install a shapely built against the "
                "system GEOS (pip install --no-binary shapely shapely)")
    return None


def shapely_geos_mismatch():
    """Whether the imported shapely calls a GEOS older than the one it was compiled for.

    A shapely built for GEOS ≥ 3.12 writes 4-dimensional WKB; GEOS 3.11 refuses to. The
    probe detects exactly the combination QGIS 3.22 on Debian 12 produces.

    Returns
    -------
    bool
    """
    import shapely

    if shapely.geos_version < (3, 12, 0):
        return False
    try:
        shapely.to_wkb(shapely.Point(0.0, 0.0), output_dimension=4)
    except shapely.errors.GEOSException:
        return True
    return False
