"""Route-enumerating commands refuse networks with too many routes up front."""

from __future__ import annotations

from pathlib import Path

import pytest

from reports.cli import main
from themis.limits import MAX_ENUMERATED_ROUTES, check_route_enumeration, route_count
from topologies.errors import InputError


def _ring2(tmp_path: Path, dims: int) -> str:
    path = tmp_path / f"r{dims}.yml"
    ones = ", ".join
    path.write_text(f"topology: [{ones(['Ring'] * dims)}]\nnpus_count: [{ones(['2'] * dims)}]\n"
                    f"bandwidth: [{ones(['100.0'] * dims)}]\nlatency: [{ones(['20.0'] * dims)}]\n")
    return str(path)


def test_route_count_by_hand() -> None:
    assert route_count(5) == 120
    assert route_count(6) == 720
    check_route_enumeration(5, "x")  # 120 routes: allowed
    with pytest.raises(InputError, match=r"6! = 720 routes"):
        check_route_enumeration(6, "x", "net.yml")
    assert MAX_ENUMERATED_ROUTES == 120


@pytest.mark.parametrize("dims", [10, 64])
@pytest.mark.parametrize("command", [
    ["simulate", "--policy", "portfolio"], ["simulate", "--policy", "lb-mix"], ["bound"],
    ["compare"], ["improve"], ["solve", "--time-limit", "5"],
])
def test_many_dimensions_refused(tmp_path, capsys, dims: int, command: list[str]) -> None:
    net = _ring2(tmp_path, dims)
    code = main([command[0], net, *command[1:]])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert f"active dimensions = {dims}" in err and f"r{dims}" in err
    assert "routes" in err
