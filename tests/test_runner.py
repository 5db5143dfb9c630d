"""End-to-end swarm runs: files, schema, determinism across workers and chunking."""
from __future__ import annotations

import json

import duckdb
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

from kraftwalk.config import RunConfig
from kraftwalk.errors import UsageError
from kraftwalk.runner import run_swarm


def small(tmp_path, name, **kw) -> RunConfig:
    base = dict(walks=600, depth=200, seed=5, workers=1, chunk_walks=256, out=str(tmp_path / name))
    base.update(kw)
    return RunConfig(**base)


def test_run_folder_files_and_summary(tmp_path):
    res = run_swarm(small(tmp_path, "a"))
    out = tmp_path / "a"
    assert sorted(p.name for p in out.iterdir()) == [
        "config.toml", "run.json", "violations.parquet", "walks.parquet"]
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "finished" and meta["walks"] == 600 == res["walks"]
    assert meta["steps"] == res["steps"] > 0
    assert meta["versions"]["numba"] and meta["config"]["seed"] == 5
    walks = pq.read_table(out / "walks.parquet")
    assert walks.num_rows == 600
    assert walks.column("walk").to_pylist() == list(range(600))
    assert sum(walks.column("steps").to_pylist()) == res["steps"]
    assert res["violations"] == 0 and pq.read_table(out / "violations.parquet").num_rows == 0


def test_same_files_for_any_worker_count_and_chunking(tmp_path):
    a = small(tmp_path, "w1", workers=1, chunk_walks=600, mutation="double-vote")
    b = small(tmp_path, "w2", workers=2, chunk_walks=97, mutation="double-vote")
    run_swarm(a)
    run_swarm(b)
    for name in ("walks.parquet", "violations.parquet"):
        ta = pq.read_table(tmp_path / "w1" / name).drop_columns(
            [c for c in ("run_id",) if name.startswith("violations")])
        tb = pq.read_table(tmp_path / "w2" / name).drop_columns(
            [c for c in ("run_id",) if name.startswith("violations")])
        assert ta.equals(tb), name
    assert pq.read_table(tmp_path / "w1" / "violations.parquet").num_rows > 0


def test_mutation_violations_rows_readable_everywhere(tmp_path):
    res = run_swarm(small(tmp_path, "m", mutation="commit-old-epoch"))
    path = tmp_path / "m" / "violations.parquet"
    assert res["violations"] > 0
    n = duckdb.sql(f"select count(*) from '{path}'").fetchall()[0][0]
    assert n == res["violations"] == len(pd.read_parquet(path)) == pl.read_parquet(path).height
    df = pd.read_parquet(path)
    assert set(df["invariant"]) <= set(res["violations_by_invariant"])
    assert {"walk", "seed", "step", "node_a", "epoch", "offset", "w_deliver", "mutation",
            "voters"} <= set(df.columns)
    assert (df["mutation"] == "commit-old-epoch").all()
    walks = pd.read_parquet(tmp_path / "m" / "walks.parquet")
    assert (walks["violation"].notna()).sum() == res["violations"]


def test_histogram_walk_stats(tmp_path):
    run_swarm(small(tmp_path, "h", walk_stats="histogram"))
    t = pd.read_parquet(tmp_path / "h" / "walks_histogram.parquet")
    steps = t[t["stat"] == "steps"]
    assert steps["count"].sum() == 600


def test_config_toml_reruns_the_same_walks(tmp_path):
    from kraftwalk.config import make_config

    run_swarm(small(tmp_path, "x"))
    again = make_config(str(tmp_path / "x" / "config.toml"), out=str(tmp_path / "y"))
    run_swarm(again)
    assert pq.read_table(tmp_path / "x" / "walks.parquet").equals(
        pq.read_table(tmp_path / "y" / "walks.parquet"))


def test_refuses_a_non_empty_run_folder(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x")
    with pytest.raises(UsageError, match="not an empty folder"):
        run_swarm(small(tmp_path, "full"))


def test_duration_mode_stops_and_numbers_walks_from_zero(tmp_path):
    res = run_swarm(RunConfig(duration=0.5, depth=100, workers=1, chunk_walks=64,
                              out=str(tmp_path / "d")))
    walks = pq.read_table(tmp_path / "d" / "walks.parquet").column("walk").to_pylist()
    assert walks == list(range(res["walks"])) and res["walks"] >= 64


def test_dask_backend_gives_the_same_walks(tmp_path):
    pytest.importorskip("dask.distributed")
    run_swarm(small(tmp_path, "loky", walks=300))
    run_swarm(small(tmp_path, "dask", walks=300, backend="dask", workers=2))
    assert pq.read_table(tmp_path / "loky" / "walks.parquet").equals(
        pq.read_table(tmp_path / "dask" / "walks.parquet"))


def test_walks_and_duration_stop_at_whichever_comes_first(tmp_path):
    res = run_swarm(RunConfig(walks=10**9, duration=0.5, depth=100, workers=1, chunk_walks=64,
                              out=str(tmp_path / "both")))
    assert 64 <= res["walks"] < 10**9
