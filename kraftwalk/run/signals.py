"""Stopping on a signal: SIGTERM and SIGHUP (what timeout, systemd, docker stop, batch
schedulers and CI cancellation send) stop a command as Ctrl-C does, by raising
:class:`~kraftwalk.errors.RunStopped` in the main thread, so the same clean-up runs
(finished work saved, workers stopped) and the exit code is 128 + the signal."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

from kraftwalk.errors import RunStopped

STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, n))


_deferring = 0  # depth of deferred() blocks in the main thread
_pending: list[int] = []  # a stop signal that arrived inside one


@contextmanager
def deferred():
    """A block a stop signal does not cut in two: one that arrives inside it raises
    RunStopped when the block ends (bookkeeping that must be all done or not at all)."""
    global _deferring
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
    if _deferring == 0 and _pending:
        raise RunStopped(_pending.pop())


@contextmanager
def stop_on_signals():
    """Turn the stop signals into RunStopped while the block runs (at the end of a
    :func:`deferred` block if one is running). After the first, the others are ignored
    until the block has finished saving what it had."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _pending.clear()

    def stop(signum, frame):
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        if _deferring:
            _pending.append(signum)
            return
        raise RunStopped(signum)

    old = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
