"""The AP50 loss diagnostic (``python -m polytopo.training.where_lost``) on polygons whose answer is known."""

import numpy as np
import shapely

from polytopo.training.where_lost import loss_breakdown


def test_a_reference_offset_by_a_few_pixels_is_overlapped_only_at_its_own_shift():
    references = np.array([shapely.box(0, 0, 10, 10), shapely.box(40, 0, 50, 10)])
    predictions = np.array([shapely.box(5, 0, 15, 10), shapely.box(40, 0, 50, 10)])  # the first 5 px off
    row = loss_breakdown("tile", references, predictions, [0.9, 0.8], max_shift_px=5)
    assert row["overlapped"] == 0.5 and row["overlapped_shifted"] == 1.0
    # moved by 1 px the first overlaps 6/14 of the union, by 2 px 7/13: only from 2 px on does it count
    assert loss_breakdown("tile", references, predictions, [0.9, 0.8], max_shift_px=1)["overlapped_shifted"] == 0.5
    assert loss_breakdown("tile", references, predictions, [0.9, 0.8], max_shift_px=2)["overlapped_shifted"] == 1.0
    assert row["touching_none"] == 0 and row["AP50"] == row["AP50_without_touching_none"]


def test_a_polygon_off_every_label_counts_and_dropping_it_lifts_ap50():
    references = np.array([shapely.box(0, 0, 10, 10), shapely.box(40, 0, 50, 10)])
    predictions = np.array([shapely.box(100, 100, 110, 110), shapely.box(0, 0, 10, 10), shapely.box(40, 0, 50, 10)])
    row = loss_breakdown("tile", references, predictions, [0.95, 0.9, 0.8], max_shift_px=0)
    assert (row["references"], row["predictions"], row["touching_none"]) == (2, 3, 1)
    assert row["AP50_without_touching_none"] == 1.0 > row["AP50"]  # the top-ranked polygon was a false positive
    assert row["overlapped"] == row["overlapped_shifted"] == 1.0


def test_no_prediction_loses_everything_and_a_missing_model_is_named(tmp_path, capsys):
    from polytopo.training.where_lost import main

    row = loss_breakdown("tile", np.array([shapely.box(0, 0, 10, 10)]), np.array([], dtype=object), [], max_shift_px=2)
    assert (row["predictions"], row["touching_none"], row["AP50"], row["overlapped_shifted"]) == (0, 0, 0.0, 0.0)
    assert main([str(tmp_path / "missing.onnx")]) == 1
    assert "missing.onnx" in capsys.readouterr().err


def test_a_large_reference_drawn_in_two_pieces_is_counted_and_a_small_one_is_not():
    references = np.array([shapely.box(0, 0, 40, 20), shapely.box(100, 0, 110, 10)])
    predictions = np.array([shapely.box(0, 0, 19, 20), shapely.box(21, 0, 40, 20),  # the large roof in two halves
                            shapely.box(100, 0, 105, 10), shapely.box(105, 0, 110, 10)])  # the small one too
    row = loss_breakdown("tile", references, predictions, [0.9, 0.8, 0.7, 0.6], max_shift_px=0, large_px2=500.0)
    assert row["large"] == 1 and row["large_in_pieces"] == 1.0
    assert np.isnan(loss_breakdown("tile", references, predictions[:1], [0.9], max_shift_px=0)["large_in_pieces"])


def test_a_missed_small_building_and_two_houses_drawn_as_one_are_told_apart():
    references = np.array([shapely.box(0, 0, 10, 10), shapely.box(11, 0, 21, 10),  # two houses side by side
                           shapely.box(50, 0, 53, 3),  # a 9 px² shed
                           shapely.box(80, 0, 90, 10), shapely.box(120, 0, 130, 10)])
    predictions = np.array([shapely.box(0, 0, 21, 10),  # the two houses as one polygon
                            shapely.box(80, 0, 90, 4),  # a poor outline, no neighbour
                            shapely.box(120, 0, 130, 10)])  # matched
    row = loss_breakdown("tile", references, predictions, [0.9, 0.8, 0.7], max_shift_px=0)
    assert (row["missed"], row["missed_median_px2"], row["joined"]) == (1, 9.0, 2)
    assert row["overlapped"] == 0.2
    none = loss_breakdown("tile", references, np.array([], dtype=object), [], max_shift_px=0)
    assert (none["missed"], none["joined"]) == (5, 0)
    everything = loss_breakdown("tile", references, references, [0.9] * 5, max_shift_px=0)
    assert (everything["missed"], everything["joined"]) == (0, 0) and np.isnan(everything["missed_median_px2"])
