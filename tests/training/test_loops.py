"""Every keyword's loop on a tiny file, against a timeline worked out by hand.

Collective times come from :mod:`handcalc` (timing.md's direct formulas by
hand); every test writes the loop of workloads.md §3 out step by step: a
compute of c ns takes c, each state change +1, a collective ending at T is
finished at T + u (its layer's update time), a waiter resumes then.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.training.handcalc import CFG, NET, a2a, ar, ar_both, layer, workload
from themis.training import simulate_training


def test_data_two_layers_one_pass() -> None:
    s0, s1, u = 4096, 8192, 7
    wl = workload("DATA", layer("l0", 100, 0, 400, u, wg=f"ALLREDUCE {s0}"),
                  layer("l1", 200, 300, 500, u, wg=f"ALLREDUCE {s1}"))
    r = simulate_training(wl, NET, CFG)
    # F0 0..100, +1, F1 101..301, +1, WG1 302..802 issue wg1, +1, IG1 803..1103, +1,
    # WG0 1104..1504 issue wg0 = pass end (= 300 + 900 + 300 + 3*2 - 2).
    assert r.pass_end_ns == [1504]
    t1, t0 = ar_both(s1), ar_both(s0)
    assert [c.issue_ns for c in r.collectives] == [802, 1504]
    assert r.collectives[0].end_ns == 802 + t1
    # The loop checks layer 0's wg at 1505; it finishes at 1504 + t0 + u.
    assert r.end_ns == 1504 + t0 + u
    assert r.layers[0].wg_exposed_ns == 1504 + t0 + u - 1505
    assert (r.layers[0].wg_comm_ns, r.layers[1].wg_comm_ns) == (t0 + u, t1 + u)
    assert r.layers[1].wg_exposed_ns == 0
    assert r.compute_ns == 100 + 200 + 300 + 400 + 500
    assert r.layers[0].ig_compute_ns == 0  # IG(0) is never computed


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 5000), min_size=6, max_size=6), st.integers(1, 50),
       st.integers(256, 100000), st.integers(256, 100000))
def test_data_pass_end_formula(c: list[int], u: int, s0: int, s1: int) -> None:
    f0, f1, g0, g1, w0, w1 = c
    wl = workload("DATA", layer("a", f0, g0, w0, u, wg=f"ALLREDUCE {s0}"),
                  layer("b", f1, g1, w1, u, wg=f"ALLREDUCE {s1}"))
    r = simulate_training(wl, NET, CFG, bound=False)
    assert r.pass_end_ns == [f0 + f1 + w0 + w1 + g1 + 3 * 2 - 2]


def test_data_two_passes_second_forward_waits_for_wg0() -> None:
    s0, u = 400000, 3
    wl = workload("DATA", layer("l0", 10, 0, 20, u, wg=f"ALLREDUCE {s0}"),
                  layer("l1", 30, 100, 50, u, wg="ALLREDUCE 1024"))
    r = simulate_training(wl, NET, replace(CFG, passes=2))
    p1 = 10 + 30 + 20 + 50 + 100 + 4
    assert 10 + 1 + 30 + 1 + 50 + ar_both(1024) < p1  # wg1 is over before wg0 starts
    t0 = ar_both(s0)
    assert t0 > 10  # wg0 of pass 1 is still running when pass 2 starts (at p1 + 1)
    fin0 = p1 + t0 + u
    assert r.pass_end_ns == [p1, fin0 + p1]  # pass 2 starts when wg0 is finished
    assert r.layers[0].wg_exposed_ns == (fin0 - (p1 + 1)) + (fin0 + p1 + t0 + u - (fin0 + p1 + 1))
    assert r.end_ns == fin0 + p1 + t0 + u


def _model_like(header: str, wg: str, own: tuple[str, str] = ("", "")):
    s = 20000
    return workload(header, layer("l0", 100, 200, 300, 5, fwd=f"ALLREDUCE {s}",
                                  ig=f"ALLREDUCE {s}", wg=wg, own=own[0]),
                    layer("l1", 400, 500, 6, 5, fwd=f"ALLREDUCE {s}", ig=f"ALLREDUCE {s}",
                          wg=wg, own=own[1])), s


@pytest.mark.parametrize("header", ["MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA"])
def test_model_family(header: str) -> None:
    wgs = 8192
    wl, s = _model_like(header, f"ALLREDUCE {wgs}")
    r = simulate_training(wl, NET, CFG)
    u = 5
    if header == "MODEL":
        tf = tg = ar_both(s)  # fwd / ig on all dims, no wg collective
    elif header == "HYBRID_DATA_MODEL":
        tf = tg = ar(0, s)  # model dim 0, data dims 1..
        tw = ar(1, wgs)
    else:
        tf = tg = ar(1, s)  # model dims 1.., data dim 0
        tw = ar(0, wgs)
    # Forward: compute, blocking fwd collective (+u), +1.
    t = 100 + tf + u + 1
    t += 400 + tf + u + 1
    # IG(1): compute, issue ig(1) non-blocking, +1; WG(1): compute 6, (issue wg), wait ig(1), +1.
    ig1 = t + 500
    t = max(ig1 + 1 + 6, ig1 + tg + u) + 1
    # IG(0): compute, no collective for layer 0, +1; WG(0): compute, nothing to wait: pass end.
    t += 200 + 1 + 300
    assert r.pass_end_ns == [t]
    assert r.layers[1].ig_exposed_ns == ig1 + tg + u - (ig1 + 1 + 6)
    assert r.layers[0].fwd_exposed_ns == r.layers[0].fwd_comm_ns == tf + u
    assert r.layers[0].ig_comm_ns == 0
    if header == "MODEL":
        assert [c.phase for c in r.collectives] == ["fwd", "fwd", "ig"]
        assert r.end_ns == t + 1
    else:
        wg1, wg0 = r.collectives[3], r.collectives[4]
        assert (wg1.layer, wg1.issue_ns, wg0.layer, wg0.issue_ns) == (1, ig1 + 1 + 6, 0, t)
        assert r.end_ns == max(t + 1, t + tw + u)


def test_hybrid_customized_per_layer_keywords() -> None:
    # Layer 0 says DATA (wg on all dims, no fwd / ig), layer 1 MODEL (fwd / ig on all, no wg).
    wl, s = _model_like("HYBRID_CUSTOMIZED", "ALLREDUCE 8192", own=("DATA", "MODEL"))
    r = simulate_training(wl, NET, CFG)
    u, tf = 5, ar_both(s)
    t = 100 + 1  # F0: its fwd collective has no dimension: goes on at once
    t += 400 + tf + u + 1
    ig1 = t + 500
    t = max(ig1 + 7, ig1 + tf + u) + 1  # layer 1's wg has no dimension (MODEL)
    t += 200 + 1 + 300
    assert r.pass_end_ns == [t]
    assert [(c.layer, c.phase) for c in r.collectives] == [(1, "fwd"), (1, "ig"), (0, "wg")]
    assert r.end_ns == t + ar_both(8192) + u


@pytest.mark.parametrize("recompute", [False, True])
def test_transformer(recompute: bool) -> None:
    s, ws, u = 20000, 4096, 2
    header = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 4 checkpoints: 1 0 "
              "checkpoint_initiates: 1 1") if recompute else \
        "HYBRID_TRANSFORMER model_parallel_NPU_group: 4"
    wl = workload(header,
                  layer("l0", 100, 200, 300, u, fwd=f"ALLREDUCE {s}", ig=f"ALLREDUCE {s}",
                        wg=f"ALLREDUCE {ws}"),
                  layer("l1", 400, 500, 600, u, fwd=f"ALLREDUCE {s}", ig=f"ALLREDUCE {s}",
                        wg=f"ALLREDUCE {ws}"))
    r = simulate_training(wl, NET, CFG)
    m, dwg = ar(0, s), ar(1, ws)  # G = 4 = P_0: model dim 0, data dim 1
    assert r.logical_npus == (4, 4)
    t = 100 + m + u + 1 + 400 + m + u + 1
    if recompute:  # IG(1) first goes back to checkpoint 0: +1, then F(0) again
        t += 1 + 100 + m + u + 1
    t += 500 + m + u + 1  # IG(1) blocking
    wg1 = t + 600
    t = wg1 + 1 + 200 + m + u + 1 + 300  # WG(1), IG(0) blocking (layer 0 too), WG(0)
    assert r.pass_end_ns == [t]
    assert r.layers[0].fwd_compute_ns == (200 if recompute else 100)
    assert r.end_ns == max(t + 1, t + dwg + u, wg1 + dwg + u)
    assert r.layers[1].ig_exposed_ns == m + u


def test_model_parallel_group_splits_a_dimension() -> None:
    wl = workload("HYBRID_TRANSFORMER model_parallel_NPU_group: 2",
                  layer("l0", 10, 10, 10, 1, fwd="ALLREDUCE 4096", wg="ALLREDUCE 4096"))
    r = simulate_training(wl, NET, CFG)
    assert r.logical_npus == (2, 2, 4)  # Ring 4 becomes 2 x 2; model dim 0, data dims 1-2
    assert r.collectives[0].dims == (0,) and r.collectives[1].dims == (1, 2)


@pytest.mark.parametrize("enhanced", [False, True])
def test_dlrm(enhanced: bool) -> None:
    e, u = 4096, 3
    wl = workload(("HYBRID_DLRM_ENHANCED" if enhanced else "HYBRID_DLRM") + " 1",
                  layer("emb", 10, 20, 30, u, fwd=f"ALLTOALL {e}", ig=f"ALLTOALL {e}"),
                  layer("bot", 40, 50, 100, u, wg="ALLREDUCE 2048"),
                  layer("top", 70, 120, 90, u, wg="ALLREDUCE 2048"))
    r = simulate_training(wl, NET, CFG)
    x = a2a(0, e) + a2a(1, e)  # layer 0's all-to-all: all dims, 0 then 1
    assert x > 40 + 1
    # F0 0..10 issues the all-to-all, +1; F1 (the last bottom layer) waits for it; +1; F2.
    t = max(11 + 40, 10 + x + u) + 1 + 70 + 1
    # WG2 issue wg2, +1; IG2 (= last bottom + 1) issues layer 0's ig all-to-all, +1.
    t += 90 + 1 + 120
    ig0 = t
    assert t - 120 - 1 + ar_both(2048) < ig0  # wg2 is over before the ig all-to-all starts
    t += 1 + 100 + 1 + 50 + 1 + 30  # WG1 (issues wg1 at ig0 + 101), IG1, WG0
    assert ig0 + x < ig0 + 101  # ... which is after the ig all-to-all
    if not enhanced:
        t = max(t, ig0 + x + u)  # WG(0) waits for ig(0)
    assert r.pass_end_ns == [t]
    assert r.layers[0].fwd_exposed_ns == 10 + x + u - 51
    assert r.end_ns == max(t + 1, ig0 + x + u, ig0 + 101 + ar_both(2048) + u)
    assert [c.priority for c in r.collectives if c.kind == "all-to-all"] == [100000000] * 2


def test_micro_issues_every_pass_at_zero() -> None:
    s, u = 65536, 1
    wl = workload("MICRO", layer("ar", 999, 999, 999, u, wg=f"ALLREDUCE {s}"))
    one = simulate_training(wl, NET, CFG)
    assert one.end_ns == ar_both(s) + u and one.compute_ns == 0
    two = simulate_training(wl, NET, replace(CFG, passes=2))
    assert [c.issue_ns for c in two.collectives] == [0, 0]
    # LIFO: the second collective's chunk waits behind the first's running RS on dim 0 and
    # then follows it stage by stage (each later stage of the first is no longer).
    assert two.end_ns > one.end_ns
    assert two.layers[0].wg_exposed_ns == min(c.finished_ns for c in two.collectives)
    assert two.layers[0].wg_comm_ns == sum(c.finished_ns for c in two.collectives)


def test_distributed_inference_repeats_the_forward() -> None:
    s, u = 20000, 4
    wl = workload("DISTRIBUTED_INFERENCE", layer("l0", 100, 7, 7, u, fwd=f"ALLREDUCE {s}"),
                  layer("l1", 200, 7, 7, u))
    r = simulate_training(wl, NET, replace(CFG, passes=2))
    one = 100 + ar_both(s) + u + 1 + 200 + 1
    assert r.end_ns == 2 * one
    assert r.compute_ns == 2 * 300
