"""The one engine against the two event loops it replaced: every number, exactly.

Until issue 15 the simulator of collectives (``themis/simulator.py``, the batch
loop ``run_events``) and the training simulator (``Engine`` / ``SharedEngine``)
had event loops of their own in ``themis/engine.py``. This script takes those
modules from a git revision that still has them (``--rev``, default the last
one), imports them from a temporary directory beside today's code, and runs
random cases through both, comparing exactly (floats with ``==``):

* ``sim``: every registered policy (a fixed route too) x discipline (and the
  portfolio's own choice), timings alpha-beta / astra-sim-1.0 / astra-sim-2,
  k = 1-3, tie orders start / dim, localBWAware, one to three collectives
  with issue times, half the networks symmetric (many same-time events):
  ``simulate``'s makespan and every stage's start and end, ``makespan_ns``,
  and the replay of the schedule;
* ``train``: bundled workloads x presets x policies (themis-running and fixed
  routes too) x disciplines x both timings, k = 1-3, 1-64 chunks, boost mode,
  LIFO / FIFO, localBWAware, a quarter with the iteration bound:
  ``simulate_training``'s whole result (``to_dict(timeline=True)``) and its
  schedule's stages;
* ``iter``: ``solvers.iteration.replay_iteration`` of a training run's own plans
  and dimension orders.

The old modules import today's other modules (timing models, disciplines, the
training loops, planner and bound): the comparison isolates the engine on a tree
whose other modules still behave as at ``--rev`` (the branch that made the one
engine, up to its commit 977a6db). On a later tree, what changed since in those
modules (e.g. the training planner's policies, the bound's plan shapes) shows
up as errors or differences of its own.

A run the old code does not finish within ``--limit`` seconds (the bandwidth
sharing model used to re-plan a stage at one time for ever late in long runs)
is counted apart. Run from the repository root::

    python benchmarks/equiv_engine.py sim 2000 --seed 1
    python benchmarks/equiv_engine.py train 300 --seed 1
    python benchmarks/equiv_engine.py iter 100 --seed 1
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from solvers.iteration import workload as new_iteration  # noqa: E402
from themis import simulator as new_simulator  # noqa: E402
from themis.collective import Collective  # noqa: E402
from themis.disciplines import discipline_names  # noqa: E402
from themis.policies import policy_names  # noqa: E402
from themis.training import simulate as new_training  # noqa: E402
from themis.training.config import TrainingConfig  # noqa: E402
from topologies import Dimension, Network  # noqa: E402
from topologies.presets import list_presets, resolve_network  # noqa: E402
from topologies.workload import load_workload, workload_names  # noqa: E402

#: The last revision with the two event loops.
OLD_REV = "c4d09b8"
#: (module name, path at the revision, imports to point at the old modules)
OLD_MODULES = [
    ("old_engine", "themis/engine.py", []),
    ("old_simulator", "themis/simulator.py",
     [("from themis.engine import", "from old_engine import")]),
    ("old_bound", "themis/training/bound.py",
     [("from themis.engine import", "from old_engine import")]),
    ("old_training", "themis/training/simulate.py",
     [("from themis.engine import", "from old_engine import"),
      ("from themis.training.bound import", "from old_bound import")]),
    ("old_iteration", "solvers/iteration/model.py",
     [("from themis.engine import", "from old_engine import")]),
]
KINDS = ["Ring", "Switch", "FullyConnected"]
COLLS = ["all-reduce", "reduce-scatter", "all-gather"]
TIMINGS = ["alpha-beta", "astra-sim-1.0", "astra-sim-2"]


def load_old(rev: str, into: Path) -> dict[str, ModuleType]:
    """The old modules of ``rev``, written to ``into`` and imported."""
    sys.path.insert(0, str(into))
    out = {}
    for name, path, swaps in OLD_MODULES:
        text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
        for a, b in swaps:
            text = text.replace(a, b)
        (into / f"{name}.py").write_text(text)
        spec = importlib.util.spec_from_file_location(name, into / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        out[name] = mod
    return out


class Hang(Exception):
    """A run that did not end within the limit."""


def _alarm(*_: object) -> None:
    raise Hang


def outcome(fn: Callable[[], Any], limit_s: int) -> tuple:
    """("ok", value), ("err", type, message) or ("hang",)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit_s)
    try:
        return ("ok", fn())
    except Hang:
        return ("hang",)
    except Exception as err:  # both sides must refuse alike
        return ("err", type(err).__name__, str(err))
    finally:
        signal.alarm(0)


def network(r: random.Random) -> Network:
    if r.random() < 0.5:  # symmetric: many same-time events (the tie rules matter)
        kind = r.choice(KINDS)
        p = r.choice([2, 4, 8]) if kind == "Switch" else r.randint(2, 8)
        dim = Dimension(kind, p, r.choice([1.0, 4.0, 50.0]), r.choice([0.0, 10.0]))
        return Network((dim,) * r.randint(2, 4))
    dims = []
    for _ in range(r.randint(1, 4)):
        kind = r.choice(KINDS)
        p = r.choice([2, 4, 8]) if kind == "Switch" else r.randint(2, 8)
        dims.append(Dimension(kind, p, r.choice([0.5, 1.0, 2.0, 4.0, 25.0, 50.0]),
                              r.choice([0.0, 1.0, 10.0, 500.0])))
    return Network(tuple(dims))


def sim_case(r: random.Random) -> tuple:
    net = network(r)
    colls = []
    for _ in range(r.choice([1, 1, 2, 3])):
        chunks = r.choice([1, 2, 3, 4, 8, 16, 24])
        size = chunks * r.choice([1024, 4096, 65536, 1 << 20]) + r.choice([0, 0, 0, 123])
        colls.append(Collective(r.choice(COLLS), size, chunks))
    issue = None
    if len(colls) > 1 or r.random() < 0.3:
        mode = r.choice(["zero", "equal", "random", "ints"])
        t = r.choice([0.0, 100.0])
        issue = {"zero": [0.0] * len(colls), "equal": [t] * len(colls),
                 "ints": [float(r.randint(0, 3) * 1000) for _ in colls],
                 "random": [r.uniform(0, 5e4) for _ in colls]}[mode]
    policy = r.choice(policy_names())
    if policy == "fixed":
        dims = list(net.active_dims)
        r.shuffle(dims)
        policy = ",".join(map(str, dims))
    opts = dict(policy=policy,
                intra=r.choice(discipline_names() + ([None] if policy == "portfolio" else [])),
                timing=r.choice(TIMINGS), endpoint_delay_ns=r.choice([0.0, 7.0, 10.0]),
                active_chunks=r.choice([1, 2, 3]), tie_order=r.choice(["start", "dim"]),
                local_bw_aware=r.random() < 0.3)
    return net, colls if len(colls) > 1 or r.random() < 0.5 else colls[0], issue, opts


def replayed_stages(mod: ModuleType, schedule: Any) -> list[tuple]:
    return [tuple(s) for s in mod.replay(schedule).schedule.stages]


def run_sim(mod: ModuleType, net: Network, colls: Any, issue: Any, opts: dict,
            limit_s: int) -> tuple:
    res = mod.simulate(net, colls, issue_ns=issue, **opts)
    ms = mod.makespan_ns(net, colls, mod.SimConfig(**opts), issue_ns=issue)
    rep = outcome(partial(replayed_stages, mod, res.schedule), limit_s)
    return res.makespan_ns, ms, [tuple(s) for s in res.schedule.stages], rep, res.schedule.meta


TRAIN_POLICIES = [p for p in policy_names() if p != "fixed"] + ["themis-running", "route"]


def train_case(r: random.Random) -> tuple:
    net = resolve_network(r.choice([p.name for p in list_presets()]))
    wl = load_workload(r.choice(workload_names()))
    policy = r.choice(TRAIN_POLICIES)
    if policy == "route":
        dims = list(range(net.ndims))
        r.shuffle(dims)
        policy = ",".join(map(str, dims))
    cfg = TrainingConfig(timing=r.choice(["astra-sim-1.0", "alpha-beta"]), policy=policy,
                         intra=r.choice(discipline_names()),
                         chunks=r.choice([1, 2, 4, 8, 16, 64]),
                         active_chunks=r.choice([1, 2, 3]), passes=r.choice([1, 2]),
                         boost_mode=r.random() < 0.5, local_bw_aware=r.random() < 0.5,
                         scheduling_policy=r.choice(["LIFO", "FIFO"]))
    return wl, net, cfg, r.random() < 0.25


def run_train(mod: ModuleType, wl: Any, net: Network, cfg: TrainingConfig,
              bound: bool) -> tuple:
    res = mod.simulate_training(wl, net, cfg, bound=bound)
    d = res.to_dict(timeline=True)
    d.pop("runtime_s")
    return d, [tuple(s) for s in res.schedule.stages], res.schedule.issue_ns


def compare(old: Callable[[], Any], new: Callable[[], Any], limit_s: int,
            counts: dict[str, int], what: str) -> None:
    a = outcome(old, limit_s)
    counts["cases"] += 1
    b = outcome(new, 10 * limit_s)
    if a[0] == "hang":
        counts["old hangs"] += 1
        print("OLD HANGS", what, "- new:", b[0], flush=True)
        return
    counts["refused alike"] += a[0] == "err" and a == b
    if a != b:
        counts["differences"] += 1
        print("DIFFERENCE", what, a[0], b[0], flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["sim", "train", "iter"])
    ap.add_argument("cases", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rev", default=OLD_REV)
    ap.add_argument("--limit", type=int, default=60, help="seconds an old run may take")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = load_old(args.rev, Path(tmp))
        r = random.Random(args.seed)
        counts = dict.fromkeys(["cases", "refused alike", "old hangs", "differences"], 0)
        lim = args.limit
        for i in range(args.cases):
            if args.what == "sim":
                net, colls, issue, opts = sim_case(r)
                compare(partial(run_sim, old["old_simulator"], net, colls, issue, opts, lim),
                        partial(run_sim, new_simulator, net, colls, issue, opts, lim),
                        lim, counts, f"sim case {i}: {opts}")
            elif args.what == "train":
                wl, net, cfg, bound = train_case(r)
                compare(partial(run_train, old["old_training"], wl, net, cfg, bound),
                        partial(run_train, new_training, wl, net, cfg, bound),
                        lim, counts, f"train case {i}: {wl.name} {net.name} {cfg}")
            else:
                wl, net, cfg, _ = train_case(r)
                got = outcome(partial(new_training.simulate_training, wl, net, cfg,
                                      bound=False), lim)
                if got[0] != "ok":
                    continue
                sched = got[1].schedule
                plans: list[list] = [[] for _ in sched.collectives]
                for c in sorted(sched.chunks, key=lambda c: (c.collective, c.chunk)):
                    plans[c.collective].append(c.phases)
                orders = {d: list(o) for d, o in sched.dimension_orders().items()}
                compare(partial(old["old_iteration"].replay_iteration, wl, net, cfg, plans,
                                orders),
                        partial(new_iteration.replay_iteration, wl, net, cfg, plans, orders),
                        lim, counts, f"iter case {i}: {wl.name} {net.name} {cfg}")
        print(f"{args.what} (seed {args.seed}, old code of {args.rev}): "
              + ", ".join(f"{v} {k}" for k, v in counts.items()), flush=True)


if __name__ == "__main__":
    main()
