"""Synthetic renderings of real building geometry: OSM footprints with courtyards drawn into imagery.

A scene is a square of ground in a metric CRS. Its buildings (polygons with their
interior rings, e.g. OpenStreetMap footprints) are drawn into an 8-bit RGB raster:

* **textures** are windows of a real image (any single- or multi-band raster, e.g.
  the SpaceNet Atlanta panchromatic tile), contrast-normalized, so ground and roofs
  carry the grain of real imagery;
* **ground** mixes asphalt and vegetation colours through a smooth random field;
* **roofs** take one colour per building from :data:`ROOF_COLOURS`, modulated by
  the texture; **courtyards** (interior rings) are ground again, so a hole is seen
  as ground surrounded by roof;
* **shadows**: the footprint (holes included) shifted by :attr:`RenderParams.shadow_m`
  away from the sun darkens the ground it falls on, outside the building and inside
  its courtyards (inner walls shade them);
* a small Gaussian blur and sensor noise finish the image.

The geometry is real; everything else is synthetic, and every output says so
(:data:`SCENE_LABEL`). Only NumPy and GDAL/OGR are used; nothing here imports QGIS.
Lengths ending in ``_m`` are metres on the ground (units of the scene CRS), ``_px``
raster pixels.
"""

from dataclasses import dataclass

import numpy as np
from osgeo import gdal, ogr, osr

from .errors import ModelsError

__all__ = [
    "ROOF_COLOURS",
    "SCENE_LABEL",
    "RenderParams",
    "RenderedScene",
    "SceneRenderingError",
    "read_buildings",
    "render_scene",
]

SCENE_LABEL = "synthetic rendering of real geometry"
"""How every rendered scene is described wherever it is shown."""

ROOF_COLOURS = ((150, 82, 64), (122, 122, 128), (172, 166, 154), (96, 98, 104), (140, 120, 96))
"""Roof colours (R, G, B, 0-255): tile red, metal grey, light concrete, dark bitumen, brown."""

_ASPHALT, _VEGETATION = np.array([108.0, 108.0, 104.0]), np.array([84.0, 108.0, 62.0])


class SceneRenderingError(ModelsError, ValueError):
    """A scene cannot be rendered: no building in the frame, an unreadable texture or vector source."""


@dataclass(frozen=True)
class RenderParams:
    """How a scene is drawn.

    Attributes
    ----------
    pixel_m : float
        Ground sampling distance, metres per pixel.
    shadow_m : tuple of 2 float
        Shadow offset (east, north), metres: the sun is opposite (default sun in the
        south-west, shadows towards the north-east).
    shadow_factor : float
        Brightness of shaded ground relative to lit ground (0-1).
    texture_strength : float
        Amplitude of the texture modulation (0: flat colours).
    blur_px : float
        Standard deviation of the Gaussian blur, pixels.
    noise : float
        Standard deviation of the sensor noise, 8-bit grey levels.
    seed : int
        Seed of every random choice (texture windows, colours, ground field, noise).
    """

    pixel_m: float = 0.3
    shadow_m: tuple = (2.4, 2.4)
    shadow_factor: float = 0.45
    texture_strength: float = 0.35
    blur_px: float = 0.7
    noise: float = 3.0
    seed: int = 20261203


@dataclass(frozen=True)
class RenderedScene:
    """A rendered scene held in memory.

    Attributes
    ----------
    image : numpy.ndarray
        ``(3, rows, cols)`` uint8 RGB.
    geotransform : tuple of 6 float
        GDAL geotransform of the image (north-up, square pixels).
    crs_wkt : str
        CRS of the image and of ``buildings``.
    buildings : list of ogr.Geometry
        The footprints drawn, clipped to the frame (Polygons with their interior rings).
    """

    image: np.ndarray
    geotransform: tuple
    crs_wkt: str
    buildings: list

    @property
    def hole_count(self):
        """Interior rings among :attr:`buildings`."""
        return sum(max(0, polygon.GetGeometryCount() - 1) for polygon in self.buildings)

    def write(self, raster_path, labels_path, layer_name="buildings"):
        """Write the image as a GeoTIFF and the footprints as a one-layer GeoPackage.

        Parameters
        ----------
        raster_path, labels_path : str or Path
            Files to create (replaced when present).
        layer_name : str
            Name of the footprint layer.
        """
        bands, rows, cols = self.image.shape
        dataset = gdal.GetDriverByName("GTiff").Create(str(raster_path), cols, rows, bands, gdal.GDT_Byte,
                                                       options=["COMPRESS=DEFLATE", "PHOTOMETRIC=RGB"])
        dataset.SetGeoTransform(self.geotransform)
        dataset.SetProjection(self.crs_wkt)
        for index in range(bands):
            dataset.GetRasterBand(index + 1).WriteArray(self.image[index])
        dataset.SetMetadataItem("POLYTOPO_SCENE", SCENE_LABEL)
        dataset.FlushCache()
        del dataset
        driver = ogr.GetDriverByName("GPKG")
        if driver.Open(str(labels_path)) is not None:
            driver.DeleteDataSource(str(labels_path))
        source = driver.CreateDataSource(str(labels_path))
        srs = osr.SpatialReference(wkt=self.crs_wkt)
        layer = source.CreateLayer(layer_name, srs, ogr.wkbPolygon)
        layer.CreateField(ogr.FieldDefn("holes", ogr.OFTInteger))
        for polygon in self.buildings:
            feature = ogr.Feature(layer.GetLayerDefn())
            feature.SetGeometry(polygon)
            feature.SetField("holes", polygon.GetGeometryCount() - 1)
            layer.CreateFeature(feature)
        del source


def _frame_polygon(x0, y0, size_m):
    ring = ogr.Geometry(ogr.wkbLinearRing)
    for x, y in ((x0, y0), (x0 + size_m, y0), (x0 + size_m, y0 - size_m), (x0, y0 - size_m), (x0, y0)):
        ring.AddPoint_2D(x, y)
    frame = ogr.Geometry(ogr.wkbPolygon)
    frame.AddGeometry(ring)
    return frame


def _polygon_parts(geometry):
    kind = ogr.GT_Flatten(geometry.GetGeometryType())
    if kind == ogr.wkbPolygon:
        return [geometry.Clone()]
    if kind in (ogr.wkbMultiPolygon, ogr.wkbGeometryCollection):
        return [part for index in range(geometry.GetGeometryCount())
                for part in _polygon_parts(geometry.GetGeometryRef(index))]
    return []


def read_buildings(vector_path, layer_name, crs, frame_origin_m, size_m, attribute_filter=None,
                   min_area_m2=4.0):
    """Read building footprints that fall into a square frame, reprojected and clipped to it.

    Parameters
    ----------
    vector_path : str or Path
        Any vector source OGR reads (GeoPackage, OSM PBF, ...).
    layer_name : str
        Layer to read (``"multipolygons"`` for an OSM file).
    crs : str
        Metric CRS of the scene (anything ``SetFromUserInput`` takes, e.g. ``"EPSG:3067"``).
    frame_origin_m : tuple of 2 float
        Top-left corner of the frame (x, y) in ``crs``.
    size_m : float
        Side of the frame, metres.
    attribute_filter : str, optional
        OGR SQL filter, e.g. ``"building IS NOT NULL"``.
    min_area_m2 : float
        Clipped parts smaller than this are dropped (slivers at the frame edge).

    Returns
    -------
    list of ogr.Geometry
        Polygons (with interior rings) in ``crs``.

    Raises
    ------
    SceneRenderingError
        The source or layer cannot be read.
    """
    previous = gdal.GetConfigOption("OGR_GEOMETRY_ACCEPT_UNCLOSED_RING")
    gdal.SetConfigOption("OGR_GEOMETRY_ACCEPT_UNCLOSED_RING", "NO")  # skip broken OSM rings, don't warn
    gdal.PushErrorHandler("CPLQuietErrorHandler")
    try:
        return _read_buildings(vector_path, layer_name, crs, frame_origin_m, size_m, attribute_filter, min_area_m2)
    finally:
        gdal.PopErrorHandler()
        gdal.SetConfigOption("OGR_GEOMETRY_ACCEPT_UNCLOSED_RING", previous)


def _read_buildings(vector_path, layer_name, crs, frame_origin_m, size_m, attribute_filter, min_area_m2):
    source = ogr.Open(str(vector_path))
    if source is None or source.GetLayerByName(layer_name) is None:
        raise SceneRenderingError(f"Expected a vector source with a layer {layer_name!r} at {vector_path} but "
                                  "OGR cannot open it; check the file.")
    layer = source.GetLayerByName(layer_name)
    if attribute_filter:
        layer.SetAttributeFilter(attribute_filter)
    target = osr.SpatialReference()
    target.SetFromUserInput(crs)
    target.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    layer_srs = layer.GetSpatialRef()
    layer_srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    transform = osr.CoordinateTransformation(layer_srs, target)
    frame = _frame_polygon(*frame_origin_m, size_m)
    buildings = []
    for feature in layer:
        geometry = feature.GetGeometryRef()
        if geometry is None:
            continue
        geometry = geometry.Clone()
        geometry.Transform(transform)
        if not geometry.Intersects(frame):
            continue
        if not geometry.IsValid():
            geometry = geometry.Buffer(0)  # self-touching OSM rings
        clipped = geometry.Intersection(frame)
        if clipped is not None:
            buildings.extend(part for part in _polygon_parts(clipped) if part.GetArea() >= min_area_m2)
    return buildings


def _rasterize(polygons, shape, geotransform, crs_wkt):
    rows, cols = shape
    target = gdal.GetDriverByName("MEM").Create("", cols, rows, 1, gdal.GDT_Byte)
    target.SetGeoTransform(geotransform)
    target.SetProjection(crs_wkt)
    source = ogr.GetDriverByName("Memory").CreateDataSource("")
    layer = source.CreateLayer("p", osr.SpatialReference(wkt=crs_wkt), ogr.wkbPolygon)
    for polygon in polygons:
        feature = ogr.Feature(layer.GetLayerDefn())
        feature.SetGeometry(polygon)
        layer.CreateFeature(feature)
    gdal.RasterizeLayer(target, [1], layer, burn_values=[1])
    return target.GetRasterBand(1).ReadAsArray().astype(bool)


def _texture_source(texture_path):
    dataset = gdal.Open(str(texture_path))
    if dataset is None:
        raise SceneRenderingError(f"Expected a texture raster GDAL can open at {texture_path} but it cannot; "
                                  "check the file.")
    image = dataset.GetRasterBand(1).ReadAsArray().astype(np.float64)
    low, high = np.percentile(image, (2, 98))
    if not high > low:
        raise SceneRenderingError(f"Expected a texture raster with some contrast but {texture_path} band 1 is "
                                  "flat; choose real imagery.")
    return np.clip((image - low) / (high - low), 0.0, 1.0)


def _texture(source, shape, rng):
    """A ``shape`` field of zero-mean texture: windows of ``source`` tiled with random flips."""
    rows, cols = shape
    size = min(source.shape) // 2
    out = np.empty(shape)
    for r in range(0, rows, size):
        for c in range(0, cols, size):
            r0, c0 = rng.integers(0, source.shape[0] - size), rng.integers(0, source.shape[1] - size)
            window = source[r0:r0 + size, c0:c0 + size]
            window = window[::-1] if rng.random() < 0.5 else window
            window = window[:, ::-1] if rng.random() < 0.5 else window
            out[r:r + size, c:c + size] = window[:min(size, rows - r), :min(size, cols - c)]
    return out - out.mean()


def _smooth_field(shape, rng, cell_px):
    """A random field in [0, 1] that varies over about ``cell_px`` pixels (bilinear coarse noise)."""
    rows, cols = shape
    coarse = rng.random((rows // cell_px + 2, cols // cell_px + 2))
    r, c = np.arange(rows) / cell_px, np.arange(cols) / cell_px
    r0, c0 = r.astype(int), c.astype(int)
    fr, fc = (r - r0)[:, None], (c - c0)[None, :]
    top = coarse[r0][:, c0] * (1 - fc) + coarse[r0][:, c0 + 1] * fc
    bottom = coarse[r0 + 1][:, c0] * (1 - fc) + coarse[r0 + 1][:, c0 + 1] * fc
    return top * (1 - fr) + bottom * fr


def _blur(image, sigma_px):
    if sigma_px <= 0:
        return image
    radius = max(1, int(np.ceil(3 * sigma_px)))
    kernel = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma_px) ** 2)
    kernel /= kernel.sum()
    padded = np.pad(image, ((0, 0), (radius, radius), (radius, radius)), mode="edge")
    rows = sum(weight * padded[:, index:index + image.shape[1], :] for index, weight in enumerate(kernel))
    return sum(weight * rows[:, :, index:index + image.shape[2]] for index, weight in enumerate(kernel))


def _shifted(mask, d_row, d_col):
    out = np.zeros_like(mask)
    rows, cols = mask.shape
    out[max(0, d_row):rows + min(0, d_row), max(0, d_col):cols + min(0, d_col)] = \
        mask[max(0, -d_row):rows - max(0, d_row), max(0, -d_col):cols - max(0, d_col)]
    return out


def render_scene(buildings, texture_path, crs, frame_origin_m, size_m, params=RenderParams()):
    """Draw ``buildings`` into an RGB image of the square frame.

    Parameters
    ----------
    buildings : list of ogr.Geometry
        Polygons in ``crs`` (:func:`read_buildings`).
    texture_path : str or Path
        Real imagery whose band 1 lends its grain to ground and roofs.
    crs : str
        The scene CRS (metric).
    frame_origin_m : tuple of 2 float
        Top-left corner (x, y) of the frame in ``crs``.
    size_m : float
        Side of the frame, metres.
    params : RenderParams

    Returns
    -------
    RenderedScene

    Raises
    ------
    SceneRenderingError
        No building in the frame, or an unreadable or flat texture.
    """
    if not buildings:
        raise SceneRenderingError(f"Expected buildings inside the {size_m} m frame at {frame_origin_m} but got "
                                  "none; move the frame onto built-up ground.")
    srs = osr.SpatialReference()
    srs.SetFromUserInput(crs)
    crs_wkt = srs.ExportToWkt()
    side = int(round(size_m / params.pixel_m))
    shape = (side, side)
    x0, y0 = frame_origin_m
    geotransform = (x0, params.pixel_m, 0.0, y0, 0.0, -params.pixel_m)
    rng = np.random.default_rng(params.seed)
    source = _texture_source(texture_path)

    vegetation = _smooth_field(shape, rng, cell_px=max(4, int(12 / params.pixel_m)))[None]
    ground = _ASPHALT[:, None, None] * (1 - vegetation) + _VEGETATION[:, None, None] * vegetation
    image = ground * (1 + params.texture_strength * _texture(source, shape, rng))[None]

    roof_texture = _texture(source, shape, rng)
    roofs = np.zeros(shape, dtype=bool)
    for polygon in buildings:
        mask = _rasterize([polygon], shape, geotransform, crs_wkt)
        colour = np.array(ROOF_COLOURS[rng.integers(len(ROOF_COLOURS))], dtype=float)
        colour *= rng.uniform(0.9, 1.1)
        shade = 1 + 0.6 * params.texture_strength * roof_texture[mask]
        image[:, mask] = colour[:, None] * shade[None]
        roofs |= mask

    shift_row = int(round(-params.shadow_m[1] / params.pixel_m))
    shift_col = int(round(params.shadow_m[0] / params.pixel_m))
    shadow = _shifted(roofs, shift_row, shift_col) & ~roofs
    image[:, shadow] *= params.shadow_factor

    image = _blur(image, params.blur_px) + rng.normal(0.0, params.noise, image.shape)
    return RenderedScene(image=np.clip(np.rint(image), 0, 255).astype(np.uint8), geotransform=geotransform,
                         crs_wkt=crs_wkt, buildings=buildings)
