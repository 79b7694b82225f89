"""Never destroy an input: an output that resolves to an input file of the same command
is refused in one line, exit 2, and the input stays as it was (issue 23)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reports.cli import main

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("argv", [
    ["simulate", "{net}", "--schedule-out", "{net}"],
    ["simulate", "{net}", "--schedule-out", "{link}"],
    ["spec", "{net}", "--out", "{net}"],
    ["solve", "{net}", "--chunks", "2", "--schedule-out", "{net}"],
    ["simulate", "{net}", "--system", "{system}", "--timing", "astra-sim-1.0",
     "--schedule-out", "{system}"],
])
def test_an_output_naming_an_input_is_refused(tmp_path, capsys, argv) -> None:
    net = tmp_path / "net.yml"
    shutil.copy(EXAMPLES / "my_net.yml", net)
    system = tmp_path / "system.txt"
    shutil.copy(EXAMPLES / "my_system.txt", system)
    link = tmp_path / "link.yml"
    link.symlink_to(net)
    before = {p: p.read_bytes() for p in (net, system)}
    words = [w.format(net=net, link=link, system=system) for w in argv]
    code = main(words)
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "is an input of this command" in err
    assert {p: p.read_bytes() for p in (net, system)} == before


@pytest.mark.parametrize(("argv", "flag"), [
    (["simulate", "small-2d", "--gantt", ""], "--gantt"),
    (["simulate", "small-2d", "--schedule-out", ""], "--schedule-out"),
    (["simulate", "small-2d", "--intra="], "--intra"),
    (["spec", "small-2d", "--chunks", "2,,4"], "--chunks"),
    (["simulate", "small-2d", "--policy", "2,0,"], "--policy"),
    (["sweep", "x.toml", "--dask", ""], "--dask"),
])
def test_empty_values_are_refused(capsys, argv, flag) -> None:
    """An empty option value, or a list with an empty item, is one line naming the option
    (argparse took them, and the command fell back to a default silently)."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"themis: error: {flag} = ")
