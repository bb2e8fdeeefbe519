"""The scores in the bundled cards are what the current engine and evaluator give.

Each RGB card carries a row for every fAIr place other than Kampala (:data:`polytopo.training.data.UNSEEN_PLACES`),
marked "trained place" where its recipe trained on it and "unseen place" otherwise (Nairobi always), and
re-scoring the default model on its headline raster and on the held-out place reproduces its card's
rows (to 0.005), so a change
to the engine or the evaluator that moves a published score cannot go unnoticed.
Needs the shared data folder; skipped, with that reason, without it. Runs without PyTorch.
"""

import dataclasses
import json

import pytest
import shapely
from polytopo.models import SessionParams, load_model
from polytopo.models.card.onnx_metadata import read_metadata_props
from polytopo.models.zoo import zoo_model, zoo_models
from polytopo.training import data
from polytopo.training.errors import TrainingError
from polytopo.training.evaluate_zoo import score_raster
from polytopo.training.readme import SCORED_METRICS, render_tables
from polytopo.training.heldout import UNSEEN_PLACE_ZOOM, kampala_heldout, unseen_places
from polytopo.training.recipes import recipe
from polytopo.training.shared_data import find_shared_data, shared_data_available

pytestmark = pytest.mark.skipif(not shared_data_available(),
                                reason="the shared data folder (imagery with labels) is absent")

RGB_MODELS = [model for model in zoo_models() if "16-bit" not in model.input]


def card_rows(model):
    return {row["key"]: row for row in json.loads(read_metadata_props(model.path)["polytopo.scores"])["results"]}


@pytest.mark.parametrize("model", RGB_MODELS, ids=lambda model: model.name)
def test_every_rgb_card_is_scored_on_every_unseen_place(model):
    """Every fAIr place is scored; a place the recipe trained on says so, the others (Nairobi always) are unseen."""
    trained = recipe(model.name).train_places
    assert "nairobi" not in trained
    rows = card_rows(model)
    for place in data.UNSEEN_PLACES:
        row = rows[f"{place}-z{UNSEEN_PLACE_ZOOM}"]
        assert row["split"] == ("trained place" if place in trained else "unseen place") and not row["synthetic"]
        assert row["reference_instances"] > 50 and 25.0 < row["gsd_cm"] < 31.0


@pytest.fixture(scope="module")
def rasters(tmp_path_factory):
    shared = find_shared_data()
    work = tmp_path_factory.mktemp("zoo-scores")
    trained = recipe("unet_buildings_rgb").train_places
    return {raster.key: raster for raster in kampala_heldout(shared, work) + unseen_places(shared, work, trained)}


@pytest.mark.parametrize("key", ["kampala-z19", "nairobi-z19"])
def test_rescoring_the_default_model_reproduces_its_card(rasters, key):
    model = zoo_model("unet_buildings_rgb")
    row = score_raster(load_model(model.path, SessionParams(provider="cpu", intra_op_threads=2)), rasters[key])
    card = card_rows(model)[key]
    assert (row["reference_instances"], row["split"]) == (card["reference_instances"], card["split"])
    # Another CPU may round a few probabilities differently (one pixel more or less at the
    # threshold); a change of the engine or evaluator moved scores by up to 0.04.
    assert row["predicted_instances"] == pytest.approx(card["predicted_instances"], rel=0.02)
    for metric in SCORED_METRICS:
        assert row[metric] == pytest.approx(card[metric], abs=0.005), metric


def test_an_unknown_place_is_refused_with_the_known_ones():
    with pytest.raises(TrainingError, match="Expected one of the places .*nairobi.*but got 'atlantis'"):
        data.place_tiles(find_shared_data().kampala_chips.parent, "atlantis", 19)


def test_hole_choices_have_validation_courtyards_apart_from_the_held_out_ground(tmp_path):
    """A hole-aware recipe is chosen on the validation patch with synthetic courtyards, never on held-out ground."""
    from polytopo.training.calibrate import choice_score
    from polytopo.training.heldout import kampala_validation

    shared = find_shared_data()
    plain, z20, courtyards = kampala_validation(shared, tmp_path, courtyards=True)
    assert (plain.key, z20.key, courtyards.key) == ("validation-z19", "validation-z20", "validation-z20-courtyards")
    assert courtyards.split == "validation" and courtyards.synthetic and not z20.synthetic
    holes = sum(len(polygon.interiors) for polygon in courtyards.reference)
    assert holes >= 10 and sum(len(polygon.interiors) for polygon in z20.reference) == 0
    assert len(courtyards.reference) == len(z20.reference)
    held_out = kampala_heldout(shared, tmp_path)
    assert not any(shapely.intersects(courtyards.reference, r.reference[:, None]).any() for r in held_out)
    rows = {"a": {"AP50": 0.4, "Hole-F1": 0.0, "synthetic": False},
            "b": {"AP50": 0.2, "Hole-F1": 0.6, "synthetic": True}}
    assert choice_score(rows) == pytest.approx((0.4 + 0.2 + 0.6) / 3)


def test_a_validation_place_is_chosen_on_and_never_trained_or_scored_as_unseen(tmp_path):
    """A recipe's validation place joins the Kampala patch as validation ground at zoom 19 and 20, and leaves training
    and the unseen places; the card says so."""
    from polytopo.training.cards import training_data
    from polytopo.training.evaluate_zoo import heldout_for
    from polytopo.training.heldout import place_validation

    trial = recipe("unet_buildings_rgb_place_validation")
    default = recipe("unet_buildings_rgb")
    assert trial.validation_places == ("nepal",) and "nepal" not in trial.train_places
    assert dict(trial.place_shares).keys() == {"kampala", *trial.train_places, "joplin"}
    assert sum(dict(trial.place_shares).values()) == pytest.approx(1.0)
    assert dataclasses.replace(trial, name=default.name, train_places=default.train_places, validation_places=(),
                               place_shares=default.place_shares) == default
    with pytest.raises(TrainingError, match=r"validation_places apart from train_places but both name \['nepal'\]"):
        dataclasses.replace(default, validation_places=("nepal",))
    assert "Nepal (same repository) is validation ground" in training_data(trial)
    assert "validation ground, used for no training: the threshold" not in training_data(default)

    shared = find_shared_data()
    z19, z20 = place_validation(shared, tmp_path, trial.validation_places)
    assert (z19.key, z20.key, z19.split, z20.split) == ("validation-nepal-z19", "validation-nepal-z20",
                                                        "validation", "validation")
    assert len(z19.reference) > 50 and z20.gsd_cm < z19.gsd_cm < 31.0
    keys = [(raster.key, raster.split) for raster in heldout_for(trial, shared, tmp_path)]
    assert keys[:4] == [("validation-z19", "validation"), ("validation-z20", "validation"),
                        ("validation-nepal-z19", "validation"), ("validation-nepal-z20", "validation")]
    assert "nepal-z19" not in dict(keys) and dict(keys)["nairobi-z19"] == "unseen place"
    assert dict(keys)["philippines-z19"] == "trained place"


def test_readme_tables_of_a_folder_without_every_indexed_model(tmp_path):
    """A trial's scratch folder (or a zoo whose model pack is not installed) names the missing files, scores the rest."""
    import shutil

    from polytopo.models.zoo import ZOO_DIR

    index = json.loads((ZOO_DIR / "index.json").read_text(encoding="utf-8"))
    default, *others = index["models"]
    (tmp_path / "index.json").write_text(json.dumps(index), encoding="utf-8")
    shutil.copy(ZOO_DIR / default["file"], tmp_path / default["file"])
    text = render_tables(tmp_path)
    assert f"**`{default['name']}`** (" in text
    for entry in others:
        assert f"**`{entry['name']}`**: `{entry['file']}` is not in this folder" in text


def test_a_missing_or_unmarked_readme_is_refused_before_any_work(tmp_path, capsys):
    """``--readme`` is checked first: a long run must not end on a file that is not there."""
    from polytopo.training.cli import main

    missing = tmp_path / "absent" / "README.md"
    assert main(["evaluate", "unet_buildings_rgb", "--readme", str(missing), "--work-dir", str(tmp_path)]) == 1
    assert f"Expected a README at {missing} (--readme)" in capsys.readouterr().err
    unmarked = tmp_path / "README.md"
    unmarked.write_text("# no markers\n", encoding="utf-8")
    assert main(["calibrate", "unet_buildings_rgb", "--readme", str(unmarked), "--work-dir", str(tmp_path)]) == 1
    assert "Expected the markers" in capsys.readouterr().err
    assert not (tmp_path / "mosaics").exists()  # nothing was read or made
