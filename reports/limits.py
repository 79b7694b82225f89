"""The stage limit of one simulated collective, checked before the work starts.

``simulate`` (unless ``--no-limit``), ``compare`` and sweep grids refuse a
collective of more than :data:`MAX_STAGES` stages (chunks x stages per chunk)
with its estimated memory and time, in one line (exit 2). A light module: the
CLI imports it at start-up (importing anything under ``themis`` would load the
whole package).
"""

from __future__ import annotations

from topologies.errors import InputError

#: ``simulate``, ``compare`` and sweep grids refuse a collective of more stages than this
#: (``simulate --no-limit`` runs it anyway).
MAX_STAGES = 2_000_000
#: Measured cost of one simulated stage (peak memory, CPU time; bench_simulator.py's
#: machine class), for the estimate printed with the refusal.
BYTES_PER_STAGE = 320
SECONDS_PER_STAGE = 3e-6


def check_stage_count(chunks: int, stages_per_chunk: int, field: str, value: object,
                      file: str = "", escape: str = "--no-limit runs it anyway") -> None:
    """Refuse (one line) a run of more than :data:`MAX_STAGES` stages, with its cost;
    ``field`` = ``value`` is what the user wrote (flag, system-file or spec key);
    ``escape``: what the user can do about it."""
    stages = chunks * stages_per_chunk
    if stages <= MAX_STAGES:
        return
    from reports.sweep.progress import format_duration

    gib = stages * BYTES_PER_STAGE / 2**30
    raise InputError(
        f"{stages:,} stages ({chunks:,} chunks x {stages_per_chunk}) would take about "
        f"{gib:,.1f} GiB of memory and {format_duration(stages * SECONDS_PER_STAGE)}; "
        f"the limit is {MAX_STAGES:,} stages ({escape})", field, value, file)


__all__ = ["BYTES_PER_STAGE", "MAX_STAGES", "SECONDS_PER_STAGE", "check_stage_count"]
