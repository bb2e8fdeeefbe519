"""Ring geometry made where it is needed and dropped after: the same objects, less memory held."""

import sys

import numpy as np
import pytest
import shapely
import shapely.affinity

from polytopo.core.heap import return_freed_heap
from polytopo.evaluator.inputs.instances import InstanceSet, instances_from_geometry
from polytopo.evaluator.profiles.paper import match_paper, prepare
from polytopo.evaluator.tables.params import params_for
from polytopo.evaluator.geometry.rings import _DERIVED, RingTable

COURTYARD = shapely.Polygon([(0, 0), (40, 0), (40, 30), (0, 30)], [[(10, 10), (20, 10), (20, 20), (10, 20)],
                                                                  [(25, 5), (35, 5), (35, 12), (25, 12)]])
PLAIN = shapely.box(50, 0, 70, 25)
SLIVER = shapely.Polygon([(0, 0), (10, 0), (0, 1e-9)])  # bounds no region once repaired


@pytest.fixture()
def table():
    instances = [i for k, g in enumerate((COURTYARD, PLAIN, SLIVER, COURTYARD))
                 for i in instances_from_geometry(g, image_id=1, source_id=k)]
    return RingTable(instances, 1.0)


@pytest.mark.parametrize("name", [n for n in _DERIVED if n != "polygons"])
def test_geometry_made_for_some_rings_equals_the_kept_geometry(table, name):
    size = len(table.holes) if name.startswith("hole_") else len(table.instances)
    index = np.array([size - 1, 0] + list(range(size)))
    alone = table.of(name, index)
    assert name not in vars(table)  # made for the index only, nothing kept
    kept = getattr(table, name)[index]
    assert len(alone) == len(kept)
    for a, b in zip(alone, kept):
        assert (a is None and b is None) or shapely.equals_exact(a, b, 0.0)
    assert all(a is b for a, b in zip(table.of(name, index), kept))  # now from the kept copy


def test_drop_geometry_keeps_what_is_asked(table):
    table.make(*_DERIVED)
    table.drop_geometry(keep=("polygons",))
    assert [name for name in _DERIVED if name in vars(table)] == ["polygons"]


def test_the_paper_match_holds_only_the_polygons_after_its_pair_metrics():
    gt = [i for k, g in enumerate((COURTYARD, PLAIN)) for i in instances_from_geometry(g, image_id=1, source_id=k)]
    moved = [shapely.affinity.translate(g, 0.5, 0.5) for g in (COURTYARD, PLAIN)]
    pred = [i for k, g in enumerate(moved) for i in instances_from_geometry(g, image_id=1, source_id=k, score=0.9)]
    params = params_for("paper")
    gt_set, pred_set, _ = prepare(InstanceSet(tuple(gt), (1,), {}, "gt"), InstanceSet(tuple(pred), (1,), {}, "pred"),
                                  params)
    match = match_paper(gt_set, pred_set, params)
    assert len(match.pairs.gt_index) == 2 and match.pairs.e_biou.min() > 0.3
    for ring_table in (match.gt_table, match.pred_table):
        assert [name for name in _DERIVED if name in vars(ring_table)] == ["polygons"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim; a no-op elsewhere")
def test_freed_geos_memory_goes_back_to_the_system():
    def resident_mib():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024

    return_freed_heap()  # free pages left by earlier tests are not counted in the start
    start = resident_mib()
    bands = shapely.buffer(shapely.points(np.random.default_rng(0).random((200_000, 2))), 1.0)
    grown = resident_mib() - start
    del bands
    assert return_freed_heap()
    assert grown > 100  # about 240 MiB of GEOS polygons on the C heap
    assert resident_mib() - start < 0.5 * grown  # whatever glibc kept after the del is given back
