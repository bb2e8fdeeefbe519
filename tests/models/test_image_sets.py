"""Benchmark runs over image sets: COCO predictions in each image's pixels, ids, failures named, the evaluator reads them."""

import json

import numpy as np
import pytest
import shapely
from osgeo import gdal, ogr

from polytopo.evaluator import evaluate
from polytopo.evaluator.inputs.io_coco import load_coco_ground_truth, load_coco_predictions
from polytopo.models.cli import main
from polytopo.models import SessionParams
from polytopo.models.image_sets import image_ids, list_images, run_image_set

CARD = {"polytopo.family": "semantic", "tile_size": 32, "tiles_overlap": 20, "polytopo.input_range": [0, 255],
        "seg_thresh": 0.5, "class_names": ["building"]}
NOISE_CARD = {"polytopo.family": "semantic", "tile_size": 32, "tiles_overlap": 20, "polytopo.input_range": [0, 1]}
CPU1 = SessionParams(provider="cpu", intra_op_threads=1)
RING = shapely.Polygon([(4, 3), (30, 3), (30, 25), (4, 25)], [[(10, 9), (20, 9), (20, 17), (10, 17)]])


def crop(shift):
    """A 40 x 48 px 3-band crop with a ring building (courtyard included) moved by ``shift`` px to the right."""
    image = np.zeros((3, 40, 48), np.uint8)
    image[:, 3:25, 4 + shift:30 + shift] = 255
    image[:, 9:17, 10 + shift:20 + shift] = 0
    return image


@pytest.fixture
def crops(tmp_path, tiny):
    """A folder of crops: two GeoTIFFs (one georeferenced, one not) and a PNG; and a model reading band 1 of 3."""
    folder = tmp_path / "crops"
    folder.mkdir()
    tiny.write_raster(folder / "000007.tif", crop(0))
    tiny.write_raster(folder / "000009.tif", crop(5), geotransform=None)
    source = tiny.write_raster(tmp_path / "tile_b.tif", crop(10), geotransform=None)
    gdal.Translate(str(folder / "tile_b.png"), source, format="PNG")
    (folder / "notes.md").write_text("not an image")
    model = tiny.semantic_band_model(tmp_path / "m.onnx", channels=3, card=CARD)
    return folder, model


def ground_truth(path, ids):
    images = [{"id": i, "file_name": f"images/{name}", "width": 48, "height": 40} for name, i in ids.items()]
    annotations = []
    for k, (name, image_id) in enumerate(ids.items()):
        shift = {"000007.tif": 0, "000009.tif": 5, "tile_b.png": 10}[name]
        ring = shapely.affinity.translate(RING, shift)
        annotations.append({"id": k + 1, "image_id": image_id, "category_id": 100, "iscrowd": 0, "area": ring.area,
                            "segmentation": [list(np.asarray(r.coords)[:-1].ravel()) for r in (ring.exterior, *ring.interiors)]})
    path.write_text(json.dumps({"images": images, "annotations": annotations,
                                "categories": [{"id": 100, "name": "building"}]}))
    return str(path)


def test_a_folder_of_crops_with_and_without_georeference_gives_pixel_polygons_with_holes(crops, tmp_path):
    folder, model = crops
    out = tmp_path / "preds.json"
    assert main(["run", "--model", model, "--images", str(folder), "--out", str(out), "--quiet"]) == 0
    records = json.loads(out.read_text())
    assert sorted(r["image_id"] for r in records) == ["000007", "000009", "tile_b"]  # ids from the file names
    for record in records:
        shift = {"000007": 0, "000009": 5, "tile_b": 10}[record["image_id"]]
        exterior, *holes = [np.reshape(ring, (-1, 2)) for ring in record["segmentation"]]
        polygon = shapely.Polygon(exterior, holes)
        assert polygon.equals(shapely.affinity.translate(RING, shift)), record["image_id"]
        assert record["category_id"] == 1 and record["score"] == pytest.approx(1.0)
    predictions = load_coco_predictions(out)
    assert len(predictions.instances) == 3 and all(len(i.holes) == 1 for i in predictions.instances)


def test_gt_images_give_the_ids_and_category_and_the_file_scores_perfectly_in_the_evaluator(crops, tmp_path):
    folder, model = crops
    gt = ground_truth(tmp_path / "gt.json", {"000007.tif": 101, "000009.tif": 102, "tile_b.png": 103})
    out = tmp_path / "preds.json"
    assert main(["run", "--model", model, "--images", str(folder), "--gt-images", gt, "--out", str(out), "--quiet"]) == 0
    records = json.loads(out.read_text())
    assert sorted(r["image_id"] for r in records) == [101, 102, 103]
    assert {r["category_id"] for r in records} == {100}
    metrics = evaluate(load_coco_ground_truth(gt), load_coco_predictions(out)).summary["metrics"]
    assert metrics["AP50"] == pytest.approx(1.0) and metrics["Hole-F1"] == pytest.approx(1.0)


def test_gpkg_output_is_one_layer_with_the_image_of_every_polygon(crops, tmp_path):
    folder, model = crops
    out = tmp_path / "preds.gpkg"
    assert main(["run", "--model", model, "--images", str(folder / "*.tif"), "--out", str(out), "--quiet"]) == 0
    dataset = ogr.Open(str(out))
    assert dataset.GetLayerCount() == 1
    rows = {(f.GetField("image"), f.GetField("image_id")): shapely.from_wkb(bytes(f.GetGeometryRef().ExportToWkb()))
            for f in dataset.GetLayer(0)}
    assert sorted(rows) == [("000007.tif", "7"), ("000009.tif", "9")]  # all-digit names: integer ids
    assert rows[("000009.tif", "9")].equals(shapely.affinity.translate(RING, 5))


def test_an_image_the_model_cannot_read_is_named_and_the_others_still_finish(crops, tmp_path, tiny, capsys):
    folder, model = crops
    tiny.write_raster(folder / "gray.tif", crop(0)[:1])  # one band for a 3-band model
    out = tmp_path / "preds.json"
    assert main(["run", "--model", model, "--images", str(folder), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "1 of 4 images failed" in err and "gray.tif: Expected a raster with at least 3 bands" in err
    assert not out.exists()  # a file missing images never carries the name the evaluator is given
    partial = json.loads((tmp_path / "preds.partial.json").read_text())
    assert sorted(r["image_id"] for r in partial) == ["000007", "000009", "tile_b"]
    (failure,) = json.loads((tmp_path / "preds.failures.json").read_text())
    assert failure["image"].endswith("gray.tif") and "has 1" in failure["error"]


def test_a_folder_without_images_and_an_image_missing_from_the_ground_truth_are_clear_errors(crops, tmp_path, capsys):
    folder, model = crops
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("no images here")
    assert main(["run", "--model", model, "--images", str(empty), "--out", str(tmp_path / "p.json")]) == 1
    assert f"Expected images (.tif, .tiff, .png, .jpg, .jpeg) in the folder {empty} but found none" in capsys.readouterr().err
    gt = ground_truth(tmp_path / "gt.json", {"000007.tif": 1})
    assert main(["run", "--model", model, "--images", str(folder), "--gt-images", gt, "--out", str(tmp_path / "p.json")]) == 1
    assert "but 2 do not, e.g. 000009.tif" in capsys.readouterr().err
    gt = ground_truth(tmp_path / "gt.json", {"000007.tif": 1, "000009.tif": 2, "tile_b.png": 3})
    data = json.loads((tmp_path / "gt.json").read_text())
    data["categories"] = [{"id": 1, "name": "roof"}, {"id": 2, "name": "tree"}]
    (tmp_path / "gt.json").write_text(json.dumps(data))
    assert main(["run", "--model", model, "--images", str(folder), "--gt-images", gt, "--out", str(tmp_path / "p.json")]) == 1
    assert "named like a class of the model ['building'] but got ['roof', 'tree']" in capsys.readouterr().err
    assert not (tmp_path / "p.json").exists()


def test_list_files_keep_their_order_and_name_missing_images(tmp_path):
    (tmp_path / "b.png").write_bytes(b"")
    (tmp_path / "a.tif").write_bytes(b"")
    listing = tmp_path / "list.txt"
    listing.write_text("# test split\nb.png\n\na.tif\n")
    assert [p.split("/")[-1] for p in list_images(listing)] == ["b.png", "a.tif"]
    assert image_ids(list_images(listing)) == ["b", "a"]
    listing.write_text("b.png\nc.tif\n")
    with pytest.raises(ValueError, match="but 1 do not, e.g. .*c.tif"):
        list_images(listing)


def test_an_image_set_on_two_workers_equals_the_in_process_run(tmp_path, tiny, dask_client):
    model = tiny.semantic_band_model(tmp_path / "m.onnx", card=NOISE_CARD)
    rng = np.random.default_rng(2)
    for k in range(4):
        tiny.write_raster(tmp_path / f"{k}.tif", (rng.random((40, 50)) > 0.6).astype(np.float32),
                          geotransform=None if k % 2 else (100.0, 0.25, 0.0, 200.0, 0.0, -0.25))
    paths = list_images(tmp_path / "*.tif")
    ids = image_ids(paths)
    here = run_image_set(model, paths, ids, None, session=CPU1)
    there = run_image_set(model, paths, ids, dask_client, session=CPU1)
    assert [r.error for r in there] == [None] * 4
    for a, b in zip(here, there):
        assert a.image_id == b.image_id and len(a.polygons) == len(b.polygons) > 5
        for (ca, na, sa, ra), (cb, nb, sb, rb) in zip(a.polygons, b.polygons):
            assert (ca, na, sa) == (cb, nb, sb) and all(np.array_equal(x, y) for x, y in zip(ra, rb))


def test_the_command_line_runs_an_image_set_on_a_local_cluster(tmp_path, tiny):
    model = tiny.semantic_band_model(tmp_path / "m.onnx", card=NOISE_CARD)
    image = np.zeros((40, 40), np.float32)
    image[5:30, 5:30], image[12:20, 12:20] = 1.0, 0.0
    for name in ("1.tif", "2.tif"):
        tiny.write_raster(tmp_path / name, image)
    out = tmp_path / "preds.json"
    args = ["run", "--model", model, "--images", str(tmp_path / "*.tif"), "--out", str(out), "--quiet"]
    assert main([*args, "--workers", "2", "--provider", "cpu"]) == 0
    records = json.loads(out.read_text())
    assert sorted(r["image_id"] for r in records) == [1, 2]
    assert all(len(r["segmentation"]) == 2 for r in records)  # exterior and the hole
