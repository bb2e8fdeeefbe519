"""frame-field decoder (FFL): field directions, corners, alignment, end to end on an FFL-shaped graph, bad input."""

import doctest
import json
import math

import numpy as np
import pytest
import shapely
from polytopo_testing import baseline_card
from scipy import ndimage
from shapely import affinity

from polytopo.models import ModelCardError, PreparedRun, SessionParams, load_model
from polytopo.models.card.model_card import parse_card
from polytopo.models.decoders import frame_field
from polytopo.models.decoders.frame_field import align_polygon, field_directions, frame_corners
from polytopo.models.polygons.cleanup import simplify_keep_valid
from polytopo.models.polygons.polygonize import polygonize_mask

CPU = SessionParams(provider="cpu")
PIXEL_M = 0.5


def frame(phi, shape):
    """Coefficients of the frame {u, i u}, u = e^(i phi) (ij convention), constant over ``shape``."""
    u = complex(math.cos(phi), math.sin(phi))
    c0, c2 = -(u ** 4), 0.0
    field = np.zeros((4, *shape))
    field[0], field[1], field[2], field[3] = c0.real, c0.imag, 0.0, c2
    return field


def rasterize(polygon, shape):
    ys, xs = np.mgrid[0:shape[0], 0:shape[1]] + 0.5
    return shapely.contains_xy(polygon, xs, ys)


def courtyard_building(angle_deg, centre=(32, 32)):
    outer = affinity.rotate(shapely.box(-20, -12, 20, 12), angle_deg, origin=(0, 0))
    court = affinity.rotate(shapely.box(-8, -5, 8, 5), angle_deg, origin=(0, 0))
    return affinity.translate(shapely.Polygon(outer.exterior, [court.exterior]), *centre)


def edge_angles_deg(polygon):
    """Direction of every edge of every ring, degrees modulo 90."""
    angles = []
    for ring in (polygon.exterior, *polygon.interiors):
        steps = np.diff(np.asarray(ring.coords), axis=0)
        angles.extend(np.degrees(np.arctan2(steps[:, 1], steps[:, 0])) % 90.0)
    return np.array(angles)


def iou(a, b):
    return a.intersection(b).area / a.union(b).area


def test_docstring_examples():
    assert doctest.testmod(frame_field).failed == 0


@pytest.mark.parametrize("alpha_deg", [0.0, 17.0, 30.0, 45.0])
def test_field_directions_recover_the_frame_in_both_conventions(alpha_deg):
    """A frame whose direction is alpha in x, y comes back as alpha and alpha + 90 (ij: phi = 90 - alpha)."""
    alpha = math.radians(alpha_deg)
    for axes, phi in (("ij", math.pi / 2 - alpha), ("xy", alpha)):
        u, v = field_directions(frame(phi, (1, 1))[:, 0, 0], axes)
        got = sorted(round(math.degrees(math.atan2(d[1], d[0])) % 90.0, 6) % 90.0 for d in (u, v))
        assert got == pytest.approx(sorted([alpha_deg % 90.0] * 2), abs=1e-6)
        assert abs(float(u @ v)) < 1e-9 and np.linalg.norm(u) == pytest.approx(1.0)


def test_zero_field_has_no_direction_and_no_corner():
    u, v = field_directions(np.zeros((3, 4)))
    assert not u.any() and not v.any()
    square = np.array([[0, 0], [4, 0], [4, 4], [0, 4]], float)
    assert not frame_corners(square, np.zeros((4, 2)), np.zeros((4, 2))).any()


def test_corners_only_where_the_aligned_direction_switches():
    """A straight vertex on a wall and the four corners of a rectangle, in a field along the axes."""
    ring = np.array([[0, 0], [3, 0], [6, 0], [6, 4], [0, 4]], float)
    u, v = np.tile([[1.0, 0.0]], (5, 1)), np.tile([[0.0, 1.0]], (5, 1))
    assert frame_corners(ring, u, v).tolist() == [True, False, True, True, True]


def test_rotated_building_with_courtyard_is_aligned_to_the_field():
    """A 30-degree building rasterized to a staircase: 4 + 4 vertices on the field's directions, closer than Douglas-Peucker."""
    truth = courtyard_building(30.0)
    (pixels,) = polygonize_mask(rasterize(truth, (64, 64))).geometries
    aligned = align_polygon(pixels, frame(math.radians(60.0), (64, 64)), tolerance_px=1.0)
    plain = simplify_keep_valid(np.array([pixels], object), 1.0)[0]
    assert aligned.is_valid and len(aligned.interiors) == 1
    assert len(aligned.exterior.coords) - 1 == 4 and len(aligned.interiors[0].coords) - 1 == 4
    assert np.abs(edge_angles_deg(aligned) - 30.0).max() < 0.5
    assert len(plain.exterior.coords) - 1 > 4
    assert iou(aligned, truth) > 0.98 > iou(plain, truth)
    assert shapely.hausdorff_distance(aligned, truth) < 0.5 < shapely.hausdorff_distance(plain, truth)


def test_field_read_in_the_wrong_convention_is_not_followed():
    """The same field read as x, y (directions 60 and 150 degrees, 30 degrees off every wall) aligns nothing."""
    truth = courtyard_building(30.0)
    (pixels,) = polygonize_mask(rasterize(truth, (64, 64))).geometries
    field = frame(math.radians(60.0), (64, 64))
    wrong = align_polygon(pixels, field, axes="xy", tolerance_px=1.0)
    assert np.abs(edge_angles_deg(wrong) - 30.0).max() > 5.0


def test_rings_without_a_field_fall_back_to_the_simplified_contour():
    truth = courtyard_building(30.0)
    (pixels,) = polygonize_mask(rasterize(truth, (64, 64))).geometries
    fallback = align_polygon(pixels, np.zeros((4, 64, 64)), tolerance_px=1.0)
    assert shapely.equals_exact(fallback, simplify_keep_valid(np.array([pixels], object), 1.0)[0], 1e-12)


def test_random_shapes_in_random_fields_stay_valid_with_their_holes():
    """Smooth random masks (many holes) in smoothly turning fields: every result is one valid polygon with the input's holes."""
    rng = np.random.default_rng(0)
    checked = 0
    for _trial in range(20):
        mask = ndimage.gaussian_filter(rng.normal(size=(48, 48)), 3) > 0
        phi = ndimage.gaussian_filter(rng.normal(size=(48, 48)), 6) * 10
        field = np.zeros((4, 48, 48))
        field[0], field[1] = -np.cos(4 * phi), -np.sin(4 * phi)
        for polygon in polygonize_mask(mask).geometries:
            aligned = align_polygon(polygon, field, tolerance_px=1.0)
            assert aligned.geom_type == "Polygon" and aligned.is_valid
            assert len(aligned.interiors) == len(polygon.interiors)
            checked += 1
    assert checked > 50


def test_ffl_graph_end_to_end_across_tiles(tmp_path, tiny):
    """FFL-shaped heads (sigmoid seg, 2 tanh crossfield) with FFL's card, 64 px raster in 32 px tiles: one aligned polygon with its hole."""
    card = baseline_card("ffl", tile_size=32, polytopo__input_range=[0, 1])
    model = load_model(tiny.frame_field_model(tmp_path / "ffl.onnx", tile=32, card=card), CPU)
    truth = courtyard_building(30.0)
    interior = rasterize(truth, (64, 64)).astype(np.float32)
    angle = np.full((64, 64), (90.0 - 30.0) / 180.0, np.float32)
    raster = tiny.write_raster(tmp_path / "b.tif", np.stack([interior, np.zeros_like(interior), angle]))
    (polygon,) = list(PreparedRun(model, raster))
    geometry = polygon.geometry
    assert polygon.class_name == "building" and polygon.score == pytest.approx(1.0, abs=0.01)
    assert geometry.is_valid and len(geometry.interiors) == 1
    assert len(geometry.exterior.coords) - 1 == 4 and len(geometry.interiors[0].coords) - 1 == 4
    # map coordinates: x = 500000 + 0.5 col, y = 4000000 - 0.5 row (the y flip mirrors the angle)
    assert np.abs(edge_angles_deg(geometry) - (90.0 - 30.0)).max() < 0.5
    assert geometry.area == pytest.approx(truth.area * PIXEL_M ** 2, rel=0.02)


def test_edge_channel_separates_buildings_sharing_a_wall(tmp_path, tiny):
    """Interior covers two houses; FFL's edge channel marks their shared wall; polytopo.edge_threshold cuts there."""
    interior = np.zeros((32, 32), np.float32)
    interior[6:26, 4:28] = 1
    edge = np.zeros_like(interior)
    edge[6:26, 15:17] = 1
    raster = tiny.write_raster(tmp_path / "pair.tif", np.stack([interior, edge, np.zeros_like(interior)]))
    card = {
        "polytopo.family": "frame-field", "tile_size": 32, "polytopo.input_range": [0, 1],
        "polytopo.outputs": {"seg": "seg", "frame_field": "crossfield"},
    }
    joined = load_model(tiny.frame_field_model(tmp_path / "a.onnx", card=card), CPU)
    split = load_model(tiny.frame_field_model(tmp_path / "b.onnx", card={**card, "polytopo.edge_threshold": 0.5}), CPU)
    assert len(list(PreparedRun(joined, raster))) == 1
    halves = sorted(p.geometry.area / PIXEL_M ** 2 for p in PreparedRun(split, raster))
    assert halves == pytest.approx([20 * 11, 20 * 11])


def test_edge_threshold_without_an_edge_channel_is_refused(tmp_path, tiny):
    card = baseline_card("ffl", tile_size=32, polytopo__edge_threshold=0.5)
    with pytest.raises(ModelCardError, match=r"an edge channel.*card key 'polytopo.edge_threshold'"):
        load_model(tiny.frame_field_model(tmp_path / "interior_only.onnx", card=card, seg_channels=1), CPU)


def test_frame_field_output_without_four_channels_is_refused(tmp_path, tiny):
    with pytest.raises(ModelCardError, match=r"frame_field.*4 = Re c0"):
        load_model(tiny.frame_field_model(tmp_path / "bad.onnx", field_channels=3), CPU)


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"polytopo.outputs": {"seg": "seg"}}, r"roles \['seg', 'frame_field'\]"),
        ({"polytopo.frame_field_axes": "yx"}, r"polytopo.frame_field_axes.*one of \['ij', 'xy'\]"),
        ({"polytopo.edge_threshold": 2}, r"polytopo.edge_threshold.*in \[0, 1\]"),
    ],
)
def test_bad_frame_field_cards_name_the_key(entries, message):
    props = {"polytopo.family": "frame-field", "polytopo.outputs": {"seg": "seg", "frame_field": "crossfield"}, **entries}
    with pytest.raises(ModelCardError, match=message):
        parse_card({key: json.dumps(value) for key, value in props.items()})
