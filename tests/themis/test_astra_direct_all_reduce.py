"""The direct all-reduce stage on a Ring, against ASTRA-sim 1.0 itself.

Measured with ASTRA-sim 1.0 (tag tutorial-asplos2023, built as its README says):
a MICRO workload of one all-reduce, one chunk, on a single Ring of n NPUs (2 x
100 GB/s links, L ns per hop), direct algorithm, endpoint delay d; the value is
the printed end minus the 1 ns update time. timing.md's 3d + 2N*(D/n) + R is
up to a few hops' latency too long there: round 2 starts at the first
processing end after the last round-1 arrival, one message per processed
packet, to partners in ring order (``AstraSim10Timing.direct_all_reduce``).
"""

from __future__ import annotations

import pytest

from themis.timing import make_timing
from topologies.network import Dimension, Network

# (n, latency ns per hop, endpoint delay ns, bytes, ASTRA-sim's stage time ns)
MEASURED = [
    (4, 1, 1, 65536, 158),
    (4, 1, 5, 65536, 170),
    (4, 1, 40, 65536, 275),
    (4, 10, 1, 65536, 195),
    (4, 10, 5, 65536, 207),
    (4, 10, 40, 65536, 302),
    (4, 100, 1, 65536, 555),
    (4, 100, 5, 65536, 567),
    (4, 100, 40, 65536, 672),
    (6, 1, 1, 65536, 108),
    (6, 1, 5, 65536, 120),
    (6, 1, 40, 65536, 225),
    (6, 10, 1, 65536, 163),
    (6, 10, 5, 65536, 175),
    (6, 10, 40, 65536, 270),
    (6, 100, 1, 65536, 703),
    (6, 100, 5, 65536, 715),
    (6, 100, 40, 65536, 820),
    (8, 1, 1, 65536, 86),
    (8, 1, 5, 65536, 97),
    (8, 1, 40, 65536, 202),
    (8, 10, 1, 65536, 159),
    (8, 10, 5, 65536, 171),
    (8, 10, 40, 65536, 256),
    (8, 100, 1, 65536, 879),
    (8, 100, 5, 65536, 891),
    (8, 100, 40, 65536, 996),
    (16, 1, 1, 65536, 56),
    (16, 1, 5, 65536, 65),
    (16, 1, 40, 65536, 170),
    (16, 10, 1, 65536, 201),
    (16, 10, 5, 65536, 213),
    (16, 10, 40, 65536, 278),
    (16, 100, 1, 65536, 1641),
    (16, 100, 5, 65536, 1653),
    (16, 100, 40, 65536, 1758),
    (4, 1, 10, 65536, 185),
    (4, 1, 10, 6553600, 15300),
    (4, 10, 10, 65536, 212),
    (4, 10, 10, 6553600, 15327),
    (6, 1, 10, 65536, 135),
    (6, 1, 10, 6553600, 10213),
    (6, 10, 10, 65536, 180),
    (6, 10, 10, 6553600, 10258),
    (8, 1, 10, 65536, 112),
    (8, 1, 10, 6553600, 7667),
    (8, 10, 10, 65536, 176),
    (8, 10, 10, 6553600, 7731),
    (16, 1, 10, 65536, 80),
    (16, 1, 10, 6553600, 3856),
    (16, 10, 10, 65536, 218),
    (16, 10, 10, 6553600, 3994),
]


@pytest.mark.parametrize(("n", "lat", "d", "size", "want"), MEASURED)
def test_direct_all_reduce_on_a_ring(n: int, lat: int, d: int, size: int, want: int) -> None:
    net = Network((Dimension("Ring", n, 200.0, float(lat), links=2),))
    tm = make_timing("astra-sim-1.0", net, ("direct",), d)
    assert tm.stage("AR", 0, size).duration_ns == want


def test_direct_all_reduce_worked_by_hand() -> None:
    # Ring 16, L = 1, d = 5, 65536 bytes: messages of 4096 bytes, 19 ns on the wire, so
    # N(h) = h + 19 for h = 1..8 hops. Round 1 leaves at 5 and arrives at 24 + h (h = 8
    # last, at 32); each is processed 5 later, at 29 + h. The first processing end at or
    # after 32 is h = 3's: at 32 the six packets processed so far (h = 1, 1, 2, 2, 3, 3)
    # send round-2 messages to partners 1..6, then two more at 33 (7, 8), 34 (9, 10),
    # 35 (11, 12), 36 (13, 14) and 37 (15). Partner 8 (8 hops, sent at 33) arrives last,
    # at 33 + 27 = 60 (so does partner 9: 34 + 26); the stage ends d later: 65.
    # timing.md's formula gives 3 * 5 + 2 * 27 = 69.
    net = Network((Dimension("Ring", 16, 200.0, 1.0, links=2),))
    tm = make_timing("astra-sim-1.0", net, ("direct",), 5)
    assert tm.stage("AR", 0, 65536).duration_ns == 65
    # With every partner equally far (a Switch) the formula holds: 3d + 2N* (N* = 2 + 19).
    sw = Network((Dimension("Switch", 16, 100.0, 1.0, links=1),))
    tm = make_timing("astra-sim-1.0", sw, ("direct",), 5)
    assert tm.stage("AR", 0, 65536).duration_ns == 15 + 2 * (2 + 4096 * 10**9 // (100 * 2**30))
