"""The frame step: map-unit features of one layer become an :class:`InstanceSet` in pixels.

Every reader of map layers (OGR files in :mod:`.io_vector`, QGIS layers in the plugin,
the vectorizer's polygons) ends here: geometry goes to the pixels of a
:class:`polytopo.core.vector_files.PixelFrame`, features are assigned to images
(:func:`assign_images`), features of other classes are left out, scores are
read (a NULL score takes the default score or is an error), and the instances are built
by :func:`.instances.instances_from_geometries`.
"""

import math

import numpy as np
import shapely

from ...core.errors import InputFormatError
from .instances import InstanceSet, instances_from_geometries

__all__ = ["assign_images", "instances_in_frame"]


def instances_in_frame(frame, geometries, *, source_ids, source, values=None, image_field=None, score_field=None,
                       default_score=None, scored=False, category_field=None, categories=None, skipped=None,
                       describe=str):
    """Instances in pixels of ``frame`` from features in map units.

    Parameters
    ----------
    frame : PixelFrame
        The evaluation grid (map units per pixel, origin, patch grid).
    geometries : sequence of shapely.Geometry
        One geometry per feature in the frame's CRS, map units; None for a feature
        without geometry (it is left out).
    source_ids : sequence
        Feature id of each geometry (``Instance.source_id``).
    source : str
        Name of the layer (``InstanceSet.source``).
    values : dict of str to sequence, optional
        Attribute values per field name, one per feature; must hold the fields named below.
    image_field : str, optional
        Field whose values are the images; without it, the frame's patch grid or image 0.
    score_field : str, optional
        Field holding the prediction confidence (``scored`` only).
    default_score : float, optional
        Score of a prediction with a NULL score, or of every prediction without a score
        field (1.0 when it is None too).
    scored : bool
        True for predictions; ground truth scores 1.0.
    category_field : str, optional
        Field holding each feature's class (``Instance.category_id``).
    categories : collection, optional
        Keep only features of these classes; the others count as ``"other_category"``.
    skipped : dict, optional
        Counts of features the reader already left out (copied, then extended).
    describe : callable
        ``describe(index)`` names feature ``index`` in error messages ("layer X feature 3").

    Returns
    -------
    InstanceSet

    Raises
    ------
    InputFormatError
        A NULL image id, a NULL score without ``default_score``, a non-finite score, or a
        geometry the evaluator cannot read (:func:`.instances.instances_from_geometries`).

    Examples
    --------
    >>> import shapely
    >>> from polytopo.core.vector_files import PixelFrame
    >>> frame = PixelFrame(None, origin_x=0.0, origin_y=4.0, pixel_size=0.5)
    >>> pred = instances_in_frame(frame, [shapely.box(0, 2, 2, 4), None], source_ids=[1, 2], source="p",
    ...                           values={"s": [0.8, None]}, score_field="s", scored=True)
    >>> pred.instances[0].exterior.tolist(), pred.instances[0].score, pred.image_ids
    ([[4.0, 4.0], [4.0, 0.0], [0.0, 0.0], [0.0, 4.0]], 0.8, (0,))
    """
    values = values or {}
    pixels = frame.to_pixels(geometries)
    image_of, image_ids = assign_images(
        frame, pixels, values[image_field] if image_field else None,
        describe=lambda index: f"{describe(index)} field {image_field!r}")
    count = len(pixels)
    skipped = dict(skipped or {})
    category_of = values[category_field] if category_field else [None] * count
    selected = np.array([geometry is not None for geometry in pixels], dtype=bool)
    if categories is not None:
        wanted_class = np.array([category in categories for category in category_of], dtype=bool)
        skipped["other_category"] = skipped.get("other_category", 0) + int((selected & ~wanted_class).sum())
        selected &= wanted_class
    scores = [_score(values, score_field, default_score, index, describe) if scored and selected[index] else 1.0
              for index in range(count)]
    kept = np.array(pixels, dtype=object)
    kept[~selected] = None
    instances = instances_from_geometries(
        kept, image_ids=image_of, source_ids=source_ids, scores=scores, category_ids=category_of,
        where=lambda index: f"{describe(index)} field 'geometry'")
    return InstanceSet(tuple(instances), image_ids, skipped, source)


def assign_images(frame, pixels, image_values=None, describe=str):
    """Image id of each feature and the image ids in order.

    Parameters
    ----------
    frame : PixelFrame
        Its ``patch_size_px`` (if any) defines a patch grid from the frame origin.
    pixels : numpy.ndarray of shapely geometry
        Features in pixels (None where a feature has no geometry).
    image_values : sequence, optional
        An image/tile attribute per feature: each distinct value is an image (NULL is an
        error). Without it, features go to the patch ``"r{row}_c{col}"`` holding their
        representative point, or all to image 0 without a patch grid.
    describe : callable
        ``describe(index)`` names feature ``index`` in the error message.

    Returns
    -------
    image_of : list
        Image id per feature (None for a feature without geometry on a patch grid).
    image_ids : tuple
        The ids in order of first appearance (field) or by row then column (patches).
    """
    if image_values is not None:
        for index, image_id in enumerate(image_values):
            if image_id is None:
                raise InputFormatError(f"{describe(index)}: expected an image id but got NULL; fill the field or "
                                       "remove the feature")
        return list(image_values), tuple(dict.fromkeys(image_values))
    if frame.patch_size_px is None:
        return [0] * len(pixels), (0,)
    image_of = [None] * len(pixels)
    present = np.flatnonzero(~shapely.is_missing(np.asarray(pixels, dtype=object)))
    if not len(present):
        return image_of, ()
    points = shapely.point_on_surface(np.asarray(pixels, dtype=object)[present])
    cols = np.floor(shapely.get_x(points) / frame.patch_size_px).astype(np.int64).tolist()
    rows = np.floor(shapely.get_y(points) / frame.patch_size_px).astype(np.int64).tolist()
    for index, row, col in zip(present.tolist(), rows, cols):
        image_of[index] = f"r{row}_c{col}"
    return image_of, tuple(f"r{row}_c{col}" for row, col in sorted(set(zip(rows, cols))))


def _score(values, score_field, default_score, index, describe):
    score = values[score_field][index] if score_field else None
    if score is None:
        if score_field and default_score is None:
            raise InputFormatError(
                f"{describe(index)} field {score_field!r}: expected a score but got NULL; fill the field or "
                "give a default score (--default-score S)"
            )
        return 1.0 if default_score is None else float(default_score)
    score = float(score)
    if not math.isfinite(score):
        raise InputFormatError(f"{describe(index)} field {score_field!r}: expected a finite score but got {score}")
    return score
