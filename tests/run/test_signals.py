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
