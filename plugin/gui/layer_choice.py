"""Which layers an evaluation takes by default, and the refusal of one layer in both roles.

The dock and the Processing dialogs share these rules: the prediction defaults to the
active polygon layer (else the first one of the project), the reference to another
polygon layer, never the same one; and an evaluation of a layer against itself (same
layer, or the same data source opened twice) is refused before any work, because it
would report a perfect score. :func:`source_raster` finds the raster a vectorized layer
came from, so its pixel size becomes the evaluation pixel.
"""

import json

from qgis.core import QgsMapLayerType, QgsVectorLayer, QgsWkbTypes

from ..errors import LayerInputError

__all__ = ["check_distinct_layers", "default_evaluation_layers", "polygon_layers", "source_raster"]

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
    """The default prediction and reference layers: two different polygon layers when there are two.

    Parameters
    ----------
    project : QgsProject
    active_layer : QgsMapLayer, optional
        The layer selected in the Layers panel; it becomes the prediction when it is a
        polygon layer.

    Returns
    -------
    prediction, reference : QgsVectorLayer or None
        ``reference`` is None unless the project has a second polygon layer (with
        another data source).
    """
    layers = polygon_layers(project)
    if not layers:
        return None, None
    prediction = active_layer if any(layer is active_layer for layer in layers) else layers[0]
    others = [layer for layer in layers if not _same_data(layer, prediction)]
    return prediction, (others[0] if others else None)


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
    if first is second or first.id() == second.id():
        return True
    return (isinstance(first, QgsVectorLayer) and isinstance(second, QgsVectorLayer)
            and first.providerType() == second.providerType() and first.source() == second.source()
            and first.providerType() != "memory")


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
