"""compare(): agrees with solve() and simulate(); ``themis compare`` CLI; plot_gantt."""

from __future__ import annotations

import json

import pytest

from reports.cli import main
from reports.compare import compare, parse_names, reference
from themis.instance import Instance
from topologies.errors import InputError
from topologies.presets import resolve_network


@pytest.fixture(scope="module")
def tiny() -> Instance:
    """Ring 4 x Switch 4, 16 MiB in 3 chunks: solved to optimality in well under a second."""
    return Instance(resolve_network("small-2d"), 16 << 20, 3, 10.0)


@pytest.fixture(scope="module")
def comparison(tiny: Instance):
    return compare(tiny, solvers=("cpsat",), time_limit_s=20, threads=1)


def test_compare_agrees_with_simulate_and_solve(tiny: Instance, comparison) -> None:
    from solvers import solve

    assert [r.method for r in comparison.rows] == [
        "baseline/fifo", "baseline/scf", "round-robin/fifo", "round-robin/scf",
        "themis/fifo", "themis/scf", "cpsat"]
    for policy in ("baseline", "round-robin", "themis"):
        for intra in ("fifo", "scf"):
            row = comparison.row(f"{policy}/{intra}")
            assert row.kind == "policy" and row.status == "simulated"
            assert row.makespan_ns == tiny.simulate(policy, intra).makespan_ns
    solved = solve(tiny, solver="cpsat", time_limit_s=20, threads=1)
    row = comparison.row("cpsat")
    assert solved.status == row.status == "optimal"
    assert row.makespan_ns == pytest.approx(solved.makespan_ns, rel=1e-9)
    # scoring
    makespans = [r.makespan_ns for r in comparison.rows]
    assert comparison.best_ns == min(makespans)
    assert comparison.best_proven
    assert comparison.lower_bound_ns <= comparison.best_ns * (1 + 1e-9)
    for r in comparison.rows:
        assert r.gap == pytest.approx((r.makespan_ns - comparison.best_ns) / comparison.best_ns)
        assert r.gap_bound == pytest.approx(
            (r.makespan_ns - comparison.lower_bound_ns) / comparison.lower_bound_ns)
        assert r.gap >= 0 and r.gap_bound >= r.gap - 1e-12
    assert comparison.row("round-robin/fifo").gap > 0.1


def test_reference_rules() -> None:
    """Free-AG schedules do not count as best for the reverse variant; reverse LBs not for free."""
    from types import SimpleNamespace as R

    rows = [R(kind="policy", ag_order="reverse", status="simulated", makespan_ns=110.0,
              lower_bound_ns=None, valid=True),
            R(kind="solver", ag_order="free", status="optimal", makespan_ns=90.0,
              lower_bound_ns=90.0, valid=True),
            R(kind="bound", ag_order="reverse", status="bound", makespan_ns=None,
              lower_bound_ns=100.0, valid=True)]
    assert reference(rows, "reverse") == (110.0, 100.0, False)
    assert reference(rows, "free") == (90.0, 90.0, True)


def test_parse_names() -> None:
    assert parse_names("themis, offlineGreedy,baseline", "policy", "--policies") == (
        "themis", "baseline")
    assert parse_names("", "solver", "--solvers") == ()
    assert parse_names("FIFO,smallestFirst", "intra", "--intra") == ("fifo", "scf")
    with pytest.raises(InputError) as err:
        parse_names("cpsat,gurobi", "solver", "--solvers")
    assert err.value.field == "--solvers" and err.value.value == "gurobi"


def test_cli_compare_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "small-2d", "--size", "16MiB", "--chunks", "3",
                 "--endpoint-delay", "10", "--solvers", "cpsat", "--time-limit", "20",
                 "--threads", "1", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    data = json.loads(out)
    assert set(data) >= {"lower_bound_ns", "best_ns", "best_proven", "rows"}
    assert data["best_proven"] is True
    assert [r["method"] for r in data["rows"]][-1] == "cpsat"
    for r in data["rows"]:
        assert set(r) >= {"method", "kind", "makespan_ns", "status", "gap", "gap_bound",
                          "runtime_s"}
    assert min(r["makespan_ns"] for r in data["rows"]) == data["best_ns"]


def test_cli_compare_policies_only_table(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compare", "small-3d", "--chunks", "4", "--solvers", "",
                 "--policies", "themis,baseline", "--intra", "scf"])
    out = capsys.readouterr().out
    assert code == 0
    assert "themis/scf" in out and "baseline/scf" in out and "cpsat" not in out
    assert "gap bound" in out


@pytest.mark.parametrize("flag,value", [("--policies", "themis,greedy"), ("--intra", "lifo"),
                                        ("--solvers", "cpsat,gurobi"), ("--ag-order", "up")])
def test_cli_compare_bad_list_entry(capsys: pytest.CaptureFixture[str], flag: str,
                                    value: str) -> None:
    code = main(["compare", "small-2d", flag, value])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and flag in err and repr(value.split(",")[-1]) in err


def test_plot_gantt(tmp_path, tiny: Instance) -> None:
    from themis.plots import new_figure, plot_gantt

    res = tiny.simulate("themis", "scf")
    path = tmp_path / "g.png"
    ax = plot_gantt(res.schedule, path=path, title="t")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ax.get_title() == "t" and len(ax.patches) == len(res.schedule.stages)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["dim 0", "dim 1"]
    _, (mine,) = new_figure()
    assert plot_gantt(res.schedule, ax=mine) is mine
    assert not list(tmp_path.glob(".*.tmp")) and not list(tmp_path.glob(".g.png*"))


def test_simulate_and_compare_draw_gantt_charts(tmp_path, capsys: pytest.CaptureFixture[str]
                                                ) -> None:
    sim = tmp_path / "sim.png"
    assert main(["simulate", "small-3d", "--chunks", "6", "--gantt", str(sim)]) == 0
    both = tmp_path / "both.png"
    assert main(["compare", "small-2d", "--size", "16MiB", "--chunks", "2", "--solvers",
                 "cpsat", "--threads", "1", "--gantt", str(both)]) == 0
    capsys.readouterr()
    for p in (sim, both):
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
