"""Plain-text output shared by the commands and reports: JSON on stdout, aligned tables."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(obj: Any) -> None:
    """Print one JSON object on stdout.

    Strict JSON only: a non-finite number (``Infinity``, ``NaN``) is an
    :class:`~topologies.errors.InputError` and nothing is printed. A whole number
    held as a float is printed as an integer (``10097856``, not ``10097856.0``);
    the field names follow ``docs/json.md``.
    """
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
    """A plain aligned text table (rendered by :mod:`rich`, no colours or box drawing).

    Headers and text cells are left-aligned, numeric cells right-aligned; a
    line of dashes under the header. rich measures cell widths (``µs``...)
    correctly; the same text is printed on a terminal and into a pipe.
    """
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
        cells = [_fmt(c) for c in r]
        table.add_row(*(Text(c, justify="right" if j and _numeric(c) else "left")
                        for j, c in enumerate(cells)))
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
