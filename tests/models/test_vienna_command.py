"""The Schönbrunn command's arguments: help and bad models are answered before anything runs or is written."""

import pytest

from polytopo.training import vienna


def test_help_prints_usage_and_writes_no_picture(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        vienna.main(["--help"])
    assert stop.value.code == 0
    assert "NAME=PATH" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value, message", [
    ("trial", "expected NAME=PATH"),
    ("=model.onnx", "expected NAME=PATH"),
    ("trial=missing.onnx", "no model file at 'missing.onnx'"),
])
def test_a_bad_model_argument_is_refused_with_what_was_wrong(tmp_path, monkeypatch, capsys, value, message):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(vienna, "run_models", lambda *args, **kwargs: pytest.fail("ran the models"))
    with pytest.raises(SystemExit) as stop:
        vienna.main(["out.png", "--model", value])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
