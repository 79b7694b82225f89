"""reports/design: the cases come from LIBRA's files, and the committed report's numbers are
what the design search gives (one case re-run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports.report.design import COMMAND, cases
from solvers.design import design_study

LIBRA = Path(__file__).resolve().parents[3] / "shared" / "reference" / "libra"
REPORT = Path(__file__).resolve().parents[2] / "reports" / "design"
needs_libra = pytest.mark.skipif(not LIBRA.is_dir(), reason="../shared/reference/libra absent")


@needs_libra
def test_cases_read_libras_files() -> None:
    todo = {c.name: c for c in cases(LIBRA)}
    assert list(todo) == ["ar-total", "ar-cost", "GPT_3", "Turing_NLG", "MSFT_1T", "ResNet_50"]
    assert todo["ar-cost"].problem.costs == pytest.approx((2.00001, 4.00002, 4.00003, 57.40012))
    gpt = todo["GPT_3"].problem.items
    assert {(i.group, i.weight) for i in gpt} == {((4, 4, -1, -1), 8.0), ((-1, 2, 4, 32), 1.0),
                                                  ((4, 4, -1, -1), 2.0)}


@needs_libra
@pytest.mark.slow
def test_committed_resnet_case_regenerates() -> None:
    # The ResNet-50 case (one all-reduce on every dimension) re-run gives the committed numbers.
    assert COMMAND in (REPORT / "README.md").read_text()
    committed = json.loads((REPORT / "results.json").read_text())["ResNet_50"]
    case = {c.name: c for c in cases(LIBRA)}["ResNet_50"]
    study = design_study(case.problem, case.policies, 200)
    assert json.loads(json.dumps(study.to_dict())) == committed
