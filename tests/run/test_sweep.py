"""kraftwalk sweep: each cell is the swarm run of its config, all cells are one
hive-partitioned dataset that DuckDB, pandas and polars read as one table, the
per-cell summary adds up, and a sweep killed at random moments (kill -9 included)
resumes to the same files as a sweep never stopped."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
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
from kraftwalk.run.sweep import SUMMARY, SWEEP_JSON, run_sweep
from kraftwalk.storage.provenance import made_by
from kraftwalk.sweep_spec import parse_sweep

SWEEP = {"command": "swarm",
         "swarm": {"walks": 3000, "depth": 200, "seed": 5, "workers": 1,
                   "mutation": "double-vote", "chunk_walks": 512},
         "grid": {"voters": [3, 5], "pre_vote": [True, False]}}
CELL_COLUMNS = ["walk", "steps", "elections", "committed", "violation"]


def write_sweep(path: Path, data: dict) -> Path:
    from kraftwalk.config import _toml_value

    lines = [f"command = {_toml_value(data['command'])}", "[swarm]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in data["swarm"].items()]
    lines += ["[grid]"] + [f"{k} = {_toml_value(v)}" for k, v in data["grid"].items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "s"
    res = run_sweep(parse_sweep(SWEEP, "s.toml"), out)
    return out, res


def test_each_cell_is_the_swarm_run_of_its_config(swept, tmp_path):
    out, res = swept
    assert res["status"] == "finished" and res["cells_finished"] == res["cells"] == 4
    alone = tmp_path / "alone"
    run_swarm(RunConfig(voters=5, pre_vote=False, **SWEEP["swarm"], out=str(alone)))
    cell = out / "cells" / "voters=5" / "pre_vote=false"
    assert rundir.read_dataset(cell, rundir.WALKS).equals(rundir.read_dataset(alone, rundir.WALKS))
    v_cell = rundir.read_dataset(cell, rundir.VIOLATIONS).drop_columns(["run_id"])
    v_alone = rundir.read_dataset(alone, rundir.VIOLATIONS).drop_columns(
        ["run_id", "voters", "pre_vote"])  # the partition's folder names them in a sweep
    assert v_cell.num_rows > 0 and v_cell.equals(v_alone)
    assert pq.read_table(cell / rundir.COVERAGE_FILE).equals(
        pq.read_table(alone / rundir.COVERAGE_FILE))


def test_one_hive_partitioned_dataset_for_every_reader(swept):
    out, res = swept
    total = res["walks"]
    assert total == 4 * 3000
    walks = f"{out}/walks/**/*.parquet"
    rows = duckdb.sql(f"select voters, pre_vote, count(*) from '{walks}' "
                      "group by all order by all").fetchall()
    assert [(int(v), str(p).lower(), n) for v, p, n in rows] == [
        (3, "false", 3000), (3, "true", 3000), (5, "false", 3000), (5, "true", 3000)]
    df = pd.read_parquet(out / "walks")
    assert len(df) == total and {"voters", "pre_vote"} <= set(df.columns)
    assert pl.read_parquet(walks, hive_partitioning=True).height == total
    viol = pd.read_parquet(out / "violations")
    assert len(viol) == res["violations"] > 0
    assert set(viol["voters"].astype(int)) == {3, 5}
    cov = duckdb.sql(f"select count(*) from '{out}/coverage/**/*.parquet' "
                     "where kind = 'sometimes'").fetchall()[0][0]
    assert cov > 0


def test_summary_has_a_row_per_cell_that_adds_up(swept):
    out, res = swept
    rows = pq.read_table(out / SUMMARY).to_pylist()
    assert [(r["voters"], r["pre_vote"]) for r in rows] == [
        (3, True), (3, False), (5, True), (5, False)]
    assert sum(r["walks"] for r in rows) == res["walks"]
    assert sum(r["violations"] for r in rows) == res["violations"]
    for r in rows:
        meta = json.loads((out / "cells" / r["partition"] / rundir.RUN_JSON).read_text())
        assert r["steps"] == meta["steps"] and r["status"] == "finished"
        assert r["violations_VoteUniqueness"] + r["violations_ElectionSafety"] <= r["violations"]
        assert r["reached_LeaderElected"] == meta["reached"]["LeaderElected"]
        walks = rundir.read_dataset(out / "cells" / r["partition"], rundir.WALKS)
        assert r["mean_elections"] == pytest.approx(pc.mean(walks.column("elections")).as_py())
    md = (out / "summary.md").read_text()
    assert md.count("\n") == 2 + 4 + 2 and "| voters | pre_vote |" in md
    assert md.rstrip().endswith(f"Made by {made_by()}.")


def test_the_cli_runs_a_sweep_file_and_refuses_bad_input(tmp_path):
    f = write_sweep(tmp_path / "s.toml", {**SWEEP, "swarm": {**SWEEP["swarm"], "walks": 200},
                                          "grid": {"observers": [0, 2]}})
    cmd = [sys.executable, "-m", "kraftwalk.cli", "sweep"]
    r = subprocess.run([*cmd, str(f), "--out", str(tmp_path / "out")], capture_output=True,
                       text=True)
    assert r.returncode == 12, r.stderr  # its cells found the double-vote violations
    assert "2/2 cells finished, 400 walks" in r.stdout
    assert "cell 2/2 observers=2" in r.stderr
    for args, message in [
        ([str(f), "--out", str(tmp_path / "out")], "already exists and is not an empty folder"),
        ([str(tmp_path / "nope.toml")], "cannot read sweep file"),
        ([], "give the sweep file"),
        ([str(f), "--walks", "0"], "--walks"),
        (["--resume", str(tmp_path / "out"), str(f)], "leave out the SWEEP_FILE"),
        (["--resume", str(tmp_path / "out"), "--seed", "3"], "--seed would change its walks"),
        (["--resume", str(tmp_path)], "not a sweep folder"),
        ([str(f), "--out", str(f)], "--out"),
    ]:
        r = subprocess.run([*cmd, *args], capture_output=True, text=True)
        assert r.returncode == 2, (args, r.stderr)
        assert message in r.stderr and r.stderr.count("\n") == 1, (args, r.stderr)
        assert "Traceback" not in r.stderr


def _parts(out: Path) -> int:
    return sum(1 for _ in (out / "walks").rglob("part-*.parquet"))


def test_a_killed_sweep_resumes_to_the_uninterrupted_one(tmp_path):
    """kill -9 twice and SIGTERM once at random moments, each followed by --resume: the
    cells' walks, violations, coverage and the summary are those of a sweep never
    stopped."""
    data = {"command": "swarm",
            "swarm": {"walks": 12000, "depth": 300, "seed": 9, "mutation": "double-vote",
                      "chunk_walks": 64, "flush_seconds": 0.0},
            "grid": {"voters": [3, 5], "pre_vote": [True, False]}}
    ref = tmp_path / "ref"
    run_sweep(parse_sweep({**data, "swarm": {**data["swarm"], "workers": 1,
                                             "chunk_walks": 2048}}, "ref"), ref)
    f = write_sweep(tmp_path / "s.toml", data)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "kraftwalk.cli", "sweep"]
    proc = subprocess.Popen([*cmd, str(f), "--out", str(out), "--workers", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rng = random.Random(3)
    stopped = 0
    for sig in (signal.SIGKILL, signal.SIGKILL, signal.SIGTERM):
        seen = _parts(out)
        deadline = time.monotonic() + 120
        while _parts(out) <= seen + 2 and proc.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(rng.uniform(0.0, 0.6))
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        if proc.returncode != 12:  # 12: it finished (and found the double-vote violations)
            stopped += 1
        if sig == signal.SIGTERM and proc.returncode != 12:
            assert proc.returncode == 128 + sig and "kraftwalk sweep --resume" in err, err
            meta = json.loads((out / SWEEP_JSON).read_text())
            assert meta["status"] == "terminated" and meta["stopped_in"]
        proc = subprocess.Popen([*cmd, "--resume", str(out), "--workers", "2"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 12, err
    assert stopped >= 2, "the sweep finished before it could be killed"
    assert json.loads((out / SWEEP_JSON).read_text())["status"] == "finished"
    for cell in (ref / "cells").glob("*/*"):
        mine = out / "cells" / cell.relative_to(ref / "cells")
        assert rundir.read_dataset(mine, rundir.WALKS).equals(
            rundir.read_dataset(cell, rundir.WALKS))
        assert rundir.read_dataset(mine, rundir.VIOLATIONS).drop_columns(["run_id"]).equals(
            rundir.read_dataset(cell, rundir.VIOLATIONS).drop_columns(["run_id"]))
        assert pq.read_table(mine / rundir.COVERAGE_FILE).equals(
            pq.read_table(cell / rundir.COVERAGE_FILE))
    keep = ["voters", "pre_vote", "walks", "steps", "violations", "targets_reached",
            "mean_elections", "mean_committed", "share_disrupted"]
    assert pq.read_table(out / SUMMARY, columns=keep).equals(
        pq.read_table(ref / SUMMARY, columns=keep))


def test_a_sweep_on_dask_connects_once_and_gives_the_same_walks(swept, tmp_path, monkeypatch):
    dd = pytest.importorskip("dask.distributed")
    made = []

    class CountingClient(dd.Client):
        def __init__(self, *a, **k):
            made.append(1)
            super().__init__(*a, **k)

    monkeypatch.setattr(dd, "Client", CountingClient)
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    data = {**SWEEP, "swarm": {**SWEEP["swarm"], "backend": "dask", "workers": 2},
            "grid": {"voters": [3, 5], "pre_vote": [True]}}
    run_sweep(parse_sweep(data, "s"), tmp_path / "d")
    assert len(made) == 1, "one cluster for every cell"
    ref, _ = swept
    for cell in ("voters=3/pre_vote=true", "voters=5/pre_vote=true"):
        assert rundir.read_dataset(tmp_path / "d" / "cells" / cell, rundir.WALKS).equals(
            rundir.read_dataset(ref / "cells" / cell, rundir.WALKS))


def test_histogram_cells_have_the_same_means_as_row_cells(swept, tmp_path):
    data = {**SWEEP, "swarm": {**SWEEP["swarm"], "walk_stats": "histogram"}}
    run_sweep(parse_sweep(data, "s"), tmp_path / "h")
    keep = ["voters", "pre_vote", "walks", "steps", "violations", "mean_elections",
            "mean_committed", "mean_disruptions", "share_disrupted"]
    ref, _ = swept
    got = pq.read_table(tmp_path / "h" / SUMMARY, columns=keep).to_pylist()
    want = pq.read_table(ref / SUMMARY, columns=keep).to_pylist()
    assert len(got) == len(want) == 4
    for g, w in zip(got, want):
        assert {k: pytest.approx(v) for k, v in g.items()} == w
    assert (tmp_path / "h" / "walks_histogram").is_dir() and not (tmp_path / "h" / "walks").exists()


def test_plot_takes_a_cell_and_points_a_sweep_to_its_cells(swept, tmp_path):
    from typer.testing import CliRunner

    from kraftwalk.cli import app

    out, _ = swept
    runner = CliRunner()
    cell = next((out / "cells").glob("*/*"))
    res = runner.invoke(app, ["plot", str(cell), "--out", str(tmp_path / "cell.png")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "cell.png").stat().st_size > 10_000
    res = runner.invoke(app, ["plot", str(out)], env={"COLUMNS": "200"})
    assert res.exit_code == 2 and "is a sweep folder: plot one of its cells" in res.stderr
