"""How the pair metrics' cost grows with the vertex count of one polygon with a hole.

One wavy ring with a wavy hole (half the vertices each, about 1 px apart) is compared
with a copy moved by 0.3 px and sampled with other vertices. For each vertex count the
script times, in this process, the kernels that search the nearest boundary point:
POLIS (:func:`polytopo.evaluator.geometry.boundary.polis`), HD95 (:func:`~polytopo.evaluator.geometry.boundary.hd95`,
2 px samples) and MTA (:func:`polytopo.evaluator.geometry.mta.max_tangent_angle`, 2 px samples),
and with ``--full`` the whole ``paper`` evaluation of the polygon against itself (GEOS
bands, matching, corners included). It prints CPU seconds of this process (the work is
single-threaded, so a busy machine does not inflate them as it does wall time) per
vertex count and the growth
exponent ``log(t2 / t1) / log(n2 / n1)`` between consecutive counts: 1 is linear, 2
quadratic.

Needs no data. Exit status 1 when an exponent measured from 10^4 vertices on exceeds
``--max-exponent`` (default 1.4).

Run ``python benchmarks/bench_vertex_scaling.py --help``.
"""

import argparse
import math
import sys
import time

import numpy as np

from polytopo.evaluator import evaluate
from polytopo.evaluator.geometry.boundary import hd95, polis
from polytopo.evaluator.inputs.instances import Instance, InstanceSet
from polytopo.evaluator.geometry.mta import max_tangent_angle

__all__ = ["wavy_ring", "pair", "time_kernels", "growth", "main"]


def wavy_ring(n, phase=0.0, scale=1.0):
    """``n`` vertices of a closed wavy ring about 1 px apart (counter-clockwise), in pixels."""
    radius = scale * n / (2 * np.pi)
    angle = np.linspace(0, 2 * np.pi, n, endpoint=False) + phase
    r = radius * (1 + 0.05 * np.sin(37 * angle))
    return np.column_stack([r * np.cos(angle), r * np.sin(angle)]) + 2 * radius


def pair(n):
    """Ground-truth and predicted ring sets ``[exterior, hole]`` with ``n`` vertices in all."""
    half = max(n // 2, 3)
    gt = [wavy_ring(half), wavy_ring(half, scale=0.5)[::-1]]
    pred = [wavy_ring(half, phase=0.5 / half) + 0.3, wavy_ring(half, phase=0.5 / half, scale=0.5)[::-1] + 0.3]
    return gt, pred


def _timed(function):
    started = time.process_time()
    function()
    return time.process_time() - started


def time_kernels(n, full):
    """CPU seconds of each measured step for ``n`` vertices per polygon."""
    gt, pred = pair(n)
    times = {
        "POLIS": _timed(lambda: polis([gt], [pred])),
        "HD95": _timed(lambda: hd95([gt], [pred], 2.0)),
        "MTA": _timed(lambda: max_tangent_angle([pred], [gt], np.array([1.0]))),
    }
    if full:
        instances = InstanceSet((Instance(0, 0, gt[0], (gt[1],), 1.0),), (0,), {}, "benchmark")
        times["paper (self)"] = _timed(lambda: evaluate(instances, instances, bootstrap_resamples=0))
    return times


def growth(sizes, seconds):
    """Exponent ``log(t2 / t1) / log(n2 / n1)`` between consecutive sizes (NaN below 1 ms)."""
    return [math.log(t2 / t1) / math.log(n2 / n1) if min(t1, t2) > 1e-3 else float("nan")
            for (n1, t1), (n2, t2) in zip(zip(sizes, seconds), zip(sizes[1:], seconds[1:]))]


def main(argv=None):
    """Run the benchmark; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000,1000000",
                        help="comma-separated vertex counts per polygon (exterior plus hole)")
    parser.add_argument("--full", action="store_true", help="also time the whole paper evaluation")
    parser.add_argument("--max-exponent", type=float, default=1.4,
                        help="largest growth exponent accepted from 10^4 vertices on")
    args = parser.parse_args(argv)
    sizes = [int(float(v)) for v in args.sizes.split(",")]
    rows = []
    for n in sizes:
        rows.append(time_kernels(n, args.full))
        print(f"{n:>9} vertices  " + "  ".join(f"{k} {v:8.3f} s CPU" for k, v in rows[-1].items()), flush=True)
    failed = False
    print("\ngrowth exponent between consecutive sizes (1 = linear, 2 = quadratic)")
    for name in rows[0]:
        exponents = growth(sizes, [row[name] for row in rows])
        ratios = [f"{sizes[i]}->{sizes[i + 1]}: x{rows[i + 1][name] / rows[i][name]:.1f} (exp {e:.2f})"
                  for i, e in enumerate(exponents)]
        print(f"  {name:>13}: " + ", ".join(ratios))
        failed |= any(e > args.max_exponent for i, e in enumerate(exponents) if sizes[i] >= 10_000)
    if failed:
        print(f"FAIL: growth exponent above {args.max_exponent}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
