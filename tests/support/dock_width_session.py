"""The dock at the widths an analyst gives it: nothing clipped, nothing shifted, one screenshot per width.

Run under an X server (``xvfb-run``), not offscreen::

    python tests/support/dock_width_session.py OUT_DIR

A main window with a map canvas holds the dock on the right. A 3-band GeoTIFF (made
here) and two polygon layers are loaded, the bundled 3-channel model :data:`MODEL` is
picked (three band boxes, a long card text) and the processed area is a mask layer (one
more row). At each width of :data:`WIDTHS` the dock is checked with both *Advanced*
groups collapsed (widest first), then again after opening them with a click at the
narrowest width, as an analyst would:

* every visible widget lies inside the scroll viewport horizontally (its rectangle
  mapped to the viewport) and inside its parent, and is at least as large as its
  minimum size hint (no field squashed, no text cut);
* word-wrapped labels are tall enough for their wrapped text;
* the content needs no horizontal scrolling, and giving each field the keyboard focus
  does not shift the content sideways;
* the summary table shows all its rows, and the diagnosis box a typical diagnosis
  (:data:`DIAGNOSIS`), without scrolling.

The whole content at that width is saved as ``dock-<width>px.png`` (:meth:`QWidget.grab`
of the scroll area's widget, so the parts below the fold are in the picture too).
Every failed check is printed; the exit status is 1 when any failed.
"""

import sys
from pathlib import Path

#: Dock widths checked, in pixels.
WIDTHS = (280, 320, 500)
#: The bundled model picked: three input channels, so three band boxes.
MODEL = "unet_buildings_rgb"
#: A typical ring diagnosis (8 lines), as the dock writes it for a selected row.
DIAGNOSIS = "\n".join([
    "Prediction 38: missing hole",
    "Matched reference 12 with IoU 0.812.",
    "Exterior ring: BIoU 0.644 (matched, γ = 0.1).",
    "Hole 1: matched reference hole 2, BIoU 0.512",
    "Hole 2: extra (no reference hole with BIoU above γ)",
    "Reference hole 1: missing (no predicted hole with BIoU above γ)",
    "Reference hole 3: missing (no predicted hole with BIoU above γ)",
    "Reference hole 4: missing (no predicted hole with BIoU above γ)",
])


def shot_name(width):
    """File name of the screenshot at ``width`` pixels."""
    return f"dock-{width}px.png"


def make_raster(folder):
    """A 64 x 64 px, 3-band GeoTIFF in EPSG:32616 at 0.5 m per pixel."""
    from osgeo import gdal, osr

    path = folder / "rgb.tif"
    dataset = gdal.GetDriverByName("GTiff").Create(str(path), 64, 64, 3, gdal.GDT_Byte)
    dataset.SetGeoTransform((741000.0, 0.5, 0.0, 3735000.0, 0.0, -0.5))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32616)
    dataset.SetProjection(srs.ExportToWkt())
    for band in (1, 2, 3):
        dataset.GetRasterBand(band).Fill(40 * band)
    del dataset
    return path


def polygon_layer(name, offset):
    from qgis.core import QgsFeature, QgsGeometry, QgsVectorLayer

    layer = QgsVectorLayer("Polygon?crs=EPSG:32616&field=score:double", name, "memory")
    feature = QgsFeature(layer.fields())
    x, y = 741005.0 + offset, 3734985.0
    feature.setGeometry(QgsGeometry.fromWkt(f"POLYGON(({x} {y},{x + 8} {y},{x + 8} {y + 8},{x} {y + 8},{x} {y}))"))
    feature.setAttribute("score", 0.9)
    layer.dataProvider().addFeatures([feature])
    return layer


def settle(app, rounds=6):
    for _ in range(rounds):
        app.processEvents()


def visible_widgets(root):
    """``root``'s descendants shown on screen (visible themselves and through every parent)."""
    from qgis.PyQt.QtWidgets import QWidget

    return [widget for widget in root.findChildren(QWidget) if widget.isVisible()]


def describe(widget):
    text = ""
    for getter in ("text", "title", "currentText", "placeholderText"):
        if hasattr(widget, getter):
            try:
                text = getattr(widget, getter)() or text
            except TypeError:
                continue
            if text:
                break
    name = widget.objectName()
    return f"{type(widget).__name__}{f' {name}' if name else ''}{f' {text[:40]!r}' if text else ''}"


def managed(widget):
    """Whether a layout of the parent places ``widget`` (not the inner parts of a table, spin box, …)."""
    parent = widget.parentWidget()
    layouts = [parent.layout()] if parent is not None and parent.layout() is not None else []
    while layouts:
        layout = layouts.pop()
        for index in range(layout.count()):
            item = layout.itemAt(index)
            if item.widget() is widget:
                return True
            if item.layout() is not None:
                layouts.append(item.layout())
    return False


def minimum_size(widget):
    """The least size that shows ``widget`` whole: its minimum size hint, with the height for its width when
    it has one, within its maximum size (a collapsed group is capped to its title)."""
    from qgis.PyQt.QtCore import QSize

    hint = widget.minimumSizeHint().expandedTo(widget.minimumSize())
    height = hint.height()
    if widget.hasHeightForWidth():
        height = max(widget.heightForWidth(widget.width()), widget.minimumHeight())
    return QSize(min(hint.width(), widget.maximumWidth()), min(height, widget.maximumHeight()))


def layout_problems(dock):
    """What is clipped, squashed or shifted in the dock now, one line each (empty when all is well)."""
    from qgis.PyQt.QtCore import QPoint
    from qgis.PyQt.QtWidgets import QLabel, QScrollBar

    scroll = dock.widget()
    viewport, body = scroll.viewport(), scroll.widget()
    problems = []
    if scroll.horizontalScrollBar().maximum() > 0 or body.width() > viewport.width():
        problems.append(f"content {body.width()} px wide (needs {body.minimumSizeHint().width()} px) in a "
                        f"{viewport.width()} px viewport")
    for widget in visible_widgets(body):
        if isinstance(widget, QScrollBar):
            continue  # scroll bars of the tables and text boxes are theirs to place
        left = widget.mapTo(viewport, QPoint(0, 0)).x()
        if left < 0 or left + widget.width() > viewport.width():
            problems.append(f"{describe(widget)} spans x {left}–{left + widget.width()} outside the "
                            f"{viewport.width()} px viewport")
        parent = widget.parentWidget()
        if parent is not None and parent is not viewport and (widget.x() < 0 or widget.geometry().right()
                                                              >= parent.width()):
            problems.append(f"{describe(widget)} spans x {widget.x()}–{widget.geometry().right() + 1} outside "
                            f"its parent {describe(parent)} ({parent.width()} px)")
        if managed(widget):
            needed = minimum_size(widget)
            if widget.width() < needed.width() or widget.height() < needed.height():
                problems.append(f"{describe(widget)} is {widget.width()} x {widget.height()} px, less than its "
                                f"minimum {needed.width()} x {needed.height()} px")
        if isinstance(widget, QLabel) and widget.wordWrap() and widget.text():
            needed = widget.heightForWidth(widget.width())
            if needed > widget.height():
                problems.append(f"{describe(widget)} needs {needed} px of height for its wrapped text but has "
                                f"{widget.height()} px")
    table = dock.summary_table
    if table.verticalScrollBar().maximum() > 0:
        problems.append(f"the summary table ({table.height()} px) scrolls instead of showing its "
                        f"{table.rowCount()} rows")
    return problems


def focus_shifts(app, dock):
    """Give every focusable field the keyboard focus with Tab; say where the content moved sideways."""
    from qgis.PyQt.QtCore import Qt
    from qgis.PyQt.QtTest import QTest

    scroll = dock.widget()
    body = scroll.widget()
    shifts = []
    first = next((widget for widget in visible_widgets(body) if widget.focusPolicy() & Qt.TabFocus
                  and widget.isEnabled()), None)
    if first is None:
        return ["no field takes the keyboard focus"]
    first.setFocus(Qt.TabFocusReason)
    settle(app)
    for _ in range(80):
        focused = app.focusWidget()
        if focused is None:
            return shifts + ["the keyboard focus left the window"]
        if body.x() != 0 or scroll.horizontalScrollBar().value() != 0:
            shifts.append(f"focus on {describe(focused)} shifted the content to x = {body.x()}")
            scroll.horizontalScrollBar().setValue(0)
        QTest.keyClick(focused, Qt.Key_Tab)
        settle(app, 2)
        if app.focusWidget() is None or not body.isAncestorOf(app.focusWidget()):
            break
    scroll.verticalScrollBar().setValue(0)
    return shifts


def diagnosis_problems(app, dock):
    box = dock.diagnosis
    box.setPlainText(DIAGNOSIS)
    settle(app)
    if box.verticalScrollBar().maximum() > 0:
        return [f"the diagnosis box ({box.height()} px) needs scrolling for a typical {len(DIAGNOSIS.splitlines())}-"
                "line diagnosis"]
    return []


def open_advanced(app, dock):
    """Open both *Advanced* groups by clicking their arrows (the first expand, as an analyst does it)."""
    from qgis.gui import QgsCollapsibleGroupBox
    from qgis.PyQt.QtCore import Qt
    from qgis.PyQt.QtTest import QTest
    from qgis.PyQt.QtWidgets import QToolButton

    groups = [group for group in dock.widget().widget().findChildren(QgsCollapsibleGroupBox)
              if group.title() == "Advanced"]
    for group in groups:
        if group.isCollapsed():
            button = group.findChild(QToolButton)
            dock.widget().ensureWidgetVisible(button)
            settle(app)
            QTest.mouseClick(button, Qt.LeftButton)
            settle(app)
    return groups


def run_session(app, out_dir):
    from qgis.core import QgsProject, QgsRasterLayer
    from qgis.gui import QgsMapCanvas
    from qgis.PyQt.QtCore import Qt
    from qgis.PyQt.QtWidgets import QMainWindow

    from polytopo.plugin import runs
    from polytopo.plugin.gui.dock import PolyTopoDock
    from polytopo.plugin.gui.tasks import LogNotifier

    project = QgsProject.instance()
    raster = QgsRasterLayer(str(make_raster(out_dir)), "rgb image")
    prediction, reference = polygon_layer("prediction", 0.0), polygon_layer("reference", 1.0)
    project.addMapLayers([reference, prediction, raster])
    window = QMainWindow()
    canvas = QgsMapCanvas()
    window.setCentralWidget(canvas)
    dock = PolyTopoDock(runs, canvas=canvas, notifier=LogNotifier())
    window.addDockWidget(Qt.RightDockWidgetArea, dock)
    window.resize(1100, 860)
    window.show()
    app.setActiveWindow(window)  # Xvfb has no window manager to activate it
    settle(app)
    dock.raster_combo.setLayer(raster)
    index = dock.model_combo.findText(MODEL)
    if index < 0:
        return [f"the bundled model {MODEL} is not in the model list"]
    dock.model_combo.setCurrentIndex(index)
    dock.extent_combo.setCurrentIndex(dock.extent_combo.findData("mask"))
    dock.prediction_combo.setLayer(prediction)
    dock.reference_combo.setLayer(reference)
    failures = []
    if len(dock.band_combos) != 3:
        failures.append(f"expected 3 band boxes for {MODEL} but got {len(dock.band_combos)}")
    # closed from the widest to the narrowest, the first expand at the narrowest, then open at each width
    for expanded, widths in ((False, sorted(WIDTHS, reverse=True)), (True, sorted(WIDTHS))):
        for width in widths:
            window.resizeDocks([dock], [width], Qt.Horizontal)
            settle(app)
            if expanded and width == min(WIDTHS):
                open_advanced(app, dock)
                dock.widget().verticalScrollBar().setValue(0)
                settle(app)
            state = f"{width} px, Advanced {'open' if expanded else 'closed'}"
            if abs(dock.width() - width) > 2:
                failures.append(f"{state}: the dock is {dock.width()} px wide")
            problems = diagnosis_problems(app, dock) + layout_problems(dock)
            if expanded:
                if app.focusWidget() is not None:
                    app.focusWidget().clearFocus()  # no focus frame or selected cell left by the focus walk
                dock.summary_table.clearSelection()
                settle(app)
                body = dock.widget().widget()
                if not body.grab().save(str(out_dir / shot_name(width))):
                    problems.append(f"the screenshot {shot_name(width)} was not saved")
            problems += focus_shifts(app, dock)
            failures += [f"{state}: {problem}" for problem in problems]
    dock.abandon_tasks()
    project.removeAllMapLayers()
    return failures


def main(argv):
    from qgis.core import QgsApplication

    out_dir = Path(argv[1]).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    app = QgsApplication([], True)
    app.initQgis()
    try:
        failures = run_session(app, out_dir)
    finally:
        app.exitQgis()
    for failure in failures:
        print(f"FAILED: {failure}")
    print("screenshots: " + ", ".join(sorted(path.name for path in out_dir.glob("dock-*px.png"))))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
