"""Stopping on a signal: SIGTERM and SIGHUP (what timeout, systemd, docker stop, batch
schedulers and CI cancellation send) stop a command as Ctrl-C does, by raising
:class:`~kraftwalk.errors.RunStopped` in the main thread, so the same clean-up runs
(finished work saved, workers stopped) and the exit code is 128 + the signal."""
from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager

from kraftwalk.errors import RunStopped

STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, n))


_deferring = 0  # depth of deferred() blocks in the main thread
_depth = 0  # depth of stop_on_signals() blocks
_pending: list[int] = []  # a stop signal that arrived inside a deferred() block
_kept: list[int] = []  # a stop signal that arrived while no command ran
_stopped: list[int] = []  # the signal this command was stopped by


def keep_stops() -> None:
    """From the CLI's first line: a stop signal that comes while no command runs (the
    imports, option parsing, the interpreter's exit) is kept, not raised wherever the
    process happens to be: a KeyboardInterrupt there printed a traceback from an import,
    or was swallowed by a library and the run went on. :func:`stop_on_signals` raises a
    kept signal as it begins; :func:`kept_after` tells the CLI of one that came after."""
    def keep(signum, frame):
        if not _kept:
            _kept.append(signum)

    for s in STOP_SIGNALS:
        signal.signal(s, keep)


def kept_after() -> int | None:
    """A stop signal kept after the command ended, unless the command was stopped."""
    return _kept[0] if _kept and not _stopped else None


def _unheard() -> int | None:
    """The stop signal whose RunStopped nobody is handling: the handler raises in
    whatever Python code runs, and there it can be swallowed (an exception in a weakref
    callback or a __del__ is printed and dropped: one in the import system's module-lock
    callback let a run go on to its end). Inside an ``except RunStopped`` it is heard."""
    if _stopped and not isinstance(sys.exc_info()[1], RunStopped):
        return _stopped[0]
    return None


def check_stop() -> None:
    """Raise RunStopped again if a stop signal came and its RunStopped was swallowed;
    called between the phases of a job (and at the end of every deferred block)."""
    if _depth and not _deferring and (signum := _unheard()) is not None:
        raise RunStopped(signum)


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
    check_stop()


@contextmanager
def stop_on_signals():
    """Turn the stop signals into RunStopped while the block runs (at the end of a
    :func:`deferred` block if one is running). After the first, the others are ignored
    until the block has finished saving what it had; a stop whose RunStopped was
    swallowed is raised again at the next :func:`check_stop`, and at the block's end."""
    global _depth
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _depth == 0:  # a new command: nothing of an earlier one is left
        _pending.clear()
        _stopped.clear()

    def stop(signum, frame):
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        _stopped.append(signum)
        if _deferring:
            _pending.append(signum)
            return
        raise RunStopped(signum)

    old = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    _depth += 1
    try:
        if _kept:  # it came before the block: the block stops at once
            stop(_kept.pop(), None)
        check_stop()
        yield
        check_stop()
    finally:
        _depth -= 1
        for s, h in old.items():
            signal.signal(s, h)
