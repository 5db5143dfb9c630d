"""Real `kraftwalk swarm` processes killed at random moments (SIGKILL, SIGTERM, SIGINT,
SIGHUP), repeatedly: every saved part stays readable by pyarrow, DuckDB, polars and
pandas, the saved walks are exactly walks 0..K-1 of an uninterrupted run, run.json
says how the run ended, and no worker outlives the run."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from kraftwalk.storage import rundir
from kraftwalk.config import RunConfig
from kraftwalk.run.runner import run_swarm

ReferenceRun = namedtuple("ReferenceRun", "walks violations folder")
ARGS = ["--walks", "100000000", "--depth", "200", "--seed", "11", "--workers", "2",
        "--chunk-walks", "64", "--flush-seconds", "0", "--mutation", "double-vote"]


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def start(out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "kraftwalk.cli", "swarm", *ARGS,
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_for_saved_parts(out: Path, proc: subprocess.Popen, timeout: float = 120) -> None:
    t = time.monotonic() + timeout
    while rundir.walks_saved(out) == 0:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < t, "the run saved nothing in time"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted run of the same walks, long enough for any kill below."""
    out = tmp_path_factory.mktemp("ref") / "run"
    run_swarm(RunConfig(walks=12_000, depth=200, seed=11, workers=1, chunk_walks=2048,
                        mutation="double-vote", out=str(out)))
    return ReferenceRun(rundir.read_dataset(out, rundir.WALKS),
                        rundir.read_dataset(out, rundir.VIOLATIONS), out)


def check_saved(out: Path, reference) -> int:
    """Every reader reads what was saved; it is a prefix of the uninterrupted run."""
    ref_walks, ref_viol, _ = reference
    assert not list((out / rundir.WALKS).glob(".*")) and not list(out.rglob("*.partial"))
    walks = rundir.read_dataset(out, rundir.WALKS)
    k = walks.num_rows
    assert 0 < k <= ref_walks.num_rows, "killed too late for the reference run"
    assert walks.column("walk").to_pylist() == list(range(k))
    assert walks.equals(ref_walks.slice(0, k))
    viol = rundir.read_dataset(out, rundir.VIOLATIONS).drop_columns(["run_id"])
    ref_v = ref_viol.drop_columns(["run_id"])
    assert viol.equals(ref_v.filter(pc.less(ref_v.column("walk"), k)))
    # the readers people use read the dataset folders as they are
    glob = str(out / rundir.WALKS / "*.parquet")
    assert duckdb.sql(f"select count(*) from '{glob}'").fetchall()[0][0] == k
    assert len(pd.read_parquet(out / rundir.WALKS)) == k
    assert pl.read_parquet(glob).height == k
    vglob = str(out / rundir.VIOLATIONS / "*.parquet")
    assert duckdb.sql(f"select count(*) from '{vglob}'").fetchall()[0][0] >= viol.num_rows
    return k


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_killed_runs_keep_every_saved_walk(tmp_path, reference, sig):
    rng = random.Random(sig)
    for attempt in range(2 if sig == signal.SIGHUP else 3):
        out = tmp_path / f"run{attempt}"
        proc = start(out)
        wait_for_saved_parts(out, proc)
        time.sleep(rng.uniform(0.0, 1.0))
        workers = descendants(proc.pid)
        assert workers, "the run has worker processes"
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=60)
        k = check_saved(out, reference)
        meta = json.loads((out / rundir.RUN_JSON).read_text())
        if sig == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
            assert meta["status"] == "running" and meta["walks_saved"] <= k
        else:
            assert proc.returncode == 128 + sig, stderr
            status = {signal.SIGTERM: "terminated", signal.SIGINT: "interrupted",
                      signal.SIGHUP: "hung up"}[sig]
            assert meta["status"] == status and meta["signal"] == signal.Signals(sig).name
            assert meta["walks_saved"] == k == meta["walks"]
            assert f"{k:,} finished walks saved in {out}" in " ".join(stderr.split())
            assert "Traceback" not in stderr
            assert not list(out.glob(rundir.TMP_PREFIX + "*"))
        deadline = time.monotonic() + 20
        while any(alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not [p for p in workers if alive(p)], "worker processes outlived the run"


def test_resume_after_kills_gives_the_uninterrupted_run(tmp_path, reference):
    """kill -9 (twice, at random moments), SIGTERM once, then --resume to the end: the
    same walks, violations and totals as the run that was never stopped."""
    ref_walks, ref_viol, ref_dir = reference
    out = tmp_path / "run"
    args = [a if a != "100000000" else str(ref_walks.num_rows) for a in ARGS]
    rng = random.Random(7)
    cmd = [sys.executable, "-m", "kraftwalk.cli", "swarm"]
    proc = subprocess.Popen([*cmd, *args, "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    for sig in (signal.SIGKILL, signal.SIGKILL, signal.SIGTERM):
        wait_for_saved_parts(out, proc)
        before = rundir.walks_saved(out)
        time.sleep(rng.uniform(0.0, 0.8))
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        assert rundir.walks_saved(out) >= before
        check_saved(out, reference)
        proc = subprocess.Popen([*cmd, "--resume", str(out), "--workers", "2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 12, stderr  # finished, the double-vote violations found
    assert check_saved(out, reference) == ref_walks.num_rows
    meta = json.loads((out / rundir.RUN_JSON).read_text())
    ref_meta = json.loads((ref_dir / rundir.RUN_JSON).read_text())
    assert meta["status"] == "finished" and meta["walks_saved"] == ref_walks.num_rows
    for key in ("walks", "steps", "disabled_attempts", "violations", "violations_by_invariant",
                "bound_hits", "first_violations", "reached"):
        assert meta[key] == ref_meta[key], key
    assert pq.read_table(out / rundir.COVERAGE_FILE).equals(
        pq.read_table(ref_dir / rundir.COVERAGE_FILE))
    # a changed config is refused, a finished run resumes to nothing new
    result = subprocess.run([*cmd, "--resume", str(out), "--voters", "5"], capture_output=True,
                            text=True)
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "--voters 3; 5 would change its walks" in result.stderr


def test_two_resumes_started_together_make_one_writer(tmp_path, reference):
    """Two --resume of one stopped run, started at once: one continues it to the end, the
    other is refused with one line naming the holder (exit 2), and the folder holds the
    uninterrupted run's walks once."""
    ref_walks, _, ref_dir = reference
    out = tmp_path / "run"
    args = [a if a != "100000000" else str(ref_walks.num_rows) for a in ARGS]
    cmd = [sys.executable, "-m", "kraftwalk.cli", "swarm"]
    proc = subprocess.Popen([*cmd, *args, "--out", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for_saved_parts(out, proc)
    proc.kill()
    proc.communicate(timeout=60)
    both = [subprocess.Popen([*cmd, "--resume", str(out), "--workers", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    results = sorted(((p.wait(timeout=300), p.communicate()[1]) for p in both),
                     key=lambda r: r[0])
    assert [code for code, _ in results] == [2, 12], results  # 12: violations found
    lines = [x for x in results[0][1].splitlines() if x.strip()]
    assert len(lines) == 1 and "is writing it" in lines[0], results[0][1]
    assert f"pid {both[0].pid if both[1].returncode == 2 else both[1].pid}" in lines[0]
    assert check_saved(out, reference) == ref_walks.num_rows
    assert pq.read_table(out / rundir.COVERAGE_FILE).equals(
        pq.read_table(ref_dir / rundir.COVERAGE_FILE))


def test_two_runs_started_together_on_one_folder_make_one_writer(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "kraftwalk.cli", "swarm", "--walks", "2000", "--depth", "100",
           "--workers", "1", "--out", str(out)]
    both = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    results = sorted(((p.wait(timeout=300), p.communicate()[1]) for p in both),
                     key=lambda r: r[0])
    assert [code for code, _ in results] == [0, 2], results
    lines = [x for x in results[1][1].splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("kraftwalk: error: --out "), lines
    assert rundir.walks_saved(out) == 2000
