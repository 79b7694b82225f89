"""The window LP keeps at most MAX_WINDOWS thresholds (issue 23: a 20,000-layer iteration
took 1.6 GB, most of it the LP): thinned, it is a relaxation of the full LP, so never
above it and still below every run's end; under the cap nothing changes."""

from __future__ import annotations

import pytest

import themis.training.bound as bound_module
from reports.cli.common import load_network
from themis.training import TrainingConfig, simulate_training
from topologies.workload import load_workload


def _workload(tmp_path, layers: int):
    lines = ["DATA", str(layers)]
    lines += [f"l{i}\t-1\t{1000 + 37 * i}\tNONE\t0\t2000\tNONE\t0\t{500 + 11 * i}\tALLREDUCE"
              f"\t{4096 * (1 + i % 5)}\t1" for i in range(layers)]
    path = tmp_path / "w.txt"
    path.write_text("\n".join(lines) + "\n")
    return load_workload(str(path))


@pytest.mark.parametrize("policy", ["baseline", "themis"])
def test_thinned_windows_relax_the_full_lp(tmp_path, monkeypatch, policy) -> None:
    wl = _workload(tmp_path, 40)
    net = load_network("small-2d")
    cfg = TrainingConfig(policy=policy, chunks=4)
    seen: list[int] = []
    real = bound_module.WindowBound.windows_ns

    def spy(self, issued):
        seen.append(len({e for e, _, _ in issued}))
        return real(self, issued)

    monkeypatch.setattr(bound_module.WindowBound, "windows_ns", spy)
    full = simulate_training(wl, net, cfg)
    assert max(seen) > 4  # the case has more thresholds than the cap below
    monkeypatch.setattr(bound_module, "MAX_WINDOWS", 4)
    thin = simulate_training(wl, net, cfg)
    assert thin.end_ns == full.end_ns  # the run itself does not depend on the bound
    assert 0 < thin.lower_bound_ns <= full.lower_bound_ns <= full.end_ns
    monkeypatch.setattr(bound_module, "MAX_WINDOWS", max(seen))
    assert simulate_training(wl, net, cfg).lower_bound_ns == full.lower_bound_ns
