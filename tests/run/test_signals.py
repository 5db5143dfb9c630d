"""Stop signals: RunStopped in the main thread, deferred to the end of a block that
must not be cut in two."""
from __future__ import annotations

import os
import signal

import pytest

from kraftwalk.errors import RunStopped
from kraftwalk.run.signals import deferred, stop_on_signals


def test_a_signal_inside_a_deferred_block_stops_at_its_end():
    done = []
    with pytest.raises(RunStopped) as e:
        with stop_on_signals():
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                done.append("after the signal")
            done.append("after the block")  # never reached
    assert done == ["after the signal"] and e.value.signum == signal.SIGTERM


def test_outside_a_deferred_block_a_signal_stops_at_once():
    with pytest.raises(RunStopped):
        with stop_on_signals():
            os.kill(os.getpid(), signal.SIGHUP)
            for _ in range(1000):  # the handler runs between bytecodes
                pass
            raise AssertionError("not stopped")


@pytest.fixture
def kept_stops():
    """keep_stops() for one test, then the handlers and the module's record as before."""
    from kraftwalk.run import signals

    before = {s: signal.getsignal(s) for s in signals.STOP_SIGNALS}
    signals._kept.clear()
    signals._stopped.clear()  # what the tests before stopped
    signals.keep_stops()
    try:
        yield signals
    finally:
        for s, h in before.items():
            signal.signal(s, h)
        signals._kept.clear()
        signals._stopped.clear()


def test_a_signal_before_any_command_is_kept_and_stops_the_next_one(kept_stops):
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):  # the handler runs between bytecodes: it keeps, never raises
        pass
    assert kept_stops.kept_after() == signal.SIGINT
    ran = []
    with pytest.raises(RunStopped) as e:
        with stop_on_signals():
            ran.append("the command")
    assert e.value.signum == signal.SIGINT and ran == []
    assert kept_stops.kept_after() is None  # it stopped the command: nothing left to say


def test_a_signal_after_the_command_is_kept_for_the_end(kept_stops):
    with stop_on_signals():
        pass
    assert kept_stops.kept_after() is None
    os.kill(os.getpid(), signal.SIGTERM)
    for _ in range(1000):
        pass
    assert kept_stops.kept_after() == signal.SIGTERM


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the drop
def test_a_swallowed_stop_is_raised_again_at_the_next_check():
    """The handler's RunStopped can be dropped where Python drops exceptions (a weakref
    callback, a __del__: the import system's module-lock callback did this): the stop is
    raised again at the next phase boundary, and never inside its own handling."""
    import weakref

    class Thing:
        pass

    with pytest.raises(RunStopped) as e:
        with stop_on_signals():
            thing = Thing()

            def swallowing_callback(_):
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(1000):  # the handler raises here, inside the callback
                    pass

            ref = weakref.ref(thing, swallowing_callback)
            del thing  # the callback runs; Python prints and drops its RunStopped
            assert ref() is None
            try:
                with deferred():  # a deferred block's end is a check
                    pass
            except RunStopped as again:
                with deferred():  # handling it: no second raise inside its handler
                    pass
                raise again
    assert e.value.signum == signal.SIGTERM
