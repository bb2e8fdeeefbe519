"""The object QGIS loads: registers and removes the Processing provider."""

from qgis.core import QgsApplication

from .errors import ProviderRegistrationError
from .provider import PROVIDER_ID, PolyTopoProvider

__all__ = ["PolyTopoPlugin"]


class PolyTopoPlugin:
    """PolyTopo's QGIS plugin.

    Parameters
    ----------
    iface : qgis.gui.QgisInterface or None
        The QGIS desktop interface, or None when started headless.

    Notes
    -----
    QGIS desktop calls :meth:`initGui`; ``qgis_process`` calls only
    :meth:`initProcessing`. Both leave exactly one provider with id
    ``polytopo`` in the Processing registry, and :meth:`unload` removes it.
    """

    def __init__(self, iface):
        self.iface = iface
        self.provider = None

    def initProcessing(self):  # noqa: N802 - QGIS API name.
        """Add the PolyTopo provider to the Processing registry once.

        Raises
        ------
        ProviderRegistrationError
            If another provider with id ``polytopo`` is already registered.
        """
        if self.provider is not None:
            return
        provider = PolyTopoProvider()
        if not QgsApplication.processingRegistry().addProvider(provider):
            raise ProviderRegistrationError(
                f"Expected no Processing provider with id {PROVIDER_ID!r} to be "
                "registered yet but one already is; unload the other PolyTopo "
                "plugin instance before starting this one."
            )
        self.provider = provider

    def initGui(self):  # noqa: N802 - QGIS API name.
        """Start the plugin in QGIS desktop: registers the provider."""
        self.initProcessing()

    def unload(self):
        """Remove the provider from the Processing registry, if registered."""
        if self.provider is None:
            return
        QgsApplication.processingRegistry().removeProvider(self.provider)
        self.provider = None
