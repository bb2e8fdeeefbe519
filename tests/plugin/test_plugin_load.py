"""PolyTopo loads as a QGIS plugin and manages its Processing provider.

The tests run real QGIS headless (offscreen Qt): in this process through the
``qgis_app`` fixture, and in child processes where QGIS's own loaders
(``qgis.utils``, ``qgis_process``) must start from a clean interpreter.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import polytopo

PROVIDER_ID = "polytopo"
LOADER_SCRIPT = Path(__file__).with_name("start_plugin_like_qgis.py")
CHILD_TIMEOUT_S = 120


def registered_providers():
    """Return the registered Processing providers with id ``polytopo``."""
    from qgis.core import QgsApplication

    providers = QgsApplication.processingRegistry().providers()
    return [provider for provider in providers if provider.id() == PROVIDER_ID]


def test_importing_the_package_imports_neither_qgis_nor_numpy(tmp_path):
    """``import polytopo`` stays cheap: QGIS imports it before calling classFactory."""
    code = (
        "import sys, polytopo\n"
        "heavy = {'qgis', 'PyQt5', 'PyQt6', 'sip', 'numpy', 'shapely', 'osgeo'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=CHILD_TIMEOUT_S,
    )
    assert result.stdout.strip() == "[]"


def test_init_gui_registers_the_provider_and_unload_removes_it(qgis_iface):
    """initGui() adds one provider ``polytopo`` with its name and icon; unload() removes it."""
    plugin = polytopo.classFactory(qgis_iface)
    plugin.initGui()
    try:
        (provider,) = registered_providers()
        assert provider.name() == "PolyTopo"
        assert Path(provider.svgIconPath()).is_file()
        assert not provider.icon().isNull()
    finally:
        plugin.unload()
    assert registered_providers() == []


def test_init_processing_works_without_an_interface(qgis_app):
    """``qgis_process`` passes no interface and calls only initProcessing()."""
    plugin = polytopo.classFactory(None)
    plugin.initProcessing()
    try:
        assert len(registered_providers()) == 1
    finally:
        plugin.unload()
    assert registered_providers() == []


def test_loading_twice_leaves_one_provider(qgis_iface):
    """Repeated init and unload calls, over two load cycles, never duplicate the provider."""
    for _ in range(2):
        plugin = polytopo.classFactory(qgis_iface)
        plugin.initProcessing()
        plugin.initGui()
        assert len(registered_providers()) == 1
        plugin.unload()
        plugin.unload()
        assert registered_providers() == []


def test_a_second_instance_reports_the_registered_provider(qgis_iface):
    """A second plugin instance fails loudly and leaves the first one's provider alone."""
    from polytopo.plugin.errors import ProviderRegistrationError

    first = polytopo.classFactory(qgis_iface)
    first.initGui()
    try:
        second = polytopo.classFactory(qgis_iface)
        with pytest.raises(ProviderRegistrationError, match="unload the other PolyTopo"):
            second.initGui()
        second.unload()
        assert len(registered_providers()) == 1
    finally:
        first.unload()
    assert registered_providers() == []


def test_qgis_utils_loads_starts_and_unloads_the_plugin(tmp_path, plugin_folder, qgis_env):
    """The life cycle QGIS desktop runs, from the plugin folder, twice."""
    result_path = tmp_path / "steps.json"
    subprocess.run(
        [sys.executable, str(LOADER_SCRIPT), str(plugin_folder), str(result_path)],
        env=qgis_env,
        check=True,
        timeout=CHILD_TIMEOUT_S,
    )
    steps = json.loads(result_path.read_text(encoding="utf-8"))
    assert steps["available"] is True
    for start in ("startProcessingPlugin", "startPlugin"):
        assert steps[f"{start}.load"] is True
        assert steps[f"{start}.module_file"] == str(plugin_folder / "polytopo" / "__init__.py")
        assert steps[f"{start}.start"] is True
        assert steps[f"{start}.loaded"] is True
        assert steps[f"{start}.providers_started"] == 1
        assert steps[f"{start}.unload"] is True
        assert steps[f"{start}.providers_unloaded"] == 0
        assert steps[f"{start}.modules_left"] == []
    assert steps["log"] == []


def run_qgis_process(env, *args):
    """Run Debian's ``qgis_process.bin`` with ``--json`` and return its JSON output.

    The ``qgis_process`` wrapper script adds an option the binary rejects, so
    the binary is called directly.
    """
    result = subprocess.run(
        ["qgis_process.bin", "--json", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=CHILD_TIMEOUT_S,
    )
    return json.loads(result.stdout)


def test_qgis_process_finds_enables_and_loads_the_provider(qgis_env):
    """``qgis_process`` sees the plugin in QGIS_PLUGINPATH and loads its provider."""
    before = run_qgis_process(qgis_env, "plugins")
    assert before["plugins"][PROVIDER_ID] == {"loaded": False}

    subprocess.run(
        ["qgis_process.bin", "plugins", "enable", PROVIDER_ID],
        env=qgis_env,
        capture_output=True,
        check=True,
        timeout=CHILD_TIMEOUT_S,
    )
    after = run_qgis_process(qgis_env, "plugins")
    assert after["plugins"][PROVIDER_ID] == {"loaded": True}

    provider = run_qgis_process(qgis_env, "list")["providers"][PROVIDER_ID]
    assert provider["name"] == "PolyTopo"
    assert provider["is_active"] is True
    assert sorted(provider["algorithms"]) == [
        "polytopo:evaluate", "polytopo:vectorize", "polytopo:vectorize_evaluate"]
