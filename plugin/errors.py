"""Exceptions raised by the QGIS plugin.

::

    PluginError
    └── ProviderRegistrationError (also a RuntimeError)
"""

__all__ = ["PluginError", "ProviderRegistrationError"]


class PluginError(Exception):
    """Root of every exception raised by :mod:`polytopo.plugin`."""


class ProviderRegistrationError(PluginError, RuntimeError):
    """The Processing registry refused the PolyTopo provider."""
