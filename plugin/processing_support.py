"""Glue between the runs and Processing: package checks, error conversion, styled loading of outputs.

The algorithm modules import only this and other light modules at load time, so the
provider registers even when QGIS's Python lacks shapely or onnxruntime; each
``processAlgorithm`` then calls :func:`require_packages` first, which fails with the
install instructions, and imports the run functions only after that.
"""

from qgis.core import QgsProcessingContext, QgsProcessingException, QgsProcessingLayerPostProcessorInterface

from .dependencies import require_for_processing
from .project_layers import LAYER_TITLES
from .styles import ERROR_LAYERS, apply_style

__all__ = [
    "EVALUATION_PACKAGES",
    "VECTORIZE_PACKAGES",
    "StyleOnLoad",
    "as_processing_error",
    "load_outputs_on_completion",
    "require_packages",
]

#: Packages an evaluation imports (names of ``dependencies.REQUIREMENTS``).
EVALUATION_PACKAGES = ("numpy", "shapely", "scipy")
#: Packages a vectorization imports.
VECTORIZE_PACKAGES = ("numpy", "shapely", "scipy", "onnxruntime")


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


class StyleOnLoad(QgsProcessingLayerPostProcessorInterface):
    """Give a loaded evaluation layer its QML style and aliases (runs on the main thread).

    Parameters
    ----------
    layer_name : str
        The GeoPackage layer name (one of :data:`~.styles.ERROR_LAYERS`).
    """

    def __init__(self, layer_name):
        super().__init__()
        self.layer_name = layer_name

    def postProcessLayer(self, layer, context, feedback):  # noqa: N802 - QGIS API name.
        """Apply the style of :attr:`layer_name` to ``layer``."""
        apply_style(layer, self.layer_name)
        if self in _WAITING:
            _WAITING.remove(self)


def load_outputs_on_completion(context, gpkg_path, prefix):
    """Ask Processing to load the evaluation layers of ``gpkg_path``, styled, when the run ends.

    Processing loads them only where a project is open (QGIS desktop); ``qgis_process`` and
    ``processing.run`` ignore the request.

    Parameters
    ----------
    context : QgsProcessingContext
    gpkg_path : str or Path
        The evaluation GeoPackage.
    prefix : str
        Put before each layer title ("Evaluation: Missed holes").

    Returns
    -------
    list of StyleOnLoad
        The post-processors (kept alive by this module until they have run).
    """
    processors = []
    for name in ERROR_LAYERS:
        details = QgsProcessingContext.LayerDetails(f"{prefix}: {LAYER_TITLES[name]}", context.project(), name)
        processor = StyleOnLoad(name)
        _WAITING.append(processor)
        details.setPostProcessor(processor)
        context.addLayerToLoadOnCompletion(f"{gpkg_path}|layername={name}", details)
        processors.append(processor)
    return processors
