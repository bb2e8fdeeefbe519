"""PolyTopo evaluator: PolyTopoBench and P3 metrics for polygons with holes.

Pure Python on shapely 2, numpy and scipy; never imports QGIS. Every length is in pixels
of the evaluation raster and every area in px²; map layers are scaled by the pixel size on
loading.

>>> from polytopo.evaluator import evaluate, load_inputs            # doctest: +SKIP
>>> gt, pred, frame = load_inputs("gt.json", "pred.json")           # doctest: +SKIP
>>> evaluate(gt, pred, profile="paper").summary["metrics"]["Hole-F1"]  # doctest: +SKIP
"""

from .api import Evaluation, evaluate, load_inputs
from .errors import EvaluatorError, InputFormatError, InvalidParameterError, PhaseOrderError
from .instances import Instance, InstanceSet, instances_from_geometry
from .io_coco import load_coco_ground_truth, load_coco_predictions
from .params import PROFILES, EvaluationParams, params_for
from .report import format_table, write_report

__all__ = [
    "Evaluation",
    "EvaluationParams",
    "EvaluatorError",
    "InputFormatError",
    "Instance",
    "InstanceSet",
    "InvalidParameterError",
    "PROFILES",
    "PhaseOrderError",
    "evaluate",
    "format_table",
    "instances_from_geometry",
    "load_coco_ground_truth",
    "load_coco_predictions",
    "load_inputs",
    "params_for",
    "write_report",
]
