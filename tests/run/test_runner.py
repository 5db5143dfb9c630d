"""End-to-end swarm runs: files, schema, determinism across workers and chunking."""
from __future__ import annotations

import json

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

from kraftwalk.storage import rundir
from kraftwalk.config import RunConfig
from kraftwalk.errors import UsageError
from kraftwalk.run.runner import run_swarm


def read(run, dataset="walks"):
    return rundir.read_dataset(run, dataset)


def small(tmp_path, name, **kw) -> RunConfig:
    base = dict(walks=600, depth=200, seed=5, workers=1, chunk_walks=256, out=str(tmp_path / name))
    base.update(kw)
    return RunConfig(**base)


def test_run_folder_files_and_summary(tmp_path):
    res = run_swarm(small(tmp_path, "a"))
    out = tmp_path / "a"
    assert sorted(p.name for p in out.iterdir()) == [
        ".lock", "config.toml", "coverage", "coverage.parquet", "run.json", "violations",
        "walks"]  # .lock: kraftwalk.storage.lock
    meta = json.loads((out / "run.json").read_text())
    assert meta["status"] == "finished" and meta["walks"] == 600 == res["walks"]
    assert meta["command"] == "swarm"  # what made the folder (an elect's says elect)
    assert meta["walks_saved"] == 600 and meta["steps"] == res["steps"] > 0
    assert meta["versions"]["numba"] and meta["config"]["seed"] == 5
    walks = read(out)
    assert walks.num_rows == 600
    assert walks.column("walk").to_pylist() == list(range(600))
    assert sum(walks.column("steps").to_pylist()) == res["steps"]
    assert res["violations"] == 0 and read(out, "violations").num_rows == 0


def test_parts_are_named_by_their_walks_and_saved_as_often_as_asked(tmp_path):
    run_swarm(small(tmp_path, "p", flush_seconds=0))  # every chunk its own part
    names = [p.name for p in sorted((tmp_path / "p" / "walks").iterdir())]
    assert names == ["part-000000000000-000000000000.parquet",
                     "part-000000000000-000000000256.parquet",
                     "part-000000000256-000000000512.parquet",
                     "part-000000000512-000000000600.parquet"]
    for ds in ("violations", "coverage"):
        assert [p.name for p in sorted((tmp_path / "p" / ds).iterdir())] == names
    run_swarm(small(tmp_path, "q"))  # default: one part for a run this short
    assert len(list((tmp_path / "q" / "walks").iterdir())) == 2
    assert read(tmp_path / "p").equals(read(tmp_path / "q"))


def test_same_files_for_any_worker_count_and_chunking(tmp_path):
    a = small(tmp_path, "w1", workers=1, chunk_walks=600, mutation="double-vote")
    b = small(tmp_path, "w2", workers=2, chunk_walks=97, mutation="double-vote")
    run_swarm(a)
    run_swarm(b)
    for name in ("walks", "violations"):
        ta = read(tmp_path / "w1", name).drop_columns(
            [c for c in ("run_id",) if name.startswith("violations")])
        tb = read(tmp_path / "w2", name).drop_columns(
            [c for c in ("run_id",) if name.startswith("violations")])
        assert ta.equals(tb), name
    assert read(tmp_path / "w1", "violations").num_rows > 0


def test_mutation_violations_rows_readable_everywhere(tmp_path):
    res = run_swarm(small(tmp_path, "m", mutation="commit-old-epoch",
                          disabled_checks=("LogMatching",)))
    path = tmp_path / "m" / "violations"
    glob = f"{path}/*.parquet"
    assert res["violations"] > 0
    n = duckdb.sql(f"select count(*) from '{glob}'").fetchall()[0][0]
    assert n == res["violations"] == len(pd.read_parquet(path)) == pl.read_parquet(glob).height
    df = pd.read_parquet(path)
    assert set(df["invariant"]) <= set(res["violations_by_invariant"])
    assert {"walk", "seed", "step", "node_a", "epoch", "log_offset", "w_deliver", "mutation",
            "voters", "disabled_checks"} <= set(df.columns)
    assert (df["mutation"] == "commit-old-epoch").all()
    assert all(list(x) == ["LogMatching"] for x in df["disabled_checks"])
    # no column needs quoting in SQL, and repeated strings are dictionary-encoded
    assert duckdb.sql(f"select max(log_offset), min(step) from '{glob}'").fetchall()
    schema = read(tmp_path / "m", "violations").schema
    for name in ("run_id", "invariant", "mutation", "weights"):
        assert pa.types.is_dictionary(schema.field(name).type), name
    walks = pd.read_parquet(tmp_path / "m" / "walks")
    assert (walks["violation"].notna()).sum() == res["violations"]


def test_histogram_walk_stats(tmp_path):
    run_swarm(small(tmp_path, "h", walk_stats="histogram"))
    t = pd.read_parquet(tmp_path / "h" / "walks_histogram")
    steps = t[t["stat"] == "steps"]
    assert steps["count"].sum() == 600
    assert not (tmp_path / "h" / "walks").exists()


def test_config_toml_reruns_the_same_walks(tmp_path):
    from kraftwalk.config import make_config

    run_swarm(small(tmp_path, "x"))
    again = make_config(str(tmp_path / "x" / "config.toml"), out=str(tmp_path / "y"))
    run_swarm(again)
    assert read(tmp_path / "x").equals(read(tmp_path / "y"))
    # without --out, the run folder's own config repeats the run in a new folder
    assert make_config(str(tmp_path / "x" / "config.toml")).out is None


def test_refuses_a_non_empty_run_folder(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("x")
    with pytest.raises(UsageError, match="not an empty folder"):
        run_swarm(small(tmp_path, "full"))


def test_duration_mode_stops_and_numbers_walks_from_zero(tmp_path):
    res = run_swarm(RunConfig(duration=0.5, depth=100, workers=1, chunk_walks=64,
                              out=str(tmp_path / "d")))
    walks = read(tmp_path / "d").column("walk").to_pylist()
    assert walks == list(range(res["walks"])) and res["walks"] >= 64


def test_worker_start_up_is_its_own_phase_and_not_run_time(tmp_path):
    """Two local workers start, and load the kernels, before the walks are timed: the
    start-up (with the run folder's preparation) is recorded apart, as the JIT is,
    and the walks are the ones asked for."""
    phases = []
    res = run_swarm(small(tmp_path, "w2", workers=2), on_phase=phases.append)
    assert phases == ["compiling", "starting", "running"]
    assert res["startup_seconds"] > 0 and res["walks"] == 600
    meta = json.loads((tmp_path / "w2" / "run.json").read_text())
    assert meta["startup_seconds"] == res["startup_seconds"]
    one = run_swarm(small(tmp_path, "w1"))
    # one worker: the walks run in this process; only the run folder was prepared
    assert 0.0 < one["startup_seconds"] < res["startup_seconds"]
    assert read(tmp_path / "w1").equals(read(tmp_path / "w2"))


def test_dask_backend_gives_the_same_walks(tmp_path):
    pytest.importorskip("dask.distributed")
    run_swarm(small(tmp_path, "loky", walks=300))
    res = run_swarm(small(tmp_path, "dask", walks=300, backend="dask", workers=2))
    assert read(tmp_path / "loky").equals(read(tmp_path / "dask"))
    assert res["workers"] == 2  # the cluster's cores, which steps/s per core divides by


def test_walks_and_duration_stop_at_whichever_comes_first(tmp_path):
    res = run_swarm(RunConfig(walks=10**9, duration=0.5, depth=100, workers=1, chunk_walks=64,
                              out=str(tmp_path / "both")))
    assert 64 <= res["walks"] < 10**9


def test_a_missing_backend_is_refused_before_the_run_folder_is_made(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(UsageError, match="--backend ray needs Ray"):
        run_swarm(small(tmp_path, "r", backend="ray"))
    assert not (tmp_path / "r").exists()


def test_a_failed_run_says_so_in_run_json(tmp_path, monkeypatch):
    import kraftwalk.run.runner as runner

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(runner, "stream_chunks", broken)
    with pytest.raises(RuntimeError):
        run_swarm(small(tmp_path, "f"))
    meta = json.loads((tmp_path / "f" / "run.json").read_text())
    assert meta["status"] == "failed" and "disk on fire" in meta["error"]
    assert read(tmp_path / "f").num_rows == 0  # the empty dataset is still readable


def test_ray_backend_gives_the_same_walks(tmp_path):
    pytest.importorskip("ray.util.joblib")
    run_swarm(small(tmp_path, "loky", walks=300, mutation="double-vote"))
    res = run_swarm(small(tmp_path, "ray", walks=300, backend="ray", workers=2,
                          mutation="double-vote"))
    assert res["walks"] == 300 and res["workers"] >= 1
    assert read(tmp_path / "loky").equals(read(tmp_path / "ray"))


def test_resume_mends_a_coverage_aggregate_a_kill_left_behind(tmp_path):
    """kill -9 between a range's walks part and coverage.parquet leaves the aggregate a
    range behind; a resume rewrites it from the parts, though no walk is left to run."""
    import pyarrow.parquet as pq

    from kraftwalk.storage.coverage import Coverage

    cfg = small(tmp_path, "c", flush_seconds=0)
    run_swarm(cfg)
    out = tmp_path / "c"
    whole = pq.read_table(out / rundir.COVERAGE_FILE)
    first = rundir.read_file(rundir.parts(out, rundir.COVERAGE)[1][2])
    pq.write_table(Coverage.from_table(first).table(), out / rundir.COVERAGE_FILE)
    assert not pq.read_table(out / rundir.COVERAGE_FILE).equals(whole)
    run_swarm(cfg, resume=True)
    assert pq.read_table(out / rundir.COVERAGE_FILE).equals(whole)


def test_a_signal_inside_a_save_counts_its_range_once(tmp_path, monkeypatch):
    """SIGTERM while a range is being saved: the save ends whole, the stop's own save
    finds nothing left to save, and coverage.parquet is the sum of the saved parts."""
    import os
    import signal

    import pyarrow.parquet as pq

    from kraftwalk.errors import RunStopped
    from kraftwalk.run import runner
    from kraftwalk.run.signals import stop_on_signals
    from kraftwalk.storage.coverage import Coverage

    real, calls = runner.write_table_atomic, []

    def write_and_stop(path, table):
        calls.append(path)
        if len(calls) == 2:  # the final save's aggregate, after its walks part
            os.kill(os.getpid(), signal.SIGTERM)
        real(path, table)

    monkeypatch.setattr(runner, "write_table_atomic", write_and_stop)
    cfg = small(tmp_path, "s")  # one save of every walk, at the end
    out = tmp_path / "s"
    with pytest.raises(RunStopped) as stop, stop_on_signals():
        run_swarm(cfg)
    assert stop.value.summary["status"] == "terminated"
    saved = Coverage.from_table(rundir.read_dataset(out, rundir.COVERAGE)).table()
    assert pq.read_table(out / rundir.COVERAGE_FILE).equals(saved)
    assert stop.value.summary["walks_saved"] == rundir.walks_saved(out) == 600
    monkeypatch.undo()
    run_swarm(cfg, resume=True)
    run_swarm(small(tmp_path, "ref"))
    assert pq.read_table(out / rundir.COVERAGE_FILE).equals(
        pq.read_table(tmp_path / "ref" / rundir.COVERAGE_FILE))
