"""Coverage of a run: coverage.parquet and the coverage/ dataset, the summary's
coverage table, --require, and replay --witness."""
from __future__ import annotations

import duckdb
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from kraftwalk.storage import rundir
from kraftwalk.cli import app
from kraftwalk.config import RunConfig
from kraftwalk.storage.coverage import Coverage
from kraftwalk.run.runner import run_swarm
from kraftwalk.vocabulary.properties import TARGET_NAMES

runner = CliRunner()


def invoke(args):
    return runner.invoke(app, args, env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cov") / "run"
    res = run_swarm(RunConfig(walks=1500, depth=300, seed=2, workers=1, chunk_walks=256,
                              flush_seconds=0, out=str(out)))
    return out, res


def test_coverage_file_is_the_aggregate_of_its_parts(run):
    out, res = run
    whole = pq.read_table(out / rundir.COVERAGE_FILE)
    parts = Coverage.from_table(rundir.read_dataset(out, rundir.COVERAGE)).table()
    assert whole.equals(parts)
    rows = {r["target"]: r for r in whole.to_pylist() if r["kind"] == "sometimes"}
    assert list(rows) == list(TARGET_NAMES)
    assert {k: v["walks"] for k, v in rows.items()} == res["reached"]
    assert rows["LeaderElected"]["walks"] > 0 and rows["LeaderElected"]["first_step"] > 0
    # DuckDB reads it without quoting anything
    n = duckdb.sql(f"select count(*) from '{out / rundir.COVERAGE_FILE}' where kind = 'action'"
                   ).fetchall()[0][0]
    from kraftwalk.kernels.transition import N_FAMILIES
    assert n == N_FAMILIES  # every family, the feature ones (0 steps here) too


def test_same_coverage_for_any_chunking(run, tmp_path):
    out, _ = run
    run_swarm(RunConfig(walks=1500, depth=300, seed=2, workers=2, chunk_walks=97,
                        out=str(tmp_path / "b")))
    assert pq.read_table(out / rundir.COVERAGE_FILE).equals(
        pq.read_table(tmp_path / "b" / rundir.COVERAGE_FILE))


def test_witness_replays_to_the_target(run):
    out, _ = run
    result = invoke(["replay", str(out), "--witness", "FollowerTruncated"])
    assert result.exit_code == 0, result.output
    assert "REACHED FollowerTruncated at step" in result.output
    assert "log truncated" in result.output


@pytest.mark.parametrize("args,code,fragment", [
    (["--witness", "Nope"], 2, "'Nope' is not a reachability target"),
    (["--witness", "EpochBoundHit"], 2, "never reached EpochBoundHit"),
    (["--witness", "LeaderElected", "--walk", "3"], 2, "leave out --walk"),
])
def test_witness_errors(run, args, code, fragment):
    out, res = run
    if "EpochBoundHit" in args:
        assert res["reached"]["EpochBoundHit"] == 0
    result = invoke(["replay", str(out), *args])
    assert result.exit_code == code
    assert result.stderr.count("\n") == 1 and fragment in result.stderr


def test_require(tmp_path):
    base = ["swarm", "--walks", "300", "--depth", "200", "--workers", "1"]
    ok = invoke([*base, "--out", str(tmp_path / "a"), "--require", "LeaderElected"])
    assert ok.exit_code == 0, ok.output
    assert "coverage:" in ok.stdout and "LeaderElected" in ok.stdout
    missed = invoke([*base, "--out", str(tmp_path / "b"), "--require", "EpochBoundHit"])
    assert missed.exit_code == 14 and "never reached: EpochBoundHit" in missed.stderr
    bad = invoke([*base, "--out", str(tmp_path / "c"), "--require", "Nope"])
    assert bad.exit_code == 2 and "'Nope' is not a reachability target" in bad.stderr
    assert not (tmp_path / "c").exists()
