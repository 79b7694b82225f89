"""Priorities between overlapping collectives (workloads.md §4), worked by hand.

HYBRID_DATA_MODEL puts the weight-gradient all-reduces on dimension 1 only
(Switch 4): with 2 chunks each chunk is one AR stage of T ns there. Layer 1's
collective A is issued at tA, layer 0's B at tB < tA + T, while A's chunk 0 runs
and its chunk 1 waits.

* LIFO (each new collective gets a higher priority): B's chunks pass A's
  *waiting* chunk, never the running one: A0, B0, B1, A1.
* FIFO (each new one gets a lower priority): A0, A1, B0, B1.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.training.handcalc import CFG, NET, ar, layer, workload
from themis.training import simulate_training

S = 200000  # two chunks of 100000 bytes


def _run(policy: str):
    wl = workload("HYBRID_DATA_MODEL", layer("l0", 10, 5, 5, 1, wg=f"ALLREDUCE {S}"),
                  layer("l1", 10, 5, 5, 1, wg=f"ALLREDUCE {S}"))
    return simulate_training(wl, NET, replace(CFG, chunks=2, scheduling_policy=policy))


@pytest.mark.parametrize("policy", ["LIFO", "FIFO"])
def test_two_collectives_overtaking(policy: str) -> None:
    r = _run(policy)
    t = ar(1, S // 2)
    # F0 10, +1, F1 10, +1, IG1 5, +1, WG1 5 -> A at 33; +1, IG0 5, +1, WG0 5 -> B at 45.
    ta, tb = 33, 45
    assert [(c.layer, c.issue_ns) for c in r.collectives] == [(1, ta), (0, tb)]
    assert tb < ta + t
    order = ["A0", "B0", "B1", "A1"] if policy == "LIFO" else ["A0", "A1", "B0", "B1"]
    stages = sorted(r.timeline.stages, key=lambda s: s[3])
    assert all(s[0] == 1 for s in stages)
    assert [f"{'AB'[s[1]]}{s[2]}" for s in stages] == order
    assert [(s[3], s[4]) for s in stages] == [(ta + j * t, ta + (j + 1) * t) for j in range(4)]
    a_end = ta + (4 if policy == "LIFO" else 2) * t
    b_end = ta + (3 if policy == "LIFO" else 4) * t
    assert [c.end_ns for c in r.collectives] == [a_end, b_end]
    assert r.layers[1].wg_comm_ns == a_end + 1 - ta
    assert r.layers[0].wg_comm_ns == b_end + 1 - tb
    assert r.end_ns == ta + 4 * t + 1
    lifo, fifo = sorted(c.priority for c in r.collectives), r.collectives
    assert (fifo[1].priority > fifo[0].priority) == (policy == "LIFO")
    assert lifo[0] != lifo[1]
