"""Method comparison: Table 3 files, each method's own numbers, the paired bootstrap, bad names."""

import csv
import json
import re

import pytest

from polytopo.evaluator import evaluate, load_inputs
from polytopo.evaluator.cli.evaluate import main
from polytopo.evaluator.run.compare import TABLE_COLUMNS


@pytest.fixture(scope="module")
def methods(fixtures_dir, tmp_path_factory):
    """The fixture predictions, and the same predictions with every hole removed."""
    folder = fixtures_dir / "ptb_small"
    records = json.loads((folder / "pred.json").read_text())
    without_holes = tmp_path_factory.mktemp("methods") / "no_holes.json"
    without_holes.write_text(json.dumps([dict(r, segmentation=r["segmentation"][:1]) for r in records]))
    return folder / "gt.json", {"Full": folder / "pred.json", "NoHoles": without_holes}


@pytest.fixture(scope="module")
def written(methods, tmp_path_factory):
    gt, preds = methods
    out = tmp_path_factory.mktemp("compare") / "table3"
    status = main(["compare", "--gt", str(gt), *[f"--pred={n}={p}" for n, p in preds.items()], "--out", str(out),
                   "--drop-degenerate-rings", "--bootstrap", "60", "--no-gpkg", "--quiet"])
    assert status == 0
    return out


def test_writes_the_table_files_figures_and_one_folder_per_method(written):
    names = {p.name for p in written.iterdir()}
    assert {"table.csv", "table.md", "table.tex", "paired_bootstrap.json", "simple_to_complex.png",
            "wrong_topo.png", "Full", "NoHoles"} <= names
    assert (written / "Full" / "summary.json").is_file() and (written / "NoHoles" / "predictions.csv").is_file()
    assert not [p for p in written.parent.iterdir() if ".partial-" in p.name]


def test_each_method_equals_its_own_evaluation(written, methods):
    gt, preds = methods
    with open(written / "table.csv", newline="") as stream:
        rows = {row["method"]: row for row in csv.DictReader(stream)}
    for name, path in preds.items():
        alone = evaluate(*load_inputs(gt, path, drop_degenerate=True)[:2], bootstrap_resamples=60).summary
        for column in TABLE_COLUMNS:
            value = alone["metrics"][column]
            assert rows[name][column] == ("" if value != value else repr(value)), (name, column)
        assert rows[name]["AP50 low"] == repr(alone["bootstrap"]["AP50"]["low"])


def test_markdown_and_latex_bold_the_best_and_mark_undefined(written):
    md = (written / "table.md").read_text().splitlines()
    assert md[0] == "| Method | " + " | ".join(TABLE_COLUMNS) + " |"
    full, no_holes = (dict(zip(TABLE_COLUMNS, line.strip("| ").split(" | ")[1:])) for line in md[2:4])
    # Removing the holes leaves no hole match: hole scopes undefined, Hole-F1 0 and not best.
    assert no_holes["H-BIoU"] == "–" and no_holes["H-POLIS"] == "–" and no_holes["Hole-F1"] == "0.000"
    assert full["Hole-F1"].startswith("**") and full["H-BIoU"].startswith("**")
    # Identical exteriors: the exterior columns tie and both are bold.
    assert full["E-BIoU"] == no_holes["E-BIoU"] and full["E-BIoU"].startswith("**")
    tex = (written / "table.tex").read_text()
    assert tex.startswith(r"\begin{tabular}{l" + "c" * 12 + "}") and r"\textbf{" in tex
    assert re.search(r"NoHoles & .* & -- & ", tex)


def test_paired_bootstrap_against_the_best_method(written):
    paired = json.loads((written / "paired_bootstrap.json").read_text())
    assert paired["resamples"] == 60 and paired["level"] == 0.95
    hole = paired["Hole-F1"]
    assert hole["best"] == "Full" and set(hole["methods"]) == {"NoHoles"}
    gap = hole["methods"]["NoHoles"]
    assert gap["difference"] < 0 and gap["low"] <= gap["difference"] <= gap["high"] and gap["excludes_zero"]
    # The same exteriors give the same AP50 on every resample: a zero-width interval.
    ap = paired["AP50"]["methods"][next(iter(paired["AP50"]["methods"]))]
    assert ap["low"] == ap["high"] == 0.0 and not ap["excludes_zero"]


@pytest.mark.parametrize("names, message", [
    (["A", "A"], "Expected each method name once but got 'A' 2 times"),
    (["../up"], "Expected a method name of letters"),
    (["table"], "not 'table' or 'figures'"),
])
def test_bad_method_names_are_refused(methods, tmp_path, capsys, names, message):
    gt, preds = methods
    out = tmp_path / "out"
    status = main(["compare", "--gt", str(gt), *[f"--pred={n}={preds['Full']}" for n in names], "--out", str(out),
                   "--quiet"])
    assert status == 2 and message in capsys.readouterr().err and not out.exists()


def test_a_pred_without_a_name_is_a_usage_error(methods, capsys):
    gt, preds = methods
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "--gt", str(gt), "--pred", str(preds["Full"])])
    assert exit_info.value.code == 2 and "expected NAME=FILE" in capsys.readouterr().err


def test_methods_are_read_and_released_one_at_a_time(methods):
    """A generator of methods is consumed one method at a time; no evaluation is held once the next one is read."""
    import gc
    import weakref

    from polytopo.evaluator.run.compare import compare_methods

    gt, preds = methods
    gt_set = load_inputs(gt, preds["Full"], drop_degenerate=True)[0]
    events, alive = [], []

    def one_at_a_time():
        for name, path in preds.items():
            gc.collect()
            events.append(("read", name, sum(ref() is not None for ref in alive)))
            yield name, load_inputs(gt, path, drop_degenerate=True, reference=(gt_set, None))[1]

    full_summaries = {}

    def evaluated(name, evaluation):
        events.append(("evaluated", name))
        alive.append(weakref.ref(evaluation))
        full_summaries[name] = dict(evaluation.summary)

    comparison = compare_methods(gt_set, one_at_a_time(), bootstrap_resamples=20, evaluated=evaluated)
    assert events == [("read", "Full", 0), ("evaluated", "Full"), ("read", "NoHoles", 0), ("evaluated", "NoHoles")]
    assert list(comparison.methods) == ["Full", "NoHoles"] and comparison.paired["Hole-F1"]["best"] == "Full"
    assert comparison.summaries["Full"]["metrics"]["Hole-F1"] > comparison.summaries["NoHoles"]["metrics"]["Hole-F1"]
    # what is kept of each method: its summary but the per-prediction PR curve (in the method's folder)
    for name, kept in comparison.summaries.items():
        assert len(full_summaries[name]["pr_curve"]["precision"]) > 100 and "pr_curve" not in kept
        assert kept == {key: value for key, value in full_summaries[name].items() if key != "pr_curve"}


def test_a_missing_later_method_is_refused_before_any_evaluation(methods, tmp_path, capsys):
    gt, preds = methods
    out = tmp_path / "out"
    status = main(["compare", "--gt", str(gt), f"--pred=Full={preds['Full']}", f"--pred=Gone={tmp_path / 'gone.json'}",
                   "--out", str(out)])
    err = capsys.readouterr().err
    assert status != 0 and "gone.json: file not found" in err and "evaluating Full" not in err
    assert not out.exists()


def test_a_broken_later_method_leaves_no_output(methods, tmp_path, capsys):
    """The first method's folder is written before the second is read; a failure then leaves nothing behind."""
    gt, preds = methods
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    out = tmp_path / "out"
    status = main(["compare", "--gt", str(gt), f"--pred=Full={preds['Full']}", f"--pred=Broken={broken}",
                   "--out", str(out), "--drop-degenerate-rings", "--bootstrap", "0", "--no-plots"])
    err = capsys.readouterr().err
    assert status != 0 and "evaluating Full" in err and "broken.json: expected JSON" in err
    assert list(tmp_path.iterdir()) == [broken]


def test_the_ground_truth_is_checked_once_for_all_methods(methods, monkeypatch):
    """The reference validity check and the ring perimeters are computed once per ground truth, not per method;
    every method's summary still reports the counts."""
    from polytopo.evaluator.inputs import instances as instances_module
    from polytopo.evaluator.run.compare import compare_methods

    gt, preds = methods
    gt_set = load_inputs(gt, preds["Full"], drop_degenerate=True)[0]
    seen = {"polygons": [], "perimeters": []}
    polygons_of, ring_perimeters = instances_module.polygons_of, instances_module.ring_perimeters
    monkeypatch.setattr(instances_module, "polygons_of",
                        lambda instances: seen["polygons"].append(len(instances)) or polygons_of(instances))
    monkeypatch.setattr(instances_module, "ring_perimeters",
                        lambda rings: seen["perimeters"].append(len(rings)) or ring_perimeters(rings))
    pred_sets = [(name, load_inputs(gt, path, drop_degenerate=True, reference=(gt_set, None))[1])
                 for name, path in preds.items()]
    comparison = compare_methods(gt_set, pred_sets, bootstrap_resamples=0)
    gt_rings = sum(1 + instance.hole_count for instance in gt_set.instances)
    assert seen["polygons"] == [len(gt_set)]
    assert seen["perimeters"].count(gt_rings) == 1 and len(seen["perimeters"]) == 1 + len(preds)
    for name, path in preds.items():
        alone = evaluate(load_inputs(gt, path, drop_degenerate=True)[0], dict(pred_sets)[name], bootstrap_resamples=0)
        assert comparison.summaries[name]["counts"] == alone.summary["counts"]
