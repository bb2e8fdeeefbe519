"""Plots: figures from plain data, NaN left out, "no data" panels, valid PNG files."""

import subprocess
import sys

import numpy as np
import pytest

from polytopo.core.errors import InvalidParameterError
from polytopo.evaluator.outputs.plots import (
    plot_precision_recall,
    plot_simple_to_complex,
    plot_sweep,
    plot_wrong_topo,
    precision_recall_figure,
    simple_to_complex_figure,
    sweep_figure,
    wrong_topo_figure,
)

pytest.importorskip("matplotlib", reason="matplotlib draws the plots")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
WRONG_TOPO = {
    "IoU": [
        {"tau": t, "pairs": n, "WrongTopo": r} for t, n, r in [(0.9, 20, 0.84), (0.5, 400, 0.9), (0.7, 200, 0.88)]
    ],
    "E-POLIS": [{"tau": 2.0, "pairs": 50, "WrongTopo": 0.81}, {"tau": 4.0, "pairs": 0, "WrongTopo": float("nan")}],
}


def png_size(path):
    """(width, height) from the IHDR chunk of a PNG file, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def texts(axes):
    return [text.get_text() for text in axes.texts]


def test_precision_recall_png(tmp_path):
    """Two curves give a legend and a non-trivial PNG; NaN points are left out."""
    recall = np.linspace(0, 1, 101)
    curves = {"paper": (1 - recall**2, recall), "with NaN": (np.where(recall > 0.8, np.nan, 0.5), recall)}
    (axes,) = precision_recall_figure(curves).axes
    assert [len(line.get_xdata()) for line in axes.lines] == [101, 81]
    assert [text.get_text() for text in axes.get_legend().get_texts()] == ["paper", "with NaN"]
    assert (axes.get_xlabel(), axes.get_ylabel()) == ("Recall", "Precision")
    path = plot_precision_recall(curves, tmp_path / "pr.png")
    width, height = png_size(path)
    assert width > 300 and height > 300
    assert path.stat().st_size > 10_000


def test_precision_recall_refuses_unequal_lengths(tmp_path):
    """Precision and recall must pair up; nothing is written otherwise."""
    with pytest.raises(InvalidParameterError, match="same length"):
        plot_precision_recall({"x": ([1.0, 0.5], [0.0])}, tmp_path / "pr.png")
    assert list(tmp_path.iterdir()) == []


def test_simple_to_complex_orders_bins_and_annotates_n(tmp_path):
    """Bins are drawn 0, 1, 2, >=3 with N annotated; a NaN value leaves its point out."""
    rows = [
        {"H": ">=3", "gt_instances": 12, "O-BIoU": 0.17, "O-POLIS": 11.7},
        {"H": "0", "gt_instances": 900, "O-BIoU": 0.30, "O-POLIS": 4.0},
        {"H": "1", "gt_instances": 80, "O-BIoU": 0.25, "O-POLIS": float("nan")},
        {"H": "2", "gt_instances": 30, "O-BIoU": 0.21, "O-POLIS": 8.2, "Hole-F1": 0.4},
    ]
    biou, polis = simple_to_complex_figure(rows).axes
    assert [label.get_text() for label in biou.get_xticklabels()] == ["H=0", "H=1", "H=2", "H≥3"]
    assert list(biou.lines[0].get_ydata()) == [0.30, 0.25, 0.21, 0.17]
    assert texts(biou) == ["N=900", "N=80", "N=30", "N=12"]
    assert texts(polis) == ["N=900", "N=30", "N=12"]
    assert polis.get_ylabel() == "Overall POLIS (px)"
    path = plot_simple_to_complex(rows, tmp_path / "simple_to_complex.png")
    width, height = png_size(path)
    assert width > 2 * height * 0.9
    assert path.stat().st_size > 10_000


def test_wrong_topo_panels_and_marker_sizes(tmp_path):
    """Three filter panels sorted by τ, marker area ∝ pairs; a missing filter says "no data"."""
    iou, biou, polis = wrong_topo_figure(WRONG_TOPO).axes
    assert [axes.get_title() for axes in (iou, biou, polis)] == ["IoU ≥ τ", "E-BIoU ≥ τ", "E-POLIS ≤ τ"]
    assert list(iou.lines[0].get_xdata()) == [0.5, 0.7, 0.9]
    np.testing.assert_allclose(iou.collections[0].get_sizes(), [300.0, 150.0, 15.0])
    assert texts(biou) == ["no data"]
    assert texts(polis) == ["N=50"] and "px" in polis.get_xlabel()
    path = plot_wrong_topo(WRONG_TOPO, tmp_path / "wrong_topo.png")
    width, height = png_size(path)
    assert width > 3 * height * 0.9
    assert path.stat().st_size > 10_000
    with pytest.raises(InvalidParameterError, match="Expected WrongTopo series among"):
        wrong_topo_figure({"BIoU": []})


def test_wrong_topo_n_labels_stay_off_the_tick_labels():
    """N= labels of points at a rate near 0 go above the point (below it they met the τ tick labels), of points
    near 1 below it (clear of the panel title); none overlaps a marker's centre or leaves the panel."""
    series = {"IoU": [{"tau": t, "pairs": n, "WrongTopo": r}
                      for t, n, r in [(0.5, 400, 0.0), (0.6, 90, 0.02), (0.7, 40, 0.1), (0.8, 10, 0.9), (0.9, 2, 1.0)]]}
    figure = wrong_topo_figure(series)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    ticks = [label.get_window_extent(renderer) for label in axes.get_xticklabels() if label.get_text()]
    panel = axes.get_window_extent(renderer)
    labels = [text for text in axes.texts if text.get_text().startswith("N=")]
    assert len(labels) == 5
    for text in labels:
        box = text.get_window_extent(renderer)
        assert not any(box.overlaps(tick) for tick in ticks), f"{text.get_text()} overlaps a tick label"
        assert panel.y0 <= box.y0 and box.y1 <= panel.y1, f"{text.get_text()} leaves the panel"
        centre = axes.transData.transform(text.xy)
        assert not box.contains(*centre), f"{text.get_text()} covers its point"


def test_sweep_sorts_skips_nan_and_labels_units(tmp_path):
    """A sweep is sorted by x, NaN values are left out, and the _px2 suffix becomes px²."""
    rows = [{"min_hole_area_px2": a, "Hole-F1": f, "Topo-EM": t}
            for a, f, t in [(16, 0.5, 0.3), (0, 0.4, float("nan")), (64, 0.6, 0.35), (float("nan"), 1.0, 1.0)]]
    (axes,) = sweep_figure(rows, "min_hole_area_px2", ["Hole-F1", "Topo-EM"], "Minimum hole area").axes
    assert [list(line.get_xdata()) for line in axes.lines] == [[0, 16, 64], [16, 64]]
    assert axes.get_xlabel() == "min hole area (px²)"
    path = plot_sweep(rows, "min_hole_area_px2", ["Hole-F1"], tmp_path / "sweep.png", "Minimum hole area")
    assert png_size(path)[0] > 300
    assert path.stat().st_size > 10_000


@pytest.mark.parametrize(
    ("figure", "panels"),
    [
        (lambda: precision_recall_figure({}), 1),
        (lambda: precision_recall_figure({"empty": ([], [])}), 1),
        (lambda: simple_to_complex_figure([]), 2),
        (lambda: wrong_topo_figure({}), 3),
        (lambda: sweep_figure([], "ring_match_threshold", ["Hole-F1"], "Ring threshold"), 1),
    ],
)
def test_empty_input_says_no_data(figure, panels):
    """Empty input gives panels that say "no data" instead of an error."""
    drawn = figure()
    assert [texts(axes) for axes in drawn.axes] == [["no data"]] * panels


def test_empty_input_still_writes_a_png(tmp_path):
    """The "no data" figure is written like any other."""
    assert png_size(plot_wrong_topo({}, tmp_path / "empty.png"))[0] > 300


def test_overwrite_refusal_applies_to_plots(tmp_path):
    """An existing PNG is kept unless overwrite is passed."""
    target = tmp_path / "pr.png"
    target.write_bytes(b"old")
    with pytest.raises(FileExistsError):
        plot_precision_recall({}, target)
    plot_precision_recall({}, target, overwrite=True)
    png_size(target)


def test_plots_never_import_pyplot(tmp_path):
    """Drawing uses the object API only, so a host application's pyplot state is untouched."""
    script = (
        "import sys\n"
        "from polytopo.evaluator.outputs.plots import plot_sweep\n"
        f"plot_sweep([{{'x_px': 1, 'y': 2}}], 'x_px', ['y'], {str(tmp_path / 's.png')!r}, 'Sweep')\n"
        "print('matplotlib.pyplot' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def _extent_inside(inner, outer, slack_px=0.5):
    return (inner.x0 >= outer.x0 - slack_px and inner.y0 >= outer.y0 - slack_px
            and inner.x1 <= outer.x1 + slack_px and inner.y1 <= outer.y1 + slack_px)


@pytest.mark.parametrize(
    "figure",
    [
        lambda: precision_recall_figure({"IoU 0.5": (np.linspace(1, 0.2, 50), np.linspace(0, 1, 50))}),
        lambda: simple_to_complex_figure([
            {"H": h, "gt_instances": n, "O-BIoU": b, "O-POLIS": p}
            for h, n, b, p in [("0", 8261, 0.4963, 1.07), ("1", 171, 0.4585, 233.4), ("2", 43, 0.4647, 118.9),
                               (">=3", 27, 0.5097, 1.1)]]),
        lambda: simple_to_complex_figure({name: [{"H": "0", "gt_instances": 5, "O-BIoU": 0.3, "O-POLIS": 4.0}]
                                          for name in ("method A", "method B")}),
        lambda: wrong_topo_figure(WRONG_TOPO),
        lambda: wrong_topo_figure(None, methods={"A": WRONG_TOPO, "B": WRONG_TOPO}),
        lambda: sweep_figure([{"min_hole_area_px2": a, "Hole-F1": 0.37 + a / 4000} for a in (0, 16, 256, 1024)],
                             "min_hole_area_px2", ["Hole-F1"], "Minimum hole area A_min (px²)"),
        lambda: wrong_topo_figure({}),
    ],
)
def test_fixed_margins_hold_every_text(figure):
    """With the fixed margins every panel's labels, ticks and title lie inside the figure,
    panels do not overlap one another, and the figure title overlaps no panel."""
    drawn = figure()
    drawn.canvas.draw()
    renderer = drawn.canvas.get_renderer()
    canvas_box = drawn.bbox
    boxes = [axes.get_tightbbox(renderer) for axes in drawn.axes]
    for index, box in enumerate(boxes):
        assert _extent_inside(box, canvas_box), f"panel {index} extends to {box.extents}, figure {canvas_box.extents}"
    for left, right in zip(boxes, boxes[1:]):
        assert left.x1 < right.x0, f"neighbouring panels overlap: {left.extents} and {right.extents}"
    title = drawn._suptitle
    if title is not None:
        title_box = title.get_window_extent(renderer)
        assert _extent_inside(title_box, canvas_box)
        assert all(title_box.y0 > box.y1 for box in boxes), "the figure title overlaps a panel"
