"""Every zoo model on the unlabelled Schönbrunn orthophoto: which courtyards come out as holes.

``python -m polytopo.training.vienna [PNG] [--model NAME=PATH ...]`` runs each bundled model (or
each named ONNX file) with the
real engine over ``imagery/vienna_schoenbrunn/44_2_op_2023_30cm.tif`` of the shared
data folder (0.3 m RGB, 1667 x 1667 px; no labels, never trained on), counts the
predicted holes of at least :data:`COURTYARD_MIN_M2` whose centroid falls in each courtyard group of
:data:`COURTYARD_GROUPS` (and those elsewhere), prints a Markdown table and writes a
picture (default ``models/vienna_schoenbrunn.png``): one panel per model, polygons
outlined in yellow, predicted holes filled in magenta. There is no reference, so no
score: the table says where holes appear, not whether they are right. A second table gives
the share of the scene the polygons cover and the three largest polygon areas (m²): a model
that takes paved squares and roads for buildings covers much of the scene with a few huge
polygons.
The panchromatic model reads band 1 (red) only, outside its 16-bit domain.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import shapely

from ..models.model import load_model
from ..models.pipeline import PreparedRun, RunParams
from ..models.raster.reading import open_raster
from ..models.session import SessionParams
from ..models.zoo import zoo_models
from .shared_data import find_shared_data

__all__ = ["COURTYARD_GROUPS", "COURTYARD_MIN_M2", "PIXEL_M", "DEFAULT_PICTURE", "RASTER", "count_holes", "coverage",
           "main", "run_models"]

RASTER = "imagery/vienna_schoenbrunn/44_2_op_2023_30cm.tif"
"""The orthophoto, relative to the shared ``data`` folder."""
COURTYARD_GROUPS = {
    "west wing (north-west block, courtyards around an inner building)": (375, 208, 834, 688),
    "east wing (east block, courtyards)": (1250, 417, 1667, 917),
    "palace (light wells of the main building)": (604, 792, 1250, 1167),
}
"""Courtyard group → (col0, row0, col1, row1) pixel box of the orthophoto, read off the image."""
DEFAULT_PICTURE = Path(__file__).resolve().parents[1] / "models" / "vienna_schoenbrunn.png"
COURTYARD_MIN_M2 = 50.0
"""Smallest hole counted as a courtyard, square metres (smaller ones are roof texture or noise)."""
PIXEL_M = 0.3


def run_models(raster, threads=2, models=None):
    """Polygons of every zoo model (or of ``models``, a dict name → ONNX path) on ``raster``, in raster pixels.

    Returns
    -------
    dict of str to list of shapely.Polygon
    """
    _dataset, info = open_raster(raster)
    gt = info.geotransform

    def to_pixels(xy):
        return np.column_stack(((xy[:, 0] - gt[0]) / gt[1], (xy[:, 1] - gt[3]) / gt[5]))

    out = {}
    models = models if models is not None else {entry.name: entry.path for entry in zoo_models()}
    for name, path in models.items():
        model = load_model(path, SessionParams(provider="cpu", intra_op_threads=threads))
        bands = (1,) if len(model.card.bands or ()) == 1 else None
        polygons = [p.geometry for p in PreparedRun(model, raster, RunParams(batch_size=2, bands=bands))]
        out[name] = [part for polygon in polygons
                           for part in shapely.get_parts(shapely.transform(polygon, to_pixels))]
    return out


def count_holes(polygons):
    """Predicted holes of at least :data:`COURTYARD_MIN_M2` per :data:`COURTYARD_GROUPS` entry, plus ``elsewhere``."""
    counts = dict.fromkeys([*COURTYARD_GROUPS, "elsewhere"], 0)
    for polygon in polygons:
        for ring in polygon.interiors:
            hole = shapely.Polygon(ring)
            if hole.area * PIXEL_M**2 < COURTYARD_MIN_M2:
                continue
            x, y = hole.centroid.coords[0]
            group = next((name for name, (c0, r0, c1, r1) in COURTYARD_GROUPS.items()
                          if c0 <= x < c1 and r0 <= y < r1), "elsewhere")
            counts[group] += 1
    return counts


def coverage(polygons, shape):
    """Share of the scene (``shape`` rows, cols) the union of ``polygons`` covers, and the 3 largest areas in m²."""
    union = shapely.union_all(np.asarray(polygons, object)) if polygons else shapely.Polygon()
    share = union.area / (shape[0] * shape[1])
    largest = sorted((p.area * PIXEL_M**2 for p in polygons), reverse=True)[:3]
    return share, largest


def _picture(raster, results, path):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot
    from matplotlib.patches import PathPatch
    from matplotlib.path import Path as MplPath
    from osgeo import gdal

    dataset = gdal.Open(str(raster))
    image = np.dstack([dataset.GetRasterBand(b).ReadAsArray() for b in (1, 2, 3)])
    columns = 2
    rows = (len(results) + columns - 1) // columns
    figure, axes = pyplot.subplots(rows, columns, figsize=(8 * columns, 8.3 * rows), squeeze=False)
    for axis in axes.flat[len(results):]:
        axis.set_axis_off()
    for axis, (name, polygons) in zip(axes.flat, results.items()):
        axis.imshow(image)
        for polygon in polygons:
            axis.plot(*polygon.exterior.xy, color="yellow", linewidth=0.6)
            for ring in polygon.interiors:
                axis.add_patch(PathPatch(MplPath(np.asarray(ring.coords)), facecolor="magenta", edgecolor="magenta",
                                         alpha=0.7))
        for c0, r0, c1, r1 in COURTYARD_GROUPS.values():
            axis.add_patch(pyplot.Rectangle((c0, r0), c1 - c0, r1 - r0, fill=False, edgecolor="cyan",
                                            linestyle="--", linewidth=1))
        holes = sum(len(p.interiors) for p in polygons)
        courtyards = sum(count_holes(polygons).values())
        axis.set_title(f"{name}: {len(polygons)} polygons, {holes} holes ({courtyards} of "
                       f"≥ {COURTYARD_MIN_M2:g} m²)", fontsize=13)
        axis.set_axis_off()
    figure.suptitle("Schönbrunn orthophoto 0.3 m (no labels): predicted holes magenta, courtyard groups cyan",
                    fontsize=11)
    figure.tight_layout()
    figure.savefig(path, dpi=42)
    pyplot.close(figure)


def _model_argument(text):
    name, sep, model_path = text.partition("=")
    if not sep or not name or not model_path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH (a label and an ONNX file) but got {text!r}")
    if not Path(model_path).is_file():
        raise argparse.ArgumentTypeError(f"no model file at {model_path!r}")
    return name, Path(model_path)


def main(argv=None):
    """Run every model, print the table, write the picture; returns 0."""
    parser = argparse.ArgumentParser(
        prog="python -m polytopo.training.vienna",
        description="Run the zoo models (or the named ONNX files) over the Schönbrunn orthophoto, print where their "
                    "holes lie and how much of the scene they cover, and draw them.")
    parser.add_argument("picture", nargs="?", type=Path, default=DEFAULT_PICTURE,
                        help="PNG to write (default: the models README's picture)")
    parser.add_argument("--model", action="append", type=_model_argument, metavar="NAME=PATH",
                        help="a model to run, labelled NAME in the tables and the picture (repeatable; default: "
                             "every zoo model)")
    args = parser.parse_args(argv)
    models = dict(args.model) if args.model else None
    path = args.picture
    raster = find_shared_data().root / RASTER
    results = run_models(raster, models=models)
    groups = [*COURTYARD_GROUPS, "elsewhere"]
    print(f"| model | polygons | holes (all) | holes ≥ {COURTYARD_MIN_M2:g} m² | " + " | ".join(groups) + " |")
    print("|---" * (4 + len(groups)) + "|")
    for name, polygons in results.items():
        counts = count_holes(polygons)
        print(f"| `{name}` | {len(polygons)} | {sum(len(p.interiors) for p in polygons)} | {sum(counts.values())} | "
              + " | ".join(str(counts[g]) for g in groups) + " |")
    _dataset, info = open_raster(raster)
    print()
    print("| model | polygons | scene covered | three largest polygons (m²) |")
    print("|---|---|---|---|")
    for name, polygons in results.items():
        share, largest = coverage(polygons, (info.height_px, info.width_px))
        print(f"| `{name}` | {len(polygons)} | {share:.1%} | " + ", ".join(f"{a:,.0f}" for a in largest) + " |")
    _picture(raster, results, path)
    print(f"picture: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
