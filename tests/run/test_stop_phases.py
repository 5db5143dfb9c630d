"""Real kraftwalk processes stopped in every phase, not only mid-run: during start-up
(imports, option parsing), while a job precompiles its kernel variants, while the
workers start, between a sweep's cells, and as the summary is printed. The promise is
the same in each: one "stopped by" line, exit 128 + N, no traceback or warning, and no
process left behind (a kill -9 included: every pool kraftwalk starts dies with it)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from kraftwalk.storage import rundir

from test_kill import alive, descendants  # tests/run is on sys.path (no packages)

CLI = [sys.executable, "-m", "kraftwalk.cli"]
HUNT = ["hunt", "--mutation", "double-vote", "--mutation", "commit-old-epoch",
        "--mutation", "no-check-quorum", "--seeds", "2", "--duration", "5", "--workers", "2"]


class Process:
    """A kraftwalk command whose stderr is read as it comes (to see its phase)."""

    def __init__(self, args: list[str]) -> None:
        self.proc = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.err: list[str] = []
        self.reader = threading.Thread(target=lambda: self.err.extend(self.proc.stderr),
                                       daemon=True)
        self.reader.start()
        self.family: set[int] = set()

    def wait_until(self, ready, what: str, timeout: float = 300, every: float = 0.01) -> None:
        """Poll ``ready()`` until it holds; the process must live that long."""
        deadline = time.monotonic() + timeout
        while not ready():
            assert self.proc.poll() is None, "".join(self.err)
            assert time.monotonic() < deadline, f"never {what}: {''.join(self.err)}"
            time.sleep(every)

    def wait_for(self, text: str) -> None:
        def printed() -> bool:
            self.family |= descendants(self.proc.pid)
            return any(text in line for line in self.err)

        self.wait_until(printed, f"printed {text!r}", every=0.02)

    def has_children(self, n: int) -> bool:
        return len(descendants(self.proc.pid)) >= n

    def stop(self, sig: int) -> tuple[int, str]:
        self.family |= descendants(self.proc.pid)
        self.proc.send_signal(sig)
        self.proc.stdout.read()
        code = self.proc.wait(timeout=120)
        self.reader.join(timeout=10)
        return code, "".join(self.err)

    def left_behind(self, within: float = 20) -> list[int]:
        deadline = time.monotonic() + within
        while any(alive(p) for p in self.family) and time.monotonic() < deadline:
            time.sleep(0.2)
        return [p for p in self.family if alive(p)]


def json_field(path, key):
    """``key`` of the JSON file at ``path``, None while it is missing or half-written."""
    try:
        return json.loads(path.read_text())[key]
    except (OSError, ValueError, KeyError):
        return None


def assert_stopped(code: int, err: str, sig: int) -> None:
    assert code == 128 + sig, err
    lines = [x for x in err.splitlines() if "stopped by" in x]
    assert len(lines) == 1 and signal.Signals(sig).name in lines[0], err
    assert "Traceback" not in err and "Warning" not in err, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("after", [0.15, 0.3, 0.6, 1.2])
def test_a_stop_as_the_command_starts(tmp_path, sig, after):
    """Within its imports and option parsing a Ctrl-C printed a traceback from whatever
    module was loading, or a library swallowed it and the run went on."""
    p = Process(["swarm", "--walks", "1000000", "--workers", "2", "--out", str(tmp_path / "r")])
    time.sleep(after)
    code, err = p.stop(sig)
    assert_stopped(code, err, sig)
    assert not p.left_behind()


def test_a_hunt_stopped_while_it_precompiles_says_so(tmp_path):
    p = Process([*HUNT, "--out", str(tmp_path)])
    p.wait_for("compiling 3 kernel variants")
    time.sleep(0.5)
    code, err = p.stop(signal.SIGINT)
    assert_stopped(code, err, signal.SIGINT)
    assert "no hunt had finished, nothing written" in err
    assert not p.left_behind()


def test_kill_9_while_precompiling_leaves_no_process(tmp_path):
    """The precompile pool's workers watch the job from the moment they start."""
    p = Process([*HUNT, "--out", str(tmp_path)])
    p.wait_for("compiling 3 kernel variants")
    # the two workers and loky's resource tracker
    p.wait_until(lambda: p.has_children(3), "started its pool", timeout=60, every=0.05)
    time.sleep(0.5)
    p.stop(signal.SIGKILL)
    assert len(p.family) >= 3
    assert not p.left_behind(), "processes outlived the killed hunt"


@pytest.mark.parametrize("moment", [0.0, 0.3])
def test_kill_9_while_the_workers_start_leaves_no_process(tmp_path, moment):
    out = tmp_path / "r"
    p = Process(["swarm", "--walks", "1000000", "--workers", "2", "--out", str(out)])
    p.wait_until(lambda: p.has_children(1), "started a worker", timeout=120)
    time.sleep(moment)
    p.stop(signal.SIGKILL)
    assert not p.left_behind(), "processes outlived the killed run"


def test_a_sweep_stopped_between_cells_says_so_and_resumes(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('command = "swarm"\n[swarm]\nwalks = 3000\ndepth = 100\nworkers = 2\n'
                    "chunk_walks = 512\n[grid]\nvoters = [3, 5, 7]\n")
    out = tmp_path / "s"
    p = Process(["sweep", str(spec), "--out", str(out)])
    # the moment the first cell is recorded as finished
    p.wait_until(lambda: (json_field(out / "sweep.json", "cells_finished") or 0) >= 1,
                 "finished a cell", every=0.005)
    code, err = p.stop(signal.SIGTERM)
    if code == 0:
        pytest.skip("the sweep ended before the signal came")  # a very fast machine
    assert_stopped(code, err, signal.SIGTERM)
    assert "kraftwalk sweep --resume" in err
    assert not p.left_behind()
    done = subprocess.run([*CLI, "sweep", "--resume", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    meta = json.loads((out / "sweep.json").read_text())
    assert meta["status"] == "finished" and meta["cells_finished"] == 3


def test_a_stop_as_the_summary_is_printed(tmp_path):
    """Signalled the moment run.json says finished: the process is printing its summary
    or ending; the stop line comes alone, without loky's resource-tracker warnings."""
    seen = set()
    for attempt in range(3):
        out = tmp_path / f"r{attempt}"
        p = Process(["swarm", "--walks", "3000", "--depth", "100", "--workers", "2",
                     "--out", str(out)])
        p.wait_until(lambda: json_field(out / rundir.RUN_JSON, "status") == "finished",
                     "finished", every=0.002)
        code, err = p.stop(signal.SIGTERM)
        seen.add(code)
        assert "Traceback" not in err and "Warning" not in err, err
        if code != 0:  # 0: it had ended before the signal came
            assert_stopped(code, err, signal.SIGTERM)
        assert not p.left_behind()
        assert rundir.walks_saved(out) == 3000
    assert seen <= {0, 128 + signal.SIGTERM}


ELECT = ["elect", "--kafka", "3.9", "--kafka", "4.3", "--voters", "3", "--walks", "4000",
         "--workers", "2"]


def _in_elects_precompile(p: Process) -> None:
    """Until the precompile pool's workers run (two releases: two kernel variants side
    by side) and no cell has finished."""
    p.wait_until(lambda: p.has_children(2), "started its precompile pool", timeout=120)
    assert not any("voters, pre-vote" in line for line in p.err)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_elect_stopped_while_it_compiles(tmp_path, sig):
    p = Process([*ELECT, "--out", str(tmp_path / "e")])
    _in_elects_precompile(p)
    code, err = p.stop(sig)
    if sig == signal.SIGKILL:
        assert code == -signal.SIGKILL
    else:
        assert_stopped(code, err, sig)
    assert not p.left_behind(), "processes outlived elect"
