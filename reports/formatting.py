"""Plain-text output shared by the commands and reports: JSON on stdout, aligned tables."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(obj: Any) -> None:
    """Print one JSON object on stdout.

    Strict JSON only: a non-finite number (``Infinity``, ``NaN``) is an
    :class:`~topologies.errors.InputError` and nothing is printed.
    """
    try:
        text = json.dumps(obj, indent=2, default=_json_default, allow_nan=False)
    except ValueError:
        from topologies.errors import InputError

        raise InputError("results are not finite numbers, so no JSON is printed (check "
                         "bandwidths, latencies and sizes)", "--json") from None
    sys.stdout.write(text + "\n")


def _json_default(o: Any) -> Any:
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "item"):
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def format_table(headers: list[str], rows: list[list[Any]]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for j, r in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if j and _numeric(c) else c.ljust(w)
                               for c, w in zip(r, widths, strict=True)).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


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
