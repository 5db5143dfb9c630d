"""Settings of a timed run (``kraftwalk elect``): profiles, timing overrides, TOML.

Precedence is CLI > TOML file > profile > Kafka's defaults. Every timing parameter
is named and documented once, in :data:`kraftwalk.vocabulary.timing.TIMING`; this
module only validates values and says which profile changes what.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from kraftwalk.config import BACKENDS, MAX_FLUSH_SECONDS, effective_workers
from kraftwalk.errors import UsageError
from kraftwalk.vocabulary.timing import (
    BEGIN_QUORUM_EPOCH_NAMES, ELECTION_LOSS_NAMES, FETCH_PURGATORY_NAMES, LATENCY_NAMES, OBSERVER_FETCH_NAMES, MAX_TIME_MS, SCENARIO_NAMES, TIMING, TIMING_BY_NAME,
)
from kraftwalk.vocabulary import releases
from kraftwalk.vocabulary.mutations import MUTATION_NAMES
from kraftwalk.vocabulary.properties import INVARIANT_NAMES, LIVENESS_NAMES

# Timing profiles: overrides of Kafka's defaults, with the pre-vote settings they run.
PROFILES: dict[str, dict[str, Any]] = {
    "kafka": {},
    # Ongaro's dissertation, chapter 9: a follower's timer is a randomized election
    # timeout restarted by the leader's heartbeats (here every follower's at the fault,
    # as one heartbeat would), a candidate runs again only when its election timeout
    # expires (no backoff, not even after a rejection), no pre-vote, no held fetches
    # (a heartbeat is answered at once), no append linger (Kafka's batching).
    "ongaro": {"election_timeout_ms": 150.0, "randomized_fetch_timeout": 1.0,
               "sync_timers": 1.0, "election_backoff_max_ms": 0.0, "election_loss": "wait",
               "candidate_timeout_backoff": 0.0, "fetch_max_wait_ms": 0.0,
               "append_linger_ms": 0.0, "latency": "fixed", "latency_a_ms": 1.0},
    # The dissertation's simulated WAN: timeouts 300-600 ms, one-way latency 30-40 ms.
    "ongaro-wan": {"election_timeout_ms": 300.0, "randomized_fetch_timeout": 1.0,
                   "sync_timers": 1.0, "election_backoff_max_ms": 0.0,
                   "election_loss": "wait", "candidate_timeout_backoff": 0.0,
                   "fetch_max_wait_ms": 0.0, "append_linger_ms": 0.0, "latency": "uniform",
                   "latency_a_ms": 30.0, "latency_b_ms": 40.0},
}
# Pre-vote of a profile's walks (None: the Kafka release's)
PROFILE_PRE_VOTE = {"kafka": None, "ongaro": (False,), "ongaro-wan": (False,)}
PROFILE_HELP = {
    "kafka": "Kafka's defaults, and the release's rules (--kafka; each value's config name "
             "in the timing table of docs/timed-mode.md)",
    "ongaro": "Raft as in Ongaro's dissertation ch. 9: randomized follower timers "
              "150-300 ms restarted together, no backoff, no pre-vote, 1 ms latency",
    "ongaro-wan": "the dissertation's simulated WAN: timeouts 300-600 ms, latency 30-40 ms",
}
# Parameters given as names rather than numbers.
NAMED_VALUES = {"latency": LATENCY_NAMES, "scenario": SCENARIO_NAMES,
                "election_loss": ELECTION_LOSS_NAMES,
                "begin_quorum_epoch": BEGIN_QUORUM_EPOCH_NAMES,
                "fetch_purgatory": FETCH_PURGATORY_NAMES,
                "observer_fetch": OBSERVER_FETCH_NAMES}
# Flags (0 or 1) and values that are fractions rather than times.
FLAGS = ("randomized_fetch_timeout", "sync_timers", "candidate_timeout_backoff")
MAX_VOTERS, MAX_OBSERVERS = 9, 4
KEYS = ("kafka", "voters", "observers", "pre_vote", "scenario", "profile", "walks", "seed",
        "workers", "backend", "flush_seconds",
        "mutation", "disabled_checks", "chunk_walks", "depth", "walk_stats", "timing")
# Where and how walks run, never what they do: a resumed run may change these.
EXECUTION = ("workers", "backend", "flush_seconds", "chunk_walks")
WALK_STATS = ("rows", "histogram")


def _fail(message: str) -> UsageError:
    return UsageError(message)


def timing_value(name: str, value: Any) -> float:
    """Check one timing override; the number the kernels get (before ms -> us)."""
    if name not in TIMING_BY_NAME or name == "scenario":
        allowed = ", ".join(t.name for t in TIMING.values() if t.name != "scenario")
        raise _fail(f"unknown timing parameter {name!r}; allowed: {allowed}")
    if name in NAMED_VALUES:
        names = NAMED_VALUES[name]
        if value not in names:
            raise _fail(f"--timing {name}={value!r} is not one of: {', '.join(names)}")
        return float(names.index(value))
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise _fail(f"--timing {name}={value!r} is not a number") from None
    if isinstance(value, bool) or not math.isfinite(x) or x < 0:
        raise _fail(f"--timing {name}={value!r} must be a finite number >= 0")
    if name in FLAGS and x not in (0.0, 1.0):
        raise _fail(f"--timing {name}={value!r} must be 0 or 1")
    if name == "loss" and x >= 1:
        raise _fail(f"--timing loss={value!r} must be below 1 (a probability)")
    if name.endswith("_ms") and x > MAX_TIME_MS:
        raise _fail(f"--timing {name}={value!r} must be at most {MAX_TIME_MS:.0f} ms")
    if name == "election_timeout_ms" and x < 1:
        raise _fail(f"--timing election_timeout_ms={value!r} must be at least 1 ms")
    if name == "check_quorum_factor" and x < 1:
        raise _fail(f"--timing check_quorum_factor={value!r} must be at least 1")
    return x


def parse_timing(items: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` strings from the command line as a dict."""
    out: dict[str, Any] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise _fail(f"--timing {item!r} must be NAME=VALUE, e.g. election_timeout_ms=500")
        out[name.strip()] = value.strip()
    return out


@dataclass(frozen=True)
class ElectConfig:
    kafka: tuple[str, ...] = (releases.DEFAULT,)  # the Kafka releases whose rules walks follow
    voters: tuple[int, ...] = (3, 5, 7)
    observers: int = 1                  # as swarm's: ReplicasCatchUp follows an observer too
    pre_vote: tuple[bool, ...] = ()     # empty: the profile's (kafka: each release's)
    scenario: str = "leader-crash"
    profile: str = "kafka"
    walks: int = 2000
    seed: int = 0
    workers: int = 0
    backend: str = "loky"               # where chunks run: local processes, Dask or Ray
    flush_seconds: float = 10.0         # longest a finished chunk waits to be saved
    mutation: str = "none"
    disabled_checks: tuple[str, ...] = ()  # properties not checked (their walks go on)
    chunk_walks: int = 250
    depth: int = 1_000_000              # most actions a walk may take
    walk_stats: str = "rows"            # rows: one per walk; histogram: counts per value
    timing: dict = field(default_factory=dict)  # overrides on top of the profile

    def __post_init__(self) -> None:
        v = self.voters if isinstance(self.voters, (list, tuple)) else (self.voters,)
        object.__setattr__(self, "voters", tuple(v))
        if isinstance(self.disabled_checks, list):
            object.__setattr__(self, "disabled_checks", tuple(self.disabled_checks))
        pv = self.pre_vote if isinstance(self.pre_vote, (list, tuple)) else (self.pre_vote,)
        object.__setattr__(self, "pre_vote", tuple(pv))
        k = self.kafka if isinstance(self.kafka, (list, tuple)) else (self.kafka,)
        try:
            k = tuple(dict.fromkeys(releases.release_of(str(r)) for r in k))
        except ValueError as err:
            raise _fail(str(err)) from None
        object.__setattr__(self, "kafka", k or (releases.DEFAULT,))
        self.validate()
        if not self.pre_vote and PROFILE_PRE_VOTE[self.profile]:
            object.__setattr__(self, "pre_vote", PROFILE_PRE_VOTE[self.profile])
        object.__setattr__(self, "voters", tuple(dict.fromkeys(self.voters)))
        object.__setattr__(self, "timing", {  # canonical values: numbers, or names
            k: v if k in NAMED_VALUES else timing_value(k, v) for k, v in self.timing.items()})
        object.__setattr__(self, "pre_vote", tuple(dict.fromkeys(self.pre_vote)))
        object.__setattr__(self, "flush_seconds", float(self.flush_seconds))

    def validate(self) -> None:
        if not self.voters:
            raise _fail("--voters needs at least one value")
        for v in self.voters:
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_VOTERS:
                raise _fail(f"--voters {v!r} is not an integer in 1..{MAX_VOTERS}")
        for name, lo, hi in (("observers", 0, MAX_OBSERVERS), ("walks", 1, 10**9),
                             ("seed", 0, 2**63 - 1), ("workers", 0, 1024),
                             ("chunk_walks", 1, 10**6), ("depth", 1, 10**8)):
            x = getattr(self, name)
            if isinstance(x, bool) or not isinstance(x, int) or not lo <= x <= hi:
                raise _fail(f"--{name.replace('_', '-')} {x!r} is not an integer in {lo}..{hi:_}")
        for p in self.pre_vote:
            if not isinstance(p, bool):
                raise _fail(f"--pre-vote {p!r} is not one of: on, off")
        if self.scenario not in SCENARIO_NAMES:
            raise _fail(f"--scenario {self.scenario!r} is not one of: {', '.join(SCENARIO_NAMES)}")
        if self.profile not in PROFILES:
            raise _fail(f"--profile {self.profile!r} is not one of: {', '.join(PROFILES)}")
        if self.backend not in BACKENDS:
            raise _fail(f"--backend {self.backend!r} is not one of: {', '.join(BACKENDS)}")
        f = self.flush_seconds
        if (isinstance(f, bool) or not isinstance(f, (int, float)) or not math.isfinite(f)
                or not 0 <= f <= MAX_FLUSH_SECONDS):
            raise _fail(f"--flush-seconds {f!r} is not a number of seconds in "
                        f"0..{MAX_FLUSH_SECONDS:g}")
        if self.walk_stats not in WALK_STATS:
            raise _fail(f"--walk-stats {self.walk_stats!r} is not one of: {', '.join(WALK_STATS)}")
        if self.mutation not in MUTATION_NAMES:
            raise _fail(f"--mutation {self.mutation!r} is not one of: {', '.join(MUTATION_NAMES)}")
        known = (*INVARIANT_NAMES, *LIVENESS_NAMES)
        if not isinstance(self.disabled_checks, (list, tuple)):
            raise _fail(f"--disable-check must be a list of property names, got "
                        f"{self.disabled_checks!r}")
        for name in self.disabled_checks:
            if name not in known:
                raise _fail(f"unknown property {name!r} in --disable-check; known: "
                            + ", ".join(known))
        if not isinstance(self.timing, dict):
            raise _fail(f"timing {self.timing!r} must be a table of NAME = VALUE")
        for name, value in self.timing.items():
            timing_value(name, value)
        t = self.timing_ms()
        if t["latency_b_ms"] < t["latency_a_ms"] and t["latency"] == "uniform":
            raise _fail(f"--timing latency_b_ms={t['latency_b_ms']} is below latency_a_ms="
                        f"{t['latency_a_ms']}; a uniform latency needs low <= high")

    @property
    def release(self) -> str:
        """The one release of a config made for one cell's release (``for_release``)."""
        if len(self.kafka) != 1:
            raise ValueError(f"a config of releases {self.kafka} has no one release")
        return self.kafka[0]

    def for_release(self, kafka: str) -> "ElectConfig":
        """This config for one of its releases, with that release's pre-vote."""
        import dataclasses

        return dataclasses.replace(self, kafka=(kafka,), pre_vote=self.pre_votes(kafka))

    def pre_votes(self, kafka: str) -> tuple[bool, ...]:
        """The pre-vote settings a release's walks run: as given, else the release's."""
        return self.pre_vote or (releases.has(kafka, releases.PRE_VOTE),)

    def timing_ms(self) -> dict[str, Any]:
        """Every timing parameter as a walk of the first release gets it (one per cell:
        ``for_release``): Kafka's defaults < the release's rules < profile < overrides."""
        out: dict[str, Any] = {t.name: t.default for t in TIMING.values()}
        for name, names in NAMED_VALUES.items():
            out[name] = names[int(TIMING[TIMING_BY_NAME[name]].default)]
        out.update(releases.timing(self.kafka[0]))
        out["scenario"] = self.scenario
        out.update(PROFILES[self.profile])
        out.update(self.timing)
        return out

    @property
    def effective_workers(self) -> int:
        return effective_workers(self.workers)

    def cells(self) -> list[tuple[str, int, bool]]:
        """(release, voters, pre-vote) of every cell, in the order they run."""
        return [(k, v, p) for k in self.kafka for v in self.voters for p in self.pre_votes(k)]

    def to_toml(self) -> str:
        from kraftwalk.config import _toml_value

        lines = ["# kraftwalk elect configuration; repeat with: kraftwalk elect --config config.toml"]
        for key in KEYS:
            if key == "timing":
                continue
            value = getattr(self, key)
            if key == "pre_vote":
                if not value:
                    continue  # each release's own
                value = ["on" if p else "off" for p in value]
            elif key in ("voters", "kafka", "disabled_checks"):
                if key == "disabled_checks" and not value:
                    continue
                value = list(value)
            lines.append(f"{key.replace('_', '-')} = {_toml_value(value)}")
        lines.append("\n[timing]  # every parameter as this run used it (profile included)")
        rules = [n for n in releases.timing(self.kafka[0])
                 if n not in self.timing and n not in PROFILES[self.profile]]
        if rules:
            lines.append(f"# {', '.join(rules)}: as the release has it (kafka above)")
        for name, value in self.timing_ms().items():
            if name != "scenario" and name not in rules:
                lines.append(f"{name} = {_toml_value(value)}")
        return "\n".join(lines) + "\n"


def pre_vote_values(items: list[str]) -> tuple[bool, ...]:
    out = []
    for item in items:
        if item == "both":
            out += [False, True]
        elif item in ("on", "off"):
            out.append(item == "on")
        else:
            raise _fail(f"--pre-vote {item!r} is not one of: on, off, both")
    return tuple(out)


def load_elect_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A TOML file's settings for ``kraftwalk elect`` (keys as the option names)."""
    from kraftwalk.config import read_toml

    return elect_values(read_toml(path, "config file"), f"config file {os.fspath(path)!r}")


def key_name(key: str) -> str:
    """The ElectConfig field a TOML key names (``disable-check`` as the option reads)."""
    name = key.replace("-", "_")
    return "disabled_checks" if name == "disable_check" else name


def elect_values(data: dict[str, Any], shown: str) -> dict[str, Any]:
    """Settings for ``kraftwalk elect`` from a TOML table (``shown`` names it in errors):
    keys checked, pre-vote spellings and the [timing] table normalized."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = key_name(key)
        if name not in KEYS:
            raise _fail(f"unknown key {key!r} in {shown}; allowed keys: "
                        + ", ".join(k.replace("_", "-") for k in KEYS))
        out[name] = value
    if "pre_vote" in out:
        pv = out["pre_vote"]
        items = pv if isinstance(pv, list) else [pv]
        if all(isinstance(p, bool) for p in items):
            out["pre_vote"] = tuple(items)
        elif all(isinstance(p, str) for p in items):
            out["pre_vote"] = pre_vote_values(items)
        else:
            raise _fail(f"pre-vote {pv!r} in {shown} must be on, off, both or a "
                        "list of them")
    timing = out.get("timing", {})
    if not isinstance(timing, dict):
        raise _fail(f"timing = {timing!r} in {shown} must be a [timing] table of "
                    "NAME = VALUE")
    if "scenario" in timing:
        raise _fail(f"scenario is set at the top of {shown}, not under [timing]")
    legacy_timing(timing)
    return out


def legacy_timing(timing: dict[str, Any]) -> None:
    """A run folder written before the lost-election rule followed the release: its
    ``backoff_on_rejection`` flag is ``election_loss``, and its timed-out Candidates
    backed off (3.9's rule), so the folder replays as it ran."""
    if "backoff_on_rejection" in timing:
        flag = timing.pop("backoff_on_rejection")
        timing.setdefault("election_loss", "wait" if flag in (0, 0.0, "0") else "backoff")
        timing.setdefault("candidate_timeout_backoff", 1.0)


def make_elect_config(toml_path=None, **cli: Any) -> ElectConfig:
    """Defaults < TOML file < command line (None: not given). A file's [timing] table
    that repeats a profile's values is harmless: they are the same values."""
    values = load_elect_toml(toml_path) if toml_path is not None else {}
    timing = dict(values.pop("timing", {}) or {})
    timing.update(cli.pop("timing", None) or {})
    values.update({k: v for k, v in cli.items() if v is not None and v != ()})
    try:
        return ElectConfig(**values, timing=timing)
    except TypeError as err:  # a wrong type in the file, e.g. voters = "three"
        raise _fail(f"bad value in config file: {err}") from None

