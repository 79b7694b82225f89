"""The engine when running stages share a dimension's bandwidth (``alpha-beta``, k > 1).

model.md §5: with k > 1 stages running together on a dimension share its
bandwidth equally; their latency (fixed) parts do not slow each other. A
stage first spends its fixed time, then sends its bytes at B / (number of
that dimension's stages sending). Each dimension keeps one pending event
(the next fixed-part end or byte completion), re-planned whenever its set of
running stages changes; outdated events are skipped by a version number.
"""

from __future__ import annotations

import heapq

from themis.training.engine import Engine

_TOL = 1e-9


class SharedEngine(Engine):
    """:class:`Engine` with processor sharing of each dimension's bandwidth."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        nd = self.ndims
        self.bw = [d.bandwidth_bytes_per_ns for d in self.network.dims]
        self.running: list[dict[int, list[float]]] = [{} for _ in range(nd)]  # type: ignore[assignment]
        self.last_t = [0.0] * nd
        self.version = [0] * nd

    def _advance(self, d: int, t: float) -> None:
        run = self.running[d]
        dt = t - self.last_t[d]
        if run and dt > 0:
            self.busy[d] += dt
            sending = [v for v in run.values() if v[0] <= self.last_t[d] + _TOL]
            if sending:
                per = dt * self.bw[d] / len(sending)
                for v in sending:
                    v[1] -= per
        self.last_t[d] = t

    def _reschedule(self, d: int) -> None:
        self.version[d] += 1
        run = self.running[d]
        if not run:
            return
        now = self.last_t[d]
        sending = [v for v in run.values() if v[0] <= now + _TOL]
        nxt = min((v[0] for v in run.values() if v[0] > now + _TOL), default=float("inf"))
        if sending:
            rem = min(v[1] for v in sending)
            nxt = min(nxt, now + max(rem, 0.0) * len(sending) / self.bw[d])
        ver = self.version[d]
        self.seq += 1
        heapq.heappush(self.heap, (nxt, nxt, d if self.tie_by_dim else 0, self.seq,
                                   lambda: self._dim_event(d, ver)))

    def _serve(self, d: int, t: float) -> None:
        q = self.queues[d]
        table = self.table
        changed = False
        while self.free[d] and len(q):
            sid = q.pop()
            if sid is None:
                break
            if not changed:
                self._advance(d, t)
                changed = True
            self.free[d] -= 1
            self.start[sid] = t
            self.sent[d] += table.sent_bytes[sid]
            self.running[d][sid] = [t + table.fixed_ns[sid], table.sent_bytes[sid]]  # type: ignore[index]
        if changed:
            self._reschedule(d)

    def _dim_event(self, d: int, ver: int) -> None:
        if ver != self.version[d]:
            return
        t = self.now
        self._advance(d, t)
        run = self.running[d]
        table = self.table
        done = sorted(sid for sid, v in run.items()
                      if v[0] <= t + _TOL and v[1] <= _TOL * max(table.sent_bytes[sid], 1.0))
        touched: list[int] = []
        for sid in done:
            del run[sid]
            self.end[sid] = t
            self.free[d] += 1
            self.unsent[d] -= table.sent_bytes[sid]
        for sid in done:
            if not table.last[sid]:
                d2 = table.dim[sid + 1]
                self.queues[d2].push(sid + 1)
                touched.append(d2)
            else:
                cid = self.coll[sid]
                self.pending[cid] -= 1
                if self.pending[cid] == 0:
                    self.coll_end[cid] = t
                    self.done_cb[cid](cid, t)
        self._serve(d, t)
        for d2 in dict.fromkeys(touched):
            if d2 != d:
                self._serve(d2, t)
        self._reschedule(d)

    def inflight_sent(self, t: float) -> list[float]:
        """Bytes per dimension still to send: queued stages whole, running ones their rest."""
        out = list(self.unsent)
        for d, run in enumerate(self.running):
            for sid, v in run.items():
                out[d] -= self.table.sent_bytes[sid] - max(v[1], 0.0)
        return out
