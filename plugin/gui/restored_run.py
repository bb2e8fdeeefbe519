"""An evaluation read back from its scored layers, so the dock can show a saved run again.

An evaluation GeoPackage written by :func:`polytopo.plugin.runs.export.export_run` holds everything the
dock's summary and per-feature table show: the ``summary`` table (metric, value) and
the scored ``predictions`` layer (one feature per prediction, with its record fields
and the provenance as a custom property). :func:`restore_from_project` finds such a
layer in a project (a saved project reopened, or the GeoPackage added again) and
rebuilds a :class:`RestoredResult` that the dock displays like a fresh one. The ring by
ring diagnosis needs the full evaluation and is replaced by the feature's hole counts.
"""

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from qgis.core import QgsVectorLayer

from ..runs.export import PROVENANCE_PROPERTY
from ..runs.output_check import report_folder
from ..runs.styles import SUMMARY_LAYER

__all__ = ["RestoredResult", "attribute_diagnosis", "restore_from_project"]

_PREDICTIONS = "predictions"


@dataclass(frozen=True)
class RestoredResult:
    """What the dock shows of an evaluation read back from its GeoPackage.

    Attributes
    ----------
    run : types.SimpleNamespace
        ``run.evaluation.summary["metrics"]`` and ``run.evaluation.records["predictions"]``
        (dicts of the layer's fields, ``geometry`` None), as a fresh run has them.
    paths : dict
        ``report_html`` when the report folder beside the GeoPackage still exists.
    gpkg_path : str
    layer : QgsVectorLayer
        The scored predictions layer of the project.
    """

    run: object
    paths: dict
    gpkg_path: str
    layer: object


def _gpkg_of(layer):
    path, _, options = layer.source().partition("|")
    return path if options == f"layername={_PREDICTIONS}" else None


def restore_from_project(project):
    """The evaluation whose scored predictions layer is highest in ``project``'s layer tree, or None.

    Parameters
    ----------
    project : QgsProject

    Returns
    -------
    RestoredResult or None
        None when no layer of the project is the ``predictions`` layer of an evaluation
        GeoPackage (with PolyTopo provenance).
    """
    for node in project.layerTreeRoot().findLayers():
        layer = node.layer()
        if not isinstance(layer, QgsVectorLayer) or not layer.customProperty(PROVENANCE_PROPERTY):
            continue
        gpkg = _gpkg_of(layer)
        if gpkg is None:
            continue
        summary = QgsVectorLayer(f"{gpkg}|layername={SUMMARY_LAYER}", SUMMARY_LAYER, "ogr")
        metrics = ({feature["metric"]: _plain(feature["value"]) for feature in summary.getFeatures()}
                   if summary.isValid() else {})
        names = layer.fields().names()
        records = [{**{name: _plain(feature[name]) for name in names}, "geometry": None, "fid": feature.id()}
                   for feature in layer.getFeatures()]
        report = report_folder(gpkg) / "report.html"
        evaluation = SimpleNamespace(summary={"metrics": metrics}, records={"predictions": records})
        return RestoredResult(SimpleNamespace(evaluation=evaluation), {"report_html": report} if report.is_file()
                              else {}, str(Path(gpkg)), layer)
    return None


def _plain(value):
    """A QVariant NULL becomes None; other values stay."""
    return None if value is None or (hasattr(value, "isNull") and value.isNull()) else value


def attribute_diagnosis(record):
    """Explain a restored prediction from its fields (the rings themselves are not stored).

    Parameters
    ----------
    record : dict
        Fields of a scored prediction.

    Returns
    -------
    str

    Examples
    --------
    >>> print(attribute_diagnosis({"pred_id": 3, "error_class": "extra hole", "matched_ref_id": 7, "iou": 0.91,
    ...                            "hole_tp": 1, "hole_fp": 1, "hole_fn": 0}))
    Prediction 3: extra hole
    Matched reference 7 with IoU 0.910.
    Holes: 1 matched, 1 extra, 0 missing (read back from the saved layer).
    """
    lines = [f"Prediction {record.get('pred_id')}: {record.get('error_class')}"]
    if record.get("matched_ref_id") is None:
        lines.append("Matched no reference polygon.")
    else:
        iou = record.get("iou")
        lines.append(f"Matched reference {record['matched_ref_id']} with IoU "
                     f"{'–' if iou is None else format(iou, '.3f')}.")
    lines.append(f"Holes: {record.get('hole_tp') or 0} matched, {record.get('hole_fp') or 0} extra, "
                 f"{record.get('hole_fn') or 0} missing (read back from the saved layer).")
    return "\n".join(lines)
