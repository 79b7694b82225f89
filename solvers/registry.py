"""The solver registry: the bundled backends and every name :func:`solvers.solve` accepts.

The bundled backends register here, by explicit import in this order (the order
:func:`backend_names` lists, and so the order ``compare`` runs them): ``cpsat``
(:mod:`solvers.cpsat`), then ``cbc`` and ``highs`` (:mod:`solvers.milp`). A user
registers more with :func:`solvers.backend.register_backend`; every command that
takes a solver name (``solve``, ``compare``, ``spec``, ``sweep``) asks this registry.
"""

from __future__ import annotations

import solvers.cpsat  # noqa: F401  (registers cpsat)
import solvers.milp  # noqa: F401  (registers cbc and highs)
from solvers.backend import _BACKENDS, BackendInfo
from topologies.errors import InputError


def backend_names() -> list[str]:
    """The solver names :func:`solvers.solve` accepts (bundled first, then the user's)."""
    return list(_BACKENDS)


def get_backend(name: object) -> BackendInfo:
    """The backend registered as ``name`` (InputError if none is)."""
    if not isinstance(name, str) or name not in _BACKENDS:
        raise InputError(f"unknown solver (expected one of {', '.join(_BACKENDS)})",
                         "solver", name)
    return _BACKENDS[name]


__all__ = ["backend_names", "get_backend"]
