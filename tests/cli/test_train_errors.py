"""``themis train``: bad inputs exit with status 2 and one line naming the input."""

from __future__ import annotations

import pytest

from reports.cli import main

LAYER = "conv1 -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 4096 1"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = int(exc.code)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def bad_files(tmp_path):
    files = {
        "keyword.txt": "DATAX\n1\n" + LAYER,
        "count.txt": "DATA\n2\n" + LAYER,
        "type.txt": "DATA\n1\n" + LAYER.replace("ALLREDUCE", "ALLREDUCEX"),
        "update.txt": "DATA\n1\n" + LAYER[:-1] + "0",
        "negative.txt": "DATA\n1\n" + LAYER.replace(" 20 ", " -20 "),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(("file", "expected"), [
    ("keyword.txt", ":1: parallelism = 'DATAX'"),
    ("count.txt", ":2: layer count = 2"),
    ("type.txt", ":3: conv1 wg_type = 'ALLREDUCEX'"),
    ("update.txt", ":3: conv1 update_time = '0'"),
    ("negative.txt", ":3: conv1 ig_compute = '-20'"),
])
def test_bad_workload_files(capsys, bad_files, file, expected) -> None:
    path = bad_files / file
    code, out, err = run(capsys, "train", str(path), "tpu")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("themis: error: ")
    assert f"{path}{expected}" in err


@pytest.mark.parametrize(("argv", "expected"), [
    (["vgg17", "tpu"], "WORKLOAD = 'vgg17': no such file or bundled workload"),
    (["vgg16", "tpuu"], "NETWORK = 'tpuu'"),
    (["vgg16", "tpu", "--system", "nope.txt"], "SYSTEM = 'nope.txt'"),
    (["vgg16", "tpu", "--passes", "0"], "--passes = 0: must be at least 1"),
    (["vgg16", "tpu", "--passes", "two"], "--passes = 'two': not an integer"),
    (["vgg16", "tpu", "--chunks", "0"], "--chunks = 0"),
    (["vgg16", "tpu", "--comm-scale", "0"], "--comm-scale = 0.0: must be a positive"),
    (["vgg16", "tpu", "--compute-scale", "-1"], "--compute-scale = -1.0"),
    (["vgg16", "tpu", "--compute-scale", "x"], "--compute-scale = 'x': not a number"),
    (["vgg16", "tpu", "--timeline", "t.gif"], "--timeline = 't.gif'"),
    (["vgg16", "tpu", "--policy", "nope"], "policy = 'nope': unknown policy"),
    (["vgg16", "tpu", "--intra", "nope"], "intra = 'nope'"),
    (["vgg16", "tpu", "--timing", "nope"], "timing = 'nope': unknown timing model"),
])
def test_bad_arguments(capsys, argv, expected) -> None:
    code, out, err = run(capsys, "train", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and expected in err, err


def test_train_report_rejects_unknown_names(capsys, tmp_path) -> None:
    code, _, err = run(capsys, "train-report", "--out", str(tmp_path / "r"),
                       "--workloads", "vgg16,nope")
    assert code == 2 and "--workloads = 'nope'" in err and err.count("\n") == 1
    code, _, err = run(capsys, "train-report", "--out", str(tmp_path / "r"),
                       "--networks", "torus-9d")
    assert code == 2 and "--networks = 'torus-9d'" in err
    assert not (tmp_path / "r").exists()
