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

import math
import warnings

import shapely

from ...core.errors import InputFormatError, InvalidParameterError
from ...core.vector_files import (
    PixelFrame,
    describe_srs,
    frame_for_bounds,
    spatial_reference,
    map_geometries,
    ogr_exceptions,
    open_dataset,
    read_features,
    reprojected,
    same_srs,
    srs_from_wkt,
    validate_patch_size,
    validate_pixel_size,
)
from .frame import instances_in_frame

__all__ = ["SCORE_FIELD", "implied_score_field", "load_vector_layer"]

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
        validate_patch_size(patch_size_px)
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
        dataset = open_dataset(gdal, path)
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
        fids, wkbs, values, skipped = read_features(source, wanted)
        layer_srs = spatial_reference(source)
        target = _target_srs(osr, layer_srs, frame, target_srs, where)
        geometries = map_geometries(wkbs, fids, where)
        if layer_srs is not None and target is not None and not same_srs(layer_srs, target):
            geometries = reprojected(osr, geometries, layer_srs, target, where)
        if frame is None:
            frame = _reference_frame(geometries, target, pixel_size, patch_size_px, where, check_pixel_size)
    instance_set = instances_in_frame(
        frame, geometries, source_ids=fids, source=str(path), values=values, image_field=image_field,
        score_field=score_field if scored else None, default_score=default_score, scored=scored,
        category_field=category_field, categories=categories, skipped=skipped,
        describe=lambda index: f"{where} feature FID {fids[index]}")
    return instance_set, frame


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
        f"--pixel-size {pixel_size:g} in the {unit} of {describe_srs(srs)} is {_metres(ground)} per pixel; for "
        f"0.5 m pixels pass --pixel-size {suggestion:.6g} ({unit}), or --allow-any-pixel-size "
        "(check_pixel_size=False) if it is meant"
    )


def _metres(value):
    if value >= 1000:
        return f"{value / 1000:.4g} km"
    return f"{value:.4g} m" if value >= 1 else f"{value * 1000:.4g} mm"


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


def _target_srs(osr, layer_srs, frame, target_srs, where):
    """The CRS the layer's coordinates are expressed in after loading (None without CRS)."""
    if frame is not None:
        target = srs_from_wkt(osr, frame.crs_wkt) if frame.crs_wkt else None
        if target is None and layer_srs is None:
            warnings.warn(
                f"{where}: neither this layer nor the reference layer has a CRS; coordinates are "
                "compared as they are, in the units of the pixel size",
                UserWarning,
                stacklevel=3,
            )
        elif target is None:
            raise InputFormatError(
                f"{where}: expected no CRS like the reference layer but got {describe_srs(layer_srs)}; "
                "assign the reference layer its CRS (e.g. ogr2ogr -a_srs) so both can be compared"
            )
        elif layer_srs is None:
            raise InputFormatError(
                f"{where}: expected a CRS like the reference layer's {describe_srs(target)} but the layer "
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
            f"{where}: expected a CRS to reproject from to {describe_srs(target)} but the layer has none; "
            "assign it its CRS (e.g. ogr2ogr -a_srs EPSG:CODE)"
        )
    return target


def _reference_frame(geometries, target, pixel_size, patch_size_px, where, check_pixel_size=True):
    if pixel_size is None:
        if target is not None and target.IsGeographic():
            raise InvalidParameterError(
                f"{where}: the CRS {describe_srs(target)} is in degrees; pass --pixel-size in degrees per "
                "pixel or reproject to a projected CRS"
            )
        units = f" ({target.GetLinearUnitsName()})" if target is not None else ""
        raise InvalidParameterError(
            f"{where}: expected a pixel size but got none; a vector layer has no resolution, so pass "
            f"--pixel-size in map units{units} per pixel, the ground sampling distance of the imagery"
        )
    validate_pixel_size(pixel_size)
    if check_pixel_size and target is not None:
        _check_ground_size(pixel_size, target, where)
    crs_wkt = target.ExportToWkt(["FORMAT=WKT2_2018"]) if target is not None else None
    bounds = shapely.total_bounds(geometries) if len(geometries) else (math.nan,) * 4
    return frame_for_bounds(bounds, pixel_size=pixel_size, patch_size_px=patch_size_px, crs_wkt=crs_wkt)
