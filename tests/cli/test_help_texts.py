"""Help texts list what works, read from the registries (issue 14 §5)."""

from __future__ import annotations

import re

import pytest

import themis.disciplines.base as disciplines
import themis.policies.base as policies
from reports.cli import build_parser
from reports.methods import every_intra, every_policy
from reports.report.training import spec_table


def _help(command: str) -> str:
    sub = build_parser()._subparsers._group_actions[0].choices[command]  # type: ignore[union-attr]
    return re.sub(r"\s+", " ", sub.format_help())


@pytest.mark.parametrize("command", ["simulate", "train", "compare", "spec"])
def test_every_registered_policy_and_discipline_is_listed(command: str, monkeypatch) -> None:
    # a policy and a discipline registered now show up: the lists are not hard-coded
    monkeypatch.setitem(policies._POLICIES, "my-policy", policies._POLICIES["baseline"])
    monkeypatch.setitem(disciplines._REGISTRY, "my-queue", disciplines._REGISTRY["fifo"])
    monkeypatch.setattr(disciplines, "_PUBLIC", [*disciplines._PUBLIC, "my-queue"])
    text = _help(command).replace("- ", "-")  # argparse wraps at hyphens
    for name in [*policies.policy_names(), *disciplines.discipline_names()]:
        if name != "fixed":
            assert name in text, (command, name)
    assert "my-policy" in every_policy() and "my-queue" in every_intra()


def test_train_report_states_its_default_networks() -> None:
    text = _help("train-report").replace("- ", "-")
    networks = spec_table()["networks"]
    assert len(networks) == 10 and ", ".join(networks) in text


def test_spec_defaults_are_every_method_and_deterministic_budgets(capsys) -> None:
    import tomllib

    from reports.cli import main

    assert main(["spec", "small-2d", "--solvers", "cpsat,highs"]) == 0
    spec = tomllib.loads(capsys.readouterr().out)
    grid = spec["grid"][0]
    assert grid["policies"] == list(every_policy())
    assert grid["intra"] == list(every_intra())
    assert spec["solver_params"]["cpsat"]["deterministic_time_s"] > 0
    assert spec["solver_params"]["highs"]["node_limit"] > 0
