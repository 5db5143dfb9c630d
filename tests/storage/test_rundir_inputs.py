"""Run folders as input to replay, shrink and plot: corrupt, truncated, empty, garbage
or missing parts, an edited config.toml, walks the run never ran. Each is one stderr
line and exit 2 (bad input) or 1 (a replay that no longer matches its run); never a
traceback."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kraftwalk.storage import rundir
from kraftwalk.cli import app
from kraftwalk.config import RunConfig
from kraftwalk.run.runner import run_swarm

runner = CliRunner()


@pytest.fixture(scope="module")
def good_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "good"
    run_swarm(RunConfig(walks=200, depth=120, seed=3, workers=1, chunk_walks=64,
                        flush_seconds=0, mutation="double-vote", out=str(out)))
    assert rundir.read_dataset(out, rundir.VIOLATIONS).num_rows > 0
    return out


@pytest.fixture
def run(good_run, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(good_run, copy)
    return copy


def invoke(args):
    return runner.invoke(app, args, env={"COLUMNS": "200"})


def one_line(result, code, *fragments):
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("kraftwalk: error: "), result.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


def last_part(run: Path, dataset: str) -> Path:
    return rundir.parts(run, dataset)[-1][2]


CORRUPTIONS = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    "empty": lambda p: p.write_bytes(b""),
    "garbage": lambda p: p.write_bytes(b"PAR1 this is not parquet at all" * 10),
}
COMMANDS = {
    "replay": lambda run: ["replay", str(run)],
    "shrink": lambda run: ["shrink", str(run), "--quiet"],
    "plot": lambda run: ["plot", str(run), "--out", str(run / "p.png")],
}


# the dataset each command reads
READS = [("replay", rundir.VIOLATIONS), ("shrink", rundir.VIOLATIONS), ("plot", rundir.WALKS)]


@pytest.mark.parametrize("kind", CORRUPTIONS)
@pytest.mark.parametrize("command,dataset", READS)
def test_corrupt_parts(run, kind, command, dataset):
    part = last_part(run, dataset)
    CORRUPTIONS[kind](part)
    one_line(invoke(COMMANDS[command](run)), 2, str(part), "not a readable")
    assert not (run / "p.png").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_not_a_run_folder(tmp_path, command):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "config.toml").write_text("voters = 3\n")
    one_line(invoke(COMMANDS[command](tmp_path / "x")), 2, str(tmp_path / "x"))


def test_a_file_where_the_run_folder_should_be(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    for command in COMMANDS:
        one_line(invoke(COMMANDS[command](f)), 2, str(f))


@pytest.mark.parametrize("text,fragment", [
    ("voters = = 3\n", "invalid TOML"),
    ("", None),  # an empty config is a default config: the replay no longer matches
    ("voters = 42\n", "voters must be between 1 and 9"),
    ("bogus = 1\n", "'bogus'"),
])
def test_edited_config(run, text, fragment):
    (run / "config.toml").write_text(text)
    result = invoke(["replay", str(run)])
    if fragment is None:
        one_line(result, 1, "changed since the run")
    else:
        one_line(result, 2, "config.toml", fragment)


def test_edited_seed_is_a_mismatch(run):
    cfg = (run / "config.toml").read_text().replace("seed = 3", "seed = 4")
    (run / "config.toml").write_text(cfg)
    one_line(invoke(["replay", str(run)]), 1, "changed since the run")


@pytest.mark.parametrize("walk", ["200", "5000", str(2**63 - 1)])
def test_walk_the_run_never_ran(run, walk):
    one_line(invoke(["replay", str(run), "--walk", walk]), 2, f"--walk {walk}", "0..199")


def test_walk_index_overflowing_64_bits(run):
    result = invoke(["replay", str(run), "--walk", "99999999999999999999999"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.startswith("kraftwalk: error: ") and len(result.stderr.splitlines()) == 1


def test_orphan_violations_part_is_ignored(run):
    """A kill between the violations and the walks rename leaves a violations part for
    walks that were never saved: readers ignore it."""
    a, b, part = rundir.parts(run, rundir.VIOLATIONS)[-1]
    part.rename(part.with_name(rundir.part_name(200, 264)))
    n = rundir.read_dataset(run, rundir.VIOLATIONS).num_rows
    part.with_name(rundir.part_name(200, 264)).rename(part)
    assert n < rundir.read_dataset(run, rundir.VIOLATIONS).num_rows or a == b
    rundir.remove_leftovers(run)
    assert rundir.parts(run, rundir.VIOLATIONS)[-1][:2] == (a, b)


def test_legacy_single_file_run_folders_still_read(run):
    import pyarrow.parquet as pq

    tables = {ds: rundir.read_dataset(run, ds) for ds in (rundir.WALKS, rundir.VIOLATIONS)}
    for ds, table in tables.items():
        shutil.rmtree(run / ds)
        pq.write_table(table, run / f"{ds}.parquet")
    result = invoke(["replay", str(run)])
    assert result.exit_code == 0, result.output
    assert "VIOLATION VoteUniqueness" in result.output
