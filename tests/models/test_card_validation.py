"""Checks of a card against the graph: rank, channels, tile size, outputs, input type."""

import pytest
from onnx import TensorProto, helper

from polytopo.models.card.model_card import card_to_props, parse_card
from polytopo.models.card.validation import GraphSignature, TensorSpec, check_card
from polytopo.models.errors import ModelCardError
from polytopo.models.model import load_model
from polytopo.models.session import SessionParams


def signature(input_shape, outputs=(("output", (None, 1, None, None)),), dtype="float32"):
    return GraphSignature(
        inputs=(TensorSpec("input", tuple(input_shape), dtype),),
        outputs=tuple(TensorSpec(name, shape, "float32") for name, shape in outputs),
    )


def card(**entries):
    base = {"polytopo.family": "semantic"}
    base.update({key.replace("__", "."): value for key, value in entries.items()})
    return parse_card(card_to_props(base))


def test_nchw_fixed_tile_is_resolved():
    io = check_card(card(), signature((None, 3, 256, 256), (("output", (None, 2, 256, 256)),)))
    assert (io.layout, io.channels, io.tile_size_px, io.batch_size_fixed) == ("NCHW", 3, 256, None)
    assert io.output_name("probabilities") == "output"
    assert io.class_count == 2


def test_nhwc_is_inferred_from_the_channel_axis():
    io = check_card(card(), signature((1, None, None, 4)))
    assert (io.layout, io.channels, io.tile_size_px, io.batch_size_fixed) == ("NHWC", 4, None, 1)


def test_tile_size_contradicting_the_graph_names_tile_size():
    with pytest.raises(ModelCardError, match="'tile_size'.*") as info:
        check_card(card(tile_size=512), signature((None, 3, 256, 256)))
    assert "tile_size 256" in str(info.value)


def test_non_square_fixed_input_is_rejected():
    with pytest.raises(ModelCardError, match="square"):
        check_card(card(), signature((None, 3, 256, 128)))


def test_rank_other_than_four_is_rejected():
    with pytest.raises(ModelCardError, match="rank 4"):
        check_card(card(), signature((None, 3, 256)))


def test_dtype_the_raster_cannot_supply_is_rejected():
    with pytest.raises(ModelCardError, match="int64"):
        check_card(card(), signature((None, 3, 64, 64), dtype="int64"))


def test_band_count_must_match_channels():
    with pytest.raises(ModelCardError, match="'polytopo.bands'"):
        check_card(card(polytopo__bands=[1, 2]), signature((None, 3, 64, 64)))


def test_standardization_length_must_match_channels():
    with pytest.raises(ModelCardError, match="'standardization_mean'"):
        check_card(card(standardization_mean=[0.1, 0.2]), signature((None, 3, 64, 64)))


def test_output_names_must_exist():
    with pytest.raises(ModelCardError, match="output names among"):
        check_card(card(polytopo__outputs={"probabilities": "prob"}), signature((None, 3, 64, 64)))


def test_several_outputs_need_polytopo_outputs():
    sig = signature((None, 3, 64, 64), (("a", (None, 1, 64, 64)), ("b", (None, 1, 64, 64))))
    with pytest.raises(ModelCardError, match="'polytopo.outputs'"):
        check_card(card(), sig)


def test_class_names_must_match_class_channels():
    sig = signature((None, 3, 64, 64), (("output", (None, 3, 64, 64)),))
    with pytest.raises(ModelCardError, match="'class_names'"):
        check_card(card(class_names={"0": "bg", "1": "building"}), sig)


def test_single_channel_output_accepts_two_names():
    io = check_card(card(class_names={"0": "bg", "1": "building"}), signature((None, 1, 64, 64)))
    assert io.class_count == 1


def test_deepness_model_loads_unchanged(tmp_path, tiny):
    model = load_model(tiny.deepness_model(tmp_path / "deepness.onnx"), SessionParams(provider="cpu"))
    assert model.card.family == "semantic"
    assert model.io.tile_size_px == 64 and model.io.channels == 3 and model.io.class_count == 2
    assert model.session.report.primary == "CPUExecutionProvider"


def test_real_graph_contradiction_is_reported_at_load(tmp_path, tiny):
    path = tiny.semantic_band_model(tmp_path / "m.onnx", channels=1, tile=32, card={"polytopo.family": "semantic", "tile_size": 64})
    with pytest.raises(ModelCardError, match="tile_size 32"):
        load_model(path, SessionParams(provider="cpu"))


def test_string_input_model_is_rejected_at_load(tmp_path, tiny):
    inp = helper.make_tensor_value_info("input", TensorProto.INT64, ["N", 3, 8, 8])
    out = helper.make_tensor_value_info("output", TensorProto.INT64, ["N", 3, 8, 8])
    path = tiny.build(tmp_path / "int.onnx", [helper.make_node("Identity", ["input"], ["output"])], [inp], [out], {"polytopo.family": "semantic"})
    with pytest.raises(ModelCardError, match="int64"):
        load_model(path, SessionParams(provider="cpu"))
