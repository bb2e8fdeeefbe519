"""``python -m polytopo.models zoo``: the bundled models on the command line, without PyTorch."""

import json

from polytopo.models.cli import main
from polytopo.models.zoo import zoo_models


def test_zoo_lists_every_bundled_model_with_size_and_score(capsys):
    assert main(["zoo"]) == 0
    out = capsys.readouterr().out
    for model in zoo_models():
        line = next(line for line in out.splitlines() if line.startswith(model.name + " "))
        assert model.family in line and f"{model.size_bytes / 1e6:.1f} MB" in line
        assert f"{model.resolution_cm_per_px:g} cm/px" in line and model.scores["heldout"] in line
    assert main(["list"]) == 0 and capsys.readouterr().out == out


def test_zoo_name_prints_the_card_and_the_scores(capsys):
    assert main(["zoo", "unet_buildings_rgb"]) == 0
    out = capsys.readouterr().out
    assert "standardization_mean" in out and "polytopo.family" in out and "nairobi-z19 (unseen place)" in out
    assert main(["zoo", "unet_buildings_rgb", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["zoo"]["name"] == "unet_buildings_rgb" and data["model"]["card_error"] is None


def test_an_unknown_name_fails_naming_the_models(capsys):
    assert main(["zoo", "no_such_model"]) == 1
    assert "unet_buildings_rgb" in capsys.readouterr().err
