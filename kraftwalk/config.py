"""Run configuration: defaults, validation, TOML loading and writing.

Precedence is CLI > TOML file > defaults (:func:`make_config`). Every check
raises :class:`~kraftwalk.errors.UsageError` with one line that names the bad
value and what is allowed, so the CLI can print it as-is.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - pyproject pulls in tomli for 3.10
    import tomli as tomllib

from kraftwalk.errors import UsageError
from kraftwalk.vocabulary.mutations import MUTATION_NAMES, mutation_needs
from kraftwalk.vocabulary.families import WEIGHT_OPTIONS
from kraftwalk.vocabulary.properties import INVARIANT_NAMES
from kraftwalk.vocabulary import releases

# The known-bug mutations (kraftwalk.vocabulary.mutations); looked up at validation time.
MUTATIONS: tuple[str, ...] = MUTATION_NAMES

# The safety invariants --disable-check takes (kraftwalk.vocabulary.properties).
INVARIANTS: tuple[str, ...] = INVARIANT_NAMES

WEIGHTS: tuple[str, ...] = ("swarm", "fixed", "uniform")
WALK_STATS: tuple[str, ...] = ("rows", "histogram")
BACKENDS: tuple[str, ...] = ("loky", "dask", "ray")

# Weight options of the fault families (the centre of the swarm's draws, the fixed
# mode's weight): unset keeps the weights mode's own value; declared with their
# families (kraftwalk.vocabulary.families).
FAULT_WEIGHTS: dict[str, str] = WEIGHT_OPTIONS
MAX_FAULT_WEIGHT = 1000.0

DEFAULT_DURATION = 60.0  # seconds, used when neither walks nor duration is set
MAX_FLUSH_SECONDS = 3600.0
RUNS_DIR = "kraftwalk-runs"  # parent of run folders when --out is not given

# Inclusive ranges of the integer options.
INT_RANGES: dict[str, tuple[int, int]] = {
    "voters": (1, 9),
    "observers": (0, 4),
    "depth": (1, 10_000_000),
    "seed": (0, 2**63 - 1),
    "workers": (0, 1024),
    "log_capacity": (4, 1024),
    "msg_slots": (2, 1024),
    "max_epoch": (2, 100_000),
    "max_records": (1, 64),
    "chunk_walks": (1, 10_000_000),
}


def fields_of(*groups: str) -> tuple[str, ...]:
    """The RunConfig fields of ``groups``, in declaration order."""
    unknown = set(groups) - set(GROUPS)
    if unknown:
        raise ValueError(f"no option group {sorted(unknown)}")
    return tuple(f.name for f in dataclasses.fields(RunConfig) if f.metadata["group"] in groups)


def option_name(field_name: str) -> str:
    """The CLI spelling of a config field, used in every error message."""
    if field_name == "disabled_checks":
        return "--disable-check"
    return "--" + field_name.replace("_", "-")


def effective_workers(workers: int) -> int:
    """Workers to use: ``workers``, or one per CPU core when it is 0."""
    return workers or (os.cpu_count() or 1)


def new_run_id() -> str:
    """UTC timestamp plus 6 random hex chars: sortable and collision-safe."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{os.urandom(3).hex()}"


def _fail(field_name: str, message: str) -> UsageError:
    err = UsageError(message)
    err.field = field_name  # type: ignore[attr-defined]  # lets make_config name the TOML file
    return err


def _is_int(value: Any) -> bool:
    # bool is an int subclass, but `voters = true` is a mistake, not 1.
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


# Every option belongs to one group, which says what it is to a run: the first five
# decide what the walks are (a resumed run must keep them); execution only where and
# how they run and are saved; files what the run folder holds.
GROUPS: dict[str, str] = {
    "cluster": "the cluster modelled: its shape and protocol features",
    "checks": "what is checked, and the known bug compiled in",
    "bounds": "the kernels' fixed sizes and the length of a walk",
    "faults": "how often each kind of action is drawn",
    "budget": "which walks run: the seed, how many, for how long",
    "execution": "where and how the walks run and are saved: no walk changes with them",
    "files": "what the run folder holds",
}
WALK_GROUPS = ("cluster", "checks", "bounds", "faults", "budget")


def _in(group: str, default: Any = None) -> Any:
    """A RunConfig field of ``group``."""
    return field(default=default, metadata={"group": group})


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines a swarm run; validated on construction."""

    voters: int = _in("cluster", 3)
    observers: int = _in("cluster", 1)
    walks: int | None = _in("budget")
    depth: int = _in("bounds", 500)
    seed: int = _in("budget", 0)
    duration: float | None = _in("budget")
    workers: int = _in("execution", 0)
    weights: str = _in("faults", "swarm")
    out: str | None = _in("execution")
    kafka: str = _in("cluster", releases.DEFAULT)
    pre_vote: bool | None = _in("cluster")  # None: as the Kafka release has it (on from 4.0)
    snapshots: bool = _in("cluster", False)
    reconfig: bool = _in("cluster", False)
    disk_loss: bool = _in("cluster", False)
    mutation: str = _in("checks", "none")
    disabled_checks: tuple[str, ...] = _in("checks", ())
    log_capacity: int = _in("bounds", 32)
    msg_slots: int = _in("bounds", 16)
    max_epoch: int = _in("bounds", 60)
    max_records: int = _in("bounds", 4)
    walk_stats: str = _in("files", "rows")
    backend: str = _in("execution", "loky")
    chunk_walks: int = _in("execution", 2048)
    flush_seconds: float = _in("execution", 10.0)
    crash_weight: float | None = _in("faults")
    partition_weight: float | None = _in("faults")
    lose_weight: float | None = _in("faults")
    duplicate_weight: float | None = _in("faults")

    def __post_init__(self) -> None:
        self._normalize()
        self.validate()
        self._canonical_numbers()

    def _normalize(self) -> None:
        """Accept harmless spellings of containers and paths (list, Path)."""
        set_ = object.__setattr__  # frozen dataclass: only legal during init
        if isinstance(self.out, os.PathLike):
            set_(self, "out", os.fspath(self.out))
        if isinstance(self.kafka, (str, int, float)) and not isinstance(self.kafka, bool):
            try:  # an alias (4.0.0) names its release; a bad value is validate()'s to report
                set_(self, "kafka", releases.release_of(str(self.kafka)))
            except ValueError:
                pass
        if self.pre_vote is None and self.kafka in releases.RELEASES:
            set_(self, "pre_vote", releases.has(self.kafka, releases.PRE_VOTE))
        checks = self.disabled_checks
        if isinstance(checks, str):
            checks = (checks,)
        if isinstance(checks, (list, tuple)):
            try:
                checks = tuple(dict.fromkeys(checks))  # dedupe, keep order
            except TypeError:  # unhashable entry (e.g. a TOML table): validate() names it
                checks = tuple(checks)
            set_(self, "disabled_checks", checks)

    def _canonical_numbers(self) -> None:
        """After validation (so messages show the value as given): numpy ints -> int, 60 -> 60.0."""
        set_ = object.__setattr__
        for name in (*INT_RANGES, "walks"):
            value = getattr(self, name)
            if value is not None:
                set_(self, name, int(value))
        if self.duration is not None:
            set_(self, "duration", float(self.duration))
        set_(self, "flush_seconds", float(self.flush_seconds))
        for name in FAULT_WEIGHTS:
            if getattr(self, name) is not None:
                set_(self, name, float(getattr(self, name)))

    def validate(self) -> None:
        """Raise UsageError naming the first bad value."""
        for name, (lo, hi) in INT_RANGES.items():
            value = getattr(self, name)
            if not _is_int(value):
                raise _fail(name, f"{option_name(name)} must be an integer, got {value!r}")
            if not lo <= value <= hi:
                if name == "workers":
                    allowed = f"0 (all cores) or between 1 and {hi}"
                else:
                    allowed = f"between {lo} and {hi}"
                raise _fail(name, f"{option_name(name)} must be {allowed}, got {value}")

        if self.walks is not None and not (_is_int(self.walks) and self.walks >= 1):
            raise _fail("walks", f"--walks must be an integer >= 1, got {self.walks!r}")

        d = self.duration
        if d is not None and not (_is_number(d) and math.isfinite(d) and d > 0):
            shown = d if _is_number(d) else repr(d)
            raise _fail("duration", f"--duration must be a finite number of seconds > 0, got {shown}")

        f = self.flush_seconds
        if not (_is_number(f) and math.isfinite(f) and 0 <= f <= MAX_FLUSH_SECONDS):
            shown = f if _is_number(f) else repr(f)
            raise _fail("flush_seconds", "--flush-seconds must be a number of seconds between 0 "
                        f"and {MAX_FLUSH_SECONDS:g}, got {shown}")

        for name, family in FAULT_WEIGHTS.items():
            x = getattr(self, name)
            if x is not None and not (_is_number(x) and math.isfinite(x)
                                      and 0 <= x <= MAX_FAULT_WEIGHT):
                shown = x if _is_number(x) else repr(x)
                raise _fail(name, f"{option_name(name)} must be a number between 0 and "
                            f"{MAX_FAULT_WEIGHT:g} (the {family} family's weight), got {shown}")

        choices = {"weights": WEIGHTS, "walk_stats": WALK_STATS, "mutation": MUTATIONS,
                   "backend": BACKENDS}
        for name, allowed in choices.items():
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise _fail(
                    name,
                    f"{option_name(name)} must be one of {', '.join(allowed)}, got {value!r}",
                )

        if self.kafka not in releases.RELEASES:
            try:
                releases.release_of(str(self.kafka))
            except ValueError as e:
                raise _fail("kafka", str(e)) from None
        if not isinstance(self.pre_vote, bool):
            raise _fail("pre_vote", f"--pre-vote must be true or false, got {self.pre_vote!r}")
        if not isinstance(self.snapshots, bool):
            raise _fail("snapshots", f"--snapshots must be true or false, got {self.snapshots!r}")
        if not isinstance(self.reconfig, bool):
            raise _fail("reconfig", f"--reconfig must be true or false, got {self.reconfig!r}")
        if not isinstance(self.disk_loss, bool):
            raise _fail("disk_loss",
                        f"--disk-loss must be true or false, got {self.disk_loss!r}")
        needs = mutation_needs(self.mutation)
        if "snapshots" in needs and not self.snapshots:
            raise _fail("mutation", f"--mutation {self.mutation} needs --snapshots (it breaks "
                        "the snapshot protocol)")
        if "reconfig" in needs and not self.reconfig:
            raise _fail("mutation", f"--mutation {self.mutation} needs --reconfig (it breaks "
                        "voter changes)")
        if "disk_loss" in needs and not self.disk_loss:
            raise _fail("mutation", f"--mutation {self.mutation} needs --disk-loss (it breaks "
                        "directory ids)")

        if self.out is not None and not (isinstance(self.out, str) and self.out.strip()):
            raise _fail("out", f"--out must be a non-empty folder path, got {self.out!r}")

        if not isinstance(self.disabled_checks, tuple):
            raise _fail(
                "disabled_checks",
                f"--disable-check must be a list of invariant names, got {self.disabled_checks!r}",
            )
        for name in self.disabled_checks:
            if not isinstance(name, str) or name not in INVARIANTS:
                raise _fail(
                    "disabled_checks",
                    f"unknown invariant {name!r} in --disable-check; known: {', '.join(INVARIANTS)}",
                )

    @property
    def effective_duration(self) -> float | None:
        """Time budget in seconds; None when the run is bounded by walks only."""
        if self.walks is None and self.duration is None:
            return DEFAULT_DURATION
        return self.duration

    @property
    def effective_workers(self) -> int:
        return effective_workers(self.workers)

    @property
    def run_id(self) -> str | None:
        """The run folder's name, or None while ``out`` is unset."""
        if self.out is None:
            return None
        return os.path.basename(os.path.normpath(self.out))

    def with_out(self) -> RunConfig:
        """This config with ``out`` filled in: ``kraftwalk-runs/<new_run_id()>`` if unset."""
        if self.out is not None:
            return self
        return dataclasses.replace(self, out=os.path.join(RUNS_DIR, new_run_id()))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of all fields (tuples become lists)."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def to_toml(self) -> str:
        """TOML text that :func:`load_config` reads back to an equal config.

        Keys use the CLI spelling. TOML has no null, so unset options become
        comments and fall back to their (None) default when read back.
        """
        lines = [
            "# kraftwalk run configuration; reuse with: kraftwalk swarm --config config.toml",
        ]
        for f in dataclasses.fields(self):
            key = option_name(f.name)[2:]
            value = getattr(self, f.name)
            if value is None:
                lines.append(f"# {key} is not set")
            else:
                lines.append(f"{key} = {_toml_value(value)}")
        return "\n".join(lines) + "\n"


FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RunConfig))


def _key_aliases() -> dict[str, str]:
    aliases: dict[str, str] = {}
    for name in FIELD_NAMES:
        aliases[name] = name
        aliases[name.replace("_", "-")] = name
    for alias in ("disable-check", "disable_check"):
        aliases[alias] = "disabled_checks"
    return aliases


KEY_ALIASES: dict[str, str] = _key_aliases()


def _toml_string(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:  # TOML forbids raw control chars
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)  # shortest round-tripping form; always valid TOML when finite
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def read_toml(path: str | os.PathLike[str], what: str) -> dict[str, Any]:
    """A TOML file's contents; a missing or bad file is one UsageError line naming it."""
    shown = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as e:
        raise UsageError(f"cannot read {what} {shown!r}: {e.strerror or e}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"invalid TOML in {what} {shown!r}: {_one_line(e)}") from None


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a TOML config file into a dict keyed by RunConfig field names.

    Values are not validated here (that happens in RunConfig), only the keys.
    """
    shown = os.fspath(path)
    data = read_toml(path, "config file")

    values: dict[str, Any] = {}
    for key, value in data.items():
        name = KEY_ALIASES.get(key)
        if name is None:
            allowed = ", ".join(option_name(n)[2:] for n in FIELD_NAMES)
            raise UsageError(f"unknown key {key!r} in config file {shown!r}; allowed keys: {allowed}")
        if name in values:
            raise UsageError(f"key {key!r} in config file {shown!r} sets {option_name(name)} twice")
        values[name] = value
    return values


def _is_own_folder(out: Any, toml_path: Any) -> bool:
    """Does ``out`` name the folder the config file itself is in (a run folder's config)?"""
    if not isinstance(out, str) or not out.strip() or toml_path is None:
        return False
    try:
        return os.path.samefile(out, os.path.dirname(os.path.abspath(toml_path)))
    except OSError:
        return False


def make_config(toml_path: str | os.PathLike[str] | None = None, *,
                uses: tuple[str, ...] | None = None, **cli_overrides: Any) -> RunConfig:
    """Merge defaults < TOML file < CLI values (None = not given) and validate.

    ``uses`` names the settings a command takes from a config file; the file's other
    keys (a run folder's config.toml has them all) are ignored, not validated."""
    unknown = sorted(set(cli_overrides) - set(FIELD_NAMES))
    if unknown:  # a programming error in a command, not a user error
        raise TypeError(f"make_config() got unknown options: {', '.join(unknown)}")

    from_file = load_config(toml_path) if toml_path is not None else {}
    if _is_own_folder(from_file.get("out"), toml_path):
        del from_file["out"]  # a run folder's config.toml repeats its run in a new folder
    if uses is not None:
        from_file = {k: v for k, v in from_file.items() if k in uses}
    values = dict(from_file)
    values.update({k: v for k, v in cli_overrides.items() if v is not None})
    try:
        return RunConfig(**values)
    except UsageError as e:
        bad = getattr(e, "field", None)
        if bad in from_file and cli_overrides.get(bad) is None:  # the file's value was used
            # name the file's key, not an option the command may not have
            msg = str(e).replace(option_name(bad), option_name(bad)[2:], 1)
            raise _fail(bad, f"in config file {os.fspath(toml_path)!r}: {msg}") from None
        raise
