"""The checker catches every kind of violation we can construct."""

from __future__ import annotations

import dataclasses

import pytest

from themis.checker import ScheduleInvalid, assert_valid, check
from themis.collective import Collective
from themis.schedule import ChunkPlan, Schedule
from themis.simulator import simulate
from topologies import Dimension, Network


@pytest.fixture
def valid() -> Schedule:
    net = Network((Dimension("Ring", 4, 4.0, 10.0), Dimension("Switch", 4, 1.0, 50.0)))
    r = simulate(net, Collective("all-reduce", 8 << 20, 4), policy="themis", intra="scf",
                 endpoint_delay_ns=5.0)
    assert check(r.schedule) == []
    return r.schedule


def kinds(schedule: Schedule) -> set[str]:
    return {v.kind for v in check(schedule)}


def replace_stage(schedule: Schedule, index: int, **changes) -> Schedule:
    stages = list(schedule.stages)
    stages[index] = stages[index]._replace(**changes)
    return dataclasses.replace(schedule, stages=stages)


def test_wrong_duration(valid: Schedule) -> None:
    s = valid.stages[0]
    bad = replace_stage(valid, 0, end_ns=s.end_ns + 1.0)
    assert "duration" in kinds(bad)


def test_precedence(valid: Schedule) -> None:
    i = next(i for i, s in enumerate(valid.stages) if s.step == 1)
    s = valid.stages[i]
    shift = s.start_ns - valid.stages[i - 1].start_ns + 1.0  # before the predecessor ends
    bad = replace_stage(valid, i, start_ns=s.start_ns - shift, end_ns=s.end_ns - shift)
    assert "precedence" in kinds(bad)


def test_capacity(valid: Schedule) -> None:
    # Move one stage onto the start of another stage of the same dimension.
    by_dim = [i for i, s in enumerate(valid.stages) if s.dim == valid.stages[0].dim]
    a, b = by_dim[0], by_dim[-1]
    sa, sb = valid.stages[a], valid.stages[b]
    dur = sb.end_ns - sb.start_ns
    bad = replace_stage(valid, b, start_ns=sa.start_ns, end_ns=sa.start_ns + dur)
    assert "capacity" in kinds(bad)


def test_wrong_size(valid: Schedule) -> None:
    bad = replace_stage(valid, 1, input_bytes=valid.stages[1].input_bytes * 2)
    assert "size" in kinds(bad)
    bad = replace_stage(valid, 1, sent_bytes=0.0)
    assert "size" in kinds(bad)


def test_wrong_plan(valid: Schedule) -> None:
    chunks = list(valid.chunks)
    c = chunks[0]
    # AG in the same order as RS is not the reverse route.
    chunks[0] = ChunkPlan(c.collective, c.chunk, c.size_bytes, c.route,
                          tuple(("RS", d) for d in c.route) + tuple(("AG", d) for d in c.route))
    assert "plan" in kinds(dataclasses.replace(valid, chunks=chunks))


def test_route_not_permutation(valid: Schedule) -> None:
    chunks = list(valid.chunks)
    c = chunks[0]
    chunks[0] = ChunkPlan(c.collective, c.chunk, c.size_bytes, (0, 0), c.phases)
    assert "route" in kinds(dataclasses.replace(valid, chunks=chunks))


def test_missing_stage_and_duplicate_chunk(valid: Schedule) -> None:
    assert "stages" in kinds(dataclasses.replace(valid, stages=valid.stages[1:]))
    chunks = list(valid.chunks) + [valid.chunks[0]]
    assert "chunks" in kinds(dataclasses.replace(valid, chunks=chunks))


def test_wrong_chunking(valid: Schedule) -> None:
    colls = [Collective("all-reduce", 16 << 20, 4)]
    assert kinds(dataclasses.replace(valid, collectives=colls)) >= {"chunks"}


def test_stage_before_issue(valid: Schedule) -> None:
    assert "precedence" in kinds(dataclasses.replace(valid, issue_ns=[1.0]))


def test_assert_valid_raises(valid: Schedule) -> None:
    assert_valid(valid)
    with pytest.raises(ScheduleInvalid, match="duration"):
        assert_valid(replace_stage(valid, 0, end_ns=valid.stages[0].end_ns * 3))


def test_json_round_trip(valid: Schedule, tmp_path) -> None:
    path = tmp_path / "s.json"
    valid.save(path)
    again = Schedule.load(path)
    assert again.stages == valid.stages
    assert again.chunks == valid.chunks
    assert again.network == valid.network
    assert check(again) == []


def test_the_one_route_permutation_check() -> None:
    """``themis.plans.check_routes``: the policies', planners', simulator's and checker's
    one test; a user's route is echoed as written, a policy's as its tuple."""
    import pytest

    from themis.plans import check_routes, is_permutation
    from topologies.errors import InputError

    assert is_permutation((2, 0, 1), [0, 1, 2]) and not is_permutation((0, 0, 1), [0, 1, 2])
    check_routes([(1, 0), (0, 1)], (0, 1))
    with pytest.raises(InputError) as e:
        check_routes([(0, 1), (1, 1)], (0, 1))
    assert (e.value.field, e.value.value) == ("route", "1,1")
    assert "permutation of the dimensions [0, 1]" in e.value.reason
    with pytest.raises(InputError) as e:
        check_routes([(0,)], (0, 1), producer="mine")
    assert e.value.value == (0,) and e.value.reason.startswith("policy mine produced")
