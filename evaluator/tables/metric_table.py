"""The metric vocabulary: one row per metric the evaluator reports, and the lists read from it.

Every name of ``summary["metrics"]`` (PolyTopoBench Table 3 and Appendix A.1, the
reference-code, COCO and P3 extras) has a row in :data:`METRICS`; the reports, the
comparison table, the sweeps, the bootstrap, the P3 profiles, the per-feature records and
the plugin's outputs read their metric names, orders, units and directions from it. A family of
names that differ by a threshold (``AP@0.75``, ``Corner-F1@2``, ``AR@100``) has one row
whose name holds a placeholder: ``<t>`` (a number), ``<n>`` (a number or ``all``),
``<size>`` (``small``, ``medium`` or ``large``).

Row order is the order of the headline table (:data:`HEADLINE`, the paper's Table 3
with AP beside AP50), then the other metrics; every list below keeps it, except the
sweeps, whose order is each row's ``sweep`` position.

Examples
--------
>>> metric("E-POLIS").unit, metric("E-POLIS").higher_is_better, metric("E-POLIS").field
('px', False, 'e_polis')
>>> metric("AP@0.55").name
'AP@<t>'
>>> KEY_METRICS
('AP50', 'E-BIoU', 'Hole-F1', 'Topo-EM')
"""

import re
from dataclasses import dataclass

from ...core.errors import InvalidParameterError

__all__ = ["Metric", "METRICS", "SCOPES", "RINGS", "UNITS", "metric", "metric_names", "names", "suffixes", "HEADLINE", "TABLE3_COLUMNS",
           "KEY_METRICS", "SWEPT", "SWEEP_PLOTTED", "OUTPUT_NAMES", "FEATURE_FIELDS"]

SCOPES = {
    "dataset": "one number pooled over every image of the evaluation",
    "instance pairs": "mean over the matched instance pairs",
    "hole pairs": "mean over the matched hole (interior ring) pairs",
    "images": "mean over the images (tiles) where it is defined",
    "predicted polygons": "mean over the merged predicted polygons of every image",
}
"""Scope name → over what a metric is aggregated."""

RINGS = {None: "whole instances", "overall": "all rings of a pair together (O-)",
         "exterior": "exterior rings (E-)", "holes": "interior rings (H-)"}
"""Ring kind name → which rings a metric measures (the paper's O/E/H scopes)."""

UNITS = {"ratio 0..1": "", "ratio >= 0": "", "px": " px", "degrees": " °", "count": ""}
"""Unit name → the suffix that follows a value in text tables (pixels of the evaluation grid)."""

_PLACEHOLDERS = {"<t>": r"[0-9]+(?:\.[0-9]+)?", "<n>": r"(?:[0-9]+|all)", "<size>": r"(?:small|medium|large)"}
_FIELD_KINDS = ("float", "int")


@dataclass(frozen=True)
class Metric:
    """One row of the metric table.

    Attributes
    ----------
    name : str
        The key in ``summary["metrics"]`` (the paper's Table 3 name), possibly with a
        placeholder (see the module docstring).
    scope : str
        A key of :data:`SCOPES`.
    unit : str
        A key of :data:`UNITS`; lengths are pixels of the evaluation grid.
    higher_is_better : bool or None
        None for counts that are neither (matched pairs, invalid predictions).
    description : str
        What the metric measures, in one sentence.
    rings : str or None
        A key of :data:`RINGS`.
    headline : bool
        Shown in the evaluation's text and HTML report (:data:`HEADLINE`).
    table3 : bool
        A column of the method comparison, the paper's Table 3 (:data:`TABLE3_COLUMNS`).
    key : bool
        One of the four key numbers (:data:`KEY_METRICS`): bootstrapped per image
        (Appendix A.7), compared pairwise, shown in the dock and returned as outputs.
    sweep : int or None
        Position in the sensitivity sweeps' rows (Appendix A.2, :data:`SWEPT`); None
        when not swept.
    field : str or None
        The per-feature column of the prediction records (CSV and GeoPackage), when the
        metric has a per-feature value.
    field_kind : str
        ``"float"`` or ``"int"``: the type of ``field``.
    label : str or None
        Readable name with unit: the attribute alias of ``field`` and the axis label of
        plots.
    """

    name: str
    scope: str
    unit: str
    higher_is_better: bool | None
    description: str
    rings: str | None = None
    headline: bool = False
    table3: bool = False
    key: bool = False
    sweep: int | None = None
    field: str | None = None
    field_kind: str = "float"
    label: str | None = None

    def __post_init__(self):
        for value, allowed, what in ((self.scope, SCOPES, "scope"), (self.unit, UNITS, "unit"),
                                     (self.rings, RINGS, "rings"), (self.field_kind, _FIELD_KINDS, "field_kind")):
            if value not in allowed:
                raise InvalidParameterError(
                    f"Expected the {what} of metric {self.name!r} to be one of {list(allowed)} but got {value!r}")

    @property
    def suffix(self):
        """The unit suffix of a value in text tables (``" px"``, ``" °"`` or ``""``)."""
        return UNITS[self.unit]

    @property
    def output_name(self):
        """The name as an output identifier: upper case, ``_`` for ``-`` (``"E_BIOU"``)."""
        return self.name.upper().replace("-", "_")


def _ratio(name, scope, description, **extra):
    return Metric(name, scope, "ratio 0..1", True, description, **extra)


def _distance(name, scope, unit, description, **extra):
    return Metric(name, scope, unit, False, description, **extra)


def _count(name, description, higher_is_better=None):
    return Metric(name, "dataset", "count", higher_is_better, description)


def _p3(prefix, name, unit, higher_is_better, scope, description):
    return Metric(f"{prefix}-{name}", scope, unit, higher_is_better, description)


_PAIRS, _HOLES = "instance pairs", "hole pairs"

METRICS = (
    _ratio("AP50", "dataset", "Average precision of instances matched at IoU 0.5 (101-point interpolated).",
           headline=True, table3=True, key=True, sweep=0),
    _ratio("AP", "dataset", "Mean of the AP at every IoU threshold of the evaluation (0.50:0.95).", headline=True),
    _ratio("O-BIoU", _PAIRS, "Boundary IoU of all rings of a matched pair.", rings="overall", headline=True,
           table3=True, field="o_biou", label="Overall BIoU"),
    _ratio("E-BIoU", _PAIRS, "Boundary IoU of the exterior rings of a matched pair.", rings="exterior",
           headline=True, table3=True, key=True, field="e_biou", label="Exterior BIoU"),
    _ratio("H-BIoU", _HOLES, "Boundary IoU of a matched hole pair.", rings="holes", headline=True, table3=True,
           sweep=2),
    _distance("O-POLIS", _PAIRS, "px", "POLIS distance between all rings of a matched pair.", rings="overall",
              headline=True, table3=True, field="o_polis", label="Overall POLIS (px)"),
    _distance("E-POLIS", _PAIRS, "px", "POLIS distance between the exterior rings of a matched pair.",
              rings="exterior", headline=True, table3=True, field="e_polis", label="Exterior POLIS (px)"),
    _distance("H-POLIS", _HOLES, "px", "POLIS distance between the rings of a matched hole pair.", rings="holes",
              headline=True, table3=True),
    _distance("O-MTA", _PAIRS, "degrees", "Maximum tangent angle error over all rings of a matched pair.",
              rings="overall", headline=True, table3=True, field="o_mta", label="Overall MTA (°)"),
    _distance("E-MTA", _PAIRS, "degrees", "Maximum tangent angle error of the exterior rings of a matched pair.",
              rings="exterior", headline=True, table3=True, field="e_mta", label="Exterior MTA (°)"),
    _distance("H-MTA", _HOLES, "degrees", "Maximum tangent angle error of a matched hole pair.", rings="holes",
              headline=True, table3=True),
    _ratio("Hole-F1", "dataset", "F1 of hole matches, micro-averaged (holes of unmatched instances count).",
           rings="holes", headline=True, table3=True, key=True, sweep=1, field="hole_f1", label="Hole F1"),
    _ratio("Topo-EM", "dataset", "Share of instances that are matched and topologically exact (Definition 15).",
           headline=True, table3=True, key=True, sweep=3, field="topo_em", field_kind="int", label="Topology exact"),
    _ratio("IoU", _PAIRS, "IoU of a matched instance pair, holes subtracted (the matching criterion).",
           field="iou", label="IoU"),
    _ratio("E-F1", "dataset", "F1 of exterior ring matches over all instances.", rings="exterior", sweep=4),
    _ratio("E-P", "dataset", "Precision of exterior ring matches.", rings="exterior"),
    _ratio("E-R", "dataset", "Recall of exterior ring matches.", rings="exterior"),
    _ratio("Hole-P", "dataset", "Precision of hole matches.", rings="holes"),
    _ratio("Hole-R", "dataset", "Recall of hole matches.", rings="holes"),
    _count("Hole-TP", "Matched holes.", higher_is_better=True),
    _count("Hole-FP", "Predicted holes without a match.", higher_is_better=False),
    _count("Hole-FN", "Reference holes without a match.", higher_is_better=False),
    _distance("O-HD95", _PAIRS, "px", "95th percentile Hausdorff distance of all rings of a matched pair.",
              rings="overall"),
    _distance("E-HD95", _PAIRS, "px", "95th percentile Hausdorff distance of the exterior rings of a matched pair.",
              rings="exterior"),
    _distance("H-HD95", _HOLES, "px", "95th percentile Hausdorff distance of a matched hole pair.", rings="holes"),
    _ratio("Corner-F1@<t>", "dataset", "F1 of exterior corners matched within <t> px.", rings="exterior"),
    _distance("HoleCount-MAE", _PAIRS, "count", "Mean absolute difference of hole counts of matched pairs."),
    _ratio("AP75", "dataset", "Average precision of instances matched at IoU 0.75."),
    _ratio("AP@<t>", "dataset", "Average precision of instances matched at IoU <t>."),
    _ratio("AP_<size>", "dataset", "COCO average precision of the instances of one area range."),
    _ratio("AR", "dataset", "Recall averaged over the IoU thresholds (COCO: at the largest detection cap)."),
    _ratio("AR@<n>", "dataset", "COCO average recall with at most <n> detections per image."),
    _ratio("AR_<size>", "dataset", "COCO average recall of the instances of one area range."),
    _count("matched_pairs", "Matched instance pairs."),
    _count("unmatched_gt", "Reference instances without a match."),
    _count("unmatched_pred", "Predicted instances without a match."),
    _count("invalid_pred", "Predictions that fail the validity check (Definition 15)."),
    _p3("P3", "IoU", "ratio 0..1", True, "images", "IoU of the union of a tile's predictions and references."),
    _p3("P3", "C-IoU", "ratio 0..1", True, "images", "Tile IoU times the vertex-count complexity factor."),
    _p3("P3", "AP", "ratio 0..1", True, "images", "Tile AP, mean over IoU 0.5 and 0.75."),
    _p3("P3", "AR", "ratio 0..1", True, "images", "Tile recall, mean over IoU 0.5 and 0.75."),
    _p3("P3", "POLIS", "px", False, "images", "POLIS of all rings of the tile's matched pairs."),
    _p3("P3", "HD", "px", False, "images", "Hausdorff distance of all rings of the tile's matched pairs."),
    _p3("P3", "CD", "px", False, "images", "Chamfer distance of all rings of the tile's matched pairs."),
    _p3("P3", "MTA", "degrees", False, "images", "Maximum tangent angle error of the tile's matched pairs."),
    _p3("P3", "N-ratio", "ratio >= 0", False, "images", "Relative vertex-count error of the tile's matched pairs."),
    _p3("P3code", "IoU", "ratio 0..1", True, "images", "IoU of an image's rasterized mask unions (P3 code)."),
    _p3("P3code", "C-IoU", "ratio 0..1", True, "images", "Image IoU times the complexity factor NR (P3 code)."),
    _p3("P3code", "N-ratio", "ratio 0..1", True, "images", "Complexity factor NR of exterior vertex counts."),
    _p3("P3code", "AP", "ratio 0..1", True, "dataset", "pycocotools AP over IoU 0.50:0.95 (raster masks)."),
    _p3("P3code", "AR", "ratio 0..1", True, "dataset", "pycocotools AR@10 (raster masks)."),
    _p3("P3code", "POLIS", "px", False, "images", "POLIS of exteriors of bounding-box pairs (P3 code)."),
    _p3("P3code", "HD", "px", False, "images", "Hausdorff distance of exteriors of bounding-box pairs."),
    _p3("P3code", "CD", "px", False, "images", "Chamfer distance of exteriors of bounding-box pairs."),
    _p3("P3code", "MTA", "degrees", False, "predicted polygons",
        "Maximum tangent angle error of merged predicted polygons (P3 code)."),
)
"""Every metric, in table order."""

_BY_NAME = {row.name: row for row in METRICS}
_FAMILIES = [(re.compile("".join(_PLACEHOLDERS.get(part, re.escape(part))
                                 for part in re.split(r"(<[a-z]+>)", row.name)) + "$"), row)
             for row in METRICS if "<" in row.name]


def metric(name):
    """The row of metric ``name`` (a family's row for a name such as ``"AP@0.65"``).

    Raises
    ------
    InvalidParameterError
        When no row has that name.

    Examples
    --------
    >>> metric("Corner-F1@5").unit
    'ratio 0..1'
    """
    row = _BY_NAME.get(name)
    if row is not None:
        return row
    for pattern, row in _FAMILIES:
        if pattern.match(name):
            return row
    raise InvalidParameterError(f"Expected a metric name of the metric table (e.g. {', '.join(HEADLINE[:4])}) "
                                f"but got {name!r}; add a row to evaluator/tables/metric_table.py for a new metric")


def metric_names(*chosen):
    """The metric names ``chosen`` as a tuple, each checked against the table (:func:`metric`).

    A consumer that shows a selection of metrics names it through here, so that a renamed
    or removed row fails at import instead of leaving a stale copy.

    Examples
    --------
    >>> metric_names("AP50", "Hole-F1")
    ('AP50', 'Hole-F1')
    """
    for name in chosen:
        metric(name)
    return tuple(chosen)


def names(rows):
    """The names of ``rows`` as a tuple (rows is any iterable of :class:`Metric`)."""
    return tuple(row.name for row in rows)


def suffixes(prefix):
    """The names of the rows called ``prefix-…``, without ``prefix-``, in table order.

    Examples
    --------
    >>> suffixes("P3")[:4]
    ('IoU', 'C-IoU', 'AP', 'AR')
    """
    return tuple(row.name[len(prefix) + 1:] for row in METRICS if row.name.startswith(f"{prefix}-"))


HEADLINE = names(row for row in METRICS if row.headline)
"""Metrics of the text and HTML report, in table order."""

TABLE3_COLUMNS = names(row for row in METRICS if row.table3)
"""Columns of the paper's Table 3 (the method comparison), in its order."""

KEY_METRICS = names(row for row in METRICS if row.key)
"""The four key numbers: bootstrap, paired comparison, dock summary, outputs."""

SWEPT = names(sorted((row for row in METRICS if row.sweep is not None), key=lambda row: row.sweep))
"""Metrics of each sensitivity sweep row, in sweep order."""

SWEEP_PLOTTED = tuple(name for name in SWEPT if metric(name).headline)
"""The swept headline metrics, drawn as the curves of the sweep figures (Fig. 5 and 6)."""

OUTPUT_NAMES = {metric(name).output_name: name for name in KEY_METRICS}
"""Output identifier → key metric (``{"AP50": "AP50", "E_BIOU": "E-BIoU", ...}``)."""

FEATURE_FIELDS = {row.field: row for row in METRICS if row.field}
"""Per-feature record field → its metric row, in table order."""
