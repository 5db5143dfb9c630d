"""The command line's options, declared once, so every command spells and explains
them alike.

Each RunConfig field's option is an ``Annotated`` type whose default is None: None
means "not given", which lets a ``--config`` TOML file supply the value. The help
text states the real default, taken from :class:`~kraftwalk.config.RunConfig`.
A command takes the fields it uses with :func:`config_options`, which adds their
options and hands the values over as one dict::

    @config_options(*HUNT_KEYS)
    def hunt(values: dict, config: opts.Config = None, ...) -> None:
        cfg = make_config(config, uses=HUNT_KEYS, **values)
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kraftwalk.config import (
    DEFAULT_DURATION,
    FAULT_WEIGHTS,
    INT_RANGES,
    INVARIANTS,
    RUNS_DIR,
    RunConfig,
    fields_of,
    option_name,
)
from kraftwalk.vocabulary.families import weights_help
from kraftwalk.vocabulary.releases import RELEASES

_D = RunConfig()

# Help panels group the many options of run commands in `--help`.
PANEL_RUN = "Run size"
PANEL_CLUSTER = "Cluster model"
PANEL_BOUNDS = "State bounds"
PANEL_OUTPUT = "Output"


def _range(name: str) -> str:
    lo, hi = INT_RANGES[name]
    return f"{lo}..{hi:_}" if hi >= 10_000 else f"{lo}..{hi}"


def parse_int(text: str) -> int:
    """Typer parser whose error names the bad value (typer's own message does not)."""
    try:
        return int(text, 10)
    except (TypeError, ValueError):
        raise typer.BadParameter(f"{text!r} is not an integer") from None


def parse_float(text: str) -> float:
    """Typer parser whose error names the bad value."""
    try:
        return float(text)
    except (TypeError, ValueError):
        raise typer.BadParameter(f"{text!r} is not a number") from None


_INT_FIELDS = (*INT_RANGES, "walks")


def _option(field_name: str, help: str, default: Any, panel: str, **kwargs: Any) -> Any:
    """A typer.Option named after a RunConfig field, with its default in the help."""
    decls = kwargs.pop("decls", (option_name(field_name),))
    if field_name in _INT_FIELDS:
        kwargs.setdefault("parser", parse_int)
    elif field_name in ("duration", "flush_seconds", *FAULT_WEIGHTS):
        kwargs.setdefault("parser", parse_float)
    return typer.Option(
        *decls,
        help=f"{help} (default: {default})",
        show_default=False,  # the typer default is None; the real one is in the help
        rich_help_panel=panel,
        **kwargs,
    )


Voters = Annotated[
    Optional[int],
    _option("voters", f"Voters in the cluster ({_range('voters')}).", _D.voters, PANEL_CLUSTER, metavar="N"),
]
Observers = Annotated[
    Optional[int],
    _option(
        "observers",
        f"Observers: non-voting nodes that replicate the log ({_range('observers')}).",
        _D.observers,
        PANEL_CLUSTER,
        metavar="N",
    ),
]
Walks = Annotated[
    Optional[int],
    _option(
        "walks",
        "Number of random walks to run (>= 1). Without it the run lasts --duration.",
        "unset",
        PANEL_RUN,
        metavar="N",
    ),
]
Depth = Annotated[
    Optional[int],
    _option("depth", f"Checked steps per walk ({_range('depth')}).", _D.depth, PANEL_RUN, metavar="STEPS"),
]
Seed = Annotated[
    Optional[int],
    _option(
        "seed",
        "Master seed; the same seed and config replay the same walks (0..2**63-1).",
        _D.seed,
        PANEL_RUN,
        metavar="INT",
    ),
]
Duration = Annotated[
    Optional[float],
    _option(
        "duration",
        "Stop starting new walks after this many seconds (> 0). With --walks too, "
        "the run stops at whichever limit comes first.",
        f"{DEFAULT_DURATION:g} when --walks is not given",
        PANEL_RUN,
        metavar="SECONDS",
    ),
]
Workers = Annotated[
    Optional[int],
    _option("workers", "Worker processes; 0 uses all CPU cores (0..1024).", f"{_D.workers}", PANEL_RUN, metavar="N"),
]
ChunkWalks = Annotated[
    Optional[int],
    _option(
        "chunk_walks",
        "Walks per task handed to a worker; progress and output advance per chunk "
        f"({_range('chunk_walks')}).",
        _D.chunk_walks,
        PANEL_RUN,
        metavar="N",
    ),
]
Weights = Annotated[
    Optional[str],
    _option(
        "weights",
        "Action weights: 'swarm' draws new random weights per walk and leaves some fault "
        "families out (swarm testing, reaches rare interleavings); 'fixed' uses the tuned "
        "default weights for every walk; 'uniform' weighs every action family equally.",
        _D.weights,
        PANEL_CLUSTER,
        metavar="swarm|fixed|uniform",
    ),
]
Kafka = Annotated[
    Optional[str],
    _option(
        "kafka",
        "The Kafka release whose raft/ behaviour the walks follow: "
        + ", ".join(RELEASES) + " (`kraftwalk versions` lists what changed in each).",
        _D.kafka,
        PANEL_CLUSTER,
        metavar="VERSION",
    ),
]
PreVote = Annotated[
    Optional[bool],
    _option(
        "pre_vote",
        "Run the pre-vote phase (KIP-996) before elections; --no-pre-vote with a 4.x "
        "release is a variant Kafka has no setting for.",
        "as the release has it: on from Kafka 4.0",
        PANEL_CLUSTER,
        decls=("--pre-vote/--no-pre-vote",),
    ),
]
Snapshots = Annotated[
    Optional[bool],
    _option(
        "snapshots",
        "Model snapshots (KIP-630): nodes snapshot their committed log and clean the log up "
        "to it; a follower the leader's log no longer covers downloads its snapshot "
        "(FetchSnapshot). Adds the Snapshot* invariants' subjects and two action families.",
        "--no-snapshots",
        PANEL_CLUSTER,
        decls=("--snapshots/--no-snapshots",),
    ),
]
Reconfig = Annotated[
    Optional[bool],
    _option(
        "reconfig",
        "Model voter changes (KIP-853): leaders add and remove voters one at a time with "
        "VotersRecords, and every node votes and counts by the latest one in its log. Adds "
        "the AtMostOneUncommittedVoterSet and QuorumOverlap invariants' subjects and two "
        "action families.",
        "--no-reconfig",
        PANEL_CLUSTER,
        decls=("--reconfig/--no-reconfig",),
    ),
]
DiskLoss = Annotated[
    Optional[bool],
    _option(
        "disk_loss",
        "Model disk loss with directory ids (KIP-853): a node's disk is replaced and it "
        "starts empty under a new directory id, an observer until a leader removes its old "
        "key and adds the new one (with --reconfig). Adds one action family (disk_loss).",
        "--no-disk-loss",
        PANEL_CLUSTER,
        decls=("--disk-loss/--no-disk-loss",),
    ),
]
# The tuned weights, as declared (kraftwalk.vocabulary.families): --help loads no kernels.
TUNED_WEIGHTS_HELP = weights_help()


def _fault_weight(name: str) -> Any:
    family = FAULT_WEIGHTS[name]
    return Annotated[Optional[float], _option(
        name, f"Weight of the {family} fault family against the other families' weights "
        f"({TUNED_WEIGHTS_HELP}); the swarm draws each walk's weight around it. 0 switches "
        "the fault off; a sweep can vary it.",
        "the weights mode's own", PANEL_CLUSTER, metavar="W")]


CrashWeight = _fault_weight("crash_weight")
PartitionWeight = _fault_weight("partition_weight")
LoseWeight = _fault_weight("lose_weight")
DuplicateWeight = _fault_weight("duplicate_weight")


Mutation = Annotated[
    Optional[str],
    _option(
        "mutation",
        "Switch on one known protocol bug, to show the checker finds it "
        "(`kraftwalk mutations` lists them).",
        str(_D.mutation),
        PANEL_CLUSTER,
        metavar="NAME",
    ),
]
DisableCheck = Annotated[
    Optional[list[str]],
    _option(
        "disabled_checks",
        "Turn off one invariant; repeat to turn off several. Known: " + ", ".join(INVARIANTS) + ".",
        "all checks on",
        PANEL_CLUSTER,
        metavar="INVARIANT",
    ),
]
LogCapacity = Annotated[
    Optional[int],
    _option(
        "log_capacity",
        "Log entries each node can hold; a full log limits the walk and counts as "
        f"a bound hit ({_range('log_capacity')}).",
        _D.log_capacity,
        PANEL_BOUNDS,
        metavar="N",
    ),
]
MsgSlots = Annotated[
    Optional[int],
    _option(
        "msg_slots",
        "In-flight message slots of the simulated network; messages beyond them "
        f"are dropped, as a lossy network would ({_range('msg_slots')}).",
        _D.msg_slots,
        PANEL_BOUNDS,
        metavar="N",
    ),
]
MaxEpoch = Annotated[
    Optional[int],
    _option(
        "max_epoch",
        "Highest epoch; a walk ends when an election would pass it, counted as "
        f"a bound hit ({_range('max_epoch')}).",
        _D.max_epoch,
        PANEL_BOUNDS,
        metavar="N",
    ),
]
MaxRecords = Annotated[
    Optional[int],
    _option(
        "max_records",
        f"Most records in one FetchResponse ({_range('max_records')}).",
        _D.max_records,
        PANEL_BOUNDS,
        metavar="N",
    ),
]
Out = Annotated[
    Optional[str],
    _option("out", "Run folder for results; created by the run.", f"{RUNS_DIR}/<run_id>", PANEL_OUTPUT, metavar="DIR"),
]
WalkStats = Annotated[
    Optional[str],
    _option(
        "walk_stats",
        "Per-walk statistics: 'rows' writes one row per walk; 'histogram' only "
        "aggregates (smaller output for long runs).",
        _D.walk_stats,
        PANEL_OUTPUT,
        metavar="rows|histogram",
    ),
]
FlushSeconds = Annotated[
    Optional[float],
    _option(
        "flush_seconds",
        "Save finished walks to the run folder at least this often, as complete Parquet "
        "parts: whatever ends the run, kill -9 included, loses at most this much work "
        "(0 saves every chunk; 0..3600).",
        f"{_D.flush_seconds:g}",
        PANEL_OUTPUT,
        metavar="SECONDS",
    ),
]
Backend = Annotated[
    Optional[str],
    _option(
        "backend",
        "Where the chunks of walks run: 'loky' (local processes), 'dask' (a Dask cluster "
        "at $DASK_SCHEDULER_ADDRESS, else a local one) or 'ray' (the Ray cluster at "
        "$RAY_ADDRESS, else a local one), through joblib.",
        _D.backend,
        PANEL_RUN,
        metavar="loky|dask|ray",
    ),
]
Config = Annotated[
    Optional[Path],
    typer.Option(
        "--config",
        help="TOML file with option values (keys as the option names, e.g. "
        "log-capacity = 64); options given on the command line win. A run "
        "folder's config.toml repeats that run.",
        show_default=False,
        rich_help_panel=PANEL_OUTPUT,
        metavar="FILE",
        # No exists=True: a missing file is reported by make_config in our format.
    ),
]
FailOnViolation = Annotated[
    bool,
    typer.Option(
        "--fail-on-violation/--no-fail-on-violation",
        help="Exit 12 when a safety invariant broke and 13 when only a liveness property "
        "did (TLC's codes), so that a CI job fails; --no-fail-on-violation exits 0 "
        "whatever was found, for exploring with mutations.",
        rich_help_panel=PANEL_OUTPUT,
    ),
]


# Every RunConfig field's option (the command line's name for each is the field's,
# option_name spells it); a test checks that every field has one.
CONFIG_OPTIONS: dict[str, Any] = {
    "voters": Voters, "observers": Observers, "walks": Walks, "depth": Depth, "seed": Seed,
    "duration": Duration, "workers": Workers, "weights": Weights, "out": Out,
    "kafka": Kafka, "pre_vote": PreVote, "snapshots": Snapshots, "reconfig": Reconfig, "disk_loss": DiskLoss,
    "mutation": Mutation, "disabled_checks": DisableCheck, "log_capacity": LogCapacity,
    "msg_slots": MsgSlots, "max_epoch": MaxEpoch, "max_records": MaxRecords,
    "walk_stats": WalkStats, "backend": Backend, "chunk_walks": ChunkWalks,
    "flush_seconds": FlushSeconds, "crash_weight": CrashWeight,
    "partition_weight": PartitionWeight, "lose_weight": LoseWeight,
    "duplicate_weight": DuplicateWeight,
}


# The settings a command takes from a --config file (a run folder's config.toml carries
# every setting; the others do not concern the command): the cluster and its bounds,
# and the checks turned off, shared by hunt and bench, which add their own.
CLUSTER_KEYS = (*fields_of("cluster", "bounds"), "disabled_checks")


def config_options(*fields: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command the options of these RunConfig fields. The command's own
    signature leaves them out and takes ``values``: field -> value, None where the
    option was not given (so --config may supply it), ready for ``make_config``."""
    unknown = [f for f in fields if f not in CONFIG_OPTIONS]
    if unknown:
        raise ValueError(f"no RunConfig option {unknown}")

    def add(command: Callable[..., Any]) -> Callable[..., Any]:
        own = inspect.signature(command, eval_str=True)
        kept = [p for p in own.parameters.values() if p.name != "values"]
        taken = [inspect.Parameter(f, inspect.Parameter.KEYWORD_ONLY, default=None,
                                   annotation=CONFIG_OPTIONS[f]) for f in fields]

        @functools.wraps(command)
        def with_options(**kwargs: Any) -> Any:
            # typer gives [] for a repeatable option never given: that is "not given" too
            values = {f: kwargs.pop(f) or None if f == "disabled_checks" else kwargs.pop(f)
                      for f in fields}
            return command(values=values, **kwargs)

        # the shared options first, as the help lists them; typer passes every one by name
        params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in taken + kept]
        with_options.__signature__ = own.replace(parameters=params)  # type: ignore[attr-defined]
        with_options.__annotations__ = {p.name: p.annotation for p in params}
        with_options.config_fields = fields  # type: ignore[attr-defined]
        return with_options

    return add


def bounded(kind: type, lo: float, hi: float | None = None):
    """A typer parser for an int or float option with bounds, whose error names the
    bad value and the allowed range (typer's own range message names neither)."""
    def parse(text: str):
        try:
            value = kind(text)
        except (TypeError, ValueError):
            raise typer.BadParameter(f"{text!r} is not {'an integer' if kind is int else 'a number'}"
                                     ) from None
        finite = math.isfinite(value)
        if not finite or value < lo or (hi is not None and value > hi):
            allowed = f">= {lo:g}" if hi is None else f"between {lo:g} and {hi:g}"
            if kind is int and hi is not None:
                allowed = f"between {int(lo)} and {int(hi)}"
            raise typer.BadParameter(
                f"must be {'' if finite else 'a finite number '}{allowed}, got {text}")
        return value
    parse.__name__ = kind.__name__
    return parse
