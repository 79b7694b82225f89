"""The report's "Beyond Themis" section: the best practical policy against Themis,
baseline and the optimum (or the lower bound), and how much of Themis' gap is certified.

A policy's makespan on an instance is its best over the disciplines it ran under
(the portfolio chooses its own). The reference is the best known makespan (the
optimum where proven) when an exact solver ran, else the lower bound. When some
instance has no proven optimum, a table says per instance how much of Themis' gap
to the bound is *certified*: Themis is at least ``T / B - 1`` above the optimum
when a schedule of makespan ``B`` exists, so ``(T - B) / (T - LB)`` of its gap to
the bound ``LB`` is real, and the rest (the best schedule's gap ``B / LB - 1``) may
be the bound's weakness.
"""

from __future__ import annotations

from collections.abc import Sequence

from reports.records import Kind, Status
from reports.report.markdown import ReportData, add_section, policy_gaps
from reports.report.stats import InstanceResult, maximum, mean, pct
from reports.report.stats import md_table as table
from reports.scoring import REL_TOL

#: The practical policies compared, in order (those present are shown), and the best one.
POLICY_ORDER: tuple[str, ...] = ("baseline", "round-robin", "themis", "guarded", "lb-mix",
                                 "portfolio")
BEST_PRACTICAL = "portfolio"
IMPROVE = "improve"


def _best(i: InstanceResult, policy: str) -> tuple[float | None, float | None]:
    """(best makespan over the policy's disciplines, mean runtime of one run)."""
    rows = [r for r in i.rows if r.kind == Kind.POLICY and r.policy == policy
            and r.makespan_ns is not None and r.status != Status.ERROR]
    if not rows:
        return None, None
    return (min(r.makespan_ns for r in rows),  # type: ignore[type-var]
            mean([float(r.runtime_s or 0.0) for r in rows]))


def _improve(i: InstanceResult) -> tuple[float | None, float | None]:
    r = i.by_method.get(IMPROVE)
    if r is None or r.makespan_ns is None or not r.valid:
        return None, None
    return r.makespan_ns, float(r.runtime_s or 0.0)


def _reference(i: InstanceResult, exact: bool) -> float | None:
    return i.best_ns if exact else i.lower_bound_ns


def summary_rows(instances: Sequence[InstanceResult], exact: bool) -> list[list[str]]:
    """One row per practical policy present (and improve): the headline statistics."""
    present = {r.policy for i in instances for r in i.rows if r.kind == Kind.POLICY}
    methods = [p for p in POLICY_ORDER if p in present]
    methods += sorted(p for p in present if p not in POLICY_ORDER and p)
    has_improve = any(IMPROVE in i.by_method for i in instances)
    rows = []
    for m in methods + ([IMPROVE] if has_improve else []):
        gaps, slower, within, times = [], 0, 0, []
        for i in instances:
            ms, t = _improve(i) if m == IMPROVE else _best(i, m)
            ref = _reference(i, exact)
            base, _ = _best(i, "baseline")
            if ms is None or not ref:
                continue
            g = (ms - ref) / ref
            gaps.append(g)
            within += g <= 0.01 + REL_TOL
            slower += base is not None and ms > base * (1 + REL_TOL)
            times.append(t or 0.0)
        if gaps:
            rows.append([m, str(len(gaps)), pct(mean(gaps)), pct(maximum(gaps)),
                         str(slower), f"{within}/{len(gaps)}", f"{mean(times):.4f}"])
    return rows


#: Instances where Themis is within this relative distance of the bound are left out
#: of the certification table (nothing to certify).
AT_BOUND = 1e-4


def certification_rows(instances: Sequence[InstanceResult]) -> list[list[str]]:
    """Per instance where Themis is above the bound: Themis' gap to the bound, the best
    schedule's, the certified gap and share."""
    rows = []
    for i in instances:
        lb = i.lower_bound_ns
        t, _ = _best(i, "themis")
        if not lb or t is None or t <= lb * (1 + AT_BOUND):
            continue
        best_m, best = min(((m, ms) for m, ms in
                            [(p, _best(i, p)[0]) for p in POLICY_ORDER] +
                            [(IMPROVE, _improve(i)[0])] if ms is not None),
                           key=lambda x: x[1])
        gap_t = (t - lb) / lb
        certified = t / best - 1
        share = (t - best) / (t - lb) if t > lb * (1 + REL_TOL) else None
        rows.append([i.label(), pct(gap_t), best_m, pct((best - lb) / lb), pct(certified),
                     "-" if share is None else pct(share, 0)])
    return rows


def beyond_themis(data: ReportData) -> list[str]:
    """The section (nothing if neither the portfolio nor improve ran)."""
    instances = data.instances
    policies = {r.policy for i in instances for r in i.rows if r.kind == Kind.POLICY}
    if BEST_PRACTICAL not in policies and not any(IMPROVE in i.by_method for i in instances):
        return []
    from solvers import backend_names

    # An exact solver (any registered backend) makes the reference the best known / optimum.
    exact = any(s.split(" ")[0] in backend_names() for s in data.solvers)
    ref = "the best known makespan (the optimum where proven)" if exact else \
        "the lower bound (LB0-LB3)"
    lines = ["## Beyond Themis", "",
             f"Each policy's best over the disciplines it ran under, against {ref}: mean "
             "and max gap, instances slower than baseline (its best discipline), instances "
             "within 1%, and the mean time of one run (one policy under one discipline; "
             "`improve` is the offline local search + CP-SAT of `themis improve`, on "
             "deterministic budgets). The portfolio simulates its candidates and keeps the "
             "shortest, so it is never slower than baseline or Themis.", ""]
    rows = summary_rows(instances, exact)
    lines += [table(["method", "instances", "mean gap", "max gap", "slower than baseline",
                     "within 1%", "time per collective (s)"], rows), ""]
    choices: dict[str, int] = {}
    for i in instances:
        for r in i.rows:
            if r.policy == BEST_PRACTICAL and r.choice:
                name = r.choice.split("/")[0].split(":")[0]
                choices[name] = choices.get(name, 0) + 1
    if choices:
        won = ", ".join(f"{k} {v}" for k, v in sorted(choices.items(), key=lambda x: -x[1]))
        lines += [f"Winning portfolio candidates (runs): {won}.", ""]
    if not all(i.proven for i in instances):
        cert = certification_rows(instances)
        if cert:
            lines += ["How much of Themis' gap to the lower bound is certified, per instance "
                      f"where Themis (best discipline) is more than {pct(AT_BOUND)} above the "
                      f"bound ({len(cert)} of {len(instances)}): Themis is at least "
                      "`certified` above the optimum, because the best schedule found exists; "
                      "the best schedule's own gap is what the bound leaves open.", "",
                      table(["instance", "Themis gap to LB", "best schedule", "its gap to LB",
                             "certified", "share of Themis' gap certified"], cert), ""]
            shares = [float(r[-1].rstrip("%")) / 100 for r in cert if r[-1] != "-"]
            worst = max(float(r[3].rstrip("%")) / 100 for r in cert)
            lines += [f"On these instances the best schedule certifies {pct(mean(shares), 0)} "
                      f"of Themis' gap to the bound on average (at least "
                      f"{pct(min(shares), 0)}); the best schedule is at most {pct(worst)} "
                      "above the bound.", ""]
    return lines


add_section(beyond_themis, before=policy_gaps)

__all__ = ["beyond_themis", "certification_rows", "summary_rows"]
