"""``kraftwalk report``: a Markdown page with tables and PNG plots of a run, a sweep or
an elect folder.

For a run: its violations by invariant (with the replay command of each first
violating walk), coverage (each reachability target with its witness, steps per
action family, deliveries per message type) and per-walk statistics. For a sweep:
violations by invariant and cell, coverage per cell, mean walk statistics per cell and
throughput per cell, plotted against the grid's first numeric setting.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from kraftwalk.storage import rundir
from kraftwalk.errors import UsageError
from kraftwalk.storage.output import markdown_table, write_text_atomic
from kraftwalk.sweep_spec import value_text

REPORT = "report.md"


def _share(x: float) -> str:
    """A share of walks: percent, small ones without rounding to 0.00%."""
    if x == 0:
        return "0"
    return f"{x:.2%}" if x >= 1e-4 else f"{x * 100:.1g}%"


def _run_json(folder: Path) -> dict:
    try:
        meta = json.loads((folder / rundir.RUN_JSON).read_text())
    except OSError:
        raise UsageError(f"{folder} is neither a run folder nor a sweep folder (it has no "
                         "run.json or sweep.json)") from None
    except ValueError:
        raise UsageError(f"{folder / rundir.RUN_JSON} is not valid JSON") from None
    if not isinstance(meta, dict):
        raise UsageError(f"{folder / rundir.RUN_JSON} is not a kraftwalk run.json")
    return meta


def _write(out: Path, md: list[str], meta: dict) -> Path:
    """report.md, ending with what made the walks it reports (run.json's or sweep.json's
    versions: the kraftwalk, commit and kernel sources)."""
    from kraftwalk.storage.provenance import recorded_made_by

    made = recorded_made_by(meta.get("versions"))
    made = (f"Walks made by {made}." if made else
            "The folder does not record what made its walks (it predates provenance).")
    path = out / REPORT
    write_text_atomic(path, "\n".join([*md, made]) + "\n")
    return path


# ---- a run ------------------------------------------------------------------------
def run_report(run: Path, out: Path) -> Path:
    from kraftwalk.storage.coverage import Coverage
    from kraftwalk.storage.plots import plot_coverage, plot_run

    meta = _run_json(run)
    cfg = meta.get("config") or {}
    walks = int(meta.get("walks") or 0)
    n_workers = meta.get("workers")
    rate = float(meta.get("steps_per_s_per_core") or 0)
    md = [f"# kraftwalk report: run {run.name}\n",
          f"Status **{meta.get('status')}**: {walks:,} walks, {int(meta.get('steps') or 0):,} "
          f"checked steps in {float(meta.get('seconds') or 0):,.1f} s on {n_workers} "
          f"worker{'' if n_workers == 1 else 's'} ({rate:,.0f} steps/s per core, "
          f"{float(meta.get('walks_per_s') or 0):,.0f} walks/s; kernels compiled or loaded in "
          f"{float(meta.get('jit_seconds') or 0):.1f} s).\n",
          markdown_table(["setting", "value"], [[k, value_text(cfg.get(k))] for k in (
              "voters", "observers", "depth", "seed", "weights", "pre_vote", "mutation",
              "crash_weight", "partition_weight", "lose_weight", "duplicate_weight")
              if cfg.get(k) is not None])]

    md.append("## Violations\n")
    n = int(meta.get("violations") or 0)
    if not n:
        md.append(f"No violations in {walks:,} walks.\n")
    else:
        v = rundir.read_dataset(run, rundir.VIOLATIONS, columns=["walk", "invariant", "step"])
        rows = sorted(v.to_pylist(), key=lambda r: r["walk"])
        first: dict[str, dict] = {}
        counts: dict[str, int] = {}
        for r in rows:
            first.setdefault(r["invariant"], r)
            counts[r["invariant"]] = counts.get(r["invariant"], 0) + 1
        md.append(markdown_table(["invariant", "walks", "first walk", "at step", "replay"], [
            [inv, f"{counts[inv]:,}", r["walk"], r["step"],
             f"`kraftwalk replay {run} --walk {r['walk']}`"] for inv, r in first.items()]))

    md.append("## Coverage\n")
    if rundir.has_dataset(run, rundir.COVERAGE):
        cov = Coverage.from_table(rundir.read_dataset(run, rundir.COVERAGE)).table().to_pylist()
        targets = [r for r in cov if r["kind"] == "sometimes"]
        plot_coverage({run.name: {r["target"]: r["walks"] / max(walks, 1) for r in targets}},
                      out / "coverage.png")
        md.append(f"Reachability targets: {sum(1 for r in targets if r['walks'])} of "
                  f"{len(targets)} reached. A witness replays with `kraftwalk replay {run} "
                  "--witness TARGET`.\n")
        md.append("![coverage](coverage.png)\n")
        md.append(markdown_table(["target", "walks", "share", "witness walk", "at step"], [
            [r["target"], f"{r['walks']:,}", _share(r['walks'] / max(walks, 1)),
             r["first_walk"] if r["first_walk"] is not None else "never",
             r["first_step"] if r["first_step"] is not None else ""] for r in targets]))
        for kind, title in (("action", "action family"), ("delivery", "message type")):
            part = [r for r in cov if r["kind"] == kind]
            md.append(markdown_table([title, "steps" if kind == "action" else "delivered",
                              "walks with one"],
                             [[r["target"], f"{r['count']:,}", f"{r['walks']:,}"] for r in part]))
    else:
        md.append("This run folder predates coverage.\n")

    md.append("## Walk statistics\n")
    if any(rundir.has_dataset(run, d) for d in (rundir.WALKS, rundir.HISTOGRAM)):
        plot_run(run, out / "walks.png")
        md.append("![walk statistics](walks.png)\n")
    return _write(out, md, meta)


# ---- a sweep ----------------------------------------------------------------------
def _x_key(grid: dict[str, list]) -> str | None:
    """The setting plots put on the x axis: the grid's first numeric one with more than
    one value."""
    for key, values in grid.items():
        if len(values) > 1 and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                   for v in values):
            return key
    return None


def _release(spec, rows: list[dict]) -> str:
    """"kafka = R, " where neither the grid nor the sweep file names the release its
    cells modelled (they ran the default one): the page says which it was."""
    if "kafka" in spec.grid or "kafka" in spec.base:
        return ""
    found = sorted({str(r["kafka"]) for r in rows if r.get("kafka")})
    return f"kafka = {', '.join(found)} (the default release), " if found else ""


def sweep_report(sweep: Path, out: Path) -> Path:
    from kraftwalk.vocabulary.properties import INVARIANT_NAMES
    from kraftwalk.vocabulary.properties import TARGET_NAMES
    from kraftwalk.storage.plots import plot_coverage, plot_per_cell
    from kraftwalk.run.resume import FREE_ON_RESUME  # where and how walks ran, not what they did
    from kraftwalk.run.sweep import SWEEP_JSON, read_summary
    from kraftwalk.sweep_spec import load_sweep

    try:
        meta = json.loads((sweep / SWEEP_JSON).read_text())
    except ValueError:
        raise UsageError(f"{sweep / SWEEP_JSON} is not valid JSON") from None
    spec = load_sweep(sweep / "sweep.toml")
    grid = spec.grid
    rows = read_summary(sweep).to_pylist()
    walks = sum(r["walks"] for r in rows)
    steps = sum(r["steps"] for r in rows)
    n_viol = sum(r["violations"] for r in rows)
    md = [f"# kraftwalk report: sweep {sweep.name}\n",
          f"Status **{meta.get('status')}**: {meta.get('cells_finished')} of "
          f"{meta.get('cells')} cells finished; {walks:,} walks, {steps:,} checked steps in "
          f"{float(meta.get('wall_seconds') or 0):,.0f} s.\n",
          "Grid (one cell per combination): "
          + "; ".join(f"{k} = {', '.join(value_text(v) for v in vs)}" for k, vs in grid.items())
          + ".  \nEvery cell: " + _release(spec, rows)
          + ", ".join(f"{k} = {value_text(v)}" for k, v in spec.base.items()
                      if k not in FREE_ON_RESUME)
          + ".\n"]

    md.append("## Violations by invariant and configuration\n")
    if not n_viol:
        md.append(f"No violations in any cell: {walks:,} walks, {steps:,} checked steps, every "
                  "invariant checked after every step.\n")
    else:
        invs = [i for i in INVARIANT_NAMES if any(r[f"violations_{i}"] for r in rows)]
        md.append(markdown_table([*grid, "walks", *invs, "first violating walk"], [
            [*(value_text(r[k]) for k in grid), f"{r['walks']:,}",
             *(f"{r[f'violations_{i}']:,}" for i in invs),
             f"`kraftwalk replay {sweep}/cells/{r['partition']} --walk "
             f"{r['first_violation_walk']}`"] for r in rows if r["violations"]]))

    md.append("## Coverage\n")
    share = {r["partition"]: {t: r[f"reached_{t}"] / max(r["walks"], 1) for t in TARGET_NAMES}
             for r in rows}
    plot_coverage(share, out / "coverage.png")
    md.append("Share of each cell's walks that reached each target (a witness of a cell's "
              "target replays with `kraftwalk replay SWEEP/cells/<cell> --witness TARGET`).\n")
    md.append("![coverage per cell](coverage.png)\n")
    trows = []
    for t in TARGET_NAMES:
        shares = [share[r["partition"]][t] for r in rows]
        never = [r["partition"] for r in rows if not r[f"reached_{t}"]]
        trows.append([t, f"{len(rows) - len(never)}/{len(rows)}", _share(min(shares)),
                      _share(max(shares)),
                      ", ".join(never[:4]) + (f" and {len(never) - 4} more" if len(never) > 4
                                              else "")])
    md.append(markdown_table(["target", "cells reaching it", "lowest share", "highest share",
                      "never reached in"], trows))

    x = _x_key(grid)
    md.append("## Walk statistics per cell\n")
    stats = ("mean_elections", "mean_leader_changes", "mean_committed", "mean_disruptions")
    plot_per_cell(rows, grid, x, stats, out / "walk_stats.png", "per walk (mean)")
    md.append("![walk statistics per cell](walk_stats.png)\n")

    md.append("## Throughput per cell\n")
    plot_per_cell(rows, grid, x, ("steps_per_s_per_core",), out / "throughput.png",
                  "checked steps/s per core")
    md.append("![throughput per cell](throughput.png)\n")
    md.append(markdown_table([*grid, "walks", "steps", "seconds", "steps/s per core", "walks/s",
                      "violations", "targets", "status"], [
        [*(value_text(r[k]) for k in grid), f"{r['walks']:,}", f"{r['steps']:,}",
         f"{r['seconds']:,.1f}", f"{r['steps_per_s_per_core']:,.0f}",
         f"{r['walks_per_s']:,.0f}", f"{r['violations']:,}",
         f"{r['targets_reached']}/{len(TARGET_NAMES)}", r["status"]] for r in rows]))
    return _write(out, md, meta)


def elect_sweep_report(sweep: Path, out: Path) -> Path:
    """An elect sweep's per-cell election times, the percentiles against the first
    numeric grid setting (log-scaled), each cell's CDF, and its violations with the
    replay command of the first."""
    from kraftwalk.elect_config import EXECUTION
    from kraftwalk.run.sweep import SUMMARY_MD, SWEEP_JSON, read_summary
    from kraftwalk.storage import elect_folder as ef
    from kraftwalk.storage.plots import plot_elect_sweep
    from kraftwalk.sweep_spec import cell_dir, load_sweep

    try:
        meta = json.loads((sweep / SWEEP_JSON).read_text())
    except ValueError:
        raise UsageError(f"{sweep / SWEEP_JSON} is not valid JSON") from None
    spec = load_sweep(sweep / "sweep.toml")
    rows = read_summary(sweep).to_pylist()
    md = [f"# kraftwalk report: elect sweep {sweep.name}\n",
          f"Status **{meta.get('status')}**: {meta.get('cells_finished')} of "
          f"{meta.get('cells')} cells finished; {int(meta.get('walks') or 0):,} timed walks, "
          f"{int(meta.get('events') or 0):,} checked events in "
          f"{float(meta.get('wall_seconds') or 0):,.0f} s.\n",
          "Grid (one cell per combination): "
          + "; ".join(f"{k} = {', '.join(value_text(v) for v in vs)}"
                      for k, vs in spec.grid.items())
          + ".  \nEvery cell: " + _release(spec, rows) + ", ".join(
              f"{k} = {value_text(v) if not isinstance(v, (tuple, dict)) else v}"
              for k, v in spec.base.items() if k not in EXECUTION) + ".\n"]
    if (sweep / SUMMARY_MD).is_file():
        md += ["## Election times per cell\n", (sweep / SUMMARY_MD).read_text().strip() + "\n"]
    # a panel per cluster size; a line per combination of the grid's other settings
    # and the elect cells' own axes that vary
    x = _x_key(spec.grid)
    lines = [k for k in (*spec.grid, "kafka", "pre_vote")
             if k not in (x, "voters") and len({r[k] for r in rows}) > 1]
    if rows:
        plot_elect_sweep(rows, x, lines, ("elect_p50_ms", "elect_p99_ms", "elect_p99_9_ms"),
                         out / "elect-percentiles.png", "(ms, log scale)", log=True)
        plot_elect_sweep(rows, x, lines, ("split_vote_pct", "downtime_p99_ms"),
                         out / "split-downtime.png", "")
        md += ["## Percentiles" + (f" against {x}" if x else "") + "\n",
               "![time to elect: p50, p99, p99.9 per cell](elect-percentiles.png)\n",
               "![split votes and p99 downtime per cell](split-downtime.png)\n"]
    md.append("## Time to elect, per cell\n")
    for i, cell in enumerate(spec.cells()):
        cdf = cell_dir(sweep, cell) / "elect-cdf.png"
        if cdf.is_file():
            shutil.copyfile(cdf, out / f"cdf-{i}.png")
            md.append(f"{cell.partition}:\n\n![CDF of {cell.partition}](cdf-{i}.png)\n")
    found = []
    for cell in spec.cells():
        folder = cell_dir(sweep, cell)
        if (folder / rundir.RUN_JSON).is_file() and ef.has_cells(folder, rundir.VIOLATIONS,
                                                                 cell.config):
            for r in ef.read_cells(folder, rundir.VIOLATIONS, cfg=cell.config).to_pylist():
                found.append((cell.partition, r))
    md.append(f"## Violations: {len(found):,}\n")
    if found:
        first: dict[tuple, dict] = {}
        counts: dict[tuple, int] = {}
        for part, r in sorted(found, key=lambda x: x[1]["walk"]):
            key = (part, r["kafka"], r["voters"], r["pre_vote"], r["property"])
            counts[key] = counts.get(key, 0) + 1
            first.setdefault(key, r)
        md.append(markdown_table(
            ["cell", "kafka", "voters", "pre-vote", "property", "walks", "replay the first"],
            [[part, k, str(v), "on" if p else "off", prop, f"{counts[key]:,}",
              f"`kraftwalk replay {sweep}/cells/{part} --kafka {k} --voters {v} --pre-vote "
              f"{'on' if p else 'off'} --walk {first[key]['walk']}`"]
             for key in counts for part, k, v, p, prop in [key]]))
    return _write(out, md, meta)


# ---- an elect folder ----------------------------------------------------------------
def elect_report(folder: Path, out: Path) -> Path:
    """Its summary per release, cluster size and pre-vote setting (election-time
    percentiles, split votes, downtime, disruptions), the election-time CDF, and the
    liveness and safety violations per cell with the replay command of each first one."""
    meta = _run_json(folder)
    events = int(meta.get("events") or 0)
    seconds = float(meta.get("seconds") or 0)
    md = [f"# kraftwalk report: elect {folder.name}\n",
          f"Status **{meta.get('status')}**: Kafka {', '.join(map(str, meta.get('kafka') or []))}; "
          f"{events:,} checked events in {seconds:,.1f} s.\n"]
    summary = folder / "summary.md"
    if summary.is_file():  # elect's own table, with what its columns mean
        md += ["## Election times\n", summary.read_text().strip() + "\n"]
    cdf = folder / "elect-cdf.png"
    if cdf.is_file():
        shutil.copyfile(cdf, out / cdf.name)
        md.append(f"![time to elect: CDF per cell]({cdf.name})\n")
    from kraftwalk.storage.plots import plot_elect_walks

    md += ["## Per-walk statistics\n",
           f"![per-walk statistics]({plot_elect_walks(folder, out / 'walks.png').name})\n"]
    from kraftwalk.storage import elect_folder as ef

    if ef.has_cells(folder, rundir.VIOLATIONS):
        t = ef.read_cells(folder, rundir.VIOLATIONS, ["kafka", "voters", "pre_vote", "property",
                                                      "walk"]).to_pylist()
        md.append(f"## Violations: {len(t):,}\n")
        if t:
            first: dict[tuple, dict] = {}
            counts: dict[tuple, int] = {}
            for r in sorted(t, key=lambda r: r["walk"]):
                key = (r["kafka"], r["voters"], r["pre_vote"], r["property"])
                counts[key] = counts.get(key, 0) + 1
                first.setdefault(key, r)
            md.append(markdown_table(
                ["kafka", "voters", "pre-vote", "property", "walks", "replay the first"],
                [[k, str(v), "on" if p else "off", prop, f"{counts[key]:,}",
                  f"`kraftwalk replay {folder} --kafka {k} --voters {v} --pre-vote "
                  f"{'on' if p else 'off'} --walk {first[key]['walk']}`"]
                 for key in counts for k, v, p, prop in [key]]))
    return _write(out, md, meta)


def write_report(folder: str | Path, out: str | Path | None = None) -> Path:
    """Write the report of the run, sweep or elect folder ``folder`` into ``out``
    (default ``folder/report``); returns the Markdown file."""
    from kraftwalk.run.sweep import is_sweep

    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder: give a run, sweep or elect folder")
    elect = _is_elect_folder(folder)
    out = Path(out) if out is not None else folder / "report"
    made = _first_missing(out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        if elect:
            return elect_report(folder, out)
        if is_sweep(folder):
            from kraftwalk.sweep_spec import load_sweep

            if load_sweep(folder / "sweep.toml").command == "elect":
                return elect_sweep_report(folder, out)
            return sweep_report(folder, out)
        return run_report(folder, out)
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        # a run.json or sweep.json with values of the wrong type or shape, a corrupt
        # Parquet part (pyarrow's errors are ValueErrors): bad input, not a crash
        _remove(made)
        raise UsageError(f"{folder} is not a folder kraftwalk wrote, or it is damaged: "
                         f"{type(err).__name__}: {err}") from None
    except BaseException:
        _remove(made)  # nothing half-written: the folders this report made go again
        raise


def _is_elect_folder(folder: Path) -> bool:
    from kraftwalk.counterexamples.timed_replay import is_elect_folder

    try:
        return is_elect_folder(folder)
    except UsageError:  # a swarm run's unreadable config.toml: report reads run.json, not it
        return False


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (None: it exists)."""
    missing = None
    for p in (path, *path.parents):
        if p.exists():
            break
        missing = p
    return missing


def _remove(folder: Path | None) -> None:
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)

