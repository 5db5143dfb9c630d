"""One writer per run folder: a second writer (in this process or another, a resume or a
new run on the same --out) is refused with one line naming the holder, and the lock
goes with its holder however it ends (kill -9 included)."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from kraftwalk.errors import UsageError
from kraftwalk.storage.lock import LOCK_FILE, hold, holder, refuse_if_held

HOLD = ("import sys, time; from kraftwalk.storage.lock import hold\n"
        "with hold(sys.argv[1], 'swarm'):\n"
        "    print('held', flush=True); time.sleep(60)\n")


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    with hold(tmp_path, "swarm"):
        assert holder(tmp_path).startswith("pid ")
        with pytest.raises(UsageError, match=r"--out .*: pid \d+ \(kraftwalk swarm, since "):
            with hold(tmp_path, "sweep"):
                pass
        with pytest.raises(UsageError, match="--resume .*is writing it; wait for it"):
            refuse_if_held(tmp_path, "--resume")
    assert holder(tmp_path) is None  # let go at the end of the block
    with hold(tmp_path, "swarm"):  # and taken again
        pass
    assert (tmp_path / LOCK_FILE).is_file()


def test_a_folder_never_locked_has_no_holder(tmp_path):
    assert holder(tmp_path) is None and holder(tmp_path / "missing") is None
    refuse_if_held(tmp_path, "--resume")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_the_lock_goes_with_its_holder_whatever_ends_it(tmp_path, sig):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline() == "held\n"
        assert holder(tmp_path) == holder(tmp_path)  # asking does not take it
        assert f"pid {proc.pid} (kraftwalk swarm" in holder(tmp_path)
    finally:
        proc.send_signal(sig)
        proc.wait(timeout=30)
    deadline = time.monotonic() + 5
    while holder(tmp_path) is not None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    with hold(tmp_path, "swarm"):
        pass


def test_a_new_folder_written_meanwhile_is_refused_under_the_lock(tmp_path):
    """Two runs started together on one --out both find it empty; the one that gets the
    lock second must not write into what the first wrote (it used to, once the first had
    finished within the lock's wait)."""
    folder = tmp_path / "run"
    folder.mkdir()
    with hold(folder, "swarm"):
        (folder / "run.json").write_text("{}")  # the first run's output
    with pytest.raises(UsageError, match="already exists and is not an empty folder"):
        with hold(folder, "swarm"):
            pass
    with hold(folder, "swarm", "--resume"):  # a resume writes into it: allowed
        pass
