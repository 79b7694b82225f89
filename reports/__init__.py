"""Solver comparisons, resumable sweeps (local or Dask) and optimality-gap reports.

- :mod:`reports.compare`: every policy and solver on one instance, with gaps.
- :mod:`reports.sweep`: a TOML grid of instances and methods into SQLite.
- :mod:`reports.report`: README, CSV and plots from a sweep database.
- :mod:`reports.commands`: the ``themis compare | sweep | report`` commands.

Nothing heavy is imported here: the CLI imports :mod:`reports.commands` at
start-up.
"""
