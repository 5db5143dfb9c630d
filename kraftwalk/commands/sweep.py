"""``kraftwalk sweep``: a swarm run per cell of a grid of settings, into one dataset."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional
from collections.abc import Mapping

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kraftwalk.commands import options as opts
from kraftwalk.commands.console import fail, num, violations_exit
from kraftwalk.config import RUNS_DIR, fields_of, option_name

# A sweep's cells share its budget; the execution options (but --out, the sweep's own
# folder) say where they run, and may differ when it is resumed.
BUDGET = fields_of("budget")
FREE = tuple(f for f in fields_of("execution") if f != "out")
from kraftwalk.errors import RunStopped
from kraftwalk.storage.paths import check_output_dir
from kraftwalk.vocabulary.properties import TARGET_NAMES


def print_sweep_summary(result: Mapping[str, Any], console: Console) -> None:
    """The sweep's totals and its per-cell table (summary.parquet)."""
    from kraftwalk.run.sweep import SUMMARY, read_summary
    from kraftwalk.sweep_spec import value_text

    if not result.get("out_dir"):  # stopped before the sweep began
        return
    out = Path(str(result["out_dir"]))
    if result.get("command") == "elect":
        print_elect_sweep_summary(result, out, console)
        return
    table = Table(title=escape(f"kraftwalk sweep {out.name}"), box=box.SIMPLE,
                  title_justify="left")
    rows = read_summary(out).to_pylist() if (out / SUMMARY).is_file() else []
    grid = list(result.get("grid") or {})
    status = any(r["status"] != "finished" for r in rows)  # a column only when it says something
    for col in (*grid, "walks", "steps/s per core", "violations", "targets",
                *(("status",) if status else ())):
        table.add_column(col, justify="left" if col in grid or col == "status" else "right")
    for r in rows:
        viol = num(r["violations"])
        table.add_row(*(escape(value_text(r[k])) for k in grid),
                      num(r["walks"]), num(r["steps_per_s_per_core"], ",.0f"),
                      f"[bold red]{viol}[/]" if r["violations"] else viol,
                      f"{r['targets_reached']}/{len(TARGET_NAMES)}",
                      *((escape(str(r["status"])),) if status else ()))
    console.print(table)
    print_totals(result, out, console,
                 f"{num(result.get('walks'))} walks, {num(result.get('steps'))} steps",
                 "walks/, violations/, coverage/ partitioned by cell")


def print_totals(result: Mapping[str, Any], out: Path, console: Console, counted: str,
                 datasets: str) -> None:
    """A sweep's last lines: cells finished, what they ``counted``, violations, and its
    folder with its ``datasets``."""
    n = int(result.get("violations") or 0)
    console.print(f"{result.get('cells_finished', 0)}/{result.get('cells')} cells finished, "
                  f"{counted} in {num(result.get('wall_seconds'), ',.1f')} s: "
                  + (f"[bold red]{n:,} violations[/]" if n else "[bold green]no violations[/]"))
    console.print(f"sweep folder: [bold]{escape(str(out))}[/] (summary.parquet, summary.md; "
                  f"{datasets})")


@opts.config_options(*BUDGET, *FREE)
def sweep(
    values: dict[str, Any],
    sweep_file: Annotated[Optional[Path], typer.Argument(
        help="Sweep file (TOML): command = \"swarm\", a \\[swarm] table of the settings every "
        "cell shares (as in a --config file; walks or duration is each cell's budget) and a "
        "\\[grid] table of settings to vary, each a list of values; one cell per "
        "combination. command = \"elect\" sweeps timed walks: an \\[elect] table (as an "
        "elect --config file, timing under \\[elect.timing]) and a grid that may name any "
        "timing parameter. See experiments/sweep-*.toml.", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Sweep folder, created by the sweep (default: "
        f"{RUNS_DIR}/sweep-<id>).", metavar="DIR", rich_help_panel=opts.PANEL_OUTPUT)] = None,
    resume: Annotated[Optional[Path], typer.Option(
        "--resume", help="Continue the sweep in this folder (stopped by Ctrl-C, a signal or "
        "kill -9) with its own sweep.toml: finished cells are kept, a stopped cell continues "
        "after its saved walks. Only --workers, --backend, --chunk-walks and --flush-seconds "
        "may be given.", metavar="DIR", rich_help_panel=opts.PANEL_OUTPUT)] = None,
    fail_on_violation: opts.FailOnViolation = True,
) -> None:
    """Run a swarm (or, with command = "elect", timed walks) for every cell of a grid of
    settings (cluster sizes, observers, pre-vote, fault weights, mutations, depth; timing
    parameters, scenario and release for elect) into one hive-partitioned dataset
    (walks/voters=5/pre_vote=true/...) with a per-cell summary table beside it.

    --walks, --duration and --seed set every cell's budget and seed over the file's.
    Exit code 0 when every cell finished and found nothing; 12 when a cell found a
    safety violation (--no-fail-on-violation: 0); 2 on a bad option or sweep file; 1 on a
    failure; 128 + the signal's number when a signal stopped it (continue it with
    --resume)."""
    from kraftwalk.sweep_spec import load_sweep, with_base

    free = {k: values[k] for k in FREE}
    if resume is not None:
        if sweep_file is not None:
            fail("--resume takes the sweep folder's own sweep.toml; leave out the SWEEP_FILE")
        given = [option_name(k) for k in BUDGET if values[k] is not None]
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
        spec = with_base(load_sweep(sweep_file), **{k: values[k] for k in BUDGET}, **free)
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
    code = violations_exit(_violated(out))
    if fail_on_violation and code is not None:
        raise typer.Exit(code)


def print_elect_sweep_summary(result: Mapping[str, Any], out: Path, console: Console) -> None:
    """An elect sweep's per-cell election times (summary.md) and totals."""
    from kraftwalk.run.sweep import SUMMARY_MD

    if (out / SUMMARY_MD).is_file():
        console.print((out / SUMMARY_MD).read_text(), soft_wrap=True, highlight=False)
    print_totals(result, out, console,
                 f"{num(result.get('walks'))} timed walks, {num(result.get('events'))} events",
                 "walks/, violations/ partitioned by cell; kraftwalk report draws them")


def _violated(out: Path) -> set[str]:
    """The properties any cell of the sweep in ``out`` violated."""
    from kraftwalk.run.sweep import SWEEP_FILE, read_summary
    from kraftwalk.sweep_spec import load_sweep

    spec = load_sweep(out / SWEEP_FILE)
    if spec.command == "elect":
        from kraftwalk.storage.elect_folder import has_cells, read_cells
        from kraftwalk.sweep_spec import cell_dir

        found: set[str] = set()
        for cell in spec.cells():
            folder = cell_dir(out, cell)
            if (folder / "run.json").is_file() and has_cells(folder, "violations", cell.config):
                found.update(read_cells(folder, "violations", ["property"], cell.config)
                             .column("property").to_pylist())
        return found

    rows = read_summary(out).to_pylist()
    return {k.removeprefix("violations_") for r in rows for k, v in r.items()
            if k.startswith("violations_") and v}
