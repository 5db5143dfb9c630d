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


@contextmanager
def stop_on_signals():
    """Turn the stop signals into RunStopped while the block runs. After the first, the
    others are ignored until the block has finished saving what it had."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        raise RunStopped(signum)

    old = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
