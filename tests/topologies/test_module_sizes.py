"""The topologies package keeps its modules short (issue 9: none over about 400 lines)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "topologies"


def test_no_topologies_module_over_400_lines() -> None:
    sizes = {p.relative_to(PACKAGE).as_posix(): len(p.read_text().splitlines())
             for p in PACKAGE.rglob("*.py")}
    assert "astra/network_json.py" in sizes  # the split of the old astra.py
    too_long = {name: n for name, n in sizes.items() if n > 400}
    assert too_long == {}
