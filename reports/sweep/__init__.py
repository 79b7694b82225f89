"""Resumable sweeps: a TOML grid of instances x methods into a SQLite database.

- :mod:`reports.sweep.spec`: the spec's schema, validated into tasks;
- :mod:`reports.sweep.fields`: reading a spec's keys, lists and files;
- :mod:`reports.sweep.tasks`: a task (one method on one instance) and its row;
- :mod:`reports.sweep.training`: ``[[training]]`` tables, training tasks and their rows;
- :mod:`reports.sweep.executors`: this process, a local pool or Dask;
- :mod:`reports.sweep.progress`: the progress bar or plain lines;
- :mod:`reports.sweep.run`: the driver (:func:`run_sweep`, :func:`run_spec`);
- :mod:`reports.sweep.spec_writer`: ``themis spec``.
"""

from reports.sweep.progress import Progress, describe_result, format_duration
from reports.sweep.run import SweepOutcome, run_spec, run_sweep, sweep_command
from reports.sweep.spec import GRID_KEYS, TOP_KEYS, Spec, load_spec, parse_spec
from reports.sweep.tasks import Task, run_task, versions

__all__ = ["GRID_KEYS", "TOP_KEYS", "Progress", "Spec", "SweepOutcome", "Task",
           "describe_result", "format_duration", "load_spec", "parse_spec", "run_spec", "run_sweep",
           "run_task", "sweep_command", "versions"]
