"""``kraftwalk elect``: timed walks of a scenario, election times and downtime."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import (
    BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn,
)

from kraftwalk.commands import options as opts
from kraftwalk.config import RUNS_DIR
from kraftwalk.errors import RunStopped
from kraftwalk.vocabulary.properties import INVARIANT_NAMES, LIVENESS_NAMES
from kraftwalk.vocabulary.releases import RELEASES


def _timing_help() -> str:
    from kraftwalk.vocabulary.timing import TIMING

    return "; ".join(t.name for t in TIMING.values() if t.name != "scenario")


def elect(
    kafka: Annotated[Optional[list[str]], typer.Option(
        "--kafka", metavar="VERSION", help="The Kafka release whose raft/ behaviour the walks "
        "follow (its switches and its timing rules); repeat to compare releases side by side, "
        "e.g. --kafka 4.0 --kafka 4.1: " + ", ".join(RELEASES) + " (default: the newest; "
        "`kraftwalk versions` lists what changed in each).")] = None,
    voters: Annotated[Optional[list[int]], typer.Option(
        "--voters", parser=opts.parse_int, metavar="N", help="Cluster size (voters, 1..9); "
        "repeat for several, e.g. --voters 3 --voters 5 (default: 3, 5 and 7).")] = None,
    pre_vote: Annotated[Optional[list[str]], typer.Option(
        "--pre-vote", metavar="on|off|both", help="Pre-vote (KIP-996) setting; repeat or say "
        "both (default: the release's under the kafka profile (on from 4.0), off for the "
        "Ongaro profiles).")] = None,
    scenario: Annotated[Optional[str], typer.Option(
        "--scenario", metavar="NAME", help="What each walk does: cold-start (all nodes start "
        "at once), leader-crash (steady state, then the leader crashes), leader-isolated "
        "(the leader is cut off from every node), rolling-restart, random-faults (crashes, "
        "partitions and message-loss bursts, then everything heals), voter-removed (a voter "
        "cut off is removed, then the cut heals), leader-removed (the leader removes itself "
        "while too few voters reach it), voter-removed-while-down (the leader crashes; a voter "
        "that votes in the election crashes before it learns who won, is removed, and "
        "restarts Unattached: KAFKA-17030) (default: leader-crash).")] = None,
    profile: Annotated[Optional[str], typer.Option(
        "--profile", metavar="NAME", help="Timing profile: kafka (Kafka's defaults and the "
        "release's timing rules), ongaro "
        "(Raft as in Ongaro's dissertation ch. 9: randomized timers 150-300 ms, no backoff), "
        "ongaro-wan (timeouts 300-600 ms, latency 30-40 ms) (default: kafka).")] = None,
    timing: Annotated[Optional[list[str]], typer.Option(
        "--timing", metavar="NAME=VALUE", help="Override one timing parameter (times in ms; "
        "repeat for several; the timing table of docs/timed-mode.md says what each means and its Kafka "
        "config). Names: " + _timing_help() + ".")] = None,
    walks: Annotated[Optional[int], typer.Option(
        "--walks", parser=opts.parse_int, metavar="N",
        help="Walks per cluster size and pre-vote setting (default: 2000).")] = None,
    seed: opts.Seed = None,
    workers: opts.Workers = None,
    observers: opts.Observers = None,  # swarm's option, with swarm's default
    mutation: opts.Mutation = None,
    disable_check: Annotated[Optional[list[str]], typer.Option(
        "--disable-check", metavar="PROPERTY", help="Turn off one property, a safety "
        "invariant or a liveness property (its walks go on past where it would fire, so "
        "their statistics show what the bug costs); repeat for several. Known: "
        + ", ".join((*INVARIANT_NAMES, *LIVENESS_NAMES)) + " (default: all on).",
        show_default=False)] = None,
    walk_stats: Annotated[Optional[str], typer.Option(
        "--walk-stats", metavar="rows|histogram", help="rows: one Parquet row per walk "
        "(walks/); histogram: how many walks had each value of each statistic, times to the "
        "millisecond (walks_histogram/), for runs too big for a row per walk (default: "
        "rows).")] = None,
    config: Annotated[Optional[Path], typer.Option(
        "--config", help="TOML file with option values (keys as the option names, a "
        "\\[timing] table for timing parameters); options given on the command line win. An "
        "elect folder's config.toml repeats that run.", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help=f"New folder for the results (default: {RUNS_DIR}/elect-<time>).",
        show_default=False)] = None,
    backend: opts.Backend = None,
    flush_seconds: opts.FlushSeconds = None,
    resume: Annotated[Optional[Path], typer.Option(
        "--resume", help="Continue the elect folder DIR (stopped by Ctrl-C, a signal or "
        "kill -9) after each cell's saved walks, with its config.toml; it ends with the "
        "same walks, violations and summary as a run never stopped. Only --workers, "
        "--backend and --flush-seconds may differ.", metavar="DIR",
        show_default=False)] = None,
    fail_on_violation: opts.FailOnViolation = True,
) -> None:
    """Time elections: run a timed scenario per release, cluster size and pre-vote
    setting; print election-time percentiles, split votes, downtime and disruptions;
    write per-walk Parquet, a summary and a CDF plot. Exit code 0 when no walk broke a
    property; 13 when a liveness property broke, 12 when a safety invariant did
    (--no-fail-on-violation: 0); 2 on a bad option; 128 + N when signal N stopped it."""
    from kraftwalk.commands.console import fail
    from kraftwalk.config import new_run_id
    from kraftwalk.elect_config import make_elect_config, parse_timing, pre_vote_values
    from kraftwalk.storage.lock import hold
    from kraftwalk.storage.paths import make_new_folder

    given = dict(kafka=tuple(kafka or ()), voters=tuple(voters or ()),
                 pre_vote=pre_vote_values(pre_vote or []), scenario=scenario, profile=profile,
                 timing=parse_timing(timing or []), walks=walks, seed=seed, workers=workers,
                 observers=observers, mutation=mutation,
                 disabled_checks=tuple(disable_check or ()), walk_stats=walk_stats,
                 backend=backend, flush_seconds=flush_seconds)
    if resume is not None:
        if config is not None:
            fail("--resume takes the elect folder's own config.toml; leave out --config")
        if out is not None and Path(out).resolve() != resume.resolve():
            fail(f"--resume {resume} continues that folder; --out {out} names another")
        if given.pop("timing"):
            fail("--timing would change the walks of the folder --resume continues; "
                 "start a new run instead")
        from kraftwalk.run.elect import resume_config

        cfg = resume_config(resume, given)
        folder = resume
    else:
        cfg = make_elect_config(config, **given)
        from kraftwalk.run.backends import check_backend

        check_backend(cfg)
        folder = make_new_folder(out or Path(RUNS_DIR) / f"elect-{new_run_id()}", "folder")
    from kraftwalk.run.elect import render_markdown, run as run_elect
    from kraftwalk.run.precompile import elect_variants, precompile

    n_workers = cfg.effective_workers
    total = cfg.walks * len(cfg.cells())
    err = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("[progress.description]{task.description}"),
                  BarColumn(), TextColumn("{task.completed:,}/{task.total:,} walks"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err,
                  transient=True) as bar:
        task = bar.add_task("compiling and running timed walks", total=total)

        def on_cell(cell: dict) -> None:
            err.print(f"Kafka {cell['kafka']}, {cell['voters']} voters, pre-vote "
                      f"{'on' if cell['pre_vote'] else 'off'}:"
                      f" {cell['walks']:,} walks, {cell['events']:,} events in "
                      f"{cell['seconds']:.1f} s (JIT {cell['jit_seconds']:.1f} s)")
            bar.update(task, description="running timed walks")

        try:
            # one writer: two elects started on one --out, or a resume of a running one
            with hold(folder, "elect", "--resume" if resume is not None else "--out"):
                precompile(elect_variants(cfg), n_workers)  # the variants side by side
                result = run_elect(cfg, folder, resume=resume is not None,
                                   advance=lambda n, v: bar.advance(task, n), on_cell=on_cell)
        except RunStopped as stop:
            bar.stop()
            err.print(f"stopped by {stop}: the saved walks are summarized in {folder}; "
                      f"continue with: kraftwalk elect --resume {folder}")
            raise typer.Exit(128 + stop.signum) from None
    Console().print(render_markdown(result["summary"], cfg), soft_wrap=True)
    rate = result["events_per_second"]
    saved = "walks" if cfg.walk_stats == "rows" else "walks_histogram"
    Console().print(f"{result['events']:,} events in {result['seconds']:.1f} s"
                    + (f" ({rate:,} events/s on {result.get('workers', n_workers)} workers)"
                       if rate else "")
                    + f"; written to {folder}: {saved}/, violations/, summary.md, "
                    "summary.parquet, elect-cdf.png, config.toml, run.json")
    if fail_on_violation:
        from kraftwalk.commands.console import violations_exit

        code = violations_exit(p for c in result["summary"] for p in
                               _violated(folder, cfg, c))
        if code is not None:
            raise typer.Exit(code)


def _violated(folder: Path, cfg, cell: dict) -> list[str]:
    """The properties a cell's saved walks broke."""
    from kraftwalk.storage.elect_folder import read_cell
    from kraftwalk.storage.rundir import VIOLATIONS

    if not cell["violations"]:
        return []
    t = read_cell(folder, (cell["kafka"], cell["voters"], cell["pre_vote"]), VIOLATIONS,
                  ["property"])
    return [] if t is None else t.column("property").to_pylist()
