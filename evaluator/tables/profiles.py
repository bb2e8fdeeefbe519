"""The registry of evaluation profiles: each profile's name, description, defaults and code.

A profile is a named set of parameters and rules (see ``docs/evaluator.md``). Everything
that offers or runs profiles reads :data:`REGISTRY`: the parameters
(:func:`.params.params_for`), the run in one process (:func:`run_profile`), the run on
a cluster (:mod:`.distributed`), the command lines, the Processing algorithms and the dock.
A new profile is one :class:`Profile` entry here and the module that computes it.

The registry imports the profile modules plainly; none of them imports the registry
(the modules that read it, :mod:`.distributed`, :mod:`.api` and the command lines, sit
above it).
"""

from dataclasses import dataclass
from types import MappingProxyType

from ..profiles import coco, p3, p3_code, paper, reference_code
from ...core.errors import InvalidParameterError
from .metric_table import SWEPT

__all__ = ["DEFAULT_PROFILE", "Profile", "REGISTRY", "PROFILE_NAMES", "PER_IMAGE_PHASES", "profile_named", "profiles_help", "run_profile",
           "sweep_point"]

PER_IMAGE_PHASES = ("paper", "reference-code")
"""The per-image phases a cluster runs on its partitions (:mod:`.distributed`): the
``paper`` matching (:func:`.paper.match_paper`) or the ``reference-code`` pooling
(:func:`.reference_code.match_reference_code`)."""


@dataclass(frozen=True)
class Profile:
    """One evaluation profile.

    Attributes
    ----------
    name : str
        What users type and choose (``--profile``, the Processing enum, the dock).
    description : str
        One line for help texts and tooltips.
    defaults : Mapping
        The :class:`.params.EvaluationParams` fields the profile sets differently from
        the shared defaults (lengths in pixels, areas in px²).
    run : callable
        ``run(gt_set, pred_set, params, progress)`` evaluates the unfiltered sets in this
        process and returns the :class:`.outcome.Outcome`.
    per_image : str
        The per-image phase of its partitions on a cluster, one of :data:`PER_IMAGE_PHASES`.
    finish : callable
        ``finish(match, gt_set, pred_set, parts, params, progress)``: the dataset-wide
        phase on the client, after the partitions' matches were merged into ``match``
        (``gt_set``, ``pred_set``: the filtered sets, None for ``reference-code``;
        ``parts``: each partition's :attr:`image_parts`, in partition order). Returns the
        Outcome of a run in one process.
    image_parts : callable or None
        ``image_parts(match, image_sizes)``: per-image values the profile needs beyond the
        match, computed on the workers (``p3-code``; ``image_sizes`` as
        :attr:`.instances.InstanceSet.image_sizes` of the partition's ground truth); None for none.
    iou_modes : tuple of str
        The ``iou_mode`` values it accepts (:data:`.params.IOU_MODES`; ``"raster"``: 1-px
        mask IoU behind AP/AR).
    bootstrap : bool
        It reports image-level bootstrap intervals (and a comparison's paired bootstrap).
    canonical_rings : bool
        Rings are brought to the canonical vertex order before evaluation
        (:func:`.filters.canonical_rings`); False evaluates them as given.
    canonical_order : bool
        It evaluates in the canonical order of :mod:`.ordering` and puts the records back
        into input order; False keeps the input order everywhere.
    metric_prefix : str or None
        The prefix of the metric-table rows this profile adds (``P3``: ``P3-IoU``, ...);
        the text report lists them after the headline metrics.
    client_regions : bool
        Its dataset-wide phase reads the occupied regions of the instances (``p3``): a
        cluster's workers send them back. For the other profiles they are left on the
        workers and a cluster run's outcome has None for them.
    client_rings : bool
        Its dataset-wide phase reads the instances' rings (``coco``'s masks, ``p3``'s
        per-tile metrics). When it does not (``paper``) and a cluster's workers also make
        the per-feature records, the rings stay on the workers: the outcome's instances are
        then their fields alone (:class:`.instances.FieldRows`, one list per field).
    image_detection : bool
        Its AP/AR are the ``paper`` greedy matching (:mod:`.detection`), which never
        crosses images: a cluster's workers match their images' predictions
        (:func:`.paper.image_detection`), keep the candidate pairs, and the client only
        ranks the predictions. False where the dataset-wide phase matches them itself
        (``coco``'s pycocotools rules).
    """

    name: str
    description: str
    defaults: MappingProxyType
    run: object
    per_image: str
    finish: object
    image_parts: object = None
    iou_modes: tuple = ("vector",)
    bootstrap: bool = True
    canonical_rings: bool = True
    canonical_order: bool = True
    metric_prefix: str | None = None
    client_regions: bool = False
    client_rings: bool = True
    image_detection: bool = False


def _on_prepared(evaluate):
    """A :attr:`Profile.run` that filters the sets (:func:`.paper.prepare`), then calls ``evaluate``."""

    def run(gt_set, pred_set, params, progress=None):
        canonical = profile_named(params.profile).canonical_rings
        gt_set, pred_set, _ = paper.prepare(gt_set, pred_set, params, canonical)
        return evaluate(gt_set, pred_set, params, progress)

    return run


def _run_reference_code(gt_set, pred_set, params, progress=None):
    return reference_code.evaluate_reference_code(gt_set, pred_set, params, progress)


def _finish_paper(match, gt_set, pred_set, parts, params, progress=None):
    return paper.summarize_paper(match, params)


def _finish_reference_code(match, gt_set, pred_set, parts, params, progress=None):
    return reference_code.summarize_reference_code(match, params)


def _finish_coco(match, gt_set, pred_set, parts, params, progress=None):
    detection = coco.coco_detection(gt_set, pred_set, params)
    return paper.summarize_paper(match, params, detection)


def _finish_p3(match, gt_set, pred_set, parts, params, progress=None):
    outcome = _finish_paper(match, gt_set, pred_set, parts, params, progress)
    return p3.add_p3_metrics(outcome, params, progress)


def _finish_p3_code(match, gt_set, pred_set, parts, params, progress=None):
    outcome = _finish_coco(match, gt_set, pred_set, parts, params, progress)
    if progress is not None:
        progress("P3 code metrics")
    merged = p3_code.merge_p3_code_parts(parts, match.image_ids)
    return p3_code.add_p3_code_metrics(outcome, merged, gt_set.image_ids)


def _p3_code_parts(match, image_sizes):
    return p3_code.p3_code_parts(match.gt, match.pred, match.gt_image, match.pred_image, match.image_ids, image_sizes)


def _profile(name, description, defaults, run, per_image, finish, **rules):
    return Profile(name, description, MappingProxyType(dict(defaults)), run, per_image, finish, **rules)


REGISTRY = MappingProxyType({profile.name: profile for profile in (
    _profile("paper", "the PolyTopoBench paper's definitions, the default", {},
             _on_prepared(paper.evaluate_paper), "paper", _finish_paper, client_rings=False, image_detection=True),
    _profile("reference-code", "the public PolyTopoBench evaluator's numbers",
             {"ring_match_threshold": 0.5, "ring_match_inclusive": True, "check_validity": False,
              "mta_precision_inclusive": True, "polis_vertex_sets": False},
             _run_reference_code, "reference-code", _finish_reference_code, bootstrap=False,
             canonical_order=False),
    _profile("coco", "pycocotools AP/AR: maxDets 100, area ranges, 1-px mask IoU",
             {"max_detections": 100, "iou_mode": "raster"},
             _on_prepared(coco.evaluate_coco), "paper", _finish_coco, iou_modes=("vector", "raster")),
    _profile("p3", "the P3 card's metrics, averaged per tile", {},
             _on_prepared(p3.evaluate_p3), "paper", _finish_p3, metric_prefix="P3",
             client_regions=True, image_detection=True),
    _profile("p3-code", "coco plus the metrics as the P3 authors' code computes them",
             {"max_detections": 100, "iou_mode": "raster"},
             _on_prepared(p3_code.evaluate_p3_code), "paper", _finish_p3_code, image_parts=_p3_code_parts,
             iou_modes=("vector", "raster"), canonical_rings=False, metric_prefix="P3code"),
)})
"""Every profile by name, in the order they are offered (the first is the default)."""

PROFILE_NAMES = tuple(REGISTRY)
"""The profile names, in registry order."""

DEFAULT_PROFILE = PROFILE_NAMES[0]
"""The profile of a run that names none: the first of the registry (``paper``)."""


def profile_named(name):
    """The registered :class:`Profile` called ``name``.

    Raises
    ------
    InvalidParameterError
        ``name`` is not registered; the message lists the registered names.

    Examples
    --------
    >>> profile_named("reference-code").defaults["ring_match_threshold"]
    0.5
    """
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise InvalidParameterError(
            f"Expected profile to be one of {list(PROFILE_NAMES)} but got {name!r}; choose one of these "
            "(e.g. --profile paper)") from None


def run_profile(gt_set, pred_set, params, progress=None):
    """Run the profile named by ``params.profile`` in this process and return its Outcome."""
    return profile_named(params.profile).run(gt_set, pred_set, params, progress)


def sweep_point(gt_set, pred_set, params, names=SWEPT):
    """The metrics ``names`` of one whole evaluation with ``params`` (one point of a sweep)."""
    metrics = run_profile(gt_set, pred_set, params).metrics
    return {name: metrics.get(name) for name in names}


def profiles_help(separator="\n"):
    """Every profile's name and description, ``name: description`` joined by ``separator``, for help texts.

    Examples
    --------
    >>> profiles_help().splitlines()[0]
    "paper: the PolyTopoBench paper's definitions, the default"
    """
    return separator.join(f"{profile.name}: {profile.description}" for profile in REGISTRY.values())
