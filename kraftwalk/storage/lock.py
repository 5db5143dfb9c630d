"""One writer per run folder: a lock taken when a run, sweep or elect starts writing a
folder (new or resumed) and held until it ends.

The lock is ``flock`` on the hidden file ``FOLDER/.lock``: the kernel drops it when
its holder ends however it ends (kill -9 included), so a stopped run's folder is free
at once, and two writers that start together cannot both get it (a pid in a status
file, read before the first writer has written it, could not say so). The file keeps
the holder's pid, command and start time, for the one line a second writer gets. It
is opened close-on-exec, so worker processes never hold it.
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from kraftwalk.errors import UsageError

LOCK_FILE = ".lock"


def _holder_text(fd: int) -> str:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        meta = json.loads(os.read(fd, 4096).decode() or "{}")
        pid = int(meta["pid"])
        os.kill(pid, 0)  # the file still names the holder before this one: not it
        return f"pid {pid} (kraftwalk {meta.get('command', '?')}, since {meta.get('since', '?')})"
    except PermissionError:  # alive, another user's
        return f"pid {pid} (kraftwalk {meta.get('command', '?')})"
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return "another process"  # it has the lock but has not written its name yet


def _try_lock(fd: int, how: int) -> bool:
    """Take the lock if free. A busy lock is tried again for a moment: :func:`holder`
    holds a shared lock for a few microseconds while it asks, and a writer that met
    one of those must not take it for a writer."""
    deadline = time.monotonic() + 0.5
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)


def holder(folder: str | Path) -> str | None:
    """Who holds ``folder``'s lock now, or None when nobody does (checked, then let go)."""
    path = Path(folder) / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None  # no lock file: nobody has locked it
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # busy: a writer, or another asker's moment
            return None if _try_lock(fd, fcntl.LOCK_SH) else _holder_text(fd)
        return None
    finally:
        os.close(fd)


def refuse_if_held(folder: str | Path, option: str) -> None:
    """A usage error naming the holder when another process writes ``folder``."""
    who = holder(folder)
    if who is not None:
        raise UsageError(f"{option} {folder}: {who} is writing it; wait for it to end or "
                         "stop it first")


@contextmanager
def hold(folder: str | Path, command: str, option: str = "--out") -> Iterator[None]:
    """Hold ``folder``'s lock for the block (``command`` names the writer to others);
    another holder is a one-line usage error. With ``option`` "--out" the folder is a
    new one: under the lock it must still hold nothing but the lock file, since a run
    started beside this one may have taken the lock first and written it meanwhile."""
    path = Path(folder) / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        if not _try_lock(fd, fcntl.LOCK_EX):
            raise UsageError(f"{option} {folder}: {_holder_text(fd)} is writing it; wait "
                             "for it to end or stop it first")
        if option == "--out" and any(p.name != LOCK_FILE for p in Path(folder).iterdir()):
            raise UsageError(f"--out {folder} already exists and is not an empty folder "
                             "(another run wrote it meanwhile); choose a new folder")
        since = datetime.now(timezone.utc).isoformat(timespec="seconds")
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": command,
                                  "since": since}).encode(), 0)
        yield
    finally:
        os.close(fd)  # lets go of the lock; the file stays (removing it would race)
