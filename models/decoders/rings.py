"""``rings`` family: closed rings with scores → polygons by containment (Pix2Poly, PolyWorld, RoIPoly, HoliTracer).

The ``vertex-graph`` family (:class:`VertexGraphDecoder`) is the same after
its first step: its outputs are a vertex set and a successor score matrix
(PolyWorld's and Pix2Poly's permutation heads), turned into rings by optimal
assignment (:func:`rings_from_successors`).


Outputs: ``rings`` (batch, n, vertices, 2) as (x, y) in tile pixels, padded
with NaN after each ring's last vertex; ``scores`` (batch, n); optional
``labels`` (batch, n) and ``vertex_valid`` (batch, n, vertices), true (or
non-zero) for the vertices that belong to the ring, for exports that pad
with a validity mask instead of NaN. Rings below ``det_conf`` are dropped. Polygons are
assembled by containment as the PolyTopoBench paper does (Sec. 3.4): a ring
inside no other ring is an exterior, a ring directly inside an exterior is a
hole of it, a ring inside a hole is the exterior of a new polygon, and so on
(parity of the nesting depth). Holes that overlap are merged; a ring that
crosses itself is repaired to its largest valid part (counted in
:attr:`RingsDecoder.repaired`). The polygon takes its exterior's score and
label. Polygons are clipped to the tile's valid pixels (nodata never yields
polygons). Duplicates across tiles are removed as for instances.
"""

import numpy as np
import shapely
from scipy.optimize import linear_sum_assignment

from ..errors import InferenceError
from ..polygons.cleanup import drop_small_holes, largest_polygon
from ..polygons.polygonize import polygonize_mask
from .base import Decoder, PolygonRecord
from .object_stitching import ObjectStitcher, core_owner, with_batch_axis

__all__ = ["RingsDecoder", "VertexGraphDecoder", "assemble_rings", "pack_rings", "ring_polygon", "rings_from_successors"]


def ring_polygon(vertices):
    """Polygon bounded by one ring of (x, y) vertices; NaN rows are ignored.

    Returns
    -------
    polygon : shapely.Polygon or None
        None when fewer than 3 distinct vertices remain or nothing of area > 0.
    repaired : bool
        True when the ring crossed itself and its largest valid part was kept.
    """
    vertices = np.asarray(vertices, float)
    vertices = vertices[np.isfinite(vertices).all(axis=1)]
    if len(np.unique(vertices, axis=0)) < 3:
        return None, False
    polygon = shapely.Polygon(vertices)
    if polygon.is_valid and polygon.area > 0:
        return polygon, False
    fixed = largest_polygon(shapely.make_valid(polygon))
    if fixed is None:
        return None, True
    return shapely.Polygon(fixed.exterior), True


def assemble_rings(polygons, scores, labels):
    """Assemble ring polygons into polygons with holes by containment.

    Parameters
    ----------
    polygons : sequence of shapely.Polygon
        One hole-free polygon per ring.
    scores : sequence of float
    labels : sequence of int

    Returns
    -------
    list of (shapely.Polygon, float, int)
        Polygon with its holes, score and label of its exterior ring.

    Examples
    --------
    >>> outer, court, island = shapely.box(0, 0, 10, 10), shapely.box(2, 2, 8, 8), shapely.box(4, 4, 6, 6)
    >>> [(round(p.area), len(p.interiors)) for p, s, l in assemble_rings([outer, court, island], [0.9, 0.8, 0.7], [0, 0, 0])]
    [(64, 1), (4, 0)]
    """
    polygons = np.asarray(polygons, object)
    count = len(polygons)
    if count == 0:
        return []
    areas = shapely.area(polygons)
    order = np.argsort(-areas, kind="stable")
    tree = shapely.STRtree(polygons)
    inner, outer = tree.query(polygons, predicate="within")
    containers = [[] for _ in range(count)]
    for i, j in zip(inner, outer):
        if i != j and areas[j] > areas[i]:
            containers[i].append(j)
    parent = np.full(count, -1)
    depth = np.zeros(count, int)
    for i in order:
        if containers[i]:
            parent[i] = min(containers[i], key=lambda j: areas[j])
            depth[i] = depth[parent[i]] + 1
    results = []
    for i in np.flatnonzero(depth % 2 == 0):
        holes = [polygons[h] for h in np.flatnonzero((parent == i) & (depth % 2 == 1))]
        shape = polygons[i] if not holes else shapely.difference(polygons[i], shapely.union_all(holes))
        for part in shapely.get_parts(shape):
            if shapely.get_type_id(part) == shapely.GeometryType.POLYGON and part.area > 0 and part.is_valid:
                results.append((part, float(scores[i]), int(labels[i])))
    return results


def _clip_to_valid(assembled, valid):
    area = shapely.union_all(polygonize_mask(valid).geometries)
    clipped = []
    for polygon, score, label in assembled:
        for part in shapely.get_parts(shapely.intersection(polygon, area)):
            if shapely.get_type_id(part) == shapely.GeometryType.POLYGON and part.area > 0 and part.is_valid:
                clipped.append((part, score, label))
    return clipped


class RingsDecoder(Decoder):
    """Per-tile rings → polygons by containment, deduplicated across tiles."""

    padded_roles = ("rings",)

    def __init__(self, context):
        super().__init__(context)
        self._stitch = ObjectStitcher(self.card.det_iou_threshold)
        self.repaired = 0

    def tile_rings(self, outputs, batch):
        """Rings (batch, n, vertices, 2), scores (batch, n) and labels (batch, n) of a batch's raw outputs."""
        rings = with_batch_axis(outputs["rings"], batch, 4)
        scores = with_batch_axis(outputs["scores"], batch, 2)
        labels = outputs.get("labels")
        labels = np.zeros(scores.shape, np.int64) if labels is None else with_batch_axis(labels, batch, 2)
        if rings.ndim != 4 or rings.shape[-1] != 2 or rings.shape[:2] != scores.shape:
            raise InferenceError(
                f"Expected rings (batch, n, vertices, 2) and scores (batch, n) but got {rings.shape} and {scores.shape}."
            )
        valid = outputs.get("vertex_valid")
        if valid is not None:
            valid = with_batch_axis(valid, batch, 3)
            if valid.shape != rings.shape[:3]:
                raise InferenceError(f"Expected vertex_valid of shape {rings.shape[:3]} (one flag per vertex) but got {valid.shape}.")
            rings = np.where(valid[..., None].astype(bool), rings, np.nan)
        return rings, scores, labels

    def decode_batch(self, tiles, outputs, valid):
        tile_px = tiles[0].size_px
        rings, scores, labels = self.tile_rings(outputs, len(tiles))
        released = self._stitch.release_before(tiles[0])
        candidates = []
        for b, tile in enumerate(tiles):
            polygons, kept_scores, kept_labels = [], [], []
            for k in np.flatnonzero(scores[b] >= self.card.det_confidence):
                polygon, repaired = ring_polygon(rings[b, k])
                self.repaired += int(repaired)
                if polygon is not None:
                    polygons.append(polygon)
                    kept_scores.append(scores[b, k])
                    kept_labels.append(labels[b, k])
            assembled = assemble_rings(polygons, kept_scores, kept_labels)
            if assembled and not valid[b].all():
                assembled = _clip_to_valid(assembled, valid[b])
            for polygon, score, label in assembled:
                polygon = drop_small_holes(polygon, self.card.min_hole_area_px2)
                x0, y0, x1, y1 = polygon.bounds
                owner_col = core_owner(np.array([tile.col0 + (x0 + x1) / 2.0]), self.context.tile_cols, tile_px)[0]
                owner_row = core_owner(np.array([tile.row0 + (y0 + y1) / 2.0]), self.context.tile_rows, tile_px)[0]
                if (owner_row, owner_col) != (tile.tile_row, tile.tile_col):
                    continue
                if polygon.area < self.card.min_area_px2:
                    continue
                polygon = shapely.transform(polygon, lambda xy, t=tile: xy + (float(t.col0), float(t.row0)))
                candidates.append(PolygonRecord(polygon, label, score))
        self._stitch.add(candidates)
        return released

    def finish(self):
        return self._stitch.release(np.inf)


def rings_from_successors(vertices, successor_scores, vertex_scores=None, min_vertex_score=0.0, padding_assigned=False):
    """Closed rings of a vertex graph: each vertex's successor by optimal assignment, rings are the cycles.

    The decoding step of PolyWorld and Pix2Poly: the network scores every
    ordered pair (i, j) for "j follows i on a ring"; the assignment that
    maximizes the total score (Hungarian, as their ``scores_to_permutations``)
    gives every vertex one successor, a vertex assigned to itself belongs to no
    ring, and the cycles of the permutation are the rings.

    Parameters
    ----------
    vertices : numpy.ndarray, shape (n, 2)
        (x, y) in tile pixels; rows with NaN are padding.
    successor_scores : numpy.ndarray, shape (n, n)
        Higher is more likely (logits or probabilities).
    vertex_scores : numpy.ndarray, shape (n,), optional
        Vertex confidences; vertices under ``min_vertex_score`` are dropped.
    min_vertex_score : float
    padding_assigned : bool
        Keep padding (and dropped) vertices in the assignment and remove them
        from the cycles afterwards, as Pix2Poly does with its padded vertex
        slots; by default they are left out of the assignment.

    Returns
    -------
    rings : list of numpy.ndarray, each (k, 2) with k >= 3
    scores : list of float
        Mean vertex score of each ring (1.0 without vertex scores).

    Examples
    --------
    >>> square = np.array([[0, 0], [4, 0], [4, 4], [0, 4], [9, 9]], float)
    >>> follows = np.eye(5)[[1, 2, 3, 0, 4]]  # 0 -> 1 -> 2 -> 3 -> 0, vertex 4 on its own
    >>> rings, scores = rings_from_successors(square, follows)
    >>> rings[0].tolist(), scores
    ([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]], [1.0])
    """
    vertices = np.asarray(vertices, float)
    confidence = np.ones(len(vertices)) if vertex_scores is None else np.asarray(vertex_scores, float)
    real = np.isfinite(vertices).all(axis=1) & (confidence >= min_vertex_score)
    used = np.arange(len(vertices)) if padding_assigned else np.flatnonzero(real)
    if real.sum() < 3:
        return [], []
    scores = np.asarray(successor_scores, float)[np.ix_(used, used)]
    rows, cols = linear_sum_assignment(np.nan_to_num(scores, nan=-np.inf, neginf=-1e30, posinf=1e30), maximize=True)
    successor = np.empty(len(used), int)
    successor[rows] = cols
    seen = np.zeros(len(used), bool)
    rings, ring_scores = [], []
    for start in range(len(used)):
        if seen[start]:
            continue
        cycle = [start]
        seen[start] = True
        while not seen[successor[cycle[-1]]]:
            cycle.append(successor[cycle[-1]])
            seen[cycle[-1]] = True
        members = used[cycle][real[used[cycle]]]
        if len(members) >= 3 and successor[cycle[-1]] == start:
            rings.append(vertices[members])
            ring_scores.append(float(confidence[members].mean()))
    return rings, ring_scores


def pack_rings(per_tile):
    """Per-tile (rings, scores) lists as NaN-padded arrays: rings (batch, n, vertices, 2), scores (batch, n), labels."""
    batch = len(per_tile)
    most = max([len(rings) for rings, _scores in per_tile] + [1])
    longest = max([len(r) for rings, _scores in per_tile for r in rings] + [3])
    rings = np.full((batch, most, longest, 2), np.nan)
    scores = np.full((batch, most), -np.inf)
    for b, (tile_rings, tile_scores) in enumerate(per_tile):
        for k, (ring, score) in enumerate(zip(tile_rings, tile_scores)):
            rings[b, k, :len(ring)] = ring
            scores[b, k] = score
    return rings, scores, np.zeros(scores.shape, np.int64)


class VertexGraphDecoder(RingsDecoder):
    """Per-tile vertices and successor scores → rings (cycles of the optimal assignment) → polygons by containment."""

    padded_roles = ("vertices", "successors")
    """NaN vertices are padding; -inf successor scores are impossible links."""

    def tile_rings(self, outputs, batch):
        vertices = with_batch_axis(outputs["vertices"], batch, 3)
        successors = with_batch_axis(outputs["successors"], batch, 3)
        confidence = outputs.get("vertex_scores")
        confidence = None if confidence is None else with_batch_axis(confidence, batch, 2)
        n = vertices.shape[1] if vertices.ndim == 3 else -1
        if vertices.ndim != 3 or vertices.shape[2] != 2 or successors.shape != (vertices.shape[0], n, n) or (
            confidence is not None and confidence.shape != vertices.shape[:2]
        ):
            raise InferenceError(
                "Expected vertices (batch, n, 2), successors (batch, n, n) and vertex_scores (batch, n) but got "
                f"{vertices.shape}, {successors.shape} and {None if confidence is None else confidence.shape}."
            )
        per_tile = [
            rings_from_successors(vertices[b], successors[b], None if confidence is None else confidence[b],
                                  self.card.vertex_threshold if confidence is not None else 0.0)
            for b in range(batch)
        ]
        return pack_rings(per_tile)
