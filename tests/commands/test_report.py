"""kraftwalk report: a Markdown page and its PNG plots for a run and for a sweep."""
from __future__ import annotations

import subprocess
import sys

import pytest

from kraftwalk.config import RunConfig
from kraftwalk.errors import UsageError
from kraftwalk.commands.report_page import write_report
from kraftwalk.run.runner import run_swarm
from kraftwalk.run.sweep import run_sweep
from kraftwalk.storage.provenance import made_by
from kraftwalk.sweep_spec import parse_sweep
from kraftwalk.vocabulary.releases import DEFAULT

PNG = b"\x89PNG"


def test_run_report_names_violations_with_replay_commands(tmp_path):
    run = tmp_path / "run"
    res = run_swarm(RunConfig(walks=2000, depth=200, seed=2, workers=1, mutation="double-vote",
                              out=str(run)))
    assert res["violations"] > 0
    md = write_report(run).read_text()
    first = res["first_violations"][0]
    assert f"`kraftwalk replay {run} --walk {first['walk']}`" in md
    assert first["invariant"] in md
    assert "## Coverage" in md and "LeaderElected" in md and "| deliver |" in md
    assert md.rstrip().endswith(f"Walks made by {made_by()}.")
    for png in ("coverage.png", "walks.png"):
        assert f"]({png})" in md
        assert (run / "report" / png).read_bytes().startswith(PNG)


def test_sweep_report_has_per_cell_tables_and_plots(tmp_path):
    spec = parse_sweep({"command": "swarm",
                        "swarm": {"walks": 600, "depth": 150, "workers": 1,
                                  "mutation": "double-vote"},
                        "grid": {"voters": [3, 5], "pre_vote": [True, False]}}, "s")
    run_sweep(spec, tmp_path / "s")
    out = tmp_path / "elsewhere"
    md = write_report(tmp_path / "s", out).read_text()
    assert "## Violations by invariant and configuration" in md
    assert "kraftwalk replay" in md and "cells/voters=3/pre_vote=true --walk" in md
    assert "## Throughput per cell" in md and md.count("| 600 |") >= 4
    assert md.rstrip().endswith(f"Walks made by {made_by()}.")
    assert f"Every cell: kafka = {DEFAULT} (the default release), walks = 600" in md
    for png in ("coverage.png", "walk_stats.png", "throughput.png"):
        assert (out / png).read_bytes().startswith(PNG)


def test_report_refuses_what_is_not_a_run(tmp_path):
    with pytest.raises(UsageError, match="neither a run folder nor a sweep folder"):
        write_report(tmp_path)
    r = subprocess.run([sys.executable, "-m", "kraftwalk.cli", "report",
                        str(tmp_path / "missing")], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is not a folder" in r.stderr
    (tmp_path / "run.json").write_text("{not json")
    r = subprocess.run([sys.executable, "-m", "kraftwalk.cli", "report", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "is not valid JSON" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "report").exists()   # nothing written for a refused folder


@pytest.mark.parametrize("run_json", [
    '{"walks": "abc", "config": {}}',            # a count that is not a number
    '{"walks": 10, "config": ["voters"]}',       # a table that is a list
])
def test_a_damaged_run_json_is_bad_input_and_leaves_nothing(tmp_path, run_json):
    (tmp_path / "run.json").write_text(run_json)
    out = tmp_path / "new" / "deeper"
    for args in ([str(tmp_path)], [str(tmp_path), "--out", str(out)]):
        r = subprocess.run([sys.executable, "-m", "kraftwalk.cli", "report", *args],
                           capture_output=True, text=True)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "is damaged" in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]
