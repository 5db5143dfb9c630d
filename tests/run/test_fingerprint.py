"""A resumed run goes on with the model it began with: a run or sweep folder records
the fingerprint of its walks (settings, kraftwalk version, kernel sources), and --resume
refuses one whose config.toml or sweep.toml was edited since, or that another model
wrote, naming the difference and leaving the folder as it was."""
from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.config import RunConfig
from kraftwalk.run import fingerprint
from kraftwalk.run.runner import run_swarm
from kraftwalk.run.sweep import SWEEP_FILE, SWEEP_JSON, run_sweep
from kraftwalk.storage import rundir
from kraftwalk.sweep_spec import parse_sweep

runner = CliRunner()
SMALL = dict(walks=600, depth=60, seed=4, workers=1, chunk_walks=200, flush_seconds=0.0)


def resume(*args):
    return runner.invoke(app, [*args], env={"COLUMNS": "200"})


def refused(result, *fragments):
    assert result.exit_code == 2, result.output
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("kraftwalk: error: "), result.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def snapshot(folder: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def stopped_run(folder: Path) -> Path:
    """A run stopped after its first 400 walks, as a kill would leave it."""
    run_swarm(RunConfig(**{**SMALL, "walks": 400}, out=str(folder)))
    cfg = RunConfig(**SMALL, out=str(folder))
    (folder / rundir.CONFIG).write_text(cfg.to_toml())
    meta = json.loads((folder / rundir.RUN_JSON).read_text())
    meta[fingerprint.KEY] = fingerprint.of_run(cfg)
    (folder / rundir.RUN_JSON).write_text(json.dumps(meta))
    return folder


def test_differences_name_each_changed_setting():
    old = {"voters": 3, "cells": {"a": {"walks": 10}}, "gone": 1}
    new = {"voters": 5, "cells": {"a": {"walks": 20}}, "added": "x"}
    assert fingerprint.differences(old, new) == [
        "voters: 3 -> 5", "cells a walks: 10 -> 20", "gone: 1 -> (none)",
        'added: (none) -> "x"']
    assert fingerprint.differences(old, old) == []


def test_a_run_records_its_fingerprint(tmp_path):
    cfg = RunConfig(**SMALL, out=str(tmp_path / "r"))
    run_swarm(cfg)
    fp = json.loads((tmp_path / "r" / rundir.RUN_JSON).read_text())[fingerprint.KEY]
    assert fp == json.loads(json.dumps(fingerprint.of_run(cfg)))
    assert fp["walks"]["voters"] == 3 and "workers" not in fp["walks"]
    assert len(fp["kernel_sources"]) == 16 and fp["kraftwalk"]


def test_resume_refuses_an_edited_config_toml(tmp_path):
    run = stopped_run(tmp_path / "r")
    text = (run / rundir.CONFIG).read_text()
    (run / rundir.CONFIG).write_text(text.replace("voters = 3", "voters = 5"))
    before = snapshot(run)
    refused(resume("swarm", "--resume", str(run)), "settings changed since it started",
            "voters: 3 -> 5", "start a new run")
    assert snapshot(run) == before
    (run / rundir.CONFIG).write_text(text)  # put back, it resumes to the end
    result = resume("swarm", "--resume", str(run))
    assert result.exit_code == 0, result.output
    assert rundir.walks_saved(run) == SMALL["walks"]


def test_resume_refuses_walks_another_model_made(tmp_path):
    run = stopped_run(tmp_path / "r")
    meta = json.loads((run / rundir.RUN_JSON).read_text())
    meta[fingerprint.KEY]["kernel_sources"] = "0123456789abcdef"
    (run / rundir.RUN_JSON).write_text(json.dumps(meta))
    before = snapshot(run)
    refused(resume("swarm", "--resume", str(run)), "made by another kraftwalk model",
            "kernel_sources: \"0123456789abcdef\" -> ")
    del meta[fingerprint.KEY]  # a folder of a kraftwalk before fingerprints
    (run / rundir.RUN_JSON).write_text(json.dumps(meta))
    refused(resume("swarm", "--resume", str(run)), "records no fingerprint")
    assert {p: b for p, b in snapshot(run).items() if p.name != rundir.RUN_JSON} == {
        p: b for p, b in before.items() if p.name != rundir.RUN_JSON}


def test_a_run_killed_before_it_saved_anything_resumes(tmp_path):
    """Killed between its config.toml and its first run.json: nothing to mix with."""
    run = tmp_path / "r"
    run.mkdir()
    (run / rundir.CONFIG).write_text(RunConfig(**SMALL, out=str(run)).to_toml())
    result = resume("swarm", "--resume", str(run))
    assert result.exit_code == 0, result.output
    assert rundir.walks_saved(run) == SMALL["walks"]


def test_sweep_resume_refuses_an_edited_sweep_toml(tmp_path):
    spec = {"command": "swarm", "swarm": {**SMALL, "walks": 400}, "grid": {"voters": [3, 5]}}
    out = tmp_path / "s"
    run_sweep(parse_sweep(spec, "s.toml"), out)
    meta = json.loads((out / SWEEP_JSON).read_text())
    assert set(meta[fingerprint.KEY]["walks"]["cells"]) == {"voters=3", "voters=5"}
    text = (out / SWEEP_FILE).read_text()
    assert "walks = 400" in text
    (out / SWEEP_FILE).write_text(text.replace("walks = 400", "walks = 300"))
    before = snapshot(out)
    refused(resume("sweep", "--resume", str(out)), "settings changed since it started",
            "cells voters=3 walks: 400 -> 300", "cells voters=5 walks: 400 -> 300")
    (out / SWEEP_FILE).write_text(text.replace("[3, 5]", "[3, 5, 7]"))
    refused(resume("sweep", "--resume", str(out)), "cells voters=7: (none) -> {...}")
    assert {p: b for p, b in snapshot(out).items() if p.name != SWEEP_FILE} == {
        p: b for p, b in before.items() if p.name != SWEEP_FILE}
