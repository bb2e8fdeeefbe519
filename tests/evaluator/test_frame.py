"""The frame step: map-unit features become pixel instances with images, scores and classes."""

import pytest
import shapely

from polytopo.core.errors import InputFormatError
from polytopo.evaluator.inputs.frame import instances_in_frame
from polytopo.core.vector_files import PixelFrame

FRAME = PixelFrame(None, origin_x=100.0, origin_y=50.0, pixel_size=0.5)
BOXES = [shapely.box(100, 46, 102, 50), None, shapely.box(104, 46, 106, 48)]


def _describe(index):
    return f"layer 'p' feature {index + 1}"


def test_geometry_goes_to_pixels_and_missing_geometry_is_left_out():
    """Map units are divided by the pixel size from the frame origin, y pointing down."""
    gt = instances_in_frame(FRAME, BOXES, source_ids=[1, 2, 3], source="g", skipped={"null_geometry": 1})
    assert [instance.source_id for instance in gt.instances] == [1, 3]
    assert shapely.Polygon(gt.instances[1].exterior).bounds == (8.0, 4.0, 12.0, 8.0)
    assert [instance.score for instance in gt.instances] == [1.0, 1.0]
    assert gt.skipped == {"null_geometry": 1} and gt.image_ids == (0,) and gt.source == "g"


def test_null_score_takes_the_default_or_names_the_feature():
    """A NULL score is the default score; without one it is an error naming feature and field."""
    values = {"s": [0.9, 0.2, None]}
    pred = instances_in_frame(FRAME, BOXES, source_ids=[1, 2, 3], source="p", values=values, score_field="s",
                              default_score=0.3, scored=True, describe=_describe)
    assert [instance.score for instance in pred.instances] == [0.9, 0.3]
    with pytest.raises(InputFormatError, match="layer 'p' feature 3 field 's': expected a score but got NULL"):
        instances_in_frame(FRAME, BOXES, source_ids=[1, 2, 3], source="p", values=values, score_field="s",
                           scored=True, describe=_describe)


def test_without_a_score_field_every_prediction_scores_the_default():
    """No score field: the default score, else 1.0."""
    for default, expected in ((None, 1.0), (0.4, 0.4)):
        pred = instances_in_frame(FRAME, BOXES, source_ids=[1, 2, 3], source="p", default_score=default, scored=True)
        assert {instance.score for instance in pred.instances} == {expected}


def test_non_finite_score_is_an_error():
    with pytest.raises(InputFormatError, match="feature 1 field 's': expected a finite score but got nan"):
        instances_in_frame(FRAME, BOXES, source_ids=[1, 2, 3], source="p", values={"s": [float("nan"), 1, 1]},
                           score_field="s", scored=True, describe=_describe)


def test_other_classes_are_counted_and_images_come_from_the_field():
    """Features outside ``categories`` are skipped as other_category; the image field names the images."""
    values = {"c": ["a", "a", "b"], "tile": ["t2", "t1", "t1"]}
    gt = instances_in_frame(FRAME, BOXES, source_ids=[1, 2, 3], source="g", values=values, category_field="c",
                            categories={"a"}, image_field="tile")
    assert [instance.source_id for instance in gt.instances] == [1]
    assert gt.skipped == {"other_category": 1} and gt.image_ids == ("t2", "t1")


def test_patch_grid_assigns_patches():
    frame = PixelFrame(None, origin_x=100.0, origin_y=50.0, pixel_size=0.5, patch_size_px=8)
    gt = instances_in_frame(frame, BOXES, source_ids=[1, 2, 3], source="g")
    assert [instance.image_id for instance in gt.instances] == ["r0_c0", "r0_c1"]
    assert gt.image_ids == ("r0_c0", "r0_c1")
