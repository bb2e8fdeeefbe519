"""Reading and writing metadata_props without the onnx package, checked against onnx itself."""

import os
import stat

import onnx
import pytest

from polytopo.models.errors import ModelFileError
from polytopo.models.card.onnx_metadata import read_metadata_props, write_metadata_props


def test_read_matches_onnx(tmp_path, tiny):
    path = tiny.deepness_model(tmp_path / "m.onnx")
    expected = {entry.key: entry.value for entry in onnx.load(path).metadata_props}
    assert read_metadata_props(path) == expected
    assert read_metadata_props(path)["model_type"] == '"Segmentor"'


def test_write_replaces_entries_and_keeps_graph(tmp_path, tiny):
    path = tiny.deepness_model(tmp_path / "m.onnx")
    before = onnx.load(path)
    write_metadata_props(path, {"a": "1", "ünïcode": '"ß"'})
    after = onnx.load(path)
    assert {e.key: e.value for e in after.metadata_props} == {"a": "1", "ünïcode": '"ß"'}
    assert after.graph.SerializeToString() == before.graph.SerializeToString()
    assert after.opset_import == before.opset_import
    onnx.checker.check_model(after)


def test_write_to_other_file_leaves_source(tmp_path, tiny):
    path = tiny.deepness_model(tmp_path / "m.onnx")
    out = tmp_path / "copy.onnx"
    write_metadata_props(path, {"k": "v"}, out)
    assert read_metadata_props(out) == {"k": "v"}
    assert read_metadata_props(path)["tile_size"] == "64"


def test_write_keeps_the_permissions_of_the_file_it_replaces(tmp_path, tiny):
    path = tiny.deepness_model(tmp_path / "m.onnx")
    os.chmod(path, 0o644)
    write_metadata_props(path, {"k": "v"})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    out = tmp_path / "copy.onnx"
    write_metadata_props(path, {"k": "w"}, out)  # a new file takes the source's permissions
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o644


def test_missing_file_names_path(tmp_path):
    with pytest.raises(ModelFileError, match="does not exist"):
        read_metadata_props(tmp_path / "none.onnx")


@pytest.mark.parametrize("content", [b"", b"not a model at all \xff\xff\xff", b"\x08\x07"])
def test_corrupt_file_is_rejected(tmp_path, content):
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match="Expected an ONNX model"):
        read_metadata_props(path)


def test_truncated_model_is_rejected(tmp_path, tiny):
    tiny.deepness_model(tmp_path / "m.onnx")
    data = (tmp_path / "m.onnx").read_bytes()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError):
        read_metadata_props(cut)
    with pytest.raises(ModelFileError):
        write_metadata_props(cut, {"a": "1"})
    assert not [p for p in tmp_path.iterdir() if "partial" in p.name]
