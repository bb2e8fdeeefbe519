"""Windowed reading: bands, nodata, value scaling, resampling to the model GSD, extents."""

import numpy as np
import pytest
from osgeo import gdal

from polytopo.models.card.model_card import card_to_props, parse_card
from polytopo.models.errors import RasterError
from polytopo.models.raster.normalize import default_input_range, input_scaling
from polytopo.models.raster.reading import GeoreferenceWarning, GridReader, make_grid, open_raster


def reader(path, bands=(1,), resolution=None, extent=None):
    dataset, info = open_raster(path)
    grid = make_grid(info, resolution, extent)
    return GridReader(dataset, info, grid, bands)


def test_band_selection_and_order(tmp_path, tiny):
    data = np.stack([np.full((8, 8), v, np.uint8) for v in (10, 20, 30)])
    r = reader(tiny.write_raster(tmp_path / "rgb.tif", data), bands=(3, 1))
    values, valid = r.read(0, 0, 8, 8)
    assert values[:, 0, 0].tolist() == [30.0, 10.0] and valid.all()


def test_missing_band_is_a_clear_error(tmp_path, tiny):
    path = tiny.write_raster(tmp_path / "one.tif", np.zeros((4, 4), np.uint8))
    with pytest.raises(RasterError, match="--bands"):
        reader(path, bands=(1, 2, 3))


def test_nodata_values_and_nan_are_invalid(tmp_path, tiny):
    data = np.arange(16, dtype=np.float32).reshape(4, 4)
    data[0, 0] = -9999
    data[1, 1] = np.nan
    values, valid = reader(tiny.write_raster(tmp_path / "nd.tif", data, nodata=-9999)).read(0, 0, 4, 4)
    assert not valid[0, 0] and not valid[1, 1] and valid.sum() == 14
    assert values[0, 0, 0] == 0 and values[0, 1, 1] == 0


def test_alpha_band_masks_pixels(tmp_path, tiny):
    path = str(tmp_path / "alpha.tif")
    dataset = gdal.GetDriverByName("GTiff").Create(path, 4, 4, 2, gdal.GDT_Byte)
    dataset.GetRasterBand(1).WriteArray(np.full((4, 4), 100, np.uint8))
    alpha = np.full((4, 4), 255, np.uint8)
    alpha[:2] = 0
    dataset.GetRasterBand(2).SetColorInterpretation(gdal.GCI_AlphaBand)
    dataset.GetRasterBand(2).WriteArray(alpha)
    dataset = None
    with pytest.warns(GeoreferenceWarning):
        _values, valid = reader(path).read(0, 0, 4, 4)
    assert valid[2:].all() and not valid[:2].any()


def test_window_past_the_grid_is_padded_invalid(tmp_path, tiny):
    values, valid = reader(tiny.write_raster(tmp_path / "s.tif", np.ones((5, 6), np.uint8))).read(4, 3, 4, 4)
    assert valid[:2, :2].all() and valid.sum() == 4 and values[0, 3, 3] == 0 and values[0, 0, 0] == 1


@pytest.mark.parametrize(
    "dtype, expected", [(np.uint8, (0.0, 255.0)), (np.uint16, (0.0, 65535.0)), (np.float32, (0.0, 1.0))]
)
def test_default_input_ranges(dtype, expected, tmp_path, tiny):
    path = tiny.write_raster(tmp_path / "t.tif", np.zeros((2, 2), dtype))
    assert default_input_range(reader(path).data_types) == expected


def test_scaling_follows_the_card():
    card = parse_card(card_to_props({
        "polytopo.family": "semantic",
        "polytopo.input_range": [0, 10000],
        "standardization_mean": [0.5],
        "standardization_std": [0.25],
    }))
    scaling = input_scaling(card, ["UInt16"], 1)
    raw = np.array([[[0.0, 5000.0, 10000.0]]], np.float32)
    np.testing.assert_allclose(scaling.apply(raw)[0, 0], [-2.0, 0.0, 2.0], atol=1e-6)
    deepness = parse_card(card_to_props({"model_type": "Segmentor"}))
    np.testing.assert_allclose(input_scaling(deepness, ["Byte"], 1).apply(np.array([[[255.0]]], np.float32)), 1.0)


def test_downsampling_to_a_coarser_model_gsd(tmp_path, tiny):
    data = np.zeros((40, 40), np.uint8)
    data[:, :20] = 200
    path = tiny.write_raster(tmp_path / "fine.tif", data)  # 0.5 m pixels
    r = reader(path, resolution=100)  # model wants 1 m
    assert (r.grid.width_px, r.grid.height_px, r.grid.resampled) == (20, 20, True)
    assert r.grid.geotransform == (500000.0, 1.0, 0.0, 4000000.0, 0.0, -1.0)
    values, valid = r.read(0, 0, 20, 20)
    assert valid.all()
    assert np.allclose(values[0, :, :9], 200) and np.allclose(values[0, :, 11:], 0)


def test_upsampling_to_a_finer_model_gsd(tmp_path, tiny):
    data = np.zeros((10, 10), np.uint8)
    data[:, 5:] = 100
    path = tiny.write_raster(tmp_path / "coarse.tif", data, geotransform=(0.0, 2.0, 0.0, 100.0, 0.0, -2.0))
    r = reader(path, resolution=50)  # 2 m raster, model 0.5 m
    assert (r.grid.width_px, r.grid.height_px) == (40, 40)
    values, valid = r.read(0, 0, 40, 40)
    assert valid.all() and np.allclose(values[0, :, :16], 0) and np.allclose(values[0, :, 24:], 100)


def test_resampling_keeps_nodata_invalid(tmp_path, tiny):
    data = np.full((20, 20), 50, np.uint8)
    data[:10] = 0
    path = tiny.write_raster(tmp_path / "nd.tif", data, nodata=0)
    _values, valid = reader(path, resolution=100).read(0, 0, 10, 10)
    assert not valid[:4].any() and valid[6:].all()


def test_geographic_raster_uses_metres_per_degree(tmp_path, tiny):
    gt = (10.0, 1e-5, 0.0, 60.0, 0.0, -1e-5)  # ~0.56 m x 1.1 m pixels at 60 N
    path = tiny.write_raster(tmp_path / "geo.tif", np.zeros((100, 100), np.uint8), geotransform=gt, epsg=4326)
    grid = reader(path, resolution=110.574).grid
    assert grid.height_px == 100
    assert abs(grid.width_px - round(100 * 111320 * np.cos(np.radians(60.0 - 5e-4)) * 1e-5 / 1.10574)) <= 1


def test_extent_selects_a_window(tmp_path, tiny):
    data = np.arange(100, dtype=np.uint8).reshape(10, 10)
    path = tiny.write_raster(tmp_path / "e.tif", data, geotransform=(0.0, 1.0, 0.0, 10.0, 0.0, -1.0))
    r = reader(path, extent=(2.0, 3.0, 5.0, 8.0))
    assert (r.grid.width_px, r.grid.height_px) == (3, 5)
    assert r.grid.geotransform[0] == 2.0 and r.grid.geotransform[3] == 8.0
    values, _valid = r.read(0, 0, 3, 5)
    np.testing.assert_array_equal(values[0], data[2:7, 2:5])
    with pytest.raises(RasterError, match="overlaps"):
        reader(path, extent=(20.0, 20.0, 30.0, 30.0))


def test_raster_without_georeference_warns(tmp_path, tiny):
    path = tiny.write_raster(tmp_path / "pix.tif", np.zeros((4, 4), np.uint8), geotransform=None)
    with pytest.warns(GeoreferenceWarning, match="pixel coordinates"):
        _dataset, info = open_raster(path)
    assert not info.georeferenced and info.geotransform == (0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


def test_rotated_and_unreadable_rasters_are_rejected(tmp_path, tiny):
    path = tiny.write_raster(tmp_path / "rot.tif", np.zeros((4, 4), np.uint8), geotransform=(0, 1, 0.2, 0, 0.1, -1))
    with pytest.raises(RasterError, match="north-up"):
        open_raster(path)
    bad = tmp_path / "bad.tif"
    bad.write_bytes(b"nope")
    with pytest.raises(RasterError, match="GDAL can open"):
        open_raster(bad)


def test_vrt_mosaic_reads_across_sources(tmp_path, tiny):
    left = tiny.write_raster(tmp_path / "a.tif", np.full((8, 8), 1, np.uint8), geotransform=(0, 1, 0, 8, 0, -1))
    right = tiny.write_raster(tmp_path / "b.tif", np.full((8, 8), 2, np.uint8), geotransform=(8, 1, 0, 8, 0, -1))
    vrt = str(tmp_path / "m.vrt")
    gdal.BuildVRT(vrt, [left, right]).FlushCache()
    values, valid = reader(vrt).read(4, 0, 8, 8)
    assert valid.all() and values[0, 0, :4].tolist() == [1, 1, 1, 1] and values[0, 0, 4:].tolist() == [2, 2, 2, 2]
