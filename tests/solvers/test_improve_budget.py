"""``improve`` keeps the best over budgets and seeds: more evaluations or seeds never worse."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reports.cli import main
from solvers.improve import check_params, improve
from solvers.improve import local as improve_module
from themis.checker import check
from topologies.errors import InputError

from .solver_cases import MiB, small


@pytest.fixture
def short_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rounds of 30, 60, 120, ... evaluations: small budgets cross several rounds.
    monkeypatch.setattr(improve_module, "ROUND_EVALUATIONS", 30)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # the same patch
@given(dims=st.sampled_from([2, 3]), chunks=st.integers(2, 6),
       budgets=st.lists(st.integers(0, 260), min_size=2, max_size=3, unique=True),
       seed=st.integers(0, 3))
def test_more_evaluations_never_worse(short_rounds: None, dims: int, chunks: int,
                                      budgets: list[int], seed: int) -> None:
    inst = small(dims, chunks, 12 * MiB)
    results = [improve(inst, evaluations=e, seed=seed, target_gap=0.0) for e in sorted(budgets)]
    for r in results:
        assert r.valid and not check(r.schedule)
        assert r.lower_bound_ns <= r.makespan_ns * (1 + 1e-12)
        assert r.meta["evaluations"] <= max(budgets)
    spans = [r.makespan_ns for r in results]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(spans, spans[1:], strict=False))


def test_rounds_run_and_a_budget_reproduces(short_rounds: None) -> None:
    inst = small(3, 6, 12 * MiB)
    res = improve(inst, evaluations=200, target_gap=0.0)
    assert res.meta["rounds"] >= 2  # 30 + 60 + 120 > 200 > 90
    again = improve(inst, evaluations=200, target_gap=0.0)
    assert again.makespan_ns == res.makespan_ns


def test_best_over_seeds(short_rounds: None) -> None:
    inst = small(3, 5, 12 * MiB)
    single = [improve(inst, evaluations=80, seed=s, target_gap=0.0).makespan_ns
              for s in (2, 3, 4)]
    res = improve(inst, evaluations=80, seed=2, seeds=3, target_gap=0.0)
    assert res.makespan_ns == min(single)
    assert res.meta["seeds"] == {"2": single[0], "3": single[1], "4": single[2]}
    assert res.meta["seed"] == 2 + single.index(min(single))
    assert res.valid


def test_seeds_and_latency0_are_checked() -> None:
    inst = small(2, 2)
    for bad in (0, -1, True, 1.5):
        with pytest.raises(InputError, match="seeds"):
            improve(inst, evaluations=1, seeds=bad)  # type: ignore[arg-type]
    assert check_params({"seeds": 2, "latency0": False}) == {"seeds": 2, "latency0": False}
    with pytest.raises(InputError, match="seeds"):
        check_params({"seeds": 0})
    with pytest.raises(InputError, match="latency0"):
        check_params({"latency0": "no"})


def test_cli_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["improve", "small-2d", "--chunks", "3", "--evaluations", "20", "--seeds",
                 "2", "--json"])
    out = capsys.readouterr().out
    assert code == 0 and '"seeds"' in out
    assert main(["improve", "small-2d", "--chunks", "3", "--seeds", "0"]) == 2
