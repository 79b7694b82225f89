"""Safe output files: rename only over regular files, write through everything else."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from topologies.errors import InputError
from topologies.files import atomic_write, check_output_file, make_output_dir


def test_regular_file_is_replaced_keeping_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")
    os.chmod(target, 0o640)
    inode = target.stat().st_ino
    atomic_write(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.stat().st_ino != inode  # renamed over, not rewritten
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]  # no temporary left


def test_symlink_is_written_through_and_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic_write(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new"


def test_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "made.txt")
    atomic_write(link, b"bytes")
    assert link.is_symlink() and (tmp_path / "made.txt").read_bytes() == b"bytes"


def test_fifo_is_written_in_place_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic_write(fifo, "through the pipe")
    reader.join(timeout=10)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still a FIFO


def test_callable_content_gets_a_path(tmp_path: Path) -> None:
    target = tmp_path / "fig.bin"
    atomic_write(target, lambda p: Path(p).write_bytes(b"\x89PNG"))
    assert target.read_bytes() == b"\x89PNG"


@pytest.mark.parametrize("make", ["folder", "missing-parent"])
def test_folder_and_missing_parent_are_refused(tmp_path: Path, make: str) -> None:
    target = tmp_path / "x"
    if make == "folder":
        target.mkdir()
        path = target
    else:
        path = target / "sub" / "out.json"
    with pytest.raises(InputError) as err:
        atomic_write(path, "data")
    assert str(path) in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(InputError):
        check_output_file(path, "--out")
    assert not (target / "sub").exists()  # no mkdir -p


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_full_disk_is_one_input_error() -> None:
    with pytest.raises(InputError) as err:
        atomic_write("/dev/full", "x" * 100_000)
    assert "/dev/full" in str(err.value) and "No space" in str(err.value)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_check_output_file_suffixes(tmp_path: Path) -> None:
    check_output_file(tmp_path / "g.PDF", "--gantt", (".png", ".pdf", ".svg"))
    with pytest.raises(InputError) as err:
        check_output_file(tmp_path / "g.jpg", "--gantt", (".png", ".pdf", ".svg"))
    assert "--gantt" in str(err.value) and ".png" in str(err.value)


def test_make_output_dir_creates_one_level_only(tmp_path: Path) -> None:
    assert make_output_dir(tmp_path / "rep", "--out").is_dir()
    assert make_output_dir(tmp_path / "rep", "--out").is_dir()  # existing: fine
    with pytest.raises(InputError, match="no such folder"):
        make_output_dir(tmp_path / "a" / "b", "--out")
    assert not (tmp_path / "a").exists()
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="not a folder"):
        make_output_dir(tmp_path / "file", "--out")


def test_dev_fd_link_is_written_through_not_replaced(tmp_path: Path) -> None:
    # /dev/fd/N (like /dev/stdout) names an open descriptor: write through it, like `>`.
    if not os.path.isdir("/dev/fd"):
        pytest.skip("needs /dev/fd")
    target = tmp_path / "opened.txt"
    with open(target, "w") as fh:
        inode = os.fstat(fh.fileno()).st_ino
        atomic_write(f"/dev/fd/{fh.fileno()}", "through the descriptor")
    assert target.read_text() == "through the descriptor"
    assert target.stat().st_ino == inode  # the very file, not a renamed copy
    assert [p.name for p in tmp_path.iterdir()] == ["opened.txt"]
