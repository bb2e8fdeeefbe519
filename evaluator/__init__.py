"""PolyTopo evaluator: PolyTopoBench and P3 metrics for polygons with holes.

Pure Python on shapely 2, numpy and scipy; never imports QGIS. Every length is in pixels
of the evaluation raster and every area in px²; map layers are scaled by the pixel size on
loading.

>>> from polytopo.evaluator import evaluate, load_inputs            # doctest: +SKIP
>>> gt, pred, frame = load_inputs("gt.json", "pred.json")           # doctest: +SKIP
>>> evaluate(gt, pred, profile="paper").summary["metrics"]["Hole-F1"]  # doctest: +SKIP
"""

import sys
import types

from ..core.errors import ClusterError, EvaluatorError, InputFormatError, InvalidParameterError, MissingDependencyError
from ..core.lazy_names import lazy_namespace

#: Where each name of the package namespace is defined. The names are imported on first
#: use (PEP 562), so that light modules (:mod:`.tables.error_classes`, :mod:`.outputs.qml_styles`,
#: :mod:`polytopo.core.errors`) import without shapely, numpy or scipy.
_DEFINED_IN = {
    **dict.fromkeys(("Evaluation", "evaluate", "evaluate_files", "load_inputs"), ".run.api"),
    **dict.fromkeys(("map_partitions", "open_client"), "polytopo.core.cluster"),
    **dict.fromkeys(("Instance", "InstanceSet", "instances_from_geometries", "instances_from_geometry"),
                    ".inputs.instances"),
    **dict.fromkeys(("load_coco_ground_truth", "load_coco_predictions"), ".inputs.io_coco"),
    **dict.fromkeys(("assign_images",), ".inputs.frame"),
    **dict.fromkeys(("PixelFrame", "frame_for_bounds"), "polytopo.core.vector_files"),
    **dict.fromkeys(("SCORE_FIELD", "implied_score_field", "load_vector_layer"), ".inputs.io_vector"),
    **dict.fromkeys(("boundary_iou", "hole_f1", "mta", "polis", "topo_em"), ".metrics.polygon_metrics"),
    **dict.fromkeys(("PROFILES", "EvaluationParams", "params_for"), ".tables.params"),
    **dict.fromkeys(("format_table", "write_report"), ".outputs.report"),
    **dict.fromkeys(("atomic_output",), "polytopo.core.atomic_output"),
    **dict.fromkeys(("error_layers", "write_geopackage", "write_summary_json"), ".outputs.writers"),
}

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
    "evaluate_files",
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


class _Namespace(types.ModuleType):
    """The package module, whose namespace names are not hidden by submodules of the same name.

    Loading a submodule binds it as an attribute of the package; ``.mta`` would then hide
    the function ``mta`` of :data:`__all__` (``from polytopo.evaluator import mta`` would
    give the module). ``from polytopo.evaluator.geometry.mta import ...`` is unaffected.
    """

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and name in _DEFINED_IN:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Namespace


__getattr__, __dir__ = lazy_namespace(__name__, _DEFINED_IN)
