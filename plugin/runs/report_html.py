"""The evaluation report as one HTML page: headline metrics, counts, figures, provenance.

The page is filled from :data:`~polytopo.plugin.resource_paths.REPORT_TEMPLATE_PATH` (``string.Template``
placeholders); figures are the PNG files that :func:`polytopo.evaluator.write_report` draws,
linked by file name so the page works wherever the report folder is moved.
"""

import html
import math
from string import Template

from ...evaluator.tables.metric_table import HEADLINE, metric
from ..resource_paths import REPORT_TEMPLATE_PATH

__all__ = ["render_report_html", "FIGURE_TITLES"]

#: PNG file stem → caption, in page order.
FIGURE_TITLES = {
    "precision_recall": "Precision–recall of the ranked predictions",
    "simple_to_complex": "Reference polygons grouped by hole count",
    "wrong_topo": "WrongTopo under geometry filters",
    "min_hole_area_sweep": "Minimum hole area sweep",
    "ring_threshold_sweep": "Ring match threshold sweep",
}

_COUNTS = (
    ("images", "Images"),
    ("gt_instances", "Reference polygons"),
    ("gt_holes", "Reference holes"),
    ("pred_instances", "Predicted polygons"),
    ("pred_holes", "Predicted holes"),
    ("invalid_predictions", "Invalid predictions"),
)


def _number(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _row(*cells, numeric=()):
    """One table row; cells whose index is in ``numeric`` are right-aligned."""
    tags = ['<td class="number">' if index in numeric else "<td>" for index in range(len(cells))]
    return "<tr>" + "".join(f"{tag}{html.escape(str(cell))}</td>" for tag, cell in zip(tags, cells)) + "</tr>"


def render_report_html(summary, provenance, figures):
    """The report page as a string.

    Parameters
    ----------
    summary : dict
        ``Evaluation.summary``.
    provenance : dict
        ``EvaluationRun.provenance`` (plus ``model`` and ``provider_used`` for a vectorize run).
    figures : iterable of str
        File names of the PNG figures in the report folder.

    Returns
    -------
    str
        A complete HTML document.
    """
    metrics, boot = summary["metrics"], summary.get("bootstrap", {})
    rows = []
    for name in HEADLINE:
        interval = boot.get(name)
        ci = ("undefined" if boot.get("undefined") else
              f"[{_number(interval['low'])}, {_number(interval['high'])}]") if interval else ""
        value = _number(metrics.get(name))
        rows.append(_row(name, value + (metric(name).suffix if value != "–" else ""), ci, numeric=(1,)))
    counts = summary["counts"]
    count_rows = [_row(label, counts.get(key, "–"), numeric=(1,)) for key, label in _COUNTS]
    figures = sorted(figures, key=lambda name: list(FIGURE_TITLES).index(name[:-4])
                     if name[:-4] in FIGURE_TITLES else len(FIGURE_TITLES))
    figure_html = "\n".join(
        f'<figure><img src="{html.escape(name)}" alt="{html.escape(FIGURE_TITLES.get(name[:-4], name))}">'
        f"<figcaption>{html.escape(FIGURE_TITLES.get(name[:-4], name))}</figcaption></figure>"
        for name in figures) or "<p>No figures (Matplotlib is not available).</p>"
    warnings = "".join(f'<p class="warning">{html.escape(text)}</p>' for text in provenance.get("warnings", []))
    level = boot.get("level")
    return Template(REPORT_TEMPLATE_PATH.read_text(encoding="utf-8")).substitute(
        title=html.escape(f"PolyTopo evaluation: {provenance['prediction']['name']} against "
                          f"{provenance['reference']['name']}"),
        profile=html.escape(summary["profile"]),
        pixel_size=html.escape(f"{provenance['pixel_size']:g} {provenance['pixel_size_unit']}"),
        plugin_version=html.escape(provenance["plugin_version"]),
        created=html.escape(provenance["created_utc"]),
        warnings=warnings,
        interval_header=(f"Bootstrap interval (undefined: {html.escape(boot['undefined'])})" if boot.get("undefined")
                         else f"{level:.0%} bootstrap interval" if level else "Interval"),
        metric_rows="\n".join(rows),
        count_rows="\n".join(count_rows),
        figures=figure_html,
        provenance_rows="\n".join(_row(key, value) for key, value in _provenance_items(provenance)),
    )


def _provenance_items(provenance):
    yield "Predictions", f"{provenance['prediction']['name']} ({provenance['prediction']['source']}, "\
                         f"{provenance['prediction']['crs']})"
    yield "Reference", f"{provenance['reference']['name']} ({provenance['reference']['source']}, "\
                       f"{provenance['reference']['crs']})"
    yield "Output CRS", provenance["crs"] or "none"
    for key in ("model", "provider_used", "score_field", "default_score", "image_field", "patch_size_px"):
        if provenance.get(key) is not None:
            yield key.replace("_", " ").capitalize(), provenance[key]
    yield from provenance["parameters"].items()
