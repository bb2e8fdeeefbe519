"""How the dock words an evaluation: its numbers, and one prediction ring by ring.

:func:`format_value` writes the numbers of the summary table, the per-feature table and
the messages (three decimals, "–" for a missing or NaN value); :func:`ring_diagnosis`
explains a prediction of a fresh evaluation ring by ring for the diagnosis box (a run
read back from its GeoPackage has only the fields:
:func:`polytopo.plugin.gui.restored_run.attribute_diagnosis`).
"""

import math

from ..errors import RunFailedError

__all__ = ["format_value", "ring_diagnosis"]


def format_value(value, digits=3):
    """``value`` as the dock shows it: a float with ``digits`` decimals, "–" for None or NaN, else ``str``.

    Examples
    --------
    >>> format_value(0.81234), format_value(float("nan")), format_value(None), format_value(7)
    ('0.812', '–', '–', '7')
    """
    if value is None:
        return "–"
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.{digits}f}"
    return str(value)


def _outcome_index(outcome, record):
    """Position in ``outcome.pred`` of the instance a prediction record describes (records are in input order)."""
    key = (record["image_id"], record["pred_id"], record["part"])
    for position, instance in enumerate(outcome.pred):
        if (instance.image_id, instance.source_id, instance.part) == key:
            return position
    raise RunFailedError(f"Expected prediction {key} of the table among the evaluated instances but it is not there")


def _pair_of(outcome, position):
    matches = [k for k, p in enumerate(outcome.pairs.pred_index) if int(p) == position]
    return matches[0] if matches else None


def ring_diagnosis(evaluation, index):
    """Explain one prediction ring by ring: exterior BIoU and each hole matched, extra or missing.

    Parameters
    ----------
    evaluation : polytopo.evaluator.Evaluation
    index : int
        Position of the prediction in ``evaluation.records["predictions"]``.

    Returns
    -------
    str
        Several lines; BIoU values are unitless, γ is the profile's ring-match threshold.
    """
    record = evaluation.records["predictions"][index]
    outcome = evaluation.outcome
    gamma = outcome.params.ring_match_threshold
    lines = [f"Prediction {record['pred_id']}: {record['error_class']}"]
    if record["invalid_reason"]:
        lines.append(f"Invalid: {record['invalid_reason']}")
    position = _outcome_index(outcome, record)
    k = _pair_of(outcome, position)
    holes = outcome.pred_table.hole_range(position)
    if k is None:
        lines.append("Matched no reference polygon (IoU below the matching threshold).")
        lines += [f"Hole {h - holes.start + 1}: extra (its polygon is unmatched)" for h in holes]
        return "\n".join(lines)
    gt_index = int(outcome.pairs.gt_index[k])
    gt_holes = outcome.gt_table.hole_range(gt_index)
    lines.append(f"Matched reference {record['matched_ref_id']} with IoU {format_value(record['iou'])}.")
    verdict = "matched" if bool(outcome.exterior_matched[k]) else "not matched"
    lines.append(f"Exterior ring: BIoU {format_value(record['e_biou'])} ({verdict}, γ = {gamma:g}).")
    found = outcome.pairs.holes
    in_pair = [m for m, pair in enumerate(found.pair) if int(pair) == k]
    matched_pred = {int(found.pred_hole[m]): (int(found.gt_hole[m]), float(found.biou[m])) for m in in_pair}
    matched_gt = {gt for gt, _ in matched_pred.values()}
    for hole in holes:
        if hole in matched_pred:
            gt_hole, biou = matched_pred[hole]
            lines.append(f"Hole {hole - holes.start + 1}: matched reference hole "
                         f"{gt_hole - gt_holes.start + 1}, BIoU {biou:.3f}")
        else:
            lines.append(f"Hole {hole - holes.start + 1}: extra (no reference hole with BIoU above γ)")
    lines += [f"Reference hole {hole - gt_holes.start + 1}: missing (no predicted hole with BIoU above γ)"
              for hole in gt_holes if hole not in matched_gt]
    if not holes and not gt_holes:
        lines.append("No holes on either side.")
    return "\n".join(lines)
