"""ASTRA-sim 1.0 workload files: reading, writing, bundled names, bad files."""

from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topologies.errors import InputError
from topologies.workload import (
    CommType,
    Layer,
    Parallelism,
    Workload,
    bundled_workload_path,
    format_workload,
    load_workload,
    parse_workload,
    workload_names,
    workloads_dir,
)

ROOT = Path(__file__).parents[2]
TUTORIAL = ROOT / "tests" / "data" / "astra-sim-1.0" / "tutorial"
LAYER = "conv1 -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 4096 1"


def test_bundled_names() -> None:
    names = workload_names()
    assert names == sorted(names)
    assert {"vgg16", "gpt3", "resnet50", "dlrm", "transformer", "transformer-fwd-in-bckwd",
            "mlp-data-model", "mlp-model-data", "mlp-model", "micro-allreduce",
            "micro-alltoall"} == set(names)
    on_disk = {p.name for p in workloads_dir().glob("*.txt")}
    assert {bundled_workload_path(n).name for n in names} == on_disk


@pytest.mark.parametrize("name", workload_names())
def test_every_bundled_file_parses_and_round_trips(name: str) -> None:
    wl = load_workload(name)
    assert wl.name == name and Path(wl.file).is_file()
    assert len(wl.layers) > 0
    again = parse_workload(format_workload(wl), "x.txt")
    assert replace(again, name=wl.name, file=wl.file) == wl
    # a second write is byte-identical (the writer is a fixed point)
    assert format_workload(again) == format_workload(wl)


def test_tutorial_files_are_bundled_unchanged() -> None:
    for name in ("vgg16", "gpt3"):
        assert bundled_workload_path(name).read_bytes() == (TUTORIAL / f"{name}.txt").read_bytes()


def test_package_data_ships_the_workloads() -> None:
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = conf["tool"]["setuptools"]["package-data"]["topologies"]
    for path in workloads_dir().iterdir():
        rel = path.relative_to(workloads_dir().parent.parent).as_posix()
        assert any(fnmatch.fnmatch(rel, g) for g in globs), rel
    notice = (workloads_dir() / "NOTICE").read_text()
    assert "Permission is hereby granted" in notice and "Georgia" in notice


def test_known_values_of_the_bundled_files() -> None:
    # values read off the files by eye (workloads.md §1 quotes the gpt3 header)
    vgg = load_workload("vgg16")
    assert vgg.parallelism is Parallelism.DATA and len(vgg.layers) == 16
    assert vgg.layers[0] == Layer("block1_conv1", "-1", 3429, CommType.NONE, 0, 3429,
                                  CommType.NONE, 0, 3429, CommType.ALLREDUCE, 3584, 1)
    gpt = load_workload("gpt3")
    assert gpt.model_parallel_npu_group == 16
    assert gpt.checkpoints == (0, 9, 18) and gpt.checkpoint_initiates == (26, 17, 8)
    assert len(gpt.layers) == 28 and gpt.layers[0].ig_size_bytes == 805306368
    dlrm = load_workload("dlrm")  # CRLF line endings and trailing tabs
    assert dlrm.parallelism is Parallelism.HYBRID_DLRM and dlrm.dlrm_last_bottom_layer == 4
    emb = dlrm.layers[0]
    assert (emb.fwd_type, emb.fwd_size_bytes, emb.update_ns) == (CommType.ALLTOALL, 98304, 98)
    tr = load_workload("transformer")
    assert tr.model_parallel_npu_group == 4 and len(tr.layers) == 57
    assert load_workload("micro-alltoall").layers[0].wg_type is CommType.ALLTOALL


def test_aliases_and_files() -> None:
    assert load_workload("mlp") == load_workload("mlp-model")
    assert load_workload("Resnet50_DataParallel").name == "resnet50"
    assert load_workload("VGG16.txt").name == "vgg16"
    wl = load_workload(str(TUTORIAL / "vgg16.txt"))
    assert wl.name == "vgg16" and wl.file.endswith("vgg16.txt")
    assert replace(wl, file="") == replace(load_workload("vgg16"), file="")


def test_an_existing_file_wins_over_a_bundled_name(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("vgg16").write_text(f"DATA\n1\n{LAYER}\n")
    assert len(load_workload("vgg16").layers) == 1


def test_header_tokens_may_span_lines_and_customized_layers() -> None:
    text = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD\nmp: 4\ncp: 2 0\n1 ci: 1 1\n2\n"
            f"{LAYER}\n{LAYER.replace('conv1', 'conv2')}\n")
    wl = parse_workload(text)
    assert (wl.model_parallel_npu_group, wl.checkpoints, wl.checkpoint_initiates) == (
        4, (0, 1), (1,))
    assert wl.name == "" and wl.file == ""
    custom = parse_workload(f"HYBRID_CUSTOMIZED\n2\n{LAYER} MODEL\n{LAYER} DATA\n", "c.txt")
    assert [ly.parallelism for ly in custom.layers] == [Parallelism.MODEL, Parallelism.DATA]
    assert custom.name == "c"
    assert parse_workload(format_workload(custom)) == replace(custom, name="", file="")
    dlrm = parse_workload(f"HYBRID_DLRM_ENHANCED 0\n1\n{LAYER}\n")
    assert dlrm.dlrm_last_bottom_layer == 0
    assert parse_workload(f"DATA\r\n1\r\n{LAYER}\t\r\n\r\n").layers[0].wg_size_bytes == 4096


L2 = LAYER.replace("conv1", "conv2")
BAD = [
    # (text, substrings the one-line message must contain)
    ("", ["bad.txt:1", "empty"]),
    ("DATAX\n1\n" + LAYER, ["bad.txt:1", "'DATAX'", "unknown parallelism keyword"]),
    ("data\n1\n" + LAYER, ["bad.txt:1", "'data'", "unknown parallelism keyword"]),
    ("DATA\n2\n" + LAYER, ["bad.txt:2", "1 layer lines, not 2"]),
    ("DATA\n1\n" + LAYER + "\n" + L2, ["bad.txt:4", "2 layer lines, not 1"]),
    ("DATA\n0\n", ["bad.txt:2", "layer count", "'0'"]),
    ("DATA\nten\n" + LAYER, ["bad.txt:2", "layer count", "'ten'", "not an integer"]),
    ("DATA\n1 " + LAYER, ["bad.txt:2", "after the layer count", "'conv1'"]),
    ("DATA\n1\n" + LAYER.replace(" 10 ", " 1e3 "),
     ["bad.txt:3", "conv1 fwd_compute = '1e3'", "not an integer"]),
    ("DATA\n1\n" + LAYER.replace(" 20 ", " 2.5 "), ["bad.txt:3", "ig_compute = '2.5'"]),
    ("DATA\n1\n" + LAYER.replace(" 30 ", " -30 "), ["bad.txt:3", "wg_compute = '-30'",
                                                    "negative"]),
    ("DATA\n1\n" + LAYER.replace(" 4096 ", " -4096 "), ["bad.txt:3", "wg_size = '-4096'"]),
    ("DATA\n1\n" + LAYER[:-2] + " 0", ["bad.txt:3", "update_time = '0'", "abort"]),
    ("DATA\n1\n" + LAYER[:-2] + " -1", ["bad.txt:3", "update_time = '-1'", "negative"]),
    ("DATA\n1\n" + LAYER.replace("ALLREDUCE", "ALLREDUCES"),
     ["bad.txt:3", "conv1 wg_type = 'ALLREDUCES'", "unknown collective type"]),
    ("DATA\n1\n" + LAYER.replace("NONE", "allgather", 1),
     ["bad.txt:3", "fwd_type = 'allgather'", "unknown collective type"]),
    ("DATA\n1\n" + LAYER.replace(" -1 ", " x "), ["bad.txt:3", "reserved = 'x'"]),
    ("DATA\n1\n" + LAYER[:-2], ["bad.txt:3", "layer = 'conv1'", "12 tokens", "this one 11"]),
    ("DATA\n1\n" + LAYER + " MODEL", ["bad.txt:3", "this one 13"]),
    ("HYBRID_CUSTOMIZED\n1\n" + LAYER, ["bad.txt:3", "13 tokens", "this one 12"]),
    ("HYBRID_CUSTOMIZED\n1\n" + LAYER + " MODELX",
     ["bad.txt:3", "conv1 parallelism = 'MODELX'", "unknown parallelism keyword"]),
    ("HYBRID_TRANSFORMER 4\n1\n" + LAYER, ["bad.txt:1", "label", "'4'"]),
    ("HYBRID_TRANSFORMER mp: 0\n1\n" + LAYER,
     ["bad.txt:1", "model_parallel_npu_group = '0'", ">= 1"]),
    ("HYBRID_TRANSFORMER mp: four\n1\n" + LAYER,
     ["bad.txt:1", "model_parallel_npu_group = 'four'"]),
    ("HYBRID_TRANSFORMER_FWD_IN_BCKWD mp: 4 cp: 1 0 ci: 1 5\n1\n" + LAYER,
     ["bad.txt:1", "checkpoint_initiates = 5", "no such layer"]),
    ("HYBRID_TRANSFORMER_FWD_IN_BCKWD mp: 4 cp: 1 1 ci: 1 0\n2\n" + LAYER + "\n" + L2,
     ["bad.txt:1", "checkpoint_initiates = 0", "checkpoint at or before"]),
    ("HYBRID_TRANSFORMER_FWD_IN_BCKWD mp: 4 cp: 2 0", ["bad.txt:1", "ends", "checkpoints"]),
    ("HYBRID_DLRM\n1\n" + LAYER, ["bad.txt:3", "layer count", "'conv1'"]),
    ("HYBRID_DLRM 3\n1\n" + LAYER, ["bad.txt:1", "dlrm_last_bottom_layer = 3", "no such layer"]),
    ("DATA\n", ["bad.txt:1", "ends where layer count"]),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_files_give_one_clear_line(text: str, expected: list[str]) -> None:
    with pytest.raises(InputError) as info:
        parse_workload(text, "bad.txt")
    message = str(info.value)
    assert "\n" not in message
    for part in expected:
        assert part in message, (part, message)


def test_bad_specs(tmp_path) -> None:
    with pytest.raises(InputError, match=r"WORKLOAD = 'vgg17'.*known: dlrm, gpt3"):
        load_workload("vgg17")
    binary = tmp_path / "w.txt"
    binary.write_bytes(b"DATA\n\xff\xfe\n")
    with pytest.raises(InputError, match="not a text file"):
        load_workload(str(binary))
    bad = tmp_path / "b.txt"
    bad.write_text("DATA\n1\n" + LAYER.replace("NONE", "NOPE", 1))
    with pytest.raises(InputError, match=rf"{bad}:3: conv1 fwd_type = 'NOPE'"):
        load_workload(str(bad))


_name = st.text("abcxyz_0123456789", min_size=1, max_size=8)
_num = st.integers(0, 10**12)  # the reader accepts up to 1e12 ns and 1 PiB
_comm = st.sampled_from(list(CommType))


@st.composite
def _workloads(draw) -> Workload:
    keyword = draw(st.sampled_from(list(Parallelism)))
    n = draw(st.integers(1, 6))
    custom = keyword is Parallelism.HYBRID_CUSTOMIZED
    layers = tuple(
        Layer(draw(_name), str(draw(st.integers(-5, 5))), draw(_num), draw(_comm), draw(_num),
              draw(_num), draw(_comm), draw(_num), draw(_num), draw(_comm), draw(_num),
              draw(st.integers(1, 10**6)),
              draw(st.sampled_from(list(Parallelism))) if custom else None)
        for _ in range(n))
    extra: dict = {}
    if keyword.name.startswith("HYBRID_TRANSFORMER"):
        extra["model_parallel_npu_group"] = draw(st.integers(1, 64))
        if keyword is Parallelism.HYBRID_TRANSFORMER_FWD_IN_BCKWD:
            extra["checkpoints"] = (0, *draw(st.lists(st.integers(0, n - 1), max_size=3)))
            extra["checkpoint_initiates"] = tuple(draw(st.lists(st.integers(0, n - 1),
                                                                max_size=3)))
    if keyword.name.startswith("HYBRID_DLRM"):
        extra["dlrm_last_bottom_layer"] = draw(st.integers(0, n - 1))
    return Workload(keyword, layers, "", "", **extra)


@settings(max_examples=60, deadline=None)
@given(_workloads())
def test_round_trip_property(wl: Workload) -> None:
    assert parse_workload(format_workload(wl)) == wl
