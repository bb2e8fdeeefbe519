"""Write an :class:`~polytopo.plugin.runs.evaluation.EvaluationRun`: one styled GeoPackage and a report folder.

The GeoPackage holds the six layers of :data:`~polytopo.plugin.runs.styles.ERROR_LAYERS` (geometry in map
units of the reference CRS), a ``summary`` table (metric, value), each layer's style as
its default style (so the styles travel with the file) and each layer's metadata
(provenance). The report folder holds ``report.html``, ``summary.json``,
``provenance.json``, the per-feature CSV files and the PNG figures, written by
:func:`polytopo.evaluator.write_report`.

Both outputs follow :mod:`polytopo.core.output_safety`: they are assembled under
temporary names next to their targets and moved into place only when complete (the
GeoPackage after the report folder, each with its styles and metadata already written);
a failure or a cancel removes them. Existing outputs are replaced only with
``overwrite=True``; an existing GeoPackage keeps every layer PolyTopo did not write (the
new layers are added to it, :mod:`polytopo.core.geopackage_publish`) and a user's
layer named like one of PolyTopo's stops the run; a report folder only when PolyTopo wrote
it (its marker file), and then only the files it wrote; inputs never. Read-only folders and a full disk are
reported before the work.
"""

import json
import math
import shutil
from pathlib import Path

from qgis.core import QgsLayerMetadata, QgsProviderRegistry, QgsVectorLayer

from ...evaluator import EvaluatorError, write_report
from ...core import output_safety
from ...evaluator.tables.error_classes import ERROR_LAYERS as LAYER_TABLE
from ...core.geopackage_publish import check_layer_names
from ...evaluator.outputs.records import FIELD_KINDS
from ...core.atomic_output import atomic_output
from ...evaluator.outputs.writers import error_layers, write_geopackage, write_summary_json
from ..errors import OutputExistsError, RunFailedError, RunParameterError
from .output_check import REPLACE_OPTION
from .report_html import render_report_html
from .feedback import RunSteps
from .styles import ERROR_LAYERS, SUMMARY_LAYER, apply_style

__all__ = ["export_run", "GEOPACKAGE_LAYERS", "PROVENANCE_PROPERTY", "LAYER_DESCRIPTIONS"]

#: The layers :func:`export_run` writes into its GeoPackage.
GEOPACKAGE_LAYERS = (*ERROR_LAYERS, SUMMARY_LAYER)
#: Custom layer property holding the provenance record as JSON.
PROVENANCE_PROPERTY = "polytopo/provenance"
#: GeoPackage layer → one-line description (layer metadata title and style description).
LAYER_DESCRIPTIONS = {**{layer.name: layer.description for layer in LAYER_TABLE},
                      SUMMARY_LAYER: "Headline metrics of the evaluation"}


def export_run(run, gpkg_path, report_dir, *, overwrite=False, feedback=None):
    """Write the GeoPackage and the report folder of ``run``.

    Parameters
    ----------
    run : EvaluationRun
        From :func:`polytopo.plugin.runs.evaluation.evaluate_layers`.
    gpkg_path : str or Path
        The GeoPackage to write (``.gpkg``); its folder is created if needed.
    report_dir : str or Path
        The report folder to write.
    overwrite : bool
        Replace an existing GeoPackage, and an existing report folder that holds a
        previous PolyTopo output (its marker file ``.polytopo-output.json``; only the
        files listed there are removed). An empty folder is always used; any other
        existing folder is never replaced.
    feedback : object, optional
        See :mod:`polytopo.plugin.runs.feedback`.

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
        An output is one of the input layers' files (sidecars and ``/vsizip/``
        archives included), or the report folder holds one.
    RunCanceled
        ``feedback.isCanceled()`` became true; nothing was written.
    RunFailedError
        A folder is read-only or the disk is full (checked first), or writing failed;
        nothing was left behind.
    """
    steps = RunSteps(feedback, "export")
    gpkg_path, report_dir = Path(gpkg_path), Path(report_dir)
    inputs = _input_sources(run.provenance)
    _check_outputs(gpkg_path, report_dir, inputs, overwrite)
    steps.progress(0)
    try:
        with atomic_output(gpkg_path, overwrite=overwrite, protect=inputs) as temporary:
            steps.info(f"Writing {gpkg_path.name}")
            write_geopackage(temporary, _layers(run), frame=run.frame, field_kinds=FIELD_KINDS)
            steps.progress(30)
            _style_and_describe(temporary, run.provenance, steps)
            steps.progress(50)
            files = _write_report_folder(run, report_dir, overwrite, steps)
    except output_safety.OutputExistsError as exc:
        raise OutputExistsError(str(exc)) from exc
    except output_safety.UnsafeOutputError as exc:
        raise RunParameterError(str(exc)) from exc
    except EvaluatorError as exc:
        raise RunFailedError(f"Expected to write the outputs but got: {exc}") from exc
    except OSError as exc:
        raise RunFailedError(str(output_safety.write_failure(exc, gpkg_path))) from exc
    steps.progress(100)
    return {"geopackage": gpkg_path, **files}


def _input_sources(provenance):
    return [provenance.get(role, {}).get("source", "") for role in ("prediction", "reference")]


def _check_outputs(gpkg_path, report_dir, inputs, overwrite):
    """Apply the output-safety rules to both outputs and probe their folders, before any work."""
    try:
        output_safety.check_file_output(gpkg_path, inputs=inputs, overwrite=overwrite, option=REPLACE_OPTION)
        check_layer_names(gpkg_path, GEOPACKAGE_LAYERS)
        output_safety.check_folder_output(report_dir, inputs=inputs, overwrite=overwrite, option=REPLACE_OPTION)
        for folder in {gpkg_path.parent, report_dir.parent}:
            folder.mkdir(parents=True, exist_ok=True)
            output_safety.probe_folder(folder)
    except output_safety.OutputExistsError as exc:
        raise OutputExistsError(str(exc)) from exc
    except output_safety.UnsafeOutputError as exc:
        raise RunParameterError(str(exc)) from exc
    except output_safety.OutputWriteError as exc:
        raise RunFailedError(str(exc)) from exc
    except OSError as exc:
        raise RunFailedError(str(output_safety.write_failure(exc, report_dir))) from exc


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
    for name in GEOPACKAGE_LAYERS:
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
            raise _save_failure(f"Expected to save the style of {name!r} into {gpkg} but QGIS reported: {message}", gpkg)
        saved, message = registry.saveLayerMetadata("ogr", layer.source(), metadata)
        if not saved:
            raise _save_failure(f"Expected to save the metadata of {name!r} into {gpkg} but QGIS reported: "
                                f"{message}", gpkg)
        del layer


def _save_failure(message, gpkg):
    """A RunFailedError with ``message``, or one naming the full disk when that is the cause."""
    failure = output_safety.write_failure(RuntimeError(message), gpkg)
    return RunFailedError(str(failure) if failure.disk_full else message)


def _write_report_folder(run, report_dir, overwrite, steps):
    staging = report_dir.parent / output_safety.partial_name(report_dir.name)
    staging.mkdir()
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
        output_safety.check_folder_output(report_dir, overwrite=overwrite)  # again: it may have changed meanwhile
        output_safety.publish_folder(folder, report_dir, order=("summary.json", "report.html"))
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
