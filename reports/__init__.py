"""Solver comparisons, resumable sweeps (local or Dask) and optimality-gap reports.

- :mod:`reports.compare`: every policy and solver on one instance, with gaps.
- :mod:`reports.sweep`: a TOML grid of instances and methods into SQLite.
- :mod:`reports.report`: README, CSV and plots from a sweep database.
- :mod:`reports.formatting`: JSON on stdout and aligned text tables.
- :mod:`reports.cli`: the ``themis`` command line (the top of the layers: it
  imports every package below and nothing imports it).

Nothing heavy is imported here: the CLI imports this package at start-up.
"""
