"""PolyTopo evaluator: PolyTopoBench and P3 metrics for polygons with holes.

Pure Python on shapely 2, numpy and scipy; never imports QGIS. Every length is in pixels
of the evaluation raster and every area in px²; map layers are scaled by the pixel size on
loading.

>>> from polytopo.evaluator import evaluate, load_inputs            # doctest: +SKIP
>>> gt, pred, frame = load_inputs("gt.json", "pred.json")           # doctest: +SKIP
>>> evaluate(gt, pred, profile="paper").summary["metrics"]["Hole-F1"]  # doctest: +SKIP
"""

from .api import Evaluation, evaluate, load_inputs
from .cluster import map_partitions, open_client
from .errors import ClusterError, EvaluatorError, InputFormatError, InvalidParameterError, MissingDependencyError
from .instances import Instance, InstanceSet, instances_from_geometries, instances_from_geometry
from .io_coco import load_coco_ground_truth, load_coco_predictions
from .io_vector import SCORE_FIELD, PixelFrame, assign_images, frame_for_bounds, implied_score_field, load_vector_layer
from .polygon_metrics import boundary_iou, hole_f1, mta, polis, topo_em
from .params import PROFILES, EvaluationParams, params_for
from .report import format_table, write_report
from .writers import atomic_output, error_layers, write_geopackage, write_summary_json

__all__ = [
    "ClusterError",
    "Evaluation",
    "EvaluationParams",
    "EvaluatorError",
    "InputFormatError",
    "Instance",
    "InstanceSet",
    "InvalidParameterError",
    "MissingDependencyError",
    "PROFILES",
    "PixelFrame",
    "SCORE_FIELD",
    "assign_images",
    "boundary_iou",
    "atomic_output",
    "error_layers",
    "evaluate",
    "format_table",
    "hole_f1",
    "frame_for_bounds",
    "implied_score_field",
    "instances_from_geometries",
    "instances_from_geometry",
    "load_coco_ground_truth",
    "load_coco_predictions",
    "load_inputs",
    "load_vector_layer",
    "map_partitions",
    "mta",
    "open_client",
    "params_for",
    "polis",
    "topo_em",
    "write_geopackage",
    "write_report",
    "write_summary_json",
]
