"""Read polygon layers of any OGR-readable file into :class:`InstanceSet` objects.

A map layer is evaluated in the pixels of an evaluation grid, a :class:`PixelFrame`:
its origin is the top-left corner (min x, max y) of the reference layer's extent, its
pixel size is given by the caller (a vector layer has no resolution of its own), and
``y`` grows downwards as in image pixels. The reference (ground-truth) layer defines the
CRS and the frame; a prediction layer in another CRS is reprojected to it.

Features are grouped into images by an attribute (``image_field``), by a patch grid of
``patch_size_px`` pixels from the frame origin, or not at all (one image, id 0).
MultiPolygons are exploded into one instance per part; NULL and empty geometries are
skipped and counted. GDAL's Python bindings (``osgeo``) are imported only when a layer
is read, so the evaluator itself imports without them.
"""

import contextlib
import math
import os
import warnings
from dataclasses import dataclass

import numpy as np
import shapely

from ...core.errors import InputFormatError, InvalidParameterError, MissingDependencyError
from .frame import instances_in_frame

__all__ = [
    "PixelFrame",
    "SCORE_FIELD",
    "implied_score_field",
    "frame_for_bounds",
    "load_vector_layer",
    "read_map_geometries",
    "require_osgeo",
    "ogr_exceptions",
]

_ROLES = ("gt", "pred")
_LAYER_OPTIONS = {"gt": "--gt-layer", "pred": "--pred-layer"}
PLAUSIBLE_PIXEL_M = (1e-3, 1e4)
"""Ground size of a pixel, metres, accepted without ``check_pixel_size=False``: a pixel size
outside it is almost always metres given for a CRS in degrees (or the reverse)."""
_METRES_PER_DEGREE = 111_320.0
SCORE_FIELD = "score"
"""Field name of the prediction confidence read when no score field is named (the vectorizer writes it)."""
_NUMBER_FIELD_TYPES = ("Integer", "Integer64", "Real")
_ID_FIELD_TYPES = ("Integer", "Integer64", "String")
_UNDEFINED_SRS_NAMES = ("Undefined geographic SRS", "Undefined Cartesian SRS")


@dataclass(frozen=True)
class PixelFrame:
    """The evaluation grid of a map layer: where pixel (0, 0) is and how large a pixel is.

    Parameters
    ----------
    crs_wkt : str or None
        CRS of the map coordinates as WKT; None when the layers have no CRS.
    origin_x, origin_y : float
        Map coordinates of the grid's top-left corner (map units).
    pixel_size : float
        Size of one pixel in map units (metres, degrees, ...) per pixel.
    patch_size_px : int or None
        Side of the square patches that group features into images, pixels; None when
        images come from an attribute or the layer is one image.

    Examples
    --------
    >>> frame = PixelFrame(None, origin_x=100.0, origin_y=50.0, pixel_size=0.5)
    >>> frame.to_pixels(shapely.Point(101.0, 49.0)).wkt
    'POINT (2 2)'
    >>> frame.to_map(shapely.Point(2.0, 2.0)).wkt
    'POINT (101 49)'
    """

    crs_wkt: object
    origin_x: float
    origin_y: float
    pixel_size: float
    patch_size_px: object = None

    def __post_init__(self):
        for name in ("origin_x", "origin_y"):
            if not math.isfinite(getattr(self, name)):
                raise InvalidParameterError(f"Expected a finite {name} (map units) but got {getattr(self, name)}")
        _check_pixel_size(self.pixel_size)
        _check_patch_size(self.patch_size_px)

    def to_pixels(self, geometry):
        """Map coordinates to pixels: ``((x - origin_x) / pixel_size, (origin_y - y) / pixel_size)``.

        Parameters
        ----------
        geometry : shapely.Geometry or array_like of shapely.Geometry
            Geometry in map units; None and empty geometries pass through.

        Returns
        -------
        shapely.Geometry or numpy.ndarray
            The same geometry (or array) in pixels, ``y`` pointing down.
        """
        return shapely.transform(geometry, self._coordinates_to_pixels)

    def to_map(self, geometry):
        """Pixels to map coordinates, the exact inverse of :meth:`to_pixels`.

        Parameters
        ----------
        geometry : shapely.Geometry or array_like of shapely.Geometry
            Geometry in pixels of this frame.

        Returns
        -------
        shapely.Geometry or numpy.ndarray
            The same geometry (or array) in map units.
        """
        return shapely.transform(geometry, self._coordinates_to_map)

    def _coordinates_to_pixels(self, coords):
        pixels = np.empty_like(coords)
        pixels[:, 0] = (coords[:, 0] - self.origin_x) / self.pixel_size
        pixels[:, 1] = (self.origin_y - coords[:, 1]) / self.pixel_size
        return pixels

    def _coordinates_to_map(self, pixels):
        coords = np.empty_like(pixels)
        coords[:, 0] = self.origin_x + pixels[:, 0] * self.pixel_size
        coords[:, 1] = self.origin_y - pixels[:, 1] * self.pixel_size
        return coords


def frame_for_bounds(bounds, *, pixel_size, patch_size_px=None, crs_wkt=None):
    """The frame whose origin is the top-left corner of ``bounds``.

    With a patch grid, the origin is snapped outwards to a multiple of the patch side
    (``patch_size_px * pixel_size`` map units), so that patches of the same area get the
    same ids whatever the layer's extent.

    Parameters
    ----------
    bounds : sequence of float
        ``(min_x, min_y, max_x, max_y)`` in map units; NaN values (an empty layer) put
        the origin at (0, 0).
    pixel_size : float
        Map units per pixel.
    patch_size_px : int, optional
        Patch side in pixels.
    crs_wkt : str, optional
        CRS of the bounds.

    Returns
    -------
    PixelFrame

    Examples
    --------
    >>> frame = frame_for_bounds((10.0, 20.0, 30.0, 40.0), pixel_size=2.0)
    >>> frame.origin_x, frame.origin_y
    (10.0, 40.0)
    >>> frame = frame_for_bounds((10.0, 20.0, 30.0, 40.0), pixel_size=2.0, patch_size_px=8)
    >>> frame.origin_x, frame.origin_y
    (0.0, 48.0)
    """
    _check_pixel_size(pixel_size)
    _check_patch_size(patch_size_px)
    min_x, _, _, max_y = (float(value) for value in bounds)
    if not (math.isfinite(min_x) and math.isfinite(max_y)):
        min_x, max_y = 0.0, 0.0
    if patch_size_px is not None:
        side = patch_size_px * pixel_size
        min_x, max_y = math.floor(min_x / side) * side, math.ceil(max_y / side) * side
    return PixelFrame(crs_wkt, min_x, max_y, float(pixel_size), patch_size_px)


def require_osgeo():
    """Import GDAL's Python bindings, with an install hint when they are missing.

    Returns
    -------
    tuple
        The modules ``(gdal, ogr, osr)``.

    Raises
    ------
    MissingDependencyError
        When ``osgeo`` cannot be imported.
    """
    try:
        from osgeo import gdal, ogr, osr
    except ImportError as exc:
        raise MissingDependencyError(
            "Expected GDAL's Python bindings (module osgeo) to read and write vector layers but "
            f"they cannot be imported ({exc}); install them with the system packages "
            "(Debian/Ubuntu: apt-get install python3-gdal), with conda (conda install gdal) or "
            "with pip matching the system GDAL (pip install GDAL==$(gdal-config --version)), "
            "or run inside QGIS, which ships them"
        ) from exc
    return gdal, ogr, osr


@contextlib.contextmanager
def ogr_exceptions():
    """Turn GDAL, OGR and OSR errors into Python exceptions for the duration of a block.

    The previous setting of each module is restored on exit, so a host application
    (QGIS, a notebook) keeps the error mode it chose.

    Yields
    ------
    tuple
        The modules ``(gdal, ogr, osr)``.
    """
    modules = require_osgeo()
    enabled = [module for module in modules if not module.GetUseExceptions()]
    for module in enabled:
        module.UseExceptions()
    try:
        yield modules
    finally:
        for module in reversed(enabled):  # GDAL keeps the error handlers on a stack
            module.DontUseExceptions()


def load_vector_layer(
    path,
    *,
    layer=None,
    score_field=None,
    default_score=None,
    image_field=None,
    patch_size_px=None,
    pixel_size=None,
    category_field=None,
    categories=None,
    target_srs=None,
    frame=None,
    role="gt",
    check_pixel_size=True,
):
    """Load a polygon layer (GeoPackage, GeoJSON, Shapefile, ``/vsizip/`` path, ...) in pixels.

    Parameters
    ----------
    path : str or Path
        Any dataset GDAL/OGR can open as vector data.
    layer : str or int, optional
        Layer name or index; required when the dataset has several layers.
    score_field : str, optional
        Numeric field holding the prediction confidence (role ``"pred"`` only); default
        :data:`SCORE_FIELD` when the layer has that numeric field and no ``default_score``
        is given (:func:`implied_score_field`).
    default_score : float, optional
        Score of predictions without a score field or with a NULL score.
    image_field : str, optional
        Integer or string field whose distinct values are the images.
    patch_size_px : int, optional
        Group features into square patches of this side in pixels (id ``"r{row}_c{col}"``,
        by the patch holding the feature's representative point). Taken from ``frame``
        when one is given.
    pixel_size : float, optional
        Map units (of the reference CRS) per pixel; required unless ``frame`` is given.
    category_field : str, optional
        Field holding the class of each feature (``Instance.category_id``).
    categories : collection, optional
        Keep only features whose category is in this collection (others are counted as
        ``"other_category"``); needs ``category_field``.
    target_srs : str, optional
        CRS to reproject the reference layer to (anything ``OSRSetFromUserInput``
        accepts: ``"EPSG:32633"``, WKT, PROJ); only without ``frame``.
    frame : PixelFrame, optional
        The reference layer's frame; pass it when loading predictions so that both
        layers share CRS, origin, pixel size and patch grid.
    role : {"gt", "pred"}
        Ground truth gets score 1.0 (score arguments are ignored); predictions need a
        score field or a default score.
    check_pixel_size : bool
        Refuse a pixel size whose ground size (from the CRS unit; degrees at about
        111.32 km) is outside :data:`PLAUSIBLE_PIXEL_M`; False accepts it (a layer
        without CRS is never checked).

    Returns
    -------
    InstanceSet, PixelFrame
        Instances in pixels (``source_id`` = OGR FID, ``skipped`` counts
        ``"null_geometry"``, ``"empty_geometry"`` and ``"other_category"``) and the frame
        they are expressed in. ``image_ids`` lists images in order of first appearance
        (image field), patches holding a feature in row-major order (patch grid), or
        ``(0,)``.

    Raises
    ------
    InputFormatError
        The file cannot be opened, the layer is not a polygon layer, a named field is
        missing, a feature has non-finite coordinates or a ring of fewer than 3 distinct
        points, the CRS is missing on one side only, or reprojection fails.
    InvalidParameterError
        Missing or contradictory parameters (no pixel size, a degree-based CRS without
        an explicit pixel size, an implausible pixel size for the CRS unit, ``frame``
        together with ``target_srs``, ...).

    Warns
    -----
    UserWarning
        When neither the reference nor this layer has a CRS: coordinates are compared as
        they are.

    Notes
    -----
    Features are read one by one through OGR (about 20 µs each); geometry conversion,
    reprojection (``osr.CoordinateTransformation.TransformPoints`` on all vertices at
    once), the map-to-pixel transform and the patch assignment (the frame step,
    :func:`.frame.instances_in_frame`) are vectorized.

    Examples
    --------
    GDAL also opens GeoJSON given as text; without a ``crs`` member it is EPSG:4326, so
    the pixel size is in degrees (2⁻¹¹° is about 54 m):

    >>> triangle = '{"type": "Polygon", "coordinates": [[[10, 50], [10.5, 50], [10.5, 49.5], [10, 50]]]}'
    >>> gt, frame = load_vector_layer(triangle, pixel_size=2**-11)
    >>> frame.origin_x, frame.origin_y
    (10.0, 50.0)
    >>> gt.instances[0].exterior.tolist()
    [[0.0, 0.0], [1024.0, 0.0], [1024.0, 1024.0]]
    >>> load_vector_layer(triangle, pixel_size=0.5)  # metres meant, degrees given
    Traceback (most recent call last):
    ...
    polytopo.core.errors.InvalidParameterError: ... is 55.66 km per pixel; for 0.5 m pixels pass --pixel-size 4.49156e-06 (degrees), ...
    """
    if role not in _ROLES:
        raise InvalidParameterError(f"Expected role to be one of {list(_ROLES)} but got {role!r}")
    if frame is not None:
        _check_frame_arguments(frame, pixel_size, patch_size_px, target_srs)
        patch_size_px = frame.patch_size_px
    else:
        _check_patch_size(patch_size_px)
    if image_field is not None and patch_size_px is not None:
        raise InvalidParameterError(
            f"Expected either image_field or patch_size_px to group features into images but got both "
            f"(image_field={image_field!r}, patch_size_px={patch_size_px}); pass one of them"
        )
    if categories is not None and category_field is None:
        raise InvalidParameterError(
            "Expected category_field together with categories but got only categories; "
            "name the field that holds the class (--category-field)"
        )
    scored = role == "pred"
    with ogr_exceptions() as (gdal, ogr, osr):
        dataset = _open_dataset(gdal, path)
        source = _select_layer(dataset, layer, path, _LAYER_OPTIONS[role])
        where = f"{path} layer '{source.GetName()}'"
        _check_polygon_layer(ogr, source, where)
        fields = _field_types(source)
        _check_field(where, fields, image_field, "image", _ID_FIELD_TYPES)
        _check_field(where, fields, category_field, "category", None)
        if scored:
            numeric = [name for name, kind in fields.items() if kind in _NUMBER_FIELD_TYPES]
            score_field = implied_score_field(numeric, score_field, default_score)
            _check_score_source(where, fields, score_field, default_score)
        wanted = [image_field, category_field, score_field if scored else None]
        wanted = list(dict.fromkeys(name for name in wanted if name))
        fids, wkbs, values, skipped = _read_features(source, wanted)
        layer_srs = _layer_srs(source)
        target = _target_srs(osr, layer_srs, frame, target_srs, where)
        geometries = _map_geometries(wkbs, fids, where)
        if layer_srs is not None and target is not None and not _same_srs(layer_srs, target):
            geometries = _reprojected(osr, geometries, layer_srs, target, where)
        if frame is None:
            frame = _reference_frame(geometries, target, pixel_size, patch_size_px, where, check_pixel_size)
    instance_set = instances_in_frame(
        frame, geometries, source_ids=fids, source=str(path), values=values, image_field=image_field,
        score_field=score_field if scored else None, default_score=default_score, scored=scored,
        category_field=category_field, categories=categories, skipped=skipped,
        describe=lambda index: f"{where} feature FID {fids[index]}")
    return instance_set, frame


def read_map_geometries(path, *, crs_wkt=None, purpose="vector"):
    """Geometries of every feature of a vector file's first layer, in map units of ``crs_wkt``.

    The reader of vector inputs other than the evaluated layers (areas of interest,
    prompts): any geometry type, NULL and empty geometries left out, curves linearized.

    Parameters
    ----------
    path : str or Path
        Any dataset GDAL/OGR can open as vector data.
    crs_wkt : str, optional
        CRS (WKT) to reproject to when the layer has another CRS; None or empty keeps
        the coordinates as they are, as does a layer without CRS.
    purpose : str
        What the file is for (``"AOI"``, ``"prompts"``), named in error messages.

    Returns
    -------
    list of shapely.Geometry
        In layer order.

    Raises
    ------
    InputFormatError
        The file cannot be opened, has no layer, holds non-finite coordinates, or its
        coordinates cannot be reprojected.

    Examples
    --------
    >>> point = '{"type": "Point", "coordinates": [10, 50]}'
    >>> [geometry.wkt for geometry in read_map_geometries(point)]
    ['POINT (10 50)']
    """
    with ogr_exceptions() as (gdal, _ogr, osr):
        dataset = _open_dataset(gdal, path)
        if dataset.GetLayerCount() == 0:
            raise InputFormatError(f"{path}: expected a {purpose} file with a layer but it has none; "
                                   "check the path and the format")
        source = dataset.GetLayerByIndex(0)
        where = f"{purpose} file {path} layer '{source.GetName()}'"
        fids, wkbs, _values, _skipped = _read_features(source, [])
        geometries = _map_geometries(wkbs, fids, where)
        layer_srs = _layer_srs(source)
        if layer_srs is not None and crs_wkt:
            target = _srs_from_wkt(osr, crs_wkt)
            if not _same_srs(layer_srs, target):
                geometries = _reprojected(osr, geometries, layer_srs, target, where, "the target CRS")
    return [geometry for geometry in geometries if geometry is not None]


def _check_pixel_size(pixel_size):
    if isinstance(pixel_size, bool) or not isinstance(pixel_size, (int, float)) or not (
        math.isfinite(pixel_size) and pixel_size > 0
    ):
        raise InvalidParameterError(
            f"Expected pixel_size to be a positive number of map units per pixel but got {pixel_size!r}"
        )


def _check_ground_size(pixel_size, srs, where):
    """Refuse a pixel size whose ground size is outside :data:`PLAUSIBLE_PIXEL_M`."""
    geographic = bool(srs.IsGeographic())
    metres_per_unit = _METRES_PER_DEGREE if geographic else srs.GetLinearUnits()
    unit = "degrees" if geographic else srs.GetLinearUnitsName()
    ground = pixel_size * metres_per_unit
    low, high = PLAUSIBLE_PIXEL_M
    if low <= ground <= high:
        return
    suggestion = 0.5 / metres_per_unit
    raise InvalidParameterError(
        f"{where}: expected a pixel size of {low * 1000:g} mm to {high / 1000:g} km on the ground but "
        f"--pixel-size {pixel_size:g} in the {unit} of {_described(srs)} is {_metres(ground)} per pixel; for "
        f"0.5 m pixels pass --pixel-size {suggestion:.6g} ({unit}), or --allow-any-pixel-size "
        "(check_pixel_size=False) if it is meant"
    )


def _metres(value):
    if value >= 1000:
        return f"{value / 1000:.4g} km"
    return f"{value:.4g} m" if value >= 1 else f"{value * 1000:.4g} mm"


def _check_patch_size(patch_size_px):
    if patch_size_px is None:
        return
    if isinstance(patch_size_px, bool) or not isinstance(patch_size_px, int) or patch_size_px < 1:
        raise InvalidParameterError(f"Expected patch_size_px to be a positive integer but got {patch_size_px!r}")


def _check_frame_arguments(frame, pixel_size, patch_size_px, target_srs):
    if not isinstance(frame, PixelFrame):
        raise InvalidParameterError(f"Expected frame to be a PixelFrame but got {type(frame).__name__}")
    if pixel_size is not None and pixel_size != frame.pixel_size:
        raise InvalidParameterError(
            f"Expected pixel_size to be omitted or equal to the frame's {frame.pixel_size} but got "
            f"{pixel_size}; the reference layer's frame fixes the pixel size"
        )
    if patch_size_px is not None and patch_size_px != frame.patch_size_px:
        raise InvalidParameterError(
            f"Expected patch_size_px to be omitted or equal to the frame's {frame.patch_size_px} but "
            f"got {patch_size_px}; the reference layer's frame fixes the patch grid"
        )
    if target_srs is not None:
        raise InvalidParameterError(
            f"Expected either frame or target_srs but got both (target_srs={target_srs!r}); "
            "a layer loaded against a frame is reprojected to the frame's CRS"
        )


def _open_dataset(gdal, path):
    try:
        return gdal.OpenEx(str(path), gdal.OF_VECTOR | gdal.OF_READONLY)
    except RuntimeError as exc:
        if not str(path).startswith("/vsi") and not os.path.exists(path):
            raise InputFormatError(f"{path}: file not found; check the path") from None
        raise InputFormatError(
            f"{path}: expected a vector dataset GDAL/OGR can open but got an error ({exc}); "
            "check the file and that this GDAL build has a driver for its format"
        ) from None


def _select_layer(dataset, layer, path, option):
    names = [dataset.GetLayerByIndex(index).GetName() for index in range(dataset.GetLayerCount())]
    if layer is None:
        if len(names) == 1:
            return dataset.GetLayerByIndex(0)
        raise InputFormatError(
            f"{path}: expected exactly one layer or a layer name but the dataset has {len(names)} "
            f"layers {names}; pass one of them with {option} (layer= in Python)"
        )
    if isinstance(layer, int) and not isinstance(layer, bool) and 0 <= layer < len(names):
        return dataset.GetLayerByIndex(layer)
    if isinstance(layer, str) and layer in names:
        return dataset.GetLayerByName(layer)
    raise InputFormatError(
        f"{path}: expected a layer name or index of {names} but got {layer!r}; pass one of them with {option} (layer= in Python)"
    )


def _check_polygon_layer(ogr, source, where):
    kind = ogr.GT_Flatten(source.GetGeomType())
    polygonal = (ogr.wkbPolygon, ogr.wkbMultiPolygon, ogr.wkbCurvePolygon, ogr.wkbMultiSurface)
    if kind not in polygonal and kind not in (ogr.wkbUnknown, ogr.wkbGeometryCollection):
        raise InputFormatError(
            f"{where}: expected a Polygon or MultiPolygon layer but got geometry type "
            f"{ogr.GeometryTypeToName(source.GetGeomType())}; select a polygon layer"
        )


def _field_types(source):
    definition = source.GetLayerDefn()
    return {
        definition.GetFieldDefn(index).GetName(): definition.GetFieldDefn(index).GetTypeName()
        for index in range(definition.GetFieldCount())
    }


def _check_field(where, fields, name, purpose, allowed_types):
    if name is None:
        return
    if name not in fields:
        raise InputFormatError(
            f"{where}: expected a {purpose} field {name!r} but the layer has none; "
            f"available fields: {sorted(fields)}"
        )
    if allowed_types is not None and fields[name] not in allowed_types:
        raise InputFormatError(
            f"{where} field {name!r}: expected a {purpose} field of type {' or '.join(allowed_types)} "
            f"but got {fields[name]}; convert the field or choose another one"
        )


def implied_score_field(numeric_fields, score_field, default_score):
    """The score field to read: ``score_field``, else :data:`SCORE_FIELD` when the layer has it.

    A prediction layer written by ``polytopo.models run`` (or the plugin's vectorizer)
    carries its confidence in a numeric field named :data:`SCORE_FIELD`; such a layer is
    scored by that field without ``--score-field``. Neither field nor default score given
    and a layer whose ``score`` field is missing or not numeric: None (the caller asks for one).

    Parameters
    ----------
    numeric_fields : collection of str
        Names of the layer's numeric fields.
    score_field : str or None
        The field asked for.
    default_score : float or None
        The default score asked for; when given without a field, no field is implied.

    Returns
    -------
    str or None
    """
    if score_field is not None or default_score is not None:
        return score_field
    return SCORE_FIELD if SCORE_FIELD in numeric_fields else None


def _check_score_source(where, fields, score_field, default_score):
    if score_field is None and default_score is None:
        raise InputFormatError(
            f"{where}: expected prediction scores but got neither a score field nor a default score; "
            f"pass --score-field NAME (available fields: {sorted(fields)}) or --default-score S (a numeric "
            f"field named {SCORE_FIELD!r} is read without either)"
        )
    _check_field(where, fields, score_field, "score", _NUMBER_FIELD_TYPES)
    if default_score is not None and (
        isinstance(default_score, bool)
        or not isinstance(default_score, (int, float))
        or not math.isfinite(default_score)
    ):
        raise InvalidParameterError(f"Expected default_score to be a finite number but got {default_score!r}")


def _read_features(source, wanted):
    """FIDs, ISO WKB (None for NULL/empty), wanted field values and skip counts, in layer order."""
    definition = source.GetLayerDefn()
    indices = [definition.GetFieldIndex(name) for name in wanted]
    fids, wkbs, skipped = [], [], {}
    values = {name: [] for name in wanted}
    source.ResetReading()
    for feature in source:
        fids.append(feature.GetFID())
        for name, index in zip(wanted, indices):
            values[name].append(feature.GetField(index))
        geometry = feature.GetGeometryRef()
        if geometry is None or geometry.IsEmpty():
            reason = "null_geometry" if geometry is None else "empty_geometry"
            skipped[reason] = skipped.get(reason, 0) + 1
            wkbs.append(None)
            continue
        if geometry.HasCurveGeometry():
            geometry = geometry.GetLinearGeometry()
        geometry.FlattenTo2D()
        wkbs.append(bytes(geometry.ExportToIsoWkb()))
    return fids, wkbs, values, skipped


def _map_geometries(wkbs, fids, where):
    """Shapely geometries in map units; raises on the first feature with a non-finite coordinate."""
    encoded = np.array(wkbs, dtype=object)
    with np.errstate(invalid="ignore"):  # NaN coordinates are reported below, by feature
        geometries = shapely.from_wkb(encoded, on_invalid="ignore")
    unreadable = np.flatnonzero(shapely.is_missing(geometries) & np.array([w is not None for w in wkbs], dtype=bool))
    if len(unreadable):
        raise InputFormatError(
            f"{where} feature FID {fids[unreadable[0]]} field 'geometry': expected a polygon GEOS can read but "
            "got NaN or infinite coordinates or an unclosed ring; fix or remove the feature"
        )
    coords, owner = shapely.get_coordinates(geometries, return_index=True)
    bad = ~np.isfinite(coords).all(axis=1)
    if bad.any():
        fid = fids[owner[np.argmax(bad)]]
        raise InputFormatError(
            f"{where} feature FID {fid} field 'geometry': expected finite coordinates but got NaN or "
            "infinity; fix or remove the feature"
        )
    return geometries


def _layer_srs(source):
    """The layer's CRS, None when it has none (GeoPackage marks that with an "Undefined" SRS)."""
    srs = source.GetSpatialRef()
    if srs is None or (srs.GetName() in _UNDEFINED_SRS_NAMES and not srs.GetAuthorityName(None)):
        return None
    return srs


def _described(srs):
    name = srs.GetName() or "an unnamed CRS"
    authority = srs.GetAuthorityName(None)
    code = srs.GetAuthorityCode(None)
    return f"{name} ({authority}:{code})" if authority and code else name


def _target_srs(osr, layer_srs, frame, target_srs, where):
    """The CRS the layer's coordinates are expressed in after loading (None without CRS)."""
    if frame is not None:
        target = _srs_from_wkt(osr, frame.crs_wkt) if frame.crs_wkt else None
        if target is None and layer_srs is None:
            warnings.warn(
                f"{where}: neither this layer nor the reference layer has a CRS; coordinates are "
                "compared as they are, in the units of the pixel size",
                UserWarning,
                stacklevel=3,
            )
        elif target is None:
            raise InputFormatError(
                f"{where}: expected no CRS like the reference layer but got {_described(layer_srs)}; "
                "assign the reference layer its CRS (e.g. ogr2ogr -a_srs) so both can be compared"
            )
        elif layer_srs is None:
            raise InputFormatError(
                f"{where}: expected a CRS like the reference layer's {_described(target)} but the layer "
                "has none; assign it its CRS (e.g. ogr2ogr -a_srs EPSG:CODE)"
            )
        return target
    if target_srs is None:
        return layer_srs
    target = osr.SpatialReference()
    try:
        target.SetFromUserInput(str(target_srs))
    except RuntimeError as exc:
        raise InvalidParameterError(
            f"Expected target_srs to be a CRS definition (EPSG:CODE, WKT, PROJ) but got {target_srs!r} ({exc})"
        ) from None
    if layer_srs is None:
        raise InputFormatError(
            f"{where}: expected a CRS to reproject from to {_described(target)} but the layer has none; "
            "assign it its CRS (e.g. ogr2ogr -a_srs EPSG:CODE)"
        )
    return target


def _srs_from_wkt(osr, wkt):
    srs = osr.SpatialReference()
    srs.ImportFromWkt(wkt)
    return srs


def _traditional(osr, srs):
    """A copy of ``srs`` whose axis order is x = easting/longitude, y = northing/latitude."""
    copy = srs.Clone()
    copy.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    return copy


def _same_srs(first, second):
    return bool(first.IsSame(second, ["IGNORE_DATA_AXIS_TO_SRS_AXIS_MAPPING=YES"]))


def _reprojected(osr, geometries, layer_srs, target, where, target_name="the reference CRS"):
    source_srs, target_srs = _traditional(osr, layer_srs), _traditional(osr, target)
    transformation = osr.CoordinateTransformation(source_srs, target_srs)

    def transform(coords):
        if len(coords) == 0:
            return coords
        return np.asarray(transformation.TransformPoints(np.ascontiguousarray(coords)), dtype=np.float64)[:, :2]

    try:
        return shapely.transform(geometries, transform)
    except RuntimeError as exc:
        raise InputFormatError(
            f"{where}: expected coordinates that can be reprojected from {_described(layer_srs)} to "
            f"{target_name} {_described(target)} but got an error ({exc}); check the layer's CRS"
        ) from None


def _reference_frame(geometries, target, pixel_size, patch_size_px, where, check_pixel_size=True):
    if pixel_size is None:
        if target is not None and target.IsGeographic():
            raise InvalidParameterError(
                f"{where}: the CRS {_described(target)} is in degrees; pass --pixel-size in degrees per "
                "pixel or reproject to a projected CRS"
            )
        units = f" ({target.GetLinearUnitsName()})" if target is not None else ""
        raise InvalidParameterError(
            f"{where}: expected a pixel size but got none; a vector layer has no resolution, so pass "
            f"--pixel-size in map units{units} per pixel, the ground sampling distance of the imagery"
        )
    _check_pixel_size(pixel_size)
    if check_pixel_size and target is not None:
        _check_ground_size(pixel_size, target, where)
    crs_wkt = target.ExportToWkt(["FORMAT=WKT2_2018"]) if target is not None else None
    bounds = shapely.total_bounds(geometries) if len(geometries) else (math.nan,) * 4
    return frame_for_bounds(bounds, pixel_size=pixel_size, patch_size_px=patch_size_px, crs_wkt=crs_wkt)
