"""``themis report``: README.md, results.csv and plots from a sweep database.

- :mod:`reports.report.stats`: rows grouped by instance and scored, statistics;
- :mod:`reports.report.markdown`: the README's sections (:data:`SECTIONS`);
- :mod:`reports.report.figures`: the plots;
- :mod:`reports.report.csvfile`: results.csv and the reproducibility check;
- :mod:`reports.report.build`: :func:`build_report`.
"""

from reports.records import SCORE_COLUMNS
from reports.report.build import build_report
from reports.report.csvfile import RUN_COLUMNS, csv_differences
from reports.report.figures import PLOT_FILES
from reports.report.stats import InstanceResult, group, policy_methods, solver_methods

__all__ = ["PLOT_FILES", "RUN_COLUMNS", "SCORE_COLUMNS", "InstanceResult", "build_report",
           "csv_differences", "group", "policy_methods", "solver_methods"]
