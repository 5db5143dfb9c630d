"""kraftwalk sweep with command = "elect": a grid over timing parameters (by name),
pre-vote and cluster size into one hive-partitioned dataset DuckDB reads with one glob;
each cell is the elect run of its config; the report draws percentiles against the
swept parameter; a sweep killed with SIGKILL and SIGTERM resumes to the rows of one
never stopped; bad sweep files are one line and exit 2."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.elect_config import ElectConfig
from kraftwalk.run.elect import cell_walks
from kraftwalk.storage import elect_folder as ef
from kraftwalk.storage.provenance import made_by

runner = CliRunner()
SWEEP = """command = "elect"
[elect]
walks = {walks}
voters = [3]
seed = 4
scenario = "random-faults"
mutation = "no-check-quorum"
flush-seconds = 0
[elect.timing]
latency_b_ms = 10
[grid]
election_timeout_ms = [500, 1500]
pre_vote = [true, false]
"""
CELLS = ("election_timeout_ms=500/pre_vote=true", "election_timeout_ms=500/pre_vote=false",
         "election_timeout_ms=1500/pre_vote=true", "election_timeout_ms=1500/pre_vote=false")


def sweep_file(tmp_path: Path, walks: int) -> Path:
    f = tmp_path / "sweep.toml"
    f.write_text(SWEEP.format(walks=walks))
    return f


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    base = tmp_path_factory.mktemp("esweep")
    out = base / "s"
    r = runner.invoke(app, ["sweep", str(sweep_file(base, 80)), "--out", str(out),
                            "--workers", "1"], env={"COLUMNS": "200"})
    assert r.exit_code == 13, r.output  # the mutation's liveness violations
    return out, r


def test_one_dataset_with_the_swept_parameters_as_columns(swept):
    out, r = swept
    assert "| election_timeout_ms | pre_vote | Kafka | voters | walks | elect p50 ms |" in r.output
    rows = duckdb.sql(
        f"select election_timeout_ms, pre_vote, voters, kafka, count(*) as n from "
        f"read_parquet('{out}/walks/**/*.parquet') group by all order by all").fetchall()
    assert rows == [(500, "false", 3, "4.3", 80), (500, "true", 3, "4.3", 80),
                    (1500, "false", 3, "4.3", 80), (1500, "true", 3, "4.3", 80)]
    summary = pq.read_table(out / "summary.parquet").to_pylist()
    assert [r["partition"] for r in summary] == list(CELLS)
    assert all(r["walks"] == 80 and r["status"] == "complete" for r in summary)
    assert json.loads((out / "sweep.json").read_text())["cells_finished"] == 4


def test_each_cell_is_the_elect_run_of_its_config(swept):
    out, _ = swept
    cfg = ElectConfig(voters=(3,), pre_vote=(False,), walks=80, seed=4,
                      scenario="random-faults", mutation="no-check-quorum",
                      timing={"latency_b_ms": 10, "election_timeout_ms": 1500})
    cell = out / "cells" / "election_timeout_ms=1500" / "pre_vote=false"
    mine = ef.read_cells(cell, "walks")
    assert mine.equals(cell_walks(cfg.for_release("4.3"), 3, False, 1)
                       .select(mine.column_names))
    # a cell's folder is an elect folder: replay picks its first violation
    r = runner.invoke(app, ["replay", str(cell)], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "VIOLATION CutOffLeaderResigns" in r.output, r.output


def test_the_report_draws_percentiles_against_the_swept_parameter(swept, tmp_path):
    out, _ = swept
    r = runner.invoke(app, ["report", str(out), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert md.startswith(f"# kraftwalk report: elect sweep {out.name}")
    assert "## Percentiles against election_timeout_ms" in md
    assert "CutOffLeaderResigns" in md and "kraftwalk replay" in md
    assert md.rstrip().endswith(f"Walks made by {made_by()}.")
    for name in ("elect-percentiles.png", "split-downtime.png", "cdf-0.png", "cdf-3.png"):
        assert (tmp_path / "rep" / name).stat().st_size > 10_000, name


def _saved(out: Path) -> int:
    return sum(1 for _ in (out / "walks").rglob("part-*.parquet"))


def test_a_killed_elect_sweep_resumes_to_the_uninterrupted_one(swept, tmp_path):
    """SIGKILL then SIGTERM in the middle of the sweep, each followed by --resume (on
    two workers): every cell's rows and violations, and the summary, are those of the
    sweep run straight through."""
    ref, _ = swept
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "kraftwalk.cli", "sweep"]
    proc = subprocess.Popen([*cmd, str(sweep_file(tmp_path, 80)), "--out", str(out),
                             "--workers", "1", "--chunk-walks", "8"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stopped = 0
    for sig, parts in ((signal.SIGKILL, 4), (signal.SIGTERM, 14)):
        deadline = time.monotonic() + 300
        while _saved(out) < parts and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        if proc.returncode != 13:
            stopped += 1
            assert proc.returncode == (-9 if sig == signal.SIGKILL else 128 + sig), err
        proc = subprocess.Popen([*cmd, "--resume", str(out), "--workers", "2"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 13, err
    assert stopped == 2, "the sweep finished before it could be stopped"
    for part in CELLS:
        for dataset in ("walks", "violations"):
            assert ef.read_cells(out / "cells" / part, dataset).equals(
                ef.read_cells(ref / "cells" / part, dataset)), (part, dataset)
    keep = ["partition", "walks", "elect_p50_ms", "elect_p99_ms", "split_vote_pct",
            "violations"]
    assert pq.read_table(out / "summary.parquet", columns=keep).equals(
        pq.read_table(ref / "summary.parquet", columns=keep))


@pytest.mark.parametrize("grid, says", [
    ("election_timeout = [1, 2]", "unknown key 'election_timeout'"),
    ("workers = [1, 2]", "a grid cannot vary workers"),
    ("election_timeout_ms = [0.5, 500]", "election_timeout_ms=0.5"),
    ("scenario = ['meteor']", "--scenario 'meteor'"),
])
def test_bad_elect_sweep_files_are_one_line(tmp_path, grid, says):
    f = tmp_path / "bad.toml"
    f.write_text(f'command = "elect"\n[elect]\nwalks = 10\n[grid]\n{grid}\n')
    r = runner.invoke(app, ["sweep", str(f), "--out", str(tmp_path / "never")])
    assert r.exit_code == 2, r.output
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and says in lines[0], r.stderr
    assert not (tmp_path / "never").exists()


def test_an_elect_sweeps_budget_is_walks(tmp_path):
    r = runner.invoke(app, ["sweep", str(sweep_file(tmp_path, 10)), "--duration", "5",
                            "--out", str(tmp_path / "never")])
    assert r.exit_code == 2 and "an elect sweep's is --walks" in r.stderr, r.output


def test_progress_counts_each_cells_violations(tmp_path):
    """The progress display gets each cell's walks and violations as they come (the
    sweep's bar showed 0 violations for cells full of them)."""
    from kraftwalk.run.elect_sweep import run_elect_sweep
    from kraftwalk.sweep_spec import load_sweep

    last: dict[int, tuple] = {}  # each cell's last progress: (walks, violations)
    cell = [0]
    run_elect_sweep(load_sweep(sweep_file(tmp_path, 20)), tmp_path / "s", False,
                    on_cell=lambda i, n, c, status: cell.__setitem__(0, i),
                    progress=lambda w, s, v: last.__setitem__(cell[0], (w, v)))
    assert len(last) == len(CELLS) and all(0 <= v <= w == 20 for w, v in last.values())
    total = sum(pq.read_metadata(f).num_rows
                for f in (tmp_path / "s").rglob("violations/**/*.parquet"))
    assert total > 0 and sum(v for _, v in last.values()) == total
