"""The example input files in examples/ (named by the README) are valid and agree."""

from __future__ import annotations

from pathlib import Path

from topologies import read_network, read_system, validate_system

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_examples_load_and_describe_the_same_network() -> None:
    yml = read_network(EXAMPLES / "my_net.yml")
    js = read_network(EXAMPLES / "my_net.json")
    # Ring 4 at 2 links x 50 GB/s = 100 GB/s, Switch 8 at 1 link x 25 GB/s (the 2.x links).
    want = [("Ring", 4, 100.0, 20.0, 2), ("Switch", 8, 25.0, 500.0, 1)]
    for net in (yml, js):
        got = [(d.kind, d.npus, d.bandwidth_GBps, d.latency_ns, d.links_count) for d in net.dims]
        assert got == want and net.npus == 32
    assert yml.name == js.name == "my_net"


def test_example_system_file() -> None:
    system = read_system(EXAMPLES / "my_system.txt")
    assert system.unknown_keys == ()
    assert (system.chunks, system.endpoint_delay_ns, system.active_chunks) == (16, 10.0, 1)
    assert (system.inter, system.intra, system.boost_mode) == ("themis", "scf", False)
    assert system.all_reduce_algorithms == ("ring", "halvingDoubling")
    validate_system(read_network(EXAMPLES / "my_net.json"), system)  # one per dimension
