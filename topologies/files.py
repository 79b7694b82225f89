"""Atomic file writes: a reader never sees a half-written file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def current_umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, content: str | bytes | Callable[[str], None],
                 make_parents: bool = False) -> None:
    """Write ``content`` to ``path`` through a temporary file and ``os.replace``.

    ``content`` is text, bytes, or a function that writes the temporary file
    whose path it is given (e.g. ``fig.savefig``). The file keeps the mode of
    the file it replaces, else gets the usual ``0666 & ~umask``. Missing parent
    folders are created only with ``make_parents``.
    """
    target = Path(path)
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o666 & ~current_umask()
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
