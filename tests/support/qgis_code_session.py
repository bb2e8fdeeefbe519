"""An evaluation from the dock inside the ``qgis`` executable, run as ``qgis --code``.

The executable links the distribution's GEOS, which a plain Python with QGIS does not
put in the global symbol scope, so only this session shows whether shapely keeps its
own GEOS in QGIS desktop. Environment:

``POLYTOPO_SESSION_OUT``
    Folder for the two layers it writes, the evaluation GeoPackage and ``session.json``.
``POLYTOPO_SESSION_DOCK_FROM``
    ``plugin``: open the dock of the plugin QGIS started (the analyst's path);
    ``import``: the plugin is not started, the script imports the dock itself.

Two layers of four 20 m squares with a 6 m hole are written (the prediction shifted by
0.6 m, its last square without the hole), the dock evaluates them with the GeoPackage
export, and ``session.json`` records what happened; then QGIS quits.
"""

import json
import os
import sys
import time
import traceback
from pathlib import Path

import qgis.utils
from qgis.core import QgsApplication, QgsProject, QgsVectorLayer
from qgis.PyQt.QtCore import Qt, QTimer

OUT = Path(os.environ["POLYTOPO_SESSION_OUT"])
DOCK_FROM = os.environ["POLYTOPO_SESSION_DOCK_FROM"]
#: Squares per layer; side and hole side in metres.
SQUARES, SIDE_M, HOLE_M = 4, 20.0, 6.0
SHIFT_M = 0.6
TIMEOUT_S = 120
#: Delay before the session starts, so the main window is up, milliseconds.
START_DELAY_MS = 2000
POLL_MS = 200

record = {"plugins_at_script_start": sorted(qgis.utils.plugins)}


def square_wkt(x0, y0, with_hole):
    """A ``SIDE_M`` square at (x0, y0), with a centred ``HOLE_M`` hole when ``with_hole``."""
    def ring(x, y, side):
        return f"({x} {y},{x + side} {y},{x + side} {y + side},{x} {y + side},{x} {y})"

    hole = "," + ring(x0 + (SIDE_M - HOLE_M) / 2, y0 + (SIDE_M - HOLE_M) / 2, HOLE_M) if with_hole else ""
    return f"POLYGON({ring(x0, y0, SIDE_M)}{hole})"


def write_layer(name, shift_m, holes):
    """Write a GeoPackage layer of ``SQUARES`` squares (UTM 16N) with a ``score`` field; return its path."""
    from osgeo import ogr, osr

    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32616)
    path = OUT / f"{name}.gpkg"
    source = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
    layer = source.CreateLayer(name, srs, ogr.wkbPolygon)
    layer.CreateField(ogr.FieldDefn("score", ogr.OFTReal))
    for index in range(SQUARES):
        feature = ogr.Feature(layer.GetLayerDefn())
        wkt = square_wkt(740000.0 + index * 1.5 * SIDE_M + shift_m, 3730000.0 + shift_m, holes[index])
        feature.SetGeometry(ogr.CreateGeometryFromWkt(wkt))
        feature.SetField("score", 0.9)
        layer.CreateFeature(feature)
    del source
    return path


def open_dock():
    """The dock, from the started plugin or imported by this script."""
    if DOCK_FROM == "plugin":
        return qgis.utils.plugins["polytopo"].show_dock(True)
    from polytopo.plugin import runs
    from polytopo.plugin.gui.dock import PolyTopoDock

    dock = PolyTopoDock(runs, iface=qgis.utils.iface)
    qgis.utils.iface.addDockWidget(Qt.RightDockWidgetArea, dock)
    return dock


def finish():
    (OUT / "session.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    QTimer.singleShot(0, QgsApplication.instance().quit)


def evaluate():
    """Evaluate the two layers from the dock with the GeoPackage export, then wait for the task."""
    reference = QgsVectorLayer(str(write_layer("reference", 0.0, [True] * SQUARES)), "reference", "ogr")
    prediction = QgsVectorLayer(str(write_layer("prediction", SHIFT_M, [True] * (SQUARES - 1) + [False])),
                                "prediction", "ogr")
    QgsProject.instance().addMapLayers([reference, prediction])
    dock = open_dock()
    from polytopo.plugin.setup.geos_isolation import shapely_geos_mismatch

    record["shapely_on_qgis_geos"] = shapely_geos_mismatch()
    dock.prediction_combo.setLayer(prediction)
    dock.reference_combo.setLayer(reference)
    dock.overwrite.setChecked(True)
    dock.gpkg_output.setFilePath(str(OUT / "evaluation.gpkg"))
    dock.evaluate_button.click()
    started = time.monotonic()

    def wait():
        if dock.evaluation_task is not None and time.monotonic() - started < TIMEOUT_S:
            QTimer.singleShot(POLL_MS, wait)
            return
        record["evaluated"] = dock.last_result is not None
        record["messages"] = [item.text() for item in qgis.utils.iface.messageBar().items()]
        record["layers_added"] = sorted(layer.name() for layer in dock.added_layers)
        finish()

    QTimer.singleShot(POLL_MS, wait)


def start():
    try:
        evaluate()
    except Exception:  # noqa: BLE001 - the session reports any failure to the test.
        record["error"] = traceback.format_exc()
        finish()


record["shapely_imported_at_script_start"] = "shapely" in sys.modules
QTimer.singleShot(START_DELAY_MS, start)
