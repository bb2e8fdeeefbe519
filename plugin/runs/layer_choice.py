"""Which layers an evaluation takes by default, and the refusal of one layer in both roles.

The dock and the Processing dialogs share these rules: the prediction defaults to the
layer the latest vectorization wrote (else the active polygon layer, else the first one
of the project), the reference to another polygon layer, never the same one; and an evaluation of a layer against itself (same
layer, or the same data source opened twice) is refused before any work, because it
would report a perfect score. :func:`source_raster` finds the raster a vectorized layer
came from, so its pixel size becomes the evaluation pixel.
"""

import json
import os

from qgis.core import QgsMapLayerType, QgsProviderRegistry, QgsVectorLayer, QgsWkbTypes

from ..errors import LayerInputError

__all__ = ["check_distinct_layers", "default_evaluation_layers", "default_raster", "default_reference", "polygon_layers", "source_raster",
           "unique_layer_name"]

_PROVENANCE_PREFIX = "provenance: "


def polygon_layers(project):
    """The polygon vector layers of ``project``, in layer-tree order (top first).

    Parameters
    ----------
    project : QgsProject

    Returns
    -------
    list of QgsVectorLayer
    """
    ordered = [node.layer() for node in project.layerTreeRoot().findLayers()]
    return [layer for layer in ordered
            if layer is not None and layer.type() == QgsMapLayerType.VectorLayer
            and layer.geometryType() == QgsWkbTypes.PolygonGeometry]


def default_evaluation_layers(project, active_layer=None):
    """The default prediction and reference layers: never one layer twice.

    The prediction is the layer the latest PolyTopo vectorization wrote (its provenance
    metadata), else the active polygon layer, else the first polygon layer; the
    reference is another polygon layer on other data, one that no vectorization wrote
    when there is one.

    Parameters
    ----------
    project : QgsProject
    active_layer : QgsMapLayer, optional
        The layer selected in the Layers panel.

    Returns
    -------
    prediction, reference : QgsVectorLayer or None
        ``reference`` is None unless the project has a second polygon layer (with
        another data source).
    """
    layers = polygon_layers(project)
    if not layers:
        return None, None
    written = {layer.id(): _vectorized_at(layer) for layer in layers}
    latest = max((layer for layer in layers if written[layer.id()]), key=lambda layer: written[layer.id()],
                 default=None)
    if latest is not None:
        prediction = latest
    else:
        prediction = active_layer if any(layer is active_layer for layer in layers) else layers[0]
    others = sorted((layer for layer in layers if not _same_data(layer, prediction)),
                    key=lambda layer: bool(written[layer.id()]))  # stable: tree order within each kind
    return prediction, (others[0] if others else None)


def _vectorized_at(layer):
    """The UTC time (ISO text) a PolyTopo vectorization wrote ``layer``, or "" for any other layer."""
    for entry in layer.metadata().history():
        if entry.startswith(_PROVENANCE_PREFIX):
            try:
                return str(json.loads(entry[len(_PROVENANCE_PREFIX):]).get("created_utc") or "")
            except (json.JSONDecodeError, AttributeError):
                return ""
    return ""


def unique_layer_name(project, name):
    """``name``, or ``name (2)``, ``name (3)``, … when the project has a layer of that name already.

    Repeated runs on one raster then add layers the Layers panel tells apart.
    """
    taken = {layer.name() for layer in project.mapLayers().values()}
    if name not in taken:
        return name
    number = 2
    while f"{name} ({number})" in taken:
        number += 1
    return f"{name} ({number})"


def default_raster(project, active_layer=None):
    """The raster a vectorization defaults to: the active layer when it is a raster, else the first raster.

    Parameters
    ----------
    project : QgsProject
    active_layer : QgsMapLayer, optional

    Returns
    -------
    QgsRasterLayer or None
    """
    if active_layer is not None and active_layer.type() == QgsMapLayerType.RasterLayer:
        return active_layer
    ordered = [node.layer() for node in project.layerTreeRoot().findLayers()]
    rasters = [layer for layer in ordered if layer is not None and layer.type() == QgsMapLayerType.RasterLayer]
    return rasters[0] if rasters else None


def default_reference(project):
    """The reference a new vectorization is scored against: the first polygon layer no vectorization wrote."""
    candidates = [layer for layer in polygon_layers(project) if not _vectorized_at(layer)]
    return candidates[0] if candidates else None


def check_distinct_layers(prediction, reference):
    """Refuse to evaluate a layer against itself.

    Parameters
    ----------
    prediction, reference : QgsVectorLayer or None
        None is not checked (a missing layer is reported elsewhere).

    Raises
    ------
    LayerInputError
        Both are the same layer, or two layers on the same data source.
    """
    if prediction is None or reference is None or not _same_data(prediction, reference):
        return
    raise LayerInputError(
        f"Expected two different layers but the prediction layer {prediction.name()!r} is also the reference "
        "layer (evaluating a layer against itself gives a perfect score); choose the reference polygons"
    )


def _same_data(first, second):
    """True for one layer, or two layers reading the same table of the same dataset (two tables of one file differ)."""
    if first is second or first.id() == second.id():
        return True
    if not (isinstance(first, QgsVectorLayer) and isinstance(second, QgsVectorLayer)):
        return False
    if first.providerType() != second.providerType() or first.providerType() == "memory":
        return False
    if first.providerType() == "ogr":
        return _ogr_table(first) == _ogr_table(second)
    return first.source() == second.source()


def _ogr_table(layer):
    """``(real path, table name, subset)`` of an OGR layer, however its source names the table.

    ``x.gpkg``, ``x.gpkg|layerid=0`` and ``x.gpkg|layername=<first>`` are one table;
    ``x.gpkg|layername=a`` and ``x.gpkg|layername=b`` are two.
    """
    parts = QgsProviderRegistry.instance().decodeUri("ogr", layer.source())
    path = parts.get("path") or layer.source()
    name = parts.get("layerName")
    if not name:
        name = _table_name(path, parts.get("layerId") or 0)
    return os.path.realpath(path), name, parts.get("subset") or layer.subsetString() or ""


def _table_name(path, index):
    from osgeo import ogr

    dataset = ogr.Open(path)
    if dataset is None or not 0 <= int(index) < dataset.GetLayerCount():
        return f"#{index}"
    return dataset.GetLayer(int(index)).GetName()


def source_raster(layer, project):
    """The project's raster layer that ``layer`` was vectorized from, read from its provenance metadata.

    Parameters
    ----------
    layer : QgsVectorLayer or None
        A polygon layer written by :func:`polytopo.plugin.runs.vectorize.vectorize_layer` (its metadata
        history holds ``provenance: {...}``).
    project : QgsProject

    Returns
    -------
    QgsRasterLayer or None
        None when the layer has no provenance or its raster is not in the project.
    """
    if layer is None:
        return None
    sources = set()
    for entry in layer.metadata().history():
        if entry.startswith(_PROVENANCE_PREFIX):
            try:
                raster = json.loads(entry[len(_PROVENANCE_PREFIX):]).get("raster") or {}
            except (json.JSONDecodeError, AttributeError):
                continue
            sources.add(raster.get("source"))
    for candidate in project.mapLayers().values():
        if candidate.type() == QgsMapLayerType.RasterLayer and (
                candidate.source() in sources or candidate.publicSource() in sources):
            return candidate
    return None
