"""``python -m reports.cli``: the ``themis`` command line."""

from reports.cli import main

raise SystemExit(main())
