"""Model card parsing: Deepness keys, polytopo keys, and the errors for bad entries."""

import json

import pytest

from polytopo.models.card.model_card import FAMILIES, card_to_props, example_card, parse_card
from polytopo.models.errors import ModelCardError


def props(**entries):
    return card_to_props({key.replace("__", "."): value for key, value in entries.items()})


def test_deepness_card_parses_with_units():
    card = parse_card(
        props(
            model_type="Segmentor",
            class_names={"0": "background", "1": "building"},
            resolution=30,
            tile_size=512,
            tiles_overlap=15,
            standardization_mean=[0.485, 0.456, 0.406],
            standardization_std=[0.229, 0.224, 0.225],
            seg_thresh=0.6,
            seg_small_segment=7,
            det_conf=0.3,
            det_iou_thresh=0.4,
        )
    )
    assert card.family == "semantic"
    assert card.class_names == ("background", "building")
    assert card.resolution_cm_per_px == 30.0
    assert card.tile_size_px == 512
    assert card.tiles_overlap_percent == 15.0
    assert card.standardization_std == (0.229, 0.224, 0.225)
    assert (card.seg_threshold, card.seg_small_segment_px) == (0.6, 7)
    assert (card.det_confidence, card.det_iou_threshold) == (0.3, 0.4)
    assert card.simplify_tolerance_px == 1.0


def test_deepness_class_names_with_integer_keys_are_accepted():
    card = parse_card({"model_type": '"Segmentor"', "class_names": "{0: 'bg', 1: 'road'}"})
    assert card.class_names == ("bg", "road")


def test_bare_string_model_type_is_accepted():
    assert parse_card({"model_type": "Segmentor"}).family == "semantic"


def test_polytopo_keys_parse():
    card = parse_card(
        props(
            polytopo__family="instance",
            polytopo__outputs={"boxes": "b", "scores": "s", "masks": "m"},
            polytopo__input_range=[0, 65535],
            polytopo__bands=[3, 2, 1],
            polytopo__min_area_px=10,
            polytopo__min_hole_area_px=2,
            polytopo__simplify_tolerance_px=0.5,
            polytopo__licence="CC-BY-4.0",
            polytopo__baseline="Mask R-CNN + Poly.",
        )
    )
    assert card.family == "instance"
    assert card.output_name("masks") == "m"
    assert card.input_range == (0.0, 65535.0)
    assert card.bands == (3, 2, 1)
    assert (card.min_area_px2, card.min_hole_area_px2, card.simplify_tolerance_px) == (10.0, 2.0, 0.5)
    assert card.licence == "CC-BY-4.0"


@pytest.mark.parametrize("family", FAMILIES)
def test_every_example_card_is_valid(family):
    card = parse_card(card_to_props(example_card(family)))
    assert card.family == family


@pytest.mark.parametrize(
    "entries, key",
    [
        ({}, "polytopo.family"),
        ({"model_type": "Detector"}, "polytopo.family"),
        ({"polytopo.family": "semantic", "tile_size": "big"}, "tile_size"),
        ({"polytopo.family": "semantic", "tile_size": 12.5}, "tile_size"),
        ({"polytopo.family": "semantic", "seg_thresh": 1.5}, "seg_thresh"),
        ({"polytopo.family": "semantic", "polytopo.input_range": [255, 0]}, "polytopo.input_range"),
        ({"polytopo.family": "semantic", "standardization_std": [0.0]}, "standardization_std"),
        ({"polytopo.family": "semantic", "class_names": {"0": "a", "2": "b"}}, "class_names"),
        ({"polytopo.family": "instance"}, "polytopo.outputs"),
        ({"polytopo.family": "instance", "polytopo.outputs": {"boxes": "b"}}, "polytopo.outputs"),
        ({"polytopo.family": "semantic", "polytopo.outputs": {"boxes": "b"}}, "polytopo.outputs"),
        ({"polytopo.family": "polyline"}, "polytopo.family"),
        ({"polytopo.family": "promptable", "polytopo.outputs": {"embedding": "e"}}, "polytopo.prompt_decoder"),
        ({"polytopo.family": "semantic", "polytopo.bands": [0, 1]}, "polytopo.bands"),
        ({"polytopo.family": "semantic", "polytopo.output_activation": "relu"}, "polytopo.output_activation"),
    ],
)
def test_bad_cards_name_the_key_in_one_line_and_the_example_command(entries, key):
    with pytest.raises(ModelCardError) as info:
        parse_card(card_to_props(entries))
    message = str(info.value)
    assert repr(key) in message and "\n" not in message
    assert message.startswith("Expected") and "python -m polytopo.models example-card " in message


def test_value_that_is_not_json_is_reported():
    with pytest.raises(ModelCardError, match="not JSON"):
        parse_card({"polytopo.family": '"semantic"', "standardization_mean": "[0.1, "})


def test_frame_field_card_without_outputs_names_its_roles():
    with pytest.raises(ModelCardError, match=r"roles \['seg', 'frame_field'\] for family 'frame-field'"):
        parse_card({"polytopo.family": json.dumps("frame-field")})


def test_unknown_keys_are_kept_as_extra():
    card = parse_card({"model_type": '"Segmentor"', "author": "someone"})
    assert dict(card.extra) == {"author": "someone"}
