"""``kraftwalk replay`` and ``kraftwalk shrink``: one walk of a run, step by step,
shrunk to the steps its violation needs."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape

from kraftwalk.commands import options as opts
from kraftwalk.commands.console import fail
from kraftwalk.storage.paths import check_output_file


def _print_trace(trace) -> None:
    from kraftwalk.counterexamples.replay import render

    console = Console(highlight=False)
    for style, line in render(trace):  # one line each, never wrapped inside a tuple
        console.print(escape(line), style=style or None, soft_wrap=True)


RunDir = Annotated[Optional[Path], typer.Argument(
    help="Run folder written by `kraftwalk swarm` (its config.toml and violations/ dataset).")]
WalkOpt = Annotated[Optional[int], typer.Option(
    "--walk", parser=opts.bounded(int, 0, 2**63 - 1), metavar="N", help="Walk index to replay (default: the run's first violating walk).")]
ItfOpt = Annotated[Optional[Path], typer.Option(
    "--itf", help="Also write the trace in the Informal Trace Format (ITF JSON) to this file "
    "(its folder is created if missing).")]

CellVotersOpt = Annotated[Optional[int], typer.Option(
    "--voters", parser=opts.parse_int, metavar="N", help="`kraftwalk elect` folders: the "
    "cluster size of the walk (default: the first violation's).")]
CellKafkaOpt = Annotated[Optional[str], typer.Option(
    "--kafka", metavar="VERSION", help="`kraftwalk elect` folders: the Kafka release of "
    "the walk (default: the first violation's).")]
CellPreVoteOpt = Annotated[Optional[str], typer.Option(
    "--pre-vote", metavar="on|off", help="`kraftwalk elect` folders: the pre-vote setting "
    "of the walk (default: the first violation's).")]


def _trace_for(run_dir, walk, voters=None, pre_vote=None, kafka=None):
    from kraftwalk.counterexamples.replay import check_against_run, load_run, pick_walk, record
    from kraftwalk.counterexamples.timed_replay import is_elect_folder, record_timed

    if run_dir is None:
        fail("give the run folder to replay (RUN_DIR)")
    if is_elect_folder(run_dir):
        from kraftwalk.elect_config import pre_vote_values

        pv = pre_vote_values([pre_vote]) if pre_vote is not None else (None,)
        if len(pv) != 1:
            fail(f"--pre-vote {pre_vote!r}: name one setting, on or off")
        return record_timed(run_dir, walk, voters, pv[0], kafka)
    if voters is not None or pre_vote is not None or kafka is not None:
        fail("--kafka, --voters and --pre-vote pick a cell of a `kraftwalk elect` folder; "
             f"{run_dir} is a swarm run")
    cfg = load_run(run_dir)
    w = pick_walk(run_dir, walk)
    trace = record(cfg, w)
    check_against_run(run_dir, trace)
    return trace


def _check_shrinkable(trace) -> None:
    if not trace.invariant:
        fail(f"walk {trace.walk} has no violation to shrink")


def replay(
    run_dir: RunDir = None,
    walk: WalkOpt = None,
    shrink: Annotated[bool, typer.Option(
        "--shrink", help="Shrink the walk to a short one with the same violation first.")] = False,
    itf: ItfOpt = None,
    witness: Annotated[Optional[str], typer.Option(
        "--witness", help="Replay the witness of a reachability target instead: the first "
        "walk of the run that reached it, up to the step that did (`kraftwalk swarm` prints "
        "the targets; e.g. LeaderElected, FollowerTruncated).", metavar="TARGET")] = None,
    voters: CellVotersOpt = None,
    pre_vote: CellPreVoteOpt = None,
    kafka: CellKafkaOpt = None,
) -> None:
    """Re-run one walk of a run from its seed and print it step by step: each action
    (with its time, for `kraftwalk elect` walks), what changed in each node and in the
    network, and the violated invariant or property (or the target reached, with
    --witness)."""
    if itf is not None:
        check_output_file(itf, "--itf")
    if witness is not None:
        if walk is not None or shrink:
            fail("--witness picks its own walk and steps; leave out --walk and --shrink")
        if run_dir is None:
            fail("give the run folder to replay (RUN_DIR)")
        from kraftwalk.counterexamples.replay import witness_trace

        trace = witness_trace(run_dir, witness)
    else:
        trace = _trace_for(run_dir, walk, voters, pre_vote, kafka)
    if shrink:
        _check_shrinkable(trace)
        from kraftwalk.counterexamples.replay import shrink_trace

        trace = shrink_trace(trace)
    _print_trace(trace)
    if itf is not None:
        from kraftwalk.counterexamples.itf import write_itf

        write_itf(trace, itf)
        Console(stderr=True).print(f"written: {itf}")


def shrink(
    run_dir: RunDir = None,
    walk: WalkOpt = None,
    itf: ItfOpt = None,
    quiet: Annotated[bool, typer.Option(
        "--quiet", help="Print only the lengths, not the shrunk trace.")] = False,
    voters: CellVotersOpt = None,
    pre_vote: CellPreVoteOpt = None,
    kafka: CellKafkaOpt = None,
) -> None:
    """Shrink a violating walk to a short walk that violates the same invariant or
    property; print the lengths before and after and the trace. A swarm walk loses
    actions (delta debugging over them); a timed walk of a `kraftwalk elect` folder
    loses the random faults (crashes, partitions, loss bursts, lost messages) it does
    not need, and is re-simulated with the rest, every timer and delivery kept."""
    if itf is not None:
        check_output_file(itf, "--itf")
    trace = _trace_for(run_dir, walk, voters, pre_vote, kafka)
    _check_shrinkable(trace)
    from kraftwalk.counterexamples.replay import shrink_trace

    small = shrink_trace(trace)
    head = f"walk {trace.walk}: {trace.violation['invariant']} after {len(trace.actions)} steps"
    if small.faults_kept is not None:
        kept, total = small.faults_kept
        head += (f" with {total} random faults; it needs only {kept} of them "
                 f"({len(small.actions)} steps)")
    else:
        head += f"; shrunk to {len(small.actions)} steps"
    Console().print(head)
    if not quiet:
        _print_trace(small)
    if itf is not None:
        from kraftwalk.counterexamples.itf import write_itf

        write_itf(small, itf)
        Console(stderr=True).print(f"written: {itf}")
