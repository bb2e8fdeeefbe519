"""A worker process loads the model of its tasks once, also when several threads ask at once."""

import threading

from polytopo.models import worker_model as worker_model_module
from polytopo.models.session import SessionParams
from polytopo.models.worker_model import worker_model


def test_threads_asking_at_once_share_one_load(tmp_path, tiny, monkeypatch):
    """While the first load is still running a second thread asks: it waits, gets the same
    model, and the file is loaded once."""
    path = tiny.deepness_model(tmp_path / "model.onnx")
    monkeypatch.setattr(worker_model_module, "_LOADED", {})
    loads, release = [], threading.Event()
    real_load = worker_model_module.load_model

    def slow_load(*args):
        loads.append(args)
        release.wait(5)
        return real_load(*args)

    monkeypatch.setattr(worker_model_module, "load_model", slow_load)
    got = []
    threads = [threading.Thread(target=lambda: got.append(worker_model(str(path), SessionParams())))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    release.set()
    for thread in threads:
        thread.join()
    assert len(loads) == 1
    assert len(got) == 2 and got[0] is got[1]
    assert got[0].path == got[1].path


def test_a_changed_file_is_loaded_again(tmp_path, tiny, monkeypatch):
    path = tiny.deepness_model(tmp_path / "model.onnx")
    monkeypatch.setattr(worker_model_module, "_LOADED", {})
    first = worker_model(str(path), SessionParams())
    assert worker_model(str(path), SessionParams()) is first
    tiny.deepness_model(path, tile=32)
    second = worker_model(str(path), SessionParams())
    assert second is not first and list(worker_model_module._LOADED.values()) == [second]
