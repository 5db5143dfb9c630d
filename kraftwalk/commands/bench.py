"""``kraftwalk bench``: the README's speed figures, measured on this machine."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.markup import escape

from kraftwalk.commands import options as opts
from kraftwalk.config import RUNS_DIR, make_config, new_run_id
from kraftwalk.storage.paths import check_output_dir


BENCH_KEYS = (*opts.CLUSTER_KEYS, "seed", "weights", "mutation", "chunk_walks")


@opts.config_options(*BENCH_KEYS)
def bench(
    values: dict[str, Any],
    config: opts.Config = None,
    seconds: Annotated[float, typer.Option(
        "--seconds", parser=opts.bounded(float, 1.0), metavar="SECONDS", help="Length of "
        "each of the three timed throughput runs (1 core, 2 cores, the timed mode), in "
        "seconds. The rest of a default bench (warm start, calibration, a 100,000-walk "
        "memory run, the reference model, the phase costs) about 20 s: 48 s in all on 2 cores "
        "with a warm cache.")] = 10.0,
    cold: Annotated[bool, typer.Option(
        "--cold/--no-cold", help="Also measure a cold JIT compile of every kernel into an "
        "empty cache (about 2 minutes on 2 cores).")] = False,
    memory_walks: Annotated[Optional[list[int]], typer.Option(
        "--memory-walks", parser=opts.bounded(int, 1), metavar="N", help="Walk counts of "
        "the peak-memory runs, on 2 cores; repeat the option (default: 100000, about 10 s; "
        "1000000 takes about 2 minutes).")] = None,
    report: Annotated[Optional[Path], typer.Option(
        "--out", "--report", help="Folder for bench.json and bench.md, created if missing "
        f"(default: a new {RUNS_DIR}/bench-<time>/; --report: old name).")] = None,
    timed_only: Annotated[bool, typer.Option(
        "--timed-only", help="Measure only the timed mode (checked events/s per core, "
        "walks/s, bytes per walk, warm start; with --cold the compile too) into "
        "bench-timed.json and bench-timed.md.")] = False,
) -> None:
    """Measure throughput, memory and JIT time on this machine (the README's figures),
    untimed and timed."""
    cfg = make_config(config, uses=BENCH_KEYS, **values)
    report = report or Path(RUNS_DIR) / f"bench-{new_run_id()}"  # never a tracked file
    check_output_dir(report, "--out")
    from kraftwalk.run.bench import measure, render_markdown, write_report

    err = Console(stderr=True)
    if timed_only:
        from kraftwalk.run.bench import measure_timed, render_timed_markdown

        res = measure_timed(cfg, seconds, cold=cold,
                            log=lambda msg: err.print(f"[dim]{escape(msg)}[/]"))
        j, md = write_report(res, report, "bench-timed", render_timed_markdown)
        Console().print(render_timed_markdown(res))
        Console().print(f"written: {j}, {md}")
        return
    res = measure(cfg, seconds=seconds, cold=cold,
                  memory_walks=tuple(memory_walks or (100_000,)),
                  log=lambda msg: err.print(f"[dim]{escape(msg)}[/]"))
    j, md = write_report(res, report)
    Console().print(render_markdown(res))
    Console().print(f"written: {j}, {md}")
