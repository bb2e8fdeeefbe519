"""Training and held-out data: place-based splits, mosaics and labels on the model grid.

Two sources (see :mod:`.shared_data`):

Kampala (RGB, 8-bit)
    256 x 256 px XYZ tiles at zoom 19, 20 and 21 (about 30, 15 and 7.5 cm per
    pixel) that all show the *same* ground, so the split is by place: the
    ground of zoom-19 tile columns :data:`KAMPALA_TRAIN_Z19_COLUMNS` (west two
    thirds) is for training and the ground of column
    :data:`KAMPALA_HELD_OUT_Z19_COLUMN` (east third) is held out, at every zoom
    level. Each (split, zoom) pair becomes one GDAL VRT mosaic with an alpha
    band, so missing tiles read as invalid pixels. A building that straddles
    the split line is cut there: its western part trains, its eastern part
    is scored. The second Kampala patch of ``data/2`` (PNG/JPEG tiles placed
    by their XYZ names, zoom-19 column :data:`KAMPALA_VALIDATION_Z19_COLUMN`)
    is validation ground, never trained on.
Atlanta (panchromatic, 16-bit)
    One 900 x 900 px tile at 0.5 m; the right third (columns 600-899) is held
    out, the left two thirds train.

Everything is read through the inference engine's own raster reader
(:mod:`polytopo.models.raster.reading`), so a model is trained on exactly the
resampling it meets at inference time. Label polygons are returned in
*model-grid pixels* (x = column, y = row, pixel (r, c) covers
[c, c+1] x [r, r+1]).
"""

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import shapely
from osgeo import gdal, ogr, osr

from ..models.raster.reading import GridReader, make_grid, open_raster
from .errors import TrainingError

__all__ = [
    "ATLANTA_HELD_OUT_FIRST_COLUMN",
    "GridSample",
    "KAMPALA_HELD_OUT_Z19_COLUMN",
    "KAMPALA_TRAIN_Z19_COLUMNS",
    "KAMPALA_VALIDATION_Z19_COLUMN",
    "KAMPALA_ZOOMS",
    "UNSEEN_PLACES",
    "XYZTile",
    "atlanta_extent",
    "build_kampala_mosaic",
    "georeference_xyz_tile",
    "kampala_tiles",
    "kampala_validation_tiles",
    "map_to_pixels",
    "native_gsd_cm",
    "place_folder",
    "place_tiles",
    "read_polygons",
    "read_sample",
    "xyz_patches",
]

KAMPALA_ZOOMS = (19, 20, 21)
KAMPALA_TRAIN_Z19_COLUMNS = (309612, 309613)
"""Zoom-19 tile columns whose ground (at every zoom) is used for training."""
KAMPALA_HELD_OUT_Z19_COLUMN = 309614
"""Zoom-19 tile column whose ground (at every zoom) is held out for scoring."""
KAMPALA_VALIDATION_Z19_COLUMN = 309606
"""Zoom-19 tile column of the second Kampala patch (``data/2``), the validation ground."""
UNSEEN_PLACES = {"zanzibar": "1", "nepal": "3", "philippines": "4", "nairobi": "5"}
"""The fAIr places no RGB model is trained on, and their folders under ``fair_oam/data``.

Zanzibar (Tanzania), east of Kathmandu (Nepal), the Philippines and Nairobi (Kenya):
whole places, never used for training or for any choice of resolution, data or
schedule (those were made on the Kampala validation patch), so their scores say how a
model does on ground it has never seen. Folder ``2`` is Kampala (chips and validation).
"""
ATLANTA_HELD_OUT_FIRST_COLUMN = 600
"""First pixel column of the held-out right third of the Atlanta tile."""

_TILE_NAME = re.compile(r"OAM-(\d+)-(\d+)-(\d+)\.(?:tif|png)$")
_SPLITS = ("train", "test")


@dataclass(frozen=True)
class XYZTile:
    """One Web-Mercator (slippy map) tile: column ``x``, row ``y``, zoom ``z``."""

    x: int
    y: int
    z: int

    @classmethod
    def from_name(cls, name):
        """Parse ``OAM-<x>-<y>-<z>.tif`` / ``.png``; None for other names."""
        match = _TILE_NAME.search(name)
        return None if match is None else cls(*(int(v) for v in match.groups()))

    def bounds_lonlat(self):
        """(west, south, east, north) in degrees (EPSG:4326), from the slippy-map formulas."""
        n = 2.0 ** self.z

        def latitude(row):
            return math.degrees(math.atan(math.sinh(math.pi * (1.0 - 2.0 * row / n))))

        return (self.x / n * 360.0 - 180.0, latitude(self.y + 1), (self.x + 1) / n * 360.0 - 180.0, latitude(self.y))

    def z19_column(self):
        """Column of the zoom-19 tile that contains this tile."""
        return self.x >> (self.z - 19)

    def split(self):
        """``"train"`` or ``"test"`` by the place-based split (all zoom levels alike)."""
        column = self.z19_column()
        if column == KAMPALA_HELD_OUT_Z19_COLUMN:
            return "test"
        if column in KAMPALA_TRAIN_Z19_COLUMNS:
            return "train"
        raise TrainingError(
            f"Expected a Kampala tile under zoom-19 columns {list(KAMPALA_TRAIN_Z19_COLUMNS)} or "
            f"{KAMPALA_HELD_OUT_Z19_COLUMN} but got tile {self}; update the split for new tiles."
        )


def kampala_tiles(chips_dir):
    """The Kampala chips as ``{(split, zoom): [path, ...]}``, paths sorted.

    Parameters
    ----------
    chips_dir : pathlib.Path
        Folder of ``OAM-<x>-<y>-<z>.tif`` GeoTIFFs.

    Returns
    -------
    dict of (str, int) to list of pathlib.Path
    """
    groups = {(split, zoom): [] for split in _SPLITS for zoom in KAMPALA_ZOOMS}
    for path in sorted(Path(chips_dir).glob("OAM-*.tif")):
        tile = XYZTile.from_name(path.name)
        if tile is not None and tile.z in KAMPALA_ZOOMS:
            groups[(tile.split(), tile.z)].append(path)
    empty = [key for key, paths in groups.items() if not paths]
    if empty:
        raise TrainingError(f"Expected Kampala chips for every (split, zoom) but got none for {empty} in {chips_dir}.")
    return groups


def _xyz_tiles(folder_dir, zoom):
    for path in sorted(Path(folder_dir).glob("OAM-*.png")):
        tile = XYZTile.from_name(path.name)
        if tile is not None and tile.z == zoom:
            yield tile, path


def kampala_validation_tiles(fair_dir, zoom):
    """The second Kampala patch (folder ``data/2``, zoom-19 column :data:`KAMPALA_VALIDATION_Z19_COLUMN`).

    It lies west of the chips and is used neither for training nor as held-out
    ground: design choices (resolution, schedule) are checked on it.

    Returns
    -------
    list of (XYZTile, pathlib.Path)
    """
    return [
        (tile, path)
        for tile, path in _xyz_tiles(Path(fair_dir) / "data" / "2", zoom)
        if tile.z19_column() == KAMPALA_VALIDATION_Z19_COLUMN
    ]


def place_folder(fair_dir, place):
    """The folder of one of the :data:`UNSEEN_PLACES` under ``fair_dir/data`` (tiles and ``labels.geojson``).

    Raises
    ------
    TrainingError
        The place is not one of :data:`UNSEEN_PLACES`.
    """
    if place not in UNSEEN_PLACES:
        raise TrainingError(f"Expected one of the places {sorted(UNSEEN_PLACES)} but got {place!r}.")
    return Path(fair_dir) / "data" / UNSEEN_PLACES[place]


def place_tiles(fair_dir, place, zoom):
    """Every tile of one of the :data:`UNSEEN_PLACES` at ``zoom``.

    Returns
    -------
    list of (XYZTile, pathlib.Path)

    Raises
    ------
    TrainingError
        The place is not one of :data:`UNSEEN_PLACES`, or its folder has no tile at ``zoom``.
    """
    folder = place_folder(fair_dir, place)
    tiles = list(_xyz_tiles(folder, zoom))
    if not tiles:
        raise TrainingError(f"Expected zoom-{zoom} tiles OAM-<x>-<y>-{zoom}.png of {place} in {folder} but found none.")
    return tiles


def xyz_patches(tiles):
    """Group same-zoom ``(XYZTile, path)`` pairs into patches of ground (adjacent zoom-19 parents).

    Every fAIr folder holds two separate patches of ground; a mosaic of each patch
    alone stays small where one of both would span the empty ground between them.

    Returns
    -------
    list of list of (XYZTile, pathlib.Path)
        Patches ordered by their first tile, tiles in the given order.
    """
    tiles = list(tiles)
    parents = {}
    for index, (tile, _path) in enumerate(tiles):
        shift = tile.z - 19
        parents.setdefault((tile.x >> shift, tile.y >> shift), []).append(index)
    label = {}
    for start in parents:
        if start in label:
            continue
        label[start] = start
        stack = [start]
        while stack:
            x, y = stack.pop()
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    other = (x + dx, y + dy)
                    if other in parents and other not in label:
                        label[other] = start
                        stack.append(other)
    groups = {}
    for parent, indices in parents.items():
        groups.setdefault(label[parent], []).extend(indices)
    return [[tiles[i] for i in sorted(indices)] for indices in sorted(groups.values(), key=min)]


def georeference_xyz_tile(path, tile, out_path):
    """Write a VRT that places a PNG/JPEG XYZ tile on its EPSG:4326 bounds.

    The file is opened by content (many ``.png`` tiles are JPEG). The VRT has
    the three colour bands and, as band 4, the tile's mask as an alpha band
    (transparent PNG pixels are invalid; JPEG tiles are all valid), so tiles
    of both kinds mosaic together.

    Returns
    -------
    pathlib.Path
    """
    west, south, east, north = tile.bounds_lonlat()
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    options = f"-of VRT -b 1 -b 2 -b 3 -b mask -a_srs EPSG:4326 -a_ullr {west!r} {north!r} {east!r} {south!r}"
    translated = gdal.Translate(str(out_path), str(path), options=options)
    if translated is None:
        raise TrainingError(f"Expected GDAL to read the tile {path} but it failed: {gdal.GetLastErrorMsg()}")
    translated.GetRasterBand(4).SetColorInterpretation(gdal.GCI_AlphaBand)
    translated = None
    return out_path


def build_kampala_mosaic(paths, out_path):
    """Write a VRT mosaic of same-zoom tiles with an alpha band (missing tiles invalid).

    Parameters
    ----------
    paths : sequence of pathlib.Path
    out_path : pathlib.Path
        ``.vrt`` file; its folder is created.

    Returns
    -------
    pathlib.Path
    """
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    vrt = gdal.BuildVRT(str(out_path), [str(p) for p in paths], options=gdal.BuildVRTOptions(addAlpha=True))
    if vrt is None:
        raise TrainingError(f"Expected GDAL to build the mosaic {out_path} but it failed: {gdal.GetLastErrorMsg()}")
    vrt.FlushCache()
    vrt = None
    return out_path


def atlanta_extent(raster_path, split):
    """Map extent (xmin, ymin, xmax, ymax) of the Atlanta ``"train"`` or ``"test"`` block.

    The test block is the right third of the tile (pixel columns from
    :data:`ATLANTA_HELD_OUT_FIRST_COLUMN`), the training block the rest.
    """
    _dataset, info = open_raster(raster_path)
    gt = info.geotransform
    split_x = gt[0] + ATLANTA_HELD_OUT_FIRST_COLUMN * gt[1]
    x0, x1 = gt[0], gt[0] + info.width_px * gt[1]
    y1, y0 = gt[3], gt[3] + info.height_px * gt[5]
    if split == "train":
        return (x0, y0, split_x, y1)
    if split == "test":
        return (split_x, y0, x1, y1)
    raise TrainingError(f"Expected split 'train' or 'test' but got {split!r}.")


def read_polygons(vector_path, target_wkt):
    """Read the polygons of a vector file, reprojected to ``target_wkt``.

    Parameters
    ----------
    vector_path : pathlib.Path
        Any OGR polygon layer (the first layer is read).
    target_wkt : str
        CRS of the raster the polygons go with.

    Returns
    -------
    numpy.ndarray of shapely.Polygon
        MultiPolygons are exploded; empty geometries dropped.
    """
    source = ogr.Open(str(vector_path))
    if source is None:
        raise TrainingError(f"Expected a vector layer OGR can open at {vector_path} but got: {gdal.GetLastErrorMsg()}")
    layer = source.GetLayer(0)
    target = osr.SpatialReference()
    target.ImportFromWkt(target_wkt)
    target.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    layer_srs = layer.GetSpatialRef()
    transform = None
    if layer_srs is not None:
        layer_srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        if not layer_srs.IsSame(target):
            transform = osr.CoordinateTransformation(layer_srs, target)
    wkbs = []
    for feature in layer:
        geometry = feature.GetGeometryRef()
        if geometry is None or geometry.IsEmpty():
            continue
        geometry = geometry.Clone()
        if transform is not None:
            geometry.Transform(transform)
        wkbs.append(bytes(geometry.ExportToWkb()))
    geometries = shapely.from_wkb(np.array(wkbs, object))
    parts = shapely.get_parts(geometries)
    return parts[(shapely.get_type_id(parts) == shapely.GeometryType.POLYGON) & ~shapely.is_empty(parts)]


def map_to_pixels(geometries, geotransform):
    """Map coordinates to pixels of a north-up grid (x = column, y = row, fractional)."""
    gt = geotransform

    def to_pixels(coords):
        return np.column_stack(((coords[:, 0] - gt[0]) / gt[1], (coords[:, 1] - gt[3]) / gt[5]))

    return shapely.transform(np.asarray(geometries, object), to_pixels)


@dataclass(frozen=True)
class GridSample:
    """A raster read on a model grid, with its labels.

    Attributes
    ----------
    name : str
    image : numpy.ndarray of float32, shape (bands, rows, cols)
        Raw raster values (not normalized); 0 where invalid.
    valid : numpy.ndarray of bool, shape (rows, cols)
    polygons : numpy.ndarray of shapely.Polygon
        Labels in model-grid pixels, those that touch the grid.
    gsd_cm : float
        Ground sampling distance of the grid, cm per pixel.
    """

    name: str
    image: np.ndarray
    valid: np.ndarray
    polygons: np.ndarray
    gsd_cm: float


def native_gsd_cm(info):
    """Ground sampling distance of a raster, cm per pixel (mean of x and y), as the engine measures it."""
    probe = make_grid(info, 100.0)
    return 100.0 * 2.0 / (probe.scale[0] + probe.scale[1])


def read_sample(name, raster_path, labels, resolution_cm, bands, extent=None):
    """Read a raster (or an extent of it) on the model grid, with its labels in grid pixels.

    Parameters
    ----------
    name : str
    raster_path : pathlib.Path or str
    labels : numpy.ndarray of shapely.Polygon
        Label polygons in the raster's CRS (see :func:`read_polygons`).
    resolution_cm : float or None
        Model ground sampling distance, cm per pixel (the engine resamples the
        same way at inference); None keeps the raster's own pixels.
    bands : sequence of int
        1-based bands in model-channel order.
    extent : tuple of 4 float, optional
        (xmin, ymin, xmax, ymax) in the raster's CRS.

    Returns
    -------
    GridSample
    """
    dataset, info = open_raster(raster_path)
    grid = make_grid(info, resolution_cm, extent)
    reader = GridReader(dataset, info, grid, bands)
    image, valid = reader.read(0, 0, grid.width_px, grid.height_px)
    polygons = map_to_pixels(labels, grid.geotransform)
    frame = shapely.box(0, 0, grid.width_px, grid.height_px)
    polygons = polygons[shapely.intersects(polygons, frame)]
    gsd = native_gsd_cm(info) if resolution_cm is None else float(resolution_cm)
    return GridSample(name, image, valid, polygons, gsd)
