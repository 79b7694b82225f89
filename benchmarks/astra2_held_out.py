"""Re-measure the held-out runs (``tests/data/astra-sim-2.x/held-out-training.json``) with a
built ASTRA-sim 2.x binary, beside ``themis train``: the ETs are regenerated with ``themis
convert`` into a temporary folder, both run on them, and every end is printed.

    python benchmarks/astra2_held_out.py --astra-sim DIR [NAME ...]

DIR is an ASTRA-sim 2.x tree built with ``./build/astra_analytical/build.sh`` (the pins
the file's ``meta`` lists; never part of this project). Exit 1 when a printed end differs
from the file's or from themis's.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "astra-sim-2.x" / "held-out-training.json"
FINISHED = re.compile(r"sys\[(\d+)\] finished, (\d+) cycles, exposed communication (\d+) cycles")


def _cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "reports.cli", *argv], cwd=ROOT,
                          capture_output=True, text=True, check=False)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--astra-sim", type=Path, metavar="DIR", required=True)
    ap.add_argument("names", nargs="*", help="only these runs")
    args = ap.parse_args()
    binary = (args.astra_sim /
              "build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware")
    memory = args.astra_sim / "examples/remote_memory/analytical/no_memory_expansion.json"
    bad = 0
    print(f"{'run':48} {'recorded':>14} {'2.x now':>14} {'themis':>14} {'2.x s':>7}")
    for run in json.loads(DATA.read_text())["runs"]:
        if args.names and run["name"] not in args.names:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            d = Path(tmp)
            net, system, prefix = d / "network.yml", d / "system.json", d / "w"
            net.write_text(run["network_yaml"])
            system.write_text(json.dumps(run["system"]))
            flags = [{"NETWORK": str(net), "SYSTEM": str(system)}.get(a, a)
                     for a in run["convert"]]
            conv = _cli("convert", str(ROOT / run["workload"]), "--npus", str(run["npus"]),
                        "--passes", str(run["passes"]), "--out", str(prefix), *flags)
            if conv.returncode:
                print(f"{run['name']:48} convert failed: {conv.stderr.strip()[:60]}")
                bad += 1
                continue
            groups = Path(f"{prefix}.comm_groups.json")
            argv = [str(binary), f"--workload-configuration={prefix}",
                    f"--system-configuration={system}", f"--network-configuration={net}",
                    f"--remote-memory-configuration={memory}"]
            train = ["train", str(prefix), str(net), "--system", str(system), "--timing",
                     "astra-sim-2", "--json"]
            if groups.is_file():
                argv.append(f"--comm-group-configuration={groups}")
                train += ["--comm-group", str(groups)]
            t0 = time.perf_counter()
            proc = subprocess.run(argv, cwd=d, capture_output=True, text=True, check=False)
            wall = time.perf_counter() - t0
            ends = [int(m[1]) for m in FINISHED.findall(proc.stdout)]
            now = max(ends) if len(ends) == run["npus"] else None
            res = _cli(*train)
            ours = json.loads(res.stdout)["end_ns"] if res.returncode == 0 else None
        want_ours = run["end_ns"] if run["themis"] == "exact" else None
        ok = now == run["end_ns"] and ours == want_ours
        bad += not ok
        print(f"{run['name']:48} {run['end_ns']:>14,} {(f'{now:,}' if now else '-'):>14} "
              f"{(f'{ours:,}' if ours else 'refused'):>14} {wall:>7.2f}{'' if ok else '  DIFF'}")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
