"""Benchmark the bounds' speed and how closely the solvers keep their wall-clock limits.

These are the measurements the tests do not make (no timing asserts in tests):

- LB0-LB3 on the large test instance (4 dimensions, 64 chunks): the LB3 MIP stops
  at its deterministic node limit, so this takes a few seconds at most;
- ``solve(..., "cpsat", time_limit_s=1)`` on the large network with 256 chunks:
  the whole solve (bounds, hints, model, search) should end near 1 s;
- CBC on issue 8's repro instance (Ring [4,2,4,2] at [8,4,2,1] GB/s, 16 GiB,
  16 chunks) with a 2 s limit: CBC's grace time plus the model build on top.

    python benchmarks/bench_limits.py            # one run of each, a table
    python benchmarks/bench_limits.py --json     # one JSON object

Run from the repository root (it imports the test instances of tests/solvers).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reports.formatting import format_table  # noqa: E402
from solvers import bounds, solve  # noqa: E402
from solvers.milp import cbc  # noqa: E402
from tests.solvers.solver_cases import MiB, large  # noqa: E402
from themis.instance import Instance  # noqa: E402
from topologies.network import Network  # noqa: E402


def measure() -> list[dict]:
    """One row per measurement: what, the limit it should keep (s), the wall time (s)."""
    rows = []
    t0 = time.perf_counter()
    b = bounds(Instance(large().network, large().size_bytes, 64))
    rows.append({"what": "bounds, large network, 64 chunks", "limit_s": None,
                 "wall_s": time.perf_counter() - t0, "detail": f"LB3 {b.lb3_method}"})
    res = solve(Instance(large().network, 64 * MiB, 256), "cpsat", time_limit_s=1.0)
    rows.append({"what": "cpsat, large network, 256 chunks", "limit_s": 1.0,
                 "wall_s": res.runtime_s, "detail": str(res.status)})
    net = Network.build(["Ring"] * 4, [4, 2, 4, 2], [8, 4, 2, 1], [0, 0, 0, 0])
    res = solve(Instance(net, 16 << 30, 16), "cbc", time_limit_s=2)
    rows.append({"what": "cbc, issue 8's repro", "limit_s": 2 + cbc.CBC_GRACE_S,
                 "wall_s": res.runtime_s, "detail": str(res.status)})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print the measurements."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    rows = measure()
    if args.json:
        print(json.dumps({"rows": rows}, indent=2))
        return 0
    print(format_table(["what", "limit (s)", "wall (s)", "detail"],
                       [[r["what"], "-" if r["limit_s"] is None else f"{r['limit_s']:g}",
                         f"{r['wall_s']:.2f}", r["detail"]] for r in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
