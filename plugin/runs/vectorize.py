"""Vectorize a QGIS raster layer with an ONNX model: :mod:`polytopo.models` does the work.

The raster is read by GDAL from the layer's source, so any raster QGIS opens through its
``gdal`` provider works (files, ``/vsizip/``, VRT); web and database rasters must be
exported to a file first. The output is a polygon layer with ``class_id``,
``class_name`` and ``score`` fields, in the raster's CRS; a GeoPackage output also
carries the run's provenance (model, card, provider used) in its layer metadata, written
into the finished file before it moves into place. The rules of
:mod:`polytopo.core.output_safety` apply (never an input, never replaced without
``overwrite``, read-only folder and full disk reported before the inference).
Safe to run in a worker thread.
"""

import contextlib
import dataclasses
import datetime
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import shapely
from qgis.core import Qgis, QgsLayerMetadata, QgsProviderRegistry, QgsRaster, QgsRectangle

from ...version import __version__
from ...core.geopackage_publish import check_layer_names
from ...core.output_safety import (
    OutputWriteError,
    UnsafeOutputError,
    check_file_output,
    probe_folder,
    write_failure,
)
from ...models import (
    InferenceCanceled,
    MemoryBudgetError,
    ModelCardError,
    ModelFileError,
    ModelsError,
    OutputError,
    ProviderError,
    RasterError,
    RunParams,
    SessionParams,
    load_model,
    run_to_file,
)
from ...models.errors import VectorInputError
from ...models.work_estimate import DEFAULT_MAX_PIXELS
from ...models.pipeline import decoding_summary, decoding_values
from ...models.session import PROVIDER_CHOICES
from ..errors import LayerInputError, ModelInputError, OutputExistsError, RunCanceled, RunFailedError, RunParameterError
from .layer_reading import read_polygon_features
from .output_check import REPLACE_OPTION
from .feedback import RunSteps

__all__ = ["vectorize_layer", "check_raster_crs", "layer_source", "raster_source_path", "resolve_bands", "resolve_model", "OUTPUT_SUFFIXES",
           "SCORE_FIELD", "VectorizationRun"]

#: File types the vectorizer writes.
OUTPUT_SUFFIXES = (".gpkg", ".geojson")
#: The output field holding each polygon's confidence (one of ``polytopo.models.writer.FIELDS``).
SCORE_FIELD = "score"


@dataclass(frozen=True)
class VectorizationRun:
    """The result of vectorizing a QGIS raster layer with an ONNX model.

    Attributes
    ----------
    path : pathlib.Path
        The written file (``.gpkg`` or ``.geojson``).
    source : str
        The QGIS/OGR source of the polygon layer in it (:func:`layer_source`).
    model : str
        The ONNX model file that ran.
    card : dict
        The model's card as JSON-ready values (the fields of
        :class:`polytopo.models.ModelCard`), unchanged by the run's parameters.
    decoding : dict
        What the run decoded with (:func:`polytopo.models.pipeline.decoding_values`):
        ``threshold`` (probability 0–1, a list of per-class ones, or None for a family
        without a segmentation threshold), ``min_area_px`` and ``min_hole_area_px``
        (square model pixels).
    provider_used : str or None
        The onnxruntime execution provider that ran, e.g. ``CPUExecutionProvider``;
        None when the run reports no session.
    provider_report : str or None
        One line: the provider that ran, the one requested and the reason of any fallback.
    features : int
        Polygons written.
    provenance : dict
        JSON-ready record of the run, also written into a GeoPackage's layer metadata:
        plugin and QGIS versions, date (UTC), raster name, source and CRS, model, card,
        provider, run parameters (tile size and overlap in model pixels, batch, extent in
        raster CRS units, whether an area of interest was used, ``decoding``), tiles run
        and total, features, run time in seconds.
    messages : tuple of str
        Warnings and notes of the run, each once, in the order they came.
    polygons : list of polytopo.models.pipeline.MapPolygon or None
        With ``keep_polygons``: the written polygons in file order (``geometry`` in map
        units of the raster's CRS, ``score`` as written to :data:`SCORE_FIELD`); None without.
    """

    path: Path
    source: str
    model: str
    card: dict
    decoding: dict
    provider_used: object
    provider_report: object
    features: int
    provenance: dict
    messages: tuple
    polygons: object = None


def raster_source_path(raster_layer):
    """The GDAL dataset name of a raster layer (file path, ``/vsi...`` path or VRT).

    Raises
    ------
    LayerInputError
        The layer is invalid or not read by QGIS's ``gdal`` provider.
    """
    if raster_layer is None or not raster_layer.isValid():
        raise LayerInputError(f"Expected a valid raster layer but got {raster_layer!r}; check that its file exists")
    if raster_layer.providerType() != "gdal":
        raise LayerInputError(
            f"Expected a raster layer read from a file (GDAL provider) but {raster_layer.name()!r} uses the "
            f"{raster_layer.providerType()!r} provider; save it as a GeoTIFF (Export › Save As) first"
        )
    return raster_layer.source()


def vectorize_layer(raster_layer, model, *, provider="auto", extent=None, aoi_layer=None, tile_px=None,
                    overlap_px=None, batch=None, bands=None, threshold=None, min_area_px=None, min_hole_area_px=None,
                    output_path, feedback=None, overwrite=False, transform_context=None, keep_polygons=False,
                    max_pixels=DEFAULT_MAX_PIXELS):
    """Run an ONNX model over ``raster_layer`` and write its polygons (with holes) to ``output_path``.

    Parameters
    ----------
    raster_layer : QgsRasterLayer
        A raster read by GDAL with at least as many bands as the model has input
        channels (the card's ``polytopo.bands`` chooses them).
    model : str or Path
        The ONNX model file (with a PolyTopo or Deepness model card), or the name of a
        model of the bundled zoo (:func:`polytopo.models.zoo.zoo_models`).
    provider : {"auto", "cuda", "cpu"}
        onnxruntime execution provider; ``auto`` takes a GPU when one is usable.
    extent : QgsRectangle or sequence of 4 float, optional
        ``(xmin, ymin, xmax, ymax)`` to process, in the raster's CRS.
    aoi_layer : QgsVectorLayer, optional
        Polygons outside of which pixels are treated as nodata (reprojected to the
        raster's CRS); the processed extent shrinks to their bounding box.
    tile_px, overlap_px : int, optional
        Tile edge and overlap in model pixels (default: the model card's).
    batch : int, optional
        Tiles per inference call (default 1).
    threshold : float, optional
        Segmentation threshold in [0, 1] (default: the card's ``seg_thresh``); only for
        the families of :data:`polytopo.models.decoders.families.SEG_THRESHOLD_FAMILIES`.
    min_area_px, min_hole_area_px : float, optional
        Smallest polygon and smallest hole kept, square model pixels (default: the card's
        ``polytopo.min_area_px`` and ``polytopo.min_hole_area_px``). The values used are
        written to the run log and to the provenance.
    bands : sequence of int, optional
        1-based raster band feeding each model input channel, in channel order (default:
        the card's ``polytopo.bands``, else bands 1…n); see :func:`resolve_bands`. The
        mapping used is written to the run log.
    output_path : str or Path
        ``.gpkg`` or ``.geojson`` to write (atomically).
    feedback : object, optional
        See :mod:`polytopo.plugin.runs.feedback`; a cancel is checked before every batch.
    overwrite : bool
        Replace an existing output file.
    transform_context : QgsCoordinateTransformContext, optional
        For reprojecting the AOI layer; defaults to the current project's.
    keep_polygons : bool
        Also return the written polygons (``polygons``), to evaluate them without
        reading the file back.
    max_pixels : int or None
        Refuse, before any tile is read, a processed area of more model-grid pixels, with
        the estimate of the work (:mod:`polytopo.models.work_estimate`); None for no limit.

    Returns
    -------
    VectorizationRun
        With ``polygons`` only when ``keep_polygons``.

    Raises
    ------
    ModelInputError
        The model file is missing, is not an ONNX model, or its card is missing a key; or
        no bundled model has that name.
    LayerInputError
        The raster is not a GDAL file, has too few bands or a data type the model cannot
        use, ``bands`` does not give one band per model channel, or the AOI layer is not
        a polygon layer.
    RunParameterError
        Unknown provider, CUDA requested but not usable, an extent outside the raster,
        a threshold or minimum area out of range, or an output that is not ``.gpkg``/``.geojson``.
    OutputExistsError
        ``output_path`` exists and ``overwrite`` is False.
    RunCanceled
        Canceled; no output was written.
    RunFailedError
        The model produced unusable output, memory does not suffice, or writing failed.
    """
    steps = RunSteps(feedback, "vectorization")
    output_path = Path(output_path)
    if output_path.suffix.lower() not in OUTPUT_SUFFIXES:
        raise RunParameterError(f"Expected an output file ending in {list(OUTPUT_SUFFIXES)} but got {output_path}; "
                                "choose a GeoPackage")
    if provider not in PROVIDER_CHOICES:
        raise RunParameterError(f"Expected provider to be one of {list(PROVIDER_CHOICES)} but got {provider!r}")
    try:
        decoding = RunParams(threshold=threshold, min_area_px=min_area_px, min_hole_area_px=min_hole_area_px,
                             max_pixels=max_pixels)
    except ModelCardError as exc:
        raise RunParameterError(str(exc)) from exc
    raster_path = raster_source_path(raster_layer)
    check_raster_crs(raster_layer)
    inputs = [raster_path, str(model)] + ([aoi_layer.source()] if aoi_layer is not None else [])
    _check_output(output_path, inputs, overwrite)
    steps.progress(0)
    with _as_plugin_errors(steps):
        model = resolve_model(model)
        loaded = load_model(model, SessionParams(provider=provider))
        steps.info(f"Model {model.name}: family {loaded.card.family}, provider "
                   f"{loaded.session.report.describe()}")
        bands = resolve_bands(bands, loaded.card.bands, loaded.io.channels, raster_layer.bandCount())
        _log_bands(steps, raster_layer, bands)
        params = dataclasses.replace(decoding, tile_size_px=tile_px, overlap_px=overlap_px, batch_size=batch or 1,
                                     bands=bands, extent=_extent_tuple(extent),
                                     aoi=_aoi(aoi_layer, raster_layer, transform_context, steps))
        run_card = params.card_for(loaded.card)
        steps.info(f"Decoding: {decoding_summary(run_card)}")
        card, decoding_used = _plain(dataclasses.asdict(loaded.card)), decoding_values(run_card)
        kept = [] if keep_polygons else None
        provenance = None  # set once the file is complete

        def finish(temporary, report):
            """Write the run's provenance into the finished file, before it moves into place."""
            nonlocal provenance
            provenance = _provenance(raster_layer, str(model), card, decoding_used, params, report)
            if output_path.suffix.lower() == ".gpkg":
                _save_metadata(temporary, provenance)

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = run_to_file(loaded, raster_path, output_path, params,
                                 progress=lambda done, total: _progress(feedback, done, total),
                                 cancel=steps.cancel,
                                 overwrite=overwrite, inputs=inputs[1:], finish=finish,
                                 on_polygon=kept.append if kept is not None else None)
    messages = tuple(dict.fromkeys([str(warning.message) for warning in caught] + list(report.messages)))
    for message in messages:
        steps.warn(message)
    steps.progress(100)
    provider_used, provider_report = _provider_lines(report)
    return VectorizationRun(
        path=output_path, source=layer_source(output_path), model=str(model), card=card, decoding=decoding_used,
        provider_used=provider_used, provider_report=provider_report, features=report.polygon_count,
        provenance=provenance, messages=messages, polygons=kept)


def check_raster_crs(raster_layer):
    """Refuse a raster without a coordinate reference system, before any work.

    Its polygons would carry no CRS: QGIS places them nowhere and an evaluation against
    a reference layer cannot reproject them.

    Raises
    ------
    LayerInputError
        The layer's CRS is not valid.
    """
    if not raster_layer.crs().isValid():
        raise LayerInputError(
            f"Expected a raster with a coordinate reference system but {raster_layer.name()!r} has none; assign "
            "one (Layer Properties › Source › Assigned coordinate reference system, or gdal_edit.py -a_srs EPSG:…) "
            "so that the polygons have a place on the map and can be scored")


def layer_source(output_path):
    """The QGIS/OGR source of the polygon layer a vectorization writes to ``output_path``.

    A GeoPackage may hold other layers (the polygons are added to an existing one), so
    its layer is named: the file's stem, as :class:`polytopo.models.writer.VectorWriter`
    names it.

    Examples
    --------
    >>> layer_source(Path("/data/city.gpkg")), layer_source(Path("/data/city.geojson"))
    ('/data/city.gpkg|layername=city', '/data/city.geojson')
    """
    output_path = Path(output_path)
    if output_path.suffix.lower() == ".gpkg":
        return f"{output_path}|layername={output_path.stem}"
    return str(output_path)


def _check_output(output_path, inputs, overwrite):
    """Apply the output-safety rules before any work.

    Never an input, never replaced without ``overwrite``, never a user's layer of an
    existing GeoPackage (the polygons are added to it), a writable folder with room
    (stale temporaries of killed runs removed).
    """
    try:
        check_file_output(output_path, inputs=inputs, overwrite=overwrite,
                          option=REPLACE_OPTION)
        check_layer_names(output_path, [output_path.stem])
        output_path.parent.mkdir(parents=True, exist_ok=True)
        probe_folder(output_path.parent)
    except UnsafeOutputError as exc:
        raise RunParameterError(str(exc)) from exc
    except FileExistsError as exc:
        raise OutputExistsError(str(exc)) from exc
    except OutputWriteError as exc:
        raise RunFailedError(str(exc)) from exc
    except OSError as exc:
        raise RunFailedError(str(write_failure(exc, output_path))) from exc


def resolve_bands(bands, card_bands, channels, band_count):
    """The raster band feeding each model channel: the choice, else the card's, else 1…channels.

    Parameters
    ----------
    bands : sequence of int or None
        The user's choice, one 1-based band per model channel; None or empty for the default.
    card_bands : sequence of int or None
        The card's ``polytopo.bands``.
    channels : int
        Input channels of the model.
    band_count : int
        Bands of the raster.

    Returns
    -------
    tuple of int

    Raises
    ------
    LayerInputError
        Not one band per channel, or a band the raster does not have.

    Examples
    --------
    >>> resolve_bands(None, None, 1, 3)
    (1,)
    >>> resolve_bands([3, 2, 1], (1, 2, 3), 3, 4)
    (3, 2, 1)
    """
    chosen = tuple(int(band) for band in bands) if bands else tuple(card_bands or range(1, channels + 1))
    if len(chosen) != channels:
        raise LayerInputError(f"Expected one raster band for each of the model's {channels} input channels but got "
                              f"{len(chosen)} ({list(chosen)}); choose {channels} band(s) under Bands")
    missing = [band for band in chosen if not 1 <= band <= band_count]
    if missing:
        raise LayerInputError(
            f"Expected the bands {list(chosen)} for the model's {channels} input channel(s) but the raster has "
            f"{band_count} band(s), so band(s) {missing} do not exist; choose existing bands under Bands or use "
            "another raster")
    return chosen


def _log_bands(steps, raster_layer, bands):
    names = [raster_layer.bandName(band) for band in bands]
    steps.info("Bands: " + ", ".join(f"raster band {band} ({name}) → model channel {channel}"
                                     for channel, (band, name) in enumerate(zip(bands, names), start=1)))
    provider = raster_layer.dataProvider()
    unread = [band for band in range(1, raster_layer.bandCount() + 1)
              if band not in bands and provider.colorInterpretation(band) != QgsRaster.AlphaBand]
    if unread:
        steps.warn(f"The raster has {raster_layer.bandCount()} bands and the model reads {len(bands)} "
                   f"(band(s) {', '.join(map(str, bands))}); choose other bands under Bands if these are not "
                   "the ones the model was trained on")


def resolve_model(model):
    """The ONNX file of ``model``: an existing file, or the file of the zoo model of that name.

    Zoo models are looked up beside the zoo index, then in the QGIS profile's model folder
    (:func:`~polytopo.plugin.runs.model_folder.profile_model_dir`).

    Raises
    ------
    ModelInputError
        Neither an existing file nor the name of a zoo model, or a model of the pack that is not installed.
    """
    path = Path(model)
    if path.is_file():
        return path
    if path.suffix.lower() == ".onnx" or len(path.parts) > 1:
        raise ModelInputError(f"Expected an ONNX model file but {path} does not exist; choose the model's .onnx file")
    from ...models.zoo import ZooError, zoo_model
    from .model_folder import profile_model_dir

    folder = profile_model_dir()
    try:
        found = zoo_model(str(model), folder)
    except ZooError as exc:
        raise ModelInputError(f"Expected an ONNX model file or the name of a bundled model but got {model!r}: "
                              f"{exc}") from exc
    if not found.installed:
        raise ModelInputError(
            f"Expected the model {found.name} installed but it is {found.status} (not in {folder}); install it "
            f"with the PolyTopo dock's Install button or 'python -m polytopo.models zoo install {found.name} "
            f"--dir {folder}'")
    return found.path


_ERROR_MAPPING = (
    (InferenceCanceled, RunCanceled),
    ((ModelFileError, ModelCardError), ModelInputError),
    ((RasterError, VectorInputError), LayerInputError),
    (ProviderError, RunParameterError),
    ((MemoryBudgetError, OutputError), RunFailedError),
    (ModelsError, RunFailedError),
)


@contextlib.contextmanager
def _as_plugin_errors(steps):
    """Re-raise errors of :mod:`polytopo.models` as the plugin errors of :data:`_ERROR_MAPPING`."""
    try:
        yield
    except ModelsError as exc:
        target = next(plugin_error for models_error, plugin_error in _ERROR_MAPPING if isinstance(exc, models_error))
        raise (steps.canceled() if target is RunCanceled else target(str(exc))) from exc


def _progress(feedback, done, total):
    if feedback is not None and total:
        set_text = getattr(feedback, "setProgressText", None)
        if set_text is not None:
            set_text(f"tile {done}/{total}")
        feedback.setProgress(100.0 * done / total)


def _extent_tuple(extent):
    if extent is None:
        return None
    if isinstance(extent, QgsRectangle):
        if extent.isNull() or extent.isEmpty():
            return None
        return (extent.xMinimum(), extent.yMinimum(), extent.xMaximum(), extent.yMaximum())
    values = tuple(float(v) for v in extent)
    if len(values) != 4 or not (values[0] < values[2] and values[1] < values[3]):
        raise RunParameterError(f"Expected an extent (xmin, ymin, xmax, ymax) with min < max but got {extent!r}")
    return values


def _aoi(aoi_layer, raster_layer, transform_context, steps):
    if aoi_layer is None:
        return None
    features = read_polygon_features(aoi_layer, role="area of interest", target_crs=raster_layer.crs(),
                                     transform_context=transform_context, steps=steps)
    present = [geometry for geometry in features.geometries if geometry is not None]
    if not present:
        raise LayerInputError(f"Expected polygons in the area-of-interest layer {features.name!r} but it has none")
    return shapely.union_all(shapely.make_valid(present))


def _plain(value):
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _provider_lines(report):
    """``(provider_used, provider_report)`` of a run report (both None without a session report)."""
    if report.provider is None:
        return None, None
    return report.provider.primary, report.provider.describe()


def _provenance(raster_layer, model, card, decoding, params, report):
    provider_used, provider_report = _provider_lines(report)
    return {
        "plugin": "PolyTopo",
        "plugin_version": __version__,
        "qgis_version": Qgis.QGIS_VERSION,
        "created_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "raster": {"name": raster_layer.name(), "source": raster_layer.publicSource(),
                   "crs": raster_layer.crs().authid()},
        "model": model,
        "model_file": os.path.basename(model),
        "card": card,
        "provider_used": provider_used,
        "provider_report": provider_report,
        "run_parameters": {"tile_size_px": report.tiling.tile_size_px, "overlap_px": report.tiling.overlap_px,
                           "batch_size": report.tiling.batch_size, "extent": params.extent,
                           "aoi": params.aoi is not None, **decoding},
        "tiles_run": report.tiles_run,
        "tiles_total": report.tiles_total,
        "features": report.polygon_count,
        "seconds": round(report.total_seconds, 3),
    }


def _save_metadata(path, provenance):
    from osgeo import ogr

    dataset = ogr.Open(str(path))
    if dataset is None or dataset.GetLayerCount() != 1:
        raise RunFailedError(f"Expected one polygon layer in the written file {path} but cannot read it")
    layer_name = dataset.GetLayer(0).GetName()
    del dataset
    metadata = QgsLayerMetadata()
    metadata.setTitle(f"PolyTopo vectorization of {provenance['raster']['name']}")
    metadata.setType("dataset")
    metadata.setAbstract(
        f"Polygons with holes vectorized from {provenance['raster']['name']!r} with the model "
        f"{provenance['model_file']} ({provenance['card'].get('family')} family) on "
        f"{provenance['provider_used']}."
    )
    metadata.setKeywords({"PolyTopo": ["vectorization", "polygons with holes", provenance["card"].get("family")]})
    metadata.setHistory([f"{provenance['created_utc']}: vectorized by PolyTopo {provenance['plugin_version']}",
                         "provenance: " + json.dumps(provenance, sort_keys=True, default=str)])
    saved, message = QgsProviderRegistry.instance().saveLayerMetadata("ogr", f"{path}|layername={layer_name}",
                                                                      metadata)
    if not saved:
        raise RunFailedError(f"Expected to save the provenance metadata into {path} but QGIS reported: {message}")
