"""``python -m reports.report A.csv B.csv``: do two results.csv files agree (runtimes,
host, timestamps and versions aside)? Exit 0 if they do, 1 with the differences if not."""

import sys

from reports.report.csvfile import main

sys.exit(main())
