"""The ``feed`` discipline: keys and order by hand, and its place in the registry (opt-in)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.themis.test_properties import networks
from themis.checker import check
from themis.collective import Collective
from themis.disciplines import canonical_intra, discipline_names, make_discipline
from themis.disciplines.feed import other_work_ns
from themis.plans import stage_plan
from themis.simulator import intra_names, simulate
from themis.stages import StageTable
from themis.timing import make_timing
from themis.timing.base import StageCost
from topologies.network import Dimension, Network


def _cost(ns: float) -> StageCost:
    return StageCost(ns, 0.0, 1.0, 1.0)


def test_keys_and_order_by_hand() -> None:
    """Chunk A: dims 0, 1, 0, 2 taking 5, 7, 11, 13 ns; chunk B: dims 0, 2 taking 3, 17.
    Work left on other dimensions: A's first stage (on 0) 7 + 13 = 20 (its later stage
    on 0 does not count), then 11 + 13 = 24, 13, 0; B's first 17, then 0."""
    table = StageTable()
    table.add_chunk(0, 0, (("RS", 0), ("RS", 1), ("AG", 0), ("AG", 2)),
                    [(1.0, _cost(t)) for t in (5, 7, 11, 13)])
    table.add_chunk(0, 1, (("RS", 0), ("AG", 2)), [(1.0, _cost(t)) for t in (3, 17)])
    assert other_work_ns(table) == [20.0, 24.0, 13.0, 0.0, 17.0, 0.0]
    q = make_discipline("feed", table)
    for sid in (4, 0, 2):  # B's first, A's first, A's third: waiting on dimension 0
        q.push(sid)
    assert [q.pop(), q.pop(), q.pop(), q.pop()] == [0, 4, 2, None]
    # equal keys: arrival order
    q.push(3)
    q.push(5)
    assert [q.pop(), q.pop()] == [3, 5]


def test_feed_serves_the_chunk_that_feeds_the_slow_dimension_first() -> None:
    """Three reduce-scatters on two dimensions (alpha-beta, no latency): X (1 MiB) is
    issued at 0 and holds dimension 0; S (64 KiB) and L (8 MiB) are issued at 1 ns and
    wait behind it, S first. FIFO then runs S's RS on 0 before L's; feed runs L's first,
    whose RS on dimension 1 is long (it has more work left elsewhere). By hand, with
    a / b each collective's stage times on dimensions 0 / 1, each stage starting when
    its dimension and its chunk's previous stage are both done (see below)."""
    net = Network((Dimension("Ring", 4, 1.0, 0.0), Dimension("Ring", 2, 1.0, 0.0)))
    tm = make_timing("alpha-beta", net)
    sizes = {"X": 1 << 20, "S": 1 << 16, "L": 1 << 23}
    a = {k: tm.stage("RS", 0, v).duration_ns for k, v in sizes.items()}
    b = {k: tm.stage("RS", 1, tm.stage("RS", 0, v).output_bytes).duration_ns
         for k, v in sizes.items()}
    colls = [Collective("reduce-scatter", sizes[k], 1) for k in "XSL"]
    plans = [[stage_plan("reduce-scatter", (0, 1))]] * 3

    def end(intra: str) -> float:
        return simulate(net, colls, intra=intra, plans=plans, issue_ns=[0.0, 1.0, 1.0],
                        policy="baseline").makespan_ns

    x_on_1 = a["X"] + b["X"]
    t_l0 = a["X"] + a["L"]  # feed: L's RS on 0 right after X's
    t_l1 = max(t_l0, x_on_1) + b["L"]
    feed_end = max(t_l1, t_l0 + a["S"]) + b["S"]
    t_s0 = a["X"] + a["S"]  # FIFO: S first
    t_s1 = max(t_s0, x_on_1) + b["S"]
    fifo_end = max(t_s0 + a["L"], t_s1) + b["L"]
    assert abs(end("feed") - feed_end) <= 1e-6 * feed_end
    assert abs(end("fifo") - fifo_end) <= 1e-6 * fifo_end
    assert end("feed") < end("fifo")


def test_feed_is_opt_in() -> None:
    """Accepted by name everywhere, but not in the default set that comparisons and the
    planners that choose a discipline run (so their results do not change)."""
    assert canonical_intra("feed") == "feed"
    assert "feed" not in discipline_names() and "feed" not in intra_names()
    assert discipline_names(opt_in=True)[-1] == "feed"
    assert discipline_names(opt_in=True)[:-1] == discipline_names()
    assert "feed" in discipline_names(internal=True)


@given(networks(max_dims=3), st.integers(1, 12), st.integers(1, 3),
       st.sampled_from(["alpha-beta", "astra-sim-1.0"]),
       st.sampled_from(["all-reduce", "reduce-scatter", "all-gather"]))
@settings(max_examples=40, deadline=None)
def test_feed_schedules_pass_the_checker(net, chunks, k, timing, kind) -> None:
    """Single collectives under feed, both timings, k = 1-3 (the simulator's own
    astra-sim-1.0 timing: ``themis simulate --timing astra-sim-1.0`` runs ASTRA-sim's two
    queues only)."""
    size = chunks * 4096 + 123
    r = simulate(net, Collective(kind, size, chunks), policy="themis", intra="feed",
                 timing=timing, endpoint_delay_ns=7.0, active_chunks=k)
    assert check(r.schedule) == []
    assert r.schedule.meta["intra"] == "feed"
