"""Benchmark the whole-process time of a small ``themis`` command against a bare Python start.

A small run's time is mostly start-up: the interpreter, then the imports. This
times the command as a user runs it (a new process each time, output captured)
and ``python -c pass`` with the same interpreter and environment, paired: each
round runs both, one after the other, so a change in the machine's load touches
both figures of a round alike. It prints the medians over the rounds, the median
of the per-round ratios (command / bare start), and each process's CPU time.
The bytecode is cached (``PYTHONDONTWRITEBYTECODE`` is dropped), as after
``pip install``.

    python benchmarks/startup.py                          # themis simulate small-2d, 21 rounds
    python benchmarks/startup.py --rounds 41 -- network small-2d
    python benchmarks/startup.py --json

Issue 23's goal: ``themis simulate small-2d`` at most 3.3x a bare Python start.
On a shared, loaded machine quote the median ratio, never a single time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_COMMAND = ("simulate", "small-2d")


def _child_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall s, CPU s) of one child process; a failing command ends the benchmark."""
    cpu0, t0 = _child_cpu_s(), time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall_s, cpu_s = time.perf_counter() - t0, _child_cpu_s() - cpu0
    if p.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return wall_s, cpu_s


def themis_command(words: list[str]) -> list[str]:
    """The ``themis`` console script beside this interpreter (as a user runs it), or
    ``python -m reports.cli`` when it is not installed there."""
    script = Path(sys.executable).with_name("themis")
    if script.exists():
        return [str(script), *words]
    found = shutil.which("themis")
    if found:
        return [found, *words]
    return [sys.executable, "-m", "reports.cli", *words]


def measure(words: list[str], rounds: int) -> dict:
    """Paired rounds of the command and ``python -c pass``: medians and the ratio."""
    env = dict(os.environ)
    # Bytecode cached, as after ``pip install`` (which compiles it): with
    # PYTHONDONTWRITEBYTECODE set and no cache, every run would compile the sources.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    cmd, bare = themis_command(words), [sys.executable, "-c", "pass"]
    run_once(bare, env)  # warm the file and bytecode caches once, unmeasured
    run_once(cmd, env)
    cmd_wall, cmd_cpu, bare_wall, bare_cpu, ratios = [], [], [], [], []
    for i in range(rounds):
        pair = [(cmd, cmd_wall, cmd_cpu), (bare, bare_wall, bare_cpu)]
        if i % 2:  # alternate which goes first
            pair.reverse()
        for argv, walls, cpus in pair:
            wall_s, cpu_s = run_once(argv, env)
            walls.append(wall_s)
            cpus.append(cpu_s)
        ratios.append(cmd_wall[-1] / bare_wall[-1])
    return {
        "command": " ".join(["themis", *words]),
        "rounds": rounds,
        "command_wall_s": statistics.median(cmd_wall),
        "command_cpu_s": statistics.median(cmd_cpu),
        "bare_wall_s": statistics.median(bare_wall),
        "bare_cpu_s": statistics.median(bare_cpu),
        "ratio": statistics.median(ratios),
        "ratio_of_medians": statistics.median(cmd_wall) / statistics.median(bare_wall),
        "cpu_ratio": statistics.median(cmd_cpu) / statistics.median(bare_cpu),
        "min_wall_ratio": min(cmd_wall) / min(bare_wall),
        "load_average": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    """Print the medians and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=21, help="paired rounds (median)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("words", nargs="*", help="the themis command (default: simulate small-2d)")
    args = ap.parse_args(argv)
    out = measure(list(args.words or DEFAULT_COMMAND), max(1, args.rounds))
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{out['command']}: {out['rounds']} paired rounds, load average "
          f"{out['load_average']:.1f}")
    for what, key in (("command", "command"), ("python -c pass", "bare")):
        print(f"  {what:16s}  wall {out[key + '_wall_s']:.4f} s  CPU {out[key + '_cpu_s']:.4f} s")
    print(f"  median ratio (command / bare start): {out['ratio']:.2f} "
          f"(ratio of medians {out['ratio_of_medians']:.2f}, of fastest runs "
          f"{out['min_wall_ratio']:.2f}, of median CPU times {out['cpu_ratio']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
