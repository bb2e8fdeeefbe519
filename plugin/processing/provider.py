"""The PolyTopo Processing provider."""

from qgis.core import QgsProcessingProvider
from qgis.PyQt.QtGui import QIcon

from .evaluate_algorithm import EvaluateAlgorithm
from .vectorize_algorithm import VectorizeAlgorithm
from .vectorize_evaluate_algorithm import VectorizeEvaluateAlgorithm
from ..resource_paths import ICON_PATH

__all__ = ["PROVIDER_ID", "PolyTopoProvider"]

#: Processing provider id; algorithm ids read ``polytopo:<name>``.
PROVIDER_ID = "polytopo"


class PolyTopoProvider(QgsProcessingProvider):
    """Processing provider that groups PolyTopo's algorithms.

    Algorithms: ``polytopo:evaluate`` (:class:`~polytopo.plugin.processing.evaluate_algorithm.EvaluateAlgorithm`),
    ``polytopo:vectorize`` (:class:`~polytopo.plugin.processing.vectorize_algorithm.VectorizeAlgorithm`) and
    ``polytopo:vectorize_evaluate`` (:class:`~polytopo.plugin.processing.vectorize_evaluate_algorithm.VectorizeEvaluateAlgorithm`).
    """

    def id(self):
        """Return the provider id, ``"polytopo"``."""
        return PROVIDER_ID

    def name(self):
        """Return the short name shown in the Processing toolbox."""
        return "PolyTopo"

    def longName(self):  # noqa: N802 - QGIS API name.
        """Return the name shown in the provider's tooltip."""
        return "PolyTopo: polygons with holes"

    def icon(self):
        """Return the provider icon."""
        return QIcon(str(ICON_PATH))

    def svgIconPath(self):  # noqa: N802 - QGIS API name.
        """Return the path of the provider icon (SVG)."""
        return str(ICON_PATH)

    def loadAlgorithms(self):  # noqa: N802 - QGIS API name.
        """Register the provider's algorithms."""
        for algorithm in (EvaluateAlgorithm(), VectorizeAlgorithm(), VectorizeEvaluateAlgorithm()):
            self.addAlgorithm(algorithm)

    def supportedOutputVectorLayerExtensions(self):  # noqa: N802 - QGIS API name.
        """Vector formats the algorithms write: GeoPackage (default) and GeoJSON."""
        return ["gpkg", "geojson"]
