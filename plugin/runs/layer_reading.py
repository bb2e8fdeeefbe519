"""Read QGIS vector layers into shapely geometries in one CRS.

The readers run in worker threads: they touch no GUI and no project, only the layer's
data provider (for a :class:`~qgis.core.QgsVectorLayer`) or the feature source they are
given (a Processing source). Geometry crosses from QGIS to shapely as WKB.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import shapely
from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsCoordinateTransform,
    QgsCsException,
    QgsFeatureRequest,
    QgsGeometry,
    QgsProject,
    QgsVectorLayer,
    QgsWkbTypes,
)
from qgis.PyQt.QtCore import QVariant

from ..errors import LayerInputError

__all__ = ["LayerFeatures", "describe_layer", "features_from_polygons", "read_polygon_features", "layer_crs",
           "CANCEL_CHECK_EVERY"]

#: Features read between two cancellation checks.
CANCEL_CHECK_EVERY = 2000

_POLYGONAL = (QgsWkbTypes.PolygonGeometry, QgsWkbTypes.UnknownGeometry)


@dataclass(frozen=True)
class LayerFeatures:
    """The polygons of one layer, in map units of the target CRS.

    Attributes
    ----------
    name : str
        Layer name, for messages and provenance.
    source : str
        The layer's public source (file path and layer name; passwords removed).
    crs : QgsCoordinateReferenceSystem
        The layer's own CRS (before reprojection).
    fids : list of int
        QGIS feature id of every feature read (GeoPackage: the ``fid`` column).
    geometries : numpy.ndarray of shapely.Geometry
        One geometry per feature in map units of the target CRS; None where the feature
        had no or an empty geometry.
    values : dict
        ``{field name: [value per feature]}`` for the requested fields; NULL is None.
    skipped : dict
        ``{"null_geometry": n, "empty_geometry": n}`` for the features without geometry.
    """

    name: str
    source: str
    crs: object
    fids: list
    geometries: np.ndarray
    values: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)

    def bounds(self):
        """``(min_x, min_y, max_x, max_y)`` of every geometry, map units; NaN when there is none."""
        present = self.geometries[~shapely.is_missing(self.geometries)]
        return tuple(shapely.total_bounds(present).tolist()) if len(present) else (math.nan,) * 4


def _source_of(layer):
    if isinstance(layer, QgsVectorLayer):
        if not layer.isValid():
            raise LayerInputError(
                f"Expected a valid vector layer but layer {layer.name()!r} is not valid "
                f"(source {layer.publicSource()!r}); check that its file exists and can be read"
            )
        return layer.dataProvider(), layer.crs(), layer.name(), layer.publicSource()
    name = layer.sourceName() if hasattr(layer, "sourceName") else type(layer).__name__
    return layer, layer.sourceCrs(), name, name


def describe_layer(layer):
    """``{"name", "source", "crs"}`` of a layer, feature source or :class:`LayerFeatures`, for provenance records."""
    if isinstance(layer, LayerFeatures):
        crs, name, source = layer.crs, layer.name, layer.source
    else:
        _, crs, name, source = _source_of(layer)
    return {"name": name, "source": source, "crs": crs.authid() or crs.toWkt()}


def layer_crs(layer):
    """The CRS of a vector layer or feature source (the layer CRS, which the user may override)."""
    return _source_of(layer)[1]


def read_polygon_features(layer, *, role, fields=(), numeric_fields=(), target_crs=None,
                          transform_context=None, steps=None):
    """Read every polygon feature of ``layer``, reprojected to ``target_crs``.

    Parameters
    ----------
    layer : QgsVectorLayer or QgsFeatureSource
        A polygon layer (Polygon, MultiPolygon, CurvePolygon, MultiSurface; curves are
        segmentized). A QgsVectorLayer is read through its data provider, so unsaved
        edits are not seen.
    role : str
        What the layer is ("prediction", "reference"), for messages.
    fields : iterable of str
        Attributes to read (None entries are ignored).
    numeric_fields : iterable of str
        The subset of ``fields`` that must be numeric (a score field).
    target_crs : QgsCoordinateReferenceSystem, optional
        CRS to reproject to; None or the layer's own CRS reads coordinates as they are.
    transform_context : QgsCoordinateTransformContext, optional
        Datum transformations to use; defaults to the current project's. Take it on the
        main thread before starting a worker thread.
    steps : RunSteps, optional
        Checked for cancellation every :data:`CANCEL_CHECK_EVERY` features.

    Returns
    -------
    LayerFeatures

    Raises
    ------
    LayerInputError
        The layer is not valid, is not a polygon layer, lacks a field or a CRS (while
        the other side has one), a field is not numeric, or a feature cannot be
        reprojected.
    """
    source, crs, name, public_source = _source_of(layer)
    where = f"{role} layer {name!r}"
    _check_polygon_type(source, where)
    wanted = list(dict.fromkeys(f for f in fields if f))
    indices = _field_indices(source, wanted, set(numeric_fields), where)
    transform = _transform(crs, target_crs, transform_context, where)
    request = QgsFeatureRequest().setSubsetOfAttributes(list(indices.values()))
    fids, wkbs, skipped = [], [], {"null_geometry": 0, "empty_geometry": 0}
    values = {name_: [] for name_ in wanted}
    for count, feature in enumerate(source.getFeatures(request)):
        if steps is not None and count % CANCEL_CHECK_EVERY == 0:
            steps.check()
        fids.append(int(feature.id()))
        for field_name, index in indices.items():
            values[field_name].append(_python_value(feature.attribute(index)))
        wkbs.append(_geometry_wkb(feature.geometry(), feature.id(), transform, skipped, where))
    return _features(name, public_source, crs, fids, wkbs, values, skipped)


def features_from_polygons(polygons, *, name, source, crs, first_fid, values, target_crs=None,
                           transform_context=None):
    """The features a layer holding ``polygons`` would give :func:`read_polygon_features`.

    Parameters
    ----------
    polygons : sequence of shapely.Geometry
        In map units of ``crs``, in feature order.
    name, source : str
        Layer name and source, for messages and provenance.
    crs : QgsCoordinateReferenceSystem
        CRS of ``polygons``.
    first_fid : int
        Feature id of the first polygon (a GeoPackage numbers from 1, GeoJSON from 0).
    values : dict
        ``{field name: [value per polygon]}``.
    target_crs, transform_context
        As for :func:`read_polygon_features`: the same QGIS transformation reprojects them.

    Returns
    -------
    LayerFeatures
    """
    where = f"prediction layer {name!r}"
    transform = _transform(crs, target_crs, transform_context, where)
    skipped = {"null_geometry": 0, "empty_geometry": 0}
    fids = list(range(first_fid, first_fid + len(polygons)))
    wkbs = [_geometry_wkb(_qgs_geometry(polygon), fid, transform, skipped, where)
            for fid, polygon in zip(fids, polygons)]
    return _features(name, source, crs, fids, wkbs, values, skipped)


def _qgs_geometry(polygon):
    geometry = QgsGeometry()
    geometry.fromWkb(polygon.wkb)
    return geometry


def _features(name, source, crs, fids, wkbs, values, skipped):
    geometries = shapely.from_wkb(np.array(wkbs, dtype=object)) if wkbs else np.empty(0, dtype=object)
    return LayerFeatures(name, source, crs, fids, np.asarray(geometries, dtype=object), values,
                         {reason: n for reason, n in skipped.items() if n})


def _check_polygon_type(source, where):
    geometry_type = QgsWkbTypes.geometryType(source.wkbType())
    if geometry_type not in _POLYGONAL:
        raise LayerInputError(
            f"{where}: expected a polygon layer but got geometry type "
            f"{QgsWkbTypes.displayString(source.wkbType()) or 'none'}; choose a layer of polygons"
        )


def _field_indices(source, wanted, numeric, where):
    available = source.fields()
    indices = {}
    for name in wanted:
        index = available.lookupField(name)
        if index < 0:
            raise LayerInputError(
                f"{where}: expected a field {name!r} but the layer has none; available fields: "
                f"{sorted(available.names())}"
            )
        if name in numeric and not available.at(index).isNumeric():
            raise LayerInputError(
                f"{where}: expected field {name!r} to be numeric but it is of type "
                f"{available.at(index).typeName()}; choose a numeric score field"
            )
        indices[name] = index
    return indices


def _transform(crs, target_crs, transform_context, where):
    if target_crs is None or crs == target_crs:
        return None
    if not crs.isValid() or not target_crs.isValid():
        if not crs.isValid() and not target_crs.isValid():
            return None
        missing = where if not crs.isValid() else "the reference layer"
        raise LayerInputError(
            f"Expected both layers to have a coordinate reference system but {missing} has none; "
            "set the layer CRS (Layer Properties › Source) before evaluating"
        )
    context = transform_context if transform_context is not None else QgsProject.instance().transformContext()
    return QgsCoordinateTransform(QgsCoordinateReferenceSystem(crs), QgsCoordinateReferenceSystem(target_crs),
                                  context)


def _python_value(value):
    if isinstance(value, QVariant):  # NULL attributes arrive as a null QVariant
        return None if value.isNull() else value.value()
    return value


def _geometry_wkb(geometry, fid, transform, skipped, where):
    if geometry.isNull():
        skipped["null_geometry"] += 1
        return None
    if geometry.isEmpty():
        skipped["empty_geometry"] += 1
        return None
    if QgsWkbTypes.isCurvedType(geometry.wkbType()):
        geometry.convertToStraightSegment()
    if transform is not None:
        try:
            geometry.transform(transform)
        except QgsCsException as exc:
            raise LayerInputError(
                f"{where} feature {fid}: expected coordinates that can be reprojected from "
                f"{transform.sourceCrs().authid()} to {transform.destinationCrs().authid()} but got an "
                f"error ({exc}); check the layer's CRS"
            ) from None
    return bytes(geometry.asWkb())
