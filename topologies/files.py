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

__all__ = ["MAX_TEXT_INPUT_BYTES", "atomic_write", "check_input_file", "check_output_file",
           "current_umask", "file_kind", "make_output_dir", "output_error", "read_input_text"]

#: The largest text input (a network, system, workload, spec or schedule file) read: the
#: largest real one (a 20,000-layer workload) is under 2 MiB.
MAX_TEXT_INPUT_BYTES = 64 * 1024 * 1024


def file_kind(path: str | os.PathLike) -> str:
    """What ``path`` is when it is not a regular file (after links): ``a folder``, ``a FIFO
    (named pipe)``, ``a character device``, ``a dangling symbolic link to X``, ``no such
    file``...; ``""`` for a regular file. A link to a device names its target."""
    p = str(path)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        if os.path.islink(p):
            return f"a dangling symbolic link to {os.readlink(p)}"
        return "no such file"
    except OSError as err:
        return f"cannot be looked at ({err.strerror or err})"
    if stat.S_ISREG(mode):
        return ""
    kind = "not a regular file"
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            kind = name
            break
    if os.path.islink(p):
        return f"a symbolic link to {os.path.realpath(p)}, {kind}"
    return kind


def check_input_file(path: str | os.PathLike, field: str = "path") -> None:
    """Refuse an input that is not a regular file, saying what it is (``is a folder``,
    ``is a FIFO``, ``is a symbolic link to /dev/zero, a character device``)."""
    kind = file_kind(path)
    if kind == "no such file":
        raise InputError("no such file", field, str(path), str(path))
    if kind:
        raise InputError(f"is {kind}, not a file", field, str(path), str(path))


def read_input_text(path: str | os.PathLike, field: str = "path",
                    limit_bytes: int = MAX_TEXT_INPUT_BYTES) -> str:
    """The UTF-8 text of the input file ``path``, read with a bound: a path that is not a
    regular file, a file over ``limit_bytes``, a binary file (a NUL byte) and one that is
    not UTF-8 are each one :class:`InputError` naming the file, before it is parsed."""
    file = str(path)
    check_input_file(path, field)
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            data = fh.read(limit_bytes + 1) if size <= limit_bytes else b""
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", field, file, file) from None
    if size > limit_bytes or len(data) > limit_bytes:
        shown = max(size, len(data))
        raise InputError(f"{_mib(shown)}, more than the {_mib(limit_bytes)} a text input may "
                         "be", field, file, file)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise InputError(f"a binary file (a NUL byte at byte {nul}), not a text file", field,
                         file, file)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"not a text file (not UTF-8: {err.reason} at byte {err.start})",
                         field, file, file) from None


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB" if n >= 2**20 else f"{n:,} bytes"


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
