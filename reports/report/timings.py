"""The README section of policies timed with other models than alpha-beta.

A sweep with a ``timing`` key (e.g. ``timing = ["alpha-beta", "astra-sim-1.0"]``)
simulates its policies under each timing model; the solvers and bounds are of
the alpha-beta model, so the other sections, the plots and the per-instance
tables hold the alpha-beta rows. This section gives, per timing and policy
method, the gap to the best policy of the same timing on the same instance,
how often it is slower than baseline under the same timing and discipline, and
the mean makespan ratio to the same method under alpha-beta.
"""

from __future__ import annotations

from reports.records import DEFAULT_TIMING, Kind, MethodResult, Status
from reports.report import markdown
from reports.report.stats import maximum, mean, pct
from reports.report.stats import md_table as table
from reports.scoring import REL_TOL


def _ok(r: MethodResult | None) -> bool:
    return r is not None and r.makespan_ns is not None and r.status != Status.ERROR


def other_timings(data: markdown.ReportData) -> list[str]:
    """The section (``[]`` when every row is alpha-beta)."""
    every = data.every or []
    timings = sorted({r.timing for i in every for r in i.rows} - {DEFAULT_TIMING})
    if not timings:
        return []
    lines = ["## Under other timing models", "",
             "Policies simulated with another timing model than alpha-beta (the model the "
             "solvers and bounds are of, and of the sections above). `gap` is to the best "
             "policy of the same timing on the instance; `slower than baseline` counts "
             "instances where the method is more than a relative 1e-6 slower than "
             "`baseline` under the same timing and discipline; `vs alpha-beta` is the mean "
             "ratio of its makespan to the same method's under alpha-beta.", ""]
    for t in timings:
        methods: list[str] = []
        for i in every:
            for row in i.rows:
                if row.kind == Kind.POLICY and row.timing == t and row.method not in methods:
                    methods.append(row.method)
        rows = []
        for m in methods:
            gaps: list[float] = []
            slower = 0
            ratios: list[float] = []
            n = 0
            for i in every:
                r = next((x for x in i.rows if x.method == m), None)
                if not _ok(r):
                    continue
                assert r is not None and r.makespan_ns is not None
                n += 1
                if r.gap is not None:
                    gaps.append(r.gap)
                base = next((x for x in i.rows if x.timing == t and x.policy == "baseline"
                             and x.intra == r.intra), None)
                if _ok(base) and r.makespan_ns > base.makespan_ns * (1 + REL_TOL):  # type: ignore[union-attr,operator]
                    slower += 1
                ab = next((x for x in i.rows if x.timing == DEFAULT_TIMING
                           and x.policy == r.policy and x.intra == r.intra), None)
                if _ok(ab) and ab.makespan_ns:  # type: ignore[union-attr]
                    ratios.append(r.makespan_ns / ab.makespan_ns)  # type: ignore[union-attr]
            rm = mean(ratios)
            rows.append([f"`{m}`", n, pct(mean(gaps)), pct(maximum(gaps)), slower,
                         "-" if rm is None else f"{rm:.3f}x"])
        lines += [f"Timing `{t}`:", "",
                  table(["method", "instances", "mean gap", "max gap", "slower than baseline",
                         "vs alpha-beta"], rows), ""]
    return lines


markdown.add_section(other_timings)

__all__ = ["other_timings"]
