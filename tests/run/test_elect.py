"""``kraftwalk elect``: per-walk Parquet, summary, plot and config; the same walks for any
worker count and chunking; bad values rejected before anything is written; a walk of
the folder replays with its times; a killed run resumed ends with the rows and summary
of one never stopped."""
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
from kraftwalk.run.elect import cell_walks
from kraftwalk.elect_config import ElectConfig, make_elect_config
from kraftwalk.storage import elect_folder as ef
from kraftwalk.storage.elect_stats import Histogram, summarize_cell
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
    for name in ("summary.md", "summary.parquet", "elect-cdf.png", "config.toml", "run.json"):
        assert (out / name).is_file(), name
    con = duckdb.connect()  # one glob; the cell's columns come from the folder names
    n, measured, median = con.execute(
        f"select count(*), count(elect_us), median(elect_us) from "
        f"read_parquet('{out}/walks/**/*.parquet') where voters = 3 and kafka = '4.3' "
        "and pre_vote = 'true'").fetchone()
    assert n == 24 and measured == 24
    bounds = con.execute(f"select distinct bound_hit from read_parquet('{out}/walks/**/*.parquet')")
    assert bounds.fetchall() == [("none",)]  # a leader crash reaches none of the kernel's bounds
    assert 2_000_000 <= median < 10_000_000  # Kafka's 2 s fetch timeout comes first
    assert con.execute(f"select count(*) from read_parquet('{out}/violations/**/*.parquet')"
                       ).fetchone() == (0,)
    run = json.loads((out / "run.json").read_text())
    assert (run["command"], run["kind"], run["status"]) == ("elect", "timed", "complete")
    assert [(c["partition"], c["walks"], c["status"]) for c in run["cells"]] == [
        ("kafka=4.3/voters=3/pre_vote=true", 24, "complete")]
    rows = ef.read_cells(out, "walks")  # the cell's columns typed as elect's tables have them
    assert rows.schema.field("voters").type == "int8" and rows.column("pre_vote").to_pylist() == [True] * 24


def test_elect_config_toml_repeats_the_run(elect_dir):
    out, _ = elect_dir
    again = make_elect_config(out / "config.toml")  # its [timing] spells out every value
    assert dataclasses.replace(again, timing={}) == make_elect_config(
        None, voters=(3,), pre_vote=(True,), walks=24, workers=1, seed=7)
    assert np.array_equal(timing_params(again), timing_params(ElectConfig(voters=(3,))))


def test_same_walks_for_any_worker_count_and_chunking():
    cfg = ElectConfig(voters=(3,), pre_vote=(True,), walks=30, seed=11, chunk_walks=30)
    one = cell_walks(cfg, 3, True, 1)
    two = cell_walks(dataclasses.replace(cfg, chunk_walks=7), 3, True, 2)
    assert one.equals(two)
    s = summarize_cell("4.3", 3, True, Histogram().add_rows(one), 0)
    assert s["walks"] == 30 and s["elect_p50_ms"] <= s["elect_p99_ms"] <= s["elect_max_ms"]
    # the summary's millisecond histogram agrees with the rows it counts
    elect_ms = np.sort(one.column("elect_us").to_numpy() // 1000)
    assert s["elect_max_ms"] == elect_ms[-1] and s["elect_p50_ms"] == elect_ms[14]


def test_histogram_walk_stats_give_the_same_summary(tmp_path, elect_dir):
    out = tmp_path / "hist"
    r = invoke([*ARGS, "--walk-stats", "histogram", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert not (out / "walks").exists()
    con = duckdb.connect()
    walks, = con.execute(f"select sum(count) from read_parquet('{out}/walks_histogram/**/*.parquet')"
                         " where stat = 'elect_us'").fetchone()
    assert walks == 24
    expected = pq.read_table(elect_dir[0] / "summary.parquet").to_pylist()
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


def saved_walks(out, cell="kafka=4.3/voters=3/pre_vote=true") -> int:
    import re

    return sum(int(b) - int(a) for p in (out / "walks" / cell).glob("part-*.parquet")
               for a, b in [re.findall(r"\d{12}", p.name)])


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_elect_resumes_to_the_uninterrupted_rows(tmp_path, sig):
    """A real process, killed in the middle of its first cell once some of its parts
    are saved (--flush-seconds 0: a part per chunk): the saved walks stay readable and
    equal to an uninterrupted run's; ``--resume`` (here on two workers) then ends with
    every row, violation and summary line of a run never stopped."""
    out = tmp_path / "run"
    args = ["--voters", "3", "--voters", "5", "--pre-vote", "on", "--walks", "1500",
            "--scenario", "random-faults", "--mutation", "no-check-quorum",
            "--seed", "5", "--flush-seconds", "0"]
    proc = subprocess.Popen([sys.executable, "-m", "kraftwalk.cli", "elect", *args,
                             "--workers", "1", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while saved_walks(out) < 500 and time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.02)
    proc.send_signal(sig)
    proc.wait(timeout=120)
    assert proc.returncode == (-9 if sig == signal.SIGKILL else 128 + sig)
    assert 500 <= saved_walks(out) < 1500  # stopped midway through the cell
    cfg = ElectConfig(voters=(3,), pre_vote=(True,), walks=1500, seed=5, workers=1,
                      scenario="random-faults", mutation="no-check-quorum", chunk_walks=250)
    whole = cell_walks(cfg, 3, True, 2)
    part = ef.read_cells(out, "walks")
    assert part.equals(whole.slice(0, part.num_rows).select(part.column_names))
    if sig == signal.SIGTERM:
        run = json.loads((out / "run.json").read_text())
        assert run["status"].startswith("stopped by") and (out / "summary.md").is_file()

    r = invoke(["elect", "--resume", str(out), "--workers", "2"])
    assert r.exit_code == 13, r.output  # the mutation's liveness violations, as before
    again = tmp_path / "again"
    r = invoke(["elect", *args, "--workers", "2", "--out", str(again)])
    assert r.exit_code == 13, r.output
    for dataset in ("walks", "violations"):
        assert ef.read_cells(out, dataset).equals(ef.read_cells(again, dataset)), dataset
    assert ef.read_cells(out, "walks").slice(0, 1500).select(whole.column_names).equals(whole)
    assert (pq.read_table(out / "summary.parquet").equals(pq.read_table(again / "summary.parquet")))
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "complete" and run["walks_saved"] == 3000 and "resumed_at" in run


def test_resume_refuses_a_change_to_the_walks(elect_dir, tmp_path):
    out, _ = elect_dir
    r = invoke(["elect", "--resume", str(out), "--voters", "5"])
    assert r.exit_code == 2 and "--voters [3]" in r.stderr, r.output
    r = invoke(["elect", "--resume", str(out), "--timing", "loss=0.1"])
    assert r.exit_code == 2 and "--timing" in r.stderr, r.output
    edited = tmp_path / "edited"
    import shutil

    shutil.copytree(out, edited)
    toml = edited / "config.toml"
    toml.write_text(toml.read_text().replace("election_timeout_ms = 1000.0",
                                             "election_timeout_ms = 700.0"))
    r = invoke(["elect", "--resume", str(edited)])
    assert r.exit_code == 2 and "election_timeout_ms: 1000.0 -> 700.0" in r.stderr, r.output
    r = invoke(["elect", "--resume", str(tmp_path / "nowhere")])
    assert r.exit_code == 2 and "not a kraftwalk elect folder" in r.stderr, r.output


def test_a_finished_run_resumed_runs_nothing_and_says_the_same(elect_dir):
    out, _ = elect_dir
    before = pq.read_table(out / "summary.parquet")
    r = invoke(["elect", "--resume", str(out)])
    assert r.exit_code == 0, r.output
    assert pq.read_table(out / "summary.parquet").equals(before)


def test_releases_that_differ_only_in_timing_share_one_compiled_variant():
    """3.9 (no pre-vote, no KAFKA-17642) is a variant of its own; 4.0 to 4.3 differ only
    in timing rules, run-time values, so they share one."""
    from kraftwalk.run.precompile import elect_variants as variants

    cfg = ElectConfig(kafka=("3.9", "4.0", "4.0.1", "4.1", "4.3"), voters=(3, 5))
    assert len(cfg.cells()) == 10 and len(variants(cfg)) == 2
    assert len(variants(ElectConfig(kafka=("4.1", "4.3"), pre_vote=(False, True)))) == 2
