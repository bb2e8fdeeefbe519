"""Cluster runs whose workers read their own partitions of the COCO files (:mod:`.read_on_workers`).

A real 2-process Dask LocalCluster reads the bundled PolyTopoBench fixture, written with
its records shuffled (partitions are then not contiguous in the files), scores tied
across partitions, and the input cases a reader must count or refuse: the numbers,
per-feature files, warnings and errors must be those of reading the files whole in one
process. The index that tells the workers where the records lie (:mod:`.coco_index`) is
checked against the JSON parser, and must give up on any file it cannot place every
record of with certainty.
"""

import json
import sqlite3
import warnings

import numpy as np
import pytest

from polytopo.core.errors import InputFormatError, InvalidParameterError
from polytopo.evaluator import evaluate, load_inputs
from polytopo.evaluator.inputs.coco_index import coco_index, record_bytes
from polytopo.evaluator.inputs.instances import InstanceFields
from polytopo.evaluator.outputs.record_parts import parts_request
from polytopo.evaluator.outputs.report import write_report
from polytopo.evaluator.run.api import evaluate_files
from evaluation_equality import assert_same
from reliability import case

CSV_FILES = ("predictions.csv", "references.csv", "missed_holes.csv", "hallucinated_holes.csv")


@pytest.fixture(scope="module")
def fixture_json(fixtures_dir):
    folder = fixtures_dir / "ptb_small"
    return json.loads((folder / "gt.json").read_text()), json.loads((folder / "pred.json").read_text())


def _write(path, data, indent=None):
    path.write_text(json.dumps(data, indent=indent))
    return path


@pytest.fixture
def shuffled_files(tmp_path, fixture_json):
    """The fixture with its records shuffled, scores rounded (ties across partitions) and the cases a reader counts:
    a crowd annotation, an annotation and a prediction without a polygon, an image only the annotations name, a
    prediction without a score, one of another category."""
    gt, pred = json.loads(json.dumps(fixture_json[0])), json.loads(json.dumps(fixture_json[1]))
    rng = np.random.default_rng(5)
    annotations = [gt["annotations"][k] for k in rng.permutation(len(gt["annotations"]))]
    annotations[3] = {**annotations[3], "iscrowd": 1}
    annotations[7] = {**annotations[7], "segmentation": []}
    annotations[11] = {**annotations[11], "image_id": 999}  # not in images[]
    gt["annotations"] = annotations
    records = [{**pred[k], "score": round(pred[k]["score"], 1)} for k in rng.permutation(len(pred))]
    records[2] = {key: value for key, value in records[2].items() if key != "score"}
    records[5] = {**records[5], "segmentation": []}
    records[9] = {**records[9], "category_id": 77}
    return _write(tmp_path / "gt.json", gt, indent=1), _write(tmp_path / "pred.json", records)


OPTIONS = {"default_score": 0.35, "categories": {1, 100}, "drop_degenerate": True}


def _fixture_categories(fixture_json):
    return {record["category_id"] for record in fixture_json[0]["annotations"]}


def _one_process(gt_path, pred_path, out, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gt, pred, _ = load_inputs(gt_path, pred_path, **options)
        evaluation = evaluate(gt, pred, threads=1, bootstrap_resamples=50)
    write_report(evaluation, out, plots=False)
    return evaluation, sorted(str(w.message) for w in caught)


def _on_workers(client, gt_path, pred_path, out, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluation = evaluate_files(gt_path, pred_path, client=client, record_parts=parts_request(None, True),
                                    bootstrap_resamples=50, **options)
        assert evaluation is not None
        write_report(evaluation, out, plots=False)
    return evaluation, sorted(str(w.message) for w in caught)


def _layers(path):
    with sqlite3.connect(str(path)) as connection:
        names = [row[0] for row in connection.execute("SELECT table_name FROM gpkg_contents ORDER BY table_name")]
        return {name: connection.execute(f'SELECT * FROM "{name}" ORDER BY fid').fetchall() for name in names}


def _assert_same_outputs(one, two, folder_one, folder_two):
    assert_same({k: v for k, v in one.summary.items() if k != "timings"},
                {k: v for k, v in two.summary.items() if k != "timings"})
    for name in CSV_FILES:
        assert (folder_one / name).read_bytes() == (folder_two / name).read_bytes(), name
    assert _layers(folder_one / "evaluation.gpkg") == _layers(folder_two / "evaluation.gpkg")


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("pred_as_object", [False, True])
@pytest.mark.parametrize("scan_bytes", [None, 7])
@pytest.mark.parametrize("n_chunks", [1, 3, 64])
def test_the_index_places_every_record_as_the_json_parser_reads_it(tmp_path, fixture_json, indent, pred_as_object,
                                                                  scan_bytes, n_chunks, monkeypatch):
    """Also when the file is scanned a few bytes at a time and split into chunks (blocks and chunks end inside
    strings, keys and numbers)."""
    from polytopo.evaluator.inputs import coco_index as module

    if scan_bytes is not None:
        monkeypatch.setattr(module, "_SCAN_BYTES", scan_bytes)
    gt, pred = fixture_json
    pred_data = {"info": {"note": "a { [ \" ]"}, "annotations": pred} if pred_as_object else pred
    # a string with brackets and a quote the index must skip is made by JSON escapes only, which it refuses;
    # brackets inside plain strings are the case it must handle
    if pred_as_object:
        pred_data["info"]["note"] = "a { [ ] } text"
    for data, records in ((gt, gt["annotations"]), (pred_data, pred)):
        path = _write(tmp_path / "file.json", data, indent)
        index = coco_index(path, n_chunks)
        assert index is not None and len(index) == len(records)
        assert json.loads(record_bytes(path, index.start, index.end)) == records
        assert np.asarray(index.image_ids).tolist() == [record["image_id"] for record in records]
        skeleton = {**data, "annotations": []} if isinstance(data, dict) else []
        assert index.skeleton == skeleton


_SMALL_GROUND_TRUTH = """{"info": {"note": "x[{annotations: [ ]}", "annotations": [1, {"a": [2]}]},
 "images": [{"id": 1, "image_id": 9}, {"id": "t-2"}],
 "annotations" : [ {"image_id": 1, "segmentation": [[0, 0, 4, 0, 4, 4]], "c": "]}{ image_id"},
  {"segmentation": [[1, 1, 2, 2, 3, 1]], "image_id" :"t-2", "m": {"image_id": 5}} ],
 "categories": [{"id": 1, "name": "annotations: ["}]}
"""
"""A ground truth with brackets, keys and the annotations key inside strings, nested objects and other lists."""


def test_the_index_is_the_same_wherever_the_chunks_end(tmp_path):
    """The small ground truth split at every byte: each chunk count gives the index of one chunk (the counts of round
    1 and the marks of round 2 join up across any boundary)."""
    data = json.loads(_SMALL_GROUND_TRUTH)
    path = tmp_path / "gt.json"
    path.write_text(_SMALL_GROUND_TRUTH)
    one = coco_index(path)
    assert one is not None and one.image_ids == [1, "t-2"]
    assert json.loads(record_bytes(path, one.start, one.end)) == data["annotations"]
    assert one.skeleton == {**data, "annotations": []}
    for n_chunks in range(2, len(_SMALL_GROUND_TRUTH) + 1):
        index = coco_index(path, n_chunks)
        assert index is not None, n_chunks
        assert (index.start.tolist(), index.end.tolist(), index.image_ids, index.skeleton) == (
            one.start.tolist(), one.end.tolist(), one.image_ids, one.skeleton), n_chunks


def test_the_index_survives_a_view_of_the_mapped_file_that_outlives_it(tmp_path, fixture_json, monkeypatch):
    """A Dask worker's sampling profiler can hold the indexing frame, and its array over the mapped bytes, past its
    return: the index is still made (the mapping goes with the last view) instead of failing with BufferError."""
    from polytopo.evaluator.inputs import coco_index as module

    views, specials, joined = [], module._specials, module._joined

    def holding_a_view(data, *args):
        views.append(np.frombuffer(data, np.uint8))
        return specials(data, *args)

    def joining_with_a_view(path, data, marks):
        views.append(np.frombuffer(data, np.uint8))
        return joined(path, data, marks)

    monkeypatch.setattr(module, "_specials", holding_a_view)
    monkeypatch.setattr(module, "_joined", joining_with_a_view)
    gt, _ = fixture_json
    path = _write(tmp_path / "gt.json", gt, None)
    index = coco_index(path, 2)
    assert index is not None and len(index) == len(gt["annotations"])
    assert len(views) == 5 and all(bytes(view[:1]) == b"{" for view in views)  # the views still read the file


def test_the_index_reads_text_and_mixed_image_ids(tmp_path, fixture_json):
    pred = [{**record, "image_id": f"tile-{record['image_id']}" if k % 2 else record["image_id"]}
            for k, record in enumerate(fixture_json[1])]
    index = coco_index(_write(tmp_path / "pred.json", pred))
    assert index.image_ids == [record["image_id"] for record in pred]


def _pred_text(fixture_json):
    return json.dumps(fixture_json[1][:3])


@pytest.mark.parametrize("change", [
    ("an escape in a string", lambda text: text.replace('"score"', '"sc\\u006fre"', 1)),
    ("a record that is a list", lambda text: text.replace("{", "[1], {", 1)),
    ("a record without image_id", lambda text: text.replace('"image_id"', '"image"', 1)),
    ("a fractional image_id", lambda text: text.replace('"image_id": 1,', '"image_id": 1.5,', 1)),
    ("a null image_id", lambda text: text.replace('"image_id": 1,', '"image_id": null,', 1)),
    ("a boolean image_id", lambda text: text.replace('"image_id": 1,', '"image_id": true,', 1)),
    ("an image_id past int64", lambda text: text.replace('"image_id": 1,', '"image_id": 12345678901234567890,', 1)),
    ("an image_id given twice", lambda text: text.replace('"image_id": 1,', '"image_id": 1, "image_id": 2,', 1)),
    ("an image_id only inside a nested object",
     lambda text: text.replace('"image_id": 1,', '"meta": {"image_id": 1},', 1)),
    ("no comma between records", lambda text: text.replace("}, {", "} {", 1)),
    ("two commas between records", lambda text: text.replace("}, {", "}, , {", 1)),
    ("a number between records", lambda text: text.replace("}, {", "}, 7, {", 1)),
    ("something after the list", lambda text: text + " []"),
    ("the list closed twice", lambda text: text + "]"),
    ("a string left open after the list", lambda text: text + ' "'),
    ("a list left open", lambda text: "[" + text),
    ("no record at all", lambda text: "[]"),
    ("a bare number", lambda text: "7"),
])
@pytest.mark.parametrize("n_chunks", [1, 5])
def test_the_index_gives_up_on_what_it_cannot_place_with_certainty(tmp_path, fixture_json, change, n_chunks):
    text = change[1](_pred_text(fixture_json))
    assert text != _pred_text(fixture_json) or change[0] == "no record at all"
    path = tmp_path / "pred.json"
    path.write_text(text)
    assert coco_index(path, n_chunks) is None, change[0]


def test_the_index_gives_up_on_a_ground_truth_without_one_annotations_list(tmp_path, fixture_json):
    gt = fixture_json[0]
    assert coco_index(_write(tmp_path / "a.json", {k: v for k, v in gt.items() if k != "annotations"})) is None
    text = json.dumps(gt)
    twice = text[:-1] + ', "annotations": ' + json.dumps(gt["annotations"][:2]) + "}"
    (tmp_path / "b.json").write_text(twice)
    assert coco_index(tmp_path / "b.json") is None
    nested = {**{k: v for k, v in gt.items() if k != "annotations"}, "info": {"annotations": gt["annotations"]}}
    assert coco_index(_write(tmp_path / "c.json", nested)) is None


def test_workers_reading_their_partitions_give_the_outputs_of_one_process(client, tmp_path, shuffled_files,
                                                                         fixture_json):
    options = {**OPTIONS, "categories": _fixture_categories(fixture_json)}
    one, one_warned = _one_process(*shuffled_files, tmp_path / "one", **options)
    two, two_warned = _on_workers(client, *shuffled_files, tmp_path / "two", **options)
    _assert_same_outputs(one, two, tmp_path / "one", tmp_path / "two")
    assert one.summary["counts"]["skipped"]["gt"] == {"crowd": 1, "empty_geometry": 1}
    assert one.summary["counts"]["skipped"]["pred"] == {"empty_geometry": 1, "other_category": 1}
    assert any("not in images[]" in message for message in one_warned)
    assert any("have no polygon" in message for message in one_warned)
    assert one_warned == two_warned
    # the client holds the instances without their rings: those stayed on the workers
    assert all(isinstance(instance, InstanceFields) for instance in two.outcome.gt)


def test_partitions_cut_across_the_file_order_of_text_image_ids(client, tmp_path, fixture_json):
    gt, pred = json.loads(json.dumps(fixture_json[0])), json.loads(json.dumps(fixture_json[1]))
    name = {image["id"]: f"tile-{image['id']:02d}" for image in gt["images"]}
    gt["images"] = [{**image, "id": name[image["id"]]} for image in gt["images"][::-1]]
    gt["annotations"] = [{**record, "image_id": name[record["image_id"]]} for record in gt["annotations"]]
    pred = [{**record, "image_id": name[record["image_id"]]} for record in pred[::-1]]
    files = _write(tmp_path / "gt.json", gt), _write(tmp_path / "pred.json", pred)
    one, _ = _one_process(*files, tmp_path / "one", drop_degenerate=True)
    two, _ = _on_workers(client, *files, tmp_path / "two", drop_degenerate=True)
    _assert_same_outputs(one, two, tmp_path / "one", tmp_path / "two")


def _error_of(call):
    with pytest.raises((InputFormatError, InvalidParameterError)) as caught:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    return type(caught.value), str(caught.value)


@pytest.mark.parametrize("wrong", [("gt", (40, 200)), ("pred", (150, 20)), ("both", (200,))])
def test_a_wrong_record_gives_the_error_of_reading_the_file_whole(client, tmp_path, fixture_json, wrong):
    """Wrong records in several partitions: the first in the ground truth wins, then the first in the predictions."""
    gt, pred = json.loads(json.dumps(fixture_json[0])), json.loads(json.dumps(fixture_json[1]))
    side, positions = wrong
    for position in positions:
        if side in ("gt", "both"):
            gt["annotations"][position]["segmentation"] = [[1.0, 2.0, 3.0, 4.0]]  # two points
        if side in ("pred", "both"):
            pred[position]["score"] = "high"
    files = _write(tmp_path / "gt.json", gt), _write(tmp_path / "pred.json", pred)
    expected = _error_of(lambda: load_inputs(*files))
    found = _error_of(lambda: evaluate_files(*files, client=client, record_parts=parts_request(None, False)))
    assert found == expected
    assert f"[{min(positions)}]" in expected[1] and (side == "pred") == ("pred.json" in expected[1])


def test_a_ring_that_needs_too_many_samples_is_refused_as_in_one_process(client, tmp_path, shuffled_files):
    params = {"sample_spacing_px": 1e-6}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gt, pred, _ = load_inputs(*shuffled_files, default_score=0.5)
    expected = _error_of(lambda: evaluate(gt, pred, **params))
    found = _error_of(lambda: evaluate_files(*shuffled_files, client=client, record_parts=parts_request(None, False),
                                             default_score=0.5, **params))
    assert found == expected and found[0] is InvalidParameterError


def test_records_that_do_not_parse_send_the_run_back_to_reading_the_file_whole(client, tmp_path, fixture_json):
    text = json.dumps(fixture_json[1])
    broken = text.replace('"segmentation": [[', '"segmentation": [[,', 1)
    (tmp_path / "pred.json").write_text(broken)
    gt_path = _write(tmp_path / "gt.json", fixture_json[0])
    assert evaluate_files(gt_path, tmp_path / "pred.json", client=client, record_parts=parts_request(None, False)) is None
    message = _error_of(lambda: load_inputs(gt_path, tmp_path / "pred.json"))[1]
    assert "expected JSON but it cannot be parsed" in message


def test_other_profiles_and_other_files_are_read_here(client, tmp_path, fixture_json):
    gt_path = _write(tmp_path / "gt.json", fixture_json[0])
    pred_path = _write(tmp_path / "pred.json", fixture_json[1])
    request = parts_request(None, False)
    assert evaluate_files(gt_path, pred_path, client=client, record_parts=request, profile="coco") is None
    geojson = _write(tmp_path / "pred.geojson.json", {"type": "FeatureCollection", "features": []})
    assert evaluate_files(gt_path, geojson, client=client, record_parts=request) is None


def _refuse_parsing_here(monkeypatch):
    """From now on, this process parsing a COCO file fails the test."""
    from polytopo.evaluator.inputs import io_coco
    from polytopo.evaluator.run import api

    def refused(*args, **kwargs):
        raise AssertionError("the client parsed a COCO file")

    monkeypatch.setattr(io_coco, "read_coco_json", refused)
    monkeypatch.setattr(api, "read_coco_json", refused)


def _assert_same_folders(one, two):
    """Two output folders of one evaluation hold the same numbers (timings aside) and the same files."""
    summaries = [json.loads((folder / "summary.json").read_text()) for folder in (one, two)]
    for summary in summaries:
        summary.pop("timings")
    assert_same(*summaries)
    for name in CSV_FILES:
        assert (one / name).read_bytes() == (two / name).read_bytes(), (one.name, name)
    assert _layers(one / "evaluation.gpkg") == _layers(two / "evaluation.gpkg")


def test_the_command_line_on_a_cluster_never_reads_the_records_itself(tmp_path, shuffled_files, monkeypatch, capsys):
    from polytopo.evaluator.cli.evaluate import main

    common = ["--gt", str(shuffled_files[0]), "--pred", str(shuffled_files[1]), "--default-score", "0.4",
              "--drop-degenerate-rings", "--bootstrap", "20", "--no-plots", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "one"), "--workers", "0"]) == 0
    _refuse_parsing_here(monkeypatch)
    assert main([*common, "--out", str(tmp_path / "two"), "--workers", "2"]) == 0, capsys.readouterr().err
    _assert_same_folders(tmp_path / "one", tmp_path / "two")


def _workers_cannot_read(monkeypatched):
    """Run on each worker: its counts of any chunk give None (as where the files are not at the client's paths)."""
    from polytopo.evaluator.inputs import coco_index as module

    if monkeypatched:
        module.real_chunk_counts, module.chunk_counts = module.chunk_counts, lambda path, lo, hi: None
    else:
        module.chunk_counts = module.real_chunk_counts


def test_workers_index_chunks_of_the_files_as_one_process_indexes_them(client, tmp_path, fixture_json, monkeypatch):
    """Files of more than a chunk's bytes are split into a chunk per worker thread; their marks go from worker to
    worker and are joined there: the indexes are those of one chunk in this process."""
    from polytopo.evaluator.inputs import coco_index as module
    from polytopo.evaluator.run import read_on_workers

    gt_path = _write(tmp_path / "gt.json", fixture_json[0], indent=1)
    pred_path = _write(tmp_path / "pred.json", {"annotations": fixture_json[1]})
    monkeypatch.setattr(module, "INDEX_CHUNK_BYTES", 1000)
    assert read_on_workers.task_slots(client) >= 2 and min(p.stat().st_size for p in (gt_path, pred_path)) > 2000
    split = read_on_workers.indexed_inputs(gt_path, pred_path, client)
    for index, path in zip(split, (gt_path, pred_path), strict=True):
        one = coco_index(path)
        assert index.start.tolist() == one.start.tolist() and index.end.tolist() == one.end.tolist()
        assert np.asarray(index.image_ids).tolist() == np.asarray(one.image_ids).tolist()
        assert index.skeleton == one.skeleton and len(index) == len(one) > 0


def test_workers_that_cannot_read_the_files_send_the_run_back_to_the_client(client, tmp_path, fixture_json):
    gt_path = _write(tmp_path / "gt.json", fixture_json[0])
    pred_path = _write(tmp_path / "pred.json", fixture_json[1])
    client.run(_workers_cannot_read, True)
    try:
        assert evaluate_files(gt_path, pred_path, client=client, record_parts=parts_request(None, False)) is None
    finally:
        client.run(_workers_cannot_read, False)
    assert evaluate_files(gt_path, pred_path, client=client, record_parts=parts_request(None, False),
                          drop_degenerate=True) is not None


def test_a_comparison_on_a_cluster_has_its_workers_read_every_method(tmp_path, shuffled_files, monkeypatch, capsys):
    """``compare`` on a cluster: the client parses no COCO file and writes what one process writes."""
    from polytopo.evaluator.cli.evaluate import main

    gt_path, pred_path = shuffled_files
    records = json.loads(pred_path.read_text())
    second = _write(tmp_path / "second.json", [{**r, "score": r.get("score", 0.5) * 0.9} for r in records[::2]])
    common = ["compare", "--gt", str(gt_path), f"--pred=A={pred_path}", f"--pred=B={second}", "--default-score",
              "0.4", "--drop-degenerate-rings", "--bootstrap", "20", "--no-plots", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "one"), "--workers", "0"]) == 0
    warned_once = capsys.readouterr().err
    _refuse_parsing_here(monkeypatch)
    status = main([*common, "--out", str(tmp_path / "two"), "--workers", "2"])
    warned = capsys.readouterr().err
    assert status == 0, warned
    _assert_same_comparisons(tmp_path / "one", tmp_path / "two")
    # the warnings of one process, the ground truth's once (the workers read it once for each method)
    assert sorted(warned.splitlines()) == sorted(warned_once.splitlines())
    assert sum(line.startswith(f"polytopo.evaluator: warning: {gt_path}: ") for line in warned.splitlines()) == 2


def _assert_same_comparisons(one, two):
    for name in ("table.csv", "table.md", "table.tex"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    assert_same(json.loads((one / "paired_bootstrap.json").read_text()),
                json.loads((two / "paired_bootstrap.json").read_text()))
    for method in ("A", "B"):
        _assert_same_folders(one / method, two / method)


def test_a_comparison_indexes_its_ground_truth_once(client, tmp_path, fixture_json):
    """Inside ``ground_truth_indexed_once`` (a comparison's methods) the ground truth's index is made once; the
    predictions' every time, and outside the block both every time."""
    from polytopo.evaluator.run.read_on_workers import ground_truth_indexed_once, indexed_inputs

    gt_path = _write(tmp_path / "gt.json", fixture_json[0])
    pred_path = _write(tmp_path / "pred.json", fixture_json[1])
    with ground_truth_indexed_once():
        first, second = (indexed_inputs(gt_path, pred_path, client) for _ in range(2))
    after = indexed_inputs(gt_path, pred_path, client)
    assert second[0] is first[0] and second[1] is not first[1]
    assert after[0] is not first[0] and np.array_equal(after[0].start, first[0].start)


@case("a method file the workers cannot place (a JSON string escape) in a comparison on a cluster",
      "evaluator compare on a cluster",
      "the client reads that method's file and the ground truth; the comparison of one process")
def test_a_method_the_workers_cannot_place_is_read_by_the_client_in_a_comparison(tmp_path, shuffled_files, capsys):
    """A prediction file the index gives up on (a string escape) is read here; the comparison is unchanged."""
    from polytopo.evaluator.cli.evaluate import main

    gt_path, pred_path = shuffled_files
    records = json.loads(pred_path.read_text())
    escaped = _write(tmp_path / "escaped.json", [{**records[0], "note": "a\\"}, *records[1:]])
    assert coco_index(escaped) is None and coco_index(pred_path) is not None
    common = ["compare", "--gt", str(gt_path), f"--pred=A={pred_path}", f"--pred=B={escaped}", "--default-score",
              "0.4", "--drop-degenerate-rings", "--bootstrap", "20", "--no-plots", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "one"), "--workers", "0"]) == 0
    assert main([*common, "--out", str(tmp_path / "two"), "--workers", "2"]) == 0, capsys.readouterr().err
    _assert_same_comparisons(tmp_path / "one", tmp_path / "two")


def test_the_geopackage_a_worker_assembles_draws_no_gdal_warning(tmp_path, fixtures_dir):
    """The worker writes the GeoPackage under a name that ends in ``.gpkg``: GDAL warns of any other extension on
    every open ("The filename extension should be 'gpkg'"), on the workers' standard error, i.e. the user's."""
    import subprocess
    import sys

    folder = fixtures_dir / "ptb_small"
    done = subprocess.run([sys.executable, "-m", "polytopo.evaluator", "--gt", str(folder / "gt.json"), "--pred",
                           str(folder / "pred.json"), "--out", str(tmp_path / "out"), "--workers", "2",
                           "--drop-degenerate-rings", "--bootstrap", "0", "--no-plots", "--quiet"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "out" / "evaluation.gpkg").is_file()
    assert "Warning" not in done.stderr and "gpkg" not in done.stderr, done.stderr[-2000:]
