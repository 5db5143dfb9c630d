"""A command's defaults never write over files a repository tracks: hunt and bench,
like swarm, put what they write in a new folder under kraftwalk-runs/ of the current
directory (they wrote into results/, where a clone keeps its committed figures)."""
from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.config import RUNS_DIR

runner = CliRunner()


def _only_new_runs(cwd: Path, prefix: str) -> Path:
    assert sorted(p.name for p in cwd.iterdir()) == [RUNS_DIR]
    (folder,) = (cwd / RUNS_DIR).iterdir()
    assert folder.name.startswith(prefix)
    return folder


def test_hunt_writes_a_new_runs_folder_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["hunt", "--mutation", "double-vote", "--seeds", "1",
                                 "--duration", "5", "--workers", "1"])
    assert result.exit_code == 0, result.output
    folder = _only_new_runs(tmp_path, "hunt-")
    assert {"hunt.md", "hunt.parquet"} <= {p.name for p in folder.iterdir()}


def test_bench_writes_a_new_runs_folder_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["bench", "--timed-only", "--seconds", "1"])
    assert result.exit_code == 0, result.output
    folder = _only_new_runs(tmp_path, "bench-")
    assert {"bench-timed.json", "bench-timed.md"} <= {p.name for p in folder.iterdir()}


def test_mutations_lists_the_features_each_needs_and_its_kafka_bug():
    result = runner.invoke(app, ["mutations"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    rows = {line.split()[0]: line for line in result.output.splitlines() if line.strip()}
    assert "--snapshots" in rows["snapshot-above-hw"]
    assert "--reconfig" in rows["two-pending-changes"]
    assert "--disk-loss" in rows["wiped-replica-same-id"]
    assert "--" not in rows["double-vote"].split("a voter")[0]
    assert "KAFKA-12619" in rows["hw-at-epoch-start"]  # Kafka's own bug, by its JIRA
    assert "KAFKA-10527" in rows["restarted-leader-keeps-leading"]
