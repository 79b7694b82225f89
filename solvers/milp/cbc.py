"""CBC (bundled with PuLP) as a MILP backend, with its failures turned into answers.

CBC 2.10 may crash (segfault, exit -11) when its time limit runs out at the
root after it accepted a warm start. A crash is retried once without the
warm start (if time is left); a second failure is an :class:`Outcome` with
``failed`` set, the reason and CBC's log (the grading then answers with the
hint). CBC checks its time limit only between phases and can run on for
seconds at the root: a CBC process still running ``CBC_GRACE_S`` after its
limit is killed (a failure, not retried). Status comes
from PuLP's ``sol_status``, the best bound from CBC's log. CBC writes values
with about 8 significant digits, so its bound is lowered by ``1e-7`` of the
upper bound on top of the tolerances (its bound never exceeds an optimum by
more than that: seen 3e-8 to 4e-8 relative above one).
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import threading
import types
import warnings
from collections.abc import Iterator

from solvers.backend import Problem
from solvers.milp.solve import FEAS_TOL, INT_TOL, Built, Outcome

#: Relative precision of the numbers CBC writes (its bound is lowered by this much).
CBC_REL_PRECISION = 1e-7
#: CBC checks its time limit only between phases (it may run on for seconds at the
#: root): the process is killed this long after its limit.
CBC_GRACE_S = 0.5


class _Watch:
    """The CBC process of one run, killed if it outlives its limit."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.killed = False

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.killed = True
            self.proc.kill()


@contextlib.contextmanager
def _watched(limit_s: float) -> Iterator[_Watch]:
    """Run PuLP's CBC call with its process recorded and a kill timer."""
    from pulp.apis import coin_api

    watch = _Watch()
    real = coin_api.subprocess

    def popen(*args, **kwargs):
        watch.proc = real.Popen(*args, **kwargs)
        return watch.proc

    shim = types.SimpleNamespace(**{k: getattr(real, k) for k in dir(real)
                                    if not k.startswith("__")})
    shim.Popen = popen
    timer = threading.Timer(limit_s + CBC_GRACE_S, watch.kill)
    coin_api.subprocess = shim
    timer.start()
    try:
        yield watch
    finally:
        timer.cancel()
        coin_api.subprocess = real


def cbc_bound(log_text: str) -> float | None:
    """CBC's best possible objective from its log, if it printed one."""
    for pattern in (r"Lower bound:\s+([-+0-9.eE]+)", r"best possible\s+([-+0-9.eE]+)"):
        found = re.findall(pattern, log_text)
        if found:
            try:
                return float(found[-1])
            except ValueError:
                continue
    return None


def _run_once(problem: Problem, built: Built, limit_s: float, warm: bool) -> tuple[str, str]:
    """Run CBC; returns ("", log) or (error message, log); an overrun CBC is killed."""
    import pulp

    p = problem.params
    fd, log_path = tempfile.mkstemp(prefix="themis_cbc_", suffix=".log")
    os.close(fd)
    error = ""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PuLP 3 deprecation notices
            cmd = pulp.PULP_CBC_CMD(msg=False, timeLimit=limit_s, threads=p.threads,
                                    warmStart=warm, gapRel=0.0, gapAbs=0.0, logPath=log_path,
                                    maxNodes=p.node_limit,
                                    options=[f"integerT {INT_TOL}", f"primalT {FEAS_TOL}",
                                             f"randomSeed {p.seed + 1}"])
            with _watched(limit_s) as watch:
                try:
                    built.prob.solve(cmd)
                except pulp.PulpSolverError:
                    code = None if watch.proc is None else watch.proc.returncode
                    error = (f"CBC overran its {limit_s:.3g} s limit by {CBC_GRACE_S:g} s "
                             "and was stopped" if watch.killed
                             else f"CBC exited abnormally (exit status {code})")
        with open(log_path, errors="replace") as f:
            text = f.read()
    finally:
        os.unlink(log_path)
    return error, text


def run_cbc(problem: Problem, built: Built, limit_s: float) -> Outcome:
    """Solve with CBC (see the module docstring)."""
    import pulp

    error, text = _run_once(problem, built, limit_s, built.warm)
    meta: dict = {}
    reason = ""
    if error and built.warm and "overran" not in error:
        meta["cbc_first_error"] = error
        left = problem.remaining_s()
        if left > 0:
            reason = f"{error} with the warm start; retried without it"
            error, text2 = _run_once(problem, built, max(0.05, left), False)
            text = text + "\n--- retry without warm start ---\n" + text2
            if error:
                reason += f": {error} again"
        else:
            reason = f"{error} with the warm start; no time left to retry"
    if problem.params.log:
        print(text)
    if error:
        return Outcome(False, False, False, None, meta, reason=reason or error, log=text,
                       failed=True)
    sol = built.prob.sol_status
    meta.update(pulp_status=pulp.LpStatus[built.prob.status], pulp_sol_status=sol)
    has_solution = sol in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    proven = sol == pulp.LpSolutionOptimal and has_solution
    bound = pulp.value(built.prob.objective) if proven else cbc_bound(text)
    meta["bound_source"] = "cbc" if bound is not None else "ours"
    stopped = ""
    if not proven and sol != pulp.LpSolutionInfeasible:
        stopped = "nodes" if problem.params.node_limit is not None and \
            "node limit" in text.lower() else "wall"
    return Outcome(has_solution, proven, sol == pulp.LpSolutionInfeasible, bound, meta,
                   extra_err_ns=CBC_REL_PRECISION * built.ub_ns, stopped_by=stopped,
                   reason=reason)
