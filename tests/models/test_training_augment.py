"""Training-crop augmentation: labels follow the image through scale and rotation; values stay in range."""

import dataclasses

import numpy as np
import pytest
import shapely
from scipy import ndimage

from polytopo.training.augment import (AUGMENTATIONS, BASIC, MULTISCALE, MULTISCALE_LARGE, STRONG, CropWindow,
                                       photometric, warp, window_polygons)
from polytopo.training.data import GridSample
from polytopo.training.recipes import recipe
from polytopo.training.samples import CropSampler, WeightedSample
from polytopo.training.errors import TrainingError
from polytopo.training.targets import class_map, instance_weights

GEOMETRY_ONLY = dataclasses.replace(STRONG, name="geometry only", gain=0.0, shift=0.0, saturation=0.0,
                                    blur_probability=0.0, jpeg_probability=0.0, noise=0.0)


def _painted_sample():
    """A sample whose image is its own label map: buildings (one with a courtyard) 220, ground 20."""
    polygons = [shapely.box(x, y, x + 21, y + 14) for x in range(6, 240, 37) for y in range(4, 280, 41)]
    polygons[3] = shapely.Polygon(shapely.box(40, 40, 92, 90).exterior.coords,
                                  [shapely.box(55, 56, 72, 71).exterior.coords])
    polygons = np.array(polygons, dtype=object)
    labels = class_map(polygons, (300, 260))
    image = np.repeat((labels * 200.0 + 20.0)[None], 3, axis=0).astype(np.float32)
    return GridSample("painted", image, np.ones((300, 260), bool), polygons, 30.0)


def _sampler(augmentation, seed=3, name="unet_buildings_rgb"):
    r = dataclasses.replace(recipe(name), augmentation=augmentation, rendered_share=0.0)
    return CropSampler([WeightedSample(_painted_sample(), 1.0)], r, np.random.default_rng(seed))


@pytest.mark.parametrize("augmentation", [GEOMETRY_ONLY, STRONG], ids=lambda a: a.name)
def test_labels_follow_the_image(augmentation):
    sampler = _sampler(augmentation)
    agreement = []
    for _ in range(120):
        crop = sampler.draw()
        building_pixels = crop.image[0] > 120.0
        agreement.append(float(((building_pixels == (crop.classes > 0)) | ~crop.valid).mean()))
    # geometric only: only pixels cut by an edge may differ (bilinear resampling)
    floor = 0.998 if augmentation is GEOMETRY_ONLY else 0.95
    assert min(agreement) >= floor, min(agreement)


def test_strong_windows_cover_the_declared_ranges():
    rng = np.random.default_rng(11)
    windows = [CropWindow.draw(rng, STRONG, (1000, 1000), 128) for _ in range(400)]
    scales = np.array([w.scale for w in windows])
    angles = np.array([w.angle for w in windows])
    assert scales.min() >= 0.7 and scales.max() <= 1.4 and scales.min() < 0.75 and scales.max() > 1.3
    assert np.histogram(angles, bins=4, range=(0, 2 * np.pi))[0].min() > 60


def test_rotation_by_a_quarter_turn_is_a_rot90_of_the_cut():
    rng = np.random.default_rng(5)
    image = rng.uniform(0, 255, (2, 64, 64)).astype(np.float32)
    valid = np.ones((64, 64), bool)
    turned = CropWindow((32.0, 32.0), 32, 1.0, np.pi / 2)
    plain = CropWindow((32.0, 32.0), 32, 1.0, 0.0)
    out, out_valid = warp(turned, image, valid)
    cut, _ = warp(plain, image, valid)
    assert out_valid.all()
    # crop x axis runs along the sample's y axis: a quarter turn of the array
    assert np.allclose(out, np.rot90(cut, k=1, axes=(1, 2)), atol=1e-3)
    square = shapely.box(20, 24, 30, 28)
    moved = window_polygons(turned, np.array([square], dtype=object))[0]
    assert moved.area == pytest.approx(square.area)


def test_scaling_shows_more_ground_in_the_same_pixels():
    sample = _painted_sample()
    window = CropWindow((130.0, 150.0), 64, 2.0, 0.0)
    image, valid = warp(window, sample.image, sample.valid)
    assert image.shape == (3, 64, 64) and valid.all()
    polygons = window_polygons(window, sample.polygons)
    assert shapely.area(polygons[0]) == pytest.approx(shapely.area(sample.polygons[0]) / 4.0)


def test_window_outside_the_sample_is_invalid():
    sample = _painted_sample()
    window = CropWindow((5.0, 5.0), 64, 1.3, 0.7)
    _, valid = warp(window, sample.image, sample.valid)
    assert 0.1 < valid.mean() < 0.6


def test_photometric_stays_in_range_and_jpeg_only_for_8_bit():
    rng = np.random.default_rng(2)
    image = rng.uniform(0, 255, (3, 48, 48)).astype(np.float32)
    always = dataclasses.replace(STRONG, name="always", blur_probability=1.0, jpeg_probability=1.0)
    for _ in range(20):
        out = photometric(rng, always, image, (0.0, 255.0))
        assert out.dtype == np.float32 and out.min() >= 0.0 and out.max() <= 255.0
        assert not np.array_equal(out, image)
    pan = rng.uniform(0, 2047, (1, 48, 48)).astype(np.float32)
    no_jpeg = dataclasses.replace(always, name="no jpeg", jpeg_probability=0.0)
    a = photometric(np.random.default_rng(9), always, pan, (0.0, 2047.0))
    b = photometric(np.random.default_rng(9), no_jpeg, pan, (0.0, 2047.0))
    assert a.max() <= 2047.0 and np.array_equal(a, b)


def test_basic_is_flips_and_gain_only():
    assert not BASIC.changes_colour and BASIC.scale == (1.0, 1.0) and not BASIC.rotate
    window = CropWindow.draw(np.random.default_rng(1), BASIC, (300, 260), 128)
    assert window.is_shift and float(window.origin[0]).is_integer() and float(window.origin[1]).is_integer()
    assert set(AUGMENTATIONS) == {"basic", "strong", "multiscale", "multiscale-colour", "multiscale-large"}
    assert "rotation" in STRONG.describe() and "JPEG" in STRONG.describe() and "rotation" not in BASIC.describe()


def test_coarsening_blurs_like_coarser_imagery_and_keeps_range():
    from polytopo.training.augment import _coarsen

    rng = np.random.default_rng(4)
    image = rng.uniform(0, 255, (3, 64, 64)).astype(np.float32)
    out = _coarsen(image, 2.0)
    assert out.shape == image.shape and out.dtype == np.float32
    assert 0.0 <= out.min() and out.max() <= 255.0
    assert out.std() < 0.7 * image.std()  # detail finer than the coarser pixel is gone
    assert abs(float(out.mean()) - float(image.mean())) < 3.0
    assert MULTISCALE.changes_colour and "coarser source imagery" in MULTISCALE.describe()
    always = dataclasses.replace(MULTISCALE, name="always", coarsen_probability=1.0)
    assert photometric(np.random.default_rng(1), always, image, (0.0, 255.0)).max() <= 255.0


def test_gamma_and_grey_change_colour_within_range_and_leave_the_other_strengths_as_they_were():
    from polytopo.training.augment import MULTISCALE_COLOUR

    rng = np.random.default_rng(5)
    image = rng.uniform(0, 255, (3, 32, 32)).astype(np.float32)
    grey = dataclasses.replace(BASIC, name="grey", gain=0.0, shift=0.0, grey_probability=1.0)
    out = photometric(np.random.default_rng(1), grey, image, (0.0, 255.0))
    assert np.allclose(out, image.mean(axis=0, keepdims=True).repeat(3, axis=0), atol=1e-4)
    dark = dataclasses.replace(BASIC, name="gamma", gain=0.0, shift=0.0, gamma=0.3)
    powers = set()
    for seed in range(30):
        out = photometric(np.random.default_rng(seed), dark, image, (0.0, 255.0))
        assert 0.0 <= out.min() and out.max() <= 255.0
        # one power per crop, within [1 / 1.3, 1.3]: the values keep their order
        power = np.log(out[0, 0, 0] / 255.0) / np.log(image[0, 0, 0] / 255.0)
        assert 1 / 1.3 - 1e-3 <= power <= 1.3 + 1e-3
        assert np.allclose(out, 255.0 * (image / 255.0) ** power, rtol=1e-3, atol=1e-2)
        powers.add(round(float(power), 3))
    assert len(powers) > 20
    assert "gamma 0.77–1.3" in MULTISCALE_COLOUR.describe() and "grey (10% of crops)" in MULTISCALE_COLOUR.describe()
    assert "gamma" not in MULTISCALE.describe() and MULTISCALE.gamma == 0 and MULTISCALE.grey_probability == 0
    # the strengths without gamma or grey draw the same random numbers as before those existed
    a = photometric(np.random.default_rng(3), MULTISCALE, image, (0.0, 255.0))
    b = photometric(np.random.default_rng(3), dataclasses.replace(MULTISCALE_COLOUR, name="m", gain=0.15, shift=0.06,
                                                                  saturation=0.25, gamma=0.0, grey_probability=0.0),
                    image, (0.0, 255.0))
    assert np.array_equal(a, b)


def test_the_large_roofs_strength_shows_buildings_up_to_twice_as_large():
    rng = np.random.default_rng(12)
    scales = np.array([CropWindow.draw(rng, MULTISCALE_LARGE, (900, 900), 256).scale for _ in range(2000)])
    assert scales.min() >= 0.5 and scales.max() <= 1.33
    # two fifths of the crops (log-uniform: 0.41) show buildings larger than the default's 1.33x allows
    assert 0.36 < np.mean(scales < 0.75) < 0.46
    assert dataclasses.replace(MULTISCALE_LARGE, name="multiscale", scale=MULTISCALE.scale) == MULTISCALE
    assert recipe("unet_buildings_rgb_large_roofs").augmentation is MULTISCALE_LARGE
    assert "scale 0.5–1.33" in MULTISCALE_LARGE.describe()


def test_every_recipe_names_a_declared_augmentation():
    from polytopo.training.recipes import RECIPES

    for r in RECIPES.values():
        assert AUGMENTATIONS[r.augmentation.name] is r.augmentation


def test_training_command_line_takes_a_declared_strength(capsys):
    from polytopo.training.cli import build_parser

    assert build_parser().parse_args(["unet_buildings_rgb", "--augmentation", "strong"]).augmentation == "strong"
    assert build_parser().parse_args(["unet_buildings_rgb"]).augmentation is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["unet_buildings_rgb", "--augmentation", "extreme"])
    assert "invalid choice: 'extreme'" in capsys.readouterr().err


def test_instance_weights_raise_small_buildings_and_the_ground_between_two():
    small, large, neighbour = shapely.box(0, 0, 2, 2), shapely.box(3, 0, 7, 4), shapely.box(3, 5, 7, 7)
    weights = instance_weights([small, large, neighbour], (9, 10), 16.0, 3.0, 5.0, 1)
    assert weights.dtype == np.float32 and weights.shape == (9, 10)
    # the 2 x 2 building weighs sqrt(16 / 4) = 2; the 4 x 4 one (area 16) and the 4 x 2 one (capped by 1 below) 1
    assert weights[0:2, 0:2].tolist() == [[2.0, 2.0]] * 2
    assert np.all(weights[0:4, 3:7] == 1.0) and np.all(weights[5:7, 3:7] == np.sqrt(2.0).astype(np.float32))
    # ground within 1 px of two buildings: column 2 beside the small and the large one, row 4 between the large one and
    # its neighbour; ground near one building only, or none, weighs 1
    assert weights[0, 2] == 5.0 and weights[4, 3:7].tolist() == [5.0] * 4
    assert weights[8, 9] == 1.0 and weights[0, 7] == 1.0 and weights[3, 0] == 1.0 and weights[7, 4] == 1.0
    # a cap, and no gap weights without a reach
    assert instance_weights([shapely.box(0, 0, 1, 1)], (3, 3), 100.0, 3.0)[0, 0] == 3.0
    assert set(np.unique(instance_weights([small, large], (4, 8), 16.0, 3.0, 5.0, 0))) == {1.0, 2.0}


def test_wall_weights_raise_both_sides_of_a_shared_wall_and_keep_a_larger_weight():
    """Building pixels within the reach of another building weigh at least the wall weight; the ground keeps the gap
    weight, a small building's larger weight stands, and far from any other building nothing changes."""
    left, right, alone = shapely.box(0, 0, 4, 4), shapely.box(4, 0, 6, 4), shapely.box(0, 7, 4, 9)
    weights = instance_weights([left, right, alone], (9, 10), 32.0, 3.0, 5.0, 1, wall_weight=4.0)
    own_left, own_right = np.float32(np.sqrt(2.0)), 2.0  # sqrt(32 / 16), sqrt(32 / 8)
    assert weights[0:4, 3].tolist() == [4.0] * 4  # the left building's side of the wall, raised from its own weight
    assert weights[0:4, 4].tolist() == [4.0] * 4  # the right one's side
    assert weights[0:4, 5].tolist() == [own_right] * 4 and weights[0:4, 2].tolist() == [own_left] * 4  # 2 px away
    assert np.all(weights[7:9, 0:4] == 2.0)  # the building alone (8 px²) keeps its own weight
    # the ground just below the wall's end is near both buildings (gap weight), further along near one (1)
    assert weights[4, 0:6].tolist() == [1.0, 1.0, 1.0, 5.0, 5.0, 1.0] and weights[5, 0:6].max() == 1.0
    assert instance_weights([left, right], (4, 8), 64.0, 8.0, 1.0, 1, wall_weight=2.0)[0, 4] == np.float32(np.sqrt(8.0))


def test_loss_weights_follow_the_image_through_the_augmentation():
    sampler = _sampler(GEOMETRY_ONLY, name="unet_buildings_rgb_weighted")
    assert _sampler(GEOMETRY_ONLY).draw().weights is None  # the default recipe has none
    raised = 0
    for _ in range(40):
        crop = sampler.draw()
        assert crop.weights.shape == crop.classes.shape and crop.weights.min() >= 1.0
        heavy_ground = (crop.weights > 1.0) & (crop.classes == 0)
        # raised ground lies next to the painted buildings (bright pixels within 4 px: 3 and a resampled edge)
        if heavy_ground.any():
            raised += 1
            near = ndimage.maximum_filter(crop.image[0] > 120.0, size=9)
            assert near[heavy_ground & crop.valid].all()
    assert raised > 10
    # the gap weight alone: buildings' pixels weigh 1, the ground between two of them 3
    gaps = _sampler(GEOMETRY_ONLY, name="unet_buildings_rgb_gaps")
    weights = np.concatenate([gaps.draw().weights.ravel() for _ in range(10)])
    assert set(np.unique(weights)) == {1.0, 3.0}


def test_loss_weights_need_a_class_head_and_sane_values():
    with pytest.raises(TrainingError, match="small_building_m2 >= 0, and no loss weights"):
        dataclasses.replace(recipe("unet_buildings_rgb_scratch"), small_building_m2=40.0)
    with pytest.raises(TrainingError, match="small_building_m2 >= 0, and no loss weights"):
        dataclasses.replace(recipe("unet_buildings_rgb_scratch"), gap_weight=3.0)
    with pytest.raises(TrainingError, match="small_building_max_weight >= 1"):
        dataclasses.replace(recipe("unet_buildings_rgb_weighted"), small_building_max_weight=0.5)


def test_the_card_states_the_loss_weights_it_was_trained_with():
    from polytopo.training.cards import card_entries

    info = {"mean": [0.5] * 3, "std": [0.5] * 3, "train_seconds": 1.0, "final_loss": 0.1, "torch_version": "2"}
    weighted = card_entries(recipe("unet_buildings_rgb_weighted"), info)["polytopo.training"]["loss_weights"]
    assert weighted == {"gap_weight": 3.0, "gap_reach_px": 3, "small_building_m2": 40.0, "small_building_max_weight": 3.0}
    gaps = card_entries(recipe("unet_buildings_rgb_gaps"), info)["polytopo.training"]["loss_weights"]
    assert gaps == {"gap_weight": 3.0, "gap_reach_px": 3}
    lite2_gaps = recipe("unet_buildings_rgb_lite2_gaps")
    assert lite2_gaps.encoder == "efficientnet-lite2" and lite2_gaps.augmentation is recipe("unet_buildings_rgb").augmentation
    assert card_entries(lite2_gaps, info)["polytopo.training"]["loss_weights"] == gaps
    # the second seed and the shorter schedule differ from the first Lite2-gaps run in that alone
    for name, changed in (("unet_buildings_rgb_lite2_gaps_seed", {"seed": 20261213}),
                          ("unet_buildings_rgb_lite2_gaps_short", {"steps": 650})):
        rerun = recipe(name)
        assert dataclasses.replace(lite2_gaps, name=name, **changed) == rerun
        assert all(getattr(rerun, field) != getattr(lite2_gaps, field) for field in changed)
    walls = card_entries(recipe("unet_holes_rgb_walls"), info)["polytopo.training"]["loss_weights"]
    assert walls == {"gap_weight": 3.0, "gap_reach_px": 3, "wall_weight": 3.0}
    assert "loss_weights" not in card_entries(recipe("unet_buildings_rgb"), info)["polytopo.training"]
