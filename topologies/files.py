"""Safe output files: a reader never sees a half-written file, and nothing but a
regular file is ever replaced.

:func:`atomic_write` writes a regular file (or a missing one) through a
temporary file in the same folder and :func:`os.replace`. Anything else is
written through, never replaced: a symlink writes to the file it points to
(the link stays), and a device, FIFO or open descriptor (``/dev/null``,
``/dev/stdout``, ``/dev/fd/N``) is opened and written like ``>`` in a shell.
A folder is refused, and so is a missing parent folder (no silent
``mkdir -p``): only :func:`make_output_dir` creates a folder, one level, for
commands that say so in their help.

Every failure is an :class:`~topologies.errors.InputError` with a one-line
message naming the file (``out.png: cannot write: No space left on device``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from topologies.errors import InputError

__all__ = ["atomic_write", "check_output_file", "current_umask", "make_output_dir",
           "output_error"]


def current_umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def output_error(err: OSError, path: str | os.PathLike, field: str = "") -> InputError:
    """An :class:`InputError` for an OS error while writing ``path``."""
    file = str(path)
    reason = err.strerror or str(err)
    return InputError(f"cannot write: {reason}", field, None, file)


def _resolved(path: str | os.PathLike) -> Path:
    """``path`` with symlinks followed (a dangling link gives the missing target)."""
    target = Path(path)
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def _through_proc(path: str | os.PathLike) -> bool:
    """Whether ``path`` is, or links through, ``/proc`` (``/dev/stdout``, ``/dev/fd/1``).

    Such links name an open file descriptor: writing must go through them (as
    a shell's ``>`` does), never replace what they point to.
    """
    cur = str(path)
    for _ in range(40):
        cur = os.path.join(os.path.realpath(os.path.dirname(cur) or "."), os.path.basename(cur))
        if cur.startswith("/proc/"):
            return True
        if not os.path.islink(cur):
            return False
        cur = os.path.join(os.path.dirname(cur), os.readlink(cur))
    return False


def check_output_file(path: str | os.PathLike, field: str = "",
                      suffixes: Sequence[str] | None = None) -> None:
    """Refuse, before any work, an output path that :func:`atomic_write` would refuse.

    Checks: the file name ends in one of ``suffixes`` (when given, any case);
    the target (after symlinks) is not a folder; its parent folder exists.
    ``field`` (a flag such as ``--gantt``) is named in the error.
    """
    file = str(path)
    if suffixes is not None and Path(file).suffix.lower() not in suffixes:
        raise InputError(f"unsupported file type (expected {', '.join(suffixes)})",
                         field, file)
    if os.path.isdir(path):
        raise InputError("is a folder, not a file", field, file)
    if os.path.exists(path):  # an existing file, device or /dev/stdout: its folder exists
        return
    parent = _resolved(path).parent
    if not parent.is_dir():
        raise InputError(f"no such folder: {parent} (create it first)", field, file)


def make_output_dir(path: str | os.PathLike, field: str = "") -> Path:
    """The folder ``path``, created (one level only) if missing; return it.

    An existing non-folder, or a missing parent folder, is an
    :class:`InputError` naming ``field``.
    """
    folder = Path(path)
    if folder.is_dir():
        return folder
    if folder.exists() or folder.is_symlink():
        raise InputError("exists and is not a folder", field, str(folder))
    parent = folder.parent
    if not parent.is_dir():
        raise InputError(f"no such folder: {parent} (create it first)", field, str(folder))
    try:
        folder.mkdir()
    except OSError as err:
        raise output_error(err, folder, field) from None
    return folder


def atomic_write(path: str | os.PathLike, content: str | bytes | Callable[[str], None]) -> None:
    """Write ``content`` to ``path`` safely.

    ``content`` is text, bytes, or a function that writes the file whose path
    it is given (e.g. ``fig.savefig``). A regular or missing target is written
    to a temporary file next to it, flushed, given the mode of the file it
    replaces (else ``0666 & ~umask``) and renamed over it. A symlink is
    followed (the link is kept); a device, FIFO or socket is written in
    place. Raises :class:`InputError` for a folder, a missing parent folder
    and every OS error (full disk, no permission).
    """
    try:
        st = os.stat(path)  # follows symlinks, /dev/stdout included
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise output_error(err, path) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InputError("cannot write: is a folder, not a file", "", None, str(path))
    try:
        if st is not None and (not stat.S_ISREG(st.st_mode) or _through_proc(path)):
            _write_in_place(Path(path), content)
        else:
            target = _resolved(path)
            if not target.parent.is_dir():
                raise InputError(f"cannot write: no such folder: {target.parent}", "", None,
                                 str(path))
            mode = st.st_mode & 0o777 if st is not None else 0o666 & ~current_umask()
            _replace(target, content, mode)
    except OSError as err:
        raise output_error(err, path) from None


def _write_in_place(target: Path, content: str | bytes | Callable[[str], None]) -> None:
    """Write a non-regular file (device, FIFO) the way a shell's ``>`` does."""
    if callable(content):
        content(str(target))
        return
    data = content.encode() if isinstance(content, str) else content
    with open(target, "wb") as fh:
        fh.write(data)
        fh.flush()


def _replace(target: Path, content: str | bytes | Callable[[str], None], mode: int) -> None:
    """Write a temporary file next to ``target`` and rename it over ``target``."""
    import tempfile  # late: reading inputs never needs it

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        if callable(content):
            os.close(fd)
            content(tmp)
        else:
            data = content.encode() if isinstance(content, str) else content
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
