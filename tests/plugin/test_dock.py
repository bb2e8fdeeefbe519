"""The dock, built offscreen, starts runs through the task manager, shows and explains the results.

Runs go through ``QgsApplication.taskManager()`` in real worker threads. The evaluation
uses the real core functions of ``polytopo.plugin.runs`` on tiny memory layers; the
cancel tests inject a slow core stand-in that honours ``isCanceled``, and the real core
behind a feedback object that cancels half-way. The plugin's toolbar action and
dependency message are driven through a ``Mock(spec=QgisInterface)``.
"""

import json
import os
import time

import pytest
from reliability import case
from dock_testing import make_dock, run_evaluation, set_up_evaluation
from polytopo_testing import wait_until
from stand_ins import (CancelInEvaluation, CancelInExport, SlowCore, StandInCore, VectorizeCore, fake_card,
                       real_core)


def raster_layer(folder, name="image"):
    """Return a 4 x 4 GeoTIFF layer in EPSG:3857 (0.5 map units per pixel)."""
    from osgeo import gdal, osr
    from qgis.core import QgsRasterLayer

    path = str(folder / f"{name}.tif")
    dataset = gdal.GetDriverByName("GTiff").Create(path, 4, 4, 1, gdal.GDT_Byte)
    dataset.SetGeoTransform((100.0, 0.5, 0.0, 200.0, 0.0, -0.5))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(3857)
    dataset.SetProjection(srs.ExportToWkt())
    dataset.GetRasterBand(1).Fill(7)
    dataset = None
    return QgsRasterLayer(path, name)


@pytest.fixture
def canvas(qgis_app):
    """A map canvas in EPSG:3857."""
    from qgis.core import QgsCoordinateReferenceSystem
    from qgis.gui import QgsMapCanvas

    map_canvas = QgsMapCanvas()
    map_canvas.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:3857"))
    map_canvas.resize(400, 400)
    yield map_canvas
    map_canvas.deleteLater()


def group_names(project):
    return [node.name() for node in project.layerTreeRoot().children() if node.nodeType() == 0]


# ----- pure helpers ------------------------------------------------------------------------


def test_provider_availability_says_why_cuda_is_missing():
    """The label names the providers and the reason CUDA cannot run."""
    from polytopo.plugin.gui.model_choice import provider_availability

    assert provider_availability(["CPUExecutionProvider"], False) == (
        "Available: CPU. CUDA unavailable: onnxruntime-gpu not installed.")
    assert "no CUDA provider" in provider_availability(["CPUExecutionProvider"], True)
    assert provider_availability(["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"],
                                 True) == "Available: Tensorrt, CUDA, CPU. auto runs on CUDA."
    assert provider_availability(None, False).startswith("onnxruntime is not installed")


def test_probe_providers_reports_the_installed_onnxruntime():
    """The default probe asks the installed onnxruntime (CPU build in the test environment)."""
    import onnxruntime

    from polytopo.plugin.gui.model_choice import probe_providers

    available, gpu_package = probe_providers()
    assert available == onnxruntime.get_available_providers()
    assert "CPUExecutionProvider" in available
    assert isinstance(gpu_package, bool)


def onnx_model(path, card):
    """Write an Identity ONNX model whose metadata_props are ``card`` (JSON values)."""
    from onnx import TensorProto, helper, save_model

    tensor = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("Identity", ["input"], ["output"])], "m",
                              [tensor("input", TensorProto.FLOAT, ["N", 1, "H", "W"])],
                              [tensor("output", TensorProto.FLOAT, ["N", 1, "H", "W"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for key, value in card.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, json.dumps(value)
    save_model(model, str(path))
    return str(path)


def test_card_summary_names_family_gsd_classes_and_licence(tmp_path):
    """A model card is summarised in one line; an unusable file says why."""
    from polytopo.plugin.gui.model_choice import card_summary

    path = onnx_model(tmp_path / "unet.onnx", {"polytopo.family": "semantic", "resolution": 30,
                                                "class_names": {"0": "background", "1": "building"},
                                                "polytopo.licence": "CC-BY-4.0"})
    assert card_summary(path) == (
        "semantic family · GSD 30 cm/px · classes: background, building · CC-BY-4.0", True)
    bare = onnx_model(tmp_path / "bare.onnx", {"polytopo.family": "semantic"})
    assert card_summary(bare) == (
        "semantic family · native raster resolution · no class names · licence not stated", True)
    text, ok = card_summary(onnx_model(tmp_path / "none.onnx", {}))
    assert not ok and text.startswith("This model cannot be used: ")
    (tmp_path / "notes.onnx").write_text("not a model", encoding="utf-8")
    text, ok = card_summary(str(tmp_path / "notes.onnx"))
    assert not ok and text.startswith("This model cannot be used: ")
    assert card_summary("") == ("Choose an ONNX model file.", False)


# ----- the dock ----------------------------------------------------------------------------


def test_dock_builds_offscreen_with_its_controls(project, canvas, tmp_path):
    """Layer combos are filtered by type; provider, profile and extent choices are offered."""
    from qgis.core import QgsProject

    from polytopo.evaluator import PROFILES
    from polytopo.plugin.gui.dock import SUMMARY_METRICS

    raster = raster_layer(tmp_path)
    QgsProject.instance().addMapLayer(raster)
    dock, _ = make_dock(real_core(), canvas)
    assert dock.windowTitle() == "PolyTopo"
    assert dock.raster_combo.currentLayer() is raster
    assert dock.raster_combo.count() == 1
    assert dock.prediction_combo.count() == 2
    assert [dock.provider_combo.itemText(i) for i in range(dock.provider_combo.count())] == ["auto", "cuda", "cpu"]
    assert dock.provider_label.text() == "Available: CPU. CUDA unavailable: onnxruntime-gpu not installed."
    assert [dock.profile_combo.itemText(i) for i in range(dock.profile_combo.count())] == list(PROFILES)
    assert [dock.summary_table.verticalHeaderItem(i).text() for i in range(4)] == list(SUMMARY_METRICS)
    assert dock.extent_combo.model().item(1).isEnabled()
    dock.pixel_raster.setLayer(raster)
    assert dock.pixel_size.value() == pytest.approx(0.5)
    dock.deleteLater()


def test_a_dock_without_canvas_offers_no_canvas_extent(project):
    """Headless (no canvas) the canvas-extent choice is disabled."""
    dock, _ = make_dock(real_core())
    assert not dock.extent_combo.model().item(1).isEnabled()
    dock.deleteLater()


def test_missing_inputs_are_refused_with_a_message(project):
    """No task starts without two different layers or a usable model."""
    dock, notifier = make_dock(real_core())
    dock.prediction_combo.setLayer(project.reference)
    dock.reference_combo.setLayer(project.reference)
    assert dock.start_evaluation() is None
    assert dock.start_vectorization() is None
    assert [level for level, _ in notifier.texts] == ["warning", "warning"]
    assert "two different layers" in notifier.texts[0][1]
    assert "raster layer" in notifier.texts[1][1]
    dock.deleteLater()


def test_evaluation_from_the_dock_fills_tables_adds_layers_and_zooms(project, canvas, tmp_path):
    """The real core runs through the task manager; results, layers and diagnosis appear."""
    dock, notifier = make_dock(real_core(), canvas)
    gpkg = tmp_path / "run.gpkg"
    set_up_evaluation(dock, project, gpkg)
    layers_before = len(project.project.mapLayers())
    started = time.monotonic()
    run_evaluation(dock)
    elapsed = time.monotonic() - started
    assert elapsed < 20
    assert [level for level, _ in notifier.texts] == ["info"], notifier.texts
    assert gpkg.is_file()
    report = (tmp_path / "run_report" / "report.html").read_text(encoding="utf-8")
    assert "Bootstrap interval (undefined: 1 image(s): an image-level bootstrap needs at least two images)" in report
    assert dock.open_report().toLocalFile() == str(tmp_path / "run_report" / "report.html")
    assert str(tmp_path / "run_report" / "report.html") in dock.report_link.text()  # the path, in the result panel
    assert len(project.project.mapLayers()) == layers_before + len(dock.added_layers)
    (group,) = [name for name in group_names(project.project) if name.startswith("PolyTopo — ")]
    assert group.startswith("PolyTopo — pred vs ref (")
    assert dock.evaluate_button.isEnabled() and not dock.evaluate_cancel.isEnabled()

    metrics = dock.last_result.run.evaluation.summary["metrics"]
    values = [dock.summary_table.item(row, 0).text() for row in range(4)]
    assert values == [f"{metrics[name]:.3f}" for name in ("AP50", "E-BIoU", "Hole-F1", "Topo-EM")]
    assert values[2] == "0.500"

    model = dock.feature_model
    rows = {model.item(row, 1).data(0): row for row in range(model.rowCount())}
    assert set(rows) == {"misplaced hole", "unmatched"}
    matched = rows["misplaced hole"]
    assert [model.item(matched, column).data(0) for column in range(2, 7)] == [2, 2, 0.5, 0, 0.891]

    dock.feature_table.selectRow(matched)
    text = dock.diagnosis.toPlainText().splitlines()
    assert text[0] == "Prediction 1: misplaced hole"
    assert text[2].startswith("Exterior ring: BIoU 1.000 (matched")
    assert text[3] == "Hole 1: matched reference hole 1, BIoU 1.000"
    assert text[4] == "Hole 2: extra (no reference hole with BIoU above γ)"
    assert text[5] == "Reference hole 2: missing (no predicted hole with BIoU above γ)"
    extent = canvas.extent()
    assert extent.xMinimum() <= 0 and extent.xMaximum() >= 20
    assert extent.width() < 60

    dock.feature_table.selectRow(rows["unmatched"])
    assert "Matched no reference polygon" in dock.diagnosis.toPlainText()
    assert canvas.extent().xMinimum() > 40
    dock.deleteLater()


def test_cancel_stops_a_slow_run_and_leaves_nothing(project, tmp_path):
    """Cancel in the dock stops the run within a second; no layer, no file, buttons reset."""
    core = SlowCore()
    dock, notifier = make_dock(core)
    set_up_evaluation(dock, project, tmp_path / "run.gpkg")
    layers_before = set(project.project.mapLayers())
    task = dock.start_evaluation()
    assert not dock.evaluate_button.isEnabled() and dock.evaluate_cancel.isEnabled()
    wait_until(lambda: core.started)
    wait_until(lambda: dock.evaluate_progress.value() > 0)
    clicked = time.monotonic()
    dock.evaluate_cancel.click()
    wait_until(lambda: dock.evaluation_task is None)
    assert time.monotonic() - clicked < 2.0
    assert task is not None
    assert core.calls == ["evaluate_layers"]
    assert notifier.texts == [("info", "PolyTopo evaluation of pred was canceled; nothing was written.")]
    assert set(project.project.mapLayers()) == layers_before
    assert group_names(project.project) == []
    assert list(tmp_path.iterdir()) == []
    assert dock.evaluate_button.isEnabled() and not dock.evaluate_cancel.isEnabled()
    assert dock.feature_model.rowCount() == 0
    dock.deleteLater()


def test_the_progress_bar_keeps_the_finished_state(project, tmp_path):
    """After a run the bar says how it ended (done: full, with the time it took; canceled; failed), not blank."""
    import re

    from polytopo.plugin.errors import RunFailedError

    dock, _ = make_dock(real_core())
    set_up_evaluation(dock, project, tmp_path / "done.gpkg")
    run_evaluation(dock)
    assert dock.evaluate_progress.value() == 100
    assert re.fullmatch(r"Done in \d+:\d\d", dock.evaluate_progress.text())
    assert dock.evaluate_button.isEnabled() and not dock.evaluate_cancel.isEnabled()

    core = SlowCore()
    dock.core = core
    set_up_evaluation(dock, project, tmp_path / "canceled.gpkg")
    task = dock.start_evaluation()
    assert task is not None and dock.evaluate_progress.text() == "starting…"
    wait_until(lambda: core.started)
    dock.cancel_evaluation()
    wait_until(lambda: dock.evaluation_task is None)
    assert re.fullmatch(r"Canceled after \d+:\d\d", dock.evaluate_progress.text())

    dock.core = StandInCore(fail=RunFailedError("Expected a disk but it is gone"))
    set_up_evaluation(dock, project, tmp_path / "failed.gpkg")
    run_evaluation(dock)
    assert re.fullmatch(r"Failed after \d+:\d\d", dock.evaluate_progress.text())
    dock.deleteLater()


@pytest.mark.parametrize("core_class", [CancelInEvaluation, CancelInExport])
def test_cancel_in_the_real_core_leaves_no_layer_and_no_file(project, tmp_path, core_class):
    """The real evaluation and export, canceled mid-way, leave the project and the folder as they were."""
    dock, notifier = make_dock(core_class())
    set_up_evaluation(dock, project, tmp_path / "run.gpkg")
    layers_before = set(project.project.mapLayers())
    run_evaluation(dock)
    assert notifier.texts == [("info", "PolyTopo evaluation of pred was canceled; nothing was written.")]
    assert set(project.project.mapLayers()) == layers_before
    assert list(tmp_path.iterdir()) == []
    dock.deleteLater()


def test_canceling_a_temporary_output_run_removes_the_temporary_folder(project):
    """Without an output path the run writes into a temporary folder, removed on cancel."""
    core = SlowCore()
    dock, _ = make_dock(core)
    set_up_evaluation(dock, project, "")
    task = dock.start_evaluation()
    wait_until(lambda: core.started)
    folder = task.temp_dir
    assert folder is not None and os.path.isdir(folder)
    dock.cancel_all()
    wait_until(lambda: dock.evaluation_task is None)
    assert not os.path.exists(folder)
    dock.deleteLater()


def test_abandoned_tasks_outlive_the_deleted_dock_quietly(project, tmp_path):
    """Unloading during a run: the task is canceled and never calls back into the deleted dock."""
    from qgis.core import QgsApplication
    from qgis.PyQt import sip
    from qgis.PyQt.QtCore import QEvent

    core = SlowCore()
    dock, notifier = make_dock(core)
    set_up_evaluation(dock, project, tmp_path / "run.gpkg")
    layers_before = set(project.project.mapLayers())
    dock.start_evaluation()
    wait_until(lambda: core.started)
    dock.abandon_tasks()
    dock.deleteLater()
    QgsApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    assert sip.isdeleted(dock)
    wait_until(lambda: QgsApplication.taskManager().countActiveTasks() == 0)
    QgsApplication.processEvents()
    assert notifier.texts == [("info", "PolyTopo evaluation of pred was canceled; nothing was written.")]
    assert set(project.project.mapLayers()) == layers_before
    assert list(tmp_path.iterdir()) == []


def test_vectorization_from_the_dock_adds_the_polygon_layer(project, canvas, tmp_path):
    """The model card is shown, the canvas extent goes to the core in the raster CRS, the layer is added."""
    from qgis.core import QgsProject, QgsRectangle

    raster = raster_layer(tmp_path)
    QgsProject.instance().addMapLayer(raster)
    core = VectorizeCore()
    dock, notifier = make_dock(core, canvas, read_card=fake_card)
    dock.model_file.setFilePath(str(tmp_path / "unet.onnx"))
    assert dock.card_label.text() == "semantic family · GSD 50 cm/px · classes: building · licence not stated"
    dock.provider_combo.setCurrentText("cpu")
    dock.extent_combo.setCurrentIndex(1)
    canvas.setExtent(QgsRectangle(100, 198, 102, 200))
    dock.vector_output.setFilePath(str(tmp_path / "polygons.gpkg"))
    assert dock.start_vectorization() is not None
    wait_until(lambda: dock.vectorize_task is None)
    ((name, model, provider, extent),) = core.calls
    assert (name, model, provider) == ("image", str(tmp_path / "unet.onnx"), "cpu")
    assert extent.xMinimum() <= 100 and extent.xMaximum() >= 102
    assert notifier.texts == [("info", "Vectorized image into 1 polygons on CPUExecutionProvider.")]
    (layer,) = dock.added_layers
    assert layer.featureCount() == 1
    assert any(name.startswith("PolyTopo vectorization") for name in group_names(QgsProject.instance()))
    dock.deleteLater()


def test_selected_features_limit_the_vectorization_and_a_new_project_clears_the_dock(project, tmp_path):
    """No selection is refused before any task; one selected polygon goes to the core as the area of interest."""
    from qgis.core import QgsProject

    raster = raster_layer(tmp_path)
    QgsProject.instance().addMapLayer(raster)
    core = VectorizeCore()
    dock, notifier = make_dock(core, read_card=fake_card)
    dock.model_file.setFilePath(str(tmp_path / "unet.onnx"))
    dock.extent_combo.setCurrentIndex(dock.extent_combo.findText("Selected features"))
    dock.mask_combo.setLayer(project.reference)
    assert dock.start_vectorization() is None
    assert notifier.texts[-1] == ("warning", "Expected selected features in 'ref' but none is selected; select the "
                                             "polygons to process or choose another area")
    project.reference.selectByIds([next(project.reference.getFeatures()).id()])
    assert dock.start_vectorization() is not None
    wait_until(lambda: dock.vectorize_task is None)
    assert core.aoi_features == 1
    assert dock.prediction_combo.currentLayer() is dock.added_layers[0]
    assert dock.score_field.currentField() == "score"
    assert dock.reference_combo.currentLayer() is not dock.added_layers[0]
    dock.report_button.setEnabled(True)
    QgsProject.instance().clear()
    assert not dock.report_button.isEnabled() and dock.added_layers == []
    dock.deleteLater()


def identity_model_and_image(folder):
    """A semantic ONNX model passing its 32 x 32 input through, and an image of a square with a hole."""
    import numpy as np
    from osgeo import gdal, osr

    model = onnx_model(folder / "identity.onnx", {"polytopo.family": "semantic", "seg_thresh": 0.5, "tile_size": 32,
                                                  "tiles_overlap": 0, "polytopo.input_range": [0, 1],
                                                  "class_names": {"0": "building"}})
    image = np.zeros((32, 32), np.float32)
    image[4:28, 4:28] = 1.0
    image[12:20, 12:20] = 0.0
    path = str(folder / "square.tif")
    dataset = gdal.GetDriverByName("GTiff").Create(path, 32, 32, 1, gdal.GDT_Float32)
    dataset.SetGeoTransform((500000.0, 0.5, 0.0, 4000000.0, 0.0, -0.5))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32633)
    dataset.SetProjection(srs.ExportToWkt())
    dataset.GetRasterBand(1).WriteArray(image)
    dataset = None
    return model, path


def dock_on_the_identity_square(tmp_path):
    """A dock with the real core, the square image as raster and the identity model chosen."""
    from qgis.core import QgsProject, QgsRasterLayer

    model, image = identity_model_and_image(tmp_path)
    raster = QgsRasterLayer(image, "square")
    QgsProject.instance().addMapLayer(raster)
    dock, notifier = make_dock(real_core())
    dock.raster_combo.setLayer(raster)
    dock.model_file.setFilePath(model)
    dock.provider_combo.setCurrentText("cpu")
    return dock, notifier


def test_real_vectorization_from_the_dock_yields_a_polygon_with_its_hole(project, tmp_path):
    """The real core runs an ONNX model on the CPU; the layer added has one polygon with one hole."""
    dock, notifier = dock_on_the_identity_square(tmp_path)
    assert dock.card_label.text() == ("semantic family · native raster resolution · classes: building · "
                                      "licence not stated")
    dock.vector_output.setFilePath(str(tmp_path / "square.gpkg"))
    assert dock.start_vectorization() is not None
    wait_until(lambda: dock.vectorize_task is None)
    assert notifier.texts == [("info", "Vectorized square into 1 polygons on CPUExecutionProvider "
                                          "(requested cpu).")]
    (layer,) = dock.added_layers
    import shapely

    (feature,) = layer.getFeatures()
    polygons = shapely.get_parts(shapely.from_wkb(bytes(feature.geometry().asWkb())))
    assert [len(polygon.interiors) for polygon in polygons] == [1]
    dock.deleteLater()


def test_advanced_shows_the_cards_threshold_and_minimum_areas_and_passes_overrides(project, tmp_path):
    """Empty fields show the card's values and send None; set fields reach the core; no threshold for instance."""
    from qgis.core import QgsProject

    from polytopo.models import ModelCard

    cards = {"unet.onnx": ModelCard(family="semantic", class_names=("building",), seg_threshold=0.4,
                                    min_area_px2=16.0, min_hole_area_px2=4.0),
             "maskrcnn.onnx": ModelCard(family="instance", class_names=("building",))}
    QgsProject.instance().addMapLayer(raster_layer(tmp_path))
    core = VectorizeCore()
    dock, _ = make_dock(core, read_card=lambda path: cards.get(os.path.basename(path)) or fake_card(path))
    dock.model_file.setFilePath(str(tmp_path / "unet.onnx"))
    shown = [spin.specialValueText() for spin in (dock.seg_threshold, dock.min_area, dock.min_hole_area)]
    assert shown == ["card's: 0.4", "card's: 16", "card's: 4"]
    assert [spin.text() for spin in (dock.seg_threshold, dock.min_area, dock.min_hole_area)] == shown
    assert dock.start_vectorization() is not None
    wait_until(lambda: dock.vectorize_task is None)
    assert core.decoding == (None, None, None)
    dock.seg_threshold.setValue(0.7)
    dock.min_hole_area.setValue(100)
    assert dock.start_vectorization() is not None
    wait_until(lambda: dock.vectorize_task is None)
    assert core.decoding == (pytest.approx(0.7), None, 100)
    dock.model_file.setFilePath(str(tmp_path / "maskrcnn.onnx"))
    assert not dock.seg_threshold.isEnabled() and dock.seg_threshold.text() == "not used"
    assert dock.min_area.text() == "card's: 0"
    assert dock.start_vectorization() is not None
    wait_until(lambda: dock.vectorize_task is None)
    assert core.decoding == (None, None, 100)
    dock.deleteLater()


def test_a_minimum_hole_area_from_the_dock_fills_the_hole_in_a_real_run(project, tmp_path):
    """The real core with the 8 x 8 px hole of the identity image: a minimum hole area of 65 px² fills it."""
    dock, _ = dock_on_the_identity_square(tmp_path)
    assert dock.seg_threshold.text() == "card's: 0.5" and dock.min_hole_area.text() == "card's: 0"
    dock.min_hole_area.setValue(65)
    dock.vector_output.setFilePath(str(tmp_path / "square.gpkg"))
    assert dock.start_vectorization() is not None
    wait_until(lambda: dock.vectorize_task is None)
    (layer,) = dock.added_layers
    (feature,) = layer.getFeatures()
    assert feature.geometry().constGet().numInteriorRings() == 0
    provenance = json.loads(layer.metadata().history()[-1].removeprefix("provenance: "))
    assert provenance["run_parameters"]["min_hole_area_px"] == 65.0
    dock.deleteLater()


# ----- the plugin's action and dependency message ---------------------------------------------


def test_the_toolbar_action_opens_the_dock_and_unload_removes_everything(qgis_iface, canvas):
    """initGui adds the action; triggering it docks the panel; unload takes both away."""
    import polytopo

    qgis_iface.mapCanvas.return_value = canvas
    plugin = polytopo.classFactory(qgis_iface)
    plugin.initGui()
    try:
        qgis_iface.addToolBarIcon.assert_called_once_with(plugin.action)
        qgis_iface.addPluginToMenu.assert_called_once_with("&PolyTopo", plugin.action)
        qgis_iface.messageBar.return_value.pushWidget.assert_not_called()
        plugin.action.trigger()
        dock = plugin.dock
        assert dock is not None and plugin.action.isChecked()
        assert qgis_iface.addDockWidget.call_args.args[1] is dock
        assert dock.canvas is canvas
    finally:
        plugin.unload()
    qgis_iface.removeDockWidget.assert_called_once_with(dock)
    qgis_iface.removePluginMenu.assert_called_once()
    qgis_iface.removeToolBarIcon.assert_called_once()
    assert plugin.dock is None and plugin.action is None and plugin.provider is None


def missing_scipy_report(folder):
    from polytopo.plugin.setup.dependencies import REQUIREMENTS, DependencyReport, DependencyStatus

    statuses = tuple(DependencyStatus(r, None, "not installed; provided by scipy", absent=True) if r.name == "scipy"
                     else DependencyStatus(r, "1.0", None) for r in REQUIREMENTS)
    return DependencyReport(statuses, folder)


def test_missing_packages_keep_the_plugin_loaded_and_offer_an_install(qgis_iface, tmp_path):
    """A package missing: provider registered, message with Install, no dock; after the install, the dock opens."""
    from qgis.core import QgsApplication
    from qgis.gui import QgsMessageBar
    from qgis.PyQt import sip
    from qgis.PyQt.QtWidgets import QPushButton

    from polytopo.plugin.setup.dependencies import InstallOutcome, check_dependencies
    from polytopo.plugin.plugin_main import PolyTopoPlugin

    bar = QgsMessageBar()
    qgis_iface.messageBar.return_value = bar
    reports = [missing_scipy_report(tmp_path), check_dependencies(folder=tmp_path)]
    installs = []

    def install(report):
        installs.append(report)
        return InstallOutcome(True, ("python", "-m", "pip"), tmp_path, "Successfully installed scipy")

    plugin = PolyTopoPlugin(qgis_iface, check=lambda: reports.pop(0), install=install)
    plugin.initGui()
    try:
        assert [p.id() for p in QgsApplication.processingRegistry().providers()].count("polytopo") == 1
        item = bar.currentItem()
        assert item.text() == "missing Python packages: scipy (details in the PolyTopo message log)"
        (button,) = [b for b in item.findChildren(QPushButton) if b.text() == "Install"]
        assert "scipy==1.10.1" in button.toolTip()
        assert plugin.show_dock() is None
        assert not plugin.action.isChecked()
        button.click()
        wait_until(lambda: installs and plugin.install_task is None)
        assert [report.missing_names() for report in installs] == [["scipy"]]
        assert plugin.dependency_report.ok
        assert bar.currentItem().text() == f"Python packages installed into {tmp_path}."
        assert plugin.show_dock() is not None
    finally:
        plugin.unload()
        sip.delete(bar)


def test_a_failed_install_is_reported_with_pip_output(qgis_iface, tmp_path):
    """pip failing: the bar says so and the log has the command and pip's output."""
    from qgis.core import QgsApplication
    from qgis.gui import QgsMessageBar
    from qgis.PyQt import sip

    from polytopo.plugin.setup.dependencies import InstallOutcome
    from polytopo.plugin.plugin_main import PolyTopoPlugin

    bar = QgsMessageBar()
    qgis_iface.messageBar.return_value = bar
    log = []

    def record(message, tag, level):
        log.append((tag, message))

    QgsApplication.messageLog().messageReceived.connect(record)
    outcome = InstallOutcome(False, ("python3", "-m", "pip", "install", "scipy==1.10.1"), tmp_path,
                             "ERROR: No matching distribution found for scipy==1.10.1")
    plugin = PolyTopoPlugin(qgis_iface, check=lambda: missing_scipy_report(tmp_path), install=lambda r: outcome)
    plugin.initGui()
    try:
        plugin.install_dependencies()
        wait_until(lambda: plugin.install_task is None)
        assert bar.currentItem().text().startswith("Installing the Python packages failed")
        wait_until(lambda: any("No matching distribution" in message for _, message in log))
        assert ("PolyTopo", "Install failed: python3 -m pip install scipy==1.10.1\n"
                "ERROR: No matching distribution found for scipy==1.10.1") in log
    finally:
        QgsApplication.messageLog().messageReceived.disconnect(record)
        plugin.unload()
        sip.delete(bar)


def test_the_pixel_size_shows_its_unit_and_refuses_an_implausible_value(project, tmp_path):
    """The reference CRS gives the unit; 50 m per pixel is refused before any task, with the right value."""
    dock, notifier = make_dock(real_core())
    dock.prediction_combo.setLayer(project.prediction)
    dock.reference_combo.setLayer(project.reference)
    assert dock.pixel_unit.text() == "m per px"
    dock.pixel_size.setValue(0.5)
    assert dock.pixel_metres.text() == "≈ 0.498 m per pixel on the ground"  # Web Mercator on the ellipsoid
    dock.pixel_size.setValue(50)
    assert "Expected a pixel size of 1 cm to 10 m on the ground" in dock.pixel_metres.text()
    assert dock.start_evaluation() is None
    assert "but got 50 m, about 49.8 m per pixel; for 30 cm imagery give 0.301 m" in notifier.texts[-1][1]
    raster = raster_layer(tmp_path)
    project.project.addMapLayer(raster)
    dock.pixel_raster.setLayer(raster)
    assert dock.pixel_size.value() == 0.5
    dock.deleteLater()


def test_existing_outputs_are_refused_before_the_run_unless_replace_is_ticked(project, tmp_path):
    """The GeoPackage and its report folder: refused with the check box's name, before any task starts."""
    dock, notifier = make_dock(real_core())
    set_up_evaluation(dock, project, tmp_path / "run.gpkg")
    (tmp_path / "run_report").mkdir()
    (tmp_path / "run_report" / "report.html").write_text("old", encoding="utf-8")
    assert dock.start_evaluation() is None
    assert notifier.texts[-1] == ("warning", f"Expected no folder at {tmp_path / 'run_report'} but one exists; "
                                             "choose another folder or tick 'Replace an existing output'")
    dock.deleteLater()


@case("dock evaluation into a GeoPackage whose user layer is named like an evaluation layer, Replace ticked",
      "plugin evaluate (dock, Processing)", "refused before any task starts, naming the layer; the file unchanged")
def test_a_users_layer_named_like_an_output_layer_is_refused_before_the_run(project, tmp_path):
    from osgeo import gdal

    dock, notifier = make_dock(real_core())
    target = tmp_path / "run.gpkg"
    gdal.UseExceptions()
    gdal.VectorTranslate(str(target), _tiny_geojson(tmp_path), layerName="predictions")
    data = target.read_bytes()
    set_up_evaluation(dock, project, target)
    dock.overwrite.setChecked(True)
    assert dock.start_evaluation() is None
    level, text = notifier.texts[-1]
    assert level == "warning" and "['predictions']" in text and "PolyTopo did not write" in text
    assert target.read_bytes() == data
    dock.deleteLater()


def _tiny_geojson(folder):
    path = folder / "mine.geojson"
    path.write_text('{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {}, '
                    '"geometry": {"type": "Point", "coordinates": [1, 2]}}]}', encoding="utf-8")
    return str(path)


def test_a_saved_project_brings_the_results_back(project, canvas, tmp_path):
    """Save, new project (the dock clears), reopen: summary, table, diagnosis and report come back."""
    dock, _ = make_dock(real_core(), canvas)
    set_up_evaluation(dock, project, tmp_path / "run.gpkg")
    run_evaluation(dock)
    summary = [dock.summary_table.item(row, 0).text() for row in range(4)]
    rows = dock.feature_model.rowCount()
    saved = tmp_path / "session.qgz"
    assert project.project.write(str(saved))
    project.project.clear()
    assert dock.last_result is None and dock.feature_model.rowCount() == 0
    assert project.project.read(str(saved))
    assert [dock.summary_table.item(row, 0).text() for row in range(4)] == summary
    assert dock.feature_model.rowCount() == rows
    dock.feature_table.selectRow(0)
    assert dock.diagnosis.toPlainText().startswith("Prediction ")
    assert dock.last_result.layer.selectedFeatureCount() == 1
    assert dock.open_report().toLocalFile() == str(tmp_path / "run_report" / "report.html")
    assert str(tmp_path / "run_report" / "report.html") in dock.report_link.text()  # the path, in the result panel
    dock.deleteLater()


@case("dock vectorization of a raster without a CRS", "plugin vectorize (dock, Processing)",
      "refused before any task: Expected a raster with a coordinate reference system but 'image' has none; assign "
      "one ... (never an unnamed CRS that fails later on 'NaN or infinity')")
def test_a_raster_without_a_crs_is_refused_before_the_task(project, tmp_path):
    from osgeo import gdal
    from qgis.core import QgsProject, QgsRasterLayer

    path = str(tmp_path / "image.tif")
    dataset = gdal.GetDriverByName("GTiff").Create(path, 4, 4, 1, gdal.GDT_Byte)
    dataset.SetGeoTransform((100.0, 0.5, 0.0, 200.0, 0.0, -0.5))
    dataset = None
    raster = QgsRasterLayer(path, "image")
    raster.setCrs(raster.crs().__class__())  # QGIS may assume the project CRS: make the missing CRS explicit
    QgsProject.instance().addMapLayer(raster)
    core = VectorizeCore()
    dock, notifier = make_dock(core, read_card=fake_card)
    dock.raster_combo.setLayer(raster)
    dock.model_file.setFilePath(str(tmp_path / "unet.onnx"))
    dock.vector_output.setFilePath(str(tmp_path / "polygons.gpkg"))
    assert dock.start_vectorization() is None and core.calls == []
    ((level, text),) = notifier.texts
    assert level == "warning" and "Expected a raster with a coordinate reference system but 'image' has none" in text
    dock.deleteLater()
