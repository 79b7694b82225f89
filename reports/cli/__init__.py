"""The ``themis`` command line.

Start-up stays light: ortools, pulp and matplotlib are imported only by the
commands that need them. Every bad input exits with status 2 and one line on
stderr naming the file, the field and the value.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence

from reports.cli import analyse, basic, solve
from topologies.errors import InputError


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (all subcommands)."""
    parser = _Parser(
        prog="themis",
        description="Collective scheduling on multi-dimensional networks: Themis and other "
                    "policies, an event-driven simulator, exact solvers and gap reports.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    for module in (basic, solve, analyse):
        module.register(sub, _Parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``themis`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _show_warning
        try:
            return int(args.func(args) or 0)
        except InputError as err:
            sys.stderr.write(f"themis: error: {err}\n")
            return 2
        except KeyboardInterrupt:
            sys.stderr.write("themis: interrupted\n")
            return 130
        except BrokenPipeError:
            return 0


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(f"themis: warning: {message}\n")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["build_parser", "main"]
