"""Bad paths and values for every command: one stderr line, exit 2, nothing written,
never a traceback; checked before any work starts (the runner, the hunt and the
benchmark are never reached)."""
from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.config import RunConfig

runner = CliRunner()
UNWRITABLE = "/proc/kraftwalk-test/out"  # /proc refuses new files, even to root


def invoke(args):
    return runner.invoke(app, args, env={"COLUMNS": "200"})


def one_line(result, code=2, *fragments):
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("kraftwalk: error: "), result.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.fixture
def no_work(monkeypatch):
    """Any attempt to start real work fails the test loudly."""
    for mod in ("kraftwalk.run.runner", "kraftwalk.run.hunt", "kraftwalk.run.bench"):
        monkeypatch.setitem(sys.modules, mod, None)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from kraftwalk.run.runner import run_swarm

    out = tmp_path_factory.mktemp("bad") / "run"
    run_swarm(RunConfig(walks=60, depth=80, seed=1, workers=1, mutation="double-vote",
                        out=str(out)))
    return out


@pytest.fixture
def afile(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    return f


# ---- output folders: swarm --out, hunt --out (--report), bench --out --------------
FOLDER_COMMANDS = {
    "swarm": lambda p: ["swarm", "--walks", "5", "--out", p],
    "hunt": lambda p: ["hunt", "--all", "--out", p],
    "hunt (old --report)": lambda p: ["hunt", "--all", "--report", p],
    "bench": lambda p: ["bench", "--out", p],
}


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_folder_under_a_file(no_work, afile, command):
    one_line(invoke(FOLDER_COMMANDS[command](str(afile / "sub"))), 2, "afile", "is a file")


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_folder_that_is_a_file(no_work, afile, command):
    one_line(invoke(FOLDER_COMMANDS[command](str(afile))), 2, str(afile))


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_folder_whose_name_no_file_system_takes(no_work, tmp_path, command):
    """A component longer than the file system allows (ENAMETOOLONG) is a bad path: bad
    input, exit 2, not a machine failure."""
    path = tmp_path / ("x" * 300) / "out"
    one_line(invoke(FOLDER_COMMANDS[command](str(path))), 2, "bad path", "File name too long")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_unwritable_folder(no_work, command):
    one_line(invoke(FOLDER_COMMANDS[command](UNWRITABLE)), 2, UNWRITABLE, "cannot write")


# ---- output files: replay/shrink --itf, plot --out ----------------------------------
def file_commands(run):
    return {
        "replay --itf": lambda p: ["replay", str(run), "--itf", p],
        "shrink --itf": lambda p: ["shrink", str(run), "--quiet", "--itf", p],
        "plot --out": lambda p: ["plot", str(run), "--out", p],
    }


@pytest.mark.parametrize("command", ["replay --itf", "shrink --itf", "plot --out"])
@pytest.mark.parametrize("kind", ["under a file", "a folder", "unwritable", "name too long"])
def test_bad_output_files(run_dir, afile, tmp_path, monkeypatch, command, kind):
    # the work (replaying, shrinking, plotting) must not start: make it fail if it does
    import kraftwalk.storage.plots
    import kraftwalk.counterexamples.replay

    def boom(*a, **k):
        raise AssertionError("work started before the output path was checked")

    for mod, name in ((kraftwalk.counterexamples.replay, "record"), (kraftwalk.counterexamples.replay, "witness_trace"),
                      (kraftwalk.storage.plots, "plot_run")):
        monkeypatch.setattr(mod, name, boom)
    path = {"under a file": str(afile / "x.out"), "a folder": str(tmp_path),
            "unwritable": UNWRITABLE, "name too long": str(tmp_path / ("x" * 300) / "t.out")}[kind]
    fragment = {"under a file": path.split("/")[-2], "name too long": "File name too long"}
    one_line(invoke(file_commands(run_dir)[command](path)), 2, fragment.get(kind, path))


def test_output_file_folders_are_created(run_dir, tmp_path):
    itf = tmp_path / "new" / "deeper" / "t.itf.json"
    res = invoke(["replay", str(run_dir), "--itf", str(itf)])
    assert res.exit_code == 0, res.output
    assert itf.is_file()


# ---- values -----------------------------------------------------------------------
@pytest.mark.parametrize("args,fragments", [
    (["replay", "RUN", "--walk", "99999999999999999999999"],
     ["--walk", "99999999999999999999999", "between 0 and"]),
    (["replay", "RUN", "--walk", "-1"], ["--walk", "got -1"]),
    (["bench", "--memory-walks", "0"], ["--memory-walks", "got 0"]),
    (["bench", "--seconds", "0.5"], ["--seconds", "got 0.5"]),
    (["bench", "--seconds", "nan"], ["--seconds", "a finite number", "got nan"]),
    (["bench", "--seconds", "inf"], ["--seconds", "a finite number", "got inf"]),
    (["hunt", "--all", "--duration", "nan"], ["--duration", "a finite number", "got nan"]),
    (["hunt", "--all", "--name", ""], ["--name ''"]),
    (["hunt", "--all", "--name", "../x"], ["--name '../x'"]),
    (["hunt", "--all", "--seeds", "0"], ["--seeds", "got 0"]),
    (["hunt", "--all", "--first-seed", "-3"], ["--first-seed", "got -3"]),
    (["hunt", "--mutation", "park-diverging-fetch"], ["park-diverging-fetch", "statistics bug", "kraftwalk compare"]),
    (["swarm", "--mutation", "park-diverging-fetch"],
     ["park-diverging-fetch", "statistics bug", "swarm cannot show", "kraftwalk compare"]),
    (["hunt", "--all", "--duration", "0"], ["--duration", "got 0"]),
    (["hunt", "--all", "--budget", "x"], ["--budget", "'x' is not a number"]),
    (["swarm", "--kafka", "5.0"], ["--kafka '5.0'", "known: 3.9, 3.9.1, 3.9.2, 4.0"]),
    (["hunt", "--all", "--kafka", "3.8"], ["--kafka '3.8'", "known: 3.9, 3.9.1, 3.9.2, 4.0"]),
    (["bench", "--kafka", "x"], ["--kafka 'x'", "known: 3.9, 3.9.1, 3.9.2, 4.0"]),
    (["elect", "--kafka", "4.3", "--kafka", "9.9"], ["--kafka '9.9'", "known: 3.9, 3.9.1"]),
    (["elect", "--timing", "election_loss=nope"],
     ["election_loss='nope'", "backoff, jittered-backoff, jittered-backoff-3.9, wait"]),
])
def test_bad_values(no_work, run_dir, args, fragments):
    args = [str(run_dir) if a == "RUN" else a for a in args]
    one_line(invoke(args), 2, *fragments)


@pytest.mark.parametrize("command", [["hunt", "--all"], ["bench"]])
def test_config_keys_a_command_does_not_take_are_ignored(no_work, tmp_path, command):
    """A run folder's config.toml carries every setting; those a command does not use
    are not validated, and errors never name an option the command lacks."""
    cfg = tmp_path / "c.toml"
    cfg.write_text('walks = 10\nout = "/nonexistent/x"\nflush-seconds = 5\nvoters = 42\n')
    res = invoke([*command, "--config", str(cfg), "--out", str(tmp_path / "o")])
    one_line(res, 2, "c.toml", "voters must be between 1 and 9, got 42")
    assert "--walks" not in res.stderr and "--voters" not in res.stderr


# ---- ITF: big integers in the ADR's encoding, in #meta too --------------------------
def test_itf_big_integers(tmp_path):
    from kraftwalk.run.runner import run_swarm

    seed = 2**60 + 7
    out = tmp_path / "big"
    run_swarm(RunConfig(walks=40, depth=60, seed=seed, workers=1, out=str(out)))
    itf = tmp_path / "t.itf.json"
    assert invoke(["replay", str(out), "--walk", "3", "--itf", str(itf)]).exit_code == 0
    doc = json.loads(itf.read_text())
    assert doc["#meta"]["seed"] == {"#bigint": str(seed)}
    assert doc["#meta"]["config"]["seed"] == {"#bigint": str(seed)}

    def plain_ints(x):
        if isinstance(x, bool):
            return []
        if isinstance(x, int):
            return [x]
        if isinstance(x, dict):
            return [i for v in x.values() for i in plain_ints(v)]
        if isinstance(x, list):
            return [i for v in x for i in plain_ints(v)]
        return []

    assert all(abs(i) < 2**53 for i in plain_ints(doc))


# ---- replay output read by a person ---------------------------------------------------
def test_replay_piped_is_not_wrapped_and_explains_the_invariant(run_dir):
    res = runner.invoke(app, ["replay", str(run_dir)], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    for line in lines:  # a line cut inside a tuple leaves unbalanced brackets
        assert line.count("(") == line.count(")") and line.count("[") == line.count("]"), line
    assert any(len(x) > 80 for x in lines)
    assert any("VoteUniqueness: a voter grants at most one vote per epoch" in x for x in lines)
    assert any("flushed" in x and "log end" in x for x in lines)
