"""The output heads of the paper's baselines, rebuilt as tiny ONNX graphs, run end to end with the cards of docs/baselines.md.

Each graph has the names, ranks, dtypes, value ranges, activations and
coordinate conventions of the baseline's public code (or of the export
wrapper in ``tools/export/`` where the network's own heads cannot be fed to
the engine), with trivial layers in between: a band of the raster plays the
part of what the network would predict. The frame-field family (FFL) is
tested the same way in ``test_frame_field.py``.
"""

import json

import numpy as np
import pytest
import shapely
from onnx import TensorProto, helper, numpy_helper
from polytopo_testing import BASELINE_CARDS as CARDS
from polytopo_testing import baseline_card, build, constant, mask_box_nodes

from polytopo.models import ModelCardError, PreparedRun, RunParams, SessionParams, load_model, prompts_from_geometries
from polytopo.models.card.card_files import write_card

CPU = SessionParams(provider="cpu")
FLOAT, INT64, INT32, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL
GT = (500000.0, 0.5, 0.0, 4000000.0, 0.0, -0.5)
PX2 = 0.25  # m² per pixel
IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
def test_every_baseline_card_is_valid():
    from polytopo.models.card.model_card import card_to_props, parse_card

    names = sorted(path.stem for path in CARDS.glob("*.json"))
    assert names == ["ffl", "hisup", "maskrcnn_torchvision", "pix2poly", "polyworld", "sam", "sam2", "unet_smp"]
    for name in names:
        card = parse_card(card_to_props(json.loads((CARDS / f"{name}.json").read_text(encoding="utf-8"))))
        assert card.baseline and card.family


def to_map(x, y):
    return GT[0] + x * GT[1], GT[3] + y * GT[5]


def courtyard(size=64, outer=(0, 48), hole=(16, 32)):
    """A square building with a square courtyard, 0/1 float."""
    band = np.zeros((size, size), np.float32)
    band[outer[0]:outer[1], outer[0]:outer[1]] = 1
    band[hole[0]:hole[1], hole[0]:hole[1]] = 0
    return band


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def slice_channels(source, start, stop, out):
    return [
        constant(f"{out}_s", np.array([start], np.int64)),
        constant(f"{out}_e", np.array([stop], np.int64)),
        constant(f"{out}_a", np.array([1], np.int64)),
        helper.make_node("Slice", [source, f"{out}_s", f"{out}_e", f"{out}_a"], [out]),
    ]


def conv1x1(name, source, weights, bias):
    """A 1x1 convolution with the given (out, in) weights and bias (initializers returned)."""
    w = numpy_helper.from_array(np.asarray(weights, np.float32)[:, :, None, None], f"{name}_w")
    b = numpy_helper.from_array(np.asarray(bias, np.float32), f"{name}_b")
    return [helper.make_node("Conv", [source, f"{name}_w", f"{name}_b"], [name])], [w, b]


# ---------------------------------------------------------------- U-Net + Poly. (segmentation_models_pytorch)


def unet_smp_model(path, tile=64):
    """smp.Unet(classes=1, activation=None): logits (N, 1, H, W), any H, W (multiples of 32), ImageNet input normalization.

    The logit is 12 (r - 0.5) with r the first band scaled to [0, 1], written on the standardized input.
    """
    nodes, inits = conv1x1("output", "input", [[12 * IMAGENET_STD[0], 0, 0]], [12 * (IMAGENET_MEAN[0] - 0.5)])
    card = baseline_card("unet_smp", tile_size=tile)
    inputs = [value("input", FLOAT, ["batch", 3, "height", "width"])]
    return build(path, nodes, inputs, [value("output", FLOAT, ["batch", 1, "height", "width"])], card, inits)


def test_unet_logits_with_sigmoid_outside_the_graph(tmp_path, tiny):
    model = load_model(unet_smp_model(tmp_path / "unet.onnx"), CPU)
    rgb = np.stack([courtyard(96) * 255, np.full((96, 96), 90), np.full((96, 96), 30)]).astype(np.uint8)
    raster = tiny.write_raster(tmp_path / "rgb.tif", rgb)
    (polygon,) = list(PreparedRun(model, raster))
    assert polygon.class_name == "building" and polygon.score > 0.99
    assert len(polygon.geometry.interiors) == 1
    assert polygon.geometry.area == pytest.approx((48 * 48 - 16 * 16) * PX2)


# ---------------------------------------------------------------- Mask R-CNN + Poly. (torchvision)


def maskrcnn_torchvision_model(path):
    """torchvision maskrcnn_resnet50_fpn in eval mode behind the batch-1 wrapper of tools/export/maskrcnn.py.

    Input ``images`` (1, 3, H, W) in [0, 1] (normalization and resizing are
    inside torchvision's graph). Outputs of the one image: ``boxes`` (N, 4)
    float x1, y1, x2, y2 in input pixels, ``labels`` (N,) int64 (1 = building,
    0 is the background), ``scores`` (N,) float, ``masks`` (N, 1, H, W) float
    probabilities pasted at the input's resolution; N is dynamic (0 included)
    because the graph drops detections scoring under box_score_thresh 0.05.
    Two candidates: band 1 (score 0.9) and band 2 (score 0.04, always dropped).
    """
    nodes = [
        *slice_channels("images", 0, 2, "cand"),  # (1, 2, H, W)
        *mask_box_nodes("cand", "box3", "present2"),  # (1, 2, 4), (1, 2)
        constant("zero_axis", np.array([0], np.int64)),
        helper.make_node("Squeeze", ["box3", "zero_axis"], ["all_boxes"]),  # (2, 4)
        helper.make_node("Squeeze", ["present2", "zero_axis"], ["present"]),  # (2,)
        constant("base", np.array([0.9, 0.04], np.float32)),
        helper.make_node("Mul", ["present", "base"], ["all_scores"]),
        constant("thresh", np.array(0.05, np.float32)),
        helper.make_node("Greater", ["all_scores", "thresh"], ["keep"]),
        helper.make_node("NonZero", ["keep"], ["keep_nz"]),
        helper.make_node("Squeeze", ["keep_nz", "zero_axis"], ["idx"]),
        helper.make_node("Gather", ["all_boxes", "idx"], ["boxes"], axis=0),
        helper.make_node("Gather", ["all_scores", "idx"], ["scores"], axis=0),
        constant("all_labels", np.array([1, 1], np.int64)),
        helper.make_node("Gather", ["all_labels", "idx"], ["labels"], axis=0),
        helper.make_node("Transpose", ["cand"], ["cand_t"], perm=[1, 0, 2, 3]),  # (2, 1, H, W)
        constant("soft", np.array(0.97, np.float32)),
        helper.make_node("Mul", ["cand_t", "soft"], ["all_masks"]),
        helper.make_node("Gather", ["all_masks", "idx"], ["masks"], axis=0),
    ]
    card = baseline_card("maskrcnn_torchvision", tile_size=64)
    outputs = [
        value("boxes", FLOAT, ["N", 4]), value("labels", INT64, ["N"]), value("scores", FLOAT, ["N"]),
        value("masks", FLOAT, ["N", 1, "H", "W"]),
    ]
    return build(path, nodes, [value("images", FLOAT, [1, 3, "H", "W"])], outputs, card)


def test_torchvision_maskrcnn_heads_with_dynamic_instance_count(tmp_path, tiny):
    model = load_model(maskrcnn_torchvision_model(tmp_path / "maskrcnn.onnx"), CPU)
    assert model.io.batch_size_fixed == 1
    bands = np.zeros((3, 96, 96), np.float32)
    bands[0, 8:56, 8:56] = courtyard(48, (0, 48), (16, 32))  # one building, whole in the first tile, cut in others
    bands[1] = bands[0]  # second candidate, under torchvision's score threshold
    raster = tiny.write_raster(tmp_path / "rgb.tif", (bands * 255).astype(np.uint8))
    prediction = PreparedRun(model, raster)
    (polygon,) = list(prediction)
    assert polygon.class_name == "building" and polygon.score == pytest.approx(0.9)
    assert len(polygon.geometry.interiors) == 1
    assert polygon.geometry.area == pytest.approx((48 * 48 - 16 * 16) * PX2)
    assert prediction.report.tiles_run == 4
    empty = tiny.write_raster(tmp_path / "empty.tif", np.full((3, 64, 64), 7, np.uint8))
    assert list(PreparedRun(model, empty)) == []  # N = 0: boxes (0, 4), masks (0, 1, H, W)


def maskrcnn_box_masks_model(path, pattern):
    """Mask R-CNN with its mask head's raw output (detectron2, mmdetection exports that do not paste).

    ``images`` (1, 3, H, W) → ``boxes`` (N, 4) from band 1's extent,
    ``scores`` (N,), ``labels`` (N,) int64 and ``masks`` (N, 1, 28, 28)
    probabilities relative to each box (here the constant ``pattern``).
    """
    nodes = [
        *slice_channels("images", 0, 1, "cand"),
        *mask_box_nodes("cand", "box3", "present2"),
        constant("zero_axis", np.array([0], np.int64)),
        helper.make_node("Squeeze", ["box3", "zero_axis"], ["boxes"]),  # (1, 4)
        helper.make_node("Squeeze", ["present2", "zero_axis"], ["presence"]),
        constant("base", np.array([0.9], np.float32)),
        helper.make_node("Mul", ["presence", "base"], ["scores"]),
        constant("labels", np.array([1], np.int64)),
        constant("masks", np.asarray(pattern, np.float32)[None, None]),
    ]
    card = baseline_card("maskrcnn_torchvision", tile_size=64)
    outputs = [
        value("boxes", FLOAT, ["N", 4]), value("labels", INT64, ["N"]), value("scores", FLOAT, ["N"]),
        value("masks", FLOAT, ["N", 1, 28, 28]),
    ]
    return build(path, nodes, [value("images", FLOAT, [1, 3, "H", "W"])], outputs, card)


def test_box_relative_mask_heads_are_pasted_into_their_boxes(tmp_path, tiny):
    """A 28 x 28 mask with a courtyard in cells 10-17, pasted into a 48 px box: the hole covers pixels 17-30 of it."""
    pattern = np.ones((28, 28), np.float32)
    pattern[10:18, 10:18] = 0.0
    model = load_model(maskrcnn_box_masks_model(tmp_path / "box_masks.onnx", pattern), CPU)
    bands = np.zeros((3, 64, 64), np.uint8)
    bands[0, 8:56, 8:56] = 255
    (polygon,) = list(PreparedRun(model, tiny.write_raster(tmp_path / "rgb.tif", bands)))
    (hole,) = polygon.geometry.interiors
    assert shapely.Polygon(hole).bounds == pytest.approx((*to_map(8 + 17, 8 + 31), *to_map(8 + 31, 8 + 17)))
    assert polygon.geometry.area == pytest.approx((48 * 48 - 14 * 14) * PX2)


# ---------------------------------------------------------------- SAM / SAM 2 + Poly.


def sam_models(folder, version, tile=64):
    """SAM's image encoder and prompt decoder, or SAM 2's as exported by onnxruntime's sam2 tools.

    Encoder: ``image`` (1, 3, T, T), normalized input; ``image_embeddings``
    (1, 256, T/16, T/16); SAM 2 also ``image_features_0`` (1, 32, T/4, T/4)
    and ``image_features_1`` (1, 64, T/8, T/8). Here every channel is the mean
    of band 1 over the cell.

    Decoder, SAM (tools/export/sam_decoder.py, the wrapper of segment-anything's export script,
    --return-single-mask): ``image_embeddings``, ``point_coords`` (1, P, 2)
    float in input pixels, ``point_labels`` (1, P) float, ``mask_input``
    (1, 1, T/4, T/4), ``has_mask_input`` (1,), ``orig_im_size`` (2,) float →
    ``masks`` (1, 1, H, W) logits at orig_im_size, ``iou_predictions`` (1, 1),
    ``low_res_masks`` (1, 1, T/4, T/4). SAM 2: the two feature maps first,
    ``point_labels`` int32, ``input_masks``, ``has_input_masks``,
    ``original_image_size`` (2,) int32, and boolean ``masks`` (return_logits
    off). The low-resolution logits are +5 inside the box (points 0 and 1)
    where the cell holds the building (SAM: the embedding; SAM 2: the level-0
    features, so they must reach the decoder) and -5 elsewhere.
    """
    grid = tile // 16
    low = 4 * grid
    encoder_nodes = [*slice_channels("image", 0, 1, "band")]
    encoder_outputs = []
    levels = [("image_embeddings", 16, 256)] + ([("image_features_0", 4, 32), ("image_features_1", 8, 64)] if version == 2 else [])
    for name, stride, channels in levels:
        encoder_nodes += [
            helper.make_node("AveragePool", ["band"], [f"{name}_1"], kernel_shape=[stride, stride], strides=[stride, stride]),
            constant(f"{name}_rep", np.array([1, channels, 1, 1], np.int64)),
            helper.make_node("Tile", [f"{name}_1", f"{name}_rep"], [name]),
        ]
        encoder_outputs.append(value(name, FLOAT, [1, channels, tile // stride, tile // stride]))
    names = {
        1: ("point_labels", FLOAT, "mask_input", "has_mask_input", "orig_im_size", FLOAT),
        2: ("point_labels", INT32, "input_masks", "has_input_masks", "original_image_size", INT32),
    }[version]
    labels_name, labels_type, mask_in, has_mask, size_name, size_type = names
    card = baseline_card("sam2" if version == 2 else "sam", tile_size=tile, polytopo__prompt_decoder="decoder.onnx")
    # the encoder sees the standardized input: undo it for band 1 so the cells hold 0/1
    encoder_nodes = [
        constant("std0", np.array(IMAGENET_STD[0], np.float32)),
        constant("mean0", np.array(IMAGENET_MEAN[0], np.float32)),
        helper.make_node("Mul", ["image_std", "std0"], ["image_scaled"]),
        helper.make_node("Add", ["image_scaled", "mean0"], ["image"]),
    ] + encoder_nodes
    encoder = str(folder / "encoder.onnx")
    build(encoder, encoder_nodes, [value("image_std", FLOAT, [1, 3, tile, tile])], encoder_outputs, card)

    centres = (np.arange(low, dtype=np.float32) + 0.5) * (tile / low)
    ys, xs = np.meshgrid(centres, centres, indexing="ij")
    source = "image_features_0_c" if version == 2 else "emb_up"
    nodes = [
        constant("X", xs[None, None]), constant("Y", ys[None, None]), constant("ax12", np.array([1, 2], np.int64)),
        constant("p0x_s", np.array([0, 0], np.int64)), constant("p0x_e", np.array([1, 1], np.int64)),
        constant("p0y_s", np.array([0, 1], np.int64)), constant("p0y_e", np.array([1, 2], np.int64)),
        constant("p1x_s", np.array([1, 0], np.int64)), constant("p1x_e", np.array([2, 1], np.int64)),
        constant("p1y_s", np.array([1, 1], np.int64)), constant("p1y_e", np.array([2, 2], np.int64)),
        helper.make_node("Slice", ["point_coords", "p0x_s", "p0x_e", "ax12"], ["x1"]),
        helper.make_node("Slice", ["point_coords", "p0y_s", "p0y_e", "ax12"], ["y1"]),
        helper.make_node("Slice", ["point_coords", "p1x_s", "p1x_e", "ax12"], ["x2"]),
        helper.make_node("Slice", ["point_coords", "p1y_s", "p1y_e", "ax12"], ["y2"]),
        helper.make_node("GreaterOrEqual", ["X", "x1"], ["a"]), helper.make_node("Less", ["X", "x2"], ["b"]),
        helper.make_node("GreaterOrEqual", ["Y", "y1"], ["c"]), helper.make_node("Less", ["Y", "y2"], ["d"]),
        helper.make_node("And", ["a", "b"], ["ab"]), helper.make_node("And", ["c", "d"], ["cd"]),
        helper.make_node("And", ["ab", "cd"], ["inside"]),
        helper.make_node("Cast", ["inside"], ["insidef"], to=FLOAT),
        *slice_channels("image_embeddings", 0, 1, "emb_c"),
        constant("up_scales", np.array([1, 1, 4, 4], np.float32)),
        helper.make_node("Resize", ["emb_c", "", "up_scales"], ["emb_up"], mode="nearest"),
        *(slice_channels("image_features_0", 0, 1, "image_features_0_c") if version == 2 else []),
        helper.make_node("Mul", [source, "insidef"], ["kept"]),
        constant("half", np.array(0.5, np.float32)), constant("ten", np.array(10.0, np.float32)),
        helper.make_node("Sub", ["kept", "half"], ["kept_c"]),
        helper.make_node("Mul", ["kept_c", "ten"], ["low_res_masks"]),
        helper.make_node("Cast", [size_name], ["size64"], to=INT64),
        constant("lead", np.array([1, 1], np.int64)),
        helper.make_node("Concat", ["lead", "size64"], ["sizes"], axis=0),
        helper.make_node("Resize", ["low_res_masks", "", "", "sizes"], ["mask_logits"], mode="linear"),
        helper.make_node("ReduceMax", ["kept"], ["best"], axes=[2, 3], keepdims=0),
        helper.make_node("Cast", [labels_name], ["labels_f"], to=FLOAT),
        helper.make_node("ReduceSum", ["labels_f"], ["labels_sum"], keepdims=0),
        helper.make_node("Mul", ["labels_sum", "half"], ["labels_zero_a"]),
        helper.make_node("Sub", ["labels_zero_a", "labels_zero_a"], ["labels_zero"]),
        helper.make_node("Add", ["best", "labels_zero"], ["iou_predictions"]),
    ]
    if version == 2:
        nodes.append(constant("zero_f", np.array(0.0, np.float32)))
        nodes.append(helper.make_node("Greater", ["mask_logits", "zero_f"], ["masks"]))
    else:
        nodes.append(helper.make_node("Identity", ["mask_logits"], ["masks"]))
    inputs = [value("image_embeddings", FLOAT, [1, 256, grid, grid])]
    if version == 2:
        inputs = [value("image_features_0", FLOAT, [1, 32, low, low]), value("image_features_1", FLOAT, [1, 64, 2 * grid, 2 * grid])] + inputs
    prompts_first = [1] if version == 1 else ["num_labels"]
    inputs += [
        value("point_coords", FLOAT, [*prompts_first, "num_points", 2]),
        value(labels_name, labels_type, [*prompts_first, "num_points"]),
        value(mask_in, FLOAT, [*prompts_first, 1, low, low]),
        value(has_mask, FLOAT, [1] if version == 1 else ["num_labels"]),
        value(size_name, size_type, [2]),
    ]
    outputs = [
        value("masks", BOOL if version == 2 else FLOAT, [*prompts_first, 1, "H", "W"]),
        value("iou_predictions", FLOAT, [*prompts_first, 1]),
        value("low_res_masks", FLOAT, [*prompts_first, 1, low, low]),
    ]
    build(folder / "decoder.onnx", nodes, inputs, outputs, {})
    return encoder


@pytest.mark.parametrize("version", [1, 2])
def test_sam_encoder_and_prompt_decoder_with_box_prompts(tmp_path, tiny, version):
    model = load_model(sam_models(tmp_path, version), CPU)
    assert [role for role, _name in model.prompt_io.features] == ([] if version == 1 else ["high_res_0", "high_res_1"])
    rgb = np.stack([courtyard() * 255, np.full((64, 64), 80), np.full((64, 64), 40)]).astype(np.uint8)
    raster = tiny.write_raster(tmp_path / "rgb.tif", rgb)
    box = shapely.box(*to_map(-2, 50), *to_map(50, -2))
    (polygon,) = list(PreparedRun(model, raster, RunParams(prompts=prompts_from_geometries([box]))))
    assert polygon.score == pytest.approx(1.0)
    assert len(polygon.geometry.interiors) == 1
    # bilinear upsampling of the low-resolution logits rounds the corners by a pixel or so
    assert polygon.geometry.area == pytest.approx((48 * 48 - 16 * 16) * PX2, rel=0.01)


# ---------------------------------------------------------------- HiSup


def hisup_model(path, tile=64):
    """HiSup's heads at 1/4 of the input behind the export wrapper of tools/export/hisup_heads.py.

    Native heads (``BuildingDetector.forward_test``): ``remask`` logits
    (N, 2, T/4, T/4), ``jloc`` logits (N, 3, T/4, T/4) over (none, concave,
    convex), ``joff`` = sigmoid - 0.5 (N, 2, T/4, T/4) as (x, y) offsets in
    cells, ``afm`` (N, 2, T/4, T/4). The wrapper returns ``mask`` = softmax
    channel 1 upsampled bilinearly x4 and ``vertices`` = junction probability
    (1 - softmax channel 0) placed at each cell's junction position
    ``4 (cell + 0.5 + joff)`` with a 1-px Gaussian, both (N, 1, T, T).
    Here the stand-in backbone averages the raster's 4 x 4 cells: band 1 is the
    building, band 2 marks the cells of the corners, band 3 holds their
    offsets (the same joff for x and y, in cells).
    """
    quarter = tile // 4
    nodes = [helper.make_node("AveragePool", ["input"], ["feat"], kernel_shape=[4, 4], strides=[4, 4])]
    inits = []
    for name, weights, bias in (
        ("remask", [[0, 0, 0], [12, 0, 0]], [0, -6]),
        ("jloc", [[0, 0, 0], [0, 0, 0], [0, 12, 0]], [0, -30, -6]),
        ("joff_logits", [[0, 0, 4], [0, 0, 4]], [0, 0]),
        ("afm", [[0, 0, 0], [0, 0, 0]], [0, 0]),
    ):
        conv, params = conv1x1(name, "feat", weights, bias)
        nodes += conv
        inits += params
    centres = np.arange(tile, dtype=np.float32) + 0.5
    ys, xs = np.meshgrid(centres, centres, indexing="ij")
    cells = np.floor(np.arange(tile) / 4).astype(np.float32) + 0.5
    cy, cx = np.meshgrid(cells, cells, indexing="ij")
    nodes += [
        helper.make_node("Sigmoid", ["joff_logits"], ["joff_sig"]),
        constant("half", np.array(0.5, np.float32)),
        helper.make_node("Sub", ["joff_sig", "half"], ["joff"]),
        helper.make_node("Softmax", ["remask"], ["remask_p"], axis=1),
        *slice_channels("remask_p", 1, 2, "mask_q"),
        constant("x4", np.array([1, 1, 4, 4], np.float32)),
        helper.make_node("Resize", ["mask_q", "", "x4"], ["mask"], mode="linear"),
        helper.make_node("Softmax", ["jloc"], ["jloc_p"], axis=1),
        *slice_channels("jloc_p", 0, 1, "none_q"),
        constant("one", np.array(1.0, np.float32)),
        helper.make_node("Sub", ["one", "none_q"], ["junction_q"]),
        helper.make_node("Resize", ["junction_q", "", "x4"], ["junction_up"], mode="nearest"),
        helper.make_node("Resize", ["joff", "", "x4"], ["joff_up"], mode="nearest"),
        *slice_channels("joff_up", 0, 1, "joff_x"),
        *slice_channels("joff_up", 1, 2, "joff_y"),
        constant("CX", cx[None, None]), constant("CY", cy[None, None]),
        constant("PX", xs[None, None]), constant("PY", ys[None, None]), constant("four", np.array(4.0, np.float32)),
        helper.make_node("Add", ["CX", "joff_x"], ["jx_c"]), helper.make_node("Mul", ["jx_c", "four"], ["jx"]),
        helper.make_node("Add", ["CY", "joff_y"], ["jy_c"]), helper.make_node("Mul", ["jy_c", "four"], ["jy"]),
        helper.make_node("Sub", ["PX", "jx"], ["dx"]), helper.make_node("Sub", ["PY", "jy"], ["dy"]),
        helper.make_node("Mul", ["dx", "dx"], ["dx2"]), helper.make_node("Mul", ["dy", "dy"], ["dy2"]),
        helper.make_node("Add", ["dx2", "dy2"], ["d2"]),
        constant("minus_half", np.array(-0.5, np.float32)),
        helper.make_node("Mul", ["d2", "minus_half"], ["gauss_arg"]),
        helper.make_node("Exp", ["gauss_arg"], ["gauss"]),
        helper.make_node("Mul", ["junction_up", "gauss"], ["vertices"]),
    ]
    # raw 0-1 bands (the offsets band is negative): no 8-bit scaling, no standardization
    card = baseline_card("hisup", tile_size=tile, polytopo__input_range=[0, 1], standardization_mean=[0.0], standardization_std=[1.0])
    outputs = [
        value("mask", FLOAT, ["N", 1, tile, tile]), value("vertices", FLOAT, ["N", 1, tile, tile]),
        value("joff", FLOAT, ["N", 2, quarter, quarter]), value("afm", FLOAT, ["N", 2, quarter, quarter]),
    ]
    return build(path, nodes, [value("input", FLOAT, ["N", 3, tile, tile])], outputs, card, inits)


def test_hisup_quarter_resolution_heads_with_junction_offsets(tmp_path, tiny):
    """Junctions at cell corners (joff = -0.5) come back at the building's corners, not at the cell centres."""
    building = courtyard(64, (8, 40), (16, 28))
    corners = np.zeros_like(building)
    offsets = np.zeros_like(building)
    for x in (8, 40, 16, 28):
        for y in (8, 40, 16, 28):
            if (x in (8, 40)) == (y in (8, 40)):
                corners[y:y + 4, x:x + 4] = 1  # the cell whose top-left corner is the building's corner
    offsets[corners > 0] = -3.0  # joff = sigmoid(4 * -3) - 0.5 ≈ -0.5 cell: the junction is the cell's top-left corner
    raster = tiny.write_raster(tmp_path / "hisup.tif", np.stack([building, corners, offsets]))
    model = load_model(hisup_model(tmp_path / "hisup.onnx"), CPU)
    (polygon,) = list(PreparedRun(model, raster))
    geometry = polygon.geometry
    assert len(geometry.interiors) == 1
    assert len(geometry.exterior.coords) - 1 == 4 and len(geometry.interiors[0].coords) - 1 == 4
    assert geometry.area == pytest.approx((32 * 32 - 12 * 12) * PX2, rel=0.08)


# ---------------------------------------------------------------- PolyWorld (vertex-graph) and a rings export with a validity mask


def constant_heads(path, arrays, card, tile=32):
    """Every tile returns the same ``arrays`` (name → array without the batch axis), broadcast to the batch."""
    nodes = [
        helper.make_node("Shape", ["input"], ["shape"]),
        constant("zero", np.array([0], np.int64)),
        helper.make_node("Gather", ["shape", "zero"], ["batch"]),
    ]
    outputs = []
    for name, array in arrays.items():
        array = np.asarray(array)
        nodes += [
            constant(f"{name}_tail", np.array(array.shape, np.int64)),
            helper.make_node("Concat", ["batch", f"{name}_tail"], [f"{name}_shape"], axis=0),
            constant(f"{name}_value", array[None]),
            helper.make_node("Expand", [f"{name}_value", f"{name}_shape"], [name]),
        ]
        elem = {np.dtype(np.float32): FLOAT, np.dtype(bool): BOOL}[array.dtype]
        outputs.append(value(name, elem, ["N", *array.shape]))
    card = {"class_names": {"0": "building"}, "tile_size": tile, "tiles_overlap": 25, "polytopo.input_range": [0, 1], **card}
    return build(path, nodes, [value("input", FLOAT, ["N", 3, tile, tile])], outputs, card)


COURT_OUTER = [(4.5, 4.5), (27.5, 4.5), (27.5, 27.5), (4.5, 27.5)]
COURT_HOLE = [(10.5, 10.5), (10.5, 21.5), (21.5, 21.5), (21.5, 10.5)]


def test_polyworld_vertices_and_successor_scores_become_rings_by_assignment(tmp_path, tiny):
    """PolyWorld's matching head behind tools/export/polyworld.py: vertices (1, N, 2) x, y px, vertex scores, scores (1, N, N).

    The successor scores are noisy logits: the optimal assignment, not the row
    argmax, recovers the two cycles; the two vertices the assignment maps to
    themselves belong to no ring.
    """
    vertices = np.array(COURT_OUTER + COURT_HOLE + [(2.0, 30.0), (30.0, 2.0)], np.float32)
    rng = np.random.default_rng(7)
    successors = rng.normal(0.0, 1.0, (10, 10)).astype(np.float32)
    for ring in ([0, 1, 2, 3], [4, 5, 6, 7]):
        for a, b in zip(ring, ring[1:] + ring[:1]):
            successors[a, b] = 6.0
    successors[8, 8] = successors[9, 9] = 6.0
    successors[0, 5] = 6.5  # tempting for a row argmax, worse for the assignment
    vertex_scores = np.array([0.9] * 8 + [0.2, 0.9], np.float32)
    card = baseline_card("polyworld", tile_size=32, polytopo__input_range=[0, 1])
    path = constant_heads(tmp_path / "polyworld.onnx", {"vertices": vertices, "scores": successors, "vertex_scores": vertex_scores}, card)
    raster = tiny.write_raster(tmp_path / "one.tif", np.ones((3, 32, 32), np.float32))
    (polygon,) = list(PreparedRun(load_model(path, CPU), raster))
    assert polygon.score == pytest.approx(0.9)
    assert len(polygon.geometry.interiors) == 1
    assert polygon.geometry.area == pytest.approx((23 * 23 - 11 * 11) * PX2)


def test_rings_padded_with_a_validity_mask(tmp_path, tiny):
    """A RoIPoly-style export: a fixed number of corner slots per polygon, padding flagged by ``vertex_valid``, not NaN."""
    slots = np.zeros((2, 6, 2), np.float32)
    slots[0, :4], slots[1, :4] = COURT_OUTER, COURT_HOLE
    valid = np.zeros((2, 6), bool)
    valid[:, :4] = True
    card = {
        "det_conf": 0.5, "polytopo.family": "rings",
        "polytopo.outputs": {"rings": "polygons", "scores": "scores", "vertex_valid": "valid"},
    }
    arrays = {"polygons": slots, "scores": np.array([0.8, 0.7], np.float32), "valid": valid}
    raster = tiny.write_raster(tmp_path / "one.tif", np.ones((3, 32, 32), np.float32))
    (polygon,) = list(PreparedRun(load_model(constant_heads(tmp_path / "roipoly.onnx", arrays, card), CPU), raster))
    assert len(polygon.geometry.interiors) == 1 and polygon.score == pytest.approx(0.8)
    assert polygon.geometry.area == pytest.approx((23 * 23 - 11 * 11) * PX2)


# ---------------------------------------------------------------- Pix2Poly (vertex-sequence)


def pix2poly_models(folder, sequence, successors, bins=33, tile=32):
    """Pix2Poly's encoder and one decoder step (tools/export/pix2poly.py), decoding a fixed token ``sequence``.

    Encoder: ``input`` → ``memory`` (N, 1, 3) (the band means, standing in for
    the ViT patch features). Decoder: ``memory`` (1, 1, 3) and ``tokens``
    (1, T) int64 → ``logits`` (1, T, bins + 3), position p favouring
    ``sequence[p + 1]`` (10 against 0), and ``successors`` (1, N, N) with
    T = 2 N + 1. Both inputs feed the outputs (times 0), as a real decoder's do.
    """
    sequence = np.asarray(sequence, np.int64)
    length = len(sequence) - 1
    vocabulary = bins + 3
    table = np.zeros((1, length, vocabulary), np.float32)
    table[0, np.arange(length), sequence[1:]] = 10.0
    nodes = [
        helper.make_node("GlobalAveragePool", ["input"], ["pooled"]),
        constant("shape", np.array([-1, 1, 3], np.int64)),
        helper.make_node("Reshape", ["pooled", "shape"], ["memory"]),
    ]
    card = baseline_card("pix2poly", tile_size=tile, polytopo__input_range=[0, 1], polytopo__token_bins=bins,
                         polytopo__sequence_decoder="decoder.onnx")
    encoder = build(folder / "encoder.onnx", nodes, [value("input", FLOAT, ["N", 3, tile, tile])],
                    [value("memory", FLOAT, ["N", 1, 3])], card)
    step = [
        helper.make_node("Cast", ["tokens"], ["tokens_f"], to=FLOAT),
        helper.make_node("ReduceSum", ["tokens_f"], ["token_sum"], keepdims=0),
        helper.make_node("ReduceSum", ["memory"], ["memory_sum"], keepdims=0),
        helper.make_node("Add", ["token_sum", "memory_sum"], ["both"]),
        constant("nothing", np.array(0.0, np.float32)),
        helper.make_node("Mul", ["both", "nothing"], ["zero"]),
        constant("table", table),
        helper.make_node("Add", ["table", "zero"], ["logits"]),
        constant("graph", np.asarray(successors, np.float32)[None]),
        helper.make_node("Add", ["graph", "zero"], ["successors"]),
    ]
    slots = (length - 1) // 2
    build(folder / "decoder.onnx", step,
          [value("memory", FLOAT, [1, 1, 3]), value("tokens", INT64, [1, length])],
          [value("logits", FLOAT, [1, length, vocabulary]), value("successors", FLOAT, [1, slots, slots])])
    return encoder


def test_pix2poly_greedy_token_loop_then_assignment(tmp_path, tiny):
    """Tokens (row, column) of an exterior and a hole, EOS, PAD slots: the greedy loop, the tokenizer and the padded assignment."""
    outer = [(4, 4), (4, 28), (28, 28), (28, 4)]  # (row, column) = (y, x)
    hole = [(10, 10), (22, 10), (22, 22), (10, 22)]
    bos, eos, pad = 33, 34, 35
    slots = 10
    sequence = [bos] + [t for vertex in outer + hole for t in vertex] + [eos] + [pad] * (2 * slots + 1 - 17)
    rng = np.random.default_rng(3)
    successors = rng.normal(0.0, 1.0, (slots, slots))
    for ring in ([0, 1, 2, 3], [4, 5, 6, 7]):
        for a, b in zip(ring, ring[1:] + ring[:1]):
            successors[a, b] = 6.0
    successors[8, 9] = successors[9, 8] = 6.0  # the two padding slots pair up: a cycle without real vertices
    model = load_model(pix2poly_models(tmp_path, sequence, successors), CPU)
    assert (model.sequence_io.length, model.sequence_io.vertices) == (21, 10)
    raster = tiny.write_raster(tmp_path / "one.tif", np.ones((3, 32, 32), np.float32))
    prediction = PreparedRun(model, raster)
    (polygon,) = list(prediction)
    assert prediction.decoder.decoder_runs == 21  # one decoder run per token position, as Pix2Poly's loop
    assert len(polygon.geometry.interiors) == 1
    assert polygon.geometry.area == pytest.approx((24 * 24 - 12 * 12) * PX2)
    assert polygon.score == pytest.approx(np.exp(10) / (np.exp(10) + 35))


def test_pix2poly_decoders_that_do_not_fit_the_card_are_refused(tmp_path):
    encoder = pix2poly_models(tmp_path, [33, 34] + [35] * 20, np.zeros((10, 10)))
    write_card(encoder, {"polytopo.token_bins": 40}, validate=False)
    with pytest.raises(ModelCardError, match="set polytopo.token_bins to 33"):
        load_model(encoder, CPU)
    even = pix2poly_models(tmp_path, [33, 34] + [35] * 19, np.zeros((9, 9)))
    with pytest.raises(ModelCardError, match=r"'tokens' to be int64 of shape \(1, 2 \* vertices \+ 1\)"):
        load_model(even, CPU)
