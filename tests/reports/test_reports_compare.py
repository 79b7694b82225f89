"""compare(): agrees with solve() and simulate(); ``themis compare`` CLI; plot_gantt."""

from __future__ import annotations

import json

import pytest

from reports.cli import main
from reports.compare import compare
from reports.methods import parse_names
from reports.scoring import reference, score
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


def test_compare_agrees_with_solve_and_scores_rows(tiny: Instance, comparison) -> None:
    from solvers import solve

    assert [r.method for r in comparison.rows] == [
        "baseline/fifo", "baseline/scf", "round-robin/fifo", "round-robin/scf",
        "themis/fifo", "themis/scf", "cpsat"]
    assert [(b.method, b.ag_order) for b in comparison.bounds] == [("bound", "reverse")]
    solved = solve(tiny, solver="cpsat", time_limit_s=20, threads=1)
    row = comparison.row("cpsat")
    assert solved.status == row.status == "optimal"
    assert row.makespan_ns == pytest.approx(solved.makespan_ns, rel=1e-9)
    # Every policy schedule is feasible for the reverse variant: none beats the optimum.
    assert comparison.best_ns == pytest.approx(row.makespan_ns, rel=1e-9)
    assert comparison.best_proven and row.gap == pytest.approx(0, abs=1e-12)
    assert comparison.lower_bound_ns <= comparison.best_ns * (1 + 1e-9)
    for r in comparison.rows:
        assert r.kind == ("solver" if r.method == "cpsat" else "policy")
        assert r.gap >= -1e-12 and r.gap_bound >= r.gap - 1e-12
    assert comparison.row("round-robin/fifo").gap > 0.1


def test_compare_known_answers_with_a_fixed_route() -> None:
    """Ring 2 @ 2 x Ring 2 @ 1 GB/s (GiB/s), no latency, 8 MiB in one chunk.

    Route (0, 1): RS S/2 at 2, then S/4 at 1; AG the same back: S/4 * 4 = S per GiB/s,
    8 MiB -> 2**23 / 2**30 s = 7,812,500 ns. Route (1, 0): S/2 at 1, S/4 at 2, twice:
    1.25 S = 9,765,625 ns, a gap of exactly 25%. One chunk: the best route is optimal.
    """
    from tests.solvers.solver_cases import binary_network

    inst = Instance(binary_network(), 8 << 20, 1)
    comp = compare(inst, ["themis", "1,0"], ["fifo"], ["cpsat"], time_limit_s=20, threads=1)
    assert comp.row("themis/fifo").makespan_ns == pytest.approx(7_812_500, rel=1e-12)
    fixed = comp.row("1,0/fifo")
    assert fixed.policy == "1,0" and fixed.makespan_ns == pytest.approx(9_765_625, rel=1e-12)
    assert comp.best_ns == pytest.approx(7_812_500, rel=1e-9) and comp.best_proven
    assert fixed.gap == pytest.approx(0.25, rel=1e-9)
    with pytest.raises(InputError) as err:
        compare(inst, ["0,1,2"], ["fifo"], [])
    assert err.value.field == "route" or "permutation" in err.value.reason


def test_a_registered_policy_is_usable_from_compare_and_the_cli(
        backwards_policy: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A policy registered in the test runs by its name, like in simulate."""
    from tests.solvers.solver_cases import binary_network

    inst = Instance(binary_network(), 8 << 20, 1)
    comp = compare(inst, ["backwards", "1,0"], ["fifo"], [])
    # Backwards on two dimensions is the route (1, 0): 9,765,625 ns (see above).
    assert comp.row("backwards/fifo").makespan_ns == pytest.approx(9_765_625, rel=1e-12)
    assert comp.row("backwards/fifo").makespan_ns == comp.row("1,0/fifo").makespan_ns
    assert main(["compare", "small-2d", "--chunks", "2", "--solvers", "",
                 "--policies", "backwards,themis,1,0", "--intra", "fifo", "--json"]) == 0
    methods = [r["method"] for r in json.loads(capsys.readouterr().out)["rows"]]
    assert methods == ["backwards/fifo", "themis/fifo", "1,0/fifo"]


def test_reference_rules() -> None:
    """Free-AG schedules do not count as best for the reverse variant; reverse LBs not for free."""
    from reports.records import MethodResult

    rows = [MethodResult("themis/scf", "policy", "simulated", makespan_ns=110.0),
            MethodResult("cpsat", "solver", "optimal", "free", makespan_ns=90.0,
                         lower_bound_ns=90.0),
            MethodResult("bound", "bound", "bound", "reverse", lower_bound_ns=100.0)]
    rev, free = reference(rows, "reverse"), reference(rows, "free")
    assert (rev.best_ns, rev.lower_bound_ns, rev.proven) == (110.0, 100.0, False)
    assert (free.best_ns, free.lower_bound_ns, free.proven) == (90.0, 90.0, True)
    # scored against its own variant: the free optimum has no negative gap to a reverse LB
    score(rows)
    assert rows[1].gap == 0.0 and rows[1].gap_bound == 0.0
    assert rows[0].gap == 0.0 and rows[0].gap_bound == pytest.approx(0.1)


def test_parse_names() -> None:
    assert parse_names("themis, offlineGreedy,baseline", "policy", "--policies") == (
        "themis", "baseline")
    assert parse_names("themis,2,0,1,baseline,1,0", "policy", "--policies") == (
        "themis", "2,0,1", "baseline", "1,0")
    assert parse_names("", "solver", "--solvers") == ()
    assert parse_names("FIFO,smallestFirst", "intra", "--intra") == ("fifo", "scf")
    with pytest.raises(InputError) as err:
        parse_names("cpsat,gurobi", "solver", "--solvers")
    assert err.value.field == "--solvers" and err.value.value == "gurobi"
    with pytest.raises(InputError) as err:
        parse_names("themis,greedy", "policy", "--policies")
    assert "fixed" not in err.value.reason.split("(")[1].split(",")[0]


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


def test_cli_compare_runs_every_bundled_policy_and_discipline_by_default(
        capsys: pytest.CaptureFixture[str]) -> None:
    from themis.disciplines import discipline_names
    from themis.policies import policy_names

    code = main(["compare", "small-2d", "--chunks", "2", "--solvers", "", "--json"])
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert code == 0
    names = [p for p in policy_names() if p != "fixed"]  # "fixed" needs a route
    assert sorted(r["method"] for r in rows) == sorted(
        f"{p}/{q}" for p in names for q in discipline_names())
    by = {r["method"]: r["makespan_ns"] for r in rows}
    for q in discipline_names():  # the portfolio is never slower than baseline or Themis
        assert by[f"portfolio/{q}"] <= min(by[f"baseline/{q}"], by[f"themis/{q}"]) * (1 + 1e-12)


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


def test_compare_is_a_one_instance_sweep(tmp_path) -> None:
    """compare and a sweep + report of the same instance give the same rows and scores."""
    import io

    from reports import db
    from reports.report import group
    from reports.sweep import run_sweep

    inst = Instance(resolve_network("small-3d"), 1 << 20, 4)
    comp = compare(inst, ["themis", "baseline", "2,1,0"], ["fifo", "scf"], [])
    spec = tmp_path / "s.toml"
    spec.write_text('[[grid]]\nnetworks = ["small-3d"]\nsizes = ["1MiB"]\nchunks = [4]\n'
                    'policies = ["themis", "baseline", "2,1,0"]\nintra = ["fifo", "scf"]\n')
    run_sweep(str(spec), str(tmp_path / "r.sqlite"), workers=1, stream=io.StringIO())
    conn = db.connect(tmp_path / "r.sqlite", create=False)
    (swept,) = group(db.read_rows(conn))
    conn.close()
    assert sorted(r.method for r in swept.rows) == sorted(["bound"] + [r.method for r in comp.rows])
    for r in comp.rows:
        s = swept.by_method[r.method]
        assert (s.makespan_ns, s.gap, s.gap_bound) == (r.makespan_ns, r.gap, r.gap_bound)
    assert swept.lower_bound_ns == comp.lower_bound_ns and swept.best_ns == comp.best_ns
