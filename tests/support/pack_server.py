"""A local model-pack server and zoo for the install tests: ``http.server`` on 127.0.0.1 in a thread.

:func:`pack_zoo` writes a tiny semantic model and a zoo index (one bundled model
beside the index, one pack model to download) into a temporary folder and points
:mod:`polytopo.models.zoo` at it. :class:`PackServer` serves the pack model's
bytes under several paths, each a way a download can go wrong:

==========================  ==========================================================
``/good/<file>``            the file, with its Content-Length
``/truncated/<file>``       the first half, with an honest (short) Content-Length
``/cut/<file>``             Content-Length of the whole file, then half, then the connection closes
``/corrupt/<file>``         the whole length with one byte changed (wrong SHA-256)
``/stall/<file>``           Content-Length of the whole file, a few bytes, then silence until the test ends
``/slow/<file>``            the file in 32-byte pieces 50 ms apart (for cancel tests)
``/missing/<file>``         404
==========================  ==========================================================
"""

import hashlib
import http.server
import json
import threading

__all__ = ["PackServer", "pack_zoo"]

PACK_NAME = "tiny_pack"
BUNDLED_NAME = "tiny_bundled"
TINY_CARD = {"polytopo.family": "semantic", "tile_size": 32, "polytopo.input_range": [0, 1], "seg_thresh": 0.5}


def _entry(name, path, url=None, bundled=False):
    data = path.read_bytes()
    entry = {"name": name, "file": path.name, "family": "semantic", "baseline": "test", "input": "one band, 0-1",
             "resolution_cm": 50.0, "size_bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
             "scores": {"heldout": "synthetic", "AP50": 0.5, "Topo-EM": 0.25, "Hole-F1": None}}
    if url:
        entry["url"] = url
    if bundled:
        entry["bundled"] = True
    return entry


def pack_zoo(tmp_path, monkeypatch, url_base):
    """A zoo of two tiny models in ``tmp_path/zoo``: ``tiny_bundled`` present, ``tiny_pack`` to download.

    Parameters
    ----------
    tmp_path : pathlib.Path
    monkeypatch : pytest.MonkeyPatch
        Points ``polytopo.models.zoo.ZOO_DIR``/``INDEX_FILE`` at the new zoo and
        ``POLYTOPO_MODELS_DIR`` at ``tmp_path/user``.
    url_base : str
        ``http://127.0.0.1:PORT/good/``: the index's URL of the pack model is this plus its file name.

    Returns
    -------
    dict
        ``zoo`` (folder), ``user`` (user model folder, not created), ``pack_bytes`` (the pack
        model's file content), ``pack_file`` (its name).
    """
    from polytopo_testing import semantic_band_model

    from polytopo.models import zoo

    zoo_dir, source = tmp_path / "zoo", tmp_path / "source"
    zoo_dir.mkdir()
    source.mkdir()
    bundled = zoo_dir / f"{BUNDLED_NAME}.onnx"
    semantic_band_model(bundled, card=TINY_CARD)
    pack = source / f"{PACK_NAME}.onnx"
    semantic_band_model(pack, card=dict(TINY_CARD, seg_thresh=0.4))
    index = {"format": 1, "models": [_entry(BUNDLED_NAME, bundled, bundled=True),
                                     _entry(PACK_NAME, pack, url=url_base + pack.name)]}
    (zoo_dir / "index.json").write_text(json.dumps(index, indent=2), encoding="utf-8")
    monkeypatch.setattr(zoo, "ZOO_DIR", zoo_dir)
    monkeypatch.setattr(zoo, "INDEX_FILE", zoo_dir / "index.json")
    user = tmp_path / "user"
    monkeypatch.setenv("POLYTOPO_MODELS_DIR", str(user))
    return {"zoo": zoo_dir, "user": user, "pack_bytes": pack.read_bytes(), "pack_file": pack.name,
            "source": pack}


class PackServer:
    """Serve ``payload`` on 127.0.0.1 under the paths of the module docstring; a context manager.

    Parameters
    ----------
    payload : bytes
        The good file.
    """

    def __init__(self, payload):
        self.payload = payload
        self.release = threading.Event()  # set on exit: a stalled response may end
        self.requests = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep pytest's output clean
                pass

            def do_GET(self):  # noqa: N802 - http.server API name.
                server.requests.append(self.path)
                kind = self.path.strip("/").split("/")[0]
                data = server.payload
                if kind == "missing":
                    self.send_error(404, "Not Found")
                    return
                body, length = data, len(data)
                if kind == "truncated":
                    body = data[: len(data) // 2]
                    length = len(body)
                elif kind == "cut":
                    body = data[: len(data) // 2]
                elif kind == "corrupt":
                    body = data[:-1] + bytes([data[-1] ^ 0xFF])
                elif kind == "stall":
                    body = data[:16]
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(length))
                self.end_headers()
                if kind == "slow":
                    for start in range(0, len(body), 32):
                        if server.release.wait(0.05):
                            break
                        self.wfile.write(body[start:start + 32])
                        self.wfile.flush()
                else:
                    self.wfile.write(body)
                    self.wfile.flush()
                if kind == "stall":
                    server.release.wait(30)
                self.close_connection = True

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base(self):
        """``http://127.0.0.1:PORT/``."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def url(self, kind, file_name):
        """URL of ``file_name`` served the ``kind`` way (good, truncated, cut, corrupt, stall, missing)."""
        return f"{self.base}{kind}/{file_name}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)
