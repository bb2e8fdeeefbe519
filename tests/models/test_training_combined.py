"""Combined models without PyTorch: a soup (weights averaged) and an ensemble (outputs averaged) of exported models."""

import dataclasses
import json

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from polytopo.models.card.card_files import write_card
from polytopo.models.card.onnx_metadata import read_metadata_props
from polytopo.training import cli
from polytopo.training.cards import card_entries
from polytopo.training.errors import TrainingError
from polytopo.training.recipes import recipe
from polytopo.training.combined import make_combined
from polytopo.training.ensemble import ensembled_model
from polytopo.training.soup import averaged_model

SOUP = "unet_buildings_rgb_soup"
PAIR = "unet_buildings_rgb_pair"


def tiny_network(path, weight, bias, steps, kernel=1):
    """A 1 x 1 (or ``kernel``) convolution of 3 bands to one sigmoid probability, with a card of the default recipe."""
    nodes = [helper.make_node("Conv", ["input", "w", "b"], ["logit"], pads=[kernel // 2] * 4),
             helper.make_node("Sigmoid", ["logit"], ["probabilities"])]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 1, "H", "W"])],
        [numpy_helper.from_array(np.asarray(weight, np.float32).reshape(1, 3, kernel, kernel), "w"),
         numpy_helper.from_array(np.asarray([bias], np.float32), "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    ingredient = recipe(path.stem)
    info = {"mean": [0.5] * 3, "std": [0.5] * 3, "train_seconds": 100.0 * steps, "final_loss": 0.2,
            "torch_version": "2.13.0", "completed_steps": steps}
    write_card(path, card_entries(ingredient, info), keep_existing=False)
    return path


def ingredients(tmp_path, second_weight=(3.0, 0.0, -1.0), kernel=1):
    first = tiny_network(tmp_path / "a" / "unet_buildings_rgb.onnx", [1.0, 2.0, 3.0], 0.5, 1600)
    second = tiny_network(tmp_path / "b" / "unet_buildings_rgb_slow_encoder.onnx",
                          np.repeat(second_weight, kernel * kernel), -0.5, 1500, kernel)
    return first, second


def test_a_soup_holds_the_mean_weights_and_names_its_ingredients(tmp_path):
    first, second = ingredients(tmp_path)
    made = make_combined(recipe(SOUP), [first, second], tmp_path / "zoo")
    assert made.path == tmp_path / "zoo" / f"{SOUP}.onnx" and made.size_bytes == made.path.stat().st_size
    weights = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(made.path)).graph.initializer}
    assert weights["w"].ravel().tolist() == [2.0, 1.0, 1.0] and weights["b"].tolist() == [0.0]

    x = np.random.default_rng(0).normal(size=(1, 3, 5, 7)).astype(np.float32)
    got = onnxruntime.InferenceSession(str(made.path), providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]
    expected = 1.0 / (1.0 + np.exp(-(2.0 * x[:, 0] + x[:, 1] + x[:, 2])))
    np.testing.assert_allclose(got[:, 0], expected, rtol=1e-5)

    card = read_metadata_props(made.path)
    training = json.loads(card["polytopo.training"])
    assert [(i["file"], i["steps"], i["train_seconds"]) for i in training["soup_of"]] == [
        ("unet_buildings_rgb.onnx", 1600, 160000.0), ("unet_buildings_rgb_slow_encoder.onnx", 1500, 150000.0)]
    assert training["soup_of"][0]["sha256"] != training["soup_of"][1]["sha256"]
    assert training["steps"] == 3100 and training["train_seconds"] == 310000.0
    assert "model soup" in card["polytopo.description"]
    index = json.loads((tmp_path / "zoo" / "index.json").read_text())
    assert [(e["name"], e["size_bytes"]) for e in index["models"]] == [(SOUP, made.size_bytes)]


def test_a_soup_refuses_files_of_another_network_or_in_another_order(tmp_path):
    first, second = ingredients(tmp_path, second_weight=(1.0, 1.0, 1.0), kernel=3)
    with pytest.raises(TrainingError, match=r"weight 'w' of unet_buildings_rgb_slow_encoder.onnx to be float32 "
                                            r"\(1, 3, 1, 1\)"):
        make_combined(recipe(SOUP), [first, second], tmp_path / "zoo")
    with pytest.raises(TrainingError, match=r"Expected the model files \['unet_buildings_rgb.onnx', "
                                            r"'unet_buildings_rgb_slow_encoder.onnx'\]"):
        make_combined(recipe(SOUP), [second, first], tmp_path / "zoo")
    with pytest.raises(TrainingError, match="at least two models"):
        averaged_model([onnx.load(str(first))], ["a"])
    renamed = onnx.load(str(first))
    renamed.graph.initializer[0].name = "w2"
    renamed.graph.node[0].input[1] = "w2"
    with pytest.raises(TrainingError, match="1 weight names differ|2 weight names differ"):
        averaged_model([onnx.load(str(first)), renamed], ["a", "b"])
    assert not (tmp_path / "zoo" / f"{SOUP}.onnx").exists()


def test_a_soup_recipe_is_made_not_trained(capsys, tmp_path):
    assert recipe(SOUP).soup_of == ("unet_buildings_rgb", "unet_buildings_rgb_slow_encoder")
    (tmp_path / "README.md").write_text(cli.DEFAULT_README.read_text(encoding="utf-8"), encoding="utf-8")
    assert cli.main([SOUP, "--work-dir", str(tmp_path), "--zoo-dir", str(tmp_path / "zoo"),
                     "--readme", str(tmp_path / "README.md")]) == 1
    assert f"polytopo.training soup {SOUP} unet_buildings_rgb.onnx" in capsys.readouterr().err
    with pytest.raises(TrainingError, match="soup_of to name no recipe or at least two"):
        dataclasses.replace(recipe(SOUP), soup_of=("unet_buildings_rgb",))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def pair_members(tmp_path):
    """The pair's two members: a 1 x 1 and a 3 x 3 convolution (two different networks)."""
    first = tiny_network(tmp_path / "a" / "unet_buildings_rgb.onnx", [1.0, 2.0, 3.0], 0.5, 1600)
    second = tiny_network(tmp_path / "b" / "unet_buildings_rgb_fifth_joplin.onnx",
                          np.linspace(-1.0, 1.0, 27), -0.25, 1391, kernel=3)
    return first, second


def run_model(path, x):
    return onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"input": x})[0]


def test_an_ensemble_averages_the_outputs_of_different_networks_and_names_its_members(tmp_path):
    first, second = pair_members(tmp_path)
    made = make_combined(dataclasses.replace(recipe(PAIR), half_stored=False), [first, second], tmp_path / "zoo")
    assert made.path == tmp_path / "zoo" / f"{PAIR}.onnx"
    x = np.random.default_rng(1).normal(size=(2, 3, 6, 9)).astype(np.float32)
    got = run_model(made.path, x)
    assert got.shape == (2, 1, 6, 9)
    np.testing.assert_allclose(got, (run_model(first, x) + run_model(second, x)) / 2, rtol=1e-6, atol=1e-7)
    # each member's weights are there, under its own prefix; the members' graphs read the one input
    model = onnx.load(str(made.path))
    assert sorted(t.name for t in model.graph.initializer) == ["m0/b", "m0/w", "m1/b", "m1/w"]
    assert [i.name for i in model.graph.input] == ["input"] and [o.name for o in model.graph.output] == ["probabilities"]

    card = read_metadata_props(made.path)
    training = json.loads(card["polytopo.training"])
    assert [(m["file"], m["steps"], m["seed"]) for m in training["ensemble_of"]] == [
        ("unet_buildings_rgb.onnx", 1600, 20240611), ("unet_buildings_rgb_fifth_joplin.onnx", 1391, 20240611)]
    assert [m["crop_shares"]["joplin"] for m in training["ensemble_of"]] == [0.30, 0.20]  # each member's own
    assert "seed" not in training and "crop_shares" not in training
    assert training["steps"] == 2991 and training["train_seconds"] == 299100.0 and "soup_of" not in training
    assert "ensemble" in card["polytopo.description"] and "float16" not in card["polytopo.description"]
    index = json.loads((tmp_path / "zoo" / "index.json").read_text())
    assert [(e["name"], e["size_bytes"]) for e in index["models"]] == [(PAIR, made.size_bytes)]


def test_a_half_stored_ensemble_keeps_float32_arithmetic_in_half_the_bytes(tmp_path):
    first, second = pair_members(tmp_path)
    whole = make_combined(dataclasses.replace(recipe(PAIR), half_stored=False), [first, second], tmp_path / "zoo32")
    half = make_combined(recipe(PAIR), [first, second], tmp_path / "zoo16")  # the recipe's own choice
    assert "stored as float16" in read_metadata_props(half.path)["polytopo.description"]
    model = onnx.load(str(half.path))
    types = {t.name: t.data_type for t in model.graph.initializer}
    # the 27 weights of the 3 x 3 convolution are halved; the 3 of the 1 x 1 one and the biases stay float32
    assert types == {"m0/b": TensorProto.FLOAT, "m0/w": TensorProto.FLOAT, "m1/b": TensorProto.FLOAT,
                     "m1/w/float16": TensorProto.FLOAT16}
    x = np.random.default_rng(2).normal(size=(1, 3, 8, 8)).astype(np.float32)
    got, expected = run_model(half.path, x), run_model(whole.path, x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, atol=2e-3)
    assert not np.array_equal(got, expected)  # the weights did lose digits


def test_an_ensemble_refuses_members_that_do_not_fit_together(tmp_path):
    first, second = pair_members(tmp_path)
    with pytest.raises(TrainingError, match="at least two models to ensemble"):
        ensembled_model([onnx.load(str(first))], ["a"])
    other = onnx.load(str(second))
    other.graph.output[0].name = "mask"
    other.graph.node[-1].output[0] = "mask"
    with pytest.raises(TrainingError, match=r"Expected b to have the outputs of a \[\('probabilities', 1\)\] but got "
                                            r"\[\('mask', 1\)\]"):
        ensembled_model([onnx.load(str(first)), other], ["a", "b"])
    with pytest.raises(TrainingError, match=r"Expected the model files \['unet_buildings_rgb.onnx', "
                                            r"'unet_buildings_rgb_fifth_joplin.onnx'\] of unet_buildings_rgb_pair's "
                                            r"ensemble_of"):
        make_combined(recipe(PAIR), [second, first], tmp_path / "zoo")
    with pytest.raises(TrainingError, match=r"under 1000 bytes but it has \d+ \(removed\)"):
        make_combined(recipe(PAIR), [first, second], tmp_path / "zoo", max_bytes=1000)
    assert not (tmp_path / "zoo" / f"{PAIR}.onnx").exists()
    with pytest.raises(TrainingError, match="is trained"):
        make_combined(recipe("unet_buildings_rgb"), [first, second], tmp_path / "zoo")
    assert list((tmp_path / "zoo").glob("*.onnx")) == []
    with pytest.raises(TrainingError, match="soup_of or ensemble_of, not both"):
        dataclasses.replace(recipe(PAIR), soup_of=("unet_buildings_rgb", "unet_buildings_rgb_slow_encoder"))
    with pytest.raises(TrainingError, match="half_stored only with ensemble_of"):
        dataclasses.replace(recipe("unet_buildings_rgb"), half_stored=True)


def test_an_ensemble_recipe_is_made_with_its_own_command(capsys, tmp_path):
    (tmp_path / "README.md").write_text(cli.DEFAULT_README.read_text(encoding="utf-8"), encoding="utf-8")
    common = ["--work-dir", str(tmp_path), "--zoo-dir", str(tmp_path / "zoo"), "--readme", str(tmp_path / "README.md")]
    assert cli.main([PAIR, *common]) == 1
    assert (f"polytopo.training ensemble {PAIR} unet_buildings_rgb.onnx unet_buildings_rgb_fifth_joplin.onnx"
            in capsys.readouterr().err)
    first, second = pair_members(tmp_path)
    assert cli.main(["soup", PAIR, str(first), str(second), *common]) == 1
    assert f"{PAIR} is not a model soup" in capsys.readouterr().err
    assert not (tmp_path / "zoo").exists()


TWO_GRIDS = "unet_buildings_rgb_two_grids"


def resized(x, scale=None, size=None):
    """``x`` resized bilinearly (half-pixel centres) by onnxruntime's own Resize, by ``scale`` or to ``size`` (H, W)."""
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))]
    if scale is not None:
        node = helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear", coordinate_transformation_mode="half_pixel")
        weights = [numpy_helper.from_array(np.array([1, 1, scale, scale], np.float32), "s")]
    else:
        node = helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="linear",
                                coordinate_transformation_mode="half_pixel")
        weights = [numpy_helper.from_array(np.array([*x.shape[:2], *size], np.int64), "z")]
    graph = helper.make_graph([node], "resize", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def test_an_ensemble_member_reads_the_tile_on_its_own_grid_and_the_weights_are_stored_once(tmp_path):
    member = tiny_network(tmp_path / "a" / "unet_buildings_rgb.onnx", np.linspace(-1.0, 1.0, 27), -0.25, 1628,
                          kernel=3)
    made = make_combined(recipe(TWO_GRIDS), [member, member], tmp_path / "zoo")
    assert recipe(TWO_GRIDS).member_grids_cm == (30.0, 21.0)
    x = np.random.default_rng(3).normal(size=(2, 3, 7, 9)).astype(np.float32)
    got = run_model(made.path, x)
    assert got.shape == (2, 1, 7, 9)  # the finer read (10 x 12 px) comes back to the tile's grid
    finer = run_model(member, resized(x, scale=30.0 / 21.0))
    assert finer.shape == (2, 1, 10, 12)
    np.testing.assert_allclose(got, (run_model(member, x) + resized(finer, size=(7, 9))) / 2, rtol=1e-5, atol=1e-6)
    assert np.abs(got - run_model(member, x)).max() > 1e-3  # the second grid does change the output
    model = onnx.load(str(made.path))
    assert sorted(t.name for t in model.graph.initializer) == ["m0/b", "m0/w"]  # one file twice: its weights once
    training = json.loads(read_metadata_props(made.path)["polytopo.training"])
    assert [(m["file"], m["grid_cm"]) for m in training["ensemble_of"]] == [
        ("unet_buildings_rgb.onnx", 30.0), ("unet_buildings_rgb.onnx", 21.0)]
    # the same grid twice is the member itself
    same = make_combined(dataclasses.replace(recipe(TWO_GRIDS), member_grids_cm=(30.0, 30.0)), [member, member],
                         tmp_path / "zoo30")
    np.testing.assert_allclose(run_model(same.path, x), run_model(member, x), rtol=1e-6)


def test_member_grids_are_one_positive_size_per_member(capsys, tmp_path):
    with pytest.raises(TrainingError, match=r"one positive ground size per member of ensemble_of"):
        dataclasses.replace(recipe(TWO_GRIDS), member_grids_cm=(30.0,))
    with pytest.raises(TrainingError, match=r"one positive ground size per member"):
        dataclasses.replace(recipe(TWO_GRIDS), member_grids_cm=(30.0, 0.0))
    with pytest.raises(TrainingError, match=r"one positive scale per model \(2\)"):
        ensembled_model([onnx.load(str(p)) for p in pair_members(tmp_path)], ["a", "b"], [1.0])
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["ensemble", TWO_GRIDS, "--member-grids", "30,x"])
    assert "expected positive ground sizes in cm separated by commas (e.g. 30,21) but got '30,x'" in capsys.readouterr().err
    args = cli.build_parser().parse_args(["ensemble", TWO_GRIDS, "--member-grids", "30,19.5"])
    assert cli.overridden(recipe(TWO_GRIDS), args).member_grids_cm == (30.0, 19.5)
