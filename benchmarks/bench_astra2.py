"""``themis simulate --timing astra-sim-2`` against ASTRA-sim 2.x's own run times (R4).

Run: python benchmarks/bench_astra2.py [--repeat N]

For each of the 20 finished reference runs R4 (``tests/data/astra-sim-2.x``) it
times the very command that reproduces 2.x's number,

    themis simulate NET.yml --system SYS.json --collective C --size S --chunks K
        --policy baseline --timing astra-sim-2 --json

(a) in-process (``reports.cli.main``, after one warm-up call: the command's work
without the interpreter's start-up and imports) and (b) as a whole process (a
fresh ``python -m reports.cli``, wall clock and the child's CPU seconds), each the
median of N runs, and divides by the wall time ASTRA-sim 2.x took for the same
run (``wall_s``, recorded with the reference). It also times a bare Python start
(``python -c pass``) and prints the whole-process / bare-start ratio: the
start-up budget is about 4x. Child processes get a private bytecode cache
(``PYTHONPYCACHEPREFIX``) so they run from compiled modules, as an installed
package does, without writing into the source tree. On a shared, loaded
machine quote the medians and ratios, not single times.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "tests" / "data" / "astra-sim-2.x" / "runs-R4.json"


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_process(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one child process."""
    cpu0, t0 = _child_cpu(), time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - t0, _child_cpu() - cpu0
    if p.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return wall, cpu, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    args = ap.parse_args()
    from reports.cli import main as themis_main

    runs = [r for r in json.loads(RUNS.read_text())["runs"] if r["rc"] == 0]
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        bare = [sys.executable, "-c", "pass"]
        run_process(bare, env)
        rows, in_ratio, proc_ratio, start_ratio = [], [], [], []
        for r in runs:
            net, system = Path(tmp) / f"{r['name']}.yml", Path(tmp) / f"{r['name']}.json"
            net.write_text(r["network_yaml"])
            system.write_text(json.dumps(r["system_json"]))
            argv = ["simulate", str(net), "--system", str(system), "--collective",
                    r["collective"], "--size", str(r["size_bytes_project"]), "--chunks",
                    str(r["chunks"]), "--policy", "baseline", "--timing", "astra-sim-2",
                    "--json"]
            inproc = []
            for i in range(args.repeat + 1):
                out = io.StringIO()
                t0 = time.perf_counter()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                    assert themis_main(argv) == 0
                if i:  # the first call is the warm-up
                    inproc.append(time.perf_counter() - t0)
            assert json.loads(out.getvalue())["makespan_ns"] == r["astra2_ns"]
            cmd = [sys.executable, "-m", "reports.cli", *argv]
            run_process(cmd, env)  # compiles the bytecode cache once
            walls, cpus, bare_walls = [], [], []
            for _ in range(args.repeat):
                w, c, _ = run_process(cmd, env)
                walls.append(w)
                cpus.append(c)
                bare_walls.append(run_process(bare, env)[0])
            t_in, t_proc = statistics.median(inproc), statistics.median(walls)
            t_bare = statistics.median(bare_walls)
            in_ratio.append(t_in / r["wall_s"])
            proc_ratio.append(t_proc / r["wall_s"])
            start_ratio.append(t_proc / t_bare)
            rows.append((r["name"], r["wall_s"], t_in, t_proc, statistics.median(cpus), t_bare))
    print(f"{'R4 run':34s} {'2.x s':>7s} {'in-proc s':>10s} {'process s':>10s} "
          f"{'proc CPU s':>10s} {'bare py s':>10s} {'proc/bare':>9s}")
    for name, w2, t_in, t_proc, cpu, t_bare in rows:
        print(f"{name:34s} {w2:7.3f} {t_in:10.4f} {t_proc:10.4f} {cpu:10.4f} {t_bare:10.4f} "
              f"{t_proc / t_bare:9.2f}")
    print()
    print(f"median in-process time / ASTRA-sim 2.x wall time:   "
          f"{statistics.median(in_ratio):.3f}")
    print(f"median whole-process time / ASTRA-sim 2.x wall time: "
          f"{statistics.median(proc_ratio):.3f}")
    print(f"median whole-process time / bare Python start:       "
          f"{statistics.median(start_ratio):.2f}")


if __name__ == "__main__":
    main()
