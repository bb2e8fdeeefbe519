"""The model pack: ``install_model`` and ``python -m polytopo.models zoo install`` against a local HTTP server.

A tiny zoo (one bundled model, one pack model) is written into the test's folder and
the pack model is served from ``http.server`` on 127.0.0.1 (``tests/support/pack_server.py``):
whole, truncated, cut off, corrupt, stalled and missing. Every failure must say why and
leave the user model folder without a model file or a temporary; a success must give a
model that loads and runs. Nothing leaves this machine.
"""

import hashlib
import socket

import numpy as np
import pytest
from pack_server import PACK_NAME, PackServer, pack_zoo

from polytopo.models import PreparedRun, SessionParams, load_model
from polytopo.models.cli import main
from polytopo.models.errors import PackChecksumError, PackDownloadError, PackInstallCanceled
from polytopo.models.zoo import ZooError, zoo_model, zoo_models
from polytopo.models.zoo import pack

CPU = SessionParams(provider="cpu", intra_op_threads=1)


@pytest.fixture
def served(tmp_path, monkeypatch):
    """The tiny zoo and a running server of its pack model; the server stops after the test."""
    with PackServer(b"") as server:
        zoo = pack_zoo(tmp_path, monkeypatch, server.url("good", ""))
        server.payload = zoo["pack_bytes"]
        zoo["server"] = server
        yield zoo


def leftovers(folder):
    """Every file in ``folder`` (hidden temporaries included); empty when the folder does not exist."""
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_pack_model_is_listed_as_not_installed_until_it_is_installed(served):
    """The index lists both; only the bundled one is installed; the pack one points into the user folder."""
    bundled, pack_model = zoo_models()
    assert (bundled.status, bundled.bundled, bundled.installed) == ("bundled", True, True)
    assert (pack_model.status, pack_model.bundled, pack_model.installed) == ("not installed", False, False)
    assert pack_model.path == served["user"] / served["pack_file"]
    assert pack_model.url == served["server"].url("good", served["pack_file"])


def test_install_downloads_verifies_and_the_model_runs(served, tiny, tmp_path):
    """A good download lands in the user folder under its own name, alone, and runs on a raster."""
    done = []
    path = pack.install_model(PACK_NAME, progress=lambda d, t: done.append((d, t)))
    assert path == served["user"] / served["pack_file"]
    assert leftovers(served["user"]) == [served["pack_file"]]
    assert path.read_bytes() == served["pack_bytes"]
    assert done[0][0] == 0 and done[-1] == (len(served["pack_bytes"]),) * 2
    model = zoo_model(PACK_NAME)
    assert model.status == "installed" and model.path == path and pack.installed_ok(model)
    image = np.zeros((40, 40), np.float32)
    image[8:30, 8:30] = 1.0
    image[15:22, 15:22] = 0.0  # a courtyard
    raster = tiny.write_raster(tmp_path / "scene.tif", image)
    (polygon,) = list(PreparedRun(load_model(model.path, CPU), raster))
    assert len(polygon.geometry.interiors) == 1
    assert polygon.geometry.area == pytest.approx((22 * 22 - 7 * 7) * 0.25)
    # a second install finds the verified file and downloads nothing
    count = len(served["server"].requests)
    assert pack.install_model(PACK_NAME) == path and len(served["server"].requests) == count


@pytest.mark.parametrize("kind, error, reason", [
    ("truncated", PackChecksumError, r"Expected \d+ bytes for tiny_pack but .* has \d+"),
    ("cut", PackChecksumError, r"truncated"),
    ("corrupt", PackChecksumError, r"Expected SHA-256 [0-9a-f]{64} for tiny_pack but .* has [0-9a-f]{64}"),
    ("missing", PackDownloadError, r"HTTP 404"),
])
def test_a_bad_download_says_why_and_stores_nothing(served, kind, error, reason):
    """Truncated, cut off, corrupt or missing: a typed error that names the cause; the folder stays empty."""
    with pytest.raises(error, match=reason):
        pack.install_model(PACK_NAME, source=served["server"].url(kind, served["pack_file"]))
    assert leftovers(served["user"]) == []
    assert not zoo_model(PACK_NAME).installed


def test_a_server_that_stops_answering_times_out_and_stores_nothing(served):
    """Headers and 16 bytes, then silence: after the timeout the install fails and nothing is kept."""
    with pytest.raises(PackDownloadError, match="stopped answering for 0.5 s"):
        pack.install_model(PACK_NAME, source=served["server"].url("stall", served["pack_file"]), timeout_s=0.5)
    assert leftovers(served["user"]) == []


def test_an_unreachable_server_says_so(served):
    """A port nobody listens on: the error names the URL and suggests --from."""
    with socket.socket() as probe:  # a port that was free a moment ago: nobody listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/good/{served['pack_file']}"
    with pytest.raises(PackDownloadError, match="--from FILE"):
        pack.install_model(PACK_NAME, source=url, timeout_s=2)
    assert leftovers(served["user"]) == []


def test_cancel_mid_download_stores_nothing(served, monkeypatch):
    """The cancel check says stop after the first block: PackInstallCanceled, no file, no temporary."""
    monkeypatch.setattr(pack, "CHUNK_BYTES", 64)
    blocks = []
    with pytest.raises(PackInstallCanceled, match="canceled after 64 of"):
        pack.install_model(PACK_NAME, progress=lambda d, t: blocks.append(d), canceled=lambda: len(blocks) > 1)
    assert leftovers(served["user"]) == []


def test_ctrl_c_mid_download_stores_nothing(served, monkeypatch, capsys):
    """Ctrl-C (KeyboardInterrupt) during the download: re-raised, temporary removed; the CLI exits 130."""
    monkeypatch.setattr(pack, "CHUNK_BYTES", 64)

    def interrupt(done, total):
        if done >= 128:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pack.install_model(PACK_NAME, progress=interrupt)
    assert leftovers(served["user"]) == []
    monkeypatch.setattr(pack.hashlib, "sha256", _interrupting_sha256)
    assert main(["zoo", "install", PACK_NAME]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert leftovers(served["user"]) == []


def _interrupting_sha256():
    class Digest:
        def __init__(self):
            self.inner = hashlib.new("sha256")
            self.blocks = 0

        def update(self, block):
            self.blocks += 1
            if self.blocks == 2:
                raise KeyboardInterrupt
            self.inner.update(block)

        def hexdigest(self):
            return self.inner.hexdigest()

    return Digest()


def test_a_failed_reinstall_leaves_the_installed_model_intact(served):
    """--force with a corrupt download: the error is raised and the verified file is unchanged."""
    path = pack.install_model(PACK_NAME)
    with pytest.raises(PackChecksumError):
        pack.install_model(PACK_NAME, source=served["server"].url("corrupt", served["pack_file"]), force=True)
    assert leftovers(served["user"]) == [served["pack_file"]]
    assert path.read_bytes() == served["pack_bytes"]


def test_temporaries_of_killed_installs_are_cleared_only_when_old(served):
    """A stale .part (older than an hour) goes at the next install; a fresh one (a running install) stays."""
    import os
    import time

    served["user"].mkdir()
    stale = served["user"] / f".{served['pack_file']}.abc.part"
    fresh = served["user"] / f".{served['pack_file']}.def.part"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    old = time.time() - pack.PARTIAL_AGE_S - 60
    os.utime(stale, (old, old))
    pack.install_model(PACK_NAME)
    assert leftovers(served["user"]) == sorted([fresh.name, served["pack_file"]])


def test_a_downloaded_file_installs_offline(served, tmp_path):
    """--from a local file: no request reaches the server; a wrong file is refused and not stored."""
    wrong = tmp_path / "wrong.onnx"
    wrong.write_bytes(served["pack_bytes"][:-1] + b"\x00")
    with pytest.raises(PackChecksumError, match="SHA-256"):
        pack.install_model(PACK_NAME, source=wrong)
    with pytest.raises(PackDownloadError, match="Expected a readable model file at"):
        pack.install_model(PACK_NAME, source=tmp_path / "absent.onnx")
    with pytest.raises(PackDownloadError, match="Expected an https, http or file URL but got 'ftp://"):
        pack.install_model(PACK_NAME, source="ftp://127.0.0.1/tiny_pack.onnx")
    assert leftovers(served["user"]) == []
    path = pack.install_model(PACK_NAME, source=served["source"])
    assert path.read_bytes() == served["pack_bytes"] and served["server"].requests == []


def test_the_command_line_lists_installs_and_refuses(served, capsys):
    """zoo shows the status; zoo install downloads with progress on stderr; errors exit 1 or 2 with a reason."""
    assert main(["zoo"]) == 0
    out = capsys.readouterr().out
    assert "not installed" in [line for line in out.splitlines() if line.startswith(PACK_NAME)][0]
    assert f"zoo install NAME' installs one of {PACK_NAME}" in out
    assert main(["zoo", PACK_NAME]) == 0
    assert "install it with: python -m polytopo.models zoo install tiny_pack" in capsys.readouterr().out
    corrupt = served["server"].url("corrupt", served["pack_file"])
    assert main(["zoo", "install", PACK_NAME, "--from", corrupt]) == 1
    assert "Expected SHA-256" in capsys.readouterr().err
    assert main(["zoo", "install", PACK_NAME]) == 0
    captured = capsys.readouterr()
    assert "SHA-256 verified" in captured.out and "(100 %)" in captured.err
    assert main(["zoo"]) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if line.startswith(PACK_NAME)][0].endswith(
        "installed")
    assert main(["zoo", "install", PACK_NAME]) == 0
    assert "already in place and verified" in capsys.readouterr().out
    assert main(["zoo", "install"]) == 2
    assert main(["zoo", PACK_NAME, "--from", corrupt]) == 2
    assert main(["zoo", "install", "no_such_model"]) == 1
    assert "Expected a bundled model among" in capsys.readouterr().err


def test_a_model_without_url_needs_from(served, monkeypatch):
    """An index entry without a URL (e.g. a newly exported model) installs only from a file."""
    model = zoo_model(PACK_NAME)
    bare = type(model)(**{**model.__dict__, "url": None})
    with pytest.raises(PackDownloadError, match="--from FILE"):
        pack.install_model(bare)
    assert pack.install_model(bare, source=served["source"]).is_file()


def test_a_malformed_file_name_in_the_index_is_refused(served):
    """An index entry whose file is a path (../x.onnx) could write outside the folder: refused."""
    index = served["zoo"] / "index.json"
    index.write_text(index.read_text(encoding="utf-8").replace('"tiny_pack.onnx"', '"../tiny_pack.onnx"'),
                     encoding="utf-8")
    with pytest.raises(ZooError, match="plain .onnx file name"):
        zoo_models()
