"""An untrusted model may read only files inside its own folder: external weights and the prompt decoder."""

import json
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, save_model

from polytopo.models.errors import ModelCardError, ModelFileError
from polytopo.models.confinement import inside_model_folder
from polytopo.models.model import load_model
from polytopo.models.card.onnx_metadata import external_data_locations, write_metadata_props
from polytopo.models.session import SessionParams, open_session
from polytopo.models.zoo import zoo_model
from reliability import case

CPU = SessionParams(provider="cpu")
SECRET = b"ABCDEFGHIJKLMNOP"


def _external(name, location):
    """A float tensor of 4 values whose 16 bytes come from ``location``."""
    tensor = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL)
    for key, value in (("location", location), ("length", "16")):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def _model(path, location, where="initializer"):
    """``y = x + w`` with ``w`` stored at ``location``: as an initializer, a Constant or inside an If branch."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    initializers, nodes = [], []
    if where == "initializer":
        initializers.append(_external("w", location))
    elif where == "constant":
        nodes.append(helper.make_node("Constant", [], ["w"], value=_external("wc", location)))
    else:
        branch_out = helper.make_tensor_value_info("w", TensorProto.FLOAT, [4])
        branch = helper.make_graph([helper.make_node("Constant", [], ["w"], value=_external("wb", location))],
                                   "branch", [], [branch_out])
        nodes.append(helper.make_node("Constant", [], ["yes"], value=helper.make_tensor("c", TensorProto.BOOL, [], [1])))
        nodes.append(helper.make_node("If", ["yes"], ["w"], then_branch=branch, else_branch=branch))
    nodes.append(helper.make_node("Add", ["x", "w"], ["y"]))
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], initializers),
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save_model(model, str(path))
    return str(path)


@pytest.fixture
def folders(tmp_path):
    model_folder = tmp_path / "model"
    model_folder.mkdir()
    (tmp_path / "secret.bin").write_bytes(SECRET)
    return model_folder, tmp_path / "secret.bin"


@pytest.mark.parametrize("where", ["initializer", "constant", "subgraph"])
@pytest.mark.parametrize("kind", ["parent", "absolute", "symlink"])
def test_external_data_outside_the_model_folder_is_refused_before_loading(folders, where, kind):
    model_folder, secret = folders
    location = {"parent": "../secret.bin", "absolute": str(secret), "symlink": "weights.bin"}[kind]
    if kind == "symlink":
        os.symlink(secret, model_folder / "weights.bin")
    path = _model(model_folder / "m.onnx", location, where)
    assert {loc for _name, loc in external_data_locations(path)} == {location}
    with pytest.raises(ModelFileError) as info:
        open_session(path, CPU)
    message = str(info.value)
    assert "Expected the external data of tensor" in message and repr(location) in message
    assert "inside the model's folder" in message


def test_external_data_beside_the_model_still_loads(folders):
    model_folder, _ = folders
    (model_folder / "weights.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    path = _model(model_folder / "m.onnx", "weights.bin")
    (out,) = open_session(path, CPU).run(["y"], {"x": np.ones(4, np.float32)})
    np.testing.assert_array_equal(out, [1, 2, 3, 4])


@pytest.mark.parametrize("decoder", ["../decoder.onnx", "{absolute}", "sub/../../decoder.onnx"])
def test_prompt_decoder_outside_the_model_folder_is_refused(tmp_path, tiny, decoder):
    model_folder = tmp_path / "model"
    model_folder.mkdir()
    encoder = tiny.promptable_models(model_folder, tile=32)
    os.replace(model_folder / "decoder.onnx", tmp_path / "decoder.onnx")
    value = decoder.format(absolute=str(tmp_path / "decoder.onnx"))
    write_metadata_props(encoder, {**_card(encoder), "polytopo.prompt_decoder": json.dumps(value)})
    with pytest.raises(ModelCardError, match="Expected polytopo.prompt_decoder .* inside the model's folder"):
        load_model(encoder, CPU)


def _card(path):
    from polytopo.models.card.onnx_metadata import read_metadata_props

    return read_metadata_props(path)


def _non_utf8_model(model_folder, secret):
    """A model whose weights are at the bytes ``\\xff\\xfe/secret.bin``, a folder link of that byte name pointing out."""
    os.symlink(secret.parent, os.path.join(os.fsencode(model_folder), b"\xff\xfe"))
    path = model_folder / "m.onnx"
    _model(path, "XX/secret.bin")
    data = path.read_bytes()
    assert data.count(b"XX/secret.bin") == 1
    path.write_bytes(data.replace(b"XX/secret.bin", b"\xff\xfe/secret.bin"))
    return str(path)


@case("model whose external-data location is the bytes \\xff\\xfe/secret.bin, a link of that byte name "
      "in its folder pointing outside", "models CLI, models API",
      "ModelFileError before onnxruntime reads a byte: Expected the external data location ... to be UTF-8 text ...; "
      "the check itself resolves the real bytes, so the link is seen leaving the folder")
def test_a_location_that_is_not_utf8_is_listed_as_its_real_bytes_and_refused(folders):
    """The check sees the bytes onnxruntime would open: the link of that byte name leads outside."""
    model_folder, secret = folders
    path = _non_utf8_model(model_folder, secret)
    ((name, location),) = external_data_locations(path)
    assert os.fsencode(location) == b"\xff\xfe/secret.bin"
    assert inside_model_folder(path, location) is None
    with pytest.raises(ModelFileError) as info:
        open_session(path, CPU)
    message = str(info.value)
    assert "to be UTF-8 text" in message and repr(b"\xff\xfe/secret.bin") in message


@case("the same model loaded through load_model", "plugin vectorize (dock, Processing)",
      "ModelFileError: Expected the external data location ... to be UTF-8 text ...")
def test_a_non_utf8_location_is_refused_by_the_plugin_path_too(folders):
    """``load_model``, which the dock and Processing call, refuses it before onnxruntime reads a byte."""
    model_folder, secret = folders
    path = _non_utf8_model(model_folder, secret)
    write_metadata_props(path, _card(zoo_model("unet_buildings_rgb").path))  # a complete card, so loading goes on
    with pytest.raises(ModelFileError, match="to be UTF-8 text"):
        load_model(path, CPU)
