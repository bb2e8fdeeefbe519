"""The metric table agrees with what the evaluator really produces.

Each profile runs on a small hand-made scene (two images, holes matched, missed and
hallucinated, an unmatched prediction and a missed reference), and its summary,
report, comparison table, bootstrap, sweeps and written records are checked against
:mod:`polytopo.evaluator.tables.metric_table`: a metric added, renamed or dropped on one side
only fails here.
"""

import csv
import math

import numpy as np
import pytest

from polytopo.evaluator.run.api import evaluate
from polytopo.evaluator.run.compare import compare_methods, format_markdown
from polytopo.core.errors import InvalidParameterError
from polytopo.evaluator.inputs.instances import Instance, InstanceSet
from polytopo.evaluator.tables.metric_table import (FEATURE_FIELDS, HEADLINE, KEY_METRICS, METRICS, OUTPUT_NAMES, SWEPT,
                                             TABLE3_COLUMNS, Metric, metric)
from polytopo.evaluator.tables.params import PROFILES
from polytopo.evaluator.outputs.records import FIELD_KINDS
from polytopo.evaluator.outputs.report import format_table, write_report

_BOUNDED = {"ratio 0..1": (0.0, 1.0), "ratio >= 0": (0.0, math.inf), "px": (0.0, math.inf),
            "degrees": (0.0, 180.0), "count": (0.0, math.inf)}


def _instance_set(boxes, scores):
    """InstanceSet of ``(image, (x, y, size), [hole boxes])`` squares, y down, in pixels."""
    def ring(x, y, size):
        return np.array([[x, y], [x + size, y], [x + size, y + size], [x, y + size]], dtype=float)

    instances = tuple(Instance(image, index, ring(*box), tuple(ring(*hole) for hole in holes), score)
                      for index, ((image, box, holes), score) in enumerate(zip(boxes, scores)))
    return InstanceSet(instances, (0, 1), {}, "test")


@pytest.fixture(scope="module")
def scene():
    """Ground truth and predictions of two images: holes matched, missed and hallucinated, unmatched instances."""
    gt = _instance_set([(0, (4, 4, 24), [(10, 10, 6), (18, 18, 4)]), (0, (36, 4, 20), []),
                        (1, (4, 36, 20), [(10, 42, 6)]), (1, (36, 36, 12), [])], [1.0] * 4)
    pred = _instance_set([(0, (4.5, 4, 24), [(10, 10.5, 6)]), (0, (36, 4.5, 20), [(42, 10, 5)]),
                          (1, (4, 36.5, 20), [(10.5, 42, 6)]), (1, (50, 50, 8), [])], [0.9, 0.8, 0.7, 0.6])
    return gt, pred


@pytest.fixture(scope="module")
def evaluations(scene):
    """``{profile: Evaluation}`` of the scene for every profile."""
    gt, pred = scene
    return {profile: evaluate(gt, pred, profile=profile, bootstrap_resamples=20) for profile in PROFILES}


@pytest.mark.parametrize("profile", PROFILES)
def test_every_summary_metric_has_a_row_whose_unit_fits_its_value(evaluations, profile):
    """Each key of ``summary["metrics"]`` resolves to a row; its value lies in the row's unit range."""
    for name, value in evaluations[profile].summary["metrics"].items():
        row = metric(name)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        low, high = _BOUNDED[row.unit]
        assert low <= value <= high, (name, value, row.unit)
        if row.unit == "count" and row.scope == "dataset":
            assert float(value).is_integer(), (name, value)


def test_every_row_is_reported_by_some_profile(evaluations):
    """No row outlives its metric: each names a summary metric of some profile, or a per-feature field only."""
    reported = {metric(name) for e in evaluations.values() for name in e.summary["metrics"]}
    stale = [row.name for row in METRICS if row not in reported and row.field is None]
    assert not stale
    assert {row.name for row in METRICS if row not in reported} == {"IoU"}


def test_rows_are_unique_and_directions_follow_units():
    """One row per name; distances and angles are lower-is-better, bounded ratios higher-is-better."""
    assert len({row.name for row in METRICS}) == len(METRICS)
    fields = [row.field for row in METRICS if row.field]
    assert len(set(fields)) == len(fields) == len(FEATURE_FIELDS)
    for row in METRICS:
        if row.unit in ("px", "degrees"):
            assert row.higher_is_better is False, row.name
        if row.unit == "ratio 0..1":
            assert row.higher_is_better is True, row.name


def test_headline_lists_keep_table_order():
    """Table 3 columns and the key metrics are headline metrics, listed in the headline order."""
    assert set(TABLE3_COLUMNS) <= set(HEADLINE) and set(KEY_METRICS) <= set(TABLE3_COLUMNS)
    assert [name for name in HEADLINE if name in TABLE3_COLUMNS] == list(TABLE3_COLUMNS)
    assert [name for name in TABLE3_COLUMNS if name in KEY_METRICS] == list(KEY_METRICS)


def test_report_lists_the_headline_metrics_with_their_units(evaluations):
    """The text report has one line per headline metric, in table order, with the row's unit suffix."""
    lines = format_table(evaluations["paper"].summary).splitlines()[3:3 + len(HEADLINE)]
    assert [line.split()[0] for line in lines] == list(HEADLINE)
    for line, name in zip(lines, HEADLINE):
        suffix = metric(name).suffix.strip()
        assert (line.split()[2] == suffix) if suffix else (len(line.split()) == 2 or line.split()[2].startswith("["))


def test_comparison_columns_are_the_table3_rows(scene):
    """The Markdown comparison's columns are the Table 3 rows; lower-is-better columns print 2 decimals."""
    gt, pred = scene
    comparison = compare_methods(gt, {"A": pred}, profile="paper", bootstrap_resamples=0)
    header, _, row = format_markdown(comparison).splitlines()[:3]
    assert header.strip("| ").split(" | ")[1:] == [row.name for row in METRICS if row.table3]
    for name, cell in zip(TABLE3_COLUMNS, row.strip("| ").split(" | ")[1:]):
        decimals = len(cell.strip("*").split(".")[1]) if "." in cell else None
        assert decimals in (None, 2 if metric(name).higher_is_better is False else 3), (name, cell)


def test_bootstrap_and_sweeps_report_the_table_metrics(scene, evaluations):
    """Bootstrap intervals cover the key metrics; every sweep row holds the swept metrics in sweep order."""
    boot = evaluations["paper"].summary["bootstrap"]
    assert [name for name in boot if name in {row.name for row in METRICS}] == list(KEY_METRICS)
    gt, pred = scene
    summary = evaluate(gt, pred, profile="paper", sweeps=True, bootstrap_resamples=0).summary
    for key in ("min_hole_area_sweep", "ring_threshold_sweep"):
        assert all(list(point)[1:] == list(SWEPT) for point in summary[key]), key


def test_output_names_are_unchanged():
    """The Processing number outputs keep their names."""
    assert OUTPUT_NAMES == {"AP50": "AP50", "E_BIOU": "E-BIoU", "HOLE_F1": "Hole-F1", "TOPO_EM": "Topo-EM"}


@pytest.mark.parametrize("profile", ["paper", "reference-code"])
def test_feature_fields_are_written_with_their_kind(evaluations, profile, tmp_path):
    """Every per-feature field is a column of predictions.csv, holds values of the row's kind, and is declared."""
    evaluation = evaluations[profile]
    write_report(evaluation, tmp_path / "out", plots=False, geopackage=False)
    with open(tmp_path / "out" / "predictions.csv", encoding="utf-8", newline="") as handle:
        columns = next(csv.reader(handle))
    kinds = {"float": float, "int": int}
    for field, row in FEATURE_FIELDS.items():
        assert field in columns and FIELD_KINDS[field] == row.field_kind, field
        values = [record[field] for record in evaluation.records["predictions"] if record[field] is not None]
        assert values and all(type(value) is kinds[row.field_kind] for value in values), (field, values)


def test_pair_means_equal_the_mean_of_their_feature_field(evaluations):
    """A metric averaged over instance pairs is the mean of its field over the matched predictions."""
    records = evaluations["paper"].records["predictions"]
    matched = [r for r in records if r["matched_ref_id"] is not None]
    metrics = evaluations["paper"].summary["metrics"]
    for row in METRICS:
        if row.field and row.scope == "instance pairs" and row.name in metrics:
            values = np.array([np.nan if r[row.field] is None else r[row.field] for r in matched], dtype=float)
            assert metrics[row.name] == pytest.approx(np.nanmean(values)), row.name
    k = len(records) + len(evaluations["paper"].records["references"]) - len(matched)
    assert metrics["Topo-EM"] == pytest.approx(sum(r["topo_em"] for r in records) / k)


def test_unknown_names_and_bad_rows_are_refused():
    """A name outside the table, and a row with an unknown unit, raise with the fix in the message."""
    with pytest.raises(InvalidParameterError, match="add a row to evaluator/tables/metric_table.py"):
        metric("Hole-F2")
    with pytest.raises(InvalidParameterError, match="Expected the unit of metric 'X'"):
        Metric("X", "dataset", "metres", True, "x")
