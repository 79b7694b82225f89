"""``improve``: never worse than its start, checked schedules, honest status, deterministic."""

from __future__ import annotations

import json

import pytest

from reports.cli import main
from solvers.improve import improve
from themis.checker import check
from themis.instance import Instance
from themis.planning.portfolio import clear_cache
from themis.simulator import simulate
from topologies.errors import InputError
from topologies.presets import resolve_network


@pytest.fixture(scope="module")
def instance() -> Instance:
    return Instance(resolve_network("small-3d"), 240 * 1024, 4, 10.0)


def test_improve_never_worse_than_its_start_and_checked(instance: Instance) -> None:
    clear_cache()
    start = simulate(instance.network, instance.collective, policy="portfolio", intra=None,
                     timing=instance.timing).makespan_ns
    res = improve(instance, evaluations=150)
    assert res.meta["start_ns"] == pytest.approx(start)
    assert res.makespan_ns <= start * (1 + 1e-12)
    assert res.meta["evaluations"] <= 150
    assert res.valid is True and check(res.schedule) == []
    assert res.schedule.makespan_ns == pytest.approx(res.makespan_ns)
    assert res.lower_bound_ns <= res.makespan_ns
    if res.status == "optimal":
        assert res.makespan_ns <= res.lower_bound_ns * (1 + 1e-8) or "cpsat" in res.meta
    else:
        assert res.status == "feasible"
    again = improve(instance, evaluations=150)
    assert again.makespan_ns == res.makespan_ns  # a budget in evaluations reproduces


def test_improve_reaches_an_optimum_it_can_prove() -> None:
    # dgx2 with 2 chunks: baseline meets LB3 (committed report), so improve proves it.
    inst = Instance(resolve_network("dgx2"), 60 * 2**20, 2, 10.0)
    res = improve(inst, evaluations=50)
    assert res.status == "optimal" and res.meta["proof"] == "lower bound"


def test_improve_rejects_bad_budgets(instance: Instance) -> None:
    with pytest.raises(InputError, match="evaluations"):
        improve(instance, evaluations=-1)
    with pytest.raises(InputError, match="time-limit"):
        improve(instance, cpsat_dtime_s=None)


def test_improve_cli_json(capsys) -> None:
    assert main(["improve", "small-2d", "--chunks", "3", "--evaluations", "60", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["checker"] == "valid" and out["status"] in ("optimal", "feasible")
    assert out["makespan_ns"] >= out["lower_bound_ns"]
    assert out["certified_gap"] == pytest.approx(
        (out["makespan_ns"] - out["lower_bound_ns"]) / out["lower_bound_ns"])
    with pytest.raises(SystemExit) as exc:  # the flag's type check: argparse's one line
        main(["improve", "small-2d", "--time-limit", "0"])
    assert exc.value.code == 2


def test_simulate_portfolio_json_names_its_choice(capsys) -> None:
    assert main(["simulate", "small-3d", "--policy", "portfolio", "--chunks", "4",
                 "--json"]) == 0
    free = json.loads(capsys.readouterr().out)
    assert free["portfolio_choice"].split("/")[1].split("+")[0] == free["intra"]
    for q in ("fifo", "scf", "lrw"):
        assert main(["simulate", "small-3d", "--policy", "portfolio", "--chunks", "4",
                     "--intra", q, "--json"]) == 0
        fixed = json.loads(capsys.readouterr().out)
        assert fixed["intra"] == q
        assert free["makespan_ns"] <= fixed["makespan_ns"] * (1 + 1e-12)


def test_improve_starts_from_the_doubling_chain() -> None:
    # Latency 0: the C0 = 4 optimum split into 4 pieces per chunk is a 16-chunk schedule
    # no longer than it (OPT(16) <= OPT(4)); improve starts from it and says so.
    from solvers.improve import chain_base
    from topologies.network import Network

    net = Network.build(["Ring", "Switch", "Ring"], [2, 4, 2], [4, 2, 1], [0, 0, 0])
    inst = Instance(net, 64 * 2**20, 16)
    assert chain_base(16, inst, 4) == 4 and chain_base(16, inst, 32) == 8
    assert chain_base(12, Instance(net, 48 * 2**20, 12), 4) == 3
    assert chain_base(12, Instance(net, 64 * 2**20, 12), 4) is None  # 64 MiB / 3: no split
    res = improve(inst, evaluations=20, chain_dtime_s=2.0, chain_chunks=4)
    chain = res.meta["chain"]
    assert chain["from_chunks"] == 4 and chain["status"] == "optimal"
    assert chain["makespan_ns"] <= chain["from_makespan_ns"] * (1 + 1e-12)
    assert res.makespan_ns <= chain["makespan_ns"] * (1 + 1e-12)
    assert res.valid and not check(res.schedule)
    with pytest.raises(InputError):
        improve(inst, chain_dtime_s=-1.0)


def test_improve_cli_chain_flags(capsys) -> None:
    code = main(["improve", "small-2d", "--size", "8MiB", "--chunks", "4", "--evaluations",
                 "10", "--chain-dtime", "1", "--chain-chunks", "2"])
    out = capsys.readouterr().out
    assert code == 0 and "doubling chain: C = 2 (" in out
    assert main(["improve", "small-2d", "--chunks", "4", "--chain-chunks", "1"]) == 2


def test_improve_uses_the_doubling_bound_at_latency_zero() -> None:
    # As solve does: at latency 0 LB3(2C) bounds OPT(C) (OPT(2C) <= OPT(C)), so
    # improve's bound is the higher of LB0-LB3(C) and LB3(2C), and never above its makespan.
    from solvers.bounds import bounds
    from solvers.doubling import doubling_bound
    from topologies.network import Network

    net = Network.build(["Ring", "Switch", "Ring"], [2, 4, 2], [4, 2, 1], [0, 0, 0])
    inst = Instance(net, 64 * 2**20, 4)
    own = bounds(inst).lb_ns
    value, k = doubling_bound(inst)
    assert k == 2 and value > 0
    on = improve(inst, evaluations=20)
    off = improve(inst, evaluations=20, doubling=False)
    assert on.meta["doubling"] == {"bound_ns": value, "bound_factor": 2, "used": value > own}
    assert "doubling" not in off.meta
    assert on.lower_bound_ns == min(max(own, value), on.makespan_ns)
    assert off.lower_bound_ns == min(own, off.makespan_ns)
    assert on.lower_bound_ns >= off.lower_bound_ns


def test_improve_has_no_doubling_bound_with_latency() -> None:
    # With per-hop latency durations are not linear in size: the bound would not be valid.
    from topologies.network import Network

    net = Network.build(["Ring", "Ring"], [2, 2], [2, 1], [500, 500])
    res = improve(Instance(net, 2**20, 2), evaluations=10)
    assert "doubling" not in res.meta


def test_improve_param_doubling_is_checked() -> None:
    from solvers.improve import check_params

    assert check_params({"doubling": False}) == {"doubling": False}
    with pytest.raises(InputError, match="doubling"):
        check_params({"doubling": 1})
