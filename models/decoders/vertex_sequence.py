"""``vertex-sequence`` family: an image encoder and a token decoder run greedily → vertex graph → rings (Pix2Poly).

The card's model is the encoder (output role ``memory``); its
``polytopo.sequence_decoder`` is a second ONNX file, one step of the
autoregressive decoder (see :class:`~polytopo.models.model.SequenceIO`):
``memory`` and ``tokens`` (1, T) in, ``logits`` (1, T, bins + 3) and
``successors`` (1, N, N) out, with T = 2 N + 1 and the tokens after the
current position set to PAD. As Pix2Poly's ``test_generate``, every tile is
decoded greedily for T steps (the token at step i is the argmax of the
logits at position i), and the successor scores of the last step are the
vertex graph's. Pix2Poly's tokenizer: a vertex is two coordinate tokens in
``[0, bins)`` (``polytopo.token_order``: row then column, or column then
row), a coordinate is ``token / (bins - 1) · tile``; BOS = bins,
EOS = bins + 1, PAD = bins + 2; a sequence whose first EOS does not close a
whole number of vertices has no vertex (as Pix2Poly's ``postprocess``), and a
vertex with a non-coordinate token is dropped. A vertex's confidence is the
softmax probability of its first token. The padded vertex slots take part in
the assignment and are removed from the cycles
(:func:`~.rings.rings_from_successors`), as Pix2Poly's
``permutations_to_polygons`` does; rings then become polygons by containment
as in the rings family, scored by their mean vertex confidence (Pix2Poly
itself scores every polygon 1).

Cost: T decoder runs per tile (449 for the paper's 224 vertex slots).
"""

import numpy as np

from ..errors import InferenceError
from .rings import RingsDecoder, pack_rings, rings_from_successors

__all__ = ["VertexSequenceDecoder", "greedy_tokens", "tokens_to_vertices"]


def greedy_tokens(step, memory, length, bins):
    """Decode one tile greedily, as Pix2Poly: ``length`` steps, each the argmax at the current position.

    Parameters
    ----------
    step : callable
        ``step(memory, tokens) -> (logits, successors)`` for tokens (1, length) int64.
    memory : numpy.ndarray
        The encoder output of one tile, batch axis first.
    length : int
        Token positions of the decoder.
    bins : int
        Coordinate bins; BOS = bins, PAD = bins + 2.

    Returns
    -------
    tokens : numpy.ndarray of int64, shape (length + 1,)
        BOS and the generated tokens.
    confidences : numpy.ndarray, shape (length + 1,)
        Softmax probability of each generated token (0 for BOS).
    successors : numpy.ndarray, shape (vertices, vertices)
        Successor scores of the last step.
    """
    tokens = np.full(length + 1, bins + 2, np.int64)
    tokens[0] = bins
    confidences = np.zeros(length + 1)
    successors = None
    for i in range(length):
        logits, successors = step(memory, tokens[None, :length])
        row = np.asarray(logits, float)[0, i]
        tokens[i + 1] = int(np.argmax(row))
        shifted = np.exp(row - row.max())
        confidences[i + 1] = shifted.max() / shifted.sum()
    return tokens, confidences, np.asarray(successors, float)[0]


def tokens_to_vertices(tokens, confidences, bins, tile_px, order="yx", slots=None):
    """Vertices (x, y) in tile pixels and their confidences from a generated token sequence.

    Parameters
    ----------
    tokens, confidences : numpy.ndarray
        From :func:`greedy_tokens` (BOS first).
    bins : int
    tile_px : int
        Tile edge; a coordinate is ``token / (bins - 1) * tile_px``.
    order : {"yx", "xy"}
        Order of the two tokens of a vertex.
    slots : int, optional
        Pad the result to this many vertices with NaN (the successor matrix size).

    Returns
    -------
    vertices : numpy.ndarray, shape (slots or n, 2)
        NaN for padding and for vertices with a token outside ``[0, bins)``.
    vertex_confidences : numpy.ndarray, shape (slots or n,)

    Examples
    --------
    >>> tokens = np.array([10, 0, 9, 9, 0, 11, 12])  # BOS, (y 0, x 9), (y 9, x 0), EOS, PAD; bins = 10
    >>> vertices, _ = tokens_to_vertices(tokens, np.ones(7), 10, 90)
    >>> vertices.tolist()
    [[90.0, 0.0], [0.0, 90.0]]
    """
    eos = np.flatnonzero(tokens == bins + 1)
    count = (int(eos[0]) - 1) // 2 if len(eos) and (int(eos[0]) - 1) % 2 == 0 else 0
    pairs = np.asarray(tokens[1:1 + 2 * count], float).reshape(count, 2)
    vertex_confidences = np.asarray(confidences[1:1 + 2 * count:2], float)
    pairs[(pairs < 0) | (pairs >= bins)] = np.nan
    vertices = pairs / (bins - 1) * tile_px
    if order == "yx":
        vertices = vertices[:, ::-1]
    vertices[np.isnan(vertices).any(axis=1)] = np.nan
    if slots is not None:
        vertices = np.vstack([vertices, np.full((max(slots - count, 0), 2), np.nan)])[:slots]
        vertex_confidences = np.concatenate([vertex_confidences, np.zeros(max(slots - count, 0))])[:slots]
    return vertices, vertex_confidences


class VertexSequenceDecoder(RingsDecoder):
    """Encoder outputs of each tile → greedy token decoding → rings of the vertex graph → polygons by containment.

    Parameters
    ----------
    context : DecodeContext
    model : LoadedModel
        Holds the token decoder session and its shape.
    """

    def __init__(self, context, model):
        super().__init__(context)
        self._session = model.sequence_session
        self._io = model.sequence_io
        self.decoder_runs = 0

    @classmethod
    def for_model(cls, context, model, prompts=None):
        """Create the decoder with ``model``'s token decoder session."""
        return cls(context, model)

    def _step(self, memory, tokens):
        self.decoder_runs += 1
        logits, successors = self._session.run(["logits", "successors"], {"memory": memory, "tokens": tokens})
        logits, successors = np.asarray(logits), np.asarray(successors)
        slots = self._io.vertices
        if logits.shape[:2] != (1, self._io.length) or successors.shape != (1, slots, slots) or not (
            np.isfinite(logits).all() and np.isfinite(successors).all()
        ):
            raise InferenceError(
                f"Expected finite logits (1, {self._io.length}, vocabulary) and successors (1, {slots}, {slots}) from the "
                f"token decoder but got {logits.shape} and {successors.shape}; check the decoder export."
            )
        return logits, successors

    def tile_rings(self, outputs, batch):
        card, io = self.card, self._io
        tile_px = self.context.tiling.tile_size_px
        per_tile = []
        for b in range(batch):
            memory = np.ascontiguousarray(outputs["memory"][b:b + 1])
            tokens, confidences, successors = greedy_tokens(self._step, memory, io.length, card.token_bins)
            vertices, vertex_confidences = tokens_to_vertices(tokens, confidences, card.token_bins, tile_px,
                                                              card.token_order, slots=io.vertices)
            per_tile.append(rings_from_successors(vertices, successors, vertex_confidences, card.vertex_threshold,
                                                  padding_assigned=True))
        return pack_rings(per_tile)
