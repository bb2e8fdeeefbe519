"""Start and stop PolyTopo through ``qgis.utils``, the way QGIS does.

Run in a fresh interpreter, so that ``qgis.utils`` (which replaces
``builtins.__import__`` to track plugin modules) and the imports of the plugin
folder do not leak into the test session::

    python start_plugin_like_qgis.py PLUGIN_FOLDER RESULT_JSON

PLUGIN_FOLDER must contain the plugin folder ``polytopo``. The outcome of each
step is written to RESULT_JSON as one JSON object.
"""

import json
import sys
from unittest import mock

from qgis.core import QgsApplication

__all__ = ["main"]

PLUGIN = "polytopo"


def count_providers():
    """Return how many registered Processing providers have id ``polytopo``."""
    providers = QgsApplication.processingRegistry().providers()
    return sum(provider.id() == PLUGIN for provider in providers)


def main(plugin_folder, result_path):
    """Run the QGIS plugin life cycle twice and write what each step returned."""
    app = QgsApplication([], True)
    app.initQgis()
    log = []
    app.messageLog().messageReceived.connect(
        lambda message, tag, level: log.append(f"{tag}: {message}")
    )

    import qgis.utils
    from qgis.gui import QgisInterface

    qgis.utils.iface = mock.Mock(spec=QgisInterface)
    qgis.utils.plugin_paths = [plugin_folder]
    sys.path.insert(0, plugin_folder)
    qgis.utils.updateAvailablePlugins()

    steps = {"available": PLUGIN in qgis.utils.available_plugins}
    for start in ("startProcessingPlugin", "startPlugin"):
        steps[f"{start}.load"] = qgis.utils.loadPlugin(PLUGIN)
        steps[f"{start}.module_file"] = sys.modules[PLUGIN].__file__
        steps[f"{start}.start"] = getattr(qgis.utils, start)(PLUGIN)
        steps[f"{start}.loaded"] = qgis.utils.isPluginLoaded(PLUGIN)
        steps[f"{start}.providers_started"] = count_providers()
        steps[f"{start}.unload"] = qgis.utils.unloadPlugin(PLUGIN)
        steps[f"{start}.providers_unloaded"] = count_providers()
        steps[f"{start}.modules_left"] = sorted(
            name for name in sys.modules if name.split(".")[0] == PLUGIN
        )
    steps["log"] = log
    with open(result_path, "w", encoding="utf-8") as stream:
        json.dump(steps, stream, indent=1)
    app.exitQgis()


if __name__ == "__main__":
    main(*sys.argv[1:])
