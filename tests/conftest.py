"""Fixtures and settings shared by the whole test suite.

QGIS is started only for tests that ask for ``qgis_app``, so tests of the pure
packages (``evaluator``, ``models``) never pay for it.

Every property test (hypothesis) runs under one settings profile, ``ci``
(``tests/support/hypothesis_profile.py``); ``POLYTOPO_HYPOTHESIS_EXAMPLES=N`` sets its
number of examples per test.
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis_profile import load_ci_profile

__all__ = ["qgis_app", "qgis_processing", "repo_root"]


@pytest.fixture(scope="session")
def repo_root():
    """Return the repository root: the QGIS plugin folder and package ``polytopo``."""
    return Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def qgis_app(tmp_path_factory):
    """Start a headless ``QgsApplication`` once per test session.

    It runs with the offscreen Qt platform and a throw-away profile folder, so
    tests never read or write the user's QGIS settings.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from qgis.core import QgsApplication

    profile_dir = tmp_path_factory.mktemp("qgis-profile")
    app = QgsApplication([], True, str(profile_dir))
    app.initQgis()
    yield app
    app.exitQgis()


@pytest.fixture(scope="module")
def qgis_processing(qgis_app):
    """Start QGIS Processing and register the PolyTopo provider for one test module.

    The provider is removed afterwards: other tests expect no PolyTopo provider registered.
    """
    from qgis.core import QgsApplication

    plugins = str(Path(QgsApplication.pkgDataPath()) / "python" / "plugins")
    if plugins not in sys.path:
        sys.path.append(plugins)
    from processing.core.Processing import Processing

    import polytopo

    Processing.initialize()
    plugin = polytopo.classFactory(None)
    plugin.initProcessing()
    yield plugin.provider
    plugin.unload()


_SETTINGS_PREFIX = "polytopo-test-settings-"


def pytest_configure(config):
    """Isolate Qt settings; load the hypothesis profile; register the ``reliability`` mark.

    Qt keeps ``QgsSettings`` of an application without an organization name in
    ``$XDG_CONFIG_HOME/Unknown Organization.conf``: without a folder of this run there, a
    dock field one test sets (e.g. a scheduler address) would reach later tests and later
    runs, and the user's own file would be written. The folder must outlive the test
    process (Qt writes the last settings while the interpreter shuts down), so each run
    removes the folders of earlier runs whose process has ended.
    """
    _remove_settings_of_ended_runs()
    home = tempfile.mkdtemp(prefix=f"{_SETTINGS_PREFIX}{os.getpid()}-")
    os.environ["XDG_CONFIG_HOME"] = home
    from qgis.PyQt.QtCore import QSettings

    for settings_format in (QSettings.NativeFormat, QSettings.IniFormat):
        QSettings.setPath(settings_format, QSettings.UserScope, home)
    load_ci_profile()
    config.addinivalue_line("markers", "reliability(case, entry, gets): a case of docs/reliability.md")


def _remove_settings_of_ended_runs():
    for folder in Path(tempfile.gettempdir()).glob(f"{_SETTINGS_PREFIX}*"):
        pid = folder.name[len(_SETTINGS_PREFIX):].split("-")[0]
        try:
            os.kill(int(pid), 0)
        except (ValueError, ProcessLookupError):
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            continue


def pytest_addoption(parser):
    """``--reliability-table=PATH``: write the collected cases' table to PATH (used with --collect-only)."""
    parser.addoption("--reliability-table", default=None, help="write the table of reliability cases to this file")


def pytest_collection_finish(session):
    """Write the table of reliability cases when ``--reliability-table`` is given."""
    path = session.config.getoption("--reliability-table")
    if not path:
        return
    from reliability import render_table

    rows = []
    for item in session.items:
        for mark in item.iter_markers("reliability"):
            rows.append((mark.kwargs["entry"], mark.kwargs["case"], mark.kwargs["gets"], item.nodeid))
    Path(path).write_text(render_table(rows), encoding="utf-8")
