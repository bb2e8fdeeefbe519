"""Bad input on the evaluator's command line: a named, one-line refusal, never a raw failure or a quiet wrong number."""

import copy
import json
import struct

import pytest
from polytopo_testing import COCO_GT, COCO_PRED
from reliability import case

from polytopo.evaluator.cli.evaluate import main

FAST = ("--quiet", "--no-plots", "--no-gpkg", "--bootstrap", "0")


def _pred(**changes):
    records = copy.deepcopy(COCO_PRED)
    records[0].update(changes)
    return records


def _gt_with(**changes):
    data = copy.deepcopy(COCO_GT)
    data["annotations"][0].update(changes)
    return data


def _nested(depth):
    return "[" * depth + "]" * depth


SQUARE = [0, 0, 20, 0, 20, 20, 0, 20]

#: (gt, pred, extra options, expected status, text of the one error line)
COCO_CASES = [
    pytest.param(COCO_GT, COCO_PRED, ["--min-hole-area", "nan"], 2, "expected a finite number",
                 id="min-hole-area-nan", marks=case("--min-hole-area nan", "evaluator CLI", "exit 2 (usage): expected a finite number ...")),
    pytest.param(COCO_GT, COCO_PRED, ["--score-threshold", "nan"], 2, "expected a finite number",
                 id="score-threshold-nan", marks=case("--score-threshold nan", "evaluator CLI", "exit 2 (usage): expected a finite number ...")),
    pytest.param(COCO_GT, COCO_PRED, ["--boundary-radius", "inf"], 2, "expected a finite number",
                 id="boundary-radius-inf", marks=case("--boundary-radius inf", "evaluator CLI", "exit 2 (usage): expected a finite number ...")),
    pytest.param(COCO_GT, COCO_PRED, ["--ap-thresholds", "0.5,nan"], 2, "finite numbers",
                 id="ap-thresholds-nan", marks=case("--ap-thresholds 0.5,nan", "evaluator CLI",
                            "exit 2 (usage): expected comma-separated finite numbers ...")),
    pytest.param(COCO_GT, COCO_PRED, ["--ap-thresholds", "0.5,,0.7"], 2, "which has an empty value",
                 id="ap-thresholds-empty-value", marks=case("--ap-thresholds 0.5,,0.7", "evaluator CLI",
                            "exit 2 (usage): expected comma-separated finite numbers but got '0.5,,0.7', which has "
                            "an empty value")),
    pytest.param(COCO_GT, COCO_PRED, ["--workers", "100000"], 2, "local workers",
                 id="workers-100000", marks=case("--workers 100000", "evaluator CLI",
                            "exit 2 (usage): Expected at most N local workers (4 per core of the C cores here) but "
                            "got 100000; ... pass its scheduler address (--scheduler)")),
    pytest.param(COCO_GT, COCO_PRED, ["--sample-spacing", "1e-7"], 2, "boundary samples per ring",
                 id="sample-spacing-1e-7", marks=case("--sample-spacing 1e-7 (would allocate GiBs)", "evaluator CLI",
                            "exit 2 before the metrics: Expected at most 10000000 boundary samples per ring ... "
                            "needs N points (X GiB); use --sample-spacing S px or more")),
    pytest.param(COCO_GT, "[" + json.dumps(_pred())[1:-1].replace("0.9", "Infinity") + "]", [], 2,
                 "'score': expected a finite number", id="score-infinity", marks=case(
                     "prediction score Infinity in COCO JSON", "evaluator CLI",
                     "exit 2: ... record [0] field 'score': expected a finite number but got inf")),
    pytest.param({**COCO_GT, "images": [{"id": [1], "width": 64, "height": 64}]}, COCO_PRED, [], 2,
                 "images[0] field 'id': expected an integer or string but got list", id="image-id-list", marks=case(
                     "image id given as a list", "evaluator CLI",
                     "exit 2: ... images[0] field 'id': expected an integer or string but got list [1]")),
    pytest.param(COCO_GT, json.dumps(_pred(segmentation=[[0, 0, 20, 0, 20, 20, 0, 20]])).replace("20, 20, 0", "1" + "0" * 400 + ", 20, 0"), [],
                 2, "integer too large", id="integer-10e400", marks=case(
                     "integer coordinate 10^400", "evaluator CLI",
                     "exit 2: ... ring 0: expected coordinates within ±1073741824 px but got an integer too large")),
    pytest.param(COCO_GT, _pred(segmentation=[[0, 0, 1e300, 0, 1e300, 1e300, 0, 1e300]]), [], 2,
                 "expected coordinates within ±1073741824 px", id="coordinates-1e300", marks=case(
                     "prediction coordinates 1e300", "evaluator CLI",
                     "exit 2: ... record [0] field 'segmentation' ring 0: expected coordinates within ±1073741824 px "
                     "(2^30 ...) but got 1e+300")),
    pytest.param(COCO_GT, _nested(100_000), [], 2, "nests deeper", id="nested-json", marks=case(
        "100k-deep nested JSON", "evaluator CLI", "exit 2: ...: expected COCO JSON but it nests deeper than Python "
        "can parse")),
    pytest.param(COCO_GT, _pred(segmentation=[["0", "0", "20", "0", "20", "20"]]), [], 2, "not strings",
                 id="string-coordinates", marks=case("string coordinates (\"20\")", "evaluator CLI",
                            "exit 2: ... expected a flat list of numbers ... but got the str '0'")),
    pytest.param(_gt_with(segmentation=[[0, 0, True, 0, 20, 20, 0, 20]]), COCO_PRED, [], 2, "got the bool",
                 id="bool-coordinates", marks=case("boolean coordinates (true)", "evaluator CLI",
                            "exit 2: ... expected a flat list of numbers ... but got the bool 'True'")),
    pytest.param(COCO_GT, [{"image_id": 1, "category_id": 100, "score": 0.9, "bbox": [0, 0, 20, 20]}], [], 2,
                 "expected polygon segmentations but 1 of 1 prediction record(s) have no polygon 'segmentation'",
                 id="bbox-only-results", marks=case(
                     "COCO detection results with 'bbox' only (no segmentation)", "evaluator CLI",
                     "exit 2: expected polygon segmentations but N of N prediction record(s) have no polygon "
                     "'segmentation' ...; export the predictions with 'segmentation' rings")),
    pytest.param({**COCO_GT, "images": [{"id": 1}, {"id": 1}]}, COCO_PRED, [], 2,
                 "images[1] field 'id': expected every image to have its own id but 1 is also the id of images[0]",
                 id="repeated-image-id", marks=case(
                     "two images[] with one id", "evaluator CLI",
                     "exit 2: ... images[1] field 'id': expected every image to have its own id but 1 is also the id "
                     "of images[0] ...")),
    pytest.param(COCO_GT, COCO_PRED, ["--categories", "5"], 2,
                 "Expected --categories [5] to select reference instances but none of the 1 reference",
                 id="categories-match-nothing", marks=case(
                     "--categories 5 where every instance is category 100", "evaluator CLI",
                     "exit 2: Expected --categories [5] to select reference instances but none ... every metric "
                     "would be undefined; pass the category ids the reference uses")),
]


@pytest.mark.parametrize("gt, pred, options, status, expected", COCO_CASES)
def test_bad_coco_input_gets_one_named_line(tmp_path, capsys, gt, pred, options, status, expected):
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(gt if isinstance(gt, str) else json.dumps(gt))
    pred_path.write_text(pred if isinstance(pred, str) else json.dumps(pred))
    argv = ["--gt", str(gt_path), "--pred", str(pred_path), "--out", str(tmp_path / "o"), *FAST, *options]
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse refuses the option value
        code = stop.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error" in line]
    assert code == status and len(lines) == 1 and expected in lines[0], err
    assert "Traceback" not in err and "unexpected failure" not in err
    assert not (tmp_path / "o").exists()


def _layer(path, epsg, wkbs, names=("layer",)):
    from osgeo import ogr, osr

    dataset = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
    srs = None
    if epsg:
        srs = osr.SpatialReference()
        srs.ImportFromEPSG(epsg)
    for name in names:
        layer = dataset.CreateLayer(name, srs, ogr.wkbPolygon)
        layer.CreateField(ogr.FieldDefn("score", ogr.OFTReal))
        for wkb in wkbs:
            feature = ogr.Feature(layer.GetLayerDefn())
            feature.SetField("score", 0.9)
            feature.SetGeometry(ogr.CreateGeometryFromWkb(wkb))
            layer.CreateFeature(feature)
    del dataset
    return path


def _polygon_wkb(*rings):
    body = struct.pack("<I", len(rings))
    for ring in rings:
        body += struct.pack("<I", len(ring)) + b"".join(struct.pack("<dd", *point) for point in ring)
    return b"\x01" + struct.pack("<I", 3) + body


def _square(x, y, side):
    return [(x, y), (x + side, y), (x + side, y + side), (x, y + side), (x, y)]


BUILDING = _polygon_wkb(_square(10, 10, 20), _square(15, 15, 5))
BOWTIE = _polygon_wkb([(0, 0), (20, 20), (20, 0), (0, 20), (0, 0)])
NAN_RING = _polygon_wkb([(float("nan"), 0), (20, 0), (20, 20), (0, 20), (float("nan"), 0)])  # also unclosed: NaN != NaN
DEGREES = _polygon_wkb(_square(10.0, 50.0, 0.0003), _square(10.0001, 50.0001, 0.0001))

#: (gt EPSG, gt features, gt layer names, pred features, options, status, expected text)
VECTOR_CASES = [
    pytest.param(4326, [DEGREES], ("layer",), [DEGREES], ["--pixel-size", "0.5"], 2, "55.66 km per pixel", id="degrees-with-metres", marks=case(
        "geographic CRS with --pixel-size 0.5 (metres meant, degrees given)", "evaluator CLI",
        "exit 2: expected a pixel size of 1 mm to 10 km on the ground but --pixel-size 0.5 in the degrees of WGS 84 "
        "is 55.66 km per pixel; for 0.5 m pixels pass --pixel-size 4.49156e-06 (degrees), or --allow-any-pixel-size")),
    pytest.param(4326, [DEGREES], ("layer",), [DEGREES], ["--pixel-size", "0.5", "--allow-any-pixel-size"], 0, "",
                 id="degrees-allowed", marks=case("the same with --allow-any-pixel-size", "evaluator CLI", "exit 0: evaluated as asked")),
    pytest.param(3857, [BUILDING], ("layer",), [BUILDING], ["--pixel-size", "1e-9"], 2, "1e-06 mm", id="pixel-size-1e-9", marks=case(
        "--pixel-size 1e-9 in a metric CRS (46 TiB of samples)", "evaluator CLI",
        "exit 2: expected a pixel size of 1 mm to 10 km on the ground but --pixel-size 1e-09 ... is 1e-06 mm")),
    pytest.param(3857, [BUILDING], ("layer",), [BUILDING], ["--pixel-size", "1e-9", "--allow-any-pixel-size"], 2,
                 "expected coordinates within", id="pixel-size-1e-9-allowed", marks=case(
                     "the same with --allow-any-pixel-size", "evaluator CLI",
                     "exit 2: ... feature FID 1 field 'geometry' part 0: expected coordinates within ±1073741824 px "
                     "... check the units (for map layers: --pixel-size)")),
    pytest.param(3857, [BUILDING], ("layer",), [NAN_RING], ["--pixel-size", "0.5"], 2, "FID 1 field 'geometry'",
                 id="nan-coordinate", marks=case("NaN coordinate inside a prediction layer's geometry", "evaluator CLI",
                            "exit 2: ... feature FID 1 field 'geometry': expected a polygon GEOS can read but got NaN "
                            "...; fix or remove the feature")),
    pytest.param(3857, [BUILDING], ("a", "b"), [BUILDING], ["--pixel-size", "0.5"], 2, "--gt-layer", id="two-layers", marks=case(
        "reference file with two layers and no --gt-layer", "evaluator CLI",
        "exit 2: ... the dataset has 2 layers ['a', 'b']; pass one of them with --gt-layer")),
    pytest.param(None, [BUILDING], ("layer",), [BUILDING], ["--pixel-size", "0.5"], 0, "neither this layer",
                 id="no-crs", marks=case("both layers without a CRS", "evaluator CLI",
                            "exit 0 with a warning: neither this layer nor the reference layer has a CRS; "
                            "coordinates are compared as they are")),
]


@pytest.mark.parametrize("epsg, gt_features, names, pred_features, options, status, expected", VECTOR_CASES)
def test_bad_vector_input_gets_one_named_line(tmp_path, capsys, epsg, gt_features, names, pred_features, options,
                                              status, expected):
    gt = _layer(tmp_path / "gt.gpkg", epsg, gt_features, names)
    pred = _layer(tmp_path / "pred.gpkg", epsg, pred_features)
    code = main(["--gt", str(gt), "--pred", str(pred), "--score-field", "score", "--out", str(tmp_path / "o"),
                 *FAST, *options])
    err = capsys.readouterr().err
    assert code == status and expected in err and "Traceback" not in err, err
    assert (tmp_path / "o").exists() == (status == 0)


@pytest.mark.parametrize("gt_features, expected, count", [
    pytest.param([BUILDING, BOWTIE], "1 reference polygon(s) are invalid", "gt_invalid", id="invalid", marks=case(
        "invalid reference polygon", "evaluator CLI",
        "exit 0 with a warning naming the first (id, GEOS reason); counts.gt_invalid in summary.json")),
])
def test_questionable_references_are_flagged_and_counted(tmp_path, capsys, gt_features, expected, count):
    gt = _layer(tmp_path / "gt.gpkg", 3857, gt_features)
    pred = _layer(tmp_path / "pred.gpkg", 3857, [BUILDING])
    code = main(["--gt", str(gt), "--pred", str(pred), "--score-field", "score", "--pixel-size", "0.5",
                 "--out", str(tmp_path / "o"), *FAST])
    err = capsys.readouterr().err
    assert code == 0 and expected in err, err
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["counts"][count] == 1


@case("duplicate reference ids in COCO ground truth", "evaluator CLI",
      "exit 0 with a warning: N reference instance(s) repeat an id (e.g. [7]); counts.gt_duplicate_ids")
def test_duplicate_reference_ids_are_flagged_and_counted(tmp_path, capsys):
    data = copy.deepcopy(COCO_GT)
    data["annotations"].append({**data["annotations"][0], "segmentation": [[30, 30, 50, 30, 50, 50, 30, 50]]})
    (tmp_path / "gt.json").write_text(json.dumps(data))
    (tmp_path / "pred.json").write_text(json.dumps(COCO_PRED))
    code = main(["--gt", str(tmp_path / "gt.json"), "--pred", str(tmp_path / "pred.json"), "--out",
                 str(tmp_path / "o"), *FAST])
    err = capsys.readouterr().err
    assert code == 0 and "repeat an id (e.g. [7])" in err, err
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["counts"]["gt_duplicate_ids"] == 1


def _warnings_of(tmp_path, capsys, gt, pred, *options):
    gt_path, pred_path = tmp_path / "gt.json", tmp_path / "pred.json"
    gt_path.write_text(json.dumps(gt))
    pred_path.write_text(json.dumps(pred))
    code = main(["--gt", str(gt_path), "--pred", str(pred_path), "--out", str(tmp_path / "o"), *FAST, *options])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err
    return [line for line in err.splitlines() if "warning:" in line]


def _shifted(records, dx):
    out = copy.deepcopy(records)
    for record in out:
        record["segmentation"] = [[v + dx if i % 2 == 0 else v for i, v in enumerate(ring)]
                                  for ring in record["segmentation"]]
    return out


@pytest.mark.parametrize("gt, pred, options, expected", [
    pytest.param(COCO_GT, _pred(score=-1.3), [], "1 of 1 predictions (100 %) score below the score threshold 0 and "
                 "are dropped", id="logit-scores", marks=case(
                     "every prediction score negative (logits), default --score-threshold 0", "evaluator CLI",
                     "exit 0 with a warning: N of M predictions (X %) score below the score threshold 0 and are "
                     "dropped (scores range ...); ... pass a lower --score-threshold")),
    pytest.param(COCO_GT, COCO_PRED + _pred(segmentation=[])[:1], [], "1 of 2 prediction record(s) have no polygon "
                 "'segmentation'", id="one-empty-segmentation", marks=case(
                     "one prediction with segmentation: [] among others", "evaluator CLI",
                     "exit 0 with a warning: 1 of 2 prediction record(s) have no polygon 'segmentation' ...; skipped "
                     "(counts.skipped.*.empty_geometry)")),
    pytest.param({**COCO_GT, "images": [{"id": 2, "width": 64, "height": 64}]}, _pred(image_id=1), [],
                 "1 image id(s) of annotations are not in images[]", id="annotation-image-not-listed", marks=case(
                     "an annotation's image_id absent from images[]", "evaluator CLI",
                     "exit 0 with a warning: N image id(s) of annotations are not in images[] ...; pycocotools "
                     "ignores their annotations")),
    pytest.param(COCO_GT, _shifted(COCO_PRED, 1e6), [], "The predictions and the references do not overlap",
                 id="layers-apart", marks=case(
                     "predictions 10^6 px away from the references (a CRS or pixel-size mistake)", "evaluator CLI",
                     "exit 0 with a warning: The predictions and the references do not overlap: prediction bounds "
                     "... against reference bounds ...; check the layers' CRS, the pixel size and the image ids")),
    pytest.param({**COCO_GT, "annotations": _shifted(COCO_GT["annotations"], -40)},
                 _shifted(COCO_PRED, -40), ["--profile", "coco"],
                 "reach left of pixel column 0 or above row 0", id="negative-coordinates-coco", marks=case(
                     "a perfect self-evaluation at negative pixel coordinates, --profile coco", "evaluator CLI",
                     "exit 0 with a warning: N instance(s) reach left of pixel column 0 ...; the coco profile's "
                     "raster IoU draws ... inside the image only ...; pass --iou vector")),
])
def test_silent_zero_numbers_are_explained(tmp_path, capsys, gt, pred, options, expected):
    lines = _warnings_of(tmp_path, capsys, gt, pred, *options)
    assert any(expected in line for line in lines), lines


def test_a_threshold_that_keeps_most_predictions_says_nothing(tmp_path, capsys):
    assert _warnings_of(tmp_path, capsys, COCO_GT, COCO_PRED) == []
