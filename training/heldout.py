"""The held-out rasters and their reference polygons, on which the bundled models are scored.

Kampala (RGB models)
    The east third (zoom-19 tile column 309614) at each zoom level, as a VRT
    mosaic of the chips (``kampala-z19``, ``-z20``, ``-z21``; 24 of its 32
    zoom-21 tiles exist, the other 8 read as invalid). The reference is the
    label layer clipped to the footprint of the present tiles. Its only hole
    is a 0.02 m² repair sliver outside this ground, so Hole-F1 on it is
    undefined; ``kampala-z20-courtyards`` is therefore added: the zoom-20
    mosaic with a synthetic courtyard cut into every building of at least
    30 m² (:func:`.targets.carve_courtyards`, fixed seed), written as a
    GeoTIFF, with the courtyards as holes of the reference. It is synthetic
    and says so everywhere it is reported.
Atlanta (panchromatic model)
    The right third of the tile (``atlanta-east``), reference clipped to it.
Unseen places (RGB models)
    Zanzibar, Nepal, the Philippines and Nairobi (:data:`.data.UNSEEN_PLACES`), each
    whole place at zoom 19 (``zanzibar-z19``, ...): a VRT mosaic of its XYZ tiles, each
    placed by its name, with the place's labels clipped to the tiles. Split ``unseen
    place`` where a recipe neither trains on the place nor chooses anything on it.
Validation places (RGB recipes with ``validation_places``)
    Such a place, whole, at zoom 19 and 20 (``validation-nepal-z19``, ...): validation
    ground beside the Kampala patch, never trained on (:func:`place_validation`).
Rendered cities (hole-aware models)
    ``helsinki-rendered`` (or the recipe's other held-out city): the OSM buildings of the
    recipe's held-out city (:mod:`.rendered`, never trained on), its evaluation square
    (:func:`.rendered.evaluation_square`: :data:`.rendered.EVALUATION_SQUARE_M` metres from the
    corner of its frame with the most courtyard buildings), drawn by
    :mod:`polytopo.models.scene_rendering` (a synthetic rendering of real geometry,
    said wherever it is reported) and written as a GeoTIFF. A recipe that keeps its
    training cities' evaluation squares out of training (``rendered_keep_out``) is
    scored on those too, split ``unseen square``. ``CITY-rendered-squares``: every 240 m
    square of the held-out city that holds a courtyard building
    (:func:`.rendered.city_frames`), drawn side by side in one raster with
    :data:`SQUARES_GAP_PX` black pixels between them (:func:`rendered_city_squares`).
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely
from osgeo import gdal

from ..models.raster.reading import open_raster
from ..models.scene_rendering import SCENE_LABEL, RenderedScene, RenderParams, read_buildings, render_scene
from . import data
from .errors import TrainingError
from .rendered import CITIES, FRAME_M, city_frames, evaluation_square
from .targets import CourtyardParams, carve_courtyards

__all__ = ["COURTYARD_SEED", "HeldOutRaster", "SQUARES_GAP_PX", "UNSEEN_PLACE_ZOOM", "VALIDATION_ZOOMS",
           "atlanta_heldout", "kampala_heldout", "kampala_validation", "place_validation", "rendered_city_squares",
           "rendered_heldout", "unseen_places"]

COURTYARD_SEED = 7
"""Seed of the synthetic courtyards of the held-out raster."""
SQUARES_GAP_PX = 32
"""Black pixels between two squares of :func:`rendered_city_squares`."""
_ALL_SQUARES = 1000
"""More squares than any city holds: :func:`rendered_city_squares` takes them all."""
_MIN_COURTYARD_BUILDING_CM2 = 300000.0


@dataclass(frozen=True)
class HeldOutRaster:
    """One held-out raster.

    Attributes
    ----------
    key : str
        Short name used in tables and in the card.
    title : str
        Human description.
    raster : pathlib.Path
    extent : tuple of 4 float or None
        Processed extent in the raster's CRS (None: the whole raster).
    reference : numpy.ndarray of shapely.Polygon
        Reference polygons in the raster's CRS, clipped to the valid area.
    geotransform : tuple of 6 float
        The raster's geotransform: evaluation pixels are its pixels.
    gsd_cm : float
        Pixel size of the evaluation, cm.
    synthetic : bool
        True when courtyards were synthesized into the imagery and reference.
    split : str
        ``held-out`` (never used for any choice), ``unseen place`` (a whole
        place never used for training or any choice), ``unseen square`` (a
        rendered square of a city trained on, kept out of its training frames) or
        ``validation`` (used to choose the resolution and schedule, never for training).
    """

    key: str
    title: str
    raster: Path
    extent: object
    reference: np.ndarray
    geotransform: tuple
    gsd_cm: float
    synthetic: bool = False
    split: str = "held-out"


def _polygons_only(geometries, geotransform, min_area_px2=1.0):
    parts = shapely.get_parts(np.asarray(geometries, object))
    parts = parts[(shapely.get_type_id(parts) == shapely.GeometryType.POLYGON) & ~shapely.is_empty(parts)]
    area_px = shapely.area(parts) / abs(geotransform[1] * geotransform[5])
    return parts[area_px >= min_area_px2]


def _footprint(paths):
    boxes = []
    for path in paths:
        dataset = gdal.Open(str(path))
        gt = dataset.GetGeoTransform()
        x1, y0 = gt[0] + dataset.RasterXSize * gt[1], gt[3] + dataset.RasterYSize * gt[5]
        boxes.append(shapely.box(gt[0], y0, x1, gt[3]))
    return shapely.union_all(boxes)


def _write_geotiff(path, image, valid, info):
    driver = gdal.GetDriverByName("GTiff")
    bands, rows, cols = image.shape
    dataset = driver.Create(str(path), cols, rows, bands + 1, gdal.GDT_Byte, options=["COMPRESS=DEFLATE", "ALPHA=YES"])
    dataset.SetGeoTransform(info.geotransform)
    dataset.SetProjection(info.crs_wkt)
    for index in range(bands):
        dataset.GetRasterBand(index + 1).WriteArray(np.clip(np.rint(image[index]), 0, 255).astype(np.uint8))
    dataset.GetRasterBand(bands + 1).WriteArray(valid.astype(np.uint8) * 255)
    dataset.FlushCache()
    dataset = None


def _courtyard_raster(mosaic, labels, footprint, out_path):
    """Write the courtyard variant of a mosaic; return its reference polygons (map CRS), clipped to ``footprint``.

    ``footprint`` None: ``labels`` are already clipped to the tiles.
    """
    _dataset, info = open_raster(mosaic)
    sample = data.read_sample("courtyards", mosaic, labels, None, (1, 2, 3))
    params = CourtyardParams(min_building_area_px2=_MIN_COURTYARD_BUILDING_CM2 / sample.gsd_cm**2, probability=1.0)
    image, polygons, _count = carve_courtyards(sample.image, sample.valid, sample.polygons,
                                               np.random.default_rng(COURTYARD_SEED), params)
    _write_geotiff(out_path, image, sample.valid, info)
    gt = info.geotransform

    def to_map(coords):
        return np.column_stack((gt[0] + coords[:, 0] * gt[1], gt[3] + coords[:, 1] * gt[5]))

    reference = shapely.transform(polygons, to_map)
    if footprint is not None:
        reference = shapely.intersection(reference, footprint)
    return _polygons_only(reference, gt)


def kampala_heldout(shared, work_dir):
    """The Kampala held-out rasters (three zoom levels and the synthetic-courtyard variant).

    Parameters
    ----------
    shared : SharedData
    work_dir : pathlib.Path
        Mosaics and the courtyard GeoTIFF are written under ``heldout/``.

    Returns
    -------
    list of HeldOutRaster
    """
    groups = data.kampala_tiles(shared.kampala_chips)
    out = []
    for zoom in data.KAMPALA_ZOOMS:
        paths = groups[("test", zoom)]
        mosaic = data.build_kampala_mosaic(paths, Path(work_dir) / "heldout" / f"kampala_test_z{zoom}.vrt")
        _dataset, info = open_raster(mosaic)
        labels = data.read_polygons(shared.kampala_labels, info.crs_wkt)
        footprint = _footprint(paths)
        reference = _polygons_only(shapely.intersection(labels, footprint), info.geotransform)
        gsd = data.native_gsd_cm(info)
        out.append(HeldOutRaster(
            f"kampala-z{zoom}", f"Kampala, east third, zoom {zoom} ({gsd:.1f} cm), {len(paths)} tiles",
            mosaic, None, reference, info.geotransform, gsd,
        ))
        if zoom == 20:
            courtyard_path = Path(work_dir) / "heldout" / "kampala_test_z20_courtyards.tif"
            reference = _courtyard_raster(mosaic, labels, footprint, courtyard_path)
            out.append(HeldOutRaster(
                "kampala-z20-courtyards",
                f"Kampala, east third, zoom 20 ({gsd:.1f} cm), SYNTHETIC courtyards in every building >= 30 m²",
                courtyard_path, None, reference, info.geotransform, gsd, synthetic=True,
            ))
    return out


def _xyz_raster(tiles, labels_path, folder, key, title, split):
    """A :class:`HeldOutRaster` of XYZ tiles: each georeferenced, mosaicked, the labels clipped to the tiles."""
    georeferenced = [data.georeference_xyz_tile(path, tile, folder / f"{path.stem}.vrt") for tile, path in tiles]
    mosaic = data.build_kampala_mosaic(georeferenced, folder / f"{key}.vrt")
    _dataset, info = open_raster(mosaic)
    labels = data.read_polygons(labels_path, info.crs_wkt)
    reference = _polygons_only(shapely.intersection(labels, _footprint(georeferenced)), info.geotransform)
    gsd = data.native_gsd_cm(info)
    return HeldOutRaster(key, f"{title} ({gsd:.1f} cm), {len(tiles)} tiles", mosaic, None, reference,
                         info.geotransform, gsd, split=split)


VALIDATION_ZOOMS = (19, 20)
"""Zoom levels of the validation ground: about 30 and 15 cm."""


def kampala_validation(shared, work_dir, courtyards=False):
    """The Kampala validation patch (``data/2``, west of the chips) at zoom 19 and 20.

    ``courtyards`` adds ``validation-z20-courtyards``: the zoom-20 patch with a synthetic
    courtyard cut into every building of at least 30 m², as ``kampala-z20-courtyards``
    is made from the held-out ground (for choices about holes on validation ground).
    """
    out = [_xyz_raster(data.kampala_validation_tiles(shared.kampala_chips.parent, zoom), shared.kampala_labels,
                       Path(work_dir) / "validation", f"validation-z{zoom}",
                       f"Kampala validation patch (data/2, west), zoom {zoom}", "validation")
           for zoom in VALIDATION_ZOOMS]
    if courtyards:
        z20 = out[1]
        path = Path(work_dir) / "validation" / "validation_z20_courtyards.tif"
        reference = _courtyard_raster(z20.raster, z20.reference, None, path)
        out.append(HeldOutRaster(
            "validation-z20-courtyards",
            f"Kampala validation patch, zoom 20 ({z20.gsd_cm:.1f} cm), SYNTHETIC courtyards in every building >= 30 m²",
            path, None, reference, z20.geotransform, z20.gsd_cm, synthetic=True, split="validation"))
    return out


UNSEEN_PLACE_ZOOM = 19
"""Zoom level the unseen places are scored at: about 26-30 cm, the RGB models' own GSD."""


def place_validation(shared, work_dir, places):
    """Each of ``places`` (a recipe's ``validation_places``), the whole place at each of :data:`VALIDATION_ZOOMS`.

    Split ``validation``: never trained on; the threshold and outline offset are chosen on it.
    """
    fair_dir = shared.kampala_chips.parent
    return [_xyz_raster(data.place_tiles(fair_dir, place, zoom), data.place_folder(fair_dir, place) / "labels.geojson",
                        Path(work_dir) / "validation" / place, f"validation-{place}-z{zoom}",
                        f"{place.capitalize()} (validation place), whole place, zoom {zoom}", "validation")
            for place in places for zoom in VALIDATION_ZOOMS]


def unseen_places(shared, work_dir, trained=(), validation=()):
    """Each of :data:`.data.UNSEEN_PLACES` but ``validation``, the whole place at zoom :data:`UNSEEN_PLACE_ZOOM`.

    Split ``unseen place``, or ``trained place`` for the places in ``trained`` (a recipe's
    ``train_places``: scores on ground the model was trained on, not a measure of new ground).
    The places in ``validation`` (a recipe's ``validation_places``) are left out: they are
    :func:`place_validation` ground.
    """
    fair_dir = shared.kampala_chips.parent
    return [_xyz_raster(data.place_tiles(fair_dir, place, UNSEEN_PLACE_ZOOM),
                        data.place_folder(fair_dir, place) / "labels.geojson", Path(work_dir) / "places" / place,
                        f"{place}-z{UNSEEN_PLACE_ZOOM}", f"{place.capitalize()}, whole place, zoom {UNSEEN_PLACE_ZOOM}",
                        "trained place" if place in trained else "unseen place")
            for place in data.UNSEEN_PLACES if place not in validation]


def atlanta_heldout(shared):
    """The Atlanta held-out block (right third of the tile)."""
    _dataset, info = open_raster(shared.atlanta_raster)
    extent = data.atlanta_extent(shared.atlanta_raster, "test")
    labels = data.read_polygons(shared.atlanta_labels, info.crs_wkt)
    reference = _polygons_only(shapely.intersection(labels, shapely.box(*extent)), info.geotransform)
    gsd = data.native_gsd_cm(info)
    return [HeldOutRaster(
        "atlanta-east", f"Atlanta, right third (columns {data.ATLANTA_HELD_OUT_FIRST_COLUMN}-{info.width_px - 1}), {gsd:.0f} cm",
        Path(shared.atlanta_raster), extent, reference, info.geotransform, gsd,
    )]


def rendered_heldout(shared, work_dir, resolution_cm, city, split="held-out"):
    """A rendered city's evaluation square (:func:`.rendered.evaluation_square`) as one raster.

    Parameters
    ----------
    shared : SharedData
    work_dir : pathlib.Path
        The GeoTIFF is written under ``heldout/``.
    resolution_cm : float
        Pixel of the rendering (the model's), cm.
    city : str
        A key of :data:`.rendered.CITIES`.
    split : str
        ``held-out`` (a city never trained on) or ``unseen square`` (a training city's square kept out of training).

    Returns
    -------
    list of HeldOutRaster
        One raster, ``synthetic`` True, key ``CITY-rendered``.
    """
    relative, layer, crs = CITIES[city]
    origin, side_m = evaluation_square(shared.root, city)
    buildings = read_buildings(shared.root / relative, layer, crs, origin, side_m)
    scene = render_scene(buildings, shared.atlanta_raster, crs, origin, side_m,
                         RenderParams(pixel_m=resolution_cm / 100.0, seed=COURTYARD_SEED))
    return [_rendered_raster(scene, work_dir, f"{city}-rendered", f"{city.capitalize()} OSM buildings, {side_m:g} m "
                             "square", resolution_cm, split)]


def _rendered_raster(scene, work_dir, key, what, resolution_cm, split):
    """Write a rendered scene under ``work_dir/heldout`` as the GeoTIFF and GeoPackage of a held-out raster."""
    folder = Path(work_dir) / "heldout"
    folder.mkdir(parents=True, exist_ok=True)
    stem = key.replace("-", "_")
    raster = folder / f"{stem}.tif"
    scene.write(raster, folder / f"{stem}_buildings.gpkg")
    reference = shapely.from_wkb(np.array([bytes(p.ExportToWkb()) for p in scene.buildings], object))
    return HeldOutRaster(
        key=key, title=f"{what} ({SCENE_LABEL}; {len(reference)} buildings, {scene.hole_count} courtyards)",
        raster=raster, extent=None, reference=reference, geotransform=scene.geotransform,
        gsd_cm=float(resolution_cm), synthetic=True, split=split)


def rendered_city_squares(shared, work_dir, resolution_cm, city):
    """Every square of a city that holds a courtyard building, drawn side by side as one raster.

    Each :data:`.rendered.FRAME_M` metre square of :func:`.rendered.city_frames` is rendered on its
    own (seed :data:`COURTYARD_SEED` plus its rank) and placed row by row into a grid with
    :data:`SQUARES_GAP_PX` black pixels between squares, so no building touches one of
    another square. The raster's geotransform starts at the first square's corner: positions
    in it are the grid's, not the city's.

    Parameters are :func:`rendered_heldout`'s, without ``split`` (the city is held out).

    Returns
    -------
    list of HeldOutRaster
        One raster, ``synthetic`` True, key ``CITY-rendered-squares``.
    """
    relative, layer, crs = CITIES[city]
    corners = city_frames(shared.root, city, count=_ALL_SQUARES)
    if not corners:
        raise TrainingError(f"Expected a building with a courtyard in {shared.root / relative} but found none.")
    pixel_m = resolution_cm / 100.0
    scenes = [render_scene(read_buildings(shared.root / relative, layer, crs, corner, FRAME_M), shared.atlanta_raster,
                           crs, corner, FRAME_M, RenderParams(pixel_m=pixel_m, seed=COURTYARD_SEED + rank))
              for rank, corner in enumerate(corners)]
    side_px = scenes[0].image.shape[1]
    columns = int(np.ceil(np.sqrt(len(scenes))))
    rows = -(-len(scenes) // columns)
    step_px = side_px + SQUARES_GAP_PX
    image = np.zeros((3, rows * step_px - SQUARES_GAP_PX, columns * step_px - SQUARES_GAP_PX), np.uint8)
    first = corners[0]
    buildings = []
    for rank, (corner, scene) in enumerate(zip(corners, scenes)):
        row, column = divmod(rank, columns)
        image[:, row * step_px:row * step_px + side_px, column * step_px:column * step_px + side_px] = scene.image
        shift = (first[0] + column * step_px * pixel_m - corner[0], first[1] - row * step_px * pixel_m - corner[1])
        for building in scene.buildings:
            moved = building.Clone()
            for ring_index in range(moved.GetGeometryCount()):
                ring = moved.GetGeometryRef(ring_index)
                for point in range(ring.GetPointCount()):
                    x, y = ring.GetPoint_2D(point)
                    ring.SetPoint_2D(point, x + shift[0], y + shift[1])
            buildings.append(moved)
    geotransform = (first[0], pixel_m, 0.0, first[1], 0.0, -pixel_m)
    mosaic = RenderedScene(image, geotransform, scenes[0].crs_wkt, buildings)
    return [_rendered_raster(mosaic, work_dir, f"{city}-rendered-squares", f"{city.capitalize()} OSM buildings, its "
                             f"{len(scenes)} {FRAME_M:g} m squares with courtyard buildings side by side", resolution_cm,
                             "held-out")]
