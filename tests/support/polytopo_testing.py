"""Helpers shared by test modules of different folders (on the test path through ``pythonpath`` in pyproject.toml).

* ONNX graph builders: :func:`build` saves a graph with a JSON-encoded card,
  :func:`semantic_band_model` is the smallest semantic model (the probability
  is one input channel).
* QGIS helpers for the plugin tests: :func:`wait_until`, :class:`RecordingNotifier`
  and :func:`polygon_layer`.
"""

import json
import time
from pathlib import Path

import numpy as np

__all__ = [
    "BASELINE_CARDS", "COCO_GT", "COCO_PRED", "OPSET", "RecordingNotifier", "baseline_card", "build", "constant", "image_input", "mask_box_nodes", "polygon_layer", "semantic_band_model",
    "QGIS_PROCESS_TIMEOUT_S", "qgis_process", "wait_until",
]

OPSET = 17

BASELINE_CARDS = Path(__file__).resolve().parents[2] / "tools" / "export" / "cards"
"""The cards docs/baselines.md tells to write, one JSON file per baseline."""


def baseline_card(name, **changes):
    """A baseline's card with what a tiny test graph changes: 50 cm pixels, 25 % overlap, then ``changes``.

    Keyword names use ``__`` for the dot of ``polytopo.`` keys (``polytopo__input_range``).
    """
    card = json.loads((BASELINE_CARDS / f"{name}.json").read_text(encoding="utf-8"))
    card.update({"resolution": 50, "tiles_overlap": 25})
    card.update({key.replace("__", "."): value for key, value in changes.items()})
    return card


COCO_GT = {
    "images": [{"id": 1, "width": 64, "height": 64}],
    "annotations": [{"id": 7, "image_id": 1, "category_id": 100, "iscrowd": 0,
                     "segmentation": [[0, 0, 20, 0, 20, 20, 0, 20], [5, 5, 10, 5, 10, 10, 5, 10]]}],
}
"""The smallest COCO ground truth with a hole: one 20 px square with a 5 px hole."""
COCO_PRED = [{"image_id": 1, "category_id": 100, "score": 0.9,
              "segmentation": [[0, 0, 20, 0, 20, 20, 0, 20], [5, 5, 10, 5, 10, 10, 5, 10]]}]
"""A perfect prediction of :data:`COCO_GT`."""


def constant(name, array):
    """A Constant node producing ``array`` as ``name``."""
    from onnx import helper, numpy_helper

    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(array), name + "_value"))


def build(path, nodes, inputs, outputs, card=None, initializers=()):
    """Save a graph as an ONNX model with ``card`` (Python values, JSON-encoded) as metadata; returns ``str(path)``."""
    from onnx import helper, save_model

    graph = helper.make_graph(nodes, "test", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    for key, value in (card or {}).items():
        entry = model.metadata_props.add()
        entry.key = key
        entry.value = json.dumps(value)
    save_model(model, str(path))
    return str(path)


def mask_box_nodes(masks, boxes, present):
    """Nodes giving the boxes (..., n, 4) = x1, y1, x2, y2 (exclusive) and presence (..., n) of masks (..., n, H, W)."""
    from onnx import TensorProto, helper

    return [
        helper.make_node("ReduceMax", [masks], [f"{boxes}_rows"], axes=[-1], keepdims=0),
        helper.make_node("ReduceMax", [masks], [f"{boxes}_cols"], axes=[-2], keepdims=0),
        helper.make_node("ArgMax", [f"{boxes}_rows"], [f"{boxes}_y1"], axis=-1, keepdims=1),
        helper.make_node("ArgMax", [f"{boxes}_rows"], [f"{boxes}_y2"], axis=-1, keepdims=1, select_last_index=1),
        helper.make_node("ArgMax", [f"{boxes}_cols"], [f"{boxes}_x1"], axis=-1, keepdims=1),
        helper.make_node("ArgMax", [f"{boxes}_cols"], [f"{boxes}_x2"], axis=-1, keepdims=1, select_last_index=1),
        helper.make_node("Concat", [f"{boxes}_x1", f"{boxes}_y1", f"{boxes}_x2", f"{boxes}_y2"], [f"{boxes}_i"], axis=-1),
        helper.make_node("Cast", [f"{boxes}_i"], [f"{boxes}_f"], to=TensorProto.FLOAT),
        constant(f"{boxes}_plus", np.array([0, 0, 1, 1], np.float32)),
        helper.make_node("Add", [f"{boxes}_f", f"{boxes}_plus"], [boxes]),
        helper.make_node("ReduceMax", [f"{boxes}_rows"], [present], axes=[-1], keepdims=0),
    ]


def image_input(channels, tile=None, name="input", batch=None):
    """A float image input (batch, channels, tile, tile); dynamic sizes where ``tile`` or ``batch`` is None."""
    from onnx import TensorProto, helper

    return helper.make_tensor_value_info(name, TensorProto.FLOAT, [batch or "N", channels, tile or "H", tile or "W"])


def semantic_band_model(path, channels=1, band=0, tile=None, card=None):
    """Probability of the one class = input channel ``band`` (after the card's input scaling)."""
    from onnx import TensorProto, helper

    nodes = [
        constant("starts", np.array([band], np.int64)),
        constant("ends", np.array([band + 1], np.int64)),
        constant("axes", np.array([1], np.int64)),
        helper.make_node("Slice", ["input", "starts", "ends", "axes"], ["output"]),
    ]
    card = {"polytopo.family": "semantic", "seg_thresh": 0.5} if card is None else card
    out = helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 1, tile or "H", tile or "W"])
    return build(path, nodes, [image_input(channels, tile)], [out], card)


def wait_until(predicate, timeout_s=30):
    """Process Qt events until ``predicate()`` is true; fail the test after ``timeout_s`` seconds."""
    import pytest
    from qgis.core import QgsApplication

    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout_s} s")
        QgsApplication.processEvents()
        time.sleep(0.005)


class RecordingNotifier:
    """Notifier stand-in: keeps ``(level, title, text)`` tuples in :attr:`messages`."""

    def __init__(self):
        self.messages = []

    def info(self, title, text):
        self.messages.append(("info", title, text))

    def warning(self, title, text):
        self.messages.append(("warning", title, text))

    def error(self, title, text):
        self.messages.append(("error", title, text))

    def clear(self):
        self.messages.clear()

    @property
    def texts(self):
        """``(level, text)`` pairs, without the titles."""
        return [(level, text) for level, _title, text in self.messages]


def polygon_layer(name, wkts, crs="EPSG:3857"):
    """Return a memory polygon layer with a numeric ``score`` field (0.9) and one feature per WKT."""
    from qgis.core import QgsFeature, QgsField, QgsGeometry, QgsVectorLayer
    from qgis.PyQt.QtCore import QVariant

    layer = QgsVectorLayer(f"Polygon?crs={crs}", name, "memory")
    layer.dataProvider().addAttributes([QgsField("score", QVariant.Double)])
    layer.updateFields()
    features = []
    for wkt in wkts:
        feature = QgsFeature(layer.fields())
        feature.setGeometry(QgsGeometry.fromWkt(wkt))
        feature.setAttribute("score", 0.9)
        features.append(feature)
    layer.dataProvider().addFeatures(features)
    return layer


QGIS_PROCESS_TIMEOUT_S = 180
"""Seconds one ``qgis_process`` call in a test may take."""


def qgis_process(env, *args):
    """Run ``qgis_process.bin`` (Debian's wrapper passes an option the binary rejects)."""
    import subprocess

    return subprocess.run(["qgis_process.bin", *args], env=env, capture_output=True, text=True,
                          timeout=QGIS_PROCESS_TIMEOUT_S, check=False)
