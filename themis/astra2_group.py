"""A collective on a communicator group smaller than the system, as ASTRA-sim 2.x runs it.

ASTRA-sim 2.x (master ``518bd51``) flattens such a group to one 1-D ring over its
members (``CommunicatorGroup::get_collective_plan``): a ``RingTopology`` of dimension
``Local`` over the group's NPUs *in the comm-group file's order* (the constructor sorts
a copy only to find the rank's position), one phase per chunk on the queue of dimension
0, and the ``Ring`` algorithm whenever the ``<collective>-implementation`` list has more
than one entry (a one-entry list, a 1-D network, keeps its algorithm; only ``ring`` is
modelled here). ``involved_dim`` is not read for a group collective (the plan's own
``dimensions_involved``). What that ring costs, read in the source:

* the chunks are cut as for any collective (``Sys::determine_chunk_size`` against every
  NPU of the system: :func:`themis.timing.astra2.astra2_chunking`);
* a ``Local`` ring moves its packet bundles with ``MemBus::Transmition::Fast``: every
  NPU <-> memory hop costs a fixed 10 ns, whatever the system file's ``endpoint-delay``;
* each message from member a to member b goes through the analytical backend's
  ``MultiDimTopology::send``: on the first dimension where the two NPUs' coordinates
  differ, ``floor(h * L + m / beta)`` of that dimension (h for the distance between the
  two coordinates there), so members of one group may talk over different links;
* ``Ring::run`` per member i (timing.md §4's ring with per-link times): the first send
  at ``start + 10``; the k-th receive completes at ``max(s_prev^k + N(prev -> i), s_i^k)``
  (the receive is posted with the k-th send; ``CommonNetworkApi`` matches the k-th
  message of a (tag, src, dst, size)); the next send ``10 + P`` after it, P the reduce
  cost on a processed step (every step of a reduce-scatter, the first n - 1 of an
  all-reduce's 2(n - 1), none of an all-gather's n - 1 or an all-to-all's n (n - 1) / 2,
  ``Normal`` injection: one packet in flight); the chunk ends ``10 + P`` after the
  last receive. Messages: all-reduce, reduce-scatter and all-to-all ``chunk // n``,
  all-gather the chunk (each NPU's shard);
* ``active-chunks-per-dimension`` chunks run at once on each member, the next starting
  when one ends (FIFO).

Members whose links differ end at different times; :func:`group_ends_ns` gives each
member's end with every member starting at 0.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from themis.astra2_run import astra2_timing, check_astra2
from themis.collective import Collective
from themis.timing.astra2 import AstraSim2Timing, astra2_chunking
from themis.timing.base import resolve_algorithms
from topologies.errors import InputError
from topologies.network import Network, npu_coords
from topologies.system import SystemConfig

#: ``MemBus::Transmition::Fast``: what a ``Local`` ring's NPU <-> memory hop costs (ns).
FAST_HOP_NS = 10


def group_algorithm(network: Network, system: SystemConfig, kind: str) -> str:
    """The algorithm 2.x runs a flattened group with: ``ring`` when the implementation
    list has more than one entry, else its one entry."""
    algos = system.algorithms_for(kind)
    resolved = resolve_algorithms(network, algos) if algos is None else tuple(algos)
    return "ring" if len(resolved) > 1 else resolved[0]


def _link_ns(timing: AstraSim2Timing, sizes: tuple[int, ...], a: int, b: int,
             m: int) -> int:
    """``MultiDimTopology::send``: the first dimension where a and b differ."""
    ca, cb = npu_coords(a, sizes), npu_coords(b, sizes)
    dim = next(d for d in range(len(sizes)) if ca[d] != cb[d])
    delta = (cb[dim] - ca[dim]) % sizes[dim]
    return timing.message_ns(dim, m, delta)


def ring_chunk_ends_ns(kind: str, members: Sequence[int], starts: Sequence[int],
                       link_ns: Sequence[int], reduce_ns: int) -> list[int]:
    """Each member's end of one chunk's flattened ring (module docstring).

    ``members`` in ring order, ``starts[i]`` when member i starts the chunk,
    ``link_ns[i]`` one message from member i - 1 to member i, ``reduce_ns`` the
    reduce cost P of one message."""
    n = len(members)
    steps = {"all-reduce": 2 * (n - 1), "all-to-all": n * (n - 1) // 2}.get(kind, n - 1)

    def after(k: int) -> int:
        processed = kind == "reduce-scatter" or (kind == "all-reduce" and k <= n - 2)
        return FAST_HOP_NS + (reduce_ns if processed else 0)

    send = [s + FAST_HOP_NS for s in starts]
    ends = list(send)
    for k in range(steps):
        recv = [max(send[i - 1] + link_ns[i], send[i]) for i in range(n)]
        send = [r + after(k) for r in recv]
        ends = send
    return ends


def group_ends_ns(network: Network, system: SystemConfig, kind: str, comm_size: int,
                  members: Sequence[int], splits: int | None = None) -> dict[int, int]:
    """Each member's end of a ``kind`` collective of ``comm_size`` bytes (an all-gather's
    each rank's shard, as an ET's ``comm_size``) on the group ``members`` (the
    comm-group file's order), every member starting at 0, as ASTRA-sim 2.x flattens it
    (module docstring). ``splits`` defaults to the system file's."""
    n = len(members)
    if n < 2:
        raise InputError("a communicator group of one NPU: what ASTRA-sim 2.x does with "
                         "it (no phase, an inactive data set) is not modelled",
                         "pg_name", list(members))
    check_astra2(network, system, kind)
    algo = group_algorithm(network, system, kind)
    if algo != "ring":
        raise InputError(f"a communicator group smaller than the system on a 1-D network "
                         f"whose implementation list is [{algo}]: ASTRA-sim 2.x runs "
                         f"{algo} over the group's ring, not modelled (ring only)",
                         "pg_name", list(members))
    timing = astra2_timing(network, system, kind, float(FAST_HOP_NS))
    assert isinstance(timing, AstraSim2Timing)
    npus = network.npus
    c_splits = splits if splits is not None else (system.chunks or 1)
    size = comm_size * npus if kind == "all-gather" else comm_size
    if kind != "all-gather" and size == 0:
        size = c_splits * npus  # determine_chunk_size's raise (a converted NONE)
    run_size, count = astra2_chunking(Collective(kind, size, c_splits), network)
    chunk = run_size // (count * npus) if kind == "all-gather" else run_size // count
    msg = chunk if kind == "all-gather" else chunk // n
    sizes = tuple(d.npus for d in network.dims)
    link = [_link_ns(timing, sizes, members[i - 1], members[i], msg) for i in range(n)]
    red = timing.reduce_ns(msg)
    active = system.active_chunks or 1
    servers = [[0] * active for _ in range(n)]  # per member: when each server is free
    ends = [0] * n
    for _ in range(count):
        starts = [heapq.heappop(s) for s in servers]
        done = ring_chunk_ends_ns(kind, members, starts, link, red)
        for i, t in enumerate(done):
            heapq.heappush(servers[i], t)
            ends[i] = max(ends[i], t)
    return dict(zip(members, ends, strict=True))
