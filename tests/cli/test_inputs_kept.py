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


@pytest.mark.parametrize(("argv", "flag"), [
    (["simulate", "small-2d", "--chunks", "1_6"], "--chunks"),
    (["simulate", "small-2d", "--chunks", "\u0661\u0666"], "--chunks"),  # Arabic-Indic 16
    (["simulate", "small-2d", "--size", "\uff11MiB"], "--size"),  # full-width 1
])
def test_numbers_in_other_digits_are_refused(capsys, argv, flag) -> None:
    """Python's int() reads ``1_6`` and non-ASCII digits; no other tool does, so the
    value is refused in one line naming the option (issue 23)."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith(f"themis: error: {flag} = ")


@pytest.mark.parametrize(("old", "new", "key"), [
    ("all-reduce-implementation: ring_halvingDoubling",
     "all-reduce-implementation: RING_halvingDoubling", "all-reduce-implementation[0]"),
    ("endpoint-delay: 10", "endpoint-delay: \uff11\uff10", "endpoint-delay"),
    ("preferred-dataset-splits: 16", "preferred-dataset-splits: 1_6",
     "preferred-dataset-splits"),
])
def test_system_file_spellings_astra_refuses(tmp_path, capsys, old, new, key) -> None:
    """ASTRA-sim 1.0 compares algorithm names exactly and reads numbers with std::stoi:
    what it stops on is refused here too, naming the file, the key and the value."""
    system = tmp_path / "system.txt"
    text = (EXAMPLES / "my_system.txt").read_text()
    assert old in text
    system.write_text(text.replace(old, new))
    assert main(["simulate", str(EXAMPLES / "my_net.yml"), "--system", str(system),
                 "--timing", "astra-sim-1.0"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert str(system) in err and key in err


def test_lower_case_topology_in_a_2x_yaml_is_refused(tmp_path, capsys) -> None:
    """ASTRA-sim 2.x's network YAML names topologies exactly (``Ring``); ``ring`` stops it."""
    net = tmp_path / "net.yml"
    net.write_text("topology: [ ring, Switch ]\nnpus_count: [ 4, 2 ]\n"
                   "bandwidth: [ 50.0, 25.0 ]\nlatency: [ 500.0, 500.0 ]\n")
    assert main(["simulate", str(net), "--timing", "astra-sim-2"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "topology[0]" in err and "Ring" in err and str(net) in err
