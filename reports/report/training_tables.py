"""The training report's tables: one row per run, speed-ups, end times, findings.

:class:`Row` is one simulated run (a workload on a network under a policy,
with its case's bound); the functions turn a list of rows into the Markdown
tables and bullets of ``reports/training/README.md`` and its ``results.csv``.
Both reports of a sweep database's training rows use these functions: the training
report itself (:mod:`reports.report.training`, ``themis train-report``) and the study
report (:mod:`reports.report.training_db`, ``themis train-report --db``). The first
policy label of a list of rows is the one speed-ups are measured against.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from statistics import mean

#: Workload families and their bundled workloads.
FAMILIES: dict[str, tuple[str, ...]] = {
    "CNN": ("vgg16", "resnet50"),
    "Transformer": ("gpt3", "transformer"),
    "DLRM": ("dlrm",),
    "MLP": ("mlp-data-model", "mlp-model-data", "mlp-model"),
}

#: The Themis paper's end-to-end speed-ups over baseline: (workload, Themis, Ideal, ours).
PAPER: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("ResNet-152", "1.49x (2.25x max)", "1.54x", ("resnet50", "vgg16")),
    ("GNMT", "1.30x", "1.32x", ()),
    ("DLRM", "1.30x", "1.33x", ("dlrm",)),
    ("Transformer-1T", "1.25x", "1.26x", ("transformer", "gpt3")),
)


@dataclass(frozen=True)
class Row:
    """One run: a workload on a network under a policy."""

    family: str
    workload: str
    network: str
    npus: int
    policy: str
    end_ns: float
    compute_ns: float
    exposed_comm_ns: float
    lower_bound_ns: float
    speedup: float
    ideal_speedup: float


def rows_csv(rows: Sequence[Row]) -> str:
    """``results.csv``: one line per run, the columns of :class:`Row` (or of the rows'
    own subclass of it, whose fields follow)."""
    buf = io.StringIO()
    columns = [f.name for f in fields(rows[0] if rows else Row)]
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: csv_value(k, v) for k, v in asdict(row).items()})
    return buf.getvalue()


def csv_value(key: str, value: object) -> object:
    if not isinstance(value, float) or math.isnan(value):
        return "" if isinstance(value, float) else value
    if key.endswith("_ns"):
        return f"{value:.0f}" if value == int(value) else f"{value:.3f}"
    return f"{value:.6f}"


def fmt_x(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f}x"


def fmt_pair(values: Sequence[float]) -> str:
    """``mean / max`` of speed-ups ("-" when none, or when one is unknown)."""
    return f"{fmt_x(mean(values))} / {fmt_x(max(values))}" if values else "-"


def md_table(headers: Sequence[str], body: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |",
             "| " + " | ".join("---" if i == 0 else "---:" for i in range(len(headers))) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(lines)


def labels_of(rows: Sequence[Row]) -> list[str]:
    return list(dict.fromkeys(r.policy for r in rows))


def cases_of(rows: Sequence[Row]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((r.workload, r.network) for r in rows))


def rows_by_key(rows: Sequence[Row]) -> dict[tuple[str, str, str], Row]:
    return {(r.workload, r.network, r.policy): r for r in rows}


def speedup_table(rows: Sequence[Row]) -> str:
    """Mean and max speed-up over baseline per workload, per policy and for the bound."""
    labels = labels_of(rows)[1:]
    body = []
    for wname in dict.fromkeys(r.workload for r in rows):
        mine = [r for r in rows if r.workload == wname]
        cells = [wname]
        for label in labels:
            sp = [r.speedup for r in mine if r.policy == label]
            cells.append(fmt_pair(sp))
        ideal = [r.ideal_speedup for r in mine if r.policy == labels_of(rows)[0]]
        cells.append(fmt_pair(ideal))
        body.append(cells)
    return md_table(["workload", *labels, "bound (Ideal)"], body)


def case_table(rows: Sequence[Row], field: str, scale: float = 1e6) -> str:
    """``field`` (ms) of every workload x network, one column per policy and the bound."""
    got, labels = rows_by_key(rows), labels_of(rows)
    body = []
    for wname, nname in cases_of(rows):
        cells = [f"{wname} / {nname}"]
        cells += [f"{getattr(got[wname, nname, lb], field) / scale:.4g}" for lb in labels]
        if field == "end_ns":
            bound = got[wname, nname, labels[0]].lower_bound_ns
            cells.append("-" if math.isnan(bound) else f"{bound / scale:.4g}")
        body.append(cells)
    extra = ["bound"] if field == "end_ns" else []
    return md_table(["workload / network", *labels, *extra], body)


def paper_table(rows: Sequence[Row]) -> str:
    """The paper's speed-ups beside the best practical policy's and the bound's here."""
    labels = labels_of(rows)
    body = []
    for paper_name, themis, ideal, ours in PAPER:
        present = [w for w in ours if any(r.workload == w for r in rows)]
        if not present:
            body.append([paper_name, themis, ideal, "-", "-", "-", "-"])
        for wname in present:
            mine = [r for r in rows if r.workload == wname]
            best = {lb: mean(r.speedup for r in mine if r.policy == lb) for lb in labels[1:]}
            label = max(best, key=best.__getitem__)
            th = [r.speedup for r in mine if r.policy == "themis/scf"]
            ideal_ours = [r.ideal_speedup for r in mine if r.policy == labels[0]]
            body.append([paper_name, themis, ideal, wname,
                         f"{fmt_x(mean(th))} ({fmt_x(max(th))} max)" if th else "-",
                         f"{label} {fmt_x(best[label])}", fmt_x(mean(ideal_ours))])
    return md_table(["paper workload", "paper Themis", "paper Ideal", "ours",
                "our themis/scf mean (max)", "our best policy (mean)", "our bound (mean)"], body)


def findings(rows: Sequence[Row]) -> str:
    """Bullets: per policy, how many cases gain, tie or lose against baseline, and extremes."""
    out = []
    for label in labels_of(rows)[1:]:
        mine = [r for r in rows if r.policy == label]
        up = sum(r.speedup >= 1.01 for r in mine)
        down = [r for r in mine if r.speedup <= 0.99]
        best, worst = max(mine, key=lambda r: r.speedup), min(mine, key=lambda r: r.speedup)
        bounded = [r.lower_bound_ns / r.end_ns for r in mine if not math.isnan(r.lower_bound_ns)]
        line = (f"- {label}: mean {fmt_x(mean(r.speedup for r in mine))} over {len(mine)} cases; "
                f"{up} faster than baseline by 1% or more, {len(mine) - up - len(down)} within "
                f"1%, {len(down)} slower; best {fmt_x(best.speedup)} ({best.workload} on "
                f"{best.network}), worst {fmt_x(worst.speedup)} ({worst.workload} on "
                f"{worst.network})")
        if bounded:
            line += f"; bound / end {mean(bounded):.2f} on average (1 = at the bound)"
        out.append(line + ".")
    known = [r for r in rows if not math.isnan(r.lower_bound_ns)]
    cases: dict[tuple[str, str], list] = {}
    for r in known:
        cases.setdefault((r.workload, r.network), []).append(r)
    if cases:
        tight = [rs[0].lower_bound_ns / min(x.end_ns for x in rs) for rs in cases.values()]
        at = sum(t >= 0.999 for t in tight)
        out.append(f"- The bound is {mean(tight):.3f} of the best policy's end on average over "
                   f"{len(tight)} cases (lowest {min(tight):.3f}; within 0.1% in {at}): "
                   "what is left between the policies and the bound is at most that.")
    if known:
        above = sum(r.lower_bound_ns > r.end_ns for r in known)
        out.append(f"- The bound is at most the end time in {len(known) - above} of "
                   f"{len(known)} runs" + (f" (ABOVE it in {above}: a bug)." if above else "."))
    return "\n".join(out)


def most_different(rows: Sequence[Row]) -> tuple[str, str]:
    """The (workload, network) whose policies' end times differ most (max / min)."""
    def spread(case: tuple[str, str]) -> float:
        ends = [r.end_ns for r in rows if (r.workload, r.network) == case]
        return max(ends) / min(ends)
    return max(cases_of(rows), key=spread)

__all__ = ["FAMILIES", "PAPER", "Row", "case_table", "cases_of", "csv_value", "findings",
           "fmt_pair", "fmt_x", "labels_of", "md_table", "most_different", "paper_table",
           "rows_by_key", "rows_csv", "speedup_table"]
