"""The ``kraftwalk`` command line.

Adding a command: decorate a function with ``@app.command()``, take its
options from :mod:`kraftwalk.commands.options`, and raise
:class:`~kraftwalk.errors.UsageError` for bad values. :class:`KraftwalkGroup`
turns every usage error (ours and click's) into one stderr line and exit 2.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, NoReturn, Optional

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.status import Status
from rich.progress import (
    BarColumn,
    Progress,
    ProgressBar,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from typer.core import TyperGroup

from kraftwalk import __version__
from kraftwalk.commands import options as opts
from kraftwalk.config import RUNS_DIR, RunConfig, fields_of, make_config
from kraftwalk.storage.paths import check_output_dir, check_output_file
from kraftwalk.errors import RunError, RunStopped, UsageError
from kraftwalk.vocabulary.properties import TARGET_NAMES

try:  # newer typer vendors its own copy of click; its exceptions are what it raises
    from typer._click import exceptions as _cx
except ImportError:  # older typer runs on click itself
    from click import exceptions as _cx

# click < 8.2 shows help for a bare group without raising; `except ()` matches nothing.
_NO_ARGS_IS_HELP: Any = getattr(_cx, "NoArgsIsHelpError", ())

EXIT_VIOLATIONS = 1  # only with --fail-on-violation
EXIT_USAGE = 2  # same code click uses for its own usage errors
EXIT_RUN_ERROR = 1  # a failure that is not a bad value

# The settings each command takes from a --config file; a run folder's config.toml
# carries every setting, and the others do not concern the command.
CLUSTER_KEYS = (*fields_of("cluster", "bounds"), "disabled_checks")  # hunt picks mutations
HUNT_KEYS = (*CLUSTER_KEYS, "workers", "chunk_walks")
BENCH_KEYS = (*CLUSTER_KEYS, "seed", "weights", "mutation", "chunk_walks")


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


def fail(message: object, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``kraftwalk: error: <message>`` as one stderr line and exit."""
    typer.echo(f"kraftwalk: error: {_one_line(message)}", err=True)
    raise typer.Exit(code)


def _fail_click(err: Any) -> NoReturn:
    message = err.format_message()
    ctx = getattr(err, "ctx", None)
    if isinstance(err, _cx.UsageError) and ctx is not None:
        message = f"{_one_line(message)} (see '{ctx.command_path} --help')"
    fail(message, err.exit_code)


class KraftwalkGroup(TyperGroup):
    """Group that reports usage errors of all commands as one line, exit 2.

    Typer would draw a multi-line box; a single line is easier to grep in CI
    logs and is what scripts expect. Parsing of the group's own options
    happens in make_context, a command's parsing and body in invoke.
    """

    def make_context(self, info_name: Any, args: Any, parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except _NO_ARGS_IS_HELP:
            raise  # bare `kraftwalk`: show the help, not an error line
        except _cx.ClickException as err:
            _fail_click(err)

    def invoke(self, ctx: Any) -> Any:
        from kraftwalk.kernels.jit.numba_switch import plain_requested
        from kraftwalk.run.signals import stop_on_signals

        try:
            plain_requested()  # a bad $KRAFTWALK_PLAIN_NUMBA, before any kernel loads
        except ValueError as err:
            fail(err)
        try:
            with stop_on_signals():  # SIGTERM and SIGHUP stop any command as Ctrl-C does
                return super().invoke(ctx)
        except RunStopped as stop:  # a command with nothing of its own to save or say
            fail(f"stopped by {stop}", 128 + stop.signum)
        except UsageError as err:
            fail(err)
        except RunError as err:
            fail(err, EXIT_RUN_ERROR)
        except OSError as err:  # the machine, not the input: a full disk, a vanished folder
            where = f" {err.filename}" if getattr(err, "filename", None) else ""
            fail(f"cannot read or write{where}: {err.strerror or err}", EXIT_RUN_ERROR)
        except _cx.ClickException as err:
            _fail_click(err)


app = typer.Typer(
    cls=KraftwalkGroup,
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Random-walk checker for the Kafka KRaft consensus protocol.",
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"kraftwalk {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        Optional[bool],
        typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version and exit."),
    ] = None,
) -> None:
    """Random-walk checker for the Kafka KRaft consensus protocol.

    Each walk simulates a small KRaft cluster under random crashes, restarts,
    network faults and message reorderings, and checks the safety invariants
    after every step.
    """


# ---- progress ---------------------------------------------------------------


class _TimeBar(BarColumn):
    """Fills with wall time, so a time-bounded run's bar moves between chunks."""

    def render(self, task: Task) -> ProgressBar:
        total = task.total or 1.0
        return ProgressBar(
            total=total,
            completed=min(task.elapsed or 0.0, total),
            width=None if self.bar_width is None else max(1, self.bar_width),
            pulse=False,
            animation_time=task.get_time(),
            style=self.style,
            complete_style=self.complete_style,
            finished_style=self.finished_style,
            pulse_style=self.pulse_style,
        )


class SwarmProgress:
    """Rich progress bar on stderr; ``update`` is the runner's progress callback.

    With --walks the bar counts walks; otherwise it fills over the time budget.
    """

    def __init__(self, cfg: RunConfig, console: Console) -> None:
        self._by_walks = cfg.walks is not None
        stats = (
            TextColumn("{task.fields[rate]} steps/s"),
            TextColumn("{task.fields[violations]}"),
        )
        if self._by_walks:
            columns = (
                SpinnerColumn(),
                BarColumn(),
                TextColumn("{task.fields[walks]}/{task.fields[total_walks]} walks"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                *stats,
            )
            total = float(cfg.walks)  # type: ignore[arg-type]
        else:
            duration = cfg.effective_duration or 0.0
            columns = (
                SpinnerColumn(),
                _TimeBar(),
                TimeElapsedColumn(),
                TextColumn(f"of {duration:g}s"),
                TextColumn("{task.fields[walks]} walks"),
                *stats,
            )
            total = duration
        self._progress = Progress(*columns, console=console, transient=False)
        self._task = self._progress.add_task(
            "swarm",
            total=total,
            walks="0",
            total_walks=f"{cfg.walks:,}" if self._by_walks else "",
            rate="-",
            violations="0 violations",  # plain until one is found, then bold red
        )
        self._t0 = time.monotonic()
        self._console = console
        self._status: Status | None = None
        self._running = False

    def phase(self, name: str) -> None:
        """The runner's phases: 'compiling', then 'starting' the workers (a spinner of
        their own, so start-up never counts as run time or lowers steps/s), then
        'running' (the bar starts at 0:00)."""
        if name == "compiling":
            self._status = Status("compiling the kernels for this configuration "
                                  "(cached for later runs) ...", console=self._console)
            self._status.start()
        elif name == "starting" and self._status is not None:
            self._status.update("starting the workers ...")
        elif name == "running" and not self._running:
            if self._status is not None:
                self._status.stop()
                self._status = None
            self._running = True
            self._progress.reset(self._task, start=True)
            self._progress.start()
            self._t0 = time.monotonic()

    def update(self, walks_done: int, steps_done: int, violations_found: int) -> None:
        self.phase("running")
        elapsed = max(time.monotonic() - self._t0, 1e-9)
        n = int(violations_found)
        viol = f"{n:,} violation{'' if n == 1 else 's'}"
        fields: dict[str, Any] = {
            "walks": f"{int(walks_done):,}",
            "rate": f"{steps_done / elapsed:,.0f}",
            "violations": f"[bold red]{viol}[/]" if violations_found else viol,
        }
        if self._by_walks:
            fields["completed"] = walks_done
        self._progress.update(self._task, **fields)

    def __enter__(self) -> SwarmProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._status is not None:
            self._status.stop()
        self._progress.stop()


# ---- summary ----------------------------------------------------------------


def _num(value: Any, fmt: str = ",") -> str:
    if value is None:
        return "n/a"
    try:
        return format(float(value) if "f" in fmt else int(value), fmt)
    except (TypeError, ValueError):
        return str(value)


def _size(n_bytes: int) -> str:
    if n_bytes < 1024:
        return f"{n_bytes} B"
    size = float(n_bytes)
    for unit in ("KiB", "MiB", "GiB"):
        size /= 1024
        if size < 1024 or unit == "GiB":
            break
    return f"{size:.1f} {unit}"


def _counts_table(title: str, counts: Mapping[str, Any], style: str) -> Table:
    table = Table(title=title, box=box.SIMPLE, title_justify="left", title_style=style)
    table.add_column("name")
    table.add_column("count", justify="right")
    for name, count in sorted(counts.items(), key=lambda kv: (-int(kv[1]), kv[0])):
        table.add_row(escape(str(name)), _num(count))
    return table


def print_summary(result: Mapping[str, Any], console: Console) -> None:
    """Print the runner's result dict as small tables."""
    title = escape(f"kraftwalk swarm {result.get('run_id', '')}")
    stats = Table(title=title, box=box.SIMPLE, show_header=False, title_justify="left")
    stats.add_column(style="bold")
    stats.add_column(justify="right")
    rows = [
        ("walks", _num(result.get("walks"))),
        ("steps", _num(result.get("steps"))),
        ("seconds", _num(result.get("seconds"), ",.1f")),
        ("steps/s", _num(result.get("steps_per_s"), ",.0f")),
        ("steps/s per core", _num(result.get("steps_per_s_per_core"), ",.0f")),
        ("walks/s", _num(result.get("walks_per_s"), ",.1f")),
        ("workers", _num(result.get("workers"))),
        ("JIT seconds", _num(result.get("jit_seconds"), ",.1f")),
        ("start-up seconds", _num(result.get("startup_seconds"), ",.1f")),
        ("disabled attempts", _num(result.get("disabled_attempts"))),
    ]
    for name, value in rows:
        stats.add_row(name, value)
    console.print(stats)

    by_invariant = {k: v for k, v in (result.get("violations_by_invariant") or {}).items() if v}
    if int(result.get("violations") or 0) == 0:
        console.print("[bold green]no violations[/]")
    else:
        console.print(_counts_table(f"violations: {_num(result['violations'])}", by_invariant, "bold red"))
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
            table.add_row(name, _num(n), f"{n / walks:.1%}" if n else "never", style=style)
        console.print(table)

    hits = {k: v for k, v in (result.get("bound_hits") or {}).items() if v}
    if hits:
        console.print(_counts_table("bound hits", hits, "bold yellow"))
    else:
        console.print("bound hits: none")

    out_dir = result.get("out_dir")
    if out_dir:
        console.print(f"run folder: [bold]{escape(str(out_dir))}[/]")
        folder = Path(out_dir)
        if folder.is_dir():
            for path in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
                files = [f for f in path.rglob("*.parquet")] if path.is_dir() else [path]
                size = _size(sum(f.stat().st_size for f in files))
                what = f"{len(files)} Parquet file{'' if len(files) == 1 else 's'}, " \
                    if path.is_dir() else ""
                name = escape(path.name + ("/" if path.is_dir() else ""))
                console.print(f"  {name}  [dim]{what}{size}[/]")


# ---- commands -----------------------------------------------------------------


@app.command()
def swarm(
    voters: opts.Voters = None,
    observers: opts.Observers = None,
    walks: opts.Walks = None,
    depth: opts.Depth = None,
    seed: opts.Seed = None,
    duration: opts.Duration = None,
    workers: opts.Workers = None,
    weights: opts.Weights = None,
    out: opts.Out = None,
    config: opts.Config = None,
    pre_vote: opts.PreVote = None,
    snapshots: opts.Snapshots = None,
    reconfig: opts.Reconfig = None,
    disk_loss: opts.DiskLoss = None,
    mutation: opts.Mutation = None,
    disable_check: opts.DisableCheck = None,
    log_capacity: opts.LogCapacity = None,
    msg_slots: opts.MsgSlots = None,
    max_epoch: opts.MaxEpoch = None,
    max_records: opts.MaxRecords = None,
    walk_stats: opts.WalkStats = None,
    chunk_walks: opts.ChunkWalks = None,
    flush_seconds: opts.FlushSeconds = None,
    backend: opts.Backend = None,
    crash_weight: opts.CrashWeight = None,
    partition_weight: opts.PartitionWeight = None,
    lose_weight: opts.LoseWeight = None,
    duplicate_weight: opts.DuplicateWeight = None,
    fail_on_violation: opts.FailOnViolation = False,
    require: Annotated[Optional[list[str]], typer.Option(
        "--require", help="A reachability target the run must reach (repeatable): exit 1 "
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

    Results go to the run folder (--out). Exit code 0 when the run finished,
    with or without violations (see --fail-on-violation); 2 on a bad option;
    128 + the signal's number when a signal stopped it (everything finished is saved).
    """
    values = dict(
        voters=voters,
        observers=observers,
        walks=walks,
        depth=depth,
        seed=seed,
        duration=duration,
        workers=workers,
        weights=weights,
        out=out,
        pre_vote=pre_vote,
        snapshots=snapshots,
        reconfig=reconfig,
        disk_loss=disk_loss,
        mutation=mutation,
        disabled_checks=disable_check or None,  # typer gives [] when absent
        log_capacity=log_capacity,
        msg_slots=msg_slots,
        max_epoch=max_epoch,
        max_records=max_records,
        walk_stats=walk_stats,
        chunk_walks=chunk_walks,
        flush_seconds=flush_seconds,
        backend=backend,
        crash_weight=crash_weight,
        partition_weight=partition_weight,
        lose_weight=lose_weight,
        duplicate_weight=duplicate_weight,
    )
    if resume is not None:
        if config is not None:
            fail("--resume takes the run folder's own config.toml; leave out --config")
        if out is not None and Path(out).resolve() != resume.resolve():
            fail(f"--resume {resume} continues that folder; --out {out} names another")
        from kraftwalk.run.resume import resume_config

        cfg = resume_config(resume, values)
    else:
        cfg = make_config(config, **values)
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
        raise typer.Exit(EXIT_VIOLATIONS)
    if fail_on_violation and int(result.get("violations") or 0) > 0:
        raise typer.Exit(EXIT_VIOLATIONS)


def print_sweep_summary(result: Mapping[str, Any], console: Console) -> None:
    """The sweep's totals and its per-cell table (summary.parquet)."""
    from kraftwalk.run.sweep import SUMMARY, read_summary
    from kraftwalk.sweep_spec import value_text

    if not result.get("out_dir"):  # stopped before the sweep began
        return
    out = Path(str(result["out_dir"]))
    table = Table(title=escape(f"kraftwalk sweep {out.name}"), box=box.SIMPLE,
                  title_justify="left")
    rows = read_summary(out).to_pylist() if (out / SUMMARY).is_file() else []
    grid = list(result.get("grid") or {})
    status = any(r["status"] != "finished" for r in rows)  # a column only when it says something
    for col in (*grid, "walks", "steps/s per core", "violations", "targets",
                *(("status",) if status else ())):
        table.add_column(col, justify="left" if col in grid or col == "status" else "right")
    for r in rows:
        viol = _num(r["violations"])
        table.add_row(*(escape(value_text(r[k])) for k in grid),
                      _num(r["walks"]), _num(r["steps_per_s_per_core"], ",.0f"),
                      f"[bold red]{viol}[/]" if r["violations"] else viol,
                      f"{r['targets_reached']}/{len(TARGET_NAMES)}",
                      *((escape(str(r["status"])),) if status else ()))
    console.print(table)
    n = int(result.get("violations") or 0)
    console.print(f"{result.get('cells_finished', 0)}/{result.get('cells')} cells finished, "
                  f"{_num(result.get('walks'))} walks, {_num(result.get('steps'))} steps in "
                  f"{_num(result.get('wall_seconds'), ',.1f')} s: "
                  + (f"[bold red]{n:,} violations[/]" if n else "[bold green]no violations[/]"))
    console.print(f"sweep folder: [bold]{escape(str(out))}[/] (summary.parquet, summary.md; "
                  "walks/, violations/, coverage/ partitioned by cell)")


@app.command()
def sweep(
    sweep_file: Annotated[Optional[Path], typer.Argument(
        help="Sweep file (TOML): command = \"swarm\", a \\[swarm] table of the settings every "
        "cell shares (as in a --config file; walks or duration is each cell's budget) and a "
        "\\[grid] table of settings to vary, each a list of values; one cell per "
        "combination. See experiments/sweep-*.toml.", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Sweep folder, created by the sweep (default: "
        f"{RUNS_DIR}/sweep-<id>).", metavar="DIR", rich_help_panel=opts.PANEL_OUTPUT)] = None,
    walks: opts.Walks = None,
    duration: opts.Duration = None,
    seed: opts.Seed = None,
    workers: opts.Workers = None,
    backend: opts.Backend = None,
    chunk_walks: opts.ChunkWalks = None,
    flush_seconds: opts.FlushSeconds = None,
    resume: Annotated[Optional[Path], typer.Option(
        "--resume", help="Continue the sweep in this folder (stopped by Ctrl-C, a signal or "
        "kill -9) with its own sweep.toml: finished cells are kept, a stopped cell continues "
        "after its saved walks. Only --workers, --backend, --chunk-walks and --flush-seconds "
        "may be given.", metavar="DIR", rich_help_panel=opts.PANEL_OUTPUT)] = None,
    fail_on_violation: opts.FailOnViolation = False,
) -> None:
    """Run a swarm for every cell of a grid of settings (cluster sizes, observers,
    pre-vote, fault weights, mutations, depth) into one hive-partitioned dataset
    (walks/voters=5/pre_vote=true/...) with a per-cell summary table beside it.

    --walks, --duration and --seed set every cell's budget and seed over the file's.
    Exit code 0 when every cell finished; 2 on a bad option or sweep file; 128 + the
    signal's number when a signal stopped it (continue it with --resume)."""
    from kraftwalk.sweep_spec import load_sweep, with_base

    free = dict(workers=workers, backend=backend, chunk_walks=chunk_walks,
                flush_seconds=flush_seconds)
    if resume is not None:
        if sweep_file is not None:
            fail("--resume takes the sweep folder's own sweep.toml; leave out the SWEEP_FILE")
        fixed = {"--walks": walks, "--duration": duration, "--seed": seed}
        given = [k for k, v in fixed.items() if v is not None]
        if given:
            fail(f"--resume continues the sweep as it was made; {given[0]} would change its walks")
        if out is not None and out.resolve() != resume.resolve():
            fail(f"--resume {resume} continues that folder; --out {out} names another")
        from kraftwalk.run.sweep import resume_spec

        spec = with_base(resume_spec(resume), **free)
        out = resume
    else:
        if sweep_file is None:
            fail("give the sweep file (SWEEP_FILE), or --resume a sweep folder")
        spec = with_base(load_sweep(sweep_file), walks=walks, duration=duration, seed=seed,
                         **free)
        if out is None:
            from kraftwalk.config import new_run_id

            out = Path(RUNS_DIR) / f"sweep-{new_run_id()}"
        check_output_dir(out, "--out")
        from kraftwalk.storage.paths import check_new_folder
        from kraftwalk.run.sweep import NEW_SWEEP

        check_new_folder(out, *NEW_SWEEP)
    from kraftwalk.run.backends import check_backend
    from kraftwalk.run.sweep import run_sweep
    from kraftwalk.commands.sweep_progress import SweepProgress

    check_backend(spec.cells()[0].config)
    try:
        with SweepProgress(spec, Console(stderr=True)) as progress:
            result = run_sweep(spec, out, resume=resume is not None, on_cell=progress.on_cell,
                               progress=progress.update, on_phase=progress.phase)
    except RunStopped as stop:
        result = stop.summary or {}
        print_sweep_summary(result, Console())
        Console(stderr=True).print(
            f"[bold yellow]stopped by {stop}[/]"
            + (f" in cell {escape(str(result['stopped_in']))}" if result.get("stopped_in") else "")
            + f": every finished chunk is saved in {escape(str(out))}; continue with "
            f"kraftwalk sweep --resume {escape(str(out))}")
        raise typer.Exit(128 + stop.signum) from None
    print_sweep_summary(result, Console())
    if fail_on_violation and int(result.get("violations") or 0) > 0:
        raise typer.Exit(EXIT_VIOLATIONS)


@app.command()
def hunt(
    mutation: Annotated[Optional[list[str]], typer.Option(
        "--mutation", help="Mutation to hunt; repeat for several; `none` hunts the correct "
        "model (it must find nothing).", metavar="NAME")] = None,
    all_: Annotated[bool, typer.Option(
        "--all", help="Hunt every mutation: safety ones with the swarm, liveness ones with "
        "timed walks of the scenario that exposes them.")] = False,
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
    voters: opts.Voters = None,
    observers: opts.Observers = None,
    depth: opts.Depth = None,
    workers: opts.Workers = None,
    config: opts.Config = None,
    pre_vote: opts.PreVote = None,
    snapshots: opts.Snapshots = None,
    reconfig: opts.Reconfig = None,
    disk_loss: opts.DiskLoss = None,
    disable_check: opts.DisableCheck = None,
    report: Annotated[Optional[Path], typer.Option(
        "--out", "--report", help="Folder for NAME.parquet, NAME.md and NAME.png, created if "
        "missing (default: results/; --report: old name).")] = None,
    name: Annotated[str, typer.Option(
        "--name", help="File name stem of the report: letters, digits, '.', '_', '-'.")] = "hunt",
) -> None:
    """Run the swarm until the first violation, per mutation and seed; report the
    walks, steps and seconds it took (median and range) and the invariant that caught it."""
    from kraftwalk.vocabulary.mutations import MUTATIONS

    names = list(mutation or [])
    if all_:
        names += list(MUTATIONS)
    if not names:
        fail("give --mutation NAME (repeatable) or --all")
    names = list(dict.fromkeys(names))
    modes = list(dict.fromkeys(weights or ["swarm"]))
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name in (".", ".."):
        fail(f"--name {name!r} must be a plain file name stem: letters, digits, '.', '_', '-'")
    base = make_config(config, uses=HUNT_KEYS, voters=voters, observers=observers, depth=depth,
                       workers=workers, pre_vote=pre_vote, snapshots=snapshots,
                       reconfig=reconfig, disk_loss=disk_loss,
                       disabled_checks=disable_check or None)
    check_output_dir(report or Path("results"), "--out")
    for m in names:  # validate every name before anything runs
        make_config(None, mutation=m, snapshots=True, reconfig=True, disk_loss=True)
    for mode in modes:
        make_config(None, weights=mode)
    from kraftwalk.run.hunt import hunt as run_hunt, render_markdown, summarize, write_results

    err = Console(stderr=True)
    rows: list[dict] = []
    try:
        run_hunt(base, names, modes, list(range(first_seed, first_seed + seeds)), budget,
                 log=lambda msg: err.print(escape(msg)), rows=rows)
    except RunStopped as stop:  # keep the hunts that finished
        if rows:
            files = write_results(rows, summarize(rows), budget, report or Path("results"), name)
            err.print(f"stopped by {stop}: {len(rows)} finished hunts written to "
                      + ", ".join(str(f) for f in files))
        raise typer.Exit(128 + stop.signum) from None
    summary = summarize(rows)
    files = write_results(rows, summary, budget, report or Path("results"), name)
    Console().print(render_markdown(summary, budget), soft_wrap=True)
    Console().print("written: " + ", ".join(str(f) for f in files))


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
CellPreVoteOpt = Annotated[Optional[str], typer.Option(
    "--pre-vote", metavar="on|off", help="`kraftwalk elect` folders: the pre-vote setting "
    "of the walk (default: the first violation's).")]


def _trace_for(run_dir, walk, voters=None, pre_vote=None):
    from kraftwalk.counterexamples.replay import check_against_run, load_run, pick_walk, record
    from kraftwalk.counterexamples.timed_replay import is_elect_folder, record_timed

    if run_dir is None:
        fail("give the run folder to replay (RUN_DIR)")
    if is_elect_folder(run_dir):
        from kraftwalk.elect_config import pre_vote_values

        pv = pre_vote_values([pre_vote]) if pre_vote is not None else (None,)
        if len(pv) != 1:
            fail(f"--pre-vote {pre_vote!r}: name one setting, on or off")
        return record_timed(run_dir, walk, voters, pv[0])
    if voters is not None or pre_vote is not None:
        fail("--voters and --pre-vote pick a cell of a `kraftwalk elect` folder; "
             f"{run_dir} is a swarm run")
    cfg = load_run(run_dir)
    w = pick_walk(run_dir, walk)
    trace = record(cfg, w)
    check_against_run(run_dir, trace)
    return trace


def _check_shrinkable(trace) -> None:
    if not trace.invariant:
        fail(f"walk {trace.walk} has no violation to shrink")


@app.command()
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
        trace = _trace_for(run_dir, walk, voters, pre_vote)
    if shrink:
        _check_shrinkable(trace)
        from kraftwalk.counterexamples.replay import shrink_trace

        trace = shrink_trace(trace)
    _print_trace(trace)
    if itf is not None:
        from kraftwalk.counterexamples.itf import write_itf

        write_itf(trace, itf)
        Console(stderr=True).print(f"written: {itf}")


@app.command(name="shrink")
def shrink_cmd(
    run_dir: RunDir = None,
    walk: WalkOpt = None,
    itf: ItfOpt = None,
    quiet: Annotated[bool, typer.Option(
        "--quiet", help="Print only the lengths, not the shrunk trace.")] = False,
    voters: CellVotersOpt = None,
    pre_vote: CellPreVoteOpt = None,
) -> None:
    """Shrink a violating walk to a short walk that violates the same invariant or
    property; print the lengths before and after and the trace. A swarm walk loses
    actions (delta debugging over them); a timed walk of a `kraftwalk elect` folder
    loses the random faults (crashes, partitions, loss bursts, lost messages) it does
    not need, and is re-simulated with the rest, every timer and delivery kept."""
    if itf is not None:
        check_output_file(itf, "--itf")
    trace = _trace_for(run_dir, walk, voters, pre_vote)
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


@app.command()
def plot(
    run_dir: RunDir = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="PNG file to write, its folder created if missing "
        "(default: RUN_DIR/walks.png).")] = None,
) -> None:
    """Plot a run's per-walk statistics (elections, leader changes, committed entries, ...)."""
    if run_dir is None:
        fail("give the run folder to plot (RUN_DIR)")
    check_output_file(out or Path(run_dir) / "walks.png", "--out")
    from kraftwalk.storage import rundir

    if not any(rundir.has_dataset(run_dir, d) for d in (rundir.WALKS, rundir.HISTOGRAM)):
        fail(f"{run_dir} is not a run folder: it has no walks or walks_histogram dataset")
    from kraftwalk.storage.plots import plot_run

    Console().print(f"written: {plot_run(run_dir, out)}")


@app.command()
def report(
    folder: Annotated[Optional[Path], typer.Argument(
        help="A run folder (kraftwalk swarm) or a sweep folder (kraftwalk sweep).",
        show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Folder for report.md and its PNG plots, created if missing "
        "(default: FOLDER/report).", metavar="DIR")] = None,
) -> None:
    """Write a Markdown report with tables and PNG plots: violations by invariant and
    configuration, coverage of the reachability targets, walk statistics, and for a
    sweep throughput per cell."""
    if folder is None:
        fail("give the run or sweep folder to report on (FOLDER)")
    if not folder.is_dir():
        fail(f"{folder} is not a folder: give a run or sweep folder")
    check_output_dir(out or folder / "report", "--out")
    from kraftwalk.commands.report_page import write_report

    Console().print(f"written: {write_report(folder, out)}")


def _timing_help() -> str:
    from kraftwalk.vocabulary.timing import TIMING

    return "; ".join(t.name for t in TIMING.values() if t.name != "scenario")


@app.command()
def elect(
    voters: Annotated[Optional[list[int]], typer.Option(
        "--voters", parser=opts.parse_int, metavar="N", help="Cluster size (voters, 1..9); "
        "repeat for several, e.g. --voters 3 --voters 5 (default: 3, 5 and 7).")] = None,
    pre_vote: Annotated[Optional[list[str]], typer.Option(
        "--pre-vote", metavar="on|off|both", help="Pre-vote (KIP-996) setting; repeat or say "
        "both (default: the profile's: both for kafka, off for the Ongaro profiles).")] = None,
    scenario: Annotated[Optional[str], typer.Option(
        "--scenario", metavar="NAME", help="What each walk does: cold-start (all nodes start "
        "at once), leader-crash (steady state, then the leader crashes), leader-isolated "
        "(the leader is cut off from every node), rolling-restart, random-faults (crashes, "
        "partitions and message-loss bursts, then everything heals) (default: leader-crash).")] = None,
    profile: Annotated[Optional[str], typer.Option(
        "--profile", metavar="NAME", help="Timing profile: kafka (Kafka's defaults), ongaro "
        "(Raft as in Ongaro's dissertation ch. 9: randomized timers 150-300 ms, no backoff), "
        "ongaro-wan (timeouts 300-600 ms, latency 30-40 ms) (default: kafka).")] = None,
    timing: Annotated[Optional[list[str]], typer.Option(
        "--timing", metavar="NAME=VALUE", help="Override one timing parameter (times in ms; "
        "repeat for several; the README's timing table says what each means and its Kafka "
        "config). Names: " + _timing_help() + ".")] = None,
    walks: Annotated[Optional[int], typer.Option(
        "--walks", parser=opts.parse_int, metavar="N",
        help="Walks per cluster size and pre-vote setting (default: 2000).")] = None,
    seed: opts.Seed = None,
    workers: opts.Workers = None,
    observers: Annotated[Optional[int], typer.Option(
        "--observers", parser=opts.parse_int, metavar="N", help="Observers (brokers "
        "replicating the log without voting), 0..4 (default: 0).")] = None,
    mutation: opts.Mutation = None,
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
) -> None:
    """Time elections: run a timed scenario per cluster size and pre-vote setting; print
    election-time percentiles, split votes, downtime and disruptions; write per-walk
    Parquet, a summary and a CDF plot."""
    from kraftwalk.config import new_run_id
    from kraftwalk.elect_config import make_elect_config, parse_timing, pre_vote_values
    from kraftwalk.storage.paths import make_new_folder

    cfg = make_elect_config(
        config, voters=tuple(voters or ()), pre_vote=pre_vote_values(pre_vote or []),
        scenario=scenario, profile=profile, timing=parse_timing(timing or []), walks=walks,
        seed=seed, workers=workers, observers=observers, mutation=mutation,
        walk_stats=walk_stats)
    folder = make_new_folder(out or Path(RUNS_DIR) / f"elect-{new_run_id()}", "folder")
    from kraftwalk.run.elect import render_markdown, run as run_elect

    n_workers = cfg.effective_workers
    total = cfg.walks * len(cfg.cells())
    err = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("[progress.description]{task.description}"),
                  BarColumn(), TextColumn("{task.completed:,}/{task.total:,} walks"),
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err,
                  transient=True) as bar:
        task = bar.add_task("compiling and running timed walks", total=total)

        def on_cell(cell: dict) -> None:
            err.print(f"{cell['voters']} voters, pre-vote {'on' if cell['pre_vote'] else 'off'}:"
                      f" {cell['walks']:,} walks, {cell['events']:,} events in "
                      f"{cell['seconds']:.1f} s (JIT {cell['jit_seconds']:.1f} s)")
            bar.update(task, description="running timed walks")

        try:
            result = run_elect(cfg, folder, n_workers, lambda n: bar.advance(task, n), on_cell)
        except RunStopped as stop:
            bar.stop()
            err.print(f"stopped by {stop}: finished cells summarized in {folder}")
            raise typer.Exit(128 + stop.signum) from None
    Console().print(render_markdown(result["summary"], cfg), soft_wrap=True)
    rate = result["events_per_second"]
    saved = "walks" if cfg.walk_stats == "rows" else "walks_histogram"
    Console().print(f"{result['events']:,} events in {result['seconds']:.1f} s"
                    + (f" ({rate:,} events/s on {n_workers} workers)" if rate else "")
                    + f"; written to {folder}: {saved}/, summary.md, summary.parquet, "
                    "violations.parquet, elect-cdf.png, config.toml, run.json")


@app.command()
def mutations() -> None:
    """List the known-bug mutations that --mutation can switch on."""
    from kraftwalk.vocabulary.mutations import MUTATIONS

    table = Table(box=box.SIMPLE, show_header=True)
    table.add_column("name", style="bold")
    table.add_column("kind")
    table.add_column("what it breaks")
    for m in MUTATIONS.values():
        table.add_row(m.name, m.kind, m.description)
    Console().print(table)


@app.command()
def bench(
    voters: opts.Voters = None,
    observers: opts.Observers = None,
    depth: opts.Depth = None,
    seed: opts.Seed = None,
    weights: opts.Weights = None,
    config: opts.Config = None,
    pre_vote: opts.PreVote = None,
    snapshots: opts.Snapshots = None,
    reconfig: opts.Reconfig = None,
    disk_loss: opts.DiskLoss = None,
    mutation: opts.Mutation = None,
    seconds: Annotated[float, typer.Option(
        "--seconds", parser=opts.bounded(float, 1.0), metavar="SECONDS", help="Length of each timed throughput run, in seconds.")] = 20.0,
    cold: Annotated[bool, typer.Option(
        "--cold/--no-cold", help="Also measure a cold JIT compile into an empty cache (~40 s).")] = True,
    memory_walks: Annotated[Optional[list[int]], typer.Option(
        "--memory-walks", parser=opts.bounded(int, 1), metavar="N", help="Walk counts of the peak-memory runs; repeat the option "
        "(default: 100000 and 1000000).")] = None,
    report: Annotated[Optional[Path], typer.Option(
        "--out", "--report", help="Folder for bench.json and bench.md, created if missing "
        "(default: results/; --report: old name).")] = None,
    timed_only: Annotated[bool, typer.Option(
        "--timed-only", help="Measure only the timed mode (checked events/s per core, "
        "walks/s, bytes per walk, JIT) into bench-timed.json and bench-timed.md.")] = False,
) -> None:
    """Measure throughput, memory and JIT time on this machine (the README's figures),
    untimed and timed."""
    cfg = make_config(config, uses=BENCH_KEYS, voters=voters, observers=observers, depth=depth,
                      seed=seed, weights=weights, pre_vote=pre_vote, snapshots=snapshots,
                      reconfig=reconfig, disk_loss=disk_loss, mutation=mutation)
    check_output_dir(report or Path("results"), "--out")
    from kraftwalk.run.bench import measure, render_markdown, write_report

    err = Console(stderr=True)
    if timed_only:
        from kraftwalk.run.bench import measure_timed, render_timed_markdown

        res = measure_timed(cfg, seconds, log=lambda msg: err.print(f"[dim]{escape(msg)}[/]"))
        j, md = write_report(res, report or Path("results"), "bench-timed", render_timed_markdown)
        Console().print(render_timed_markdown(res))
        Console().print(f"written: {j}, {md}")
        return
    res = measure(cfg, seconds=seconds, cold=cold,
                  memory_walks=tuple(memory_walks or (100_000, 1_000_000)),
                  log=lambda msg: err.print(f"[dim]{escape(msg)}[/]"))
    j, md = write_report(res, report or Path("results"))
    Console().print(render_markdown(res))
    Console().print(f"written: {j}, {md}")


if __name__ == "__main__":  # `python -m kraftwalk.cli` before the package is installed
    app(prog_name="kraftwalk")
