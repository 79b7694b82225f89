"""themis convert: 1.0 workloads to Chakra ETs byte for byte as chakra's text converter wrote
the ET inputs of the real ASTRA-sim 2.x runs (../shared/reference/chakra/runs: 47 runs, every
parallelism chakra converts, 32 and 64 ranks, one and two passes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reports.cli import main
from topologies.chakra.convert import convert_workload
from topologies.chakra.trace import et_bytes, read_et
from topologies.errors import InputError

RUNS = Path(__file__).resolve().parents[3] / "shared" / "reference" / "chakra" / "runs"
needs_runs = pytest.mark.skipif(not RUNS.is_dir(), reason="../shared/reference/chakra absent")


def _runs() -> list[Path]:
    return sorted(p for p in RUNS.iterdir() if any(p.glob("*.et"))) if RUNS.is_dir() else []


@needs_runs
@pytest.mark.parametrize("run", _runs(), ids=lambda p: p.name)
def test_every_rank_of_every_run_is_reproduced_byte_for_byte(run: Path) -> None:
    ets = sorted(run.glob("*.et"))
    first = read_et(ets[0])
    text = next(str(a.value) for a in first.metadata.attrs if a.name == "input_file")
    passes = 2 if run.name.endswith("passes2") else 1
    prefix = ets[0].name.rsplit(".", 2)[0]
    made = convert_workload(text, len(ets), passes, "0.0.4")
    for rank, trace in made.items():
        assert et_bytes(trace) == (run / f"{prefix}.{rank}.et").read_bytes(), rank


@needs_runs
def test_convert_command_writes_the_runs_files(tmp_path, capsys) -> None:
    # The bundled vgg16 is the file the N2a_vgg16_s16 run converted (32 ranks).
    out = tmp_path / "vgg16"
    assert main(["convert", "vgg16", "--npus", "32", "--out", str(out), "--schema",
                 "0.0.4"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1000x" in err
    for rank in range(32):
        assert (tmp_path / f"vgg16.{rank}.et").read_bytes() == \
            (RUNS / "N2a_vgg16_s16" / f"vgg16.{rank}.et").read_bytes()


def test_an_existing_folder_as_out_gets_the_workload_name(tmp_path, capsys) -> None:
    """``--out FOLDER`` (or ``FOLDER/``) writes ``FOLDER/<workload>.<rank>.et``, not
    ``FOLDER.<rank>.et`` beside it; a missing ``FOLDER/`` is refused in one line."""
    (tmp_path / "ets").mkdir()
    for out in (str(tmp_path / "ets"), str(tmp_path / "ets") + "/"):
        assert main(["convert", "vgg16", "--npus", "4", "--out", out]) == 0
        capsys.readouterr()
        assert sorted(p.name for p in (tmp_path / "ets").iterdir()) == \
            [f"vgg16.{r}.et" for r in range(4)]
        assert not list(tmp_path.glob("ets.*.et"))
    assert main(["convert", "vgg16", "--npus", "4", "--out", str(tmp_path / "no") + "/"]) == 2
    assert "no such folder" in capsys.readouterr().err


def test_micro_known_answer() -> None:
    # MICRO: per pass, per layer, one collective node (the weight-gradient one), no deps;
    # ids run on across ranks; NONE is comm type 0 (ALL_REDUCE) as chakra writes it.
    text = "MICRO\n1\nx -1 5 NONE 0 5 NONE 0 5 ALLGATHER 64 0\n"
    made = convert_workload(text, 2, 2)
    assert [n.id for n in made[1].nodes] == [2, 3]
    node = made[0].nodes[0]
    assert node.name == "COMM_COLL_NODE_x_ALLGATHER"
    assert [(a.name, a.value) for a in node.attrs] == [("comm_type", 2), ("comm_size", 64)]


@pytest.mark.parametrize(("text", "key"), [
    ("TENSOR\n1\nx -1 5 NONE 0 5 NONE 0 5 NONE 0 0\n", "line 1"),
    ("DATA\n1\nx -1 5 NONE 0 5 NONE 0 5 NONE\n", "line 3"),
    ("DATA\none\nx -1 5 NONE 0 5 NONE 0 5 NONE 0 0\n", "line 2"),
    ("DATA\n1\nx -1 5.5 NONE 0 5 NONE 0 5 NONE 0 0\n", "line 3"),
])
def test_what_chakras_converter_stops_on_is_one_error(text, key) -> None:
    with pytest.raises(InputError, match=key):
        convert_workload(text, 2, 1, file="w.txt")


def test_a_rank_that_differs_from_the_first_is_checked_on_its_own(tmp_path) -> None:
    # Ranks equal to rank 0 up to an id offset are checked by that comparison; one whose
    # dependency dangles is not equal, so the full check runs and names its file.
    from topologies.chakra.ranks import read_ets
    from topologies.chakra.trace import write_et

    line = "-1 5 NONE 0 5 NONE 0 5 ALLREDUCE 64 0"
    text = f"DATA\n2\na {line}\nb {line}\n"
    made = convert_workload(text, 3)
    for rank, trace in made.items():
        write_et(trace, tmp_path / f"w.{rank}.et")
    assert len(read_ets(tmp_path / "w")) == 3
    bad = made[2]
    bad.nodes[-1].data_deps.append(999_999)
    write_et(bad, tmp_path / "w.2.et")
    with pytest.raises(InputError, match=r"w\.2\.et.*999999|999999.*w\.2\.et"):
        read_ets(tmp_path / "w")


@needs_runs
def test_fast_and_general_node_decoders_agree() -> None:
    # Every node of one rank of every run decodes the same through both paths.
    from topologies.chakra.et import decode_node
    from topologies.chakra.fast import read_node
    from topologies.chakra.wire import iter_delimited

    for run in _runs():
        data = sorted(run.glob("*.et"))[0].read_bytes()
        for _, payload in list(iter_delimited(data))[1:]:
            assert read_node(payload) == decode_node(payload)
