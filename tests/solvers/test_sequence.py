"""List schedules of a route mix (solvers.sequence): a hand-derived answer, checker-accepted
replays that start every dimension at t = 0, and improve's ``sequence`` start."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reports.cli import main
from solvers.bounds import bounds
from solvers.common import ProblemData
from solvers.improve import check_params, improve
from solvers.sequence import RULES, best_sequence, chunk_routes, list_orders, sequence
from themis.checker import check
from themis.instance import Instance
from themis.simulator import replay
from topologies.errors import InputError
from topologies.network import Network

from .solver_cases import GiB, MiB, small


def _square() -> Instance:
    """Ring 2 @ 1 GB/s x Ring 2 @ 1 GB/s, no latency, two chunks of c = 1 GiB."""
    return Instance(Network.build(["Ring", "Ring"], [2, 2], [1, 1], [0, 0]), 2 * GiB, 2)


def test_hand_derived_two_routes() -> None:
    # u = (c/4 bytes) / (1 GB/s) = 2^28 / (2^30 / 1e9) = 0.25e9 ns. Route (0, 1): RS0 = 2u
    # (sends c/2), RS1 = u (c/4), AG1 = u, AG0 = 2u; route (1, 0) the mirror. One chunk
    # on each: at t = 0 both dimensions start a chunk (2u); at 2u each runs the other
    # chunk's short RS stage (u), at 3u its short AG stage (u), at 4u the long AG stage
    # of the chunk it started: 6u = 1.5e9 ns, both dimensions busy throughout, so it
    # meets LB0 (3 GiB over 2 GB/s = 1.5e9 ns): optimal.
    inst = _square()
    data = ProblemData(inst)
    assert data.perms == [(0, 1), (1, 0)]
    counts = {(0, 0): 1, (0, 1): 1}
    assert chunk_routes(data, counts) == [0, 1]
    for rule in RULES:
        assert list_orders(data, [0, 1], rule) == {
            0: [(0, 0), (1, 1), (1, 2), (0, 3)], 1: [(1, 0), (0, 1), (0, 2), (1, 3)]}
    found = sequence(inst, counts)
    assert sorted(found) == sorted(f"seq-{r}" for r in RULES)
    for sched in found.values():
        assert sched.makespan_ns == pytest.approx(1.5e9, rel=1e-12)
        assert not check(sched)
    assert bounds(inst).lb_ns == pytest.approx(1.5e9, rel=1e-9)


def test_interleaved_routes_and_bad_counts() -> None:
    data = ProblemData(small(2, 5, 10 * MiB))
    assert chunk_routes(data, {(0, 1): 3, (0, 0): 2}) == [0, 1, 0, 1, 1]
    with pytest.raises(InputError, match="route counts"):
        chunk_routes(data, {(0, 0): 2})
    with pytest.raises(InputError, match="rule"):
        list_orders(data, [0] * 5, "lifo")
    assert best_sequence(small(2, 5, 10 * MiB), None) == (None, {})


@settings(max_examples=15, deadline=None)
@given(dims=st.sampled_from([2, 3]), chunks=st.integers(1, 7), data=st.data())
def test_replays_pass_the_checker_and_start_every_first_dimension_at_zero(
        dims: int, chunks: int, data: st.DataObject) -> None:
    inst = small(dims, chunks, 12 * MiB + 5)  # 12 MiB + 5 bytes: a remainder chunk
    pdata = ProblemData(inst)
    counts: dict[tuple[int, int], int] = {}
    for k, n in enumerate(pdata.class_count):
        for _ in range(n):
            r = data.draw(st.integers(0, len(pdata.perms) - 1))
            counts[k, r] = counts.get((k, r), 0) + 1
    lb = bounds(inst).lb_ns
    routes = chunk_routes(pdata, counts)
    for name, sched in sequence(inst, counts, pdata).items():
        assert not check(sched), name
        assert replay(sched).makespan_ns == pytest.approx(sched.makespan_ns, rel=1e-12)
        assert sched.makespan_ns >= lb * (1 - 1e-9)
        got = sorted(tuple(cp.route) for cp in sched.chunks)
        assert got == sorted(pdata.perms[r] for r in routes)
        # Non-delay: a dimension that starts some chunk's route is busy from t = 0.
        firsts = {pdata.perms[r][0] for r in routes}
        for d in firsts:
            assert min(s.start_ns for s in sched.stages if s.dim == d) == 0.0


def test_improve_sequence_start() -> None:
    inst = small(3, 6, 12 * MiB)
    b = bounds(inst)
    seq, spans = best_sequence(inst, b.route_counts.rs if b.route_counts else None)
    assert seq is not None
    runs = [improve(inst, evaluations=e, target_gap=0.0, sequence=True) for e in (0, 50, 200)]
    for res in runs:
        assert res.valid and not check(res.schedule)
        assert res.makespan_ns <= seq.makespan_ns * (1 + 1e-12)
        assert res.meta["sequence"]["candidates"] == spans
    ms = [r.makespan_ns for r in runs]
    assert ms[1] <= ms[0] * (1 + 1e-12) and ms[2] <= ms[1] * (1 + 1e-12)
    assert "sequence" not in improve(inst, evaluations=0).meta
    assert check_params({"sequence": True}) == {"sequence": True}
    with pytest.raises(InputError, match="sequence"):
        check_params({"sequence": 1})


def test_cli_sequence(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["improve", "small-2d", "--chunks", "4", "--evaluations", "10", "--sequence",
                 "--json"])
    assert code == 0 and '"sequence"' in capsys.readouterr().out


@pytest.mark.parametrize("dims,chunks", [(2, 6), (3, 5)])
def test_improve_with_sequence_never_worse(dims: int, chunks: int) -> None:
    inst = small(dims, chunks, 10 * MiB)
    for evaluations in (0, 60):
        plain = improve(inst, evaluations=evaluations, target_gap=0.0)
        seq = improve(inst, evaluations=evaluations, target_gap=0.0, sequence=True)
        assert seq.makespan_ns <= plain.makespan_ns * (1 + 1e-12)
        assert seq.valid
        info = seq.meta["sequence"]
        if info["used"]:  # only a strictly shorter run from the sequence wins
            assert info["searched"] and seq.makespan_ns < plain.makespan_ns
        else:  # else the same runs as without it, the same answer
            assert seq.makespan_ns == plain.makespan_ns
