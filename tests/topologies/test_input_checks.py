"""Inputs that used to be silently wrong: each is an error naming the file and the user's key."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from topologies import (
    Dimension,
    InputError,
    parse_network_json,
    parse_network_yaml,
    parse_system,
    read_system,
)

YAML = "topology: [Ring, Switch]\nnpus_count: [4, 2]\nbandwidth: [{bw}, 25]\nlatency: [5, 0]\n"
JSON10 = {"topologies-per-dim": ["Ring"], "units-count": [4], "links-count": [2],
          "link-bandwidth": [25], "link-latency": [0]}


def _error(call, *args) -> str:
    with pytest.raises(InputError) as err:
        call(*args)
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize("bw", ["1e-300", "1e-7", "2e9", "1e300"])
def test_bandwidth_out_of_the_meaningful_range(bw: str) -> None:
    msg = _error(parse_network_yaml, YAML.format(bw=bw), "net.yml")
    assert msg.startswith("net.yml: bandwidth[0] = ") and "out of range" in msg


@pytest.mark.parametrize("bw", ["1e-6", "1e9"])
def test_bandwidth_at_the_range_ends_is_accepted(bw: str) -> None:
    assert parse_network_yaml(YAML.format(bw=bw), "net.yml").dims[0].bandwidth_GBps == float(bw)


def test_json_bandwidth_range_names_link_bandwidth() -> None:
    doc = dict(JSON10, **{"link-bandwidth": [6e8]})  # 2 links x 6e8 = 1.2e9 GB/s
    msg = _error(parse_network_json, json.dumps(doc), "n.json")
    assert "n.json: link-bandwidth[0] = " in msg and "1.2e+09" in msg
    with pytest.raises(InputError, match="out of range"):
        Dimension("Ring", 4, 1e-12)
    with pytest.raises(InputError, match="latency too large"):
        Dimension("Ring", 4, 1.0, 1e300)


def test_stage_times_stay_finite_at_the_range_ends() -> None:
    # The largest size (1 PiB) at the smallest bandwidth, and the smallest size at the largest.
    from topologies.units import MAX_SIZE_BYTES

    slow = Dimension("Ring", 2, 1e-6)
    fast = Dimension("Ring", 2, 1e9)
    assert math.isfinite(MAX_SIZE_BYTES / slow.bandwidth_bytes_per_ns)
    assert 1 / fast.bandwidth_bytes_per_ns > 0


def test_custom_collective_system_file_is_refused() -> None:
    text = json.dumps({"preferred-dataset-splits": 1,
                       "all-reduce-implementation-custom": ["custom_allreduce"]})
    msg = _error(parse_system, text, "custom.json")
    assert msg.startswith("custom.json: all-reduce-implementation-custom = ")
    assert "all-reduce-implementation instead" in msg


@pytest.mark.parametrize(("name", "text", "key"), [
    ("net.yml", YAML.format(bw=50), "topology"),
    ("net.json", json.dumps(JSON10), "topologies-per-dim"),
])
def test_network_file_given_as_system(tmp_path: Path, name: str, text: str, key: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    msg = _error(read_system, path)
    assert msg.startswith(f"{path}: {key}: this is a network file")


@pytest.mark.parametrize("value", ["yes", "true", "2", "on"])
def test_boost_mode_is_0_or_1(value: str) -> None:
    msg = _error(parse_system, f"boost-mode: {value}\n", "sys.txt")
    assert msg == f"sys.txt: boost-mode = {value!r}: must be 0 or 1"


def test_boost_mode_0_1_and_json_booleans() -> None:
    assert parse_system("boost-mode: 1\n", "s.txt").boost_mode is True
    assert parse_system("boost-mode: 0\n", "s.txt").boost_mode is False
    assert parse_system('{"boost-mode": 1}', "s.json").boost_mode is True
    assert parse_system('{"boost-mode": false}', "s.json").boost_mode is False


def test_duplicate_yaml_key_names_key_and_line() -> None:
    text = YAML.format(bw=50) + "bandwidth: [1, 1]\n"
    msg = _error(parse_network_yaml, text, "dup.yml")
    assert msg.startswith("dup.yml: line 5 = 'bandwidth: [1, 1]'")
    assert "duplicate key 'bandwidth'" in msg


def test_duplicate_json_and_system_text_keys() -> None:
    text = '{"preferred-dataset-splits": 4, "preferred-dataset-splits": 8}'
    assert _error(parse_system, text, "s.json") == (
        "s.json: preferred-dataset-splits: duplicate key (given twice)")
    text = "endpoint-delay: 10\n# comment\nendpoint-delay: 20\n"
    msg = _error(parse_system, text, "s.txt")
    assert msg.startswith("s.txt: endpoint-delay = '20': duplicate key (line 3; first given "
                          "on line 1)")
    doc = json.dumps(JSON10)[:-1] + ', "units-count": [8]}'
    assert "units-count: duplicate key" in _error(parse_network_json, doc, "n.json")


@pytest.mark.parametrize("text", ["", "  \n\n", "# only a comment\n", "{}"])
def test_empty_system_file(text: str) -> None:
    msg = _error(parse_system, text, "sys.txt")
    assert msg.startswith("sys.txt: document: ") and ("empty" in msg or "no settings" in msg)


def test_float_counts_must_be_exact() -> None:
    msg = _error(parse_system, '{"preferred-dataset-splits": 1e30}', "s.json")
    assert msg.startswith("s.json: preferred-dataset-splits = 1e+30: too large")
    assert parse_system('{"preferred-dataset-splits": 1e3}', "s.json").chunks == 1000


@pytest.mark.parametrize(("text", "read"), [
    ("preferred-dataset-splits: 1e3", "as 1"), ("endpoint-delay: 2.5", "as 2"),
    ("active-chunks-per-dimension: 2x", "as 2"), ("boost-mode: 1.0", "as 1")])
def test_astra10_text_integers_are_written_as_integers(text: str, read: str) -> None:
    # ASTRA-sim 1.0 reads these keys into int with operator>>: it stops at the first
    # non-digit, so the file would mean something else to it.
    msg = _error(parse_system, text + "\n", "s.txt")
    assert msg.startswith(f"s.txt: {text.split(':')[0]} = ") and read in msg
    text = YAML.format(bw=50).replace("[4, 2]", "[4, 1e30]")
    assert "npus_count[1]" in _error(parse_network_yaml, text, "n.yml")
