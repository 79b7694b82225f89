"""ASTRA-sim 1.0's per-NPU event lists under boost mode 1 (:mod:`themis.engine.npu_lists`),
derived by hand on a 2 x 2 network where they order two stage ends of one tick.

The network: two Switch dimensions of 2 NPUs, 1 ns per hop, 50 GB/s, endpoint delay
d = 10, halvingDoubling. NPU ids have dimension 0 fastest, so dimension 0's group (the
line through NPU 0) is NPUs 0, 1 and dimension 1's is 0, 2. A reduce-scatter stage of
D bytes on 2 NPUs is one exchange of D/2 bytes: the members send d after the start,
the message takes N(D/2) = 2 + floor((D/2) / BW) (BW = 50 * 2^30 / 1e9 bytes/ns), the
arrival is followed by d, the reduce (0 ns here: the last step's) registers on the
running list, then the member exits: 2d + N(D/2) (D = 2 MiB: 20 + 19533 = 19553 ns;
1 MiB: 20 + 9767 = 9787 ns).
"""

from __future__ import annotations

from themis.engine import Engine, Rules
from themis.timing import make_timing
from topologies import Dimension, Network

MIB = 1 << 20


def _engine() -> tuple[Engine, list[tuple[int, float]]]:
    net = Network([Dimension("Switch", 2, 50.0, 1.0), Dimension("Switch", 2, 50.0, 1.0)])
    tm = make_timing("astra-sim-1.0", net, ("halvingDoubling", "halvingDoubling"), 10.0)
    engine = Engine(net, {"reduce-scatter": tm}, "fifo", 1, Rules.astra(tie_dim=True))
    assert engine.npu_lists is not None
    return engine, []


def _issue(engine: Engine, done: list[tuple[int, float]], size: int, plan) -> None:
    engine.issue("reduce-scatter", [size], [tuple(plan)], 0,
                 lambda cid, t: done.append((cid, t)))


def test_release_order_follows_the_lists_not_dimension_or_start_order() -> None:
    """Chunk X (2 MiB: RS on dimension 0, then 1 MiB on dimension 1) starts alone at 0;
    chunk A (1 MiB, RS on dimension 0) waits behind it. X's dimension-0 stage ends at
    19553 on both members, NPU 0's list first (issue order 0, 1, 2), so NPU 1 releases
    X and the release runs NPU 2 (suspended when X entered dimension 0), NPU 0, NPU 1.
    NPU 2 starts X on dimension 1 (its list at 19563 is created first), NPU 0 starts A
    (dimension 0 is served first) and X, NPU 1 starts A: lists 2, 0, 1. At 19563 NPU 2
    sends and posts its receive before its partner NPU 0 has; NPU 0 then completes X's
    pair (arrivals X@2, X@0) and NPU 1 A's (A@0, A@1). The lists of 19553 + 9787 =
    29340 are created in arrival order: 2 (X), 0 (X, A), 1 (A). NPU 2 exits X, NPU 0
    exits X (X is complete: released), then A, then NPU 1 exits A (A released). So X
    (dimension 1, started second) ends before A (dimension 0, started first): neither
    the dimension order nor the start order."""
    engine, done = _engine()
    _issue(engine, done, 2 * MIB, [("RS", 0), ("RS", 1)])
    _issue(engine, done, MIB, [("RS", 0)])
    engine.run()
    assert done == [(0, 29340.0), (1, 29340.0)]


def test_at_an_issue_the_lists_run_in_npu_id_order() -> None:
    """Y (1 MiB on dimension 1) is issued before Z (1 MiB on dimension 0), both start at 0.
    Every NPU generates both collectives in its turn, NPUs in id order: lists at 10 are
    0 (Y, Z), 1 (Z), 2 (Y). NPU 0 finds nothing posted; NPU 1 completes Z's pair, NPU 2
    Y's: arrivals Z@0, Z@1, Y@0, Y@2, so the lists of 9787 are 0 (Z, Y), 1 (Z), 2 (Y),
    and Z (dimension 0) is released at NPU 1 before Y at NPU 2: here the dimension order,
    not the start order."""
    engine, done = _engine()
    _issue(engine, done, MIB, [("RS", 1)])
    _issue(engine, done, MIB, [("RS", 0)])
    engine.run()
    assert done == [(1, 9787.0), (0, 9787.0)]


def test_without_boost_mode_no_lists() -> None:
    net = Network([Dimension("Switch", 2, 50.0, 1.0), Dimension("Switch", 2, 50.0, 1.0)])
    tm = make_timing("astra-sim-1.0", net, ("halvingDoubling", "halvingDoubling"), 10.0)
    engine = Engine(net, {"reduce-scatter": tm}, "fifo", 1, Rules.astra(tie_dim=False))
    assert engine.npu_lists is None
