"""Inside a process that links the system GEOS (as QGIS does), shapely still runs on its own GEOS.

Each case runs in a child interpreter with the distribution's ``libgeos_c`` preloaded,
which puts its symbols in the global scope exactly as the ``qgis`` and ``qgis_process``
executables do.
"""

import ctypes
import ctypes.util
import os
import subprocess
import sys

import pytest
import shapely

SYSTEM_GEOS = ctypes.util.find_library("geos_c")
CHILD_TIMEOUT_S = 120


def system_geos_version():
    library = ctypes.CDLL(SYSTEM_GEOS)
    library.GEOSversion.restype = ctypes.c_char_p
    return tuple(int(part) for part in library.GEOSversion().decode().split("-")[0].split(".")[:3])


pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or SYSTEM_GEOS is None
    or system_geos_version() >= (3, 12, 0) or shapely.geos_version < (3, 12, 0),
    reason="needs Linux, a system GEOS older than 3.12 and a shapely built for GEOS >= 3.12")


def in_child(code):
    """Run ``code`` with the system GEOS preloaded; return its stripped stdout lines."""
    env = {**os.environ, "LD_PRELOAD": SYSTEM_GEOS}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                            timeout=CHILD_TIMEOUT_S, check=True)
    return result.stdout.strip().splitlines()


def test_a_plain_import_binds_shapely_to_the_system_geos():
    """The failure the isolation prevents: a plain import calls the older GEOS."""
    lines = in_child("import shapely\n"
                     "from polytopo.plugin.setup.geos_isolation import shapely_geos_mismatch\n"
                     "print(shapely_geos_mismatch())")
    assert lines == ["True"]


def test_the_isolated_import_keeps_shapely_on_its_own_geos():
    lines = in_child("from polytopo.plugin.setup.geos_isolation import import_shapely_with_own_geos\n"
                     "print(import_shapely_with_own_geos())\n"
                     "import shapely\n"
                     "print(shapely.to_wkb(shapely.Point(1.0, 2.0)).hex())\n"
                     "print(shapely.Polygon([(0, 0), (4, 0), (4, 4)]).intersection(shapely.box(0, 0, 2, 2)).area)")
    assert lines == ["None", shapely.to_wkb(shapely.Point(1.0, 2.0)).hex(), "2.0"]


def test_too_late_an_isolation_says_so_and_how_to_fix_it():
    lines = in_child("import shapely\n"
                     "from polytopo.plugin.setup.geos_isolation import import_shapely_with_own_geos\n"
                     "print(import_shapely_with_own_geos())")
    assert len(lines) == 1 and lines[0].startswith("Expected shapely to use the GEOS it was built with")
    assert "pip install --no-binary shapely shapely" in lines[0]
