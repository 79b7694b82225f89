"""The ``themis`` command line.

Start-up stays light: ortools, pulp and matplotlib are imported only by the
commands that need them. Every bad input exits with status 2 and one line on
stderr naming the file, the field and the value.
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from topologies.errors import InputError

#: The subcommands of each command module (so that a command imports its own module
#: only: start-up is part of every run's time).
_COMMANDS: dict[str, tuple[str, ...]] = {
    "basic": ("presets", "network", "simulate"),
    "solve": ("solve", "bound"),
    "improve": ("improve",),
    "analyse": ("compare", "spec", "sweep", "report"),
    "train": ("train",),
    "train_report": ("train-report",),
    "design": ("design", "design-report"),
    "convert": ("convert",),
}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2.

    Help texts may hold ``{policies}`` and ``{disciplines}``: the registries'
    names, filled in when help is shown (:class:`~reports.cli.common.RegistryHelpFormatter`).
    """

    def __init__(self, *args, **kwargs) -> None:
        from reports.cli.common import RegistryHelpFormatter

        kwargs.setdefault("formatter_class", RegistryHelpFormatter)
        super().__init__(*args, **kwargs)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every add_argument (to check the metavar), and a
        # formatter without a width asks shutil.get_terminal_size, a costly import (bz2,
        # lzma, zlib) at every start: the same width, found as shutil finds it.
        formatter: Any = self.formatter_class  # a HelpFormatter class (typeshed: prog only)
        return formatter(prog=self.prog, width=terminal_columns() - 2)

    def _print_message(self, message: str, file=None) -> None:
        # argparse swallows write errors; a full or closed stdout must fail instead.
        if message:
            (file or sys.stderr).write(message)

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def terminal_columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` gives it: ``COLUMNS`` if a
    positive number, else the width of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def version() -> str:
    """The installed package's version (``pyproject.toml`` when run from a checkout)."""
    from importlib import metadata

    try:
        return metadata.version("themis-sched")
    except metadata.PackageNotFoundError:  # pragma: no cover - not installed
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).parents[2] / "pyproject.toml"
        try:
            return str(tomllib.loads(pyproject.read_text())["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


class _VersionAction(argparse.Action):
    """``--version``: the version is looked up only when asked for (importing
    ``importlib.metadata`` would cost every command's start-up)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        parser._print_message(f"themis {version()}\n", sys.stdout)
        parser.exit()


def _register(group: str, sub: argparse._SubParsersAction) -> None:
    """Add the subcommands of one command module (plain imports, one per module)."""
    module: ModuleType
    if group == "basic":
        from reports.cli import basic as module
    elif group == "solve":
        from reports.cli import solve as module
    elif group == "improve":
        from reports.cli import improve as module
    elif group == "analyse":
        from reports.cli import analyse as module
    elif group == "train":
        from reports.cli import train as module
    elif group == "design":
        from reports.cli import design as module
    elif group == "convert":
        from reports.cli import convert as module
    else:
        from reports.cli import train_report as module
    module.register(sub, _Parser)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: every subcommand, or only ``command``'s module's when
    ``command`` is one (what :func:`main` builds to run it)."""
    parser = _Parser(
        prog="themis",
        description="Collective scheduling on multi-dimensional networks: Themis and other "
                    "policies, an event-driven simulator, exact solvers and gap reports.",
    )
    parser.add_argument("--version", action=_VersionAction, nargs=0,
                        help="show the program's version number and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    groups = [g for g, names in _COMMANDS.items() if command in names] or list(_COMMANDS)
    for group in groups:
        _register(group, sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``themis`` console script.

    Bad input, unwritable outputs and a closed or full stdout all end the same
    way: one line on stderr, exit status 2, no traceback.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _show_warning
        stdout = sys.stdout
        try:
            sys.stdout = _Stdout(stdout)
            try:
                code = _run(argv)
            except SystemExit:  # --help, --version, usage errors: flush what they printed
                sys.stdout.flush()
                raise
            sys.stdout.flush()
            return code
        except InputError as err:
            return _fail(str(err))
        except KeyboardInterrupt:
            sys.stderr.write("themis: interrupted\n")
            return 130
        except BrokenPipeError:
            _silence_stdout()
            return 0
        except StdoutError as err:
            _silence_stdout()
            return _fail(f"cannot write to stdout: {err.strerror or err}")
        except OSError as err:
            where = f"{err.filename}: " if err.filename else ""
            return _fail(f"{where}{err.strerror or err}")
        finally:
            if isinstance(sys.stdout, _Stdout):
                sys.stdout = stdout


#: Options whose empty value is documented to mean "none" (``compare --solvers ''``).
EMPTY_MEANS_NONE = frozenset({"--solvers"})


def check_words(words: Sequence[str]) -> None:
    """Refuse an empty argument or option value (``--gantt ''``, ``--intra=``) and a
    comma list with an empty item (``--chunks 2,,4``), naming the option: argparse
    would take them as given and the command would silently fall back to a default."""
    for i, word in enumerate(words):
        flag, value = None, word
        if word.startswith("--") and "=" in word:
            flag, value = word.split("=", 1)
        elif i > 0 and words[i - 1].startswith("--") and "=" not in words[i - 1]:
            flag = words[i - 1]
        if word.startswith("--") and "=" not in word:
            continue
        if not value.strip():
            if flag in EMPTY_MEANS_NONE:
                continue
            raise InputError("an empty value", flag or f"argument {i + 1}", value)
        if re.fullmatch(r"[\d_.,+\-eE]*\d[\d_.,+\-eE]*", value) and (
                "_" in value or not value.isascii()):
            raise InputError("a number must be written in ASCII digits without underscores",
                             flag or f"argument {i + 1}", value)
        if "," in value and any(not item.strip() for item in value.split(",")):
            raise InputError("a list with an empty item", flag or f"argument {i + 1}", value)


def _run(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    check_words(words)
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(words)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from reports.cli.common import note_inputs

    note_inputs(args)
    return int(args.func(args) or 0)


class StdoutError(OSError):
    """Writing to stdout failed (closed, full disk); not a file the command opened."""


class _Stdout:
    """stdout whose write errors are :class:`StdoutError`; a closed stdout (None) fails."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _call(self, name: str, *args: object) -> Any:
        if self._stream is None:  # started with stdout closed (>&-)
            raise StdoutError(errno.EBADF, "stdout is closed")
        try:
            return getattr(self._stream, name)(*args)
        except BrokenPipeError:
            raise
        except OSError as err:
            raise StdoutError(err.errno, err.strerror or str(err)) from None

    def write(self, s: str) -> int:
        return int(self._call("write", s) or 0)

    def flush(self) -> None:
        self._call("flush")

    def isatty(self) -> bool:
        return bool(self._stream is not None and self._stream.isatty())

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def _fail(message: str) -> int:
    try:
        sys.stderr.write(f"themis: error: {message}\n")
    except (OSError, ValueError, AttributeError):
        pass
    return 2


def _silence_stdout() -> None:
    """Point stdout at /dev/null so Python's final flush does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass
    if sys.stdout is None or isinstance(sys.stdout, _Stdout):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives until exit


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(f"themis: warning: {message}\n")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


__all__ = ["StdoutError", "build_parser", "main", "version"]
