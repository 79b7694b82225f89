"""Bad inputs: every message names the file, the field and the value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topologies import (
    InputError,
    parse_network_yaml,
    parse_size,
    read_network,
    read_system,
    validate_algorithms,
    validate_system,
)

GOOD_YAML = {
    "topology": ["Ring", "Switch"],
    "npus_count": [4, 8],
    "bandwidth": [50, 25],
    "latency": [20, 700],
}
GOOD_JSON = {
    "topologies-per-dim": ["Ring", "Switch"],
    "units-count": [4, 8],
    "links-count": [2, 1],
    "link-bandwidth": [25, 25],
    "link-latency": [20, 700],
}


def _yaml(**changes: object) -> str:
    doc = {**GOOD_YAML, **changes}
    return "".join(f"{k}: {json.dumps(v)}\n" for k, v in doc.items())


def _json(**changes: object) -> str:
    doc = {k.replace("_", "-"): v for k, v in {**GOOD_JSON, **changes}.items()}
    return json.dumps(doc)


def _without(doc: dict, key: str) -> dict:
    return {k: v for k, v in doc.items() if k != key}


# (id, file name, content or None for a missing file, field, value text in the message)
NETWORK_CASES = [
    ("missing file", "missing.yml", None, "path", "missing.yml"),
    ("bad yaml", "n.yml", "topology: [Ring, Switch\nnpus_count: [4, 8]\n", "line 2",
     "npus_count: [4, 8]"),
    ("bad json", "n.json", '{"topologies-per-dim": ["Ring",]}', "line 1",
     '["Ring",]'),
    ("yaml not a mapping", "n.yml", "- Ring\n- Switch\n", "document", "'list'"),
    ("empty yaml", "n.yml", "", "document", None),
    ("unknown topology", "n.yml", _yaml(topology=["Ring", "Torus"]), "topology[1]", "'Torus'"),
    ("topology not a string", "n.yml", _yaml(topology=["Ring", 3]), "topology[1]", "3"),
    ("lists differ", "n.yml", _yaml(npus_count=[4, 8, 2]), "npus_count", "[4, 8, 2]"),
    ("not a list", "n.yml", _yaml(bandwidth=50), "bandwidth", "50"),
    ("missing key", "n.yml", "".join(f"{k}: {json.dumps(v)}\n"
                                     for k, v in _without(GOOD_YAML, "latency").items()),
     "latency", None),
    ("npus 0", "n.yml", _yaml(npus_count=[4, 0]), "npus_count[1]", "0"),
    ("npus fractional", "n.yml", _yaml(npus_count=[4, 2.5]), "npus_count[1]", "2.5"),
    ("npus total 1", "n.yml", _yaml(npus_count=[1, 1]), "npus_count", "[1, 1]"),
    ("bandwidth 0", "n.yml", _yaml(bandwidth=[0, 25]), "bandwidth[0]", "0"),
    ("bandwidth tbd", "n.yml", _yaml(bandwidth=[50, "tbd"]), "bandwidth[1]", "'tbd'"),
    ("bandwidth bool", "n.yml", _yaml(bandwidth=[True, 25]), "bandwidth[0]", "True"),
    ("negative latency", "n.yml", _yaml(latency=[-5, 700]), "latency[0]", "-5"),
    ("json units 0", "n.json", _json(units_count=[0, 8]), "units-count[0]", "0"),
    ("json links 0", "n.json", _json(links_count=[2, 0]), "links-count[1]", "0"),
    ("json ring with 1 link", "n.json", _json(links_count=[1, 1]), "links-count[0]", "1"),
    ("json fc with too few links", "n.json",
     _json(topologies_per_dim=["FullyConnected", "Switch"]), "links-count[0]", "2"),
    ("json bandwidth tbd", "n.json", _json(link_bandwidth=["tbd", 25]), "link-bandwidth[0]",
     "'tbd'"),
    ("json bandwidth negative", "n.json", _json(link_bandwidth=[25, -1]), "link-bandwidth[1]",
     "-1"),
    ("json negative latency", "n.json", _json(link_latency=[20, -700]), "link-latency[1]",
     "-700"),
    ("json lists differ", "n.json", _json(link_latency=[20]), "link-latency", "[20]"),
    ("json unknown topology", "n.json", _json(topologies_per_dim=["Torus", "Switch"]),
     "topologies-per-dim[0]", "'Torus'"),
    ("json dimensions-count disagrees", "n.json", _json(dimensions_count=3),
     "dimensions-count", "3"),
    ("json nic-latency entries", "n.json", _json(nic_latency=[10, -2]), "nic-latency[1]",
     "-2"),
    ("json nic-latency negative", "n.json", _json(nic_latency=-1), "nic-latency", "-1"),
    ("json infinite bandwidth", "n.json", _json(link_bandwidth=[25, float("inf")]),
     "link-bandwidth[1]", "inf"),
    ("unknown file type", "n.txt", "topology: [Ring]\n", "path", "n.txt"),
]


@pytest.mark.parametrize(
    ("name", "content", "field", "value"),
    [case[1:] for case in NETWORK_CASES],
    ids=[case[0] for case in NETWORK_CASES],
)
def test_bad_network(
    tmp_path: Path, name: str, content: str | None, field: str, value: str | None
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError) as info:
        read_network(path)
    err = info.value
    message = str(err)
    assert err.file == str(path)
    assert message.startswith(f"{path}: {field}")
    assert err.field == field
    if value is not None:
        assert value in message
    assert "\n" not in message


GOOD_SYSTEM = {
    "scheduling-policy": "LIFO",
    "endpoint-delay": "10",
    "active-chunks-per-dimension": "1",
    "preferred-dataset-splits": "64",
    "boost-mode": "1",
    "all-reduce-implementation": "ring_halvingDoubling",
    "collective-optimization": "localBWAware",
    "intra-dimension-scheduling": "FIFO",
    "inter-dimension-scheduling": "themis",
}


def _system(**changes: str) -> str:
    doc = {**GOOD_SYSTEM, **{k.replace("_", "-"): v for k, v in changes.items()}}
    return "".join(f"{k}: {v}\n" for k, v in doc.items())


SYSTEM_CASES = [
    ("missing file", "missing.txt", None, "path", "missing.txt"),
    ("unknown algorithm", "s.txt", _system(all_reduce_implementation="ring_foo"),
     "all-reduce-implementation[1]", "'foo'"),
    ("empty algorithm", "s.txt", _system(all_reduce_implementation="ring__ring"),
     "all-reduce-implementation[1]", "''"),
    ("unknown inter", "s.txt", _system(inter_dimension_scheduling="greedy"),
     "inter-dimension-scheduling", "'greedy'"),
    ("unknown intra", "s.txt", _system(intra_dimension_scheduling="RG"),
     "intra-dimension-scheduling", "'RG'"),
    ("chunks 0", "s.txt", _system(preferred_dataset_splits="0"), "preferred-dataset-splits",
     "0"),
    ("chunks abc", "s.txt", _system(preferred_dataset_splits="abc"),
     "preferred-dataset-splits", "'abc'"),
    ("active chunks 0", "s.txt", _system(active_chunks_per_dimension="0"),
     "active-chunks-per-dimension", "0"),
    ("negative endpoint delay", "s.txt", _system(endpoint_delay="-1"), "endpoint-delay",
     "-1"),
    ("boost-mode 2", "s.txt", _system(boost_mode="2"), "boost-mode", "'2'"),
    ("unknown collective-optimization", "s.txt", _system(collective_optimization="fast"),
     "collective-optimization", "'fast'"),
    ("line without a colon", "s.txt", "preferred-dataset-splits 64\n", "line 1",
     "'preferred-dataset-splits 64'"),
    ("bad json", "s.json", '{"preferred-dataset-splits": 4,,}', "line 1", "4,,"),
    ("json chunks fractional", "s.json", '{"preferred-dataset-splits": 4.5}',
     "preferred-dataset-splits", "4.5"),
    ("json algorithms not strings", "s.json", '{"all-gather-implementation": ["ring", 3]}',
     "all-gather-implementation[1]", "3"),
    ("json algorithms wrong type", "s.json", '{"all-gather-implementation": 3}',
     "all-gather-implementation", "3"),
    ("json inter wrong type", "s.json", '{"inter-dimension-scheduling": ["themis"]}',
     "inter-dimension-scheduling", "['themis']"),
]


@pytest.mark.parametrize(
    ("name", "content", "field", "value"),
    [case[1:] for case in SYSTEM_CASES],
    ids=[case[0] for case in SYSTEM_CASES],
)
def test_bad_system(
    tmp_path: Path, name: str, content: str | None, field: str, value: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError) as info:
        read_system(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {field}")
    assert value in message
    assert info.value.field == field


def test_good_system_case_is_good(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text(_system())
    assert read_system(path).all_reduce_algorithms == ("ring", "halvingDoubling")


def _six_npu_network():
    return parse_network_yaml(
        "topology: [Ring, Switch]\nnpus_count: [4, 6]\nbandwidth: [10, 10]\nlatency: [1, 1]\n",
        "six.yml",
    )


def test_halving_doubling_on_six_npus(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text(_system(all_reduce_implementation="ring_halvingDoubling"))
    with pytest.raises(InputError) as info:
        validate_system(_six_npu_network(), read_system(path))
    message = str(info.value)
    assert message.startswith(f"{path}: all-reduce-implementation[1] = 'halvingDoubling'")
    assert "power-of-two" in message and "6" in message


def test_validate_algorithms() -> None:
    network = _six_npu_network()
    assert validate_algorithms(network, ["oneRing", "direct"], "f", "x") == ("ring", "direct")
    with pytest.raises(InputError, match=r"f: x = 'ring': 1 algorithm for a network of 2"):
        validate_algorithms(network, ["ring"], "f", "x")
    with pytest.raises(InputError, match=r"f: x\[0\] = 'foo': unknown algorithm"):
        validate_algorithms(network, ["foo", "ring"], "f", "x")
    with pytest.raises(InputError, match=r"f: x\[1\] = 'hd': halvingDoubling needs"):
        validate_algorithms(network, ["ring", "hd"], "f", "x")


# --------------------------------------------------------------------------- warnings


def test_unknown_yaml_keys_warn(tmp_path: Path) -> None:
    path = tmp_path / "n.yml"
    path.write_text(_yaml() + "colour: blue\nspeed: 3\n")
    with pytest.warns(UserWarning, match=rf"{path}: unknown network keys ignored: colour, speed"):
        read_network(path)


def test_unknown_json_keys_warn(tmp_path: Path) -> None:
    path = tmp_path / "n.json"
    path.write_text(_json(hbm_bandwidth=[1, 1], mystery=1))
    with pytest.warns(UserWarning, match=rf"{path}: unknown network keys ignored: mystery$"):
        read_network(path)


def test_unknown_system_keys_warn_and_are_recorded(tmp_path: Path) -> None:
    path = tmp_path / "s.txt"
    path.write_text(_system() + "zeta: 1\nalpha-key: x\nlocal-reduction-delay: 1\n")
    with pytest.warns(UserWarning, match=rf"{path}: unknown system keys ignored: alpha-key, zeta"):
        system = read_system(path)
    assert system.unknown_keys == ("alpha-key", "zeta")


# --------------------------------------------------------------------------- sizes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1GiB", 1 << 30),
        ("64MiB", 64 << 20),
        ("512KiB", 512 << 10),
        ("1048576", 1048576),
        (" 2 GiB ", 2 << 30),
        ("1.5KiB", 1536),
        (4096, 4096),
    ],
)
def test_parse_size_ok(text: str | int, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "text", ["-1", "0", "abc", "1.5B", "10PiB", "2000TiB", "", "1 GiB GiB", -5, 0, True]
)
def test_parse_size_rejected(text: object) -> None:
    with pytest.raises(InputError) as info:
        parse_size(text, "--size")  # type: ignore[arg-type]
    assert str(info.value).startswith(f"--size = {text!r}")
