"""One chunk default (issue 23): every command and timing takes --chunks, else the
system file's preferred-dataset-splits, else topologies.system.DEFAULT_SPLITS, and its
--help says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.cli import main
from topologies.system import DEFAULT_SPLITS

#: (command line, where its JSON keeps the splits).
COMMANDS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "simulate": (["simulate", "small-2d"], ("splits",)),
    "simulate-astra": (["simulate", "small-2d", "--timing", "astra-sim-1.0"], ("splits",)),
    "compare": (["compare", "small-2d", "--solvers", "", "--policies", "themis", "--intra",
                 "fifo", "--timing", "alpha-beta,astra-sim-1.0"], ("instance", "splits")),
    "solve": (["solve", "small-2d", "--deterministic-time", "0.2"], ("splits",)),
    "bound": (["bound", "small-2d"], ("splits",)),
    "improve": (["improve", "small-2d", "--evaluations", "0"], ("splits",)),
    "train": (["train", "microAllReduce", "small-2d"], ("config", "splits")),
    "train-alpha-beta": (["train", "microAllReduce", "small-2d", "--timing", "alpha-beta"],
                         ("config", "splits")),
    "design": (["design", "small-2d", "--total-bandwidth", "10"], ("splits",)),
}

SYSTEM = ("scheduling-policy: LIFO\nendpoint-delay: 10\nactive-chunks-per-dimension: 1\n"
          "preferred-dataset-splits: 8\nboost-mode: 1\ncollective-optimization: localBWAware\n")


def splits(capsys: pytest.CaptureFixture[str], argv: list[str], path: tuple[str, ...]) -> int:
    assert main([*argv, "--json"]) == 0
    value = json.loads(capsys.readouterr().out)
    for key in path:
        value = value[key]
    return value


def test_the_one_default_is_the_tutorial_dgx2_and_tpu_value() -> None:
    from topologies.presets import preset_system

    assert DEFAULT_SPLITS == 4
    for name in ("tpu", "dgx2"):
        system = preset_system(name)
        assert system is not None and system.chunks == DEFAULT_SPLITS


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_agrees_on_the_chunk_default(capsys, tmp_path: Path,
                                                   command: str) -> None:
    argv, path = COMMANDS[command]
    assert splits(capsys, argv, path) == DEFAULT_SPLITS
    system = tmp_path / "sys8.txt"
    system.write_text(SYSTEM)
    assert splits(capsys, [*argv, "--system", str(system)], path) == 8
    assert splits(capsys, [*argv, "--system", str(system), "--chunks", "2"], path) == 2


@pytest.mark.parametrize("command", sorted({argv[0] for argv, _ in COMMANDS.values()}))
def test_every_help_states_the_rule(capsys, command: str) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split()).replace("- ", "-")
    assert f"preferred-dataset-splits, else {DEFAULT_SPLITS}, in every command and timing" \
        in text


def test_a_training_sweep_without_chunks_or_system_runs_the_default(tmp_path: Path) -> None:
    from reports.sweep import load_spec

    spec = tmp_path / "s.toml"
    spec.write_text('[[training]]\nworkloads = ["microAllReduce"]\nnetworks = ["small-2d"]\n'
                    'policies = ["themis/fifo"]\nbound = false\n')
    (task,) = load_spec(spec).training
    assert task.case.config.chunks == DEFAULT_SPLITS
