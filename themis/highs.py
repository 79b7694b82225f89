"""A quiet HiGHS instance for the models of every layer (route mixes, bounds, MILPs)."""

from __future__ import annotations

import os
import sys

_QUIET = False


def new_highs():
    """A quiet ``highspy.Highs`` (the first one prints a banner on fd 1: hide it)."""
    global _QUIET
    import highspy

    if not _QUIET:
        sys.stdout.flush()
        saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        try:
            h = highspy.Highs()
            try:
                import ctypes

                ctypes.CDLL(None).fflush(None)
            except (OSError, AttributeError):  # pragma: no cover - non-POSIX libc
                pass
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
        _QUIET = True
    else:
        h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


__all__ = ["new_highs"]
