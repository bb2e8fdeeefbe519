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
Rendered Helsinki (hole-aware model)
    ``helsinki-rendered``: the OSM buildings of the held-out city of :mod:`.rendered`
    (never trained on), a :data:`RENDERED_HELDOUT_M` metre square from the corner of
    its frame with the most courtyard buildings, drawn by
    :mod:`polytopo.models.scene_rendering` (a synthetic rendering of real geometry,
    said wherever it is reported) and written as a GeoTIFF.
"""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely
from osgeo import gdal

from ..models.raster.reading import open_raster
from ..models.scene_rendering import SCENE_LABEL, RenderParams, read_buildings, render_scene
from . import data
from .rendered import CITIES, HELD_OUT_CITY, city_frames
from .targets import CourtyardParams, carve_courtyards

__all__ = ["COURTYARD_SEED", "RENDERED_HELDOUT_M", "HeldOutRaster", "atlanta_heldout", "kampala_heldout",
           "kampala_validation", "place_validation", "rendered_heldout", "unseen_places", "UNSEEN_PLACE_ZOOM",
           "VALIDATION_ZOOMS"]

COURTYARD_SEED = 7
"""Seed of the synthetic courtyards of the held-out raster."""
RENDERED_HELDOUT_M = 480.0
"""Side of the rendered held-out square, metres."""
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
        place never used for training or any choice) or ``validation`` (used
        to choose the resolution and schedule, never for training).
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


def rendered_heldout(shared, work_dir, resolution_cm):
    """The rendered held-out city (:data:`.rendered.HELD_OUT_CITY`) as one raster.

    Parameters
    ----------
    shared : SharedData
    work_dir : pathlib.Path
        The GeoTIFF is written under ``heldout/``.
    resolution_cm : float
        Pixel of the rendering (the model's), cm.

    Returns
    -------
    list of HeldOutRaster
        One raster, ``synthetic`` True.
    """
    relative, layer, crs = CITIES[HELD_OUT_CITY]
    origin = city_frames(shared.root, HELD_OUT_CITY, count=1)[0]
    buildings = read_buildings(shared.root / relative, layer, crs, origin, RENDERED_HELDOUT_M)
    scene = render_scene(buildings, shared.atlanta_raster, crs, origin, RENDERED_HELDOUT_M,
                         RenderParams(pixel_m=resolution_cm / 100.0, seed=COURTYARD_SEED))
    folder = Path(work_dir) / "heldout"
    folder.mkdir(parents=True, exist_ok=True)
    raster = folder / f"{HELD_OUT_CITY}_rendered.tif"
    scene.write(raster, folder / f"{HELD_OUT_CITY}_rendered_buildings.gpkg")
    reference = shapely.from_wkb(np.array([bytes(p.ExportToWkb()) for p in scene.buildings], object))
    return [HeldOutRaster(
        key=f"{HELD_OUT_CITY}-rendered",
        title=(f"{HELD_OUT_CITY.capitalize()} OSM buildings, {RENDERED_HELDOUT_M:g} m square ({SCENE_LABEL}; "
               f"{len(reference)} buildings, {scene.hole_count} courtyards)"),
        raster=raster, extent=None, reference=reference, geotransform=scene.geotransform,
        gsd_cm=float(resolution_cm), synthetic=True)]
