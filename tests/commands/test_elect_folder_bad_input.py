"""A `kraftwalk elect` folder whose violations part is damaged (garbage, cut in half,
empty, a column missing or of the wrong type) or whose violations/ dataset is gone:
replay and shrink say so in one stderr line naming the file, exit 2, never a traceback;
so does report, and it leaves no report/ folder behind. An intact elect folder reports
and plots."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from kraftwalk.cli import app

runner = CliRunner()
VIOLATIONS = "violations"
CELL = "kafka=4.3/voters=3/pre_vote=true"


def part(run):
    """The one violations part of the folder's one cell."""
    found = list((run / VIOLATIONS / CELL).glob("part-*.parquet"))
    assert len(found) == 1, found
    return found[0]


def _truncate(f):
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])


def _drop_columns(f):
    pq.write_table(pq.read_table(f).drop_columns(["walk"]), f)


def _walk_as_text(f):
    t = pq.read_table(f)
    walks = pa.array([f"walk-{w}" for w in t.column("walk").to_pylist()])
    pq.write_table(t.set_column(t.column_names.index("walk"), "walk", walks), f)


DAMAGE = {
    "garbage": lambda f: f.write_bytes(b"not parquet \x00\x01\x02" * 40),
    "truncated": _truncate,
    "empty": lambda f: f.write_bytes(b""),
    "missing columns": _drop_columns,
    "wrong column type": _walk_as_text,
}
# what the one line says besides the file's path
SAYS = {"garbage": "not a readable", "truncated": "not a readable", "empty": "not a readable",
        "missing columns": "walk", "wrong column type": "column walk"}


@pytest.fixture(scope="module")
def elect_dir(tmp_path_factory):
    """The run tests/counterexamples/test_timed_shrink.py makes (the same compiled
    variant): 12 walks, one cell, the no-check-quorum bug, so violations.parquet has
    rows and replay gets as far as reading them."""
    out = tmp_path_factory.mktemp("elect") / "run"
    r = runner.invoke(app, ["elect", "--scenario", "random-faults", "--mutation",
                            "no-check-quorum", "--voters", "3", "--pre-vote", "on", "--walks",
                            "12", "--workers", "1", "--seed", "3", "--out", str(out)])
    assert r.exit_code == 13, r.output  # a liveness violation found
    assert pq.read_table(part(out)).num_rows > 0
    assert json.loads((out / "run.json").read_text())["command"] == "elect"
    return out


@pytest.fixture
def damaged(elect_dir, tmp_path, request):
    run = tmp_path / "run"
    shutil.copytree(elect_dir, run)
    if request.param == "gone":
        shutil.rmtree(run / VIOLATIONS)
    elif request.param != "intact":
        DAMAGE[request.param](part(run))
    return run


def one_line(result, *fragments):
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("kraftwalk: error: "), result.stderr
    for f in fragments:
        assert f in lines[0], lines[0]
    return lines[0]


COMMANDS = {"replay": ["replay"], "replay --shrink": ["replay", "--shrink"],
            "shrink": ["shrink", "--quiet"]}


@pytest.mark.parametrize("damaged", sorted(DAMAGE), indirect=True)
@pytest.mark.parametrize("command", COMMANDS)
def test_replay_and_shrink_name_the_damaged_violations_file(damaged, command, request):
    kind = request.node.callspec.params["damaged"]
    res = runner.invoke(app, [*COMMANDS[command], str(damaged)], env={"COLUMNS": "200"})
    # an unreadable part is named; a part of the wrong shape, by its dataset
    one_line(res, str(part(damaged)) if SAYS[kind] == "not a readable"
             else str(damaged / VIOLATIONS), SAYS[kind])


@pytest.mark.parametrize("damaged", ["gone"], indirect=True)
@pytest.mark.parametrize("command", COMMANDS)
def test_replay_and_shrink_without_a_violations_file_ask_for_a_walk(damaged, command):
    res = runner.invoke(app, [*COMMANDS[command], str(damaged)], env={"COLUMNS": "200"})
    one_line(res, str(damaged), f"no saved {VIOLATIONS}/ parts", "--walk N")


@pytest.mark.parametrize("damaged", ["garbage", "truncated", "missing columns"], indirect=True)
def test_report_names_the_damaged_violations_file_and_leaves_no_report_folder(damaged):
    res = runner.invoke(app, ["report", str(damaged)], env={"COLUMNS": "200"})
    one_line(res, str(part(damaged)))
    assert not (damaged / "report").exists()


@pytest.mark.parametrize("damaged", ["intact", "gone"], indirect=True)
def test_report_of_an_elect_folder(damaged, request):
    """Its election-time table, the CDF, and each cell's violations with the replay
    command of the first (none when the violations dataset is gone)."""
    res = runner.invoke(app, ["report", str(damaged)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    md = (damaged / "report" / "report.md").read_text()
    assert md.startswith(f"# kraftwalk report: elect {damaged.name}")
    assert "| Kafka | voters | pre-vote | walks | elect p50 ms |" in md
    assert (damaged / "report" / "elect-cdf.png").is_file() and "(elect-cdf.png)" in md
    assert (damaged / "report" / "walks.png").is_file() and "(walks.png)" in md
    if request.node.callspec.params["damaged"] == "intact":
        assert "| 4.3 | 3 | on | CutOffLeaderResigns |" in md
        assert f"`kraftwalk replay {damaged} --kafka 4.3 --voters 3 --pre-vote on --walk " in md
    else:
        assert "## Violations" not in md


@pytest.mark.parametrize("damaged", ["garbage"], indirect=True)
def test_a_real_process_prints_one_line_and_no_traceback(damaged):
    """The CLI as a user runs it: stderr is exactly the one line, exit 2."""
    proc = subprocess.run([sys.executable, "-m", "kraftwalk.cli", "replay", str(damaged)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kraftwalk: error: "), proc.stderr
    assert str(part(damaged)) in lines[0]


@pytest.mark.parametrize("damaged", ["intact"], indirect=True)
def test_plot_of_an_elect_folder(damaged, tmp_path):
    res = runner.invoke(app, ["plot", str(damaged), "--out", str(tmp_path / "w.png")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "w.png").stat().st_size > 10_000
