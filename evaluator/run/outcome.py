"""What a profile hands on to records, analyses and reports."""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Outcome", "DetectionRanking"]


@dataclass(frozen=True)
class DetectionRanking:
    """Per-prediction detection outcome at one IoU threshold, for curves and the bootstrap.

    ``scores`` and ``tp`` are ``(N,)`` arrays over evaluated predictions (``tp`` 0/1),
    ``image`` the integer image code of each, ``gt_per_image`` the ground-truth count per
    image code.
    """

    iou_threshold: float
    scores: np.ndarray
    tp: np.ndarray
    image: np.ndarray
    gt_per_image: np.ndarray


@dataclass(frozen=True)
class Outcome:
    """Result of one profile run.

    Attributes
    ----------
    params : EvaluationParams
    gt, pred : list of Instance
        The instances as evaluated (after filters; repaired in ``reference-code``). In a
        cluster run whose workers made the per-feature records, for a profile whose
        dataset-wide phase reads no ring (``paper``), :class:`.instances.FieldRows`:
        every field but the rings, one list per field (each item read is an
        :class:`.instances.InstanceFields`); the rings stayed on the workers (the ring
        tables then hold the hole table alone).
    gt_regions, pred_regions : numpy.ndarray or None
        Valid occupied regions in pixels; None after a cluster run of a profile whose
        dataset-wide phase does not read them (:attr:`.profiles.Profile.client_regions`).
    gt_table, pred_table : RingTable
    pairs : PairMetrics
        Matched instance pairs at β and their metrics.
    exterior_matched, topo : numpy.ndarray
        Per pair: exterior ring matched (BIoU passes γ) and topology-exact (0/1).
    pred_reasons, gt_reasons : list of str
        Definition 15 failure reasons ("" when valid).
    image_codes : tuple of (numpy.ndarray, numpy.ndarray)
        Integer image code of each GT and prediction; ``image_ids[code]`` is the image id.
    image_ids : list
    metrics : dict
        Flat metrics under the paper's Table 3 names and the extras.
    ranking : DetectionRanking
        Detection outcome at β for PR curves and the bootstrap.
    details : dict
        Profile-specific extras (e.g. ``reference_metrics``).
    record_parts : RecordParts or None
        The per-feature records as the workers of a cluster run encoded them
        (:mod:`.record_parts`), when the run asked for them.
    """

    params: object
    gt: list
    pred: list
    gt_regions: np.ndarray
    pred_regions: np.ndarray
    gt_table: object
    pred_table: object
    pairs: object
    exterior_matched: np.ndarray
    topo: np.ndarray
    pred_reasons: list
    gt_reasons: list
    image_codes: tuple
    image_ids: list
    metrics: dict
    ranking: DetectionRanking
    details: dict = field(default_factory=dict)
    record_parts: object = None
