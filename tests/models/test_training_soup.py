"""A model soup without PyTorch: two exported models of one network averaged weight by weight into a scored card."""

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
from polytopo.training.soup import averaged_model, make_soup

SOUP = "unet_buildings_rgb_soup"


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
    made = make_soup(recipe(SOUP), [first, second], tmp_path / "zoo")
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
        make_soup(recipe(SOUP), [first, second], tmp_path / "zoo")
    with pytest.raises(TrainingError, match=r"Expected the model files \['unet_buildings_rgb.onnx', "
                                            r"'unet_buildings_rgb_slow_encoder.onnx'\]"):
        make_soup(recipe(SOUP), [second, first], tmp_path / "zoo")
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
        import dataclasses

        dataclasses.replace(recipe(SOUP), soup_of=("unet_buildings_rgb",))
