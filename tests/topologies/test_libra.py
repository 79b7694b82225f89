"""LIBRA's input files read as they are (../shared/reference/libra), and their bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from topologies.errors import InputError
from topologies.libra import (
    dimension_costs,
    parse_libra_communicator,
    parse_libra_cost,
    parse_libra_network,
    parse_libra_workload,
    read_libra_communicator,
    read_libra_cost,
    read_libra_network,
    read_libra_workload,
)

LIBRA = Path(__file__).resolve().parents[3] / "shared" / "reference" / "libra"
needs_libra = pytest.mark.skipif(not LIBRA.is_dir(), reason="../shared/reference/libra absent")


@needs_libra
def test_four_d_network_and_costs() -> None:
    # LIBRA's 4-D network: Ring 4 x FC 8 x Ring 4 x Switch 32; Ring/FC pay the link,
    # the Switch (InterPod) pays link 7.80004 + switch 18.00004 + NIC 31.60004 = 57.40012.
    net = read_libra_network(LIBRA / "network" / "4d_network.yml")
    assert net.kinds == ("Ring", "FullyConnected", "Ring", "Switch")
    assert net.npus == (4, 8, 4, 32)
    costs = dimension_costs(net, read_libra_cost(LIBRA / "cost_model" / "4d_cost_model.yml"))
    assert costs == pytest.approx((2.00001, 4.00002, 4.00003, 57.40012))
    assert net.network().npus == 4096


@needs_libra
def test_gpt3_workload_and_communicator() -> None:
    comm = read_libra_communicator(LIBRA / "communicator" / "GPT_3_4d.yml")
    assert comm == {"Forward": (4, 4, -1, -1), "InputGrad": (4, 4, -1, -1),
                    "WeightGrad": (-1, 2, 4, 32)}
    colls = read_libra_workload(LIBRA / "workload" / "GPT_3.txt")
    # 18 layers: 4 forward all-reduces, 4 input-grad all-reduces, 2 all-gathers, 1 wg AR.
    kinds = [(c.phase, c.comm_type) for c in colls]
    assert kinds.count(("Forward", "ALLREDUCE")) == 4
    assert kinds.count(("InputGrad", "ALLREDUCE")) == 4
    assert kinds.count(("InputGrad", "ALLGATHER")) == 2
    assert kinds.count(("WeightGrad", "ALLREDUCE")) == 1


@pytest.mark.parametrize(("reader", "text", "key"), [
    (parse_libra_network, "Topology: [ Ring, Tree ]\nNpusCount: [ 4, 4 ]\n", "Topology[1]"),
    (parse_libra_network, "Topology: [ Ring ]\nNpusCount: [ 4, 4 ]\n", "NpusCount"),
    (parse_libra_network, "Topology: [ Ring ]\nNpusCount: [ 0 ]\n", "NpusCount[0]"),
    (parse_libra_cost, "InterPod:\n  Lnk: 3\n", "InterPod.Lnk"),
    (parse_libra_cost, "InterPod:\n  Link: -3\n", "InterPod.Link"),
    (parse_libra_communicator, "Forward: [4]\nInputGrad: [4]\n", "WeightGrad"),
    (parse_libra_communicator, "Forward: [0]\nInputGrad: [4]\nWeightGrad: [4]\n", "Forward"),
    (parse_libra_workload, "L1 -1 5 ALLREDUCE 8 5 NONE 0 5 NONE\n", "line 1"),
    (parse_libra_workload, "L1 -1 5 BROADCAST 8 5 NONE 0 5 NONE 0 1\n", "line 1 Forward"),
])
def test_bad_libra_input_is_one_error_naming_the_key(reader, text, key) -> None:
    with pytest.raises(InputError) as err:
        reader(text, "f.yml")
    assert key in str(err.value) and "f.yml" in str(err.value)


def test_cost_class_missing_from_the_cost_model() -> None:
    net = parse_libra_network("Topology: [ Ring ]\nNpusCount: [ 4 ]\nCostDimension: [ A ]\n")
    with pytest.raises(InputError, match="CostDimension"):
        dimension_costs(net, parse_libra_cost("B:\n  Link: 1\n"), "c.yml")
