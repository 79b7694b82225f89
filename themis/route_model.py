"""The route-count model: how many chunks take each alternative, and what a dimension then runs.

One model behind three users: the single-collective bounds LB2/LB3
(:mod:`solvers.bounds`), the ``lb-mix`` policy's route counts
(:func:`themis.policies.route_mix.route_counts`) and the training iteration
bound (:mod:`themis.training.bound`). Its variables are counts ``n[key]`` of
chunks taking an alternative (a route and stage-plan shape), summing per size
class to the class's chunk count; a dimension d must run the stages routed
through it, ``T >= sum_key n[key] * load_d(key)``, after the *head* it cannot
avoid (its first stage is some used alternative's, which starts no earlier
than that alternative's stages before d) and before the *tail* (after its last
stage, that chunk still runs its stages after d), and the whole chain of every
used alternative fits in T.

The two integer pieces are here once:

- :func:`used_min`: the smallest of ``values[key]`` over the keys in use
  (``n[key] >= 1``), as a constant plus a sum of [0, 1] columns:
  ``min >= v_1 + sum_j (v_{j+1} - v_j) * max(0, 1 - sum_{i: v_i <= v_j} n_i)``;
- :func:`chain_rows`: ``T >= chain(key) * y[key]`` with ``y[key] = 1`` when
  ``n[key] >= 1`` (``n[key] <= count * y[key]``, y binary).

Models are built on :class:`themis.highs.LinearModel` (HiGHS, deterministic
limits).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

from themis.highs import LinearModel

Alt = TypeVar("Alt", bound=Hashable)
"""An alternative's key (a route index, a (route, shape) pair...)."""
Key = TypeVar("Key", bound=Hashable)
"""A count column's key (usually ``(class, alternative)``)."""


def count_vars(m: LinearModel, keys: Iterable[tuple[int, Alt]], counts: Mapping[int, int],
               integer: bool) -> dict[tuple[int, Alt], int]:
    """Count columns ``n[(class, alternative)]`` in [0, count of the class], and per class
    the row ``sum_alternatives n = count``. ``keys`` lists ``(class, alternative)``."""
    n = {key: m.var(0.0, float(counts[key[0]]), integer=integer) for key in keys}
    by_class: dict[int, dict[int, float]] = {}
    for key, v in n.items():
        by_class.setdefault(key[0], {})[v] = 1.0
    for k, row in by_class.items():
        m.row(counts[k], counts[k], row)
    return n


def used_min(m: LinearModel, values: Mapping[Key, float], counts: Mapping[Key, int],
             scale: float = 1.0) -> tuple[float, dict[int, float]]:
    """The smallest ``values[key]`` over the keys in use, ``/ scale``: ``(constant, terms)``.

    ``counts[key]`` is the count column of ``key``. Adds one [0, 1] column and one
    row per gap between sorted distinct values (see the module docstring) and
    returns the constant (the smallest value) and the columns' coefficients; the
    caller adds both to its row. Valid when at least one key is in use.
    """
    levels = sorted(set(values.values()))
    terms: dict[int, float] = {}
    for lo, hi in itertools.pairwise(levels):
        a = m.var(0.0, 1.0)
        cover = {a: 1.0}
        for key, v in values.items():
            if v <= lo:
                cover[counts[key]] = 1.0
        m.row(1.0, float("inf"), cover)
        terms[a] = (hi - lo) / scale
    return (levels[0] / scale if levels else 0.0), terms


def chain_rows(m: LinearModel, t_var: int,
               chains: Iterable[tuple[int, int, float]], scale: float = 1.0,
               floor: float = float("-inf")) -> None:
    """``T >= chain / scale`` for every used alternative: ``chains`` lists
    ``(count column, class count, chain)``; chains at most ``floor`` (a value T is
    already known to reach) are skipped."""
    for v, count, chain in chains:
        if chain <= floor:
            continue
        y = m.var(0.0, 1.0, integer=True)
        m.row(-float("inf"), 0.0, {v: 1.0, y: -float(count)})
        m.row(0.0, float("inf"), {t_var: 1.0, y: -chain / scale})


__all__ = ["chain_rows", "count_vars", "used_min"]
