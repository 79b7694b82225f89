"""compare, spec, sweep and report under another timing model than alpha-beta (issue 14 §3).

The policies' rows of a timing are cross-checked against ``themis simulate --timing``
(the same numbers), the solvers and bounds stay alpha-beta, alpha-beta task keys do not
change when a spec adds a timing, and each row says which timing it used.
"""

from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import pytest

from reports.cli import main
from reports.compare import compare
from reports.records import Kind
from reports.sweep import load_spec, run_sweep
from themis.instance import Instance
from topologies.errors import InputError
from topologies.presets import preset_network

MiB = 1 << 20

SPEC = """
[[grid]]
networks = ["small-2d"]
sizes = ["16MiB"]
chunks = [2, 3]
endpoint_delay_ns = [10]
policies = ["baseline", "themis", "portfolio"]
intra = ["fifo", "scf"]
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text))
    return path


def simulate_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["simulate", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_compare_under_astra_matches_simulate_and_keeps_solvers_alpha_beta(
        capsys: pytest.CaptureFixture[str]) -> None:
    inst = Instance(preset_network("small-2d"), 16 * MiB, 3, 10.0)
    comp = compare(inst, ["baseline", "themis", "portfolio"], ["fifo", "scf"], ["highs"],
                   timings=["alpha-beta", "astra-sim-1.0"])
    astra = [r for r in comp.rows if r.timing == "astra-sim-1.0"]
    assert {r.kind for r in astra} == {Kind.POLICY} and len(astra) == 6
    assert all(r.timing == "alpha-beta" for r in comp.rows + comp.bounds
               if r.kind != Kind.POLICY)
    for r in astra:
        want = simulate_json(capsys, "small-2d", "--size", "16MiB", "--chunks", "3",
                             "--endpoint-delay", "10", "--timing", "astra-sim-1.0",
                             "--policy", r.policy, "--intra", r.intra)["makespan_ns"]
        assert r.makespan_ns == want
        assert r.gap_bound is None  # the bounds are of the alpha-beta model
    best = min(r.makespan_ns for r in astra)
    assert comp.timing_references["astra-sim-1.0"].best_ns == best
    assert all(r.gap == pytest.approx((r.makespan_ns - best) / best) for r in astra)
    # The alpha-beta best and bound ignore the astra rows.
    ab = [r.makespan_ns for r in comp.rows if r.timing == "alpha-beta"]
    assert comp.best_ns == min(ab)
    # The portfolio keeps its promise in the table too.
    by = {(r.policy, r.intra): r.makespan_ns for r in astra}
    for q in ("fifo", "scf"):
        assert by["portfolio", q] <= min(by["baseline", q], by["themis", q])


def test_compare_cli_timing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "small-2d", "--size", "16MiB", "--chunks", "2", "--solvers", "",
                 "--policies", "baseline,themis", "--timing", "astra-sim-1.0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # lrw is left out of the default disciplines: ASTRA-sim 1.0 runs FIFO and SCF.
    assert sorted(r["method"] for r in out["rows"]) == [
        "baseline/fifo@astra-sim-1.0", "baseline/scf@astra-sim-1.0",
        "themis/fifo@astra-sim-1.0", "themis/scf@astra-sim-1.0"]
    assert {r["timing"] for r in out["rows"]} == {"astra-sim-1.0"}
    assert out["timings"] == ["astra-sim-1.0"]
    assert main(["compare", "small-2d", "--size", "16MiB", "--chunks", "2", "--solvers", "",
                 "--timing", "astra-sim-1.0"]) == 0
    text = capsys.readouterr().out
    assert "timing" in text.splitlines()[1] and "astra-sim-1.0: best policy" in text


@pytest.mark.parametrize(("argv", "flag", "value"), [
    (["--timing", "astra-sim-9"], "--timing", "astra-sim-9"),
    (["--timing", "astra-sim-1.0", "--intra", "lrw"], "intra", "lrw"),
])
def test_compare_timing_errors_are_one_line(argv, flag, value,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "small-2d", "--chunks", "2", "--solvers", "", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err and value in err


def test_spec_timing_keeps_alpha_beta_keys(tmp_path: Path) -> None:
    plain = load_spec(write(tmp_path / "a.toml", SPEC))
    timed = load_spec(write(tmp_path / "b.toml",
                            'timing = ["alpha-beta", "astra-sim-1.0"]\n' + SPEC))
    plain_keys = {t.key for t in plain.tasks}
    timed_keys = {t.key for t in timed.tasks}
    assert plain_keys < timed_keys
    extra = [t for t in timed.tasks if t.key not in plain_keys]
    assert len(extra) == 2 * 3 * 2 and all(t.method.timing == "astra-sim-1.0" for t in extra)
    assert all(t.key.endswith("@astra-sim-1.0:reverse") for t in extra)


@pytest.mark.parametrize(("head", "grid", "key", "value"), [
    ('timing = "astra-sim-9"\n', "", "timing", "astra-sim-9"),
    ("", 'timing = ["alpha-beta", 3]\n', "grid[0].timing[1]", "3"),
    ('timing = "astra-sim-1.0"\n', 'intra = ["fifo", "lrw"]\n', "grid[0].intra[1]", "lrw"),
])
def test_spec_timing_errors_name_the_key(tmp_path: Path, head: str, grid: str, key: str,
                                         value: str) -> None:
    text = head + SPEC.replace('intra = ["fifo", "scf"]\n', "") + grid
    path = write(tmp_path / "s.toml", text)
    with pytest.raises(InputError) as err:
        load_spec(path)
    assert err.value.field == key and str(err.value.value) == value
    assert err.value.file == str(path)


def test_spec_command_writes_a_timing_key(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.toml"
    assert main(["spec", "small-2d", "--chunks", "2", "--solvers", "", "--timing",
                 "alpha-beta,astra-sim-1.0", "--out", str(out)]) == 0
    spec = load_spec(out)
    assert {t.method.timing for t in spec.tasks if t.kind == Kind.POLICY} == {
        "alpha-beta", "astra-sim-1.0"}
    assert main(["spec", "small-2d", "--chunks", "2", "--solvers", "",
                 "--out", str(tmp_path / "p.toml")]) == 0
    assert "timing" not in (tmp_path / "p.toml").read_text()


def test_sweep_and_report_say_each_rows_timing(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    spec = write(tmp_path / "s.toml", 'timing = ["alpha-beta", "astra-sim-1.0"]\n' + SPEC)
    db = tmp_path / "r.sqlite"
    assert run_sweep(str(spec), str(db), workers=1).failed == 0
    assert main(["report", str(db), "--out", str(tmp_path / "rep")]) == 0
    with open(tmp_path / "rep" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        assert r["timing"] == ("astra-sim-1.0" if r["method"].endswith("@astra-sim-1.0")
                               else "alpha-beta")
    readme = (tmp_path / "rep" / "README.md").read_text()
    assert "## Under other timing models" in readme and "`themis/scf@astra-sim-1.0`" in readme
    # Without a timing key the CSV has no timing column (what it always wrote).
    spec2 = write(tmp_path / "p.toml", SPEC)
    assert run_sweep(str(spec2), str(tmp_path / "p.sqlite"), workers=1).failed == 0
    assert main(["report", str(tmp_path / "p.sqlite"), "--out", str(tmp_path / "rep2")]) == 0
    head = (tmp_path / "rep2" / "results.csv").read_text().splitlines()[0].split(",")
    assert "timing" not in head
    assert "Under other timing" not in (tmp_path / "rep2" / "README.md").read_text()


def test_compare_under_every_registered_timing_matches_simulate(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Each registered timing (astra-sim-2 included) times the rows as ``themis simulate
    --timing`` does; the --timing help lists the registry."""
    from themis.timing import timing_names

    inst = Instance(preset_network("small-2d"), 16 * MiB, 3, 10.0)
    comp = compare(inst, ["themis"], ["fifo"], [], timings=timing_names())
    assert {r.timing for r in comp.rows} == set(timing_names())
    for r in comp.rows:
        want = simulate_json(capsys, "small-2d", "--size", "16MiB", "--chunks", "3",
                             "--endpoint-delay", "10", "--timing", r.timing,
                             "--policy", "themis", "--intra", "fifo")["makespan_ns"]
        assert r.makespan_ns == pytest.approx(want, rel=1e-12)
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = capsys.readouterr().out
    assert all(t in text for t in timing_names())
