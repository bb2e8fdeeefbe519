"""Fixtures for the tests that load PolyTopo as a QGIS plugin."""

import os
import types
from unittest import mock

import pytest

__all__ = ["plugin_folder", "project", "qgis_env", "qgis_iface"]


@pytest.fixture
def project(qgis_app):
    """The project instance with the dock tests' prediction and reference layers; emptied afterwards."""
    from dock_testing import PREDICTION, REFERENCE
    from polytopo_testing import polygon_layer
    from qgis.core import QgsProject

    instance = QgsProject.instance()
    prediction, reference = polygon_layer("pred", PREDICTION), polygon_layer("ref", REFERENCE)
    instance.addMapLayers([prediction, reference])
    yield types.SimpleNamespace(project=instance, prediction=prediction, reference=reference)
    instance.clear()


@pytest.fixture
def qgis_iface(qgis_app):
    """Return a stand-in for the QGIS desktop interface.

    ``Mock(spec=QgisInterface)`` has exactly the attributes of the real
    ``qgis.gui.QgisInterface``: a call the real interface does not offer
    raises ``AttributeError``. (``qgis.testing.mocked.get_iface`` builds the
    same object but needs the ``mock`` backport, which QGIS does not depend on.)
    """
    from qgis.gui import QgisInterface

    return mock.Mock(spec=QgisInterface)


@pytest.fixture
def plugin_folder(tmp_path, repo_root):
    """Make a QGIS plugin folder holding ``polytopo``, a link to the repository root."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "polytopo").symlink_to(repo_root, target_is_directory=True)
    return folder


@pytest.fixture
def qgis_env(tmp_path, plugin_folder):
    """Return the environment of a QGIS child process: offscreen, own profile, our plugin."""
    env = dict(os.environ)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["QGIS_CUSTOM_CONFIG_PATH"] = str(tmp_path / "qgis-config")
    env["QGIS_PLUGINPATH"] = str(plugin_folder)
    env["XDG_RUNTIME_DIR"] = str(tmp_path / "xdg-runtime")
    (tmp_path / "xdg-runtime").mkdir(mode=0o700)
    env["TMPDIR"] = str(tmp_path / "tmp")  # the plugin's start-up cleanup sees only this run's temporaries
    (tmp_path / "tmp").mkdir()
    return env
