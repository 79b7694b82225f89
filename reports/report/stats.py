"""A sweep database's results grouped by instance and scored, and the statistics on them.

Every row is scored against its own AG variant's references (see
:mod:`reports.scoring`): policies and reverse solvers against the reverse
variant's best and bound, free solvers against the free variant's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reports.methods import DEFAULT_INTRAS, DEFAULT_POLICIES
from reports.records import (
    DEFAULT_TIMING,
    AgOrder,
    InstanceInfo,
    Kind,
    MethodResult,
    Status,
    task_key,
)
from reports.scoring import Reference, score


@dataclass
class InstanceResult:
    """All results of one instance, scored; ``by_method`` keyed by display name."""

    info: InstanceInfo
    rows: list[MethodResult]
    references: dict[AgOrder, Reference]
    by_method: dict[str, MethodResult] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The instance key."""
        return self.info.instance_key

    @property
    def reverse(self) -> Reference:
        """The references of the reverse variant (the policies')."""
        return self.references[AgOrder.REVERSE]

    @property
    def best_ns(self) -> float | None:
        """The best makespan for the reverse variant."""
        return self.reverse.best_ns

    @property
    def lower_bound_ns(self) -> float | None:
        """The best lower bound for the reverse variant."""
        return self.reverse.lower_bound_ns

    @property
    def proven(self) -> bool:
        """The reverse variant's best is proven optimal."""
        return self.reverse.proven

    @property
    def dims(self) -> int:
        """D, the dimensions a chunk crosses."""
        return int(self.info.dims)

    @property
    def chunks(self) -> int:
        """C."""
        return int(self.info.chunks)

    def label(self) -> str:
        """E.g. ``small-2d 64MiB C=4, delay 10 ns``."""
        return self.info.label()

    def task_key(self, r: MethodResult) -> str:
        """The database key of one of its rows."""
        return task_key(self.key, r.method, str(r.ag_order))

    def makespan(self, method: str) -> float | None:
        """The makespan of a method (display name), if it finished."""
        r = self.by_method.get(method)
        return None if r is None else r.makespan_ns

    def bounds(self) -> list[MethodResult]:
        """Its bound rows."""
        return [r for r in self.rows if r.kind == Kind.BOUND]


def _row_order(r: MethodResult) -> tuple[int, int, str]:
    kinds = {Kind.BOUND: 0, Kind.POLICY: 1, Kind.SOLVER: 2}
    policy, intra = r.policy, r.intra
    rank = (DEFAULT_POLICIES.index(policy) * len(DEFAULT_INTRAS) + DEFAULT_INTRAS.index(intra)
            if policy in DEFAULT_POLICIES and intra in DEFAULT_INTRAS else 99)
    return kinds.get(r.kind, 3), rank, f"{r.method}/{r.ag_order != AgOrder.REVERSE}"


def group(rows: Iterable[dict[str, Any]]) -> list[InstanceResult]:
    """Database rows -> scored instances, in (D, network, size, C, delay) order."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r["instance_key"]].append(r)
    out = []
    for rs in groups.values():
        results = sorted((MethodResult.from_row(r) for r in rs), key=_row_order)
        refs = score(results)
        res = InstanceResult(InstanceInfo.from_row(rs[0]), results, refs)
        for m in results:
            res.by_method[m.name] = m
        out.append(res)
    out.sort(key=lambda i: (i.dims, i.info.network_label, i.info.size_bytes, i.chunks,
                            i.info.endpoint_delay_ns))
    return out


def alpha_beta_view(instances: Sequence[InstanceResult]) -> list[InstanceResult]:
    """The instances with their alpha-beta rows only (the model the solvers and bounds
    are of); the same objects when no row has another timing."""
    if all(r.timing == DEFAULT_TIMING for i in instances for r in i.rows):
        return list(instances)
    out = []
    for i in instances:
        rows = [r for r in i.rows if r.timing == DEFAULT_TIMING]
        out.append(InstanceResult(i.info, rows, i.references,
                                  {r.name: r for r in rows}))
    return out


def policy_methods(instances: Sequence[InstanceResult]) -> list[str]:
    """Policy methods present: the default ones in their order, then the others sorted."""
    present = {r.name for i in instances for r in i.rows if r.kind == Kind.POLICY}
    default = [f"{p}/{q}" for p in DEFAULT_POLICIES for q in DEFAULT_INTRAS]
    return [m for m in default if m in present] + sorted(present - set(default))


def solver_methods(instances: Sequence[InstanceResult]) -> list[str]:
    """Solver methods present (``cpsat``, ``cpsat (free)``...)."""
    return sorted({r.name for i in instances for r in i.rows if r.kind == Kind.SOLVER})


def mean(xs: Sequence[float]) -> float | None:
    """The mean, ``None`` for no values."""
    return sum(xs) / len(xs) if xs else None


def maximum(xs: Sequence[float]) -> float | None:
    """The max, ``None`` for no values."""
    return max(xs) if xs else None


def values(instances: Iterable[InstanceResult], method: str, key: str) -> list[float]:
    """Attribute ``key`` of ``method``'s result on each instance that has it."""
    out = []
    for i in instances:
        r = i.by_method.get(method)
        if r is not None and getattr(r, key) is not None and r.status != Status.ERROR:
            out.append(float(getattr(r, key)))
    return out


def themis_pairs(methods: Sequence[str]) -> list[tuple[str, str]]:
    """(themis/q, baseline/q) pairs present."""
    return [(f"themis/{q}", f"baseline/{q}") for q in DEFAULT_INTRAS
            if f"themis/{q}" in methods and f"baseline/{q}" in methods]


def improvements(instances: Sequence[InstanceResult], themis: str, baseline: str
                 ) -> list[float]:
    """Per instance, baseline makespan / Themis makespan (bandwidth-utilization ratio)."""
    out = []
    for i in instances:
        t, b = i.makespan(themis), i.makespan(baseline)
        if t and b:
            out.append(b / t)
    return out


def pct(x: float | None, digits: int = 2) -> str:
    """``12.34%`` or ``-``."""
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def ratio(x: float | None) -> str:
    """``1.234x`` or ``-``."""
    return "-" if x is None else f"{x:.3f}x"


def us(x: float | None) -> str:
    """Nanoseconds as ``1,234.567`` microseconds, or ``-``."""
    return "-" if x is None else f"{x / 1e3:,.3f}"


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (first column left-aligned, the others right-aligned)."""
    lines = ["| " + " | ".join(headers) + " |",
             "| " + " | ".join("---" if j == 0 else "---:" for j in range(len(headers))) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


__all__ = ["InstanceResult", "alpha_beta_view", "group", "improvements", "maximum", "md_table",
           "mean", "pct",
           "policy_methods", "ratio", "solver_methods", "themis_pairs", "us", "values"]
