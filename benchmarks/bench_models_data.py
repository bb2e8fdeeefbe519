"""Synthetic rasters and ONNX models shared by the ``bench_models_*`` benchmarks.

Nothing here is measured: it only builds inputs. Models are built with the
``onnx`` package (a development dependency).
"""

import json
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save_model
from osgeo import gdal, osr

__all__ = ["buildings_mask", "conv_model", "threshold_model", "write_geotiff", "write_mosaic_vrt"]

GSD_M = 0.5


def buildings_mask(size_px, seed=0):
    """A (size, size) bool mask of rectangular buildings, a fifth of them with a courtyard."""
    rng = np.random.default_rng(seed)
    mask = np.zeros((size_px, size_px), bool)
    count = size_px * size_px // 2500
    tops = rng.integers(0, size_px - 60, count)
    lefts = rng.integers(0, size_px - 60, count)
    heights = rng.integers(8, 50, count)
    widths = rng.integers(8, 50, count)
    for top, left, height, width in zip(tops, lefts, heights, widths):
        mask[top:top + height, left:left + width] = True
    for top, left, height, width in zip(tops[::5], lefts[::5], heights[::5], widths[::5]):
        if height > 20 and width > 20:
            mask[top + 6:top + height - 6, left + 6:left + width - 6] = False
    return mask


def write_geotiff(path, bands, origin=(500000.0, 4000000.0)):
    """Write (bands, rows, cols) uint8 data as a tiled, deflate-compressed GeoTIFF at 0.5 m in EPSG:32633."""
    bands = np.asarray(bands, np.uint8)
    if bands.ndim == 2:
        bands = bands[None]
    options = ["TILED=YES", "COMPRESS=DEFLATE", "BLOCKXSIZE=256", "BLOCKYSIZE=256"]
    dataset = gdal.GetDriverByName("GTiff").Create(str(path), bands.shape[2], bands.shape[1], bands.shape[0], gdal.GDT_Byte, options)
    dataset.SetGeoTransform((origin[0], GSD_M, 0.0, origin[1], 0.0, -GSD_M))
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(32633)
    dataset.SetProjection(srs.ExportToWkt())
    for index, band in enumerate(bands):
        dataset.GetRasterBand(index + 1).WriteArray(band)
    dataset = None
    return str(path)


def write_mosaic_vrt(path, tile_path, repeats, bands=1, rows=None):
    """A VRT that repeats ``tile_path`` ``rows`` x ``repeats`` times: a large raster with no extra disk."""
    tile = gdal.Open(str(tile_path))
    size = tile.RasterXSize
    rows = repeats if rows is None else rows
    total = size * repeats
    gt = tile.GetGeoTransform()
    sources = []
    for band in range(1, bands + 1):
        parts = [
            f'<SimpleSource><SourceFilename relativeToVRT="0">{os.path.abspath(tile_path)}</SourceFilename>'
            f"<SourceBand>{band}</SourceBand>"
            f'<SrcRect xOff="0" yOff="0" xSize="{size}" ySize="{size}"/>'
            f'<DstRect xOff="{col * size}" yOff="{row * size}" xSize="{size}" ySize="{size}"/></SimpleSource>'
            for row in range(rows)
            for col in range(repeats)
        ]
        sources.append(f'<VRTRasterBand dataType="Byte" band="{band}">{"".join(parts)}</VRTRasterBand>')
    xml = (
        f'<VRTDataset rasterXSize="{total}" rasterYSize="{size * rows}"><SRS>{tile.GetProjection()}</SRS>'
        f"<GeoTransform>{', '.join(repr(v) for v in gt)}</GeoTransform>{''.join(sources)}</VRTDataset>"
    )
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(xml)
    return str(path)


def _card(entries):
    return {key: json.dumps(value) for key, value in entries.items()}


def _save(path, nodes, inputs, outputs, initializers, card):
    graph = helper.make_graph(nodes, "bench", inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    for key, value in _card(card).items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    save_model(model, str(path))
    return str(path)


def threshold_model(path, tile_px):
    """Cheapest semantic model: probability = band 1 scaled to [0, 1] (a Slice)."""
    nodes = [
        helper.make_node("Slice", ["input", "s", "e", "a"], ["output"]),
    ]
    init = [
        numpy_helper.from_array(np.array([0], np.int64), "s"),
        numpy_helper.from_array(np.array([1], np.int64), "e"),
        numpy_helper.from_array(np.array([1], np.int64), "a"),
    ]
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 1, tile_px, tile_px])]
    outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 1, tile_px, tile_px])]
    card = {"model_type": "Segmentor", "class_names": {"0": "building"}, "resolution": GSD_M * 100, "tile_size": tile_px,
            "tiles_overlap": 12.5, "seg_thresh": 0.5}
    return _save(path, nodes, inputs, outputs, init, card)


def conv_model(path, tile_px, channels=16, layers=3):
    """A small fully convolutional net (3x3 convolutions, ReLU, sigmoid) whose output is a blurred band 1.

    The weights are fixed averaging kernels, so the output polygons follow the
    input's buildings while the compute is that of a real (if small) CNN.
    """
    init, nodes = [], []
    previous, width = "input", 3
    for layer in range(layers):
        out_channels = 1 if layer == layers - 1 else channels
        weight = np.zeros((out_channels, width, 3, 3), np.float32)
        weight[:, 0 if layer == 0 else slice(None)] = 1.0 / (9.0 * (1 if layer == 0 else width))
        init.append(numpy_helper.from_array(weight, f"w{layer}"))
        init.append(numpy_helper.from_array(np.zeros(out_channels, np.float32), f"b{layer}"))
        nodes.append(helper.make_node("Conv", [previous, f"w{layer}", f"b{layer}"], [f"c{layer}"], pads=[1, 1, 1, 1]))
        if layer < layers - 1:
            nodes.append(helper.make_node("Relu", [f"c{layer}"], [f"r{layer}"]))
            previous, width = f"r{layer}", out_channels
    init.append(numpy_helper.from_array(np.array(0.5, np.float32), "half"))
    init.append(numpy_helper.from_array(np.array(12.0, np.float32), "gain"))
    nodes += [
        helper.make_node("Sub", [f"c{layers - 1}", "half"], ["centred"]),
        helper.make_node("Mul", ["centred", "gain"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["output"]),
    ]
    inputs = [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, tile_px, tile_px])]
    outputs = [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 1, tile_px, tile_px])]
    card = {"model_type": "Segmentor", "class_names": {"0": "background", "1": "building"}, "resolution": GSD_M * 100,
            "tile_size": tile_px, "tiles_overlap": 12.5, "seg_thresh": 0.5}
    return _save(path, nodes, inputs, outputs, init, card)
