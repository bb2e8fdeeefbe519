"""Method comparison: several methods scored against one ground truth, as in the paper's Table 3.

:func:`compare_methods` evaluates each method exactly as a single evaluation does (each
method's numbers equal its own ``evaluate``), then runs a *paired* image-level bootstrap:
every resample draws the images once and scores every method on the same draw, so the
interval of the difference between a method and the best one on a metric measures
whether the gap could be resampling noise.

Methods are evaluated one at a time and only what the table and the paired bootstrap
need is kept of each (:class:`MethodScores`: its summary and per-image sums, a few
bytes per image and per prediction): :func:`compare_to_folder` writes each method's full
output as soon as it is evaluated, so memory holds one method's evaluation at a time
however many methods are compared. It writes the table (CSV, Markdown, LaTeX), the
paired bootstrap, the simple-to-complex and WrongTopo figures with one curve per method,
and every method's full evaluation output in its own folder.
"""

import math
import re
from dataclasses import dataclass

import numpy as np

from ..metrics.analysis import BOOTSTRAP_METRICS, per_image_statistics, resample_weights
from ...core.errors import InvalidParameterError
from ..tables.metric_table import TABLE3_COLUMNS, metric as metric_row
from .outcome import DetectionRanking
from ..tables.profiles import profile_named

__all__ = ["TABLE_COLUMNS", "LOWER_IS_BETTER", "Comparison", "MethodScores", "compare_methods", "compare_to_folder",
           "method_scores", "paired_bootstrap", "best_methods", "format_markdown", "format_latex", "table_rows",
           "check_method_name"]

TABLE_COLUMNS = TABLE3_COLUMNS
"""Columns of the paper's Table 3, in its order (:data:`.metric_table.TABLE3_COLUMNS`)."""

LOWER_IS_BETTER = frozenset(column for column in TABLE_COLUMNS if not metric_row(column).higher_is_better)
"""Table 3 columns where a smaller value is better (distances in px, angles in degrees)."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_UNDEFINED = "–"


@dataclass(frozen=True)
class MethodScores:
    """What a comparison keeps of one method's evaluation.

    Attributes
    ----------
    params : EvaluationParams
        The evaluation's parameters.
    summary : dict
        The evaluation's JSON-ready summary (:attr:`.api.Evaluation.summary`) without its
        ``pr_curve`` (two numbers per prediction, as Python floats: 19 MB for 300,000
        predictions, kept for every method). The method's folder has it in full.
    metrics : dict
        Its flat metrics (:attr:`.outcome.Outcome.metrics`).
    image_ids : list or None
        Image of each per-image code; None where the profile has no bootstrap.
    statistics : dict or None
        :func:`.analysis.per_image_statistics` by image code (None as above).
    ranking : DetectionRanking or None
        The AP50 detection ranking (None as above).
    """

    params: object
    summary: dict
    metrics: dict
    image_ids: object = None
    statistics: object = None
    ranking: object = None


def method_scores(evaluation):
    """The :class:`MethodScores` of an :class:`.api.Evaluation` (the paired-bootstrap parts where its profile bootstraps)."""
    outcome, params = evaluation.outcome, evaluation.params
    summary = {key: value for key, value in evaluation.summary.items() if key != "pr_curve"}
    if not profile_named(params.profile).bootstrap:
        return MethodScores(params, summary, outcome.metrics)
    return MethodScores(params, summary, outcome.metrics, list(outcome.image_ids), per_image_statistics(outcome),
                        outcome.ranking)


@dataclass(frozen=True)
class Comparison:
    """Scores of several methods on one ground truth.

    Attributes
    ----------
    methods : dict
        ``{method name: MethodScores}`` in the order given.
    paired : dict
        :func:`paired_bootstrap` of the methods (empty without resamples).
    """

    methods: dict
    paired: dict

    @property
    def summaries(self):
        """``{method name: summary}`` in the order given (each without its ``pr_curve``, see :class:`MethodScores`)."""
        return {name: scores.summary for name, scores in self.methods.items()}


def check_method_name(name):
    """Return ``name`` when it can name a method (and its output folder); raise otherwise.

    Examples
    --------
    >>> check_method_name("HiSup")
    'HiSup'
    """
    if not isinstance(name, str) or not _NAME.match(name) or name in ("table", "figures"):
        raise InvalidParameterError(
            f"Expected a method name of letters, digits, '.', '_', '+' or '-' (starting with a letter or digit, "
            f"not 'table' or 'figures') but got {name!r}; write --pred NAME=FILE, e.g. --pred HiSup=hisup.json")
    return name


def compare_methods(gt_set, pred_sets, params=None, *, client=None, progress=None, evaluated=None,
                    record_parts=None, evaluate_method=None, **overrides):
    """Evaluate every method against ``gt_set``, one at a time, and run the paired bootstrap.

    Parameters
    ----------
    gt_set : InstanceSet or None
        None with ``evaluate_method``.
    pred_sets : dict or iterable
        ``{method name: InstanceSet}``, or ``(name, InstanceSet)`` pairs (at least one);
        an iterable is consumed one method at a time, so a generator that reads each
        method when asked keeps one method in memory. With ``evaluate_method``, what
        it takes in place of each InstanceSet.
    params : EvaluationParams, optional
        With ``overrides`` as in :func:`.api.evaluate`; the same for every method.
    client : distributed.Client, optional
        Run every evaluation and the paired resamples on this Dask cluster.
    progress : callable, optional
        ``progress(method name)`` as each method's evaluation starts.
    evaluated : callable, optional
        ``evaluated(method name, Evaluation)`` once each method is evaluated (e.g. to
        write its output); the evaluation is not kept afterwards.
    record_parts : PartsRequest, optional
        With ``client``: each method's per-feature records are encoded by the workers
        (as :func:`.api.evaluate` does with it).
    evaluate_method : callable, optional
        ``evaluate_method(predictions)`` returns the method's :class:`.api.Evaluation`
        (e.g. :func:`.api.evaluate_files` of a file path, where a cluster's workers read
        the files); ``gt_set``, ``params``, ``record_parts`` and ``overrides`` are then
        not used: the function carries them. By default :func:`.api.evaluate` of
        ``gt_set`` and each InstanceSet.

    Returns
    -------
    Comparison
    """
    from .api import evaluate

    methods = {}
    for name, pred_set in (pred_sets.items() if isinstance(pred_sets, dict) else pred_sets):
        check_method_name(name)
        if name in methods:
            raise InvalidParameterError(f"Expected each method name once but got {name!r} twice; give every "
                                        "method its own NAME")
        if progress is not None:
            progress(name)
        if evaluate_method is None:
            evaluation = evaluate(gt_set, pred_set, params, client=client, record_parts=record_parts, **overrides)
        else:
            evaluation = evaluate_method(pred_set)
        if evaluated is not None:
            evaluated(name, evaluation)
        methods[name] = method_scores(evaluation)
        del evaluation, pred_set  # the next method is read without this one held
        _release_freed_memory()
    if not methods:
        raise InvalidParameterError("Expected at least one method to compare but got none; pass --pred NAME=FILE")
    first = next(iter(methods.values())).params
    paired = {}
    if first.bootstrap_resamples and profile_named(first.profile).bootstrap:
        paired = paired_bootstrap(methods, first.bootstrap_resamples, first.bootstrap_seed, first.bootstrap_level,
                                  client=client)
    return Comparison(methods, paired)


def _release_freed_memory():
    """Collect the finished method's cycles and give the freed C heap back before the next method is read.

    Without it the heap pages the evaluation freed stay resident and the next method's
    JSON is parsed into new ones: on the 36x PolyTopoBench-scale set (3 methods, 2 workers)
    the client's peak while reading the third method was 1,402 MiB, with it 1,272 MiB.
    """
    import gc

    from ...core.heap import return_freed_heap

    gc.collect()
    return_freed_heap()


def _on_images(scores, code_of):
    """Per-image statistics and ranking of one method's :class:`MethodScores` on a shared image list."""
    position = np.array([code_of[image] for image in scores.image_ids], dtype=np.int64)
    stats = {}
    for key, values in scores.statistics.items():
        stats[key] = np.zeros(len(code_of))
        stats[key][position] = values
    ranking = scores.ranking
    gt_per_image = np.zeros(len(code_of), dtype=ranking.gt_per_image.dtype)
    gt_per_image[position] = ranking.gt_per_image
    shared = DetectionRanking(ranking.iou_threshold, ranking.scores, ranking.tp, position[ranking.image],
                              gt_per_image)
    return stats, shared


def best_methods(values):
    """The best method of each Table 3 column (None where no method has a value).

    Parameters
    ----------
    values : dict
        ``{method: {column: value}}``.

    Returns
    -------
    dict
        ``{column: [method, ...]}``: every method whose value equals the best (ties share).

    Examples
    --------
    >>> best_methods({"A": {"AP50": 0.5, "O-POLIS": 3.0}, "B": {"AP50": 0.7, "O-POLIS": float("nan")}})["AP50"]
    ['B']
    >>> best_methods({"A": {"O-POLIS": 3.0}, "B": {"O-POLIS": 2.0}})["O-POLIS"]
    ['B']
    """
    best = {}
    for column in TABLE_COLUMNS:
        present = {m: float(v[column]) for m, v in values.items() if _defined(v.get(column))}
        if not present:
            best[column] = []
            continue
        target = min(present.values()) if column in LOWER_IS_BETTER else max(present.values())
        best[column] = [m for m, v in present.items() if v == target]
    return best


def _defined(value):
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def paired_bootstrap(methods, resamples, seed=0, level=0.95, *, client=None):
    """Paired image-level bootstrap of every method against the best one, per bootstrap metric.

    The images of all methods (the ground-truth images and any image only some method
    predicted on) are resampled together; every resample scores every method on the
    same draw (:func:`.analysis.resample_weights`, one ``seed`` stream).

    Parameters
    ----------
    methods : dict
        ``{method: MethodScores}`` (:func:`method_scores`) of the same ground truth.
    resamples : int
    seed : int
    level : float
        Coverage of the intervals (0.95: the 2.5 and 97.5 percentiles).
    client : distributed.Client, optional
        Compute the resamples on this Dask cluster (same numbers).

    Returns
    -------
    dict
        ``{"resamples", "seed", "level", metric: {"best": method, "methods": {method:
        {"difference", "low", "high", "excludes_zero"}}}}`` for each metric of
        :data:`.analysis.BOOTSTRAP_METRICS` (all higher-is-better); ``difference`` is the
        method's value minus the best method's, ``low``/``high`` the interval of the
        resampled differences; the best method itself is not listed.
    """
    from .distributed import resample_chunk, resample_metrics_on

    code_of = {}
    for scores in methods.values():
        for image in scores.image_ids:
            code_of.setdefault(image, len(code_of))
    # one image: every resample is the evaluation itself, so no interval exists (NaN bounds)
    chunks = (list(resample_weights(len(code_of), resamples, seed, resample_chunk(client, resamples)))
              if len(code_of) >= 2 else [])
    samples = {}
    for name, scores in methods.items():
        stats, ranking = _on_images(scores, code_of)
        found = resample_metrics_on(client, stats, ranking, chunks)
        samples[name] = {m: np.array([v for chunk in found for v in chunk[m]], dtype=float)
                         for m in BOOTSTRAP_METRICS}
    tail = (1.0 - level) / 2.0 * 100.0
    result = {"resamples": int(resamples), "seed": int(seed), "level": float(level),
              "undefined": None if chunks else f"{len(code_of)} image(s): a paired bootstrap needs at least two"}
    for metric in BOOTSTRAP_METRICS:
        point = {name: scores.metrics.get(metric) for name, scores in methods.items()}
        ranked = [name for name in methods if _defined(point[name])]
        if not ranked:
            result[metric] = {"best": None, "methods": {}}
            continue
        best = max(ranked, key=lambda name: point[name])
        rows = {}
        for name in methods:
            if name == best:
                continue
            difference = samples[name][metric] - samples[best][metric]
            difference = difference[~np.isnan(difference)]
            low, high = (np.percentile(difference, [tail, 100.0 - tail]) if difference.size
                         else (float("nan"), float("nan")))
            rows[name] = {"difference": float(point[name] - point[best]) if _defined(point[name]) else float("nan"),
                          "low": float(low), "high": float(high),
                          "excludes_zero": bool(difference.size and (low > 0.0 or high < 0.0))}
        result[metric] = {"best": best, "methods": rows}
    return result


def table_rows(comparison):
    """One dict per method: ``method``, the Table 3 columns and the bootstrap/paired columns.

    Interval columns are ``"<metric> low"`` / ``"<metric> high"`` (each method's own 95 %
    bootstrap) and ``"<metric> diff"``, ``"<metric> diff low"``, ``"<metric> diff high"``,
    ``"<metric> differs"`` (paired against the best method; empty for the best itself).
    """
    rows = []
    for name, summary in comparison.summaries.items():
        row = {"method": name, **{c: summary["metrics"].get(c) for c in TABLE_COLUMNS}}
        boot = summary.get("bootstrap", {})
        for metric in BOOTSTRAP_METRICS:
            interval = boot.get(metric, {})
            row[f"{metric} low"], row[f"{metric} high"] = interval.get("low"), interval.get("high")
            paired = comparison.paired.get(metric, {}).get("methods", {}).get(name, {})
            row[f"{metric} diff"] = paired.get("difference")
            row[f"{metric} diff low"], row[f"{metric} diff high"] = paired.get("low"), paired.get("high")
            row[f"{metric} differs"] = paired.get("excludes_zero")
        rows.append(row)
    return rows


def _cell(value, column):
    if not _defined(value):
        return _UNDEFINED
    return f"{value:.2f}" if column in LOWER_IS_BETTER else f"{value:.3f}"


def format_markdown(comparison):
    """Table 3 as Markdown (best per column in bold, "–" where undefined), then the bootstrap table."""
    values = {name: summary["metrics"] for name, summary in comparison.summaries.items()}
    best = best_methods(values)
    lines = ["| Method | " + " | ".join(TABLE_COLUMNS) + " |", "|---|" + "---:|" * len(TABLE_COLUMNS)]
    for name, metrics in values.items():
        cells = [f"**{_cell(metrics.get(c), c)}**" if name in best[c] else _cell(metrics.get(c), c)
                 for c in TABLE_COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "AP50, BIoU, Hole-F1 and Topo-EM: higher is better; POLIS (px) and MTA (°): lower is better.", ""]
    lines += _markdown_intervals(comparison)
    return "\n".join(lines) + "\n"


def _markdown_intervals(comparison):
    paired = comparison.paired
    level = paired.get("level") or next(iter(comparison.summaries.values())).get("bootstrap", {}).get("level")
    if not level:
        return ["No bootstrap intervals (bootstrap off or the reference-code profile)."]
    lines = [f"{level:.0%} image-level bootstrap intervals; paired difference to the best method of each metric "
             f"({paired.get('resamples', 0)} paired resamples, seed {paired.get('seed', 0)}; * = interval excludes 0).",
             "", "| Method | " + " | ".join(f"{m} [interval] | Δ best [interval]" for m in BOOTSTRAP_METRICS) + " |",
             "|---|" + "---:|---:|" * len(BOOTSTRAP_METRICS)]
    for row in table_rows(comparison):
        cells = []
        for m in BOOTSTRAP_METRICS:
            cells.append(f"{_cell(row[m], m)} [{_cell(row[f'{m} low'], m)}, {_cell(row[f'{m} high'], m)}]")
            if paired.get(m, {}).get("best") == row["method"]:
                cells.append("best")
            elif row[f"{m} diff"] is None:
                cells.append(_UNDEFINED)
            else:
                star = "*" if row[f"{m} differs"] else ""
                cells.append(f"{_cell(row[f'{m} diff'], m)} [{_cell(row[f'{m} diff low'], m)}, "
                             f"{_cell(row[f'{m} diff high'], m)}]{star}")
        lines.append(f"| {row['method']} | " + " | ".join(cells) + " |")
    return lines


_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def _tex(text):
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in str(text))


def format_latex(comparison):
    """Table 3 as a LaTeX ``tabular`` (booktabs rules; best per column in bold; ``--`` where undefined)."""
    values = {name: summary["metrics"] for name, summary in comparison.summaries.items()}
    best = best_methods(values)
    header = " & ".join(["Method", *(_tex(c) for c in TABLE_COLUMNS)])
    lines = [r"\begin{tabular}{l" + "c" * len(TABLE_COLUMNS) + "}", r"\toprule", header + r" \\", r"\midrule"]
    for name, metrics in values.items():
        cells = []
        for c in TABLE_COLUMNS:
            text = _cell(metrics.get(c), c).replace(_UNDEFINED, "--")
            cells.append(rf"\textbf{{{text}}}" if name in best[c] else text)
        lines.append(" & ".join([_tex(name), *cells]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


def _write_csv(rows, path):
    import csv

    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if not _defined(v) else repr(v) if isinstance(v, float) else v)
                             for k, v in row.items()})


def compare_to_folder(gt_set, pred_sets, out_dir, params=None, *, client=None, progress=None, overwrite=False,
                      inputs=(), frame=None, plots=True, geopackage=True, evaluate_method=None, **overrides):
    """Compare the methods and write everything into ``out_dir``, each method's folder as soon as it is scored.

    Files: ``table.csv`` (full precision; empty cell where undefined), ``table.md``,
    ``table.tex``, ``paired_bootstrap.json``, ``simple_to_complex.png`` and
    ``wrong_topo.png`` (one curve per method, ``plots``), and ``NAME/`` with each method's
    full evaluation output (:func:`.report.write_report`; its GeoPackage with
    ``geopackage``, map coordinates with ``frame``). The folder is assembled under a
    temporary name and moved into place when complete (nothing is left on failure or
    interruption); ``overwrite`` and ``inputs`` as in :func:`.report.staged_folder`. Other
    arguments as for :func:`compare_methods` (an ``evaluate_method`` makes its own
    per-feature records for the workers, as :func:`.api.evaluate_files` does with
    :func:`.record_parts.parts_request`).

    Returns
    -------
    Comparison
    """
    from ..outputs.record_parts import parts_request
    from ..outputs.report import staged_folder, write_report

    with staged_folder(out_dir, overwrite=overwrite, inputs=inputs) as staging:
        def evaluated(name, evaluation):
            write_report(evaluation, staging / name, frame=frame, plots=plots, geopackage=geopackage)

        comparison = compare_methods(gt_set, pred_sets, params, client=client, progress=progress,
                                     evaluated=evaluated,
                                     record_parts=(parts_request(frame, geopackage)
                                                   if client is not None and evaluate_method is None else None),
                                     evaluate_method=evaluate_method, **overrides)
        _write_tables(comparison, staging, plots)
    return comparison


def _write_tables(comparison, folder, plots):
    from ..outputs.writers import write_summary_json

    _write_csv(table_rows(comparison), folder / "table.csv")
    (folder / "table.md").write_text(format_markdown(comparison), encoding="utf-8")
    (folder / "table.tex").write_text(format_latex(comparison), encoding="utf-8")
    write_summary_json(comparison.paired, folder / "paired_bootstrap.json")
    if plots:
        _figures(comparison, folder)


def _figures(comparison, folder):
    from ..outputs.plots import plot_simple_to_complex, plot_wrong_topo

    summaries = comparison.summaries
    plot_simple_to_complex({n: s["simple_to_complex"] for n, s in summaries.items()}, folder / "simple_to_complex.png")
    plot_wrong_topo(None, folder / "wrong_topo.png", methods={n: s["wrong_topo"] for n, s in summaries.items()})

