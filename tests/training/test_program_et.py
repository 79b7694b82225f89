"""A Program the project holds written as Chakra ETs (themis.program_et), read back and run
by ``themis train``; ends derived by hand."""

from __future__ import annotations

import json

import pytest

from reports.cli import main
from reports.cli.common import load_network, load_system
from tests.training.handcalc import CFG, NET, layer, workload
from tests.training.test_et_groups import NET_YAML
from tests.training.test_et_groups import SYSTEM as GROUP_SYSTEM
from themis.program import Node, NodeKind, Program
from themis.program_et import program_to_ets
from themis.training.compile10 import compile_workload
from themis.training.et_run import simulate_et
from themis.training.simulate import prepare
from topologies.chakra.ranks import read_et_source, read_ets
from topologies.chakra.trace import write_et
from topologies.chakra.types import NodeType
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


#: A DATA workload of two layers (compute in cycles = ns; wg all-reduces of 1 MiB, update
#: 10), on one Ring 4 dimension with the system above but one dimension.
DATA_TWO = ("DATA\n2\n"
            "l0 -1 2000 NONE 0 1500 NONE 0 3000 ALLREDUCE 1048576 10\n"
            "l1 -1 4000 NONE 0 2500 NONE 0 6000 ALLREDUCE 1048576 10\n")
RING4 = "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 50.0 ]\nlatency: [ 100.0 ]\n"
SYSTEM1 = {"scheduling-policy": "LIFO", "preferred-dataset-splits": 1,
           "active-chunks-per-dimension": 1, "endpoint-delay": 10,
           "collective-optimization": "localBWAware", "local-mem-bw": 1600,
           **{f"{k}-implementation": ["ring"]
              for k in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")}}


def _convert_inputs(tmp_path) -> tuple[str, str, str]:
    (tmp_path / "w.txt").write_text(DATA_TWO)
    (tmp_path / "ring4.yml").write_text(RING4)
    (tmp_path / "sys.json").write_text(json.dumps(SYSTEM1))
    return str(tmp_path / "w.txt"), str(tmp_path / "ring4.yml"), str(tmp_path / "sys.json")


def test_convert_program_by_hand(tmp_path, capsys) -> None:
    """``themis convert --program``: the DATA loop compiles to l0.fwd (2,000), l1.fwd
    (4,000), l1.wg (6,000), l1's all-reduce, l1.ig (2,500, written as 3 us: the one
    rounding, 500 ns), l0.wg (3,000), l0's all-reduce (no ig for layer 0), with five
    one-cycle delays, two update times and the pass end left out. Read back and run under
    2.x's slots: compute ends 2 + 4 + 6 = 12 us, l1's all-reduce (T = 31,429 ns alone,
    by hand in test_a_program_on_every_rank_by_hand: 1 MiB on the same Ring 4) holds the
    comm slot from 12,000, so l0's, ready at 12,000 + 3,000 + 3,000, starts when it ends:
    12,000 + 2 x 31,429 = 74,858 ns. Its iteration bound is the same (the windows)."""
    w, net, system = _convert_inputs(tmp_path)
    prefix = str(tmp_path / "p")
    assert main(["convert", w, "--program", "--network", net, "--npus", "4", "--system",
                 system, "--out", prefix]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 2 and "7 nodes each: 5 compute, 2 collectives" in lines[0]
    assert "5 delay nodes" in lines[1] and "2 update times" in lines[1]
    assert "1 pass-end markers" in lines[1] and "blocking" not in lines[1]
    assert "1 compute times rounded to whole microseconds, by up to 500 ns" in lines[1]
    network = load_network(net)
    traces, names = read_et_source(prefix, 4)
    durations = [n.duration_micros for n in traces[0].nodes if n.type == NodeType.COMP_NODE]
    assert durations == [2, 4, 6, 3, 3]
    res = simulate_et(traces, network, load_system(system), names, bound=True)
    assert res.end_ns == 74_858 == res.iteration_bound_ns
    runs = {n.name: (n.issue_ns, n.end_ns) for n in res.classes[0][1]}
    assert runs["l1.wg.all-reduce"] == (12_000, 43_429)
    assert runs["l0.wg.all-reduce"] == (43_429, 74_858)


@pytest.mark.parametrize(("extra", "flag"), [
    (["--program"], "--program"),                                   # no --network
    (["--program", "--network", "NET", "--npus", "8"], "--npus"),
    (["--program", "--faithful", "--network", "NET"], "--program"),
    (["--system", "SYS"], "--system"),                              # without --program
    (["--program", "--network", "NET", "--clock-GHz", "2"], "--clock-GHz"),
    (["--program", "--network", "NET", "--system", "NOFILE.json"], "NOFILE.json"),
    (["--program", "--network", "RING8"], "--network"),             # a split dimension
])
def test_convert_program_bad_input_is_one_line(tmp_path, capsys, extra, flag) -> None:
    w, net, system = _convert_inputs(tmp_path)
    (tmp_path / "ring8.yml").write_text(RING4.replace("[ 4 ]", "[ 8 ]"))
    subst = {"NET": net, "SYS": system, "RING8": str(tmp_path / "ring8.yml")}
    workload = "Transformer_HybridParallel" if "RING8" in extra else w
    npus = [] if "--npus" in extra else ["--npus", "8" if "RING8" in extra else "4"]
    argv = ["convert", workload, *npus, "--out", str(tmp_path / "p"),
            *[subst.get(a, a) for a in extra]]
    assert main(argv) == 2
    err = capsys.readouterr()[1]
    assert err.count("\n") == 1 and flag in err and "Traceback" not in err
