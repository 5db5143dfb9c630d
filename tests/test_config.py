"""RunConfig defaults, validation messages, TOML loading and round trips."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from kraftwalk import config
from kraftwalk.config import (
    INVARIANTS,
    RunConfig,
    load_config,
    make_config,
    new_run_id,
)
from kraftwalk.errors import UsageError


def test_defaults() -> None:
    cfg = RunConfig()
    assert (cfg.voters, cfg.observers, cfg.walks, cfg.depth, cfg.seed) == (3, 1, None, 500, 0)
    assert (cfg.duration, cfg.workers, cfg.weights, cfg.out) == (None, 0, "swarm", None)
    assert (cfg.pre_vote, cfg.mutation, cfg.disabled_checks) == (True, "none", ())
    assert (cfg.log_capacity, cfg.msg_slots, cfg.max_epoch, cfg.max_records) == (32, 16, 60, 4)
    assert (cfg.walk_stats, cfg.chunk_walks) == ("rows", 2048)


def test_invariant_names_are_the_registrys() -> None:
    from kraftwalk.vocabulary.properties import INVARIANT_NAMES

    assert INVARIANTS == INVARIANT_NAMES
    assert isinstance(config.MUTATIONS, tuple) and config.MUTATIONS[0] == "none"


def test_effective_duration() -> None:
    assert RunConfig().effective_duration == 60.0
    assert RunConfig(walks=10).effective_duration is None
    assert RunConfig(duration=5).effective_duration == 5.0
    assert RunConfig(walks=10, duration=2.5).effective_duration == 2.5


def test_effective_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config.os, "cpu_count", lambda: 7)
    assert RunConfig().effective_workers == 7
    assert RunConfig(workers=3).effective_workers == 3
    monkeypatch.setattr(config.os, "cpu_count", lambda: None)
    assert RunConfig().effective_workers == 1


def test_frozen() -> None:
    with pytest.raises(AttributeError):
        RunConfig().voters = 5  # type: ignore[misc]


def test_new_run_id_format() -> None:
    a, b = new_run_id(), new_run_id()
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{6}", a)
    assert a != b  # random suffix


def test_with_out_and_run_id() -> None:
    cfg = RunConfig()
    assert cfg.run_id is None
    filled = cfg.with_out()
    assert Path(filled.out).parent == Path("kraftwalk-runs")  # type: ignore[arg-type]
    assert filled.run_id == Path(filled.out).name  # type: ignore[arg-type]
    given = RunConfig(out="somewhere/run7/")
    assert given.with_out() is given and given.run_id == "run7"


def test_normalization() -> None:
    cfg = RunConfig(voters=np.int64(5), duration=3, out=Path("x/y"), disabled_checks=["LogMatching", "LogMatching"])
    assert type(cfg.voters) is int and cfg.voters == 5
    assert type(cfg.duration) is float
    assert cfg.out == str(Path("x/y"))
    assert cfg.disabled_checks == ("LogMatching",)
    assert RunConfig(disabled_checks="LogMatching").disabled_checks == ("LogMatching",)


RANGE_CASES = [
    ("voters", 12, "--voters must be between 1 and 9, got 12"),
    ("voters", 0, "--voters must be between 1 and 9, got 0"),
    ("observers", 5, "--observers must be between 0 and 4, got 5"),
    ("depth", 0, "--depth must be between 1 and 10000000, got 0"),
    ("depth", 10_000_001, "--depth must be between 1 and 10000000, got 10000001"),
    ("seed", -1, "--seed must be between 0 and 9223372036854775807, got -1"),
    ("seed", 2**63, f"--seed must be between 0 and 9223372036854775807, got {2**63}"),
    ("workers", -1, "--workers must be 0 (all cores) or between 1 and 1024, got -1"),
    ("workers", 1025, "--workers must be 0 (all cores) or between 1 and 1024, got 1025"),
    ("log_capacity", 3, "--log-capacity must be between 4 and 1024, got 3"),
    ("msg_slots", 1, "--msg-slots must be between 2 and 1024, got 1"),
    ("max_epoch", 100_001, "--max-epoch must be between 2 and 100000, got 100001"),
    ("max_records", 65, "--max-records must be between 1 and 64, got 65"),
    ("chunk_walks", 0, "--chunk-walks must be between 1 and 10000000, got 0"),
    ("walks", 0, "--walks must be an integer >= 1, got 0"),
    ("duration", 0, "--duration must be a finite number of seconds > 0, got 0"),
    ("duration", -1.5, "--duration must be a finite number of seconds > 0, got -1.5"),
    ("duration", float("nan"), "--duration must be a finite number of seconds > 0, got nan"),
    ("weights", "foo", "--weights must be one of swarm, fixed, uniform, got 'foo'"),
    ("walk_stats", "cols", "--walk-stats must be one of rows, histogram, got 'cols'"),
    ("mutation", "flip", "--mutation must be one of none, commit-old-epoch, double-vote, restarted-leader-keeps-leading, no-check-quorum, no-fetch-timer-reset, snapshot-above-hw, leader-loads-snapshot, reconfig-before-commit, two-pending-changes, wiped-replica-same-id, hw-at-epoch-start, no-flush-after-append, observer-skips-flush, non-voter-candidate, check-quorum-counts-leader, park-diverging-fetch, voter-skips-bootstrap-fetch, got 'flip'"),
    ("out", "", "--out must be a non-empty folder path, got ''"),
    ("pre_vote", "yes", "--pre-vote must be true or false, got 'yes'"),
    ("reconfig", 1, "--reconfig must be true or false, got 1"),
    ("voters", "three", "--voters must be an integer, got 'three'"),
    ("voters", True, "--voters must be an integer, got True"),
    ("depth", 1.5, "--depth must be an integer, got 1.5"),
    ("walks", "10", "--walks must be an integer >= 1, got '10'"),
    ("duration", "1", "--duration must be a finite number of seconds > 0, got '1'"),
]


@pytest.mark.parametrize(("field", "value", "message"), RANGE_CASES)
def test_validation_messages(field: str, value: object, message: str) -> None:
    with pytest.raises(UsageError) as info:
        RunConfig(**{field: value})
    assert str(info.value) == message
    assert "\n" not in str(info.value)


def test_unknown_invariant_message() -> None:
    with pytest.raises(UsageError) as info:
        RunConfig(disabled_checks=("ElectionSafety", "Foo"))
    assert str(info.value) == "unknown invariant 'Foo' in --disable-check; known: " + ", ".join(INVARIANTS)


def test_bounds_are_inclusive() -> None:
    RunConfig(voters=1, observers=0, depth=1, seed=0, workers=1, log_capacity=4, msg_slots=2,
              max_epoch=2, max_records=1, chunk_walks=1, walks=1)
    RunConfig(voters=9, observers=4, depth=10_000_000, seed=2**63 - 1, workers=1024,
              log_capacity=1024, msg_slots=1024, max_epoch=100_000, max_records=64,
              chunk_walks=10_000_000, duration=1e-3, disabled_checks=INVARIANTS)


def test_mutations_can_be_extended(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(config, "MUTATIONS", ("none", "skip-hw-check"))
    assert RunConfig(mutation="skip-hw-check").mutation == "skip-hw-check"


def write(tmp_path: Path, text: str, name: str = "run.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_load_config_dash_and_underscore_keys(tmp_path: Path) -> None:
    path = write(tmp_path, 'log-capacity = 64\nmsg_slots = 8\npre-vote = false\ndisable-check = ["LogMatching"]\n')
    assert load_config(path) == {"log_capacity": 64, "msg_slots": 8, "pre_vote": False,
                                 "disabled_checks": ["LogMatching"]}
    path = write(tmp_path, 'disabled_checks = ["LogMatching"]\nchunk-walks = 5\n')
    assert load_config(path) == {"disabled_checks": ["LogMatching"], "chunk_walks": 5}


def test_load_config_unknown_key(tmp_path: Path) -> None:
    path = write(tmp_path, "voters = 3\nvoterz = 5\n")
    with pytest.raises(UsageError) as info:
        load_config(path)
    msg = str(info.value)
    assert "'voterz'" in msg and str(path) in msg
    assert "allowed keys: voters, observers, walks" in msg and "disable-check" in msg
    assert "\n" not in msg


def test_load_config_same_option_twice(tmp_path: Path) -> None:
    path = write(tmp_path, "log-capacity = 8\nlog_capacity = 9\n")
    with pytest.raises(UsageError, match="--log-capacity twice"):
        load_config(path)


def test_load_config_bad_toml(tmp_path: Path) -> None:
    path = write(tmp_path, "voters = = 3\n[[broken\n")
    with pytest.raises(UsageError) as info:
        load_config(path)
    msg = str(info.value)
    assert msg.startswith(f"invalid TOML in config file {str(path)!r}: ")
    assert "line 1" in msg and "\n" not in msg


def test_load_config_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bin.toml"
    path.write_bytes(b"voters = \xff\n")
    with pytest.raises(UsageError, match="invalid TOML in config file"):
        load_config(path)


def test_load_config_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "missing.toml"
    with pytest.raises(UsageError) as info:
        load_config(path)
    assert str(info.value) == f"cannot read config file {str(path)!r}: No such file or directory"


def test_load_config_directory(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read config file"):
        load_config(tmp_path)


def test_make_config_precedence(tmp_path: Path) -> None:
    path = write(tmp_path, "voters = 5\ndepth = 900\nweights = 'fixed'\n")
    cfg = make_config(path, voters=7, depth=None, seed=None)
    assert cfg.voters == 7  # CLI beats TOML
    assert cfg.depth == 900  # TOML beats default, None means "not given"
    assert cfg.weights == "fixed"
    assert cfg.seed == 0  # default
    assert make_config(None, voters=None) == RunConfig()
    assert make_config(path, pre_vote=False).pre_vote is False


def test_make_config_type_error_in_toml_names_file(tmp_path: Path) -> None:
    path = write(tmp_path, 'voters = "three"\n')
    with pytest.raises(UsageError) as info:
        make_config(path)
    assert str(info.value) == f"in config file {str(path)!r}: voters must be an integer, got 'three'"


def test_make_config_bad_cli_value_over_good_toml(tmp_path: Path) -> None:
    path = write(tmp_path, "voters = 5\n")
    with pytest.raises(UsageError) as info:
        make_config(path, voters=12)
    assert str(info.value) == "--voters must be between 1 and 9, got 12"
    # A bad TOML value overridden on the command line is not an error.
    bad = write(tmp_path, "voters = 50\n", "bad.toml")
    assert make_config(bad, voters=4).voters == 4


def test_make_config_toml_unknown_invariant(tmp_path: Path) -> None:
    path = write(tmp_path, 'disable-check = ["Foo"]\n')
    with pytest.raises(UsageError, match=r"unknown invariant 'Foo' in disable-check"):
        make_config(path)


def test_make_config_rejects_unknown_cli_option() -> None:
    with pytest.raises(TypeError, match="voterz"):
        make_config(None, voterz=3)


ROUND_TRIP = [
    RunConfig(),
    RunConfig(voters=5, observers=0, walks=1000, depth=20, seed=2**63 - 1, duration=0.1, workers=4,
              weights="fixed", out="runs/a b/c", pre_vote=False, disabled_checks=("LogMatching", "ElectionSafety"),
              log_capacity=1024, msg_slots=2, max_epoch=100_000, max_records=64, walk_stats="histogram",
              chunk_walks=1),
    RunConfig(out='we"ird\\path\t\x7fé/ü', duration=1e-7),
    RunConfig(duration=12345678.9),
]


@pytest.mark.parametrize("cfg", ROUND_TRIP)
def test_to_toml_round_trip(tmp_path: Path, cfg: RunConfig) -> None:
    path = write(tmp_path, cfg.to_toml(), "config.toml")
    assert make_config(path) == cfg


def test_to_dict_is_json() -> None:
    cfg = RunConfig(disabled_checks=("LogMatching",), walks=3)
    data = json.loads(json.dumps(cfg.to_dict()))
    assert data["disabled_checks"] == ["LogMatching"]
    assert data["walks"] == 3 and data["duration"] is None
    assert RunConfig(**data) == cfg
    assert list(data) == list(config.FIELD_NAMES)


def test_a_mutation_needs_the_feature_it_breaks() -> None:
    for mutation, flag in (("snapshot-above-hw", "--snapshots"),
                           ("reconfig-before-commit", "--reconfig"),
                           ("two-pending-changes", "--reconfig")):
        with pytest.raises(UsageError) as info:
            RunConfig(mutation=mutation)
        assert str(info.value).startswith(f"--mutation {mutation} needs {flag}")
    RunConfig(mutation="two-pending-changes", reconfig=True)


def test_every_option_has_a_group_and_only_execution_is_free_on_resume() -> None:
    import dataclasses

    from kraftwalk.config import GROUPS, WALK_GROUPS, fields_of
    from kraftwalk.run.resume import FREE_ON_RESUME

    names = [f.name for f in dataclasses.fields(RunConfig)]
    assert sorted(fields_of(*GROUPS)) == sorted(names)
    assert set(WALK_GROUPS) < set(GROUPS)
    assert set(FREE_ON_RESUME) == set(fields_of("execution"))
    assert not set(FREE_ON_RESUME) & set(fields_of(*WALK_GROUPS))
    # what decides a walk's actions is in a walk group
    for name in ("voters", "seed", "depth", "mutation", "crash_weight", "weights", "pre_vote"):
        assert name in fields_of(*WALK_GROUPS), name
    with pytest.raises(ValueError):
        fields_of("no-such-group")


# ---- the Kafka release ------------------------------------------------------------------
def test_the_kafka_release_defaults_to_the_newest_and_sets_pre_vote():
    from kraftwalk.vocabulary.releases import DEFAULT

    assert RunConfig().kafka == DEFAULT and RunConfig().pre_vote is True
    assert RunConfig(kafka="3.9").pre_vote is False      # pre-vote came with 4.0
    assert RunConfig(kafka="4.0.0").kafka == "4.0"      # an alias names its release
    assert RunConfig(kafka=4.1).kafka == "4.1"          # TOML may write it as a number
    assert RunConfig(kafka="3.9", pre_vote=True).pre_vote is True  # a variant, asked for


def test_an_unknown_kafka_release_is_a_usage_error_naming_the_known_ones():
    with pytest.raises(UsageError) as e:
        RunConfig(kafka="5.0")
    assert "--kafka '5.0'" in str(e.value) and "3.9, 3.9.1, 3.9.2, 4.0" in str(e.value)


def test_the_kafka_release_round_trips_through_config_toml(tmp_path):
    cfg = RunConfig(kafka="4.0", walks=10)
    path = tmp_path / "config.toml"
    path.write_text(cfg.to_toml())
    assert 'kafka = "4.0"' in path.read_text() and make_config(path) == cfg
