"""write-card and info, through the API and the command line."""

import json
import subprocess
import sys

import pytest

from polytopo.models.card.card_files import describe_model, read_card, write_card
from polytopo.models.cli import main
from polytopo.models.errors import ModelCardError


def test_write_card_then_read_it_back(tmp_path, tiny):
    path = tiny.semantic_band_model(tmp_path / "m.onnx", card={})
    card = write_card(path, {"polytopo.family": "semantic", "tile_size": 16, "polytopo.licence": "MIT"})
    assert card.tile_size_px == 16
    again = read_card(path)
    assert again == card and again.licence == "MIT"


def test_invalid_card_is_not_written(tmp_path, tiny):
    path = tiny.semantic_band_model(tmp_path / "m.onnx", channels=1, tile=32)
    before = (tmp_path / "m.onnx").read_bytes()
    with pytest.raises(ModelCardError, match="tile_size 32"):
        write_card(path, {"tile_size": 64})
    assert (tmp_path / "m.onnx").read_bytes() == before


def test_none_removes_a_key(tmp_path, tiny):
    path = tiny.semantic_band_model(tmp_path / "m.onnx", card={"polytopo.family": "semantic", "polytopo.licence": "MIT"})
    assert write_card(path, {"polytopo.licence": None}).licence is None


def test_describe_reports_card_errors_without_raising(tmp_path, tiny):
    path = tiny.semantic_band_model(tmp_path / "m.onnx", card={})
    info = describe_model(path)
    assert info["card"] is None and "'polytopo.family'" in info["card_error"]
    assert info["inputs"][0]["name"] == "input"


def test_cli_info_prints_card_and_graph(tmp_path, tiny, capsys):
    path = tiny.deepness_model(tmp_path / "deepness.onnx")
    assert main(["info", path]) == 0
    text = capsys.readouterr().out
    assert "family: \"semantic\"" in text and "tile_size_px: 64" in text and "input  input: float32" in text
    assert main(["info", path, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["card"]["class_names"] == ["background", "building"]
    assert info["io"]["layout"] == "NCHW"


def test_cli_write_card_with_set(tmp_path, tiny, capsys):
    path = tiny.semantic_band_model(tmp_path / "m.onnx", card={})
    out = tmp_path / "carded.onnx"
    status = main(["write-card", path, "--set", "polytopo.family=semantic", "--set", "tile_size=8", "--out", str(out)])
    assert status == 0
    assert read_card(out).tile_size_px == 8
    assert "family semantic" in capsys.readouterr().out


def test_cli_errors_exit_1_with_message(tmp_path, capsys):
    assert main(["info", str(tmp_path / "missing.onnx")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_python_dash_m_entry_point(tmp_path, tiny):
    path = tiny.deepness_model(tmp_path / "deepness.onnx")
    result = subprocess.run([sys.executable, "-m", "polytopo.models", "info", path], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "Segmentor" in result.stdout
