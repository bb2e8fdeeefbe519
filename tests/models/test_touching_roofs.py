"""Touching footprints and roofs that look alike, on a drawn image (no shared data needed)."""

import numpy as np
import shapely

from polytopo.training.touching_roofs import alike_pairs, roof_colours, touching_pairs


def test_touching_pairs_and_the_ones_whose_roofs_look_alike():
    """Three roofs in a row (the first red, the next two grey: no border between those two) and one apart; a
    footprint too thin to have an inner pixel has no colour and looks like nothing."""
    boxes = [shapely.box(2, 2, 12, 12), shapely.box(12, 2, 22, 12), shapely.box(22, 2, 32, 12),
             shapely.box(2, 20, 12, 30), shapely.box(12, 20, 13, 30)]
    image = np.full((3, 40, 40), 90.0)
    image[:, 2:12, 2:12] = np.array([150.0, 82.0, 64.0])[:, None, None]
    image[:, 2:12, 12:32] = 122.0
    image[:, 2:12, 22:32] += 5.0  # within 8 levels of its neighbour
    image[:, 20:30, 2:12] = 122.0
    pairs = touching_pairs(boxes)
    assert pairs == [(0, 1), (1, 2), (3, 4)]
    colours = roof_colours(image, boxes)
    assert colours[0].tolist() == [150.0, 82.0, 64.0] and colours[2].tolist() == [127.0] * 3
    assert np.isnan(colours[4]).all()  # one pixel wide: nothing 2 px inside
    assert alike_pairs(pairs, colours) == [(1, 2)]
    assert alike_pairs(pairs, colours, levels=5.0) == []
    assert (0, 3) in touching_pairs(boxes, touch=9.0) and (0, 2) not in touching_pairs(boxes, touch=9.0)  # 8 apart
