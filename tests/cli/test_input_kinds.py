"""Messages about inputs: a folder, FIFO, device link or dangling link given as an input
file says what it is; binary and oversized text inputs are refused before they are parsed;
echoed values are cut; spec values of the wrong type are refused. One line, exit 2."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from reports.cli import main
from topologies.errors import MAX_SHOWN_CHARS, InputError, shorten
from topologies.files import MAX_TEXT_INPUT_BYTES, file_kind, read_input_text


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], *needles: str) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = int(exc.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.fixture
def odd(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Paths that are not regular files, and what each must be called."""
    folder = tmp_path / "folder.yml"
    folder.mkdir()
    fifo = tmp_path / "fifo.txt"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.txt"
    zero.symlink_to("/dev/zero")
    dangling = tmp_path / "gone.yml"
    dangling.symlink_to(tmp_path / "nowhere.yml")
    return {"folder": (folder, "is a folder"), "fifo": (fifo, "is a FIFO (named pipe)"),
            "zero": (zero, "is a symbolic link to /dev/zero, a character device"),
            "dangling": (dangling, "is a dangling symbolic link to")}


@pytest.mark.parametrize("kind", ["folder", "fifo", "zero", "dangling"])
@pytest.mark.parametrize(("argv", "field"), [
    (["train", "{p}", "small-2d"], "WORKLOAD"),
    (["simulate", "{p}"], "NETWORK"),
    (["train", "vgg16", "small-2d", "--system", "{p}"], "SYSTEM"),
    (["sweep", "{p}", "--db", "{tmp}/r.sqlite"], "SPEC"),
])
def test_an_input_that_is_not_a_file_says_what_it_is(
        odd: dict[str, tuple[Path, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        kind: str, argv: list[str], field: str) -> None:
    path, what = odd[kind]
    words = [a.format(p=path, tmp=tmp_path) for a in argv]
    err = _refused(capsys, words, f"{field} = '{path}'", what)
    assert "no such file" not in err
    assert not (tmp_path / "r.sqlite").exists() and not (tmp_path / "nowhere.yml").exists()


def test_file_kind() -> None:
    assert file_kind(__file__) == ""
    assert file_kind("/") == "a folder"
    assert file_kind("/dev/null") == "a character device"
    assert file_kind("/no/such/file") == "no such file"


def test_binary_and_oversized_inputs_are_refused_before_parsing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    huge = tmp_path / "huge.txt"
    with open(huge, "wb") as f:  # a sparse 256 MiB file of NUL bytes: nothing is read
        f.truncate(256 * 2**20)
    _refused(capsys, ["train", str(huge), "small-2d"], "WORKLOAD = ",
             "256 MiB, more than the 64 MiB a text input may be")
    _refused(capsys, ["simulate", str(huge.rename(tmp_path / "huge.yml"))], "huge.yml",
             "256 MiB, more than the 64 MiB")
    binary = tmp_path / "net.yml"
    binary.write_bytes(b"topology: [ Ring ]\n\x00\x00rest")
    _refused(capsys, ["simulate", str(binary)], "net.yml",
             "a binary file (a NUL byte at byte 19), not a text file")
    latin = tmp_path / "w.txt"
    latin.write_bytes("DATA\n1\nlayér".encode("latin-1"))
    _refused(capsys, ["train", str(latin), "small-2d"], "not a text file (not UTF-8")


def test_read_input_text_bounds(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("x" * 100)
    assert read_input_text(path, limit_bytes=100) == "x" * 100  # at the limit: read
    path.write_text("x" * 101)
    with pytest.raises(InputError, match="101 bytes, more than the 100 bytes"):
        read_input_text(path, limit_bytes=100)
    assert MAX_TEXT_INPUT_BYTES == 64 * 2**20


def test_echoed_values_are_cut(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    n = MAX_SHOWN_CHARS
    assert shorten("a" * n) == "a" * n
    assert shorten("a" * (n + 1)) == "a" * (n - 3) + "..."
    message = str(InputError("bad", "key", "v" * 10_000, "f.txt"))
    assert message == f"f.txt: key = '{'v' * (MAX_SHOWN_CHARS - 4)}...: bad"
    long_policy = "p" * 5000
    err = _refused(capsys, ["simulate", "small-2d", "--policy", long_policy], "--policy")
    assert len(err) < 2 * MAX_SHOWN_CHARS + 200
    err = _refused(capsys, ["simulate", "small-2d", "--chunks", "9" * 5000], "--chunks",
                   "not an integer")
    assert len(err) < 2 * MAX_SHOWN_CHARS + 200
    # a 5000-digit number in a workload (past int()'s own limit: was a traceback)
    wl = tmp_path / "w.txt"
    wl.write_text("DATA\n" + "9" * 5000 + "\n")
    err = _refused(capsys, ["train", str(wl), "small-2d"], "w.txt:2: layer count = ",
                   "more than 30 digits")
    assert len(err) < 2 * MAX_SHOWN_CHARS + 200
    net = tmp_path / "n.yml"
    net.write_text(f"topology: [ Ring ]\nnpus_count: [ {'9' * 5000} ]\n"
                   "bandwidth: [ 50 ]\nlatency: [ 500 ]\n")
    _refused(capsys, ["simulate", str(net)], "n.yml", "invalid YAML")


@pytest.mark.parametrize(("body", "key", "example"), [
    ('[[grid]]\nnetworks = "small-2d"\nsizes = ["1MiB"]\nchunks = [2]',
     "grid[0].networks = 'small-2d'", 'networks = ["small-2d"]'),
    ('[[grid]]\nnetworks = ["small-2d"]\nsizes = "1MiB"\nchunks = [2]',
     "grid[0].sizes = '1MiB'", 'sizes = ["1MiB"]'),
    ('[[grid]]\nnetworks = ["small-2d"]\nsizes = ["1MiB"]\nchunks = 2',
     "grid[0].chunks = 2", "chunks = [2]"),
    ('[[grid]]\nnetworks = ["small-2d"]\nsizes = ["1MiB"]\nchunks = [2]\npolicies = "themis"',
     "grid[0].policies = 'themis'", 'policies = ["themis"]'),
    ('[[training]]\nworkloads = "vgg16"\nnetworks = ["small-2d"]',
     "training[0].workloads = 'vgg16'", 'workloads = ["vgg16"]'),
    ('[[training]]\nworkloads = ["vgg16"]\nnetworks = ["small-2d"]\npasses = 2',
     "training[0].passes = 2", "passes = [2]"),
    ('[[grid]]\nnetworks = {name = "small-2d"}\nsizes = ["1MiB"]\nchunks = [2]',
     "grid[0].networks = {'name': 'small-2d'}", "networks = [...]"),
])
def test_spec_values_of_the_wrong_type_are_refused(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str],
                                                   body: str, key: str, example: str) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent(body) + "\n")
    db = tmp_path / "r.sqlite"
    _refused(capsys, ["sweep", str(spec), "--db", str(db), "--workers", "1"],
             f"s.toml: {key}: must be a list (a TOML array: {example})")
    assert not db.exists()


@pytest.mark.parametrize(("body", "needle"), [
    ('[[grid]]\nnetworks = ["small-2d"]\nsizes = ["1MiB"]\nchunks = [2]\n'
     "endpoint_delay_ns = []", "grid[0].endpoint_delay_ns = []: must not be empty"),
    ('[[grid]]\nnetworks = ["small-2d"]\nsizes = ["1MiB"]\nchunks = [2]\n'
     "endpoint_delay_ns = [1e300]", "grid[0].endpoint_delay_ns[0] = 1e+300: endpoint delay"),
    ('[[training]]\nworkloads = ["vgg16"]\nnetworks = ["small-2d"]\npasses = []',
     "training[0].passes = []: must not be empty"),
    ('[[training]]\nworkloads = ["vgg16"]\nnetworks = ["small-2d"]\nchunks = []',
     "training[0].chunks = []: must not be empty"),
    ('[[training]]\nworkloads = ["vgg16"]\nnetworks = ["small-2d"]\ntiming = []',
     "training[0].timing = []: must not be empty"),
])
def test_spec_lists_that_would_run_nothing_are_refused(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       body: str, needle: str) -> None:
    spec = tmp_path / "s.toml"
    spec.write_text(body + "\n")
    _refused(capsys, ["sweep", str(spec), "--db", str(tmp_path / "r.sqlite")], needle)
    assert not (tmp_path / "r.sqlite").exists()


def test_a_spec_entry_beside_the_spec_that_is_not_a_file_says_what_it_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "wl").mkdir()
    os.mkfifo(tmp_path / "net.yml")
    spec = tmp_path / "s.toml"
    spec.write_text('[[training]]\nworkloads = ["wl"]\nnetworks = ["small-2d"]\n')
    _refused(capsys, ["sweep", str(spec), "--db", str(tmp_path / "r.sqlite")],
             "s.toml: training[0].workloads[0] = 'wl': is a folder, not a file")
    spec.write_text('[[grid]]\nnetworks = ["net.yml"]\nsizes = ["1MiB"]\nchunks = [2]\n')
    _refused(capsys, ["sweep", str(spec), "--db", str(tmp_path / "r.sqlite")],
             "s.toml: grid[0].networks[0] = 'net.yml': is a FIFO (named pipe), not a file")
