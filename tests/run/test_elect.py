"""``kraftwalk elect``: per-walk Parquet, summary, plot and config; the same walks for any
worker count and chunking; bad values rejected before anything is written; a walk of
the folder replays with its times."""
from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import time

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.run.elect import run_cell, summarize
from kraftwalk.elect_config import ElectConfig, make_elect_config
from kraftwalk.kernel_inputs import timing_params

runner = CliRunner()
ARGS = ["elect", "--voters", "3", "--pre-vote", "on", "--walks", "24", "--workers", "1",
        "--seed", "7"]


def invoke(args):
    return runner.invoke(app, args, env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def elect_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("elect") / "run"
    r = invoke([*ARGS, "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out, r


def test_elect_writes_walks_summary_plot_and_config(elect_dir):
    out, r = elect_dir
    assert "elect p50 ms" in r.stdout and "split votes" in r.stdout
    for name in ("summary.md", "summary.parquet", "violations.parquet", "elect-cdf.png",
                 "config.toml", "run.json"):
        assert (out / name).is_file(), name
    con = duckdb.connect()
    n, measured, median = con.execute(
        f"select count(*), count(elect_us), median(elect_us) from "
        f"read_parquet('{out}/walks/*.parquet') where voters = 3 and pre_vote").fetchone()
    assert n == 24 and measured == 24
    bounds = con.execute(f"select distinct bound_hit from read_parquet('{out}/walks/*.parquet')")
    assert bounds.fetchall() == [("none",)]  # a leader crash reaches none of the kernel's bounds
    assert 2_000_000 <= median < 10_000_000  # Kafka's 2 s fetch timeout comes first
    assert pq.read_table(out / "violations.parquet").num_rows == 0


def test_elect_config_toml_repeats_the_run(elect_dir):
    out, _ = elect_dir
    again = make_elect_config(out / "config.toml")  # its [timing] spells out every value
    assert dataclasses.replace(again, timing={}) == make_elect_config(
        None, voters=(3,), pre_vote=(True,), walks=24, workers=1, seed=7)
    assert np.array_equal(timing_params(again), timing_params(ElectConfig(voters=(3,))))


def test_same_walks_for_any_worker_count_and_chunking():
    cfg = ElectConfig(voters=(3,), pre_vote=(True,), walks=30, seed=11, chunk_walks=30)
    one = run_cell(cfg, 3, True, 1, None)
    two = run_cell(dataclasses.replace(cfg, chunk_walks=7), 3, True, 2, None)
    assert one.table.equals(two.table)
    s = summarize([one])[0]
    assert s["walks"] == 30 and s["elect_p50_ms"] <= s["elect_p99_ms"] <= s["elect_max_ms"]
    # the summary's millisecond histogram agrees with the rows it counts
    elect_ms = np.sort(one.table.column("elect_us").to_numpy() // 1000)
    assert s["elect_max_ms"] == elect_ms[-1] and s["elect_p50_ms"] == elect_ms[14]


def test_histogram_walk_stats_give_the_same_summary(tmp_path):
    out = tmp_path / "hist"
    r = invoke([*ARGS, "--walk-stats", "histogram", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert not (out / "walks").exists()
    con = duckdb.connect()
    walks, = con.execute(f"select sum(count) from read_parquet('{out}/walks_histogram/*.parquet')"
                         " where stat = 'elect_us'").fetchone()
    assert walks == 24
    rows = make_elect_config(None, voters=(3,), pre_vote=(True,), walks=24, workers=1, seed=7)
    expected = summarize([run_cell(rows, 3, True, 1, None)])
    assert pq.read_table(out / "summary.parquet").to_pylist() == expected


def test_a_walk_of_an_elect_folder_replays_with_times(elect_dir):
    out, _ = elect_dir
    r = invoke(["replay", str(out), "--walk", "2"])
    assert r.exit_code == 0, r.output
    assert "timed: leader-crash, profile kafka" in r.stdout
    assert " ms  " in r.stdout and "no violation" in r.stdout


@pytest.mark.parametrize("args, fragment", [
    (["--voters", "12"], "--voters 12"),
    (["--pre-vote", "maybe"], "--pre-vote 'maybe'"),
    (["--scenario", "meteor"], "--scenario 'meteor'"),
    (["--profile", "fast"], "--profile 'fast'"),
    (["--timing", "election_timeout=5"], "unknown timing parameter 'election_timeout'"),
    (["--timing", "loss=2"], "loss='2'"),
    (["--timing", "latency=gaussian"], "latency='gaussian'"),
    (["--timing", "latency_a_ms=9", "--timing", "latency_b_ms=1"], "latency_b_ms"),
    (["--timing", "fetch_timeout_ms"], "must be NAME=VALUE"),
    (["--walks", "0"], "--walks 0"),
    (["--mutation", "typo"], "--mutation 'typo'"),
    (["--walk-stats", "csv"], "--walk-stats 'csv'"),
])
def test_bad_values_are_one_line_exit_2_and_write_nothing(tmp_path, args, fragment):
    out = tmp_path / "never"
    r = invoke(["elect", *args, "--out", str(out)])
    assert r.exit_code == 2, r.output
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("kraftwalk: error: "), r.stderr
    assert fragment in lines[0], lines[0]
    assert not out.exists()


def test_bad_config_file_and_used_folder(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("voters = [3, 5\n")
    r = invoke(["elect", "--config", str(bad), "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "invalid TOML" in r.stderr
    bad.write_text("timing = 5\n")
    r = invoke(["elect", "--config", str(bad), "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "must be a [timing] table" in r.stderr
    bad.write_text("colour = 'red'\n")
    r = invoke(["elect", "--config", str(bad), "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "unknown key 'colour'" in r.stderr
    used = tmp_path / "used"
    used.mkdir()
    (used / "file").write_text("x")
    r = invoke([*ARGS, "--out", str(used)])
    assert r.exit_code == 2 and "already exists" in r.stderr
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_elect_keeps_its_finished_cells(tmp_path, sig):
    """A real process, killed once its first cell is saved: that cell's walks stay
    readable and equal to an uninterrupted run's; SIGTERM also leaves a summary."""
    out = tmp_path / "run"
    args = ["--voters", "3", "--voters", "5", "--voters", "7", "--pre-vote", "on",
            "--walks", "3000", "--workers", "1", "--seed", "5", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "kraftwalk.cli", "elect", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while not list((out / "walks").glob("kafka-4.3-v3-*.parquet")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    proc.send_signal(sig)
    proc.wait(timeout=120)
    assert proc.returncode == (-9 if sig == signal.SIGKILL else 128 + sig)
    saved = duckdb.connect().execute(
        f"select count(*), count(distinct walk) from read_parquet('{out}/walks/*.parquet') "
        "where voters = 3").fetchone()
    assert saved == (3000, 3000)
    first = pq.read_table(next((out / "walks").glob("kafka-4.3-v3-*.parquet")))
    cfg = ElectConfig(voters=(3,), pre_vote=(True,), walks=3000, seed=5, workers=1)
    assert first.equals(run_cell(cfg, 3, True, 1, None).table)
    if sig == signal.SIGTERM:
        assert "stopped by" in json.loads((out / "run.json").read_text())["status"]
        assert (out / "summary.md").is_file()


def test_releases_that_differ_only_in_timing_share_one_compiled_variant():
    """3.9 (no pre-vote, no KAFKA-17642) is a variant of its own; 4.0 to 4.3 differ only
    in timing rules, run-time values, so they share one."""
    from kraftwalk.run.precompile import elect_variants as variants

    cfg = ElectConfig(kafka=("3.9", "4.0", "4.0.1", "4.1", "4.3"), voters=(3, 5))
    assert len(cfg.cells()) == 10 and len(variants(cfg)) == 2
    assert len(variants(ElectConfig(kafka=("4.1", "4.3"), pre_vote=(False, True)))) == 2
