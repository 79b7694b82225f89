"""A system file means what it means to ASTRA-sim 1.0 (issue 14 §1).

A key the file omits runs ASTRA-sim's own default (``Sys::Sys``: ascending,
FIFO, endpoint-delay 10, boost-mode 0, active-chunks-per-dimension 1), in
``simulate`` and ``train`` alike: omitting it gives the same numbers as writing
the default out. A key ASTRA-sim cannot run without, or a value naming an
algorithm not modelled here, is one line and exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.cli import main

#: Ring 4 x Switch 2: small, and every default below changes a number on it.
NET = """topology: [Ring, Switch]
npus_count: [4, 2]
bandwidth: [8, 2]
latency: [20, 500]
"""
#: Two data-parallel layers (a second collective issued while the first runs).
WORKLOAD = """DATA
2
l1 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 1048576 5
l2 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 4194304 5
"""
#: What ASTRA-sim 1.0 needs (it stops without these keys).
REQUIRED = """scheduling-policy: LIFO
collective-optimization: localBWAware
preferred-dataset-splits: 8
"""
#: ASTRA-sim 1.0's default for every key it has one for: key -> (default, another value).
DEFAULTS = {
    "inter-dimension-scheduling": ("ascending", "themis"),
    "intra-dimension-scheduling": ("FIFO", "SCF"),
    "endpoint-delay": ("10", "0"),
    "boost-mode": ("0", "1"),
    "active-chunks-per-dimension": ("1", "2"),
}


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _numbers(capsys, tmp_path: Path, system: str, command: str) -> float:
    net = _write(tmp_path, "net.yml", NET)
    sys_file = _write(tmp_path, "sys.txt", system)
    if command == "train":
        wl = _write(tmp_path, "wl.txt", WORKLOAD)
        argv = ["train", wl, net, "--system", sys_file, "--json"]
        key = "end_ns"
    else:
        argv = ["simulate", net, "--system", sys_file, "--size", "8MiB", "--json",
                "--timing", command.split(":")[1]]
        key = "makespan_ns"
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)[key]


@pytest.mark.parametrize("command", ["simulate:astra-sim-1.0", "simulate:alpha-beta", "train"])
@pytest.mark.parametrize("key", list(DEFAULTS))
def test_an_omitted_key_is_astra_sims_default(capsys, tmp_path: Path, key: str,
                                              command: str) -> None:
    default, other = DEFAULTS[key]
    omitted = _numbers(capsys, tmp_path, REQUIRED, command)
    written = _numbers(capsys, tmp_path, REQUIRED + f"{key}: {default}\n", command)
    assert omitted == written
    if command != "simulate:alpha-beta" and key != "boost-mode":
        # the key matters here, so the equality above says something
        # (boost-mode only breaks same-tick ties; alpha-beta reads only some keys)
        changed = _numbers(capsys, tmp_path, REQUIRED + f"{key}: {other}\n", command)
        assert changed != omitted, (key, other)


@pytest.mark.parametrize("command", ["simulate:astra-sim-1.0", "train"])
def test_no_scheduling_key_at_all_is_every_default_written_out(capsys, tmp_path: Path,
                                                               command: str) -> None:
    everything = REQUIRED + "".join(f"{k}: {d}\n" for k, (d, _) in DEFAULTS.items())
    assert _numbers(capsys, tmp_path, REQUIRED, command) == \
        _numbers(capsys, tmp_path, everything, command)


def test_the_readme_training_command_prints_astra_sims_number(capsys) -> None:
    # ASTRA-sim 1.0 on its tutorial tpu.txt (no scheduling key: ascending / FIFO)
    # prints "all passes finished at time: 5489225" for vgg16 (README, issue 14).
    tutorial = Path(__file__).parents[1] / "data" / "astra-sim-1.0" / "tutorial"
    code = main(["train", "vgg16", str(tutorial / "tpu.json"), "--system",
                 str(tutorial / "tpu.txt"), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["end_ns"] == 5489225
    assert data["config"]["policy"] == "baseline" and data["config"]["boost_mode"] is True


@pytest.mark.parametrize(("key", "argv"), [
    ("preferred-dataset-splits", ["simulate"]),
    ("collective-optimization", ["simulate", "--timing", "astra-sim-1.0"]),
    ("preferred-dataset-splits", ["train"]),
    ("collective-optimization", ["train"]),
    ("scheduling-policy", ["train"]),
])
def test_a_key_astra_sim_cannot_run_without_is_one_line(capsys, tmp_path: Path, key: str,
                                                        argv: list[str]) -> None:
    net = _write(tmp_path, "net.yml", NET)
    text = "".join(line + "\n" for line in REQUIRED.splitlines() if not line.startswith(key))
    sys_file = _write(tmp_path, "sys.txt", text)
    head = [argv[0], _write(tmp_path, "wl.txt", WORKLOAD)] if argv[0] == "train" else argv[:1]
    code = main([*head, net, "--system", sys_file, *argv[1:]])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and f"sys.txt: {key}: missing" in err, err
    if key == "preferred-dataset-splits":  # --chunks stands in for it
        assert main([*head, net, "--system", sys_file, *argv[1:], "--chunks", "4"]) == 0
        capsys.readouterr()


@pytest.mark.parametrize(("key", "value"), [
    ("inter-dimension-scheduling", "offlineGreedyFlex"),
    ("inter-dimension-scheduling", "themisFlex"),
    ("intra-dimension-scheduling", "RG"),
    ("intra-dimension-scheduling", "lessRemainingPhaseFirst"),
])
def test_an_algorithm_not_modelled_is_refused(capsys, tmp_path: Path, key: str,
                                              value: str) -> None:
    net = _write(tmp_path, "net.yml", NET)
    sys_file = _write(tmp_path, "sys.txt", REQUIRED + f"{key}: {value}\n")
    for argv in (["simulate", net], ["train", _write(tmp_path, "wl.txt", WORKLOAD), net]):
        assert main([*argv, "--system", sys_file]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"sys.txt: {key} = '{value}'" in err, err
        assert "not modelled" in err
    flag = "--policy" if key.startswith("inter") else "--intra"
    assert main(["simulate", net, flag, value]) == 2
    assert "not modelled" in capsys.readouterr().err


@pytest.mark.parametrize("optimization", ["baseline", "localBWAware"])
@pytest.mark.parametrize("inter", ["ascending", "themis", "roundRobin"])
def test_simulate_and_train_agree_on_collective_optimization(capsys, tmp_path: Path,
                                                             optimization: str,
                                                             inter: str) -> None:
    # One all-reduce: train's end is simulate's makespan plus the 1 ns update time.
    # (collective-optimization baseline runs a whole all-reduce per dimension under
    # every policy, Themis too: Sys::generate_collective.)
    net = _write(tmp_path, "net.yml", NET)
    sys_file = _write(tmp_path, "sys.txt", REQUIRED.replace("localBWAware", optimization)
                      + f"inter-dimension-scheduling: {inter}\n")
    wl = _write(tmp_path, "wl.txt", "MICRO\n1\nar -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8388608 1\n")
    assert main(["simulate", net, "--system", sys_file, "--size", "8MiB",
                 "--timing", "astra-sim-1.0", "--json"]) == 0
    makespan = json.loads(capsys.readouterr().out)["makespan_ns"]
    assert main(["train", wl, net, "--system", sys_file, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["end_ns"] == makespan + 1


def test_the_text_output_names_the_defaults_it_ran(capsys, tmp_path: Path) -> None:
    net = _write(tmp_path, "net.yml", NET)
    sys_file = _write(tmp_path, "sys.txt", REQUIRED + "endpoint-delay: 10\n")
    for argv in (["simulate", net], ["train", _write(tmp_path, "wl.txt", WORKLOAD), net]):
        assert main([*argv, "--system", sys_file]) == 0
        line = next(x for x in capsys.readouterr().out.splitlines() if "omits" in x)
        assert "inter-dimension-scheduling ascending (baseline)" in line
        assert "boost-mode 0" in line and "endpoint-delay" not in line  # it was given


def test_a_2x_json_file_missing_a_required_key_names_2x(capsys, tmp_path: Path) -> None:
    net = _write(tmp_path, "net.yml", NET)
    sys_file = _write(tmp_path, "sys.json", '{"preferred-dataset-splits": 4}')
    assert main(["simulate", net, "--system", sys_file, "--timing", "astra-sim-1.0"]) == 2
    err = capsys.readouterr().err
    assert "sys.json: collective-optimization: missing: ASTRA-sim 2.x never finishes" in err


@pytest.mark.parametrize(("key", "value", "spelled"), [
    ("intra-dimension-scheduling", "fifo", "FIFO"),
    ("intra-dimension-scheduling", "scf", "SCF"),
    ("inter-dimension-scheduling", "round-robin", "roundRobin"),
    ("inter-dimension-scheduling", "Themis", "themis"),
    ("scheduling-policy", "lifo", "LIFO"),
    ("collective-optimization", "localbwaware", "localBWAware"),
])
def test_a_spelling_astra_sim_stops_on_is_refused_in_10_text(key: str, value: str,
                                                            spelled: str) -> None:
    # Sys::parse_var / post_process_inputs compare exact strings: ASTRA-sim 1.0 exits.
    from topologies.astra import parse_system
    from topologies.errors import InputError

    with pytest.raises(InputError, match=f"write {spelled}") as err:
        parse_system(f"{key}: {value}\n", "s.txt")
    assert str(err.value).startswith(f"s.txt: {key} = '{value}': ASTRA-sim 1.0 stops")
    parse_system(f"{key}: {spelled}\n", "s.txt")  # its own spelling is read
    parse_system(f'{{"{key}": "{value}"}}', "s.json")  # a 2.x JSON file stays lenient


def test_a_key_without_a_space_after_its_colon_is_refused_in_10_text() -> None:
    # ASTRA-sim 1.0 reads whitespace-separated tokens: `endpoint-delay:10` is one token,
    # an unknown variable to it.
    from topologies.astra import parse_system
    from topologies.errors import InputError

    with pytest.raises(InputError, match="needs a space after the colon") as err:
        parse_system("preferred-dataset-splits: 4\nendpoint-delay:10\n", "s.txt")
    assert str(err.value).startswith("s.txt: endpoint-delay = '10':") and "line 2" in str(err.value)
    assert parse_system("endpoint-delay:\t10\n", "s.txt").endpoint_delay_ns == 10
