"""Plain-text output shared by the commands and reports: JSON on stdout, aligned tables."""

from __future__ import annotations

import sys
from typing import Any


def print_json(obj: Any) -> None:
    """Print one JSON object on stdout.

    Strict JSON only: a non-finite number (``Infinity``, ``NaN``) is an
    :class:`~topologies.errors.InputError` and nothing is printed. A whole number
    held as a float is printed as an integer (``10097856``, not ``10097856.0``);
    the field names follow ``docs/json.md``.
    """
    import json  # late: a table needs no json (start-up is part of every run's time)

    try:
        text = json.dumps(_whole(obj), indent=2, default=_json_default, allow_nan=False)
    except ValueError:
        from topologies.errors import InputError

        raise InputError("results are not finite numbers, so no JSON is printed (check "
                         "bandwidths, latencies and sizes)", "--json") from None
    sys.stdout.write(text + "\n")


#: Integral floats up to this magnitude are printed as integers (exact in a double).
_EXACT = 2 ** 53


def _whole(o: Any) -> Any:
    """``o`` with every integral float turned into an int (recursively)."""
    if isinstance(o, float):
        return int(o) if o.is_integer() and abs(o) <= _EXACT else o
    if isinstance(o, dict):
        return {k: _whole(v) for k, v in o.items()}
    if isinstance(o, list | tuple):
        return [_whole(v) for v in o]
    if hasattr(o, "to_dict") and not isinstance(o, str):
        return _whole(o.to_dict())
    return o


def _json_default(o: Any) -> Any:
    if hasattr(o, "to_dict"):
        return _whole(o.to_dict())
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def format_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A plain aligned text table (no colours or box drawing).

    Headers and text cells are left-aligned, numeric cells right-aligned; a
    line of dashes under the header; columns two spaces apart. The same text is
    printed on a terminal and into a pipe. Tables of printable ASCII cells (every
    table the commands print) are laid out here; any other (``µs``, wide or
    combining characters, tabs, line breaks, spaces at a cell's ends) by
    :mod:`rich`, which measures cell widths correctly (both give the same text:
    tests/reports/test_formatting_table.py), so start-up needs no rich.
    """
    cells = [[_fmt(c) for c in r] for r in rows]
    head = [str(h) for h in headers]
    if not _plain(head, cells):
        return rich_table(head, cells)
    widths = [max([len(h)] + [len(r[j]) for r in cells]) for j, h in enumerate(head)]
    last = len(head) - 1
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)),
             " ".join("-" * (w + (j < last)) for j, w in enumerate(widths))]
    for r in cells:
        lines.append("  ".join(c.rjust(w) if j and _numeric(c) else c.ljust(w)
                               for j, (c, w) in enumerate(zip(r, widths, strict=True))))
    return "\n".join(line.rstrip() for line in lines)


#: Tables wider than this are left to rich (it lays them out on a 100,000-cell line).
_PLAIN_MAX_WIDTH = 50_000


def _plain(head: list[str], cells: list[list[str]]) -> bool:
    """Whether the table is laid out by :func:`format_table` itself: at least one
    column, every row as long as the header, every cell printable ASCII without
    spaces at its ends, no empty column, and not very wide."""
    if not head or any(len(r) != len(head) for r in cells):
        return False
    width = 0
    for j, h in enumerate(head):
        column = [h] + [r[j] for r in cells]
        if not all(c.isascii() and c.isprintable() and c.strip() == c for c in column):
            return False
        longest = max(map(len, column))
        if not longest:
            return False
        width += longest + 2
    return width <= _PLAIN_MAX_WIDTH


def rich_table(headers: list[str], rows: list[list[str]]) -> str:
    """:func:`format_table`'s layout of already formatted cells, rendered by :mod:`rich`."""
    import io

    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    plain = box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)
    table = Table(box=plain, show_edge=False, pad_edge=False, padding=(0, 1),
                  collapse_padding=True)
    for h in headers:
        table.add_column(Text(str(h), justify="left"), no_wrap=True)
    for r in rows:
        table.add_row(*(Text(c, justify="right" if j and _numeric(c) else "left")
                        for j, c in enumerate(r)))
    buf = io.StringIO()
    Console(file=buf, width=100_000, color_system=None, force_terminal=False,
            highlight=False).print(table)
    return "\n".join(line.rstrip() for line in buf.getvalue().rstrip("\n").split("\n"))


def _fmt(c: Any) -> str:
    if isinstance(c, float):
        return f"{c:,.1f}" if abs(c) >= 100 else f"{c:.4g}"
    return str(c)


def _numeric(s: str) -> bool:
    try:
        float(s.replace(",", "").rstrip("%"))
        return True
    except ValueError:
        return False
