"""Evaluation parameters and the named profiles that set them.

A profile is a named set of parameters and rules; :mod:`.profiles` registers each
profile's name, description, defaults and code (see ``docs/evaluator.md``).

All lengths are pixels of the evaluation raster and all areas px².
"""

import math
from dataclasses import dataclass, fields, replace

from ...core.errors import InvalidParameterError
from .profiles import DEFAULT_PROFILE, PROFILE_NAMES, profile_named

__all__ = ["EvaluationParams", "PROFILES", "IOU_MODES", "params_for", "DEFAULT_AP_THRESHOLDS"]

DEFAULT_AP_THRESHOLDS = tuple(round(0.50 + 0.05 * i, 2) for i in range(10))
PROFILES = PROFILE_NAMES
"""The registered profile names (:data:`.profiles.REGISTRY`), the default first."""
IOU_MODES = ("vector", "raster")


@dataclass(frozen=True)
class EvaluationParams:
    """Every parameter of an evaluation.

    Parameters
    ----------
    profile : str
        One of :data:`PROFILES`.
    iou_threshold : float
        β, minimum full-polygon IoU of an instance match (Definition 3).
    ap_iou_thresholds : tuple of float
        IoU thresholds averaged into AP.
    boundary_radius_px : float
        r, half width of the BIoU boundary band in pixels.
    ring_match_threshold : float
        γ, BIoU needed for an exterior or hole ring match.
    ring_match_inclusive : bool
        Accept ring matches at ``>= γ`` (True) or ``> γ`` (False).
    sample_spacing_px : float
        Boundary sampling step for MTA and HD95, pixels.
    mta_min_precision : float
        Minimum ``|P ∩ G| / |P|`` for MTA to be measured.
    mta_precision_inclusive : bool
        MTA is measured when precision ``>= mta_min_precision`` (True) or ``>`` (False,
        the FFL code and the paper).
    mta_max_stretch : float
        Maximum length ratio of a sampled segment and its projection in MTA.
    polis_vertex_sets : bool
        POLIS averages over vertex *sets* (a repeated vertex counts once, Definition 8)
        when True, over every listed vertex when False.
    corner_simplify_px : float
        Douglas–Peucker tolerance before corner extraction, pixels.
    corner_thresholds_px : tuple of float
        Distances at which corners count as matched, pixels.
    score_threshold : float
        Predictions scoring below this are dropped before evaluation.
    min_instance_area_px2 : float
        Ground truth with area >= A and predictions with area > A are kept (SpaceNet rule).
    min_hole_area_px2 : float
        A_min: holes with area below it are removed from both sides first.
    max_detections : int or None
        Per-image cap on predictions (highest scores kept) for AP; None for no cap.
    iou_mode : str
        ``"vector"`` (occupied-region areas) or ``"raster"`` (1-px masks as pycocotools
        draws them, :mod:`.raster_iou`): the IoU and areas behind AP/AR. Only the ``coco``
        (and ``p3-code``) profile has a raster mode; it is its default.
    check_validity : bool
        Apply Definition 15 and count invalid predictions as topology failures.
    bootstrap_resamples : int
        Image-level bootstrap resamples for confidence intervals (0 disables).
    bootstrap_seed : int
        Seed of the bootstrap generator.
    bootstrap_level : float
        Confidence level of the bootstrap intervals.
    """

    profile: str = DEFAULT_PROFILE
    iou_threshold: float = 0.5
    ap_iou_thresholds: tuple = DEFAULT_AP_THRESHOLDS
    boundary_radius_px: float = 1.0
    ring_match_threshold: float = 0.1
    ring_match_inclusive: bool = False
    sample_spacing_px: float = 2.0
    mta_min_precision: float = 0.5
    mta_precision_inclusive: bool = False
    mta_max_stretch: float = 2.0
    polis_vertex_sets: bool = True
    corner_simplify_px: float = 1.0
    corner_thresholds_px: tuple = (2.0, 5.0)
    score_threshold: float = 0.0
    min_instance_area_px2: float = 0.0
    min_hole_area_px2: float = 0.0
    max_detections: object = None
    iou_mode: str = "vector"
    check_validity: bool = True
    bootstrap_resamples: int = 500
    bootstrap_seed: int = 0
    bootstrap_level: float = 0.95

    def __post_init__(self):
        for item in fields(self):
            value = getattr(self, item.name)
            values = value if isinstance(value, tuple) else (value,)
            if any(isinstance(v, float) and not math.isfinite(v) for v in values):
                raise InvalidParameterError(
                    f"Expected {item.name} to be a finite number but got {value}; NaN or infinity would silently "
                    f"drop or keep everything (default: {item.default})")
        profile = profile_named(self.profile)
        for name in ("iou_threshold", "ring_match_threshold", "mta_min_precision", "bootstrap_level"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise InvalidParameterError(f"Expected {name} in [0, 1] but got {value}")
        for name in ("boundary_radius_px", "sample_spacing_px"):
            if not getattr(self, name) > 0:
                raise InvalidParameterError(f"Expected {name} > 0 pixels but got {getattr(self, name)}")
        for name in ("corner_simplify_px", "min_instance_area_px2", "min_hole_area_px2"):
            if getattr(self, name) < 0:
                raise InvalidParameterError(f"Expected {name} >= 0 but got {getattr(self, name)}")
        if self.mta_max_stretch <= 1:
            raise InvalidParameterError(f"Expected mta_max_stretch > 1 but got {self.mta_max_stretch}")
        if not self.ap_iou_thresholds or not all(0 < t <= 1 for t in self.ap_iou_thresholds):
            raise InvalidParameterError(
                f"Expected ap_iou_thresholds to be IoU values in (0, 1] but got {self.ap_iou_thresholds}")
        if self.max_detections is not None and int(self.max_detections) < 1:
            raise InvalidParameterError(f"Expected max_detections >= 1 or None but got {self.max_detections}")
        if self.iou_mode not in IOU_MODES:
            raise InvalidParameterError(f"Expected iou_mode to be one of {list(IOU_MODES)} but got {self.iou_mode!r}")
        if self.iou_mode not in profile.iou_modes:
            raise InvalidParameterError(
                f"Expected iou_mode 'vector' for profile {self.profile!r} but got 'raster'; raster IoU is a mode of "
                "the coco profile only (use --profile coco)")
        if self.bootstrap_resamples < 0:
            raise InvalidParameterError(f"Expected bootstrap_resamples >= 0 but got {self.bootstrap_resamples}")

    def as_dict(self):
        """Parameters as a JSON-ready dict."""
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}


def params_for(profile=DEFAULT_PROFILE, **overrides):
    """Parameters of a profile with explicit overrides applied.

    Examples
    --------
    >>> params_for("reference-code").ring_match_threshold
    0.5
    >>> params_for("paper", ring_match_threshold=0.3).ring_match_threshold
    0.3
    """
    defaults = profile_named(profile).defaults
    unknown = set(overrides) - {f.name for f in fields(EvaluationParams)}
    if unknown:
        raise InvalidParameterError(f"Expected parameters of EvaluationParams but got unknown {sorted(unknown)}")
    values = {**defaults, **{k: v for k, v in overrides.items() if v is not None}}
    return replace(EvaluationParams(profile=profile), **values)
