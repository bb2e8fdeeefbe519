"""Hand-made polygons and small builders for the evaluator tests (pixels, y down)."""

import json

import numpy as np
import pytest
from polytopo_testing import COCO_GT, COCO_PRED

from polytopo.evaluator.inputs.instances import Instance, InstanceSet

__all__ = ["square", "make_set", "fixtures_dir", "coco_files", "client"]


def _square(x, y, size, height=None):
    h = size if height is None else height
    return np.array([[x, y], [x + size, y], [x + size, y + h], [x, y + h]], dtype=float)


def _make_set(polygons, image_id=0, scores=None, image_ids=None):
    """InstanceSet of ``(exterior, [holes])`` tuples, all in one image unless ``image_ids``."""
    instances = []
    for index, (exterior, holes) in enumerate(polygons):
        image = image_id if image_ids is None else image_ids[index]
        score = 1.0 if scores is None else scores[index]
        instances.append(Instance(image, index, np.asarray(exterior, float),
                                  tuple(np.asarray(h, float) for h in holes), float(score)))
    ids = sorted({i.image_id for i in instances}) or [image_id]
    return InstanceSet(tuple(instances), tuple(ids), {}, "test")


@pytest.fixture
def square():
    """``square(x, y, size[, height])``: an axis-aligned rectangle ring, counter-clockwise in y-down pixels."""
    return _square


@pytest.fixture
def make_set():
    """``make_set([(exterior, [holes]), ...], image_id=0, scores=None, image_ids=None)``."""
    return _make_set


@pytest.fixture(scope="session")
def fixtures_dir(repo_root):
    """The bundled test fixtures folder."""
    return repo_root / "tests" / "fixtures"


@pytest.fixture
def coco_files(tmp_path):
    """``gt.json`` and ``pred.json`` of the small COCO case (``COCO_GT``, ``COCO_PRED``) in ``tmp_path``."""
    gt, pred = tmp_path / "gt.json", tmp_path / "pred.json"
    gt.write_text(json.dumps(COCO_GT))
    pred.write_text(json.dumps(COCO_PRED))
    return gt, pred


@pytest.fixture(scope="module")
def client():
    """A real 2-process Dask LocalCluster's client, one per test module that asks for it."""
    from polytopo.core.cluster import open_client

    with open_client(workers=2) as client:
        yield client
