"""The dock's model list offers the models of the pack and installs one in a QgsTask.

A tiny zoo (one bundled model, one pack model) replaces the real one and the pack model
is served from ``http.server`` on 127.0.0.1 (``tests/support/pack_server.py``).
``POLYTOPO_MODELS_DIR`` stands for the QGIS profile's model folder. The install runs in a
real worker thread of ``QgsApplication.taskManager()``.
"""

import json

import pytest
from dock_testing import make_dock
from pack_server import PACK_NAME, PackServer, pack_zoo
from polytopo_testing import wait_until
from stand_ins import VectorizeCore


@pytest.fixture
def served(qgis_app, tmp_path, monkeypatch):
    """The tiny zoo and a running server of its pack model; the server stops after the test."""
    with PackServer(b"") as server:
        zoo = pack_zoo(tmp_path, monkeypatch, server.url("good", ""))
        server.payload = zoo["pack_bytes"]
        zoo["server"] = server
        yield zoo


def serve_as(served, kind):
    """Point the index's URL of the pack model at the ``kind`` route of the server."""
    index_path = served["zoo"] / "index.json"
    index = json.loads(index_path.read_text(encoding="utf-8"))
    for entry in index["models"]:
        if entry["name"] == PACK_NAME:
            entry["url"] = served["server"].url(kind, served["pack_file"])
    index_path.write_text(json.dumps(index), encoding="utf-8")


def choose_pack_model(dock):
    dock.model_combo.setCurrentIndex(dock.model_combo.findText(PACK_NAME))
    return dock.model_installer


def finish(installer):
    wait_until(lambda: installer.task is None)


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_the_profile_model_folder_is_in_the_qgis_profile(qgis_app, monkeypatch):
    """Without POLYTOPO_MODELS_DIR the folder is <profile>/polytopo/models."""
    from pathlib import Path

    from qgis.core import QgsApplication

    from polytopo.plugin.runs.model_folder import profile_model_dir

    monkeypatch.delenv("POLYTOPO_MODELS_DIR", raising=False)
    assert profile_model_dir() == Path(QgsApplication.qgisSettingsDirPath()) / "polytopo" / "models"


def test_the_list_shows_the_pack_model_with_its_summary_and_installs_it(served):
    """Not installed: summary from the index, Install row; Install downloads, verifies and the card loads."""
    dock, notifier = make_dock(VectorizeCore())
    names = [dock.model_combo.itemText(i) for i in range(dock.model_combo.count())]
    assert names[:2] == ["tiny_bundled", PACK_NAME]
    installer = dock.model_installer
    assert installer.isHidden()  # the bundled model is chosen first
    installer = choose_pack_model(dock)
    summary = dock.model_combo.currentData(0x0003)  # Qt.ToolTipRole
    assert summary.startswith("Not installed (0.0 MB download) · test · one band") and "AP50 0.500" in summary
    assert not installer.isHidden() and installer.install_button.isEnabled()
    assert "is not installed" in installer.label.text() and str(served["user"]) in installer.label.text()
    assert dock.model_ok is False
    task = installer.start_install()
    assert task is not None and installer.cancel_button.isEnabled() and not installer.install_button.isEnabled()
    finish(installer)
    path = served["user"] / served["pack_file"]
    assert leftovers(served["user"]) == [served["pack_file"]] and path.read_bytes() == served["pack_bytes"]
    assert installer.isHidden()
    assert dock.model_path() == str(path) and dock.model_ok is True and dock.card.seg_threshold == pytest.approx(0.4)
    assert not dock.model_combo.currentData(0x0003).startswith("Not installed")
    assert notifier.texts[-1][0] == "info" and "SHA-256 verified" in notifier.texts[-1][1]
    dock.abandon_tasks()


@pytest.mark.parametrize("kind, reason", [("corrupt", "Expected SHA-256"), ("truncated", "truncated"),
                                          ("missing", "HTTP 404")])
def test_a_failed_install_says_why_and_stores_nothing(served, kind, reason):
    """A corrupt, truncated or missing file: an error message with the reason, nothing stored, Install again."""
    serve_as(served, kind)
    dock, notifier = make_dock(VectorizeCore())
    installer = choose_pack_model(dock)
    installer.start_install()
    finish(installer)
    level, text = notifier.texts[-1]
    assert level == "error" and f"Installing model {PACK_NAME} failed" in text and reason in text
    assert leftovers(served["user"]) == []
    assert not installer.isHidden() and installer.install_button.isEnabled()
    assert dock.model_ok is False
    dock.abandon_tasks()


def test_a_server_that_stops_answering_fails_the_install(served, monkeypatch):
    """Silence after the headers: the task fails after the timeout, and nothing is stored."""
    from polytopo.models.zoo import pack

    monkeypatch.setattr(pack, "TIMEOUT_S", 0.5)
    monkeypatch.setattr(pack.install_model, "__kwdefaults__", {**pack.install_model.__kwdefaults__,
                                                               "timeout_s": 0.5})
    serve_as(served, "stall")
    dock, notifier = make_dock(VectorizeCore())
    installer = choose_pack_model(dock)
    installer.start_install()
    finish(installer)
    assert notifier.texts[-1][0] == "error" and "stopped answering" in notifier.texts[-1][1]
    assert leftovers(served["user"]) == []
    dock.abandon_tasks()


def test_cancel_stops_the_download_and_stores_nothing(served, monkeypatch):
    """Cancel during a slow download: the task ends as canceled, nothing is stored, Install is offered again."""
    from polytopo.models.zoo import pack

    monkeypatch.setattr(pack, "CHUNK_BYTES", 32)
    serve_as(served, "slow")
    dock, notifier = make_dock(VectorizeCore())
    installer = choose_pack_model(dock)
    task = installer.start_install()
    wait_until(lambda: task.progress() > 0)
    installer.cancel_install()
    finish(installer)
    assert notifier.texts[-1] == ("info", f"Installing model {PACK_NAME} was canceled; nothing was stored.")
    assert task.canceled and task.path is None
    assert leftovers(served["user"]) == []
    assert not installer.isHidden() and installer.install_button.isEnabled()
    dock.abandon_tasks()


def test_processing_names_the_install_for_a_pack_model(served):
    """BUNDLED_MODEL of a pack model not installed: the run stops with how to install it; afterwards it resolves."""
    from polytopo.models.zoo import pack
    from polytopo.plugin.errors import ModelInputError
    from polytopo.plugin.runs.vectorize import resolve_model

    with pytest.raises(ModelInputError, match=f"zoo install {PACK_NAME}"):
        resolve_model(PACK_NAME)
    assert resolve_model("tiny_bundled") == served["zoo"] / "tiny_bundled.onnx"
    path = pack.install_model(PACK_NAME)
    assert resolve_model(PACK_NAME) == path
