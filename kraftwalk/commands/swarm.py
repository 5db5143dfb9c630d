"""``kraftwalk swarm``: random walks of a simulated cluster, every step checked."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any, Optional
from collections.abc import Mapping

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kraftwalk.commands import options as opts
from kraftwalk.commands.console import (
    EXIT_UNREACHED, byte_size, counts_table, fail, num, violations_exit,
)
from kraftwalk.commands.progress import SwarmProgress
from kraftwalk.config import RUNS_DIR, RunConfig, make_config
from kraftwalk.errors import RunStopped
from kraftwalk.storage.paths import check_output_dir
from kraftwalk.vocabulary.properties import TARGET_NAMES
from kraftwalk.vocabulary.mutations import statistics_refusal


def print_summary(result: Mapping[str, Any], console: Console) -> None:
    """Print the runner's result dict as small tables."""
    kafka = f" (Kafka {result['kafka']})" if result.get("kafka") else ""
    title = escape(f"kraftwalk swarm {result.get('run_id', '')}{kafka}")
    stats = Table(title=title, box=box.SIMPLE, show_header=False, title_justify="left")
    stats.add_column(style="bold")
    stats.add_column(justify="right")
    rows = [
        ("walks", num(result.get("walks"))),
        ("steps", num(result.get("steps"))),
        ("seconds", num(result.get("seconds"), ",.1f")),
        ("steps/s", num(result.get("steps_per_s"), ",.0f")),
        ("steps/s per core", num(result.get("steps_per_s_per_core"), ",.0f")),
        ("walks/s", num(result.get("walks_per_s"), ",.1f")),
        ("workers", num(result.get("workers"))),
        ("JIT seconds", num(result.get("jit_seconds"), ",.1f")),
        ("start-up seconds", num(result.get("startup_seconds"), ",.1f")),
        ("disabled attempts", num(result.get("disabled_attempts"))),
    ]
    for name, value in rows:
        stats.add_row(name, value)
    console.print(stats)
    from kraftwalk.storage.provenance import made_by

    console.print(escape(f"made by {made_by()}"), style="dim", soft_wrap=True)

    by_invariant = {k: v for k, v in (result.get("violations_by_invariant") or {}).items() if v}
    if int(result.get("violations") or 0) == 0:
        console.print("[bold green]no violations[/]")
    else:
        console.print(counts_table(f"violations: {num(result['violations'])}", by_invariant, "bold red"))
        first = result.get("first_violations") or []
        if first:
            table = Table(title="first violations", box=box.SIMPLE, title_justify="left")
            keys = ("walk", "invariant", "step", "node_a", "node_b", "epoch", "log_offset")
            for key in keys:
                table.add_column(key, justify="left" if key == "invariant" else "right")
            for v in first:
                table.add_row(*(escape(str(v.get(key, ""))) for key in keys))
            console.print(table)

    reached = result.get("reached") or {}
    if reached:
        walks = max(int(result.get("walks") or 0), 1)
        table = Table(title=f"coverage: {sum(1 for v in reached.values() if v)}/{len(reached)} "
                      "targets reached", box=box.SIMPLE, title_justify="left")
        for col, justify in (("target", "left"), ("walks", "right"), ("share", "right")):
            table.add_column(col, justify=justify)
        for name, n in reached.items():
            style = "" if n else "yellow"
            table.add_row(name, num(n), f"{n / walks:.1%}" if n else "never", style=style)
        console.print(table)

    hits = {k: v for k, v in (result.get("bound_hits") or {}).items() if v}
    if hits:
        console.print(counts_table("bound hits", hits, "bold yellow"))
    else:
        console.print("bound hits: none")

    out_dir = result.get("out_dir")
    if out_dir:
        console.print(f"run folder: [bold]{escape(str(out_dir))}[/]")
        folder = Path(out_dir)
        if folder.is_dir():
            for path in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
                files = [f for f in path.rglob("*.parquet")] if path.is_dir() else [path]
                size = byte_size(sum(f.stat().st_size for f in files))
                what = f"{len(files)} Parquet file{'' if len(files) == 1 else 's'}, " \
                    if path.is_dir() else ""
                name = escape(path.name + ("/" if path.is_dir() else ""))
                console.print(f"  {name}  [dim]{what}{size}[/]")


@opts.config_options(*(f.name for f in dataclasses.fields(RunConfig)))
def swarm(
    values: dict[str, Any],
    config: opts.Config = None,
    fail_on_violation: opts.FailOnViolation = True,
    require: Annotated[Optional[list[str]], typer.Option(
        "--require", help="A reachability target the run must reach (repeatable): exit 14 "
        "if no walk reached it. Targets: " + ", ".join(TARGET_NAMES) + ".",
        rich_help_panel=opts.PANEL_OUTPUT, metavar="TARGET")] = None,
    resume: Annotated[Optional[Path], typer.Option(
        "--resume", help="Continue the run in this run folder (stopped by Ctrl-C, a "
        "signal or kill -9) after its saved walks, with its config.toml; it ends with the "
        "same walks, violations and statistics as a run never stopped. Only --workers, "
        "--backend, --chunk-walks and --flush-seconds may differ.",
        rich_help_panel=opts.PANEL_OUTPUT, metavar="RUN_DIR")] = None,
) -> None:
    """Run many random walks of a simulated KRaft cluster and check every step.

    Results go to the run folder (--out). Exit code 0 when the run finished and found
    nothing; 12 when it found a safety violation (--no-fail-on-violation: 0); 14 when a
    --require target was never reached; 2 on a bad option; 1 on a failure; 128 + the
    signal's number when a signal stopped it (everything finished is saved).
    """
    out = values["out"]
    if resume is not None:
        if config is not None:
            fail("--resume takes the run folder's own config.toml; leave out --config")
        if out is not None and Path(out).resolve() != resume.resolve():
            fail(f"--resume {resume} continues that folder; --out {out} names another")
        from kraftwalk.run.resume import resume_config

        cfg = resume_config(resume, values)
    else:
        cfg = make_config(config, **values)
        refusal = statistics_refusal(cfg.mutation, "swarm")
        if refusal:
            fail(refusal)
        check_output_dir(cfg.out or RUNS_DIR, "--out")
    for name in require or ():
        if name not in TARGET_NAMES:
            fail(f"--require {name!r} is not a reachability target; known: "
                 f"{', '.join(TARGET_NAMES)}")
    # Imported only now: options are checked before the Numba kernels load.
    from kraftwalk.run.runner import run_swarm

    try:
        with SwarmProgress(cfg, Console(stderr=True)) as progress:
            result = run_swarm(cfg, progress=progress.update, on_phase=progress.phase,
                               resume=resume is not None)
    except RunStopped as stop:
        result = stop.summary or {}
        print_summary(result, Console())
        Console(stderr=True).print(
            f"[bold yellow]stopped by {stop}[/]: {result.get('walks_saved', 0):,} finished walks "
            f"saved in {escape(str(result.get('out_dir')))} (run.json: status "
            f"{escape(str(result.get('status')))})")
        raise typer.Exit(128 + stop.signum) from None
    print_summary(result, Console())
    missed = [n for n in require or () if not (result.get("reached") or {}).get(n)]
    if missed:
        typer.echo(f"kraftwalk: required targets never reached: {', '.join(missed)}", err=True)
        raise typer.Exit(EXIT_UNREACHED)
    code = violations_exit(k for k, v in (result.get("violations_by_invariant") or {}).items()
                           if v)
    if fail_on_violation and code is not None:
        raise typer.Exit(code)
