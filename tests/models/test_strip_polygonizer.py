"""Polygons from strips equal polygons from the whole map, across strip boundaries, holes included."""

import numpy as np
import shapely
from hypothesis import given
from hypothesis import strategies as st
from scipy import ndimage

from polytopo.models.polygons.polygonize import label_components, polygonize_mask
from polytopo.models.polygons.strip_polygonizer import NO_CLASS, StripPolygonizer


def by_strips(classes, cuts, class_ids=(0,), scores=None, **kwargs):
    scores = np.ones(classes.shape, np.float32) if scores is None else scores
    strips = StripPolygonizer(classes.shape[1], class_ids, **kwargs)
    edges = [0, *sorted(cuts), classes.shape[0]]
    out = []
    for i, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        out.extend(strips.push(classes[a:b], scores[a:b], final=i == len(edges) - 2))
    return out


def normalized(geometries):
    return sorted(shapely.normalize(g).wkt for g in geometries)


def test_ring_building_straddling_a_strip_boundary_is_one_polygon_with_its_hole():
    classes = np.full((20, 20), NO_CLASS, np.int16)
    classes[4:16, 4:16] = 0
    classes[7:13, 7:13] = NO_CLASS
    closed = by_strips(classes, [10])  # the boundary cuts through the courtyard
    geometries = [g for batch in closed for g in batch.geometries]
    assert len(geometries) == 1
    (polygon,) = geometries
    assert polygon.is_valid and len(polygon.interiors) == 1
    assert polygon.area == 144 - 36
    assert polygon.bounds == (4.0, 4.0, 16.0, 16.0)


def test_carry_keeps_only_rows_of_open_components():
    strips = StripPolygonizer(10, [0])
    classes = np.full((5, 10), NO_CLASS, np.int16)
    classes[0:2, 0:3] = 0  # closes in this strip
    classes[3:5, 6:8] = 0  # touches the last row: open
    closed = strips.push(classes, np.ones(classes.shape, np.float32))
    assert sum(len(b.geometries) for b in closed) == 1
    assert strips.carried_rows == 2
    closed = strips.push(np.full((3, 10), NO_CLASS, np.int16), np.ones((3, 10), np.float32))
    (batch,) = closed
    assert batch.geometries[0].bounds == (6.0, 3.0, 8.0, 5.0)
    assert strips.carried_rows == 0


def test_scores_are_mean_over_the_whole_polygon():
    classes = np.full((6, 4), NO_CLASS, np.int16)
    classes[1:5, 1:3] = 0
    scores = np.zeros((6, 4), np.float32)
    scores[1:3] = 0.2
    scores[3:5] = 0.6
    (batch,) = by_strips(classes, [3], scores=scores)
    assert np.isclose(batch.scores[0], 0.4)


def test_scores_ignore_components_dropped_by_min_area():
    classes = np.full((3, 9), NO_CLASS, np.int16)
    classes[0:2, 0:2] = 0
    classes[0, 4] = 0  # dropped: 1 px < 2 px2, its label lies between the other two
    classes[0:2, 7:9] = 0
    scores = np.zeros((3, 9), np.float32)
    scores[:, 4] = 100.0
    scores[:, 7:] = 0.5
    (batch,) = by_strips(classes, [], scores=scores, min_area_px2=2)
    assert sorted(batch.scores.tolist()) == [0.0, 0.5]


def test_classes_are_polygonized_separately():
    classes = np.full((6, 6), NO_CLASS, np.int16)
    classes[:, :3] = 1
    classes[:, 3:] = 2
    closed = by_strips(classes, [2, 4], class_ids=(1, 2))
    assert sorted((b.class_id, len(b.geometries)) for b in closed) == [(1, 1), (2, 1)]


@given(st.integers(0, 2**32 - 1), st.floats(0.3, 0.7), st.lists(st.integers(1, 23), max_size=6, unique=True))
def test_strips_equal_whole_map(seed, density, cuts):
    mask = np.random.default_rng(seed).random((24, 17)) < density
    classes = np.where(mask, 0, NO_CLASS).astype(np.int16)
    strips = [g for batch in by_strips(classes, cuts, min_hole_area_px2=2) for g in batch.geometries]
    whole = polygonize_mask(mask, min_hole_area_px2=2).geometries
    assert all(g.is_valid for g in strips)
    assert normalized(strips) == normalized(whole)


@given(st.integers(0, 2**32 - 1), st.lists(st.integers(1, 29), max_size=5, unique=True), st.integers(0, 3))
def test_several_classes_with_margin_equal_the_whole_map_with_mean_scores(seed, cuts, margin):
    rng = np.random.default_rng(seed)
    classes = rng.integers(-1, 3, (30, 21)).astype(np.int16)
    scores = rng.random(classes.shape).astype(np.float32)
    closed = by_strips(classes, cuts, class_ids=(0, 1, 2), scores=scores, min_area_px2=2, closing_margin_rows=margin)
    for class_id in (0, 1, 2):
        mask = classes == class_id
        whole = polygonize_mask(mask, min_area_px2=2)
        labels, _count = label_components(mask)
        expected = dict(zip((shapely.normalize(g).wkt for g in whole.geometries),
                            ndimage.mean(scores, labels, whole.labels)))
        got = {shapely.normalize(g).wkt: s for b in closed if b.class_id == class_id for g, s in zip(b.geometries, b.scores)}
        assert got.keys() == expected.keys()
        assert all(np.isclose(got[k], expected[k], rtol=0, atol=1e-6) for k in got)
