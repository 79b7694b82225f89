"""Project-wide pytest options.

``--solvers cpsat,cbc,highs`` selects the exact solvers the tests of
``tests/solvers`` run (a test asking for the ``solver`` fixture is
parametrized over them).

``tests`` and its sub-folders are packages (``tests.solvers.solver_cases``...),
so pytest puts the repository root on ``sys.path`` and the test folders never
shadow the project's packages of the same name; shared test helpers are
imported by their full name (``from tests.solvers.solver_cases import small``).
"""

from __future__ import annotations

from solvers import backend_names

#: The bundled solvers (the registry's names, cpsat, cbc and highs).
ALL_SOLVERS = ",".join(backend_names())


def pytest_addoption(parser) -> None:
    """Register ``--solvers``."""
    parser.addoption(
        "--solvers",
        default=ALL_SOLVERS,
        help=f"comma-separated exact solvers to test (default {ALL_SOLVERS})",
    )


def selected_solvers(config) -> list[str]:
    """The solvers named by ``--solvers`` (validated)."""
    names = [s.strip() for s in config.getoption("--solvers").split(",") if s.strip()]
    unknown = sorted(set(names) - set(ALL_SOLVERS.split(",")))
    if unknown:
        raise ValueError(f"--solvers: unknown solver(s) {unknown}; known: {ALL_SOLVERS}")
    return names


def pytest_generate_tests(metafunc) -> None:
    """Parametrize tests that take a ``solver`` argument over the selected solvers."""
    if "solver" in metafunc.fixturenames:
        metafunc.parametrize("solver", selected_solvers(metafunc.config))
