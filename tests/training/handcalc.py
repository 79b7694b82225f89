"""Hand formulas for the tiny training cases (timing.md's direct algorithm, by hand).

The network is Ring(4) 2 x 100 GB/s + Switch(4) 1 x 25 GB/s, 1 ns per hop,
endpoint delay d = 10 ns, every algorithm ``direct``, one chunk per collective
(so a collective is one chain of stages). For a direct stage on n = 4 NPUs:

* one message of m bytes to the farthest partner: N* = L * hops + floor(m / BW),
  hops 2 on both dimensions (Ring: min(s, 4 - s) <= 2; Switch: 2), BW = scalar
  x link bandwidth (Ring: 2 links, even, so 2 x 100; Switch: 1 x 25), GB = 2^30;
* RS(D) = 2d + N*(D/4) + R, AG(D) = 2d + N*(D), all-to-all A2A(D) = 2d + N*(D/4)
  (no reduction), AR(D) = 3d + 2 N*(D/4) + R on the Switch and 1 ns less on the
  Ring (see :func:`ar`), R = 0 below 2 MB.

An all-reduce over both dimensions (baseline, localBWAware): RS on 0, AR on 1,
AG on 0.
"""

from __future__ import annotations

import json
from fractions import Fraction

from themis.training import TrainingConfig
from topologies.astra import parse_network_json
from topologies.workload import parse_workload

D_NS = 10
_BW = [Fraction(2 * 100 * 2**30, 10**9), Fraction(25 * 2**30, 10**9)]

NET = parse_network_json(json.dumps({
    "dimensions-count": 2, "topologies-per-dim": ["Ring", "Switch"], "units-count": [4, 4],
    "links-count": [2, 1], "link-latency": [1, 1], "link-bandwidth": [100, 25]}), "n2.json")

DIRECT = ("direct", "direct")
CFG = TrainingConfig(chunks=1, all_reduce_algorithms=DIRECT, reduce_scatter_algorithms=DIRECT,
                     all_gather_algorithms=DIRECT, all_to_all_algorithms=DIRECT)


def n_star(dim: int, m: int) -> int:
    """The slowest message of a direct stage (2 hops of 1 ns + serialization)."""
    return 2 + int(Fraction(m) / _BW[dim])


def ar(dim: int, size: int) -> int:
    """A direct all-reduce stage on one dimension.

    Switch: 3d + 2N*. Ring 4 (partners 1, 2, 1 hops away, N(h) = h + s): round 1
    arrives at d + 1 + s (twice) and d + 2 + s; processing ends d later. The first
    one after the last arrival (2d + 1 + s) sends to partner 1, the second (same
    time) to partner 2 (2 hops: arrives 2d + 3 + 2s), the third (2d + 2 + s) to
    partner 3 (1 hop: 2d + 3 + 2s); the stage ends d later: 3d + 3 + 2s, one ns
    below 3d + 2N* = 3d + 4 + 2s.
    """
    assert size < 2_000_000
    return 3 * D_NS + 2 * n_star(dim, size // 4) - (1 if dim == 0 else 0)


def ar_both(size: int) -> int:
    """An all-reduce over both dimensions: RS(0), AR(1), AG(0)."""
    rs0 = 2 * D_NS + n_star(0, size // 4)
    ar1 = ar(1, size // 4)
    ag0 = 2 * D_NS + n_star(0, size // 4)
    return rs0 + ar1 + ag0


def a2a(dim: int, size: int) -> int:
    """A direct all-to-all stage on one dimension (output size = input size)."""
    return 2 * D_NS + n_star(dim, size // 4)


def layer(name: str, f: int, g: int, w: int, u: int, fwd: str = "NONE 0", ig: str = "NONE 0",
          wg: str = "NONE 0", own: str = "") -> str:
    """One layer line: compute times, collectives as ``"TYPE size"``, update time."""
    return f"{name} -1 {f} {fwd} {g} {ig} {w} {wg} {u} {own}".rstrip()


def workload(header: str, *layers: str):
    """A parsed workload from a header line and layer lines."""
    return parse_workload(f"{header}\n{len(layers)}\n" + "\n".join(layers) + "\n", "hand.txt")
