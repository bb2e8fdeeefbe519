"""Checks of loaded instances that run before the metrics: cost bounds and reference flags.

* :func:`check_sampling_cost` estimates how many boundary samples ``sample_spacing_px``
  asks for (MTA and HD95 sample every ring) and refuses, with the estimate, a spacing
  that would allocate more than :data:`MAX_SAMPLES_PER_RING` points for one ring.
* :func:`reference_flags` counts invalid reference polygons and reference ids that
  appear more than once, and warns about both: the metrics still run, but the user
  learns that their numbers rest on such input.
* :func:`check_categories` refuses a category selection that keeps no reference (every
  metric would be undefined) and warns when it keeps no prediction.
* :func:`warn_questionable_run` warns about settings that make plausible-looking but
  empty numbers: a score threshold that drops most predictions (logit scores), and
  coordinates the ``coco`` profile's raster IoU cannot see (left of or above pixel 0).
* :func:`warn_no_overlap` warns, when no prediction overlaps any reference, whether
  the two sets lie apart altogether (a CRS or pixel-size mistake).
"""

import warnings
from collections import Counter

import numpy as np

from ...core.errors import InputFormatError, InvalidParameterError

__all__ = ["MAX_SAMPLES_PER_RING", "DisjointInputsWarning", "check_categories", "check_sampling_cost", "reference_flags", "warn_no_overlap",
           "warn_questionable_run"]

MAX_SAMPLES_PER_RING = 10_000_000
"""Boundary samples one ring may need (two float64 coordinates each: 160 MB)."""
_BYTES_PER_SAMPLE = 16


class DisjointInputsWarning(UserWarning):
    """The predictions and the references do not meet anywhere (:func:`warn_no_overlap`)."""


def _longest_perimeter(sets):
    """The longest ring perimeter (px) of the instance ``sets`` (:attr:`.instances.InstanceSet.longest_ring`), or None."""
    found = [instance_set.longest_ring for instance_set in sets if instance_set.longest_ring is not None]
    return max(found) if found else None


def check_sampling_cost(gt_set, pred_set, params):
    """Refuse a ``sample_spacing_px`` that would make one ring need too many samples.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Instances in pixels.
    params : EvaluationParams
        Uses ``sample_spacing_px``.

    Raises
    ------
    InvalidParameterError
        The longest ring (perimeter in px) divided by the spacing exceeds
        :data:`MAX_SAMPLES_PER_RING`; the message gives the estimate in points and bytes
        and the smallest spacing that fits.

    Examples
    --------
    >>> from polytopo.evaluator import InstanceSet, Instance, params_for
    >>> square = InstanceSet((Instance(0, 0, np.array([[0.0, 0], [100, 0], [100, 100], [0, 100]])),), (0,))
    >>> check_sampling_cost(square, square, params_for("paper"))
    >>> check_sampling_cost(square, square, params_for("paper", sample_spacing_px=1e-7))
    Traceback (most recent call last):
    ...
    polytopo.core.errors.InvalidParameterError: Expected at most 10000000 boundary samples per ring ...
    """
    longest = _longest_perimeter((gt_set, pred_set))
    if longest is None:
        return
    samples = longest / params.sample_spacing_px
    if samples > MAX_SAMPLES_PER_RING:
        raise InvalidParameterError(
            f"Expected at most {MAX_SAMPLES_PER_RING} boundary samples per ring but sample_spacing_px "
            f"{params.sample_spacing_px:g} on the longest ring ({longest:.4g} px) needs {samples:.3g} points "
            f"({samples * _BYTES_PER_SAMPLE / 2**30:.3g} GiB); use --sample-spacing "
            f"{longest / MAX_SAMPLES_PER_RING:.3g} px or more (default 2)")


def reference_flags(gt_set):
    """Count invalid reference polygons and repeated reference ids, warning about each.

    Parameters
    ----------
    gt_set : InstanceSet
        The reference instances.

    Returns
    -------
    dict
        ``gt_invalid`` (polygons GEOS finds invalid) and ``gt_duplicate_ids`` (instances
        sharing a ``(source_id, part)`` with an earlier one).

    Warns
    -----
    UserWarning
        When either count is not zero, naming the first ones.

    Examples
    --------
    >>> from polytopo.evaluator import InstanceSet, Instance
    >>> bowtie = np.array([[0.0, 0], [4, 4], [4, 0], [0, 4]])
    >>> square = np.array([[0.0, 0], [4, 0], [4, 4], [0, 4]])
    >>> with warnings.catch_warnings(record=True):
    ...     warnings.simplefilter("always")
    ...     reference_flags(InstanceSet((Instance(0, 7, bowtie), Instance(0, 7, square)), (0,)))
    {'gt_invalid': 1, 'gt_duplicate_ids': 1}
    """
    source_ids = gt_set.column("source_id")
    invalid = gt_set.invalid_positions
    keys = Counter(key for key in zip(source_ids, gt_set.column("part")) if key[0] is not None)
    repeated = [key for key, count in keys.items() if count > 1]
    duplicates = sum(keys[key] - 1 for key in repeated)
    if len(invalid):
        warnings.warn(
            f"{len(invalid)} reference polygon(s) are invalid (e.g. id {source_ids[invalid[0]]}: "
            f"{gt_set.first_invalid_reason}); the metrics use them as they are, so fix them "
            "(e.g. ogr2ogr -makevalid) for numbers you can trust", stacklevel=3)
    if duplicates:
        warnings.warn(
            f"{duplicates} reference instance(s) repeat an id (e.g. {[key[0] for key in repeated[:3]]}); per-feature "
            "records cannot tell them apart: give every reference its own id", stacklevel=3)
    return {"gt_invalid": int(len(invalid)), "gt_duplicate_ids": int(duplicates)}


def warn_questionable_run(gt_set, pred_set, params):
    """Warn before the metrics about settings that would silently empty them.

    Parameters
    ----------
    gt_set, pred_set : InstanceSet
        Instances in pixels.
    params : EvaluationParams
        Uses ``score_threshold``, ``profile`` and ``iou_mode``.

    Warns
    -----
    UserWarning
        More than half of the predictions score below ``score_threshold`` (the count,
        the score range and the option are named); or, under a raster IoU, reference
        images come without a size (masks cannot be clipped as pycocotools clips them), or
        instances reach left of column 0 or above row 0, where pycocotools draws nothing.

    Examples
    --------
    >>> from polytopo.evaluator import InstanceSet, Instance, params_for
    >>> square = np.array([[0.0, 0], [4, 0], [4, 4], [0, 4]])
    >>> logits = InstanceSet((Instance(0, 0, square, score=-2.0), Instance(0, 1, square, score=0.5)), (0,))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_questionable_run(logits, logits, params_for("paper", score_threshold=0.0))
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    1 of 2 predictions (50 %) score below the score threshold 0 ...
    """
    scores = np.array(pred_set.column("score"), dtype=np.float64)
    dropped = int(np.count_nonzero(scores < params.score_threshold))
    if scores.size and dropped * 2 >= scores.size:
        warnings.warn(
            f"{dropped} of {scores.size} predictions ({100.0 * dropped / scores.size:.0f} %) score below the score "
            f"threshold {params.score_threshold:g} and are dropped before the metrics (scores range "
            f"{scores.min():.4g} .. {scores.max():.4g}); if the scores are logits, convert them to probabilities "
            "or pass a lower --score-threshold (Python: score_threshold)", stacklevel=3)
    if getattr(params, "iou_mode", "vector") == "raster":
        unsized = [image for image, size in gt_set.image_sizes.items() if size is None]
        if unsized:
            warnings.warn(
                f"{len(unsized)} of {len(gt_set.image_sizes)} images of the reference give no width and height "
                f"(e.g. image {unsized[0]!r}); the {params.profile} profile's raster IoU then cannot clip masks at "
                "the images' right and bottom edges as pycocotools does, so its numbers equal pycocotools' only "
                "where every polygon lies inside its image. Add 'width' and 'height' to images[]", stacklevel=3)
        reaching = [instance for s in (gt_set, pred_set) for instance in s.instances
                    if float(instance.exterior.min()) < 0.0]
        if reaching:
            warnings.warn(
                f"{len(reaching)} instance(s) reach left of pixel column 0 or above row 0 (e.g. image "
                f"{reaching[0].image_id!r}); the {params.profile} profile's raster IoU draws masks as pycocotools "
                "does, inside the image only, so those parts count as nothing (an instance entirely outside has IoU "
                "0). Shift the coordinates into the image, or pass --iou vector", stacklevel=3)


def warn_no_overlap(gt_set, pred_set):
    """Warn when the predictions and the references lie apart altogether.

    Called when no prediction overlapped any reference: if even the bounding boxes of
    the two sets (over all images) do not meet, the inputs are almost surely in
    different coordinate systems, units or image ids, not a poor model.

    Examples
    --------
    >>> from polytopo.evaluator import InstanceSet, Instance
    >>> near = InstanceSet((Instance(0, 0, np.array([[0.0, 0], [4, 0], [4, 4], [0, 4]])),), (0,))
    >>> far = InstanceSet((Instance(0, 0, np.array([[1e6, 0], [1e6 + 4, 0], [1e6 + 4, 4], [1e6, 4]])),), (0,))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_no_overlap(near, far)
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    The predictions and the references do not overlap: ...
    """
    if not gt_set.instances or not pred_set.instances:
        return
    gt_box, pred_box = gt_set.bounds, pred_set.bounds
    apart = (gt_box[2] < pred_box[0] or pred_box[2] < gt_box[0] or gt_box[3] < pred_box[1]
             or pred_box[3] < gt_box[1])
    shared = set(gt_set.column("image_id")) & set(pred_set.column("image_id"))
    if apart or not shared:
        where = (f"prediction bounds {_box_text(pred_box)} px against reference bounds {_box_text(gt_box)} px"
                 if shared else "no image id has both predictions and references")
        warnings.warn(
            f"The predictions and the references do not overlap: {where}. The metrics are 0 because the inputs "
            "do not meet, not because of the polygons: check the layers' CRS, the pixel size and the image ids",
            DisjointInputsWarning, stacklevel=3)


def _box_text(box):
    return f"x {box[0]:.6g}..{box[2]:.6g}, y {box[1]:.6g}..{box[3]:.6g}"


def check_categories(gt_set, pred_set, categories):
    """Refuse ``categories`` that keep no reference instance; warn when they keep no prediction.

    Raises
    ------
    InputFormatError
        ``categories`` is given, the reference had instances and none is of these categories.

    Warns
    -----
    UserWarning
        The predictions had instances and none is of these categories.
    """
    if categories is None:
        return
    chosen = sorted(categories, key=str)
    other = gt_set.skipped.get("other_category", 0)
    if not gt_set.instances and other:
        raise InputFormatError(
            f"Expected --categories {chosen} to select reference instances but none of the {other} reference "
            "instance(s) has one of these categories, so every metric would be undefined; pass the category ids "
            "the reference uses (its category_id values, or the values of --category-field)")
    other = pred_set.skipped.get("other_category", 0)
    if not pred_set.instances and other:
        warnings.warn(
            f"--categories {chosen} selects none of the {other} prediction(s): every reference counts as missed; "
            "check the predictions' category ids", stacklevel=3)
