"""Per-feature outputs encoded by the workers (:mod:`.record_parts`) write the files of one process.

A real 2-process Dask LocalCluster scores the bundled PolyTopoBench fixture with the
instances of both sides shuffled across images (partitions are then not contiguous in
input order, so the client must put every row back in its place); the CSV tables must be
byte-identical and every GeoPackage layer the same: field types, feature ids, values,
geometry and the extents and counts GDAL reads.
"""

import sqlite3
from pathlib import Path
import warnings
from dataclasses import replace

import numpy as np
import pytest

from polytopo.core.cluster import open_client
from polytopo.core.errors import ClusterError
from polytopo.core.vector_files import PixelFrame
from polytopo.evaluator import evaluate, load_inputs
from polytopo.evaluator.outputs.record_parts import RecordParts, parts_request
from polytopo.evaluator.outputs.report import write_report
from polytopo.evaluator.tables.error_classes import ERROR_LAYERS
from evaluation_equality import assert_same

CSV_FILES = ("predictions.csv", "references.csv", "missed_holes.csv", "hallucinated_holes.csv")
UTM_33N = ('PROJCS["WGS 84 / UTM zone 33N",GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563]],'
           'PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Transverse_Mercator"],'
           'PARAMETER["latitude_of_origin",0],PARAMETER["central_meridian",15],PARAMETER["scale_factor",0.9996],'
           'PARAMETER["false_easting",500000],PARAMETER["false_northing",0],UNIT["metre",1],'
           'AUTHORITY["EPSG","32633"]]')


def _shuffled(instance_set, seed):
    order = np.random.default_rng(seed).permutation(len(instance_set))
    return replace(instance_set, instances=tuple(instance_set.instances[i] for i in order))


@pytest.fixture(scope="module")
def inputs(fixtures_dir):
    folder = fixtures_dir / "ptb_small"
    gt, pred, _ = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)
    return _shuffled(gt, 3), _shuffled(pred, 4)


def _layer_rows(path):
    """Every layer of a GeoPackage as GDAL lists it: schema, contents row, features in fid order."""
    from osgeo import ogr

    dataset = ogr.Open(str(path))
    layers = {}
    for index in range(dataset.GetLayerCount()):
        layer = dataset.GetLayerByIndex(index)
        definition = layer.GetLayerDefn()
        schema = [(definition.GetFieldDefn(k).GetName(), definition.GetFieldDefn(k).GetType(),
                   definition.GetFieldDefn(k).GetSubType()) for k in range(definition.GetFieldCount())]
        features = [(feature.GetFID(), [feature.GetField(k) for k in range(definition.GetFieldCount())],
                     feature.GetGeometryRef().ExportToWkb() if feature.GetGeometryRef() else None)
                    for feature in layer]
        layers[layer.GetName()] = (layer.GetGeomType(), layer.GetSpatialRef().ExportToWkt()
                                   if layer.GetSpatialRef() else None, schema, layer.GetFeatureCount(),
                                   layer.GetExtent() if features else None, features)
    del dataset
    with sqlite3.connect(str(path)) as connection:
        contents = connection.execute("SELECT table_name, min_x, min_y, max_x, max_y, srs_id FROM gpkg_contents "
                                      "ORDER BY table_name").fetchall()
        counts = connection.execute("SELECT * FROM gpkg_ogr_contents ORDER BY table_name").fetchall()
    return layers, contents, counts


def _assert_same_outputs(one, two):
    for name in CSV_FILES:
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    assert _layer_rows(one / "evaluation.gpkg") == _layer_rows(two / "evaluation.gpkg")


@pytest.mark.parametrize("profile, shuffled", [("paper", True), ("coco", True), ("paper", False)])
def test_worker_made_outputs_are_the_files_of_one_process(tmp_path, client, inputs, fixtures_dir, profile, shuffled):
    """Rows come back in input order: sorted when the input's images are not in evaluation order, else as they come."""
    if not shuffled:
        folder = fixtures_dir / "ptb_small"
        inputs = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)[:2]
    one = evaluate(*inputs, profile=profile, bootstrap_resamples=0)
    two = evaluate(*inputs, profile=profile, bootstrap_resamples=0, client=client,
                   record_parts=parts_request(None, True))
    assert isinstance(two.records, RecordParts) and len(two.records.parts) > 2
    assert two.records.in_order() is not shuffled
    assert two.records.count("predictions") == len(one.records["predictions"])
    write_report(one, tmp_path / "one", plots=False)
    write_report(two, tmp_path / "two", plots=False)
    _assert_same_outputs(tmp_path / "one", tmp_path / "two")
    layers, _, _ = _layer_rows(tmp_path / "two" / "evaluation.gpkg")
    # the fixture has rows in every layer, and some partitions have none of a layer's rows
    assert {name: len(layer[-1]) > 0 for name, layer in layers.items()} == {layer.name: True for layer in ERROR_LAYERS}
    assert any(part.layers["missed_holes"].count == 0 for part in two.records.parts)


def test_worker_made_outputs_in_map_units_and_a_crs(tmp_path, client, inputs):
    frame = PixelFrame(UTM_33N, origin_x=500_000.0, origin_y=5_300_000.0, pixel_size=0.3)
    one = evaluate(*inputs, bootstrap_resamples=0)
    two = evaluate(*inputs, bootstrap_resamples=0, client=client, record_parts=parts_request(frame, True))
    write_report(one, tmp_path / "one", frame=frame, plots=False)
    write_report(two, tmp_path / "two", frame=frame, plots=False)
    _assert_same_outputs(tmp_path / "one", tmp_path / "two")
    _, contents, _ = _layer_rows(tmp_path / "two" / "evaluation.gpkg")
    assert {row[-1] for row in contents} == {32633}
    with pytest.raises(ValueError, match="frame"):
        write_report(two, tmp_path / "three", plots=False)
    assert not (tmp_path / "three").exists()


def test_without_a_geopackage_and_with_only_unmatched_features(tmp_path, client, inputs):
    """No GeoPackage rows are made when none is asked; a set where nothing matches writes empty tables alike."""
    gt, pred = inputs
    far = replace(pred, instances=tuple(replace(i, image_id="elsewhere") for i in pred.instances))
    for name, pred_set in (("all", pred), ("none", far)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "only in the predictions" and "no overlap" for the far set
            one = evaluate(gt, pred_set, bootstrap_resamples=0)
            two = evaluate(gt, pred_set, bootstrap_resamples=0, client=client,
                           record_parts=parts_request(None, name == "none"))
        assert (two.records.parts[0].layers == {}) == (name == "all")
        write_report(one, tmp_path / f"one-{name}", plots=False, geopackage=name == "none")
        write_report(two, tmp_path / f"two-{name}", plots=False, geopackage=name == "none")
        for file in CSV_FILES:
            assert (tmp_path / f"one-{name}" / file).read_bytes() == (tmp_path / f"two-{name}" / file).read_bytes()
    _assert_same_outputs(tmp_path / "one-none", tmp_path / "two-none")


@pytest.mark.parametrize("profile", ["paper", "coco"])
def test_the_rings_stay_on_the_workers_when_the_summary_reads_none(client, inputs, profile):
    """``paper`` needs no ring on the client once the workers made the records; ``coco`` draws masks from them."""
    one = evaluate(*inputs, profile=profile, bootstrap_resamples=30, min_hole_area_px2=6.0)
    two = evaluate(*inputs, profile=profile, bootstrap_resamples=30, min_hole_area_px2=6.0, client=client,
                   record_parts=parts_request(None, True))
    assert_same({k: v for k, v in one.summary.items() if k != "timings"},
                {k: v for k, v in two.summary.items() if k != "timings"})
    kinds = {type(instance).__name__ for instance in (*two.outcome.gt, *two.outcome.pred)}
    assert kinds == ({"InstanceFields"} if profile == "paper" else {"Instance"})
    assert [(i.image_id, i.source_id, i.score, i.part, i.hole_count) for i in two.outcome.pred] == \
        [(i.image_id, i.source_id, i.score, i.part, i.hole_count) for i in one.outcome.pred]
    if profile == "paper":
        with pytest.raises(AttributeError, match="stayed on the Dask workers.*without record_parts"):
            assert two.outcome.gt[0].exterior is None
        with pytest.raises(AttributeError, match="stayed on the Dask workers"):
            two.outcome.pred[0].polygon()
        assert not hasattr(two.outcome.pred_table, "holes") and len(two.outcome.pred_table.hole_owner)


def test_image_ids_sharing_a_sort_key_bring_the_rings_back_for_the_order(client, inputs):
    """``True`` and ``"True"`` sort alike: their instances are ordered by geometry, so the rings come back."""
    gt, pred = inputs
    ids = {image: (True if k == 0 else "True" if k == 1 else f"image {image}")
           for k, image in enumerate(dict.fromkeys(i.image_id for i in gt.instances))}
    gt = replace(gt, instances=tuple(replace(i, image_id=ids[i.image_id]) for i in gt.instances),
                 image_ids=tuple(ids.get(image, f"image {image}") for image in gt.image_ids))
    pred = replace(pred, instances=tuple(replace(i, image_id=ids.get(i.image_id, f"image {i.image_id}"))
                                         for i in pred.instances))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = evaluate(gt, pred, bootstrap_resamples=0)
        two = evaluate(gt, pred, bootstrap_resamples=0, client=client, record_parts=parts_request(None, False))
    assert {type(instance).__name__ for instance in two.outcome.pred} == {"Instance"}
    assert_same({k: v for k, v in one.summary.items() if k != "timings"},
                {k: v for k, v in two.summary.items() if k != "timings"})


def test_the_client_holds_no_record_text_or_geometry(tmp_path, inputs):
    """The parts' CSV text and databases stay on the workers; written after the client closed, nothing is left."""
    with open_client(workers=2) as own:
        two = evaluate(*inputs, bootstrap_resamples=0, client=own, record_parts=parts_request(None, True))
        assert all(part.database is None and not any(table.text for table in part.tables.values())
                   for part in two.records.parts)
        assert sum(len(table.ends) for part in two.records.parts for table in part.tables.values()) > 0
        assert {type(kept).__name__ for kept in two.records.kept} == {"Future"}
    with pytest.raises(ClusterError, match="is closed: values kept on its workers are gone"):
        write_report(two, tmp_path / "late", plots=False)
    assert list(tmp_path.iterdir()) == []


def test_reference_code_keeps_its_records_on_the_client(client, inputs):
    two = evaluate(*inputs, profile="reference-code", client=client, record_parts=parts_request(None, True))
    assert isinstance(two.records, dict) and two.records["predictions"]


def test_the_command_line_on_a_cluster_writes_the_outputs_of_one_process(tmp_path, fixtures_dir):
    from polytopo.evaluator.cli.evaluate import main

    folder = fixtures_dir / "ptb_small"
    common = ["--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--drop-degenerate-rings",
              "--bootstrap", "0", "--no-plots", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "one")]) == 0
    assert main([*common, "--out", str(tmp_path / "two"), "--workers", "2"]) == 0
    _assert_same_outputs(tmp_path / "one", tmp_path / "two")


def test_a_comparison_on_the_cluster_writes_each_method_folder_as_one_process(tmp_path, client, inputs):
    from polytopo.evaluator.run.compare import compare_to_folder

    gt, pred = inputs
    methods = {"A": pred, "B": replace(pred, instances=pred.instances[::2])}
    compare_to_folder(gt, methods, tmp_path / "one", plots=False, bootstrap_resamples=0)
    compare_to_folder(gt, methods, tmp_path / "two", client=client, plots=False, bootstrap_resamples=0)
    for name in methods:
        _assert_same_outputs(tmp_path / "one" / name, tmp_path / "two" / name)
    assert (tmp_path / "one" / "table.csv").read_bytes() == (tmp_path / "two" / "table.csv").read_bytes()


STARTED = []
"""(task name, worker, order) of each write-phase task as the scheduler (in this process) sends it to a worker."""
_WRITE_TASKS = ("_table_texts", "_database", "_geopackage_here", "plot_pngs")


def _note_write_tasks(dask_scheduler):
    from distributed.diagnostics.plugin import SchedulerPlugin

    class NoteWriteTasks(SchedulerPlugin):
        name = "note-write-tasks"

        def transition(self, key, start, finish, *args, **kwargs):
            task_name = str(key).split("-")[0]
            if finish == "processing" and task_name in _WRITE_TASKS:
                STARTED.append((task_name, dask_scheduler.tasks[key].processing_on.address, len(STARTED)))

    dask_scheduler.add_plugin(NoteWriteTasks(), idempotent=True)


def test_on_a_cluster_the_geopackage_and_the_plots_start_after_the_rows_on_two_workers(tmp_path, client, inputs):
    """A worker runs one task at a time: the rows' fetches come first, then one worker assembles the GeoPackage while
    another draws the plots (neither waits for the other; no fetch waits for either)."""
    evaluation = evaluate(*inputs, bootstrap_resamples=0, client=client, record_parts=parts_request(None, True))
    client.run_on_scheduler(_note_write_tasks)
    STARTED.clear()
    write_report(evaluation, tmp_path / "out")
    names = [name for name, _, _ in STARTED]
    assert names.count("plot_pngs") == 1 and names.count("_geopackage_here") == 1
    assert 1 <= names.count("_table_texts") <= 4 * len(evaluation.records.parts) and names.count("_database") == len(evaluation.records.parts)
    where = {name: worker for name, worker, _ in STARTED if name in ("plot_pngs", "_geopackage_here")}
    assert where["plot_pngs"] != where["_geopackage_here"]
    last_fetch = max(order for name, _, order in STARTED if name == "_table_texts")
    assert all(order > last_fetch for name, _, order in STARTED if name != "_table_texts")
    assert {path.name for path in (tmp_path / "out").glob("*.png")} >= {"precision_recall.png", "wrong_topo.png"}


def test_on_a_cluster_a_worker_draws_the_plots_of_one_process(tmp_path, fixtures_dir):
    """The command line's client never imports Matplotlib; its PNG files are those of one process, byte for byte."""
    import subprocess
    import sys

    folder = fixtures_dir / "ptb_small"
    common = ["--gt", str(folder / "gt.json"), "--pred", str(folder / "pred.json"), "--drop-degenerate-rings",
              "--bootstrap", "0", "--sweeps", "--quiet"]
    script = ("import sys\nfrom polytopo.evaluator.cli.evaluate import main\n"
              "status = main(sys.argv[1:])\nprint('matplotlib' in sys.modules)\nsys.exit(status)\n")
    found = {}
    for name, workers in (("one", ["0", "--threads", "1"]), ("two", ["2"])):  # one thread: drawn in this process
        done = subprocess.run([sys.executable, "-c", script, *common, "--out", str(tmp_path / name),
                               "--workers", *workers], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        found[name] = done.stdout.split()[-1]
    assert found == {"one": "True", "two": "False"}
    pngs = sorted(path.name for path in (tmp_path / "one").glob("*.png"))
    assert pngs == ["min_hole_area_sweep.png", "precision_recall.png", "ring_threshold_sweep.png",
                    "simple_to_complex.png", "wrong_topo.png"]
    for name in pngs:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    _assert_same_outputs(tmp_path / "one", tmp_path / "two")


@pytest.mark.parametrize("worker_sees_the_folder", [True, False])
def test_workers_write_their_rows_and_the_geopackage_where_they_see_the_folder(tmp_path, client, inputs, fixtures_dir,
                                                                             monkeypatch, worker_sees_the_folder):
    """Workers that find the client's marker write their CSV rows and the GeoPackage in the output folder themselves
    (the client appends the rows and renames the file); workers that do not (another machine) send them. Same files
    either way, and nothing else left behind."""
    from polytopo.evaluator.outputs import record_parts

    renamed, appended = [], []
    real_replace, real_append = record_parts.os.replace, record_parts._append_file

    def noted(source, target):  # the worker's GeoPackage renamed into the writer's temporary name
        if Path(source).name.endswith("-@-layers.gpkg"):
            renamed.append(source)
        return real_replace(source, target)

    monkeypatch.setattr(record_parts.os, "replace", noted)
    monkeypatch.setattr(record_parts, "_append_file", lambda piece, handle: appended.append(piece)
                        or real_append(piece, handle))
    if not worker_sees_the_folder:  # the workers (other processes) look for the usual marker, this process makes another
        monkeypatch.setattr(record_parts, "_HERE", ".elsewhere")
    folder = fixtures_dir / "ptb_small"
    ordered = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)[:2]  # rows in input order
    evaluation = evaluate(*ordered, bootstrap_resamples=0, client=client, record_parts=parts_request(None, True))
    assert evaluation.records.in_order()
    client.run_on_scheduler(_note_write_tasks)
    STARTED.clear()
    write_report(evaluation, tmp_path / "two", plots=False)
    # rows in input order: each part's rows of every table come in one task
    assert [name for name, _, _ in STARTED].count("_table_texts") == len(evaluation.records.parts)
    write_report(evaluate(*ordered, bootstrap_resamples=0), tmp_path / "one", plots=False)
    _assert_same_outputs(tmp_path / "one", tmp_path / "two")
    assert bool(renamed) == worker_sees_the_folder
    assert (len(appended) > len(CSV_FILES)) == worker_sees_the_folder  # a piece per part with rows
    assert sorted(path.name for path in tmp_path.iterdir()) == ["one", "two"]
    assert sorted(path.name for path in (tmp_path / "two").iterdir()) == sorted(
        path.name for path in (tmp_path / "one").iterdir())
