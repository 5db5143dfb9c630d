"""Replaying a walk of a ``kraftwalk elect`` folder: the timed kernel re-runs it and
records its actions with their times; the actions then run through the reference
model like an untimed walk's (the transition relation is the same; only the choice of
the next action differed). A liveness violation is a fact about time, so the reference
model shows the states that led to it and the kernel's record says when it broke.
"""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from kraftwalk.config import RunConfig, make_config, read_toml
from kraftwalk.errors import UsageError


def is_elect_folder(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` was written by ``kraftwalk elect``: its run.json says so (the
    command that made it); a folder from before run.json did, by its config's scenario."""
    import json

    try:
        made_by = json.loads((Path(run_dir) / "run.json").read_text()).get("command")
    except (OSError, ValueError, AttributeError):
        made_by = None
    if made_by is not None:
        return made_by == "elect"
    cfg = Path(run_dir) / "config.toml"
    return cfg.is_file() and "scenario" in read_toml(cfg, "config file")


def untimed_config(ecfg, voters: int, pre_vote: bool) -> RunConfig:
    """The RunConfig whose kernel bounds and features match one cell's timed walks
    (``ecfg`` of the cell's release: ElectConfig.for_release)."""
    from kraftwalk import kernel_inputs as k
    from kraftwalk.vocabulary.properties import INVARIANT_NAMES
    from kraftwalk.vocabulary.timing import RECONFIG_SCENARIOS

    return make_config(None, kafka=ecfg.release, voters=voters, observers=ecfg.observers,
                       pre_vote=pre_vote, reconfig=ecfg.scenario in RECONFIG_SCENARIOS,
                       mutation=ecfg.mutation, log_capacity=k.LOG_CAPACITY,
                       disabled_checks=tuple(n for n in ecfg.disabled_checks
                                             if n in INVARIANT_NAMES),
                       msg_slots=k.MSG_SLOTS, max_epoch=k.MAX_EPOCH,
                       max_records=k.MAX_RECORDS, depth=ecfg.depth, seed=ecfg.seed)


def pick_cell(run_dir: Path, ecfg, walk: int | None, voters: int | None,
              pre_vote: bool | None, kafka: str | None = None) -> tuple[str, int, bool, int]:
    """(release, voters, pre_vote, walk): the options given, else the first violation's."""
    from kraftwalk.vocabulary.releases import release_of

    if kafka is not None:
        try:
            kafka = release_of(kafka)
        except ValueError as err:
            raise UsageError(str(err)) from None
    cells = [(k, v, p) for k, v, p in ecfg.cells()
             if kafka in (None, k) and voters in (None, v) and pre_vote in (None, p)]
    if not cells:
        raise UsageError(f"{run_dir} has no cell with --kafka {kafka}, --voters {voters} and "
                         f"pre-vote {pre_vote}; it ran {ecfg.cells()}")
    if walk is None:
        rows = violation_rows(run_dir, ecfg)
        rows = [r for r in rows if (r["kafka"], r["voters"], r["pre_vote"]) in cells]
        if not rows:
            raise UsageError(f"{run_dir} recorded no violation there; give --walk N")
        r = min(rows, key=lambda r: (ecfg.kafka.index(r["kafka"]), r["voters"], r["pre_vote"],
                                     r["walk"]))
        return r["kafka"], r["voters"], r["pre_vote"], r["walk"]
    if walk >= ecfg.walks:
        raise UsageError(f"--walk {walk} is not a walk of {run_dir}: it ran walks "
                         f"0..{ecfg.walks - 1}")
    if len(cells) > 1:
        raise UsageError(f"{run_dir} ran several cells ({cells}); say which with --kafka, "
                         "--voters and --pre-vote on|off")
    return (*cells[0], walk)


# the columns of an elect folder's violations that pick_cell reads, as it needs them
VIOLATION_COLUMNS = {"kafka": pa.string(), "voters": pa.int64(), "pre_vote": pa.bool_(),
                     "walk": pa.int64()}


def violation_rows(run_dir: Path, ecfg) -> list[dict]:
    """The rows of ``run_dir``'s violations dataset; a folder that saved none, a part
    that is unreadable, or lacks the walk column (or has one of a type or value no cast
    makes right) is a one-line UsageError naming it: replay and shrink pick their walk
    from it."""
    from kraftwalk.storage import elect_folder as ef
    from kraftwalk.storage.rundir import VIOLATIONS

    where = run_dir / VIOLATIONS
    if not ef.has_cells(run_dir, VIOLATIONS, ecfg):
        raise UsageError(f"{run_dir} has no saved {VIOLATIONS}/ parts; give --walk N")
    t = ef.read_cells(run_dir, VIOLATIONS, cfg=ecfg)
    if "walk" not in t.column_names:
        raise UsageError(f"{where} has no column walk: it is not a violations dataset "
                         "kraftwalk elect wrote")
    cols = {}
    for c, typ in VIOLATION_COLUMNS.items():  # "3" makes a walk; "walk-3" does not
        try:
            cols[c] = t.column(c).cast(typ)
        except (pa.ArrowException, ValueError) as e:
            raise UsageError(f"{where}: column {c} is {t.schema.field(c).type}, not {typ} "
                             f"({' '.join(str(e).split())[:200]})") from None
    t = pa.table(cols)
    if t.column("walk").null_count:
        raise UsageError(f"{where} has rows without a walk")
    walks = t.column("walk")
    if t.num_rows and (pc.min(walks).as_py() < 0 or pc.max(walks).as_py() >= ecfg.walks):
        raise UsageError(f"{where} names walks outside the run's 0..{ecfg.walks - 1}")
    return t.to_pylist()


def record_timed(run_dir: str | Path, walk: int | None = None, voters: int | None = None,
                 pre_vote: bool | None = None, kafka: str | None = None):
    """The Trace of one walk of an elect folder, times included."""
    from kraftwalk.elect_config import make_elect_config
    from kraftwalk.run.elect import cell_inputs
    from kraftwalk.counterexamples.timed_shrink import TimedWalk

    run = Path(run_dir)
    ecfg = make_elect_config(run / "config.toml")
    k, v, p, walk = pick_cell(run, ecfg, walk, voters, pre_vote, kafka)
    ecfg = ecfg.for_release(k)
    tw = TimedWalk(ecfg.seed, walk, *cell_inputs(ecfg, v, p))
    trace, _ = timed_trace(tw, untimed_config(ecfg, v, p),
                           f"{ecfg.scenario}, profile {ecfg.profile}")
    return trace


def timed_trace(tw, cfg: RunConfig, label: str, drop=None):
    """(Trace, its random faults as timed_shrink.all_faults) of timed walk ``tw`` with
    ``drop``'s faults suppressed."""
    import numpy as np

    from kraftwalk.run.elect import property_names
    from kraftwalk.kernels.state.clock import FAULTS_SEEN, LOSSES_SEEN
    from kraftwalk.kernels.state.layout import VIOL_BASE, V_WIDTH
    from kraftwalk.kernels.drivers.timed import record_timed_walk
    from kraftwalk.counterexamples.counterexample import Trace, violation_info
    from kraftwalk.counterexamples.timed_shrink import all_faults

    actions, w, c = record_timed_walk(tw.seed, tw.walk, tw.params, tw.tp, tw.features, drop)
    viol = w.scal[VIOL_BASE:VIOL_BASE + V_WIDTH]
    trace = Trace(cfg, tw.walk, np.ascontiguousarray(actions[:, :3]), int(viol[0]),
                  violation_info(viol, property_names()), times=actions[:, 3].copy(),
                  timed=label, timed_walk=tw)
    return trace, all_faults(int(c.t[FAULTS_SEEN]), int(c.t[LOSSES_SEEN]))


def shrink_timed_trace(trace):
    """The walk re-run with only the random faults it needs for its violation."""
    import dataclasses

    from kraftwalk.counterexamples.timed_shrink import drop_mask, shrink_faults

    tw = trace.timed_walk
    _, faults = timed_trace(tw, trace.cfg, trace.timed)
    kept, _ = shrink_faults(tw, faults, trace.invariant)
    small, _ = timed_trace(tw, trace.cfg, trace.timed, drop_mask(kept))
    assert small.invariant == trace.invariant
    return dataclasses.replace(small, shrunk_from=len(trace.actions),
                               faults_kept=(len(kept), len(faults)))
