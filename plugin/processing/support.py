"""Glue between the runs and Processing: package checks, error conversion, styled loading of outputs.

The algorithm modules import only this and other light modules at load time, so the
provider registers even when QGIS's Python lacks shapely or onnxruntime; each
``processAlgorithm`` then calls :func:`require_packages` first, which fails with the
install instructions, and imports the run functions only after that.
"""

from qgis.core import (
    QgsProcessingContext,
    QgsProcessingException,
    QgsProcessingLayerPostProcessorInterface,
    QgsProcessingParameterNumber,
)

from ..setup.dependencies import require_for_processing
from ..runs.project_layers import LAYER_TITLES
from ..runs.styles import ERROR_LAYERS, apply_style, legend_of_what_is_drawn

__all__ = [
    "EVALUATION_PACKAGES",
    "ExplainedRanges",
    "VECTORIZE_PACKAGES",
    "StyleOnLoad",
    "as_processing_error",
    "RunGroup",
    "load_layer_by_source",
    "load_outputs_on_completion",
    "number_range_problem",
    "require_packages",
    "run_group_name",
]

#: Packages an evaluation imports (names of ``dependencies.REQUIREMENTS``).
EVALUATION_PACKAGES = ("numpy", "shapely", "scipy")
#: Packages a vectorization imports.
VECTORIZE_PACKAGES = ("numpy", "shapely", "scipy", "onnxruntime")


_UNBOUNDED = 1e300


def number_range_problem(algorithm, parameters):
    """The message for the first number parameter of ``parameters`` outside its range, or None.

    QGIS itself says only "Incorrect parameter value for X"; this names the parameter,
    the allowed range and the value given.

    Parameters
    ----------
    algorithm : QgsProcessingAlgorithm
    parameters : dict
        The run's parameter values (a string from ``qgis_process`` included).
    """
    for definition in algorithm.parameterDefinitions():
        if not isinstance(definition, QgsProcessingParameterNumber):
            continue
        value = parameters.get(definition.name())
        if value is None or definition.checkValueIsAcceptable(value):
            continue
        whole = definition.dataType() == QgsProcessingParameterNumber.Integer
        low, high = definition.minimum(), definition.maximum()
        kind = "a whole number" if whole else "a number"
        if high < _UNBOUNDED and low > -_UNBOUNDED:
            allowed = f"{kind} from {low:g} to {high:g}"
        elif low > -_UNBOUNDED:
            allowed = f"{kind} >= {low:g}"
        elif high < _UNBOUNDED:
            allowed = f"{kind} <= {high:g}"
        else:
            allowed = kind
        return (f"Expected {definition.name()} ({definition.description()}) to be {allowed} but got {value!r}; "
                "change the value")
    return None


class ExplainedRanges:
    """Mixin of the PolyTopo algorithms: a number outside its range is refused with the range.

    Put it before ``QgsProcessingAlgorithm`` among the bases; an algorithm that checks more
    calls ``super().checkParameterValues`` first.
    """

    def checkParameterValues(self, parameters, context):  # noqa: N802 - QGIS API name.
        problem = number_range_problem(self, parameters)
        if problem is not None:
            return False, problem
        return super().checkParameterValues(parameters, context)


def require_packages(names):
    """Raise :class:`QgsProcessingException` with install instructions when one of ``names`` is missing."""
    require_for_processing(names)


def as_processing_error(exc):
    """A :class:`QgsProcessingException` with the message of a plugin error (chain the cause)."""
    return QgsProcessingException(str(exc))


#: Post-processors waiting for their layer. Processing keeps only a C++ pointer to them and
#: the algorithm instance that made them is gone when the layers load, so this list keeps
#: the Python objects alive; each leaves it once it has run. (Runs whose layers never load,
#: headless ones, leave their few small objects here.)
_WAITING = []


class RunGroup:
    """The layer-tree group of one run's outputs, made when its first layer loads.

    Parameters
    ----------
    name : str
        ``PolyTopo — <prediction or raster> vs <reference>``.
    hidden : iterable of str
        Ids of the run's input layers, hidden when the group is made (as the dock hides
        them), so the styled error classes are what the map shows.
    """

    def __init__(self, name, hidden=()):
        self.name = name
        self.hidden = tuple(hidden)
        self.node = None
        self.ranks = {}

    def adopt(self, layer, project, rank):
        """Move ``layer``'s node from wherever Processing put it into this group, at place ``rank``.

        Processing loads layers in its own order; ``rank`` (lower is higher in the tree)
        keeps the order of :data:`~polytopo.plugin.runs.styles.ERROR_LAYERS` whatever that order is.
        Returns the layer's tree node in the group.
        """
        root = project.layerTreeRoot()
        if self.node is None:
            self.node = root.insertGroup(0, self.name)
            for layer_id in self.hidden:
                node = root.findLayer(layer_id)
                if node is not None:
                    node.setItemVisibilityChecked(False)
        position = sum(1 for other in self.ranks.values() if other < rank)
        self.ranks[layer.id()] = rank
        current = root.findLayer(layer.id())
        if current is None:
            return self.node.insertLayer(position, layer)
        moved = current.clone()
        self.node.insertChildNode(position, moved)
        current.parent().removeChildNode(current)
        return moved


class StyleOnLoad(QgsProcessingLayerPostProcessorInterface):
    """Give a loaded output layer its style and aliases and put it into its run's group (main thread).

    Parameters
    ----------
    layer_name : str or None
        The GeoPackage layer name (one of :data:`~polytopo.plugin.runs.styles.ERROR_LAYERS`); None for a layer
        that keeps its own style (the vectorized polygons).
    group : RunGroup
    rank : int
        Place in the group (lower is higher).
    """

    def __init__(self, layer_name, group, rank, visible=True):
        super().__init__()
        self.layer_name = layer_name
        self.group = group
        self.rank = rank
        self.visible = visible

    def postProcessLayer(self, layer, context, feedback):  # noqa: N802 - QGIS API name.
        """Apply the style of :attr:`layer_name` to ``layer`` and move it into the run's group."""
        if self.layer_name is not None:
            apply_style(layer, self.layer_name)
            legend_of_what_is_drawn(layer)
        if context.project() is not None:
            node = self.group.adopt(layer, context.project(), self.rank)
            node.setItemVisibilityChecked(self.visible)
        if self in _WAITING:
            _WAITING.remove(self)


def run_group_name(prediction_name, reference_name):
    """``PolyTopo — <prediction> vs <reference>``: the group of one run's layers, in the dock and in Processing.

    Examples
    --------
    >>> run_group_name("atlanta", "buildings")
    'PolyTopo — atlanta vs buildings'
    """
    return f"PolyTopo — {prediction_name} vs {reference_name}"


def load_layer_by_source(context, destination, source):
    """Make Processing load the output layer ``source`` where it would load the file ``destination``.

    A GeoPackage output may hold other layers (PolyTopo adds its layer to an existing
    file), and Processing would load the first layer of the file; ``source`` names the
    layer (``path|layername=…``).

    Returns
    -------
    QgsProcessingContext.LayerDetails or None
        The details of the layer to load (None when Processing loads nothing).
    """
    if not context.willLoadLayerOnCompletion(destination):
        return None
    if source != destination:
        layers = context.layersToLoadOnCompletion()
        layers[source] = layers.pop(destination)
        context.setLayersToLoadOnCompletion(layers)
    return context.layerToLoadOnCompletionDetails(source)


def load_outputs_on_completion(context, gpkg_path, group_name, polygons=None, hidden=()):
    """Ask Processing to load the evaluation layers of ``gpkg_path``, styled, in one group, when the run ends.

    Processing loads them only where a project is open (QGIS desktop); ``qgis_process`` and
    ``processing.run`` ignore the request.

    Parameters
    ----------
    context : QgsProcessingContext
    gpkg_path : str or Path
        The evaluation GeoPackage.
    group_name : str
        The group of this run (:func:`run_group_name`).
    polygons : tuple of (str, str, str), optional
        ``(output destination, layer source, layer name)`` of the vectorized polygons,
        loaded from their layer source (``path|layername=…``) into the group, below the
        error layers and hidden, as the dock leaves the prediction layer.
    hidden : iterable of str
        Ids of the input layers to hide when the outputs load (the dock hides them too).

    Returns
    -------
    list of StyleOnLoad
        The post-processors (kept alive by this module until they have run).
    """
    group = RunGroup(group_name, hidden)
    processors = []
    if polygons is not None and context.willLoadLayerOnCompletion(polygons[0]):
        destination, source, name = polygons
        details = load_layer_by_source(context, destination, source)
        details.name = name
        details.forceName = True
        processor = StyleOnLoad(None, group, len(ERROR_LAYERS), visible=False)
        details.setPostProcessor(processor)
        processors.append(processor)
    for rank, name in enumerate(ERROR_LAYERS):
        details = QgsProcessingContext.LayerDetails(LAYER_TITLES[name], context.project(), name)
        details.forceName = True
        processor = StyleOnLoad(name, group, rank)
        details.setPostProcessor(processor)
        context.addLayerToLoadOnCompletion(f"{gpkg_path}|layername={name}", details)
        processors.append(processor)
    _WAITING.extend(processors)
    return processors
