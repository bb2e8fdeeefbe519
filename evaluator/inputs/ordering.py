"""One canonical order of images, instances and holes, so that results never depend on input order.

Every profile except ``reference-code`` (which reproduces the public evaluator, input
order included) evaluates instance sets put in this order first:

* images by id: numeric ids ascending, then text ids in character order
  (:func:`image_sort_key`);
* ground truth by image, then by geometry; predictions by image, descending score, then
  by geometry;
* holes of each instance by geometry.

The *geometry key* of a ring is its vertex list after :func:`.filters.canonical_rings`
(fixed orientation, starting at the lowest vertex), compared lexicographically as numbers;
an instance's key is its exterior's key, then its sorted holes' keys, then its category,
source id and part (as text), so two instances only tie when they are the same record.
Rankings keep this order among equal scores (:func:`.matching.score_order`): the tie
is broken by geometry alone, never by how well a prediction matches. Per-feature records are put back
in input order afterwards (:func:`in_input_order`); a hole's ``hole_index`` is its
position in the sorted holes of its instance.
"""

from dataclasses import replace

import numpy as np

from ..tables.error_classes import RECORD_TABLES, error_layer
from .instances import Instance

__all__ = ["image_sort_key", "image_rank", "instance_sort_key", "canonical_order", "in_input_order",
           "input_positions"]


def image_sort_key(image_id):
    """Sort key of an image id: numbers first (ascending), then text.

    Examples
    --------
    >>> sorted(["b", 10, "a", 2], key=image_sort_key)
    [2, 10, 'a', 'b']
    """
    number = isinstance(image_id, (int, float, np.integer, np.floating)) and not isinstance(image_id, bool)
    return (0, image_id, "") if number else (1, 0, str(image_id))


def image_rank(ids, keys=None):
    """Position of each of ``ids`` in :func:`image_sort_key` order, as an int64 array.

    ``keys``: each id's :func:`image_sort_key`, where the caller has them already.
    """
    keys = [image_sort_key(image) for image in ids] if keys is None else keys
    rank = np.empty(len(ids), dtype=np.int64)
    rank[sorted(range(len(ids)), key=keys.__getitem__)] = np.arange(len(ids))
    return rank


def _ring_key(ring):
    return ring.tolist()


def _instance_key(instance):
    return (_ring_key(instance.exterior), [_ring_key(h) for h in instance.holes], str(instance.category_id),
            str(instance.source_id), instance.part)


def instance_sort_key(instance, by_score):
    """Sort key of an instance (holes already sorted) in the canonical order: image, score, geometry.

    ``by_score`` puts the higher score first within an image (predictions).
    """
    return image_sort_key(instance.image_id), -instance.score if by_score else 0.0, _instance_key(instance)


def canonical_order(instance_set, by_score):
    """The set with images, instances and holes in the canonical order.

    Parameters
    ----------
    instance_set : InstanceSet
        Rings already in canonical vertex order (:func:`.filters.canonical_rings`).
    by_score : bool
        Order instances of an image by descending score before geometry (predictions).

    Returns
    -------
    InstanceSet
        Same instances and images, reordered; holes of each instance sorted.

    Examples
    --------
    >>> from polytopo.evaluator.inputs.instances import InstanceSet
    >>> square = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])
    >>> items = (Instance("b", 0, square), Instance("a", 1, square + 1, score=0.5), Instance("a", 2, square))
    >>> ordered = canonical_order(InstanceSet(items, ("b", "a")), by_score=True)
    >>> [(i.image_id, i.source_id) for i in ordered.instances], ordered.image_ids
    ([('a', 2), ('a', 1), ('b', 0)], ('a', 'b'))
    """
    instances = [Instance(i.image_id, i.source_id, i.exterior, tuple(sorted(i.holes, key=_ring_key)), i.score,
                          i.category_id, i.part) if len(i.holes) > 1 else i for i in instance_set.instances]
    instances.sort(key=lambda i: instance_sort_key(i, by_score))
    return replace(instance_set.replaced(instances), image_ids=tuple(sorted(instance_set.image_ids,
                                                                             key=image_sort_key)))


def input_positions(instance_set, positions=None):
    """``{(image_id, source id, part): input position}`` of the first instance with each key.

    Parameters
    ----------
    instance_set : InstanceSet
    positions : sequence of int, optional
        The input position of each instance (when ``instance_set`` is a part of the input
        that holds every instance of its images, e.g. a cluster partition); default their
        index in ``instance_set``.
    """
    found = {}
    for index, i in enumerate(instance_set.instances):
        found.setdefault((i.image_id, i.source_id, i.part), index if positions is None else int(positions[index]))
    return found


def in_input_order(records, gt_set, pred_set):
    """Per-feature records (:func:`.records.build_records`) sorted back into input order.

    Each record is placed by the input position of its instance, found by
    ``(image_id, id, part)``; records of instances with the same key keep their order.

    Parameters
    ----------
    records : dict
        ``predictions``, ``references``, ``missed_holes``, ``hallucinated_holes``.
    gt_set, pred_set : InstanceSet
        The sets as given to the evaluation.

    Returns
    -------
    dict
        The same records, reordered (holes after their owner's position, then by index).
    """
    by_side = {"prediction": (input_positions(pred_set), "pred_id"), "reference": (input_positions(gt_set), "ref_id")}

    def ordered(rows, side):
        position, id_field = by_side[side]
        return sorted(rows, key=lambda r: (position.get((r["image_id"], r[id_field], r["part"]), -1),
                                           r.get("hole_index", 0)))

    return {**records, **{name: ordered(records[name], error_layer(name).side) for name in RECORD_TABLES}}
