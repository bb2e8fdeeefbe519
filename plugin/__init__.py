"""The QGIS side of PolyTopo: the only subpackage that imports ``qgis``.

Modules
-------
plugin_main
    :class:`~polytopo.plugin.plugin_main.PolyTopoPlugin`, the object QGIS
    loads through :func:`polytopo.classFactory`.
provider
    :class:`~polytopo.plugin.provider.PolyTopoProvider`, the Processing
    provider with id ``polytopo``.
errors
    The plugin's exception hierarchy.
resource_paths
    Locations of the files under ``resources/``.
"""

__all__ = []
