"""PNG figures of an evaluation, drawn from plain data (dicts, lists, arrays).

Each ``*_figure`` function returns a Matplotlib figure (for notebooks and reports), and
each ``plot_*`` function writes it as one PNG through :func:`polytopo.core.atomic_output.atomic_output` (same
``overwrite`` and ``protect`` rules as the other writers). Matplotlib is imported only
when a figure is drawn, and only its object API is used (``Figure`` with the Agg canvas),
so the global ``pyplot`` state of a host application such as QGIS is never touched. NaN
values are left out of the plots; a panel without any value says "no data".
"""

import io
import math
from pathlib import Path

import numpy as np

from ...core.errors import InvalidParameterError, MissingDependencyError
from ...core.atomic_output import atomic_output
from ..metrics.analysis import WRONG_TOPO_THRESHOLDS
from ..tables.metric_table import SWEEP_PLOTTED, metric, metric_names

__all__ = [
    "PLOTTED_ENTRIES",
    "plot_pngs",
    "plotted_entries",
    "plot_precision_recall",
    "plot_simple_to_complex",
    "plot_wrong_topo",
    "plot_sweep",
    "precision_recall_figure",
    "simple_to_complex_figure",
    "wrong_topo_figure",
    "sweep_figure",
    "save_png",
    "png_bytes",
    "write_png",
]

_HOLE_BINS = ("0", "1", "2", ">=3")
_SIMPLE_TO_COMPLEX_TITLE = "Simple-to-complex: ground truth grouped by hole count H"
_WRONG_TOPO_TITLE = "WrongTopo of matched complex polygons under geometry filters"
_WRONG_TOPO_FILTERS = tuple(zip(WRONG_TOPO_THRESHOLDS, ("τ (IoU)", "τ (exterior BIoU)", "τ (exterior POLIS, px)")))
"""(filter of :data:`~polytopo.evaluator.metrics.analysis.WRONG_TOPO_THRESHOLDS`, x-axis label), in its order."""
_SIMPLE_TO_COMPLEX_PANELS = metric_names("O-BIoU", "O-POLIS")
_UNIT_SUFFIXES = (("_px2", "px²"), ("_px", "px"))
_MAX_MARKER_PT2 = 300.0
_MIN_MARKER_PT2 = 4.0
_MARGINS_IN = {"left": 0.8, "right": 0.2, "bottom": 0.6, "top": 0.4, "between": 0.85, "suptitle": 0.22,
               "suptitle_gap": 0.08}
"""Figure margins in inches: around the panels, between two panels, and the extra top
margin of a figure title with its distance from the top edge."""


def plot_precision_recall(curves, path, *, title="Precision–recall", overwrite=False, protect=()):
    """Write :func:`precision_recall_figure` as a PNG file and return its path."""
    return save_png(precision_recall_figure(curves, title=title), path, overwrite=overwrite, protect=protect)


def precision_recall_figure(curves, *, title="Precision–recall"):
    """Precision against recall, one line per curve.

    Parameters
    ----------
    curves : dict
        ``{label: (precision, recall)}`` with two equally long 1-D arrays in [0, 1].
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> figure = precision_recall_figure({"model": ([1.0, 0.8, float("nan")], [0.0, 0.5, 1.0])})
    >>> [len(line.get_xdata()) for line in figure.axes[0].lines]
    [2]
    """
    figure, (axes,) = _new_figure(1, (5.5, 4.5))
    drawn = 0
    for label, (precision, recall) in curves.items():
        precision, recall = _floats(precision), _floats(recall)
        if precision.shape != recall.shape:
            raise InvalidParameterError(
                f"curve {label!r}: expected precision and recall of the same length but got "
                f"{precision.size} and {recall.size}"
            )
        keep = np.isfinite(precision) & np.isfinite(recall)
        if keep.any():
            axes.plot(recall[keep], precision[keep], label=str(label))
            drawn += 1
    axes.set(xlim=(0.0, 1.0), ylim=(0.0, 1.02), xlabel="Recall", ylabel="Precision", title=title)
    if drawn:
        axes.legend(loc="lower left")
    else:
        _no_data(axes)
    return figure


def plot_simple_to_complex(rows, path, *, title=_SIMPLE_TO_COMPLEX_TITLE, overwrite=False, protect=()):
    """Write :func:`simple_to_complex_figure` as a PNG file and return its path."""
    return save_png(simple_to_complex_figure(rows, title=title), path, overwrite=overwrite, protect=protect)


def simple_to_complex_figure(rows, *, title=_SIMPLE_TO_COMPLEX_TITLE):
    """Overall BIoU and Overall POLIS against the hole count H of the ground truth.

    Parameters
    ----------
    rows : list of dict, or dict of str to list of dict
        One row per hole-count bin: ``{"H": "0" | "1" | "2" | ">=3", "gt_instances": N,
        "O-BIoU": float, "O-POLIS": float (px), ...}``; other keys are ignored. Bins are
        drawn in the order 0, 1, 2, >=3 (other labels after them). A dict ``{method: rows}``
        draws one labelled curve per method (the bins of the first method on the axis).
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        Two panels; with one method each point is annotated with its number of instances N.

    Examples
    --------
    >>> rows = [{"H": "0", "gt_instances": 90, "O-BIoU": 0.3, "O-POLIS": 4.0}]
    >>> [text.get_text() for text in simple_to_complex_figure(rows).axes[0].texts]
    ['N=90']
    >>> figure = simple_to_complex_figure({"A": rows, "B": rows})
    >>> [line.get_label() for line in figure.axes[0].lines]
    ['A', 'B']
    """
    methods = rows if isinstance(rows, dict) else {"": rows}
    order = {label: index for index, label in enumerate(_HOLE_BINS)}
    methods = {name: sorted(r, key=lambda row: order.get(str(row["H"]), len(order))) for name, r in methods.items()}
    bins = [str(row["H"]) for row in next(iter(methods.values()), [])]
    figure, panels = _new_figure(2, (10.0, 4.2), suptitle=title)
    positions = np.arange(len(bins))
    for axes, key in zip(panels, _SIMPLE_TO_COMPLEX_PANELS):
        label = metric(key).label
        axes.set(xlabel="Ground-truth hole count H", ylabel=label, title=f"{label} by H")
        axes.set_xticks(positions, [_bin_label(b) for b in bins])
        drawn = 0
        for name, method_rows in methods.items():
            by_bin = {str(row["H"]): row for row in method_rows}
            values = _floats([by_bin.get(b, {}).get(key, math.nan) for b in bins])
            keep = np.isfinite(values)
            if not keep.any():
                continue
            axes.plot(positions[keep], values[keep], marker="o", label=name or None)
            drawn += 1
            if len(methods) == 1:
                for position, value, b in zip(positions[keep], values[keep], np.array(bins, dtype=object)[keep]):
                    axes.annotate(f"N={by_bin[b].get('gt_instances', '?')}", (position, value),
                                  textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
        if not drawn:
            _no_data(axes)
            continue
        if len(methods) > 1:
            axes.legend(fontsize=7)
        axes.margins(y=0.15)
    return figure


def plot_wrong_topo(series, path, *, title=_WRONG_TOPO_TITLE, overwrite=False, protect=(), methods=None):
    """Write :func:`wrong_topo_figure` as a PNG file and return its path."""
    return save_png(wrong_topo_figure(series, title=title, methods=methods), path, overwrite=overwrite,
                    protect=protect)


def wrong_topo_figure(series, *, title=_WRONG_TOPO_TITLE, methods=None):
    """WrongTopo rate against the threshold τ of three geometry filters (the paper's Figure 3).

    Parameters
    ----------
    series : dict
        ``{"IoU": [...], "E-BIoU": [...], "E-POLIS": [...]}``, each a list of
        ``{"tau": τ, "pairs": N, "WrongTopo": rate}``; the E-POLIS τ is in px. A missing
        filter gives a "no data" panel.
    title : str
        Figure title.
    methods : dict, optional
        ``{method: series}`` instead of ``series`` (pass ``series=None``): one labelled
        curve per method.

    Returns
    -------
    matplotlib.figure.Figure
        Three panels. Marker area is proportional to the number of pairs N (shared
        scale over the panels and methods, at least 4 pt² so that small N stay visible);
        with one method each point is annotated with N.

    Examples
    --------
    >>> figure = wrong_topo_figure({"IoU": [{"tau": 0.5, "pairs": 10, "WrongTopo": 0.9}]})
    >>> [[text.get_text() for text in axes.texts] for axes in figure.axes]
    [['N=10'], ['no data'], ['no data']]
    >>> figure = wrong_topo_figure(None, methods={"A": {"IoU": []}, "B": {"IoU": [{"tau": 0.5, "pairs": 1,
    ...                                                                          "WrongTopo": 1.0}]}})
    >>> [line.get_label() for line in figure.axes[0].lines]
    ['B']
    """
    methods = {"": series} if methods is None else methods
    known = [key for key, _ in _WRONG_TOPO_FILTERS]
    unknown = {key for one in methods.values() for key in one} - set(known)
    if unknown:
        raise InvalidParameterError(f"Expected WrongTopo series among {known} but got {sorted(unknown)}")
    largest = max([float(point["pairs"]) for one in methods.values() for points in one.values()
                   for point in points] + [1.0])
    figure, panels = _new_figure(3, (13.5, 4.2), suptitle=title)
    for axes, (key, x_label) in zip(panels, _WRONG_TOPO_FILTERS):
        sign = "≥" if metric(key).higher_is_better else "≤"
        axes.set(xlabel=x_label, ylabel="WrongTopo (share of pairs)", title=f"{key} {sign} τ", ylim=(0.0, 1.05))
        drawn = 0
        for name, one in methods.items():
            points = sorted(one.get(key, []), key=lambda point: point["tau"])
            tau = _floats([point["tau"] for point in points])
            rate = _floats([point["WrongTopo"] for point in points])
            pairs = _floats([point["pairs"] for point in points])
            keep = np.isfinite(tau) & np.isfinite(rate)
            if not keep.any():
                continue
            drawn += 1
            sizes = np.maximum(_MAX_MARKER_PT2 * pairs[keep] / largest, _MIN_MARKER_PT2)
            (line,) = axes.plot(tau[keep], rate[keep], linewidth=1.0, label=name or None)
            axes.scatter(tau[keep], rate[keep], s=sizes, alpha=0.7, zorder=3, color=line.get_color())
            if len(methods) == 1:
                for x, y, n, size in zip(tau[keep], rate[keep], pairs[keep], sizes):
                    _label_point(axes, f"N={int(n)}", x, y, size)
        if not drawn:
            _no_data(axes)
        elif len(methods) > 1:
            axes.legend(fontsize=7)
    return figure


def _label_point(axes, text, x, y, marker_pt2):
    """Write ``text`` beside the marker at (x, y), clear of the marker.

    Above the point in the lower half of the 0–1 axis and below it in the upper half, so
    the label never lands on the tick labels under the axis or on the panel title.
    """
    clearance = math.sqrt(marker_pt2 / math.pi) + 3.0  # marker radius in points, and a gap
    above = y < 0.5
    axes.annotate(text, (x, y), textcoords="offset points", xytext=(0, clearance if above else -clearance),
                  ha="center", va="bottom" if above else "top", fontsize=7)


def plot_sweep(rows, x_key, y_keys, path, title, *, x_label=None, y_label="Metric value",
               overwrite=False, protect=()):
    """Write :func:`sweep_figure` as a PNG file and return its path."""
    figure = sweep_figure(rows, x_key, y_keys, title, x_label=x_label, y_label=y_label)
    return save_png(figure, path, overwrite=overwrite, protect=protect)


def sweep_figure(rows, x_key, y_keys, title, *, x_label=None, y_label="Metric value"):
    """Metrics against a swept parameter (minimum hole area, ring-match threshold, ...).

    Parameters
    ----------
    rows : list of dict
        One row per parameter value, holding ``x_key`` and the ``y_keys``.
    x_key : str
        The swept parameter; a name ending in ``_px2`` or ``_px`` gets that unit on the axis.
    y_keys : sequence of str
        Metrics drawn as one line each.
    title : str
        Figure title.
    x_label : str, optional
        Axis label replacing the one made from ``x_key``.
    y_label : str
        Label of the metric axis.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> figure = sweep_figure([], "ring_match_threshold", ["Hole-F1"], "Ring-match threshold")
    >>> [text.get_text() for text in figure.axes[0].texts], figure.axes[0].get_xlabel()
    (['no data'], 'ring match threshold')
    """
    rows = [row for row in rows if _is_finite(row.get(x_key))]
    rows.sort(key=lambda row: float(row[x_key]))
    figure, (axes,) = _new_figure(1, (6.5, 4.5))
    x = _floats([row[x_key] for row in rows])
    drawn = 0
    for key in y_keys:
        y = _floats([row.get(key, math.nan) for row in rows])
        keep = np.isfinite(y)
        if keep.any():
            axes.plot(x[keep], y[keep], marker="o", label=key)
            drawn += 1
    axes.set(xlabel=x_label or _axis_label(x_key), ylabel=y_label, title=title)
    if drawn:
        axes.legend()
    else:
        _no_data(axes)
    return figure


def _new_figure(columns, size_in, *, suptitle=None):
    """A figure of ``columns`` panels in a row, on an Agg canvas, with fixed margins.

    The margins are set in inches (:data:`_MARGINS_IN`) rather than found by a layout
    engine, which would measure every text once more per draw (half of the drawing time):
    they hold tick labels of up to five characters, the axis labels and a title
    per panel, and a figure title above them when ``suptitle`` is given.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingDependencyError(
            f"Expected matplotlib to draw the evaluation plots but it cannot be imported ({exc}); "
            "install it (pip install matplotlib, or apt-get install python3-matplotlib)"
        ) from exc
    width_in, height_in = size_in
    top_in = _MARGINS_IN["top"] + (_MARGINS_IN["suptitle"] if suptitle is not None else 0.0)
    panel_in = (width_in - _MARGINS_IN["left"] - _MARGINS_IN["right"]
                - (columns - 1) * _MARGINS_IN["between"]) / columns
    figure = Figure(figsize=size_in, dpi=120)
    FigureCanvasAgg(figure)
    panels = list(figure.subplots(1, columns, squeeze=False)[0])
    figure.subplots_adjust(left=_MARGINS_IN["left"] / width_in, right=1.0 - _MARGINS_IN["right"] / width_in,
                           bottom=_MARGINS_IN["bottom"] / height_in, top=1.0 - top_in / height_in,
                           wspace=_MARGINS_IN["between"] / panel_in)
    if suptitle is not None:
        figure.suptitle(suptitle, y=1.0 - _MARGINS_IN["suptitle_gap"] / height_in, va="top")
    return figure, panels


def save_png(figure, path, *, overwrite=False, protect=()):
    """Write a figure as a PNG file (:func:`png_bytes`) through :func:`polytopo.core.atomic_output.atomic_output`.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        A figure made by one of the ``*_figure`` functions (Agg canvas attached).
    path : str or Path
        The PNG file.
    overwrite : bool
        Replace an existing file.
    protect : iterable of str or Path
        Input paths that must not be written.

    Returns
    -------
    Path
        The written file.
    """
    return write_png(png_bytes(figure), path, overwrite=overwrite, protect=protect)


def write_png(data, path, *, overwrite=False, protect=()):
    """Write PNG bytes (:func:`png_bytes`) to ``path`` as :func:`save_png` does; returns the path."""
    with atomic_output(path, overwrite=overwrite, protect=protect) as temporary:
        temporary.write_bytes(data)
    return Path(path)


def png_bytes(figure):
    """A figure drawn and encoded as PNG, as bytes.

    The figure is drawn once on its Agg canvas and the canvas encoded as PNG with the
    DPI and metadata ``savefig`` writes, giving the same bytes as
    ``figure.savefig(path, format="png")`` under Matplotlib's default settings.
    """
    from matplotlib.image import imsave

    figure.canvas.draw()
    encoded = io.BytesIO()
    imsave(encoded, figure.canvas.buffer_rgba(), format="png", origin="upper", dpi=figure.dpi)
    return encoded.getvalue()


def _no_data(axes):
    axes.text(0.5, 0.5, "no data", transform=axes.transAxes, ha="center", va="center", fontsize=14, color="0.4")


def _floats(values):
    """Values as a float array, None as NaN."""
    return np.array([math.nan if value is None else float(value) for value in np.ravel(values)], dtype=np.float64)


def _is_finite(value):
    return value is not None and math.isfinite(float(value))


def _bin_label(hole_count):
    """Tick label of a hole-count bin: "H=2", "H≥3"."""
    text = str(hole_count)
    return f"H≥{text[2:]}" if text.startswith(">=") else f"H={text}"


def _axis_label(key):
    for suffix, unit in _UNIT_SUFFIXES:
        if key.endswith(suffix):
            return f"{key[: -len(suffix)].replace('_', ' ')} ({unit})"
    return key.replace("_", " ")


PLOTTED_ENTRIES = ("pr_curve", "simple_to_complex", "wrong_topo", "min_hole_area_sweep", "ring_threshold_sweep")
"""The entries of a summary that its plots draw (the sweeps only when they ran)."""


def plot_pngs(plotted):
    """Every plot of an evaluation, drawn and encoded: output name → (file name, PNG bytes).

    ``plotted`` holds the summary's :data:`PLOTTED_ENTRIES` (a whole summary works too).
    Runs wherever it is called: in this process, or on a worker of a cluster run, or in a
    :mod:`.plot_process` child, while the other outputs are written.
    """
    curve = plotted["pr_curve"]
    figures = {
        "precision_recall": precision_recall_figure(
            {f"IoU {curve['iou_threshold']:g}": (curve["precision"], curve["recall"])}),
        "simple_to_complex": simple_to_complex_figure(plotted["simple_to_complex"]),
        "wrong_topo": wrong_topo_figure(plotted["wrong_topo"]),
    }
    for key, x_key, title in (("min_hole_area_sweep", "min_hole_area_px2", "Minimum hole area A_min (px²)"),
                              ("ring_threshold_sweep", "ring_match_threshold", "Ring match threshold γ")):
        if key in plotted:
            figures[key] = sweep_figure(plotted[key], x_key, SWEEP_PLOTTED, title)
    return {name: (f"{name}.png", png_bytes(figure)) for name, figure in figures.items()}


def plotted_entries(summary):
    """The :data:`PLOTTED_ENTRIES` of ``summary``: all that :func:`plot_pngs` reads."""
    return {key: summary[key] for key in PLOTTED_ENTRIES if key in summary}
