"""PolyTopo: vectorize and evaluate polygons with holes, in QGIS and headless.

The repository root is both the QGIS plugin folder and the Python package
``polytopo``. QGIS calls :func:`classFactory`; scripts and the command line use
the subpackages directly (``polytopo.evaluator``, ``polytopo.models``), which
never import QGIS. Importing this module imports nothing else, so the package
stays cheap to import outside QGIS.
"""

__all__ = ["__version__", "classFactory"]


def classFactory(iface):  # noqa: N802 - the name QGIS looks up.
    """Create the plugin instance that QGIS loads.

    Parameters
    ----------
    iface : qgis.gui.QgisInterface or None
        The running QGIS desktop's interface, or None when the plugin is
        started headless (``qgis_process``, scripts).

    Returns
    -------
    polytopo.plugin.plugin_main.PolyTopoPlugin
        The plugin; QGIS then calls its ``initGui()`` or ``initProcessing()``.
    """
    # "from .plugin import plugin_main" rather than "from .plugin.plugin_main
    # import ...": qgis.utils records the modules each import statement returns
    # and removes exactly those on unload; this form hands it the subpackage too.
    from .plugin import plugin_main

    return plugin_main.PolyTopoPlugin(iface)


def __getattr__(name):
    # ``polytopo.__version__`` is read from version.py on first use, so that importing
    # this module imports nothing (pytest imports it on its own, outside the package).
    if name == "__version__":
        from .version import __version__

        return __version__
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
