"""The profile registry: every registered profile runs, and everything that offers profiles offers these."""

import math

import pytest

from polytopo.evaluator import InvalidParameterError, evaluate, load_inputs, params_for
from polytopo.evaluator.run.api import run_profile
from polytopo.evaluator.cli.evaluate import build_parser
from polytopo.core.cluster import map_partitions
from polytopo.evaluator.run.distributed import merge_partitions, partition_images, partition_task
from polytopo.evaluator.tables.params import IOU_MODES, PROFILES, EvaluationParams
from polytopo.evaluator.tables.profiles import PER_IMAGE_PHASES, PROFILE_NAMES, REGISTRY, profile_named

FIXTURE_IMAGES = 4
"""Images of the ``ptb_small`` fixture used (enough for several partitions, cheap for p3)."""


@pytest.fixture(scope="module")
def inputs(fixtures_dir):
    folder = fixtures_dir / "ptb_small"
    gt, pred, _ = load_inputs(folder / "gt.json", folder / "pred.json", drop_degenerate=True)
    keep = set(sorted(gt.image_ids)[:FIXTURE_IMAGES])
    return tuple(type(s)(tuple(i for i in s.instances if i.image_id in keep),
                         tuple(i for i in s.image_ids if i in keep), s.skipped, s.source) for s in (gt, pred))


def _same(a, b):
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_registered_profile_runs_on_the_fixture(inputs, name):
    summary = evaluate(*inputs, profile=name, bootstrap_resamples=0).summary
    assert summary["profile"] == name
    assert summary["counts"]["gt_instances"] > 0 and summary["metrics"]
    for field, value in REGISTRY[name].defaults.items():
        expected = list(value) if isinstance(value, tuple) else value
        assert summary["parameters"][field] == expected


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_the_partitioned_path_of_every_profile_gives_the_numbers_of_one_process(inputs, name):
    params = params_for(name, bootstrap_resamples=0)
    whole = run_profile(*inputs, params).metrics
    parts = partition_images(*inputs, 3)
    results = map_partitions(None, partition_task(params), [(p.gt_set, p.pred_set, params) for p in parts])
    merged = merge_partitions(*inputs, params, parts, results).metrics
    assert merged.keys() == whole.keys()
    assert all(_same(merged[key], whole[key]) for key in whole), name


def test_every_profile_names_a_known_per_image_phase_known_parameters_and_iou_modes():
    fields = set(EvaluationParams.__dataclass_fields__)
    for profile in REGISTRY.values():
        assert profile.per_image in PER_IMAGE_PHASES
        assert set(profile.defaults) <= fields
        assert profile.description
        assert set(profile.iou_modes) <= set(IOU_MODES)
        assert params_for(profile.name).iou_mode in profile.iou_modes
    assert PROFILE_NAMES[0] == "paper" == EvaluationParams().profile


def test_the_cli_offers_exactly_the_registered_profiles():
    action = next(a for a in build_parser()._actions if "--profile" in a.option_strings)
    assert tuple(action.choices) == PROFILE_NAMES == PROFILES
    assert action.default == "paper"
    assert all(name in action.help for name in PROFILE_NAMES)


@pytest.mark.parametrize("make", [profile_named, params_for, lambda name: EvaluationParams(profile=name)],
                         ids=["profile_named", "params_for", "EvaluationParams"])
def test_an_unknown_profile_names_the_choices(make):
    with pytest.raises(InvalidParameterError) as caught:
        make("papr")
    message = str(caught.value)
    assert "'papr'" in message
    assert all(repr(name) in message for name in PROFILE_NAMES)


def test_the_cli_refuses_an_unknown_profile_naming_the_choices(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--gt", "gt.json", "--pred", "pred.json", "--profile", "papr"])
    err = capsys.readouterr().err
    assert "papr" in err and all(name in err for name in PROFILE_NAMES)
