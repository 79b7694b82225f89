"""Start-up imports only what a command uses, and lazy loading changes no registry.

Each check runs in a new interpreter (``python -c``), since this test process has
imported everything already. No timing here: the speed is measured by
``benchmarks/startup.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Every registry's names, as one JSON object (run in a new interpreter).
LIST_REGISTRIES = """
import json
from reports.methods import every_intra, every_policy
from solvers import backend_names
from themis.disciplines import discipline_names
from themis.policies import policy_names
from themis.timing import timing_names
from themis.training.routing import iteration_planner_names, router_names, training_policy_names
from topologies.workload import workload_names
print(json.dumps({
    "policies": policy_names(),
    "disciplines": discipline_names(),
    "disciplines_all": discipline_names(internal=True, opt_in=True),
    "timings": timing_names(),
    "routers": router_names(),
    "planners": iteration_planner_names(),
    "training": training_policy_names(),
    "every_policy": list(every_policy()),
    "every_intra": list(every_intra()),
    "backends": backend_names(),
    "workloads": workload_names(),
}))
"""

#: Imports every module of the four packages first (the plug-ins among them), in
#: sorted order: what any registry could ever hold.
IMPORT_EVERYTHING = """
import importlib, pkgutil
for pkg in ("topologies", "themis", "solvers", "reports"):
    mod = importlib.import_module(pkg)
    for info in sorted(pkgutil.walk_packages(mod.__path__, pkg + "."), key=lambda i: i.name):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
"""


def _python(code: str) -> str:
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, check=False)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _modules_after(code: str) -> set[str]:
    out = _python(code + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))")
    return set(json.loads(out.strip().splitlines()[-1]))


def test_each_registry_lists_the_same_names_lazily_and_with_everything_imported() -> None:
    lazy = json.loads(_python(LIST_REGISTRIES))
    eager = json.loads(_python(IMPORT_EVERYTHING + LIST_REGISTRIES))
    assert lazy == eager
    # The plug-ins imported on first need are there (and in their registration order).
    assert "portfolio" in lazy["policies"]
    assert lazy["routers"] == ["themis-running", "online-mix"]
    assert lazy["planners"][-1] == "auto" and "global-mix" in lazy["planners"]


@pytest.mark.parametrize("name", ["portfolio", "auto", "online-mix", "global-mix"])
def test_a_plugin_name_is_found_on_first_lookup(name: str) -> None:
    """Looked up by name first (no listing before): the plug-in is imported then."""
    code = ("from themis.policies import canonical_policy\n"
            "from themis.training.routing import training_key\n"
            f"print(training_key({name!r}) or canonical_policy({name!r}))")
    assert _python(code).strip() == name


def test_a_plugin_name_is_accepted_by_the_command_line() -> None:
    p = subprocess.run([sys.executable, "-m", "reports.cli", "simulate", "small-2d",
                        "--policy", "portfolio", "--chunks", "4", "--json"], cwd=ROOT,
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["policy"] == "portfolio"


def test_simulate_imports_no_solver_plot_or_planner() -> None:
    code = ("import io, contextlib\nfrom reports.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['simulate', 'small-2d']) == 0")
    loaded = _modules_after(code)
    for heavy in ("ortools", "pulp", "matplotlib", "highspy", "networkx", "numpy",
                  "themis.planning", "themis.training.simulate", "solvers"):
        assert heavy not in loaded, f"themis simulate imported {heavy}"


@pytest.mark.parametrize("package", ["topologies", "themis", "themis.training"])
def test_importing_a_package_imports_none_of_its_modules(package: str) -> None:
    loaded = _modules_after(f"import {package}")
    mine = {m for m in loaded if m.split(".")[0] in ("topologies", "themis")}
    assert mine <= {"topologies", "themis", "themis.plugins", "themis.training"}, mine


@pytest.mark.parametrize("package", ["topologies", "topologies.astra", "themis",
                                     "themis.training", "themis.policies", "themis.timing"])
def test_every_lazy_reexport_resolves(package: str) -> None:
    code = (f"import {package} as p\n"
            "missing = [n for n in p.__all__ if getattr(p, n, None) is None]\n"
            "assert not missing, missing\n"
            "try:\n    p.no_such_name\nexcept AttributeError:\n    pass\n"
            "else:\n    raise SystemExit('no AttributeError')")
    _python(code)


def test_loaders_run_by_name_by_registry_and_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from themis import plugins

    monkeypatch.setattr(plugins, "_PENDING", [])
    ran: list[str] = []
    plugins.add_loader(lambda: ran.append("a"), ("policy",), ("a",))
    plugins.add_loader(lambda: ran.append("b"), ("policy",), ("b",))
    plugins.add_loader(lambda: ran.append("t"), ("timing",), ("t",))
    plugins.add_loader(lambda: ran.append("any"), ("policy", "planner"))
    plugins.load_plugins("policy", "b")  # the loader declaring it, only
    assert ran == ["b"]
    plugins.load_plugins("policy", "zzz")  # declared by none: every policy loader left
    assert ran == ["b", "a", "any"]
    assert plugins.pending() == 1
    plugins.load_plugins()
    assert ran == ["b", "a", "any", "t"] and plugins.pending() == 0


def test_a_loader_queued_by_a_loader_runs_in_the_same_listing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from themis import plugins

    monkeypatch.setattr(plugins, "_PENDING", [])
    ran: list[str] = []

    def outer() -> None:
        ran.append("outer")
        plugins.add_loader(lambda: ran.append("inner"), ("router",))

    plugins.add_loader(outer, ("router",))
    plugins.load_plugins("router")
    assert ran == ["outer", "inner"]


def test_a_user_registration_of_a_bundled_name_replaces_it_as_before() -> None:
    """Registered before the bundled plug-in was imported: the bundled one registers
    first, the user's replaces it, and listing the names (which imports every
    plug-in) keeps the user's."""
    code = """
from themis.policies import make_policy, policy_names, register_policy
from themis.timing import make_timing, register_timing, timing_names
from themis.training.routing import iteration_planner, register_iteration_planner

@register_policy("baseline")
class Mine:
    name = "mine"

@register_timing("alpha-beta")
def my_timing(*args, **kwargs):
    return "my timing"

@register_iteration_planner("auto")
def my_planner(*args, **kwargs):
    return None

policy_names(), timing_names()
from topologies.network import Dimension, Network
net = Network((Dimension("Ring", 2, 1.0, 0.0),))
print(type(make_policy("baseline")).__name__, make_timing("alpha-beta", net),
      iteration_planner("auto").__name__)
"""
    assert _python(code).split() == ["Mine", "my", "timing", "my_planner"]
