"""The ASTRA-sim deviations of issue 22, each on a case the shared reference runs never
exercised, cross-checked against the training simulator (whose event order and chunking
reproduce 78 held-out ASTRA-sim 1.0 training runs) and derived from ASTRA-sim's code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.cli import main
from themis.collective import Collective
from themis.runkind import RunKind
from topologies.network import Dimension, Network

TUTORIAL = Path(__file__).parents[1] / "data" / "astra-sim-1.0" / "tutorial"

NET_JSON = {"dimensions-count": 3, "topologies-per-dim": ["Ring", "Ring", "Ring"],
            "units-count": [4, 4, 4], "links-count": [2, 2, 2], "link-latency": [500] * 3,
            "link-bandwidth": [25, 25, 25]}
SYSTEM = """scheduling-policy: LIFO
endpoint-delay: 10
active-chunks-per-dimension: 1
preferred-dataset-splits: 4
boost-mode: 0
all-reduce-implementation: ring_ring_ring
all-gather-implementation: ring_ring_ring
reduce-scatter-implementation: ring_ring_ring
all-to-all-implementation: direct_direct_direct
collective-optimization: localBWAware
intra-dimension-scheduling: SCF
inter-dimension-scheduling: themis
"""


def _files(tmp_path: Path) -> tuple[str, str]:
    net = tmp_path / "ring3.json"
    net.write_text(json.dumps(NET_JSON))
    system = tmp_path / "themis_boost0.txt"
    system.write_text(SYSTEM)
    return str(net), str(system)


def _json(capsys, argv: list[str]) -> dict:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_same_tick_hand_over_serves_the_old_dimension_first(tmp_path, capsys) -> None:
    """Deviation 1 (boost-mode 0). When a chunk's stage ends on dimension d and the chunk
    moves to d' at the same tick, ``Sys::proceed_to_next_vnet_baseline`` inserts it into
    d''s queue and then restarts d's queue before d''s, so the stage that d starts next
    is chosen before d' chooses. Themis on three identical Ring-4 dimensions (2 x 25
    GB/s links, 500 ns), 4 chunks of 256 KiB, SCF: the old order (d' first) gave
    32,782 ns; ASTRA-sim's order gives 27,872 ns, what the training simulator (ASTRA-sim
    1.0's event order) gives the same collective as a one-layer workload, minus its
    1 ns update."""
    net, system = _files(tmp_path)
    sim = _json(capsys, ["simulate", net, "--system", system, "--timing", "astra-sim-1.0",
                         "--size", "1MiB", "--json"])
    train = _json(capsys, ["train", str(TUTORIAL / "all_reduce.txt"), net, "--system",
                           system, "--timing", "astra-sim-1.0", "--json"])
    assert sim["makespan_ns"] == 27872
    assert train["end_ns"] == sim["makespan_ns"] + 1


def test_the_run_kind_owns_the_serve_order() -> None:
    assert RunKind.of("astra-sim-1.0").rules().serve == "own-first"
    assert RunKind.of("alpha-beta").rules().serve == "next-first"
    assert RunKind.of("alpha-beta").rules("shared").serve == "ascending"


def _ring3() -> Network:
    return Network(dims=tuple(Dimension("Ring", 4, 50.0, 500.0) for _ in range(3)))


@pytest.mark.parametrize(("size", "splits", "want"), [
    # floor(S / C) while bytes remain: 10 bytes in 4 splits -> chunks of 2, five of them
    (10, 4, [2, 2, 2, 2, 2]),
    # 1000 in 3: chunks of 333, three, then the remaining 1 byte
    (1000, 3, [333, 333, 333, 1]),
    # 7 in 4: chunks of 1, seven of them (the project's rule made 4 x 1 + one of 3)
    (7, 4, [1] * 7),
])
def test_astra10_chunking_cuts_the_input_while_bytes_remain(size, splits, want) -> None:
    """Deviation 3. ``Sys::generate_collective`` streams the input in chunks of
    floor(S / C) while bytes remain (the last one the rest); ``simulate`` now runs the
    chunks the run kind gives, as ``train`` always did."""
    assert RunKind.of("astra-sim-1.0").chunk_sizes(size, splits) == want
    assert RunKind.of("alpha-beta").chunk_sizes(size, splits)[:splits] == [size // splits] * splits


def test_message_time_in_double_precision_truncates_below_an_exact_integer() -> None:
    """Deviation 2. ``HierarchicalTopology::send`` adds ``m / BW`` in double precision to
    an ``int`` accumulator, with BW = ``(double)64 * (1 << 30) / 1e9`` B/ns. A ring RS on a
    2-NPU Switch (64 GB/s, 1 link, 1 ns per hop, no NIC latency) of 256 MiB sends one
    message of 128 MiB = 2^27 bytes: exactly 1,953,125 ns at the exact bandwidth, but
    2^27 / 68.719476736 = 1953124.9999999998 in double. So the message is
    int(2 hops x 1 ns + 1953124.9999999998) = 1,953,126 ns, not 1,953,127."""
    from themis.timing import make_timing

    net = Network(dims=(Dimension("Switch", 2, 64.0, 1.0, links=1),))
    tm = make_timing("astra-sim-1.0", net, ("ring",), 0.0)
    assert 2**27 / (64.0 * (1 << 30) / 1e9) < 1953125
    assert tm.last_message_ns("RS", 0, 2**28) == 1953126


def test_simulate_runs_astra10s_chunks_as_train_does(tmp_path, capsys) -> None:
    """Deviation 3 end to end: a 100-byte all-reduce in 64 splits is 100 chunks of 1 byte
    in ASTRA-sim 1.0 (the project's rule made 64 of 1 byte and one of 36: 6,164 ns).
    ``simulate`` now runs what ``train`` runs for the same one-collective workload."""
    workload = tmp_path / "tiny.txt"
    workload.write_text("MICRO\n1\nallreduce -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 100 1\n")
    net = str(TUTORIAL / "3d_switch.json")
    system = str(TUTORIAL / "3d_switch_themis.txt")
    sim = _json(capsys, ["simulate", net, "--system", system, "--timing", "astra-sim-1.0",
                         "--size", "100", "--json"])
    train = _json(capsys, ["train", str(workload), net, "--system", system, "--timing",
                           "astra-sim-1.0", "--json"])
    assert (sim["splits"], sim["chunk_count"]) == (64, 100)
    assert train["end_ns"] == sim["makespan_ns"] + 1 == 9385


def test_astra2_direct_all_reduce_on_a_ring_follows_all_to_all_run() -> None:
    """2.x's ``AllToAll::run`` is 1.0's: round 2 starts at the first processing end at
    or after the last arrival. Ring of 4 at 1 B/ns (B = 1e9 / 2^30 GB/s, so beta =
    B x 2^30 / 1e9 = 1), 100 ns per hop, endpoint delay d = 10, local-mem-bw 10 GB/s so
    P(1000) = 3 x floor(1000 / 1e10 x 1e9) = 300. An AR stage of 4000 bytes sends parts
    of 1000 bytes: N = 1100, 1200, 1100 ns to partners 1, 2, 3 steps away. Arrivals
    1110, 1110, 1210; processed at 1420, 1420, 1520. Round 2 starts at 1420 (>= 1210)
    with two messages (to partners 1 and 2), the third at 1520: ends 2520, 2620, 2620,
    plus d = 2630 ns. The equidistant formula 3d + 2 N* + P gave 2730."""
    from themis.timing import make_timing

    net = Network(dims=(Dimension("Ring", 4, 1e9 / 2**30, 100.0),))
    tm = make_timing("astra-sim-2", net, ("direct",), 10.0, local_mem_bw_GBps=10.0)
    assert tm.reduce_ns(1000) == 300
    assert [tm.message_ns(0, 1000, s) for s in (1, 2, 3)] == [1100, 1200, 1100]
    assert tm.stage("AR", 0, 4000).duration_ns == 2630


def test_astra2_chunks_below_the_npu_count_rewrite_the_size() -> None:
    """Deviation 4: ``Sys::determine_chunk_size`` takes S by reference; with
    c = floor(S / splits) below the N NPUs it sets c = N and S = splits x N. 100 bytes in
    16 splits on 8 NPUs: c = 6 < 8, so 16 chunks of 8 bytes (S = 128), not
    ceil(100 / 8) = 13."""
    from themis.timing import make_timing

    net = Network(dims=(Dimension("Ring", 8, 50.0, 100.0),))
    tm = make_timing("astra-sim-2", net, ("ring",), 10.0)
    run = tm.chunked(Collective("all-reduce", 100, 16))
    assert (run.size_bytes, run.chunk_count, run.chunk_sizes()[0]) == (128, 16, 8)
