"""TrainingConfig from ASTRA-sim system files, and inputs ASTRA-sim cannot run."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.training.handcalc import CFG, NET, layer, workload
from themis.training import TrainingConfig, simulate_training
from topologies.astra import parse_system
from topologies.errors import InputError
from topologies.system import SystemConfig

SYSTEM = """scheduling-policy: FIFO
endpoint-delay: 7
active-chunks-per-dimension: 2
preferred-dataset-splits: 16
boost-mode: 0
all-reduce-implementation: ring_direct
all-to-all-implementation: direct_ring
collective-optimization: baseline
intra-dimension-scheduling: SCF
inter-dimension-scheduling: themis
"""
#: The keys ASTRA-sim 1.0 cannot run without, and nothing else.
REQUIRED = """scheduling-policy: FIFO
collective-optimization: baseline
preferred-dataset-splits: 8
"""


def test_from_system_reads_every_key_and_overrides_win() -> None:
    cfg = TrainingConfig.from_system(parse_system(SYSTEM, "sys.txt"), passes=3, intra=None)
    assert (cfg.scheduling_policy, cfg.endpoint_delay_ns, cfg.active_chunks, cfg.chunks) == \
        ("FIFO", 7, 2, 16)
    assert (cfg.boost_mode, cfg.local_bw_aware, cfg.policy, cfg.intra) == \
        (False, False, "themis", "scf")
    assert cfg.all_reduce_algorithms == ("ring", "direct")
    assert cfg.all_to_all_algorithms == ("direct", "ring")
    assert cfg.passes == 3
    with pytest.raises(InputError, match="unknown training option"):
        TrainingConfig.from_system(parse_system(SYSTEM, "sys.txt"), colour="blue")


def test_without_a_file_the_project_defaults_stay() -> None:
    cfg = TrainingConfig.from_system(SystemConfig())
    assert (cfg.policy, cfg.intra, cfg.scheduling_policy, cfg.endpoint_delay_ns,
            cfg.local_bw_aware, cfg.boost_mode, cfg.chunks) == \
        ("baseline", "fifo", "LIFO", 10, True, True, 4)


def test_an_omitted_key_gets_astra_sims_default() -> None:
    # Sys::Sys of ASTRA-sim 1.0: ascending, FIFO, endpoint-delay 10, boost-mode 0, 1 active chunk.
    cfg = TrainingConfig.from_system(parse_system(REQUIRED, "s.txt"))
    assert (cfg.policy, cfg.intra, cfg.endpoint_delay_ns, cfg.boost_mode, cfg.active_chunks) \
        == ("baseline", "fifo", 10, False, 1)
    assert (cfg.scheduling_policy, cfg.local_bw_aware, cfg.chunks) == ("FIFO", False, 8)


@pytest.mark.parametrize("key", ["scheduling-policy", "collective-optimization",
                                 "preferred-dataset-splits"])
def test_a_key_astra_sim_cannot_run_without_is_refused(key: str) -> None:
    text = "".join(line + "\n" for line in REQUIRED.splitlines() if not line.startswith(key))
    with pytest.raises(InputError, match=f"s.txt: {key}: missing") as err:
        TrainingConfig.from_system(parse_system(text, "s.txt"))
    assert "\n" not in str(err.value)
    if key == "preferred-dataset-splits":  # --chunks stands in for it
        assert TrainingConfig.from_system(parse_system(text, "s.txt"), chunks=4).chunks == 4
    if key == "collective-optimization":  # only the astra-sim-1.0 timing reads it
        TrainingConfig.from_system(parse_system(text, "s.txt"), timing="alpha-beta")


@pytest.mark.parametrize(("field", "value"), [
    ("chunks", 0), ("passes", 0), ("active_chunks", 1.5), ("comm_scale", 0),
    ("compute_scale", float("nan")), ("endpoint_delay_ns", -1), ("scheduling_policy", "LOFI")])
def test_bad_options_are_one_line_errors(field: str, value: object) -> None:
    with pytest.raises(InputError):
        TrainingConfig(**{field: value})


def test_what_astra_sim_cannot_run() -> None:
    a2a = workload("HYBRID_DLRM 0", layer("emb", 1, 1, 1, 1, fwd="ALLTOALL 4096"),
                   layer("top", 1, 1, 1, 1, wg="ALLREDUCE 4096"))
    ring = replace(CFG, all_to_all_algorithms=("ring", "direct"))
    with pytest.raises(InputError, match="all-to-all-implementation"):
        simulate_training(a2a, NET, ring)
    simulate_training(a2a, NET, replace(ring, timing="alpha-beta"))  # the project's model runs it
    both = workload("DATA", layer("l", 1, 1, 1, 1, wg="ALLREDUCEALLTOALL 4096"))
    with pytest.raises(InputError, match="ALLREDUCEALLTOALL"):
        simulate_training(both, NET, CFG)
    tiny = workload("DATA", layer("l", 1, 1, 1, 1, wg="ALLREDUCE 10"))
    with pytest.raises(InputError, match="cannot be cut into 64 chunks"):
        simulate_training(tiny, NET, replace(CFG, chunks=64))
