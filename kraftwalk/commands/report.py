"""``kraftwalk plot`` and ``kraftwalk report``: a run's plots, and a Markdown page of
a run or a sweep."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from kraftwalk.commands.console import fail
from kraftwalk.commands.replay import RunDir
from kraftwalk.storage.paths import check_output_dir, check_output_file


def plot(
    run_dir: RunDir = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="PNG file to write, its folder created if missing "
        "(default: RUN_DIR/walks.png).")] = None,
) -> None:
    """Plot a run's per-walk statistics (elections, leader changes, committed entries, ...);
    of an elect folder, its timed walks' (time to elect, downtime, epochs, failed
    pre-votes, lost and disruptive elections) per release, cluster size and pre-vote."""
    if run_dir is None:
        fail("give the run folder to plot (RUN_DIR)")
    check_output_file(out or Path(run_dir) / "walks.png", "--out")
    from kraftwalk.counterexamples.timed_replay import is_elect_folder
    from kraftwalk.storage import rundir

    if is_elect_folder(run_dir):
        from kraftwalk.storage.plots import plot_elect_walks

        Console().print(f"written: {plot_elect_walks(run_dir, out)}")
        return

    from kraftwalk.run.sweep import is_sweep

    if is_sweep(run_dir):  # a plot per cell: one folder's plot is one cell's
        fail(f"{run_dir} is a sweep folder: plot one of its cells ({run_dir}/cells/"
             f"<setting>=<value>/...), or `kraftwalk report {run_dir}` for every cell")
    if not any(rundir.has_dataset(run_dir, d) for d in (rundir.WALKS, rundir.HISTOGRAM)):
        fail(f"{run_dir} is not a run folder: it has no walks or walks_histogram dataset")
    from kraftwalk.storage.plots import plot_run

    Console().print(f"written: {plot_run(run_dir, out)}")


def report(
    folder: Annotated[Optional[Path], typer.Argument(
        help="A run folder (kraftwalk swarm), a sweep folder (kraftwalk sweep) or an elect "
        "folder (kraftwalk elect).",
        show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Folder for report.md and its PNG plots, created if missing "
        "(default: FOLDER/report).", metavar="DIR")] = None,
) -> None:
    """Write a Markdown report with tables and PNG plots: violations by invariant and
    configuration, coverage of the reachability targets, walk statistics, and for a
    sweep throughput per cell; for an elect folder, its election times per cell, their
    CDF, and its violations with the replay command of each first one."""
    if folder is None:
        fail("give the run or sweep folder to report on (FOLDER)")
    if not folder.is_dir():
        fail(f"{folder} is not a folder: give a run, sweep or elect folder")
    check_output_dir(out or folder / "report", "--out")
    from kraftwalk.commands.report_page import write_report

    Console().print(f"written: {write_report(folder, out)}")
