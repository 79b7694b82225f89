"""The LP/MIP builder of the bounds (LB2's LP, LB3's MIP): :mod:`themis.highs`, re-exported."""

from __future__ import annotations

from themis.highs import LinearModel, Solved, new_highs

__all__ = ["LinearModel", "Solved", "new_highs"]
