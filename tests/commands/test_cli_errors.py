"""CLI usage errors: one stderr line, exit code 2, nothing written, runner never reached.

Also the exit codes of finished runs, with a fake runner (no Numba needed).
"""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.config import INVARIANTS, RunConfig

runner = CliRunner()


@pytest.fixture
def no_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any import of kraftwalk.run.runner fail, proving validation comes first."""
    monkeypatch.setitem(sys.modules, "kraftwalk.run.runner", None)


def invoke(args: list[str]) -> Any:
    return runner.invoke(app, args, env={"COLUMNS": "200"})


def assert_one_line_error(result: Any, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("kraftwalk: error: ")
    for fragment in fragments:
        assert fragment in lines[0]
    assert result.stdout == ""


BAD_ARGS = [
    (["--voters", "12"], ["--voters", "12"]),
    (["--voters", "abc"], ["--voters", "'abc'"]),
    (["--voters", "0"], ["--voters", "got 0"]),
    (["--depth", "1.5"], ["--depth", "'1.5'"]),
    (["--duration", "-3"], ["--duration", "-3"]),
    (["--duration", "soon"], ["--duration", "'soon'"]),
    (["--workers", "2000"], ["--workers", "2000"]),
    (["--weights", "foo"], ["--weights", "'foo'", "swarm, fixed"]),
    (["--walk-stats", "all"], ["--walk-stats", "'all'", "rows, histogram"]),
    (["--disable-check", "Nope"], ["'Nope'", "--disable-check", "ElectionSafety"]),
    (["--disable-check", "LogMatching", "--disable-check", "Nope"], ["'Nope'"]),
    (["--seed", "-1"], ["--seed", "-1"]),
    (["--max-epoch", "1"], ["--max-epoch", "got 1"]),
    (["--bogus"], ["--bogus"]),
    (["--voters"], ["--voters"]),
]


@pytest.mark.parametrize(("args", "fragments"), BAD_ARGS)
def test_bad_values_exit_2_with_one_line(
    tmp_path: Path, no_runner: None, args: list[str], fragments: list[str]
) -> None:
    out = tmp_path / "run"
    result = invoke(["swarm", "--out", str(out), *args])
    assert_one_line_error(result, *fragments)
    assert not out.exists()


def test_missing_config_file(tmp_path: Path, no_runner: None) -> None:
    out = tmp_path / "run"
    result = invoke(["swarm", "--config", str(tmp_path / "missing.toml"), "--out", str(out)])
    assert_one_line_error(result, "missing.toml", "No such file")
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("voters = = 3\n", ["invalid TOML", "bad.toml"]),
        ("voterz = 3\n", ["'voterz'", "allowed keys"]),
        ('voters = "three"\n', ["bad.toml", ": voters must be", "'three'"]),
        ('disable-check = ["Nope"]\n', ["bad.toml", "'Nope'"]),
    ],
)
def test_bad_config_file(tmp_path: Path, no_runner: None, text: str, fragments: list[str]) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text)
    out = tmp_path / "run"
    result = invoke(["swarm", "--config", str(config), "--out", str(out)])
    assert_one_line_error(result, *fragments)
    assert not out.exists()


def test_unknown_command(no_runner: None) -> None:
    assert_one_line_error(invoke(["nosuchcommand"]), "nosuchcommand")


def test_help_lists_commands_and_options() -> None:
    top = invoke(["--help"])
    assert top.exit_code == 0 and "swarm" in top.stdout
    help_text = " ".join(invoke(["swarm", "--help"]).stdout.replace("│", " ").split())
    for option in ("--voters", "--observers", "--walks", "--depth", "--seed", "--duration", "--workers",
                   "--weights", "--out", "--config", "--pre-vote", "--no-pre-vote", "--disable-check",
                   "--log-capacity", "--msg-slots", "--max-epoch", "--max-records", "--walk-stats",
                   "--chunk-walks", "--fail-on-violation"):
        assert option in help_text, option
    d = RunConfig()
    for value in (d.voters, d.observers, d.depth, d.log_capacity, d.msg_slots, d.max_epoch,
                  d.max_records, d.chunk_walks, d.weights, d.walk_stats):
        assert f"(default: {value})" in help_text, value
    assert "(default: 60 when --walks is not given)" in help_text
    assert INVARIANTS[-1] in help_text


def test_version() -> None:
    result = invoke(["--version"])
    assert result.exit_code == 0 and re.fullmatch(r"kraftwalk \d+\.\d+\.\d+\s*", result.stdout)


# ---- finished runs, with a fake runner ---------------------------------------


def fake_result(cfg: RunConfig, violations: int) -> dict[str, Any]:
    return {
        "run_id": "fake", "out_dir": cfg.out, "walks": 10, "steps": 5000, "disabled_attempts": 7,
        "seconds": 0.5, "steps_per_s": 10000.0, "steps_per_s_per_core": 5000.0, "walks_per_s": 20.0,
        "workers": 2, "violations": violations,
        "violations_by_invariant": {"ElectionSafety": violations, "LogMatching": 0},
        "jit_seconds": 3.0, "bound_hits": {"max_epoch": 2, "log_capacity": 0},
        "first_violations": [
            {"walk": 4, "invariant": "ElectionSafety", "step": 17, "node_a": 0, "node_b": 1, "epoch": 3, "log_offset": -1}
        ][:violations],
    }


@pytest.fixture
def fake_runner(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"violations": 0}

    def run_swarm(cfg: RunConfig, progress: Any, on_phase: Any = None, resume: bool = False) -> dict[str, Any]:
        seen["cfg"] = cfg
        Path(cfg.out).mkdir(parents=True)  # type: ignore[arg-type]
        (Path(cfg.out) / "config.toml").write_text(cfg.to_toml())  # type: ignore[arg-type]
        progress(5, 2500, 0)
        progress(10, 5000, seen["violations"])
        return fake_result(cfg, seen["violations"])

    module = types.ModuleType("kraftwalk.run.runner")
    module.run_swarm = run_swarm  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kraftwalk.run.runner", module)
    return seen


def test_run_passes_merged_config(tmp_path: Path, fake_runner: dict[str, Any]) -> None:
    config = tmp_path / "c.toml"
    config.write_text("voters = 5\ndepth = 77\nmax-epoch = 9\n")
    out = tmp_path / "run"
    result = invoke(["swarm", "--config", str(config), "--voters", "7", "--walks", "10", "--no-pre-vote",
                     "--disable-check", "LogMatching", "--out", str(out)])
    assert result.exit_code == 0, result.output
    cfg = fake_runner["cfg"]
    assert (cfg.voters, cfg.depth, cfg.max_epoch, cfg.walks) == (7, 77, 9, 10)
    assert cfg.pre_vote is False and cfg.disabled_checks == ("LogMatching",)
    assert "no violations" in result.stdout and "config.toml" in result.stdout
    assert "made by kraftwalk" in result.stdout and "kernel sources" in result.stdout


def test_a_safety_violation_exits_12_unless_told_not_to(tmp_path: Path,
                                                        fake_runner: dict[str, Any]) -> None:
    fake_runner["violations"] = 1
    result = invoke(["swarm", "--walks", "10", "--out", str(tmp_path / "a")])
    assert result.exit_code == 12, result.output  # TLC's code for a safety violation
    assert "ElectionSafety" in result.stdout and "no violations" not in result.stdout
    result = invoke(["swarm", "--walks", "10", "--out", str(tmp_path / "b"),
                     "--no-fail-on-violation"])
    assert result.exit_code == 0, result.output


def test_violations_exit_codes_by_kind():
    from kraftwalk.commands.console import violations_exit

    assert violations_exit([]) is None
    assert violations_exit(["CutOffLeaderResigns"]) == 13  # liveness alone
    assert violations_exit(["CutOffLeaderResigns", "ElectionSafety"]) == 12


def test_flag_without_violations_exits_0(tmp_path: Path, fake_runner: dict[str, Any]) -> None:
    result = invoke(["swarm", "--duration", "1", "--out", str(tmp_path / "a"), "--fail-on-violation"])
    assert result.exit_code == 0, result.output


def test_run_folder_config_reads_back(tmp_path: Path, fake_runner: dict[str, Any]) -> None:
    out = tmp_path / "a"
    assert invoke(["swarm", "--walks", "10", "--seed", "42", "--out", str(out)]).exit_code == 0
    first = fake_runner["cfg"]
    out.rename(tmp_path / "old")  # the fake runner refuses an existing folder
    assert invoke(["swarm", "--config", str(tmp_path / "old" / "config.toml")]).exit_code == 0
    assert fake_runner["cfg"] == first
