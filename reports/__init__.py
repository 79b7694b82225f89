"""Solver comparisons, resumable sweeps (local or Dask) and optimality-gap reports.

- :mod:`reports.methods`: one way to run a method (policy, solver, bound) on an
  instance (:func:`~reports.methods.run_method`), names from the registries;
- :mod:`reports.records`: the one result record (:class:`~reports.records.MethodResult`)
  and the string enums of kinds, statuses and AG variants;
- :mod:`reports.scoring`: gaps against the best and the bound of a row's own AG variant;
- :mod:`reports.compare`: every policy and solver on one instance (a one-instance
  sweep in memory);
- :mod:`reports.sweep`: a TOML grid of instances and methods into SQLite (spec,
  tasks, executors, progress, driver, ``themis spec``);
- :mod:`reports.report`: README, CSV and plots from a sweep database (stats,
  markdown sections, figures, csv and the reproducibility check);
- :mod:`reports.db`: the SQLite database.
- :mod:`reports.formatting`: JSON on stdout and aligned text tables.
- :mod:`reports.cli`: the ``themis`` command line (the top of the layers: it
  imports every package below and nothing imports it).

Nothing heavy is imported here: the CLI imports this package at start-up.
"""
