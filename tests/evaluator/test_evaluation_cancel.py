"""A cancel request at a progress step stops an evaluation with EvaluationCanceled and leaves no output."""

import pytest

from polytopo.evaluator import evaluate, load_inputs, open_client, write_report
from polytopo.core.cancel import CancelToken
from polytopo.core.errors import EvaluationCanceled


@pytest.fixture(scope="module")
def inputs(fixtures_dir):
    folder = fixtures_dir / "ptb_small"
    gt, pred, _ = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)
    return gt, pred


def _cancel_at(phase, token, seen):
    """A progress callback that records each phase and requests a cancel when ``phase`` starts."""

    def progress(name):
        seen.append(name)
        if name.startswith(phase):
            token.request()

    return progress


def _evaluate_and_write(inputs, out_dir, **options):
    write_report(evaluate(*inputs, **options), out_dir, plots=False)


@pytest.mark.parametrize("phase", ["analyses", "bootstrap", "sweep point 2 of", "records"])
def test_a_cancel_request_at_a_phase_stops_the_evaluation_there(inputs, tmp_path, phase):
    token, seen = CancelToken(), []
    with pytest.raises(EvaluationCanceled, match="The evaluation was canceled; no output was written"):
        _evaluate_and_write(inputs, tmp_path / "out", progress=_cancel_at(phase, token, seen), cancel=token,
                            bootstrap_resamples=20, sweeps=phase.startswith("sweep"))
    assert seen[-1].startswith(phase)
    assert list(tmp_path.iterdir()) == []


def test_without_a_request_the_cancel_check_changes_nothing(inputs):
    plain = evaluate(*inputs, bootstrap_resamples=0).summary["metrics"]
    checked = evaluate(*inputs, bootstrap_resamples=0, cancel=CancelToken()).summary["metrics"]
    assert plain.keys() == checked.keys()
    assert all(plain[k] == checked[k] or plain[k] != plain[k] for k in plain)


def test_a_cancel_request_after_the_first_partition_stops_the_cluster_run(inputs, tmp_path):
    token, seen = CancelToken(), []
    with open_client(workers=1) as client:
        with pytest.raises(EvaluationCanceled):
            _evaluate_and_write(inputs, tmp_path / "out", progress=_cancel_at("partition 1 of", token, seen),
                                cancel=token, client=client, bootstrap_resamples=0)
    assert seen[-1].startswith("partition 1 of") and "merge" not in seen
    assert list(tmp_path.iterdir()) == []
