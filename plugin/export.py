"""Write an :class:`~.evaluation.EvaluationRun`: one styled GeoPackage and a report folder.

The GeoPackage holds the six layers of :data:`~.styles.ERROR_LAYERS` (geometry in map
units of the reference CRS), a ``summary`` table (metric, value), each layer's style as
its default style (so the styles travel with the file) and each layer's metadata
(provenance). The report folder holds ``report.html``, ``summary.json``,
``provenance.json``, the per-feature CSV files and the PNG figures, written by
:func:`polytopo.evaluator.write_report`.

Both outputs are assembled under temporary names next to their targets and moved into
place only when complete; a failure or a cancel removes them. Existing outputs are
replaced only with ``overwrite=True``, and inputs never.
"""

import json
import math
import os
import shutil
import tempfile
from pathlib import Path

from qgis.core import QgsLayerMetadata, QgsProviderRegistry, QgsVectorLayer

from ..evaluator import EvaluatorError, write_report
from ..evaluator.records import FIELD_KINDS
from ..evaluator.writers import atomic_output, error_layers, write_geopackage, write_summary_json
from .errors import OutputExistsError, RunFailedError, RunParameterError
from .output_check import REPLACE_LABEL
from .report_html import render_report_html
from .run_feedback import RunSteps
from .styles import ERROR_LAYERS, SUMMARY_LAYER, apply_style

__all__ = ["export_run", "PROVENANCE_PROPERTY", "LAYER_DESCRIPTIONS"]

#: Custom layer property holding the provenance record as JSON.
PROVENANCE_PROPERTY = "polytopo/provenance"
#: GeoPackage layer → one-line description (layer metadata title and style description).
LAYER_DESCRIPTIONS = {
    "predictions": "Predicted polygons with per-feature scores and error class",
    "references": "Reference polygons with their match and error class",
    "missed_holes": "Reference holes that no predicted hole matched",
    "hallucinated_holes": "Predicted holes that no reference hole matched",
    "unmatched_predictions": "Predictions that matched no reference polygon (false positives)",
    "missed_references": "Reference polygons that no prediction matched (false negatives)",
    SUMMARY_LAYER: "Headline metrics of the evaluation",
}
_REPORT_MARKERS = ("report.html", "summary.json")


def export_run(run, gpkg_path, report_dir, *, overwrite=False, feedback=None):
    """Write the GeoPackage and the report folder of ``run``.

    Parameters
    ----------
    run : EvaluationRun
        From :func:`.evaluation.evaluate_layers`.
    gpkg_path : str or Path
        The GeoPackage to write (``.gpkg``); its folder is created if needed.
    report_dir : str or Path
        The report folder to write.
    overwrite : bool
        Replace an existing GeoPackage, and an existing report folder that is empty or
        holds a previous PolyTopo report (``report.html`` and ``summary.json``). Any
        other existing folder is never replaced.
    feedback : object, optional
        See :mod:`.run_feedback`.

    Returns
    -------
    dict
        Output name → path of every file written: ``geopackage``, ``report_html``,
        ``summary``, ``provenance``, the CSV tables and the PNG figures.

    Raises
    ------
    OutputExistsError
        An output exists and ``overwrite`` is False, or the report folder is not a
        PolyTopo report.
    RunParameterError
        An output path is one of the input layers' files.
    RunCanceled
        ``feedback.isCanceled()`` became true; nothing was written.
    RunFailedError
        Writing failed (disk full, permissions); nothing was left behind.
    """
    steps = RunSteps(feedback, "export")
    gpkg_path, report_dir = Path(gpkg_path), Path(report_dir)
    inputs = _input_files(run.provenance)
    _check_outputs(gpkg_path, report_dir, inputs, overwrite)
    gpkg_path.parent.mkdir(parents=True, exist_ok=True)
    steps.progress(0)
    try:
        with atomic_output(gpkg_path, overwrite=overwrite, protect=inputs) as temporary:
            steps.info(f"Writing {gpkg_path.name}")
            write_geopackage(temporary, _layers(run), frame=run.frame, field_kinds=FIELD_KINDS)
            steps.progress(30)
            _style_and_describe(temporary, run.provenance, steps)
            steps.progress(50)
            files = _write_report_folder(run, report_dir, overwrite, steps)
    except FileExistsError as exc:
        raise OutputExistsError(str(exc)) from exc
    except EvaluatorError as exc:
        raise RunFailedError(f"Expected to write the outputs but got: {exc}") from exc
    except OSError as exc:
        raise RunFailedError(f"Expected to write the outputs but the system refused: {exc}") from exc
    steps.progress(100)
    return {"geopackage": gpkg_path, **files}


def _input_files(provenance):
    files = []
    for role in ("prediction", "reference"):
        source = provenance.get(role, {}).get("source", "")
        path = source.split("|")[0]
        if path and os.path.exists(path):
            files.append(path)
    return files


def _check_outputs(gpkg_path, report_dir, inputs, overwrite):
    resolved_inputs = {os.path.realpath(path) for path in inputs}
    if os.path.realpath(gpkg_path) in resolved_inputs:
        raise RunParameterError(
            f"Expected an output GeoPackage different from the input layers but {gpkg_path} is an input; "
            "choose another file"
        )
    for path in resolved_inputs:
        if Path(path).is_relative_to(report_dir.resolve()):
            raise RunParameterError(
                f"Expected a report folder that holds no input layer but {report_dir} contains {path}; "
                "choose another folder"
            )
    if gpkg_path.exists() and not overwrite:
        raise OutputExistsError(f"Expected no file at {gpkg_path} but one exists; choose another file or "
                                f"tick '{REPLACE_LABEL}' (overwrite=True)")
    if report_dir.exists():
        if not report_dir.is_dir():
            raise OutputExistsError(f"Expected {report_dir} to be a folder but it is a file; choose a folder")
        empty = not any(report_dir.iterdir())
        previous = all((report_dir / name).is_file() for name in _REPORT_MARKERS)
        if not empty and not previous:
            raise OutputExistsError(
                f"Expected an empty folder or a previous PolyTopo report at {report_dir} but it holds other "
                "files; choose a new folder (it is never replaced)"
            )
        if previous and not overwrite:
            raise OutputExistsError(f"Expected no report at {report_dir} but one exists; choose another folder "
                                    f"or tick '{REPLACE_LABEL}' (overwrite=True)")


def _layers(run):
    records = run.evaluation.records
    layers = error_layers(records["predictions"], records["references"], records["missed_holes"],
                          records["hallucinated_holes"])
    return layers + [(SUMMARY_LAYER, _summary_rows(run.evaluation.summary), None)]


def _summary_rows(summary):
    rows = []
    for name, value in summary["metrics"].items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        rows.append({"metric": name, "value": None if math.isnan(value) else float(value)})
    return rows


def _metadata(name, provenance):
    metadata = QgsLayerMetadata()
    metadata.setIdentifier(name)
    metadata.setTitle(f"PolyTopo evaluation: {name}")
    metadata.setType("dataset")
    metadata.setAbstract(
        f"{LAYER_DESCRIPTIONS[name]}. Predictions {provenance['prediction']['name']!r} evaluated against "
        f"reference {provenance['reference']['name']!r} with the {provenance['profile']} profile at "
        f"{provenance['pixel_size']:g} {provenance['pixel_size_unit']}."
    )
    metadata.setKeywords({"PolyTopo": ["evaluation", "polygons with holes", provenance["profile"]]})
    history = [f"{provenance['created_utc']}: evaluated by PolyTopo {provenance['plugin_version']} "
               f"(QGIS {provenance['qgis_version']})"]
    if provenance.get("model"):
        history.append(f"predictions vectorized with model {provenance['model']} on "
                       f"{provenance.get('provider_used')}")
    history.append("provenance: " + json.dumps(provenance, sort_keys=True, default=str))
    metadata.setHistory(history)
    return metadata


def _style_and_describe(gpkg, provenance, steps):
    registry = QgsProviderRegistry.instance()
    for name in (*ERROR_LAYERS, SUMMARY_LAYER):
        steps.check()
        layer = QgsVectorLayer(f"{gpkg}|layername={name}", name, "ogr")
        if not layer.isValid():
            raise RunFailedError(f"Expected layer {name!r} in {gpkg} after writing it but QGIS cannot open it")
        apply_style(layer, name)
        layer.setCustomProperty(PROVENANCE_PROPERTY, json.dumps(provenance, sort_keys=True, default=str))
        metadata = _metadata(name, provenance)
        layer.setMetadata(metadata)
        message = layer.saveStyleToDatabase(name, LAYER_DESCRIPTIONS[name], True, "")
        if message:
            raise RunFailedError(f"Expected to save the style of {name!r} into {gpkg} but QGIS reported: {message}")
        saved, message = registry.saveLayerMetadata("ogr", layer.source(), metadata)
        if not saved:
            raise RunFailedError(f"Expected to save the metadata of {name!r} into {gpkg} but QGIS reported: "
                                 f"{message}")
        del layer


def _write_report_folder(run, report_dir, overwrite, steps):
    report_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{report_dir.name}.partial-", dir=report_dir.parent))
    try:
        folder = staging / report_dir.name
        steps.info(f"Writing the report in {report_dir}")
        written = write_report(run.evaluation, folder, frame=run.frame, geopackage=False, plots=_can_plot(steps))
        steps.progress(85)
        written["provenance"] = write_summary_json(run.provenance, folder / "provenance.json")
        figures = [path.name for path in written.values() if path.suffix == ".png"]
        written["report_html"] = folder / "report.html"
        written["report_html"].write_text(render_report_html(run.evaluation.summary, run.provenance, figures),
                                          encoding="utf-8")
        steps.check()
        if report_dir.exists():  # checked before: empty, or a previous report that may be replaced
            shutil.rmtree(report_dir)
        os.replace(folder, report_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {name: report_dir / Path(path).name for name, path in written.items()}


def _can_plot(steps):
    try:
        import matplotlib  # noqa: F401 - only probing that the figures can be drawn
    except ImportError:
        steps.warn("Matplotlib is not installed: the report has no figures (install python3-matplotlib)")
        return False
    return True
