"""``kraftwalk hunt`` (how fast the swarm finds each known bug) and ``kraftwalk
mutations`` (the known bugs it can switch on)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kraftwalk.commands import options as opts
from kraftwalk.commands.console import fail
from kraftwalk.config import RUNS_DIR, make_config, new_run_id, option_name
from kraftwalk.errors import RunStopped
from kraftwalk.storage.paths import check_output_dir


HUNT_KEYS = (*opts.CLUSTER_KEYS, "workers", "chunk_walks")  # hunt picks the mutations


@opts.config_options(*HUNT_KEYS)
def hunt(
    values: dict[str, Any],
    mutation: Annotated[Optional[list[str]], typer.Option(
        "--mutation", help="Mutation to hunt; repeat for several; `none` hunts the correct "
        "model (it must find nothing).", metavar="NAME")] = None,
    all_: Annotated[bool, typer.Option(
        "--all", help="Hunt every mutation: safety ones with the swarm, liveness ones with "
        "timed walks of the scenario that exposes them (statistics ones break no property: "
        "`kraftwalk compare` shows them).")] = False,
    seeds: Annotated[int, typer.Option(
        "--seeds", parser=opts.bounded(int, 1, 1000), metavar="N", help="How many master seeds to hunt with: --first-seed, "
        "--first-seed + 1, ... (a count, unlike swarm's --seed, which is one seed).")] = 5,
    first_seed: Annotated[int, typer.Option(
        "--first-seed", parser=opts.bounded(int, 0, 2**63 - 1001), metavar="SEED", help="The first master seed hunted, so a "
        "hunt can use seeds the swarm weights were never tuned on.")] = 0,
    budget: Annotated[float, typer.Option(
        "--duration", "--budget", parser=opts.bounded(float, 0.1), metavar="SECONDS", help="Seconds each hunt (one mutation, weights "
        "mode and seed) runs before giving up, as swarm's --duration (--budget: old name).")
    ] = 600.0,
    weights: Annotated[Optional[list[str]], typer.Option(
        "--weights", help="Weights mode: swarm, fixed or uniform; repeat to compare "
        "(default: swarm).", metavar="MODE")] = None,
    config: opts.Config = None,
    report: Annotated[Optional[Path], typer.Option(
        "--out", "--report", help="Folder for NAME.parquet, NAME.md and NAME.png, created if "
        f"missing (default: a new {RUNS_DIR}/hunt-<time>/; --report: old name).")] = None,
    name: Annotated[str, typer.Option(
        "--name", help="File name stem of the report: letters, digits, '.', '_', '-'.")] = "hunt",
) -> None:
    """Run the swarm until the first violation, per mutation and seed; report the
    walks, steps and seconds it took (median and range) and the invariant that caught it."""
    from kraftwalk.vocabulary.mutations import MUTATIONS, statistics_refusal

    names = list(mutation or [])
    if all_:
        names += [m.name for m in MUTATIONS.values() if m.kind != "statistics"]
    if not names:
        fail("give --mutation NAME (repeatable) or --all")
    names = list(dict.fromkeys(names))
    for n in names:
        refusal = statistics_refusal(n, "hunt")
        if refusal:
            fail(refusal)
    modes = list(dict.fromkeys(weights or ["swarm"]))
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name in (".", ".."):
        fail(f"--name {name!r} must be a plain file name stem: letters, digits, '.', '_', '-'")
    base = make_config(config, uses=HUNT_KEYS, **values)
    folder = report or Path(RUNS_DIR) / f"hunt-{new_run_id()}"  # never a tracked file
    check_output_dir(folder, "--out")
    for m in names:  # validate every name before anything runs
        make_config(None, mutation=m, snapshots=True, reconfig=True, disk_loss=True)
    for mode in modes:
        make_config(None, weights=mode)
    from kraftwalk.run.hunt import hunt as run_hunt, render_markdown, summarize, write_results

    err = Console(stderr=True)
    rows: list[dict] = []

    def save(done: list[dict]) -> None:  # each finished hunt is on disk at once
        write_results(done, summarize(done), budget, folder, name, plot=False)

    try:
        run_hunt(base, names, modes, list(range(first_seed, first_seed + seeds)), budget,
                 log=lambda msg: err.print(escape(msg)), rows=rows, on_row=save)
    except RunStopped as stop:  # keep the hunts that finished
        if rows:
            files = write_results(rows, summarize(rows), budget, folder, name)
            err.print(f"stopped by {stop}: {len(rows)} finished hunts written to "
                      + ", ".join(str(f) for f in files))
        else:
            err.print(f"stopped by {stop}: no hunt had finished, nothing written")
        raise typer.Exit(128 + stop.signum) from None
    summary = summarize(rows)
    files = write_results(rows, summary, budget, folder, name)
    Console().print(render_markdown(summary, budget), soft_wrap=True)
    Console().print("written: " + ", ".join(str(f) for f in files))


def mutations() -> None:
    """List the known-bug mutations that --mutation can switch on."""
    from kraftwalk.vocabulary.mutations import MUTATIONS

    table = Table(box=box.SIMPLE, show_header=True)
    table.add_column("name", style="bold")
    table.add_column("kind")
    table.add_column("Kafka bug")
    table.add_column("needs")
    table.add_column("what it breaks")
    for m in MUTATIONS.values():  # the features it breaks: a swarm must turn them on
        needs = " ".join(option_name(n) for n in m.needs) or "-"
        shows = f"; shows on {m.release}" if m.release else ""
        jira = f"{m.jira}\n(fixed in {m.fixed_in}{shows})" if m.jira else "-"
        table.add_row(m.name, m.kind, jira, needs, m.description)
    Console().print(table)
