"""Tiny deterministic ONNX models and rasters for the inference-engine tests.

Every model is built here with ``onnx.helper`` so its outputs are known
exactly: the semantic model returns a band of its input, the instance model
turns two bands into two instance masks with their boxes, and so on. Rasters
are written with GDAL into the test's temporary folder.
"""

import types

import numpy as np
import pytest
from onnx import TensorProto, helper
from osgeo import gdal, osr
from polytopo_testing import build, constant, image_input, mask_box_nodes, semantic_band_model

FLOAT = TensorProto.FLOAT


def deepness_model(path, tile=64):
    """A Deepness-style segmentation model: 3 bands in, (background, building) out.

    Output channel 1 is the first input channel after Deepness' ``/255``
    scaling, channel 0 its complement, exactly as a softmax output would sum to 1.
    """
    nodes = [
        constant("starts", np.array([0], np.int64)),
        constant("ends", np.array([1], np.int64)),
        constant("axes", np.array([1], np.int64)),
        constant("one", np.array(1.0, np.float32)),
        helper.make_node("Slice", ["input", "starts", "ends", "axes"], ["fg"]),
        helper.make_node("Sub", ["one", "fg"], ["bg"]),
        helper.make_node("Concat", ["bg", "fg"], ["output"], axis=1),
    ]
    card = {
        "model_type": "Segmentor",
        "class_names": {"0": "background", "1": "building"},
        "resolution": 50,
        "tile_size": tile,
        "tiles_overlap": 25,
        "standardization_mean": [0.0, 0.0, 0.0],
        "standardization_std": [1.0, 1.0, 1.0],
        "seg_thresh": 0.5,
        "seg_small_segment": 1,
    }
    out = helper.make_tensor_value_info("output", FLOAT, ["N", 2, tile, tile])
    return build(path, nodes, [image_input(3, tile)], [out], card)


def tile_mean_model(path, tile=32):
    """Output = sigmoid(4 * (x - mean of x over the tile)): depends on the tile, so seams show without blending."""
    nodes = [
        helper.make_node("ReduceMean", ["input"], ["mean"], axes=[2, 3], keepdims=1),
        helper.make_node("Sub", ["input", "mean"], ["centered"]),
        constant("gain", np.array(4.0, np.float32)),
        helper.make_node("Mul", ["centered", "gain"], ["scaled"]),
        helper.make_node("Sigmoid", ["scaled"], ["output"]),
    ]
    card = {"polytopo.family": "semantic", "tile_size": tile, "polytopo.input_range": [0, 1]}
    out = helper.make_tensor_value_info("output", FLOAT, ["N", 1, tile, tile])
    return build(path, nodes, [image_input(1, tile)], [out], card)


def nan_model(path):
    """Returns NaN wherever the input exceeds 0.5."""
    nodes = [
        constant("half", np.array(0.5, np.float32)),
        constant("nan", np.array(np.nan, np.float32)),
        helper.make_node("Greater", ["input", "half"], ["big"]),
        helper.make_node("Where", ["big", "nan", "input"], ["output"]),
    ]
    out = helper.make_tensor_value_info("output", FLOAT, ["N", 1, "H", "W"])
    return build(path, nodes, [image_input(1)], [out], {"polytopo.family": "semantic", "tile_size": 32})


def instance_model(path, tile=32, card=None):
    """Two instances per tile: masks are input channels 0 and 1, boxes derived from them.

    Scores are 0.9 and 0.8 times the mask maximum (0 for an empty mask).
    Boxes are (x1, y1, x2, y2) in tile pixels with exclusive upper bounds.
    """
    nodes = [
        constant("s0", np.array([0], np.int64)),
        constant("e0", np.array([2], np.int64)),
        constant("ax1", np.array([1], np.int64)),
        helper.make_node("Slice", ["input", "s0", "e0", "ax1"], ["masks"]),  # (B, 2, H, W)
        *mask_box_nodes("masks", "boxes", "present"),  # (B, 2, 4), (B, 2)
        constant("base", np.array([0.9, 0.8], np.float32)),
        helper.make_node("Mul", ["present", "base"], ["scores"]),
    ]
    card = card or {
        "polytopo.family": "instance",
        "class_names": {"0": "building"},
        "tile_size": tile,
        "tiles_overlap": 25,
        "det_conf": 0.5,
        "det_iou_thresh": 0.5,
        "polytopo.input_range": [0, 1],
        "polytopo.outputs": {"boxes": "boxes", "scores": "scores", "masks": "masks"},
    }
    outs = [
        helper.make_tensor_value_info("boxes", FLOAT, ["N", 2, 4]),
        helper.make_tensor_value_info("scores", FLOAT, ["N", 2]),
        helper.make_tensor_value_info("masks", FLOAT, ["N", 2, tile, tile]),
    ]
    return build(path, nodes, [image_input(2, tile)], outs, card)


def vertex_mask_model(path, tile=32):
    """mask = input channel 0, vertex heatmap = input channel 1."""
    nodes = [
        constant("s0", np.array([0], np.int64)),
        constant("e0", np.array([1], np.int64)),
        constant("s1", np.array([1], np.int64)),
        constant("e1", np.array([2], np.int64)),
        constant("ax1", np.array([1], np.int64)),
        helper.make_node("Slice", ["input", "s0", "e0", "ax1"], ["mask"]),
        helper.make_node("Slice", ["input", "s1", "e1", "ax1"], ["junctions"]),
    ]
    card = {
        "polytopo.family": "vertex-mask",
        "class_names": {"0": "building"},
        "tile_size": tile,
        "tiles_overlap": 25,
        "polytopo.input_range": [0, 1],
        "polytopo.outputs": {"mask": "mask", "vertices": "junctions"},
        "polytopo.vertex_threshold": 0.5,
        "polytopo.vertex_snap_radius_px": 3,
    }
    outs = [
        helper.make_tensor_value_info("mask", FLOAT, ["N", 1, tile, tile]),
        helper.make_tensor_value_info("junctions", FLOAT, ["N", 1, tile, tile]),
    ]
    return build(path, nodes, [image_input(2, tile)], outs, card)


def frame_field_model(path, tile=32, card=None, field_channels=4, seg_channels=2):
    """FFL's output heads: ``seg`` = sigmoid of (interior, edge) logits, ``crossfield`` = 2 tanh(.) in [-2, 2].

    Interior and edge probabilities are input bands 1 and 2 (logits
    ``12 (band - 0.5)``; ``seg_channels=1`` keeps the interior only); band 3 holds the field's angle ``phi / pi``, ``phi``
    being the angle of the direction ``u`` in FFL's ij convention
    (``u = cos phi + i sin phi = Δrow + i Δcol``). The field is the frame of
    ``u`` and ``i u`` (c0 = u²v² = -u⁴, c2 = -(u² + v²) = 0), written as
    ``2 tanh(atanh(c / 2))`` so the graph ends as FFL's head does.
    """
    nodes = [
        constant("s0", np.array([0], np.int64)),
        constant("e0", np.array([seg_channels], np.int64)),
        constant("s2", np.array([2], np.int64)),
        constant("e2", np.array([3], np.int64)),
        constant("ax1", np.array([1], np.int64)),
        constant("half", np.array(0.5, np.float32)),
        constant("gain", np.array(12.0, np.float32)),
        constant("pi4", np.array(4 * np.pi, np.float32)),
        constant("minus", np.array(-1.0, np.float32)),
        constant("two", np.array(2.0, np.float32)),
        helper.make_node("Slice", ["input", "s0", "e0", "ax1"], ["probs_in"]),
        helper.make_node("Sub", ["probs_in", "half"], ["centred"]),
        helper.make_node("Mul", ["centred", "gain"], ["seg_logits"]),
        helper.make_node("Sigmoid", ["seg_logits"], ["seg"]),
        helper.make_node("Slice", ["input", "s2", "e2", "ax1"], ["angle"]),
        helper.make_node("Mul", ["angle", "pi4"], ["phi4"]),
        helper.make_node("Cos", ["phi4"], ["cos4"]),
        helper.make_node("Sin", ["phi4"], ["sin4"]),
        helper.make_node("Mul", ["cos4", "minus"], ["c0_re"]),
        helper.make_node("Mul", ["sin4", "minus"], ["c0_im"]),
        helper.make_node("Sub", ["angle", "angle"], ["zero"]),
        helper.make_node("Concat", ["c0_re", "c0_im", "zero", "zero"][:field_channels], ["coefficients"], axis=1),
        helper.make_node("Div", ["coefficients", "two"], ["scaled"]),
        helper.make_node("Atanh", ["scaled"], ["pre_tanh"]),
        helper.make_node("Tanh", ["pre_tanh"], ["tanh"]),
        helper.make_node("Mul", ["tanh", "two"], ["crossfield"]),
    ]
    card = card or {
        "polytopo.family": "frame-field",
        "class_names": {"0": "building"},
        "tile_size": tile,
        "tiles_overlap": 25,
        "seg_thresh": 0.5,
        "polytopo.input_range": [0, 1],
        "polytopo.outputs": {"seg": "seg", "frame_field": "crossfield"},
        "polytopo.simplify_tolerance_px": 1.0,
    }
    outs = [
        helper.make_tensor_value_info("seg", FLOAT, ["N", seg_channels, tile, tile]),
        helper.make_tensor_value_info("crossfield", FLOAT, ["N", field_channels, tile, tile]),
    ]
    return build(path, nodes, [image_input(3, tile)], outs, card)


def rings_model(path, rings, scores, tile=32):
    """Every tile predicts the same rings (tile pixels, NaN-padded) and scores, whatever the image.

    ``rings`` is (K, V, 2); the output is broadcast to (B, K, V, 2).
    """
    rings = np.asarray(rings, np.float32)
    scores = np.asarray(scores, np.float32)
    nodes = [
        helper.make_node("Shape", ["input"], ["shape"]),
        constant("zero", np.array([0], np.int64)),
        helper.make_node("Gather", ["shape", "zero"], ["batch"]),
        constant("ring_tail", np.array(rings.shape, np.int64)),
        constant("score_tail", np.array(scores.shape, np.int64)),
        helper.make_node("Concat", ["batch", "ring_tail"], ["ring_shape"], axis=0),
        helper.make_node("Concat", ["batch", "score_tail"], ["score_shape"], axis=0),
        constant("ring_value", rings[None]),
        constant("score_value", scores[None]),
        helper.make_node("Expand", ["ring_value", "ring_shape"], ["rings"]),
        helper.make_node("Expand", ["score_value", "score_shape"], ["scores"]),
    ]
    card = {
        "polytopo.family": "rings",
        "class_names": {"0": "building"},
        "tile_size": tile,
        "tiles_overlap": 25,
        "det_conf": 0.5,
        "det_iou_thresh": 0.5,
        "polytopo.input_range": [0, 1],
        "polytopo.outputs": {"rings": "rings", "scores": "scores"},
    }
    outs = [
        helper.make_tensor_value_info("rings", FLOAT, ["N", *rings.shape]),
        helper.make_tensor_value_info("scores", FLOAT, ["N", *scores.shape]),
    ]
    return build(path, nodes, [image_input(1, tile)], outs, card)


def promptable_models(folder, tile=32):
    """SAM-style pair: the encoder passes channel 0 through; the decoder keeps it inside the prompt box.

    Decoder: masks = embedding * [x1 <= X < x2] * [y1 <= Y < y2] - 0.5 (logits,
    threshold 0), scores = max of the mask; the box is points 0 and 1.
    """
    encoder = str(folder / "encoder.onnx")
    decoder_name = "decoder.onnx"
    nodes = [
        constant("s0", np.array([0], np.int64)),
        constant("e0", np.array([1], np.int64)),
        constant("ax1", np.array([1], np.int64)),
        helper.make_node("Slice", ["input", "s0", "e0", "ax1"], ["image_embeddings"]),
    ]
    card = {
        "polytopo.family": "promptable",
        "class_names": {"0": "building"},
        "tile_size": tile,
        "polytopo.input_range": [0, 1],
        "polytopo.outputs": {"embedding": "image_embeddings"},
        "polytopo.prompt_decoder": decoder_name,
        "polytopo.mask_threshold": 0.0,
    }
    emb = helper.make_tensor_value_info("image_embeddings", FLOAT, ["N", 1, tile, tile])
    build(encoder, nodes, [image_input(1, tile)], [emb], card)
    ys, xs = np.mgrid[0:tile, 0:tile].astype(np.float32) + 0.5
    dnodes = [
        constant("X", xs[None, None]),
        constant("Y", ys[None, None]),
        constant("ax12", np.array([1, 2], np.int64)),
        constant("p0x_s", np.array([0, 0], np.int64)),
        constant("p0x_e", np.array([1, 1], np.int64)),
        constant("p0y_s", np.array([0, 1], np.int64)),
        constant("p0y_e", np.array([1, 2], np.int64)),
        constant("p1x_s", np.array([1, 0], np.int64)),
        constant("p1x_e", np.array([2, 1], np.int64)),
        constant("p1y_s", np.array([1, 1], np.int64)),
        constant("p1y_e", np.array([2, 2], np.int64)),
        helper.make_node("Slice", ["point_coords", "p0x_s", "p0x_e", "ax12"], ["x1"]),  # (1, 1, 1)
        helper.make_node("Slice", ["point_coords", "p0y_s", "p0y_e", "ax12"], ["y1"]),
        helper.make_node("Slice", ["point_coords", "p1x_s", "p1x_e", "ax12"], ["x2"]),
        helper.make_node("Slice", ["point_coords", "p1y_s", "p1y_e", "ax12"], ["y2"]),
        helper.make_node("GreaterOrEqual", ["X", "x1"], ["a"]),
        helper.make_node("Less", ["X", "x2"], ["b"]),
        helper.make_node("GreaterOrEqual", ["Y", "y1"], ["c"]),
        helper.make_node("Less", ["Y", "y2"], ["d"]),
        helper.make_node("And", ["a", "b"], ["ab"]),
        helper.make_node("And", ["c", "d"], ["cd"]),
        helper.make_node("And", ["ab", "cd"], ["inside"]),
        helper.make_node("Cast", ["inside"], ["insidef"], to=FLOAT),
        helper.make_node("Mul", ["image_embeddings", "insidef"], ["kept"]),
        constant("half", np.array(0.5, np.float32)),
        helper.make_node("Sub", ["kept", "half"], ["masks"]),
        helper.make_node("ReduceMax", ["kept"], ["best"], axes=[2, 3], keepdims=0),  # (1, 1)
        helper.make_node("Identity", ["best"], ["iou_predictions"]),
        helper.make_node("ReduceSum", ["point_labels"], ["unused_labels"], keepdims=0),
    ]
    dinputs = [
        helper.make_tensor_value_info("image_embeddings", FLOAT, [1, 1, tile, tile]),
        helper.make_tensor_value_info("point_coords", FLOAT, [1, "P", 2]),
        helper.make_tensor_value_info("point_labels", FLOAT, [1, "P"]),
    ]
    douts = [
        helper.make_tensor_value_info("masks", FLOAT, [1, 1, tile, tile]),
        helper.make_tensor_value_info("iou_predictions", FLOAT, [1, 1]),
    ]
    build(folder / decoder_name, dnodes, dinputs, douts, {})
    return encoder


def write_raster(path, bands, geotransform=(500000.0, 0.5, 0.0, 4000000.0, 0.0, -0.5), epsg=32633, nodata=None,
                 dtype=None, driver="GTiff", options=()):
    """Write a (bands, rows, cols) or (rows, cols) array as a GeoTIFF; ``geotransform=None`` leaves it ungeoreferenced."""
    data = np.asarray(bands)
    if data.ndim == 2:
        data = data[None]
    gdal_type = {
        np.dtype(np.uint8): gdal.GDT_Byte,
        np.dtype(np.uint16): gdal.GDT_UInt16,
        np.dtype(np.int16): gdal.GDT_Int16,
        np.dtype(np.float32): gdal.GDT_Float32,
        np.dtype(np.float64): gdal.GDT_Float64,
    }[np.dtype(dtype or data.dtype)]
    ds = gdal.GetDriverByName(driver).Create(str(path), data.shape[2], data.shape[1], data.shape[0], gdal_type, list(options))
    if geotransform is not None:
        ds.SetGeoTransform(geotransform)
        srs = osr.SpatialReference()
        srs.ImportFromEPSG(epsg)
        ds.SetProjection(srs.ExportToWkt())
    for index in range(data.shape[0]):
        band = ds.GetRasterBand(index + 1)
        if nodata is not None:
            band.SetNoDataValue(nodata)
        band.WriteArray(data[index])
    ds.FlushCache()
    ds = None
    return str(path)


@pytest.fixture
def tiny():
    """The model and raster builders of this file, as one namespace."""
    return types.SimpleNamespace(
        build=build,
        image_input=image_input,
        semantic_band_model=semantic_band_model,
        deepness_model=deepness_model,
        tile_mean_model=tile_mean_model,
        nan_model=nan_model,
        instance_model=instance_model,
        vertex_mask_model=vertex_mask_model,
        frame_field_model=frame_field_model,
        rings_model=rings_model,
        promptable_models=promptable_models,
        write_raster=write_raster,
    )


@pytest.fixture(scope="module")
def dask_client():
    """A real Dask LocalCluster of 2 worker processes, shared by the tests of one module (closed after it)."""
    from polytopo.core.cluster import open_client

    with open_client(2) as client:
        yield client
