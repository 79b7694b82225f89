"""A Program the project holds written as Chakra ETs (themis.program_et), read back and run
by ``themis train``; ends derived by hand."""

from __future__ import annotations

import json

import pytest

from reports.cli import main
from tests.training.handcalc import CFG, NET, layer, workload
from tests.training.test_et_groups import NET_YAML
from tests.training.test_et_groups import SYSTEM as GROUP_SYSTEM
from themis.program import Node, NodeKind, Program
from themis.program_et import program_to_ets
from themis.training.compile10 import compile_workload
from themis.training.simulate import prepare
from topologies.chakra.ranks import read_ets
from topologies.chakra.trace import write_et
from topologies.errors import InputError

C, D, K = NodeKind.COMPUTE, NodeKind.DELAY, NodeKind.COLLECTIVE
#: The network and system of the group tests, with 2.x's default endpoint delay.
SYSTEM = {**GROUP_SYSTEM, "endpoint-delay": 10}


def _write(tmp_path, ets) -> str:
    for rank, trace in ets.traces.items():
        write_et(trace, tmp_path / f"p.{rank}.et")
    (tmp_path / "net.yml").write_text(NET_YAML)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM))
    (tmp_path / "g.json").write_text(json.dumps(ets.groups or {"1": list(range(8))}))
    return str(tmp_path / "p")


def _train(capsys, tmp_path, prefix) -> dict:
    assert main(["train", prefix, str(tmp_path / "net.yml"), "--system",
                 str(tmp_path / "sys.json"), "--comm-group", str(tmp_path / "g.json"),
                 "--json"]) == 0
    return json.loads(capsys.readouterr()[0])


def test_a_program_on_every_rank_by_hand(tmp_path, capsys) -> None:
    """Compute 2,400 ns (written as 2 us, one rounding of 400 ns), a 1-ns delay (left out:
    the all-reduce takes its dependency), a 1 MiB all-reduce on dimension 0 (Ring 4, ring,
    d = 10, 256 KiB messages: N = floor(100 + 262144 / 53.687) = 4982, P = 3 x 163 = 489;
    7 x 10 + 6 x 4982 + 3 x 489 = 31,429), then 1 us: 2,000 + 31,429 + 1,000 = 34,429."""
    prog = Program((Node(0, C, duration_ns=2400), Node(1, D, deps=(0,), duration_ns=1),
                    Node(2, K, deps=(1,), collective="all-reduce", size_bytes=1 << 20,
                         mask=(True, False), blocking=True, finish_delay_ns=5),
                    Node(3, C, deps=(2,), duration_ns=1000)), "hand")
    ets = program_to_ets(prog, (4, 2))
    assert (ets.rounded, ets.max_rounding_ns) == (1, 400)
    assert ets.dropped == {"delay": 1, "blocking": 1, "finish_delay_ns": 1}
    assert [n.data_deps for n in ets.traces[5].nodes] == [[], [0], [2]]
    prefix = _write(tmp_path, ets)
    back = read_ets(prefix, 8)
    assert [n.attrs for n in back[3].nodes] == [n.attrs for n in ets.traces[3].nodes]
    data = _train(capsys, tmp_path, prefix)
    assert data["end_ns"] == 34429 and len(data["rank_classes"]) == 1


def test_a_program_per_rank_with_an_npu_group(tmp_path, capsys) -> None:
    """Ranks 0, 1, 4 all-gather 3 MiB (output) on their group (0, 1, 4): a 1 MiB shard,
    flattened by 2.x into a ring whose ends are 59,723 (ranks 0, 1) and 39,292 (rank 4),
    by hand in test_et_groups; the other ranks compute 1 us."""
    ag = Program((Node(0, K, collective="all-gather", size_bytes=3 << 20, group=(0, 1, 4)),))
    other = Program((Node(0, C, duration_ns=1000),))
    ets = program_to_ets({r: ag if r in (0, 1, 4) else other for r in range(8)}, (4, 2))
    assert ets.groups == {"1": [0, 1, 4]}
    data = _train(capsys, tmp_path, _write(tmp_path, ets))
    ends = {tuple(c["ranks"]): c["end_ns"] for c in data["rank_classes"]}
    assert ends == {(0, 1): 59723, (4,): 39292, (2, 3, 5, 6, 7): 1000}


@pytest.mark.parametrize(("nodes", "says"), [
    ((Node(0, K, collective="all-reduce", size_bytes=8, group=(0, 1)),), "not in"),
    ((Node(0, K, collective="all-reduce", size_bytes=8, mask=(True,)),), "1 entries"),
    ((Node(0, K, collective="all-gather", size_bytes=3, mask=(True, False)),), "no shard"),
])
def test_what_an_et_cannot_hold_is_one_line(nodes, says) -> None:
    with pytest.raises(InputError, match=says):
        program_to_ets(Program(nodes, "bad"), (4, 2))


def test_a_compiled_1_0_workload_exports() -> None:
    """An ASTRA-sim 1.0 DATA workload compiled to a Program: every compute and collective
    node written, the one-cycle state changes left out and counted."""
    wl = workload("DATA", layer("l0", 100, 0, 400, 7, wg="ALLREDUCE 4096"),
                  layer("l1", 200, 0, 300, 7, wg="ALLREDUCE 8192"))
    w, lnet, b, _, _ = prepare(wl, NET, CFG)
    prog = compile_workload(w, lnet, b, CFG)
    ets = program_to_ets(prog, tuple(d.npus for d in lnet.dims))
    kinds = [n.kind for n in prog.nodes]
    assert ets.dropped["delay"] == kinds.count(D) > 0
    assert len(ets.traces[0].nodes) == len(kinds) - kinds.count(D)
    sizes = [a.value for n in ets.traces[0].nodes for a in n.attrs if a.name == "comm_size"]
    assert sorted(sizes) == sorted(n.size_bytes for n in prog.collectives)
