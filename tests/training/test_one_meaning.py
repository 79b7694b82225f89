"""One meaning per run (issue 22, part A): ``train`` on the one-collective MICRO
workload ``tutorial/all_reduce.txt`` (1 MiB) with ``--comm-scale 1024`` is a 1 GiB
all-reduce followed by the 1 ns update, so it ends exactly 1 ns after ``simulate``
of that all-reduce, for every policy, under alpha-beta and ASTRA-sim 1.0, with a
localBWAware system file and a baseline one (the issue's table showed four
policies where the two commands disagreed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.cli import main

REF = Path(__file__).resolve().parents[1] / "data" / "astra-sim-1.0" / "tutorial"
POLICIES = ["baseline", "themis", "lb-mix", "guarded", "portfolio", "2,0,1"]


def _system(tmp_path: Path, optimization: str) -> Path:
    """The tutorial's localBWAware Themis system file, or the same file with
    ``collective-optimization: baseline``."""
    text = (REF / "3d_switch_themis.txt").read_text()
    if optimization == "localBWAware":
        return REF / "3d_switch_themis.txt"
    assert "collective-optimization: localBWAware" in text
    out = tmp_path / "3d_switch_themis_baseline_opt.txt"
    out.write_text(text.replace("collective-optimization: localBWAware",
                                "collective-optimization: baseline"))
    return out


def _end(capsys: pytest.CaptureFixture[str], argv: list[str], key: str) -> int:
    assert main([*argv, "--json"]) == 0
    return int(json.loads(capsys.readouterr().out)[key])


@pytest.mark.parametrize("optimization", ["localBWAware", "baseline"])
@pytest.mark.parametrize("timing", ["astra-sim-1.0", "alpha-beta"])
@pytest.mark.parametrize("policy", POLICIES)
def test_train_of_one_all_reduce_is_simulate_plus_the_update(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, policy: str, timing: str,
        optimization: str) -> None:
    system = str(_system(tmp_path, optimization))
    common = [str(REF / "3d_switch.json"), "--system", system, "--timing", timing,
              "--policy", policy]
    sim = _end(capsys, ["simulate", *common, "--size", "1GiB"], "makespan_ns")
    trained = _end(capsys, ["train", str(REF / "all_reduce.txt"), *common,
                            "--comm-scale", "1024"], "end_ns")
    assert trained == sim + 1


def test_only_alpha_beta_is_re_timed_with_exact_fractions() -> None:
    # The exact model's fraction re-timing asks the timing's meaning, not its name.
    from themis.timing import timing_meaning, timing_names

    exact = {name for name in timing_names() if timing_meaning(name).affine_exact}
    assert exact == {"alpha-beta"}
