"""Output locations checked before any work starts, so a bad path is one line and
exit 2 at once, never a traceback after minutes of work."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from kraftwalk.errors import UsageError


def _first_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _writable_dir(folder: Path, option: str, shown: str) -> None:
    """Can a file be created in ``folder`` (which exists)? Tried, not guessed: root
    ignores permission bits, and read-only file systems ignore them the other way."""
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".kraftwalk-write-test-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        raise UsageError(f"{option} {shown}: cannot write in {folder} ({e.strerror or e})") from None


def check_output_dir(path: str | os.PathLike, option: str, shown: str | None = None) -> None:
    """A folder the command will create (with its parents) or write into; ``shown`` is
    the path the user gave, when it was a file in this folder."""
    p = Path(path)
    shown = shown or os.fspath(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option} {shown} is a file, not a folder")
    base = _first_existing(p)
    if not base.is_dir():
        raise UsageError(f"{option} {shown}: {base} is a file, so no folder can be made under it")
    _writable_dir(base, option, shown)


def check_new_folder(path: str | os.PathLike, what: str, hint: str = "") -> None:
    """A folder a new run or sweep will fill: missing or empty."""
    p = Path(path)
    if p.exists() and (not p.is_dir() or any(p.iterdir())):
        raise UsageError(f"--out {os.fspath(path)} already exists and is not an empty folder; "
                         f"choose a new {what}{hint}")


def make_new_folder(path: str | os.PathLike, what: str, hint: str = "") -> Path:
    """Create the folder of a new run or sweep (see :func:`check_new_folder`)."""
    check_new_folder(path, what, hint)
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--out {os.fspath(path)} cannot be created: {e.strerror or e}") from None
    return p


def check_output_file(path: str | os.PathLike, option: str) -> None:
    """A file the command will write; its folder is created if missing."""
    p = Path(path)
    shown = os.fspath(path)
    if p.is_dir():
        raise UsageError(f"{option} {shown} is a folder; give a file name")
    if not p.name or shown.endswith(os.sep):
        raise UsageError(f"{option} {shown!r} names no file")
    check_output_dir(p.parent, option, shown)
