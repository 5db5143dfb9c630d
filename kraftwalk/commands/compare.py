"""``kraftwalk compare``: two configurations' timed statistics side by side, each
difference with its confidence interval."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kraftwalk.commands.console import fail


def compare(
    first: Annotated[Optional[Path], typer.Argument(
        help="An elect folder: A, or the one folder --by splits.", show_default=False,
        metavar="ELECT_DIR")] = None,
    second: Annotated[Optional[Path], typer.Argument(
        help="A second elect folder, B (made with the same --seed, its walks pair with A's "
        "one by one).", show_default=False, metavar="[ELECT_DIR_B]")] = None,
    by: Annotated[Optional[str], typer.Option(
        "--by", help="Compare the values of one setting within ELECT_DIR: kafka, voters, "
        "observers, pre-vote, scenario, profile or mutation.", metavar="SETTING",
        show_default=False)] = None,
    baseline: Annotated[Optional[str], typer.Option(
        "--baseline", help="With --by, the value the others are compared with (default: the "
        "folder's first).", metavar="VALUE", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", help="Folder for compare.md, compare.parquet and compare.png, created if "
        "missing (default: print the table only).", metavar="DIR",
        show_default=False)] = None,
) -> None:
    """Compare the timed walks of two configurations, statistic by statistic: time to
    elect (mean, p50, p99), downtime, split votes, epochs per election, disruptive and
    lost elections, failed pre-votes, leader losses and violations, each as B - A with
    a 95% bootstrap interval. A statistic differs when its interval leaves out 0.

    Two elect runs with the same seed walk the same walks under two rules, so their
    walks are compared in pairs, which cancels the noise they share: `kraftwalk elect
    --scenario cold-start --out a; kraftwalk elect --scenario cold-start --mutation
    no-fetch-timer-reset --out b; kraftwalk compare a b`. One run of several releases
    (or pre-vote settings, cluster sizes) compares with --by: `kraftwalk elect --kafka
    4.0 --kafka 4.0.1 --out r; kraftwalk compare r --by kafka`. Exit 0 whether or not
    anything differs."""
    from kraftwalk.counterexamples.timed_replay import is_elect_folder
    from kraftwalk.errors import UsageError
    from kraftwalk.run.compare import BY_NAMES, cell_pairs, compare_cells, read_walks
    from kraftwalk.storage.paths import check_output_dir

    if first is None:
        fail("give the elect folder to compare (ELECT_DIR), and a second one or --by")
    if by is not None and by not in BY_NAMES:
        fail(f"--by must be one of {', '.join(BY_NAMES)}, got {by!r}")
    if baseline is not None and by is None:
        fail("--baseline needs --by: it names one value of that setting")
    if out is not None:
        check_output_dir(out, "--out")
    for folder in (first, second):
        if folder is None:
            continue
        if not folder.is_dir():
            fail(f"{folder} is not a folder: give an elect folder (kraftwalk elect)")
        if not is_elect_folder(folder):
            fail(f"{folder} is not an elect folder: compare takes the timed walks of "
                 "kraftwalk elect")
    a = read_walks(first)
    b = read_walks(second) if second is not None else None
    pairs, name_a, name_b = cell_pairs(a, b, by, baseline)
    table = compare_cells(pairs)
    if table.empty:
        raise UsageError("no statistic was measured on both sides")
    def side(folder, name):
        return f"{folder} ({name})" if name else str(folder)

    heading = (f"A: {side(first, name_a)}; B: {side(second or first, name_b)}. "
               "B - A with a 95% bootstrap interval"
               + (", walks paired by seed and index" if table["paired"].all() else "")
               + "; differs: the interval leaves out 0.")
    md = render_markdown(table, heading) + "\n\n" + walks_made_by(first, second)
    typer.echo(md)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.md").write_text(md + "\n")
        table.to_parquet(out / "compare.parquet", index=False)
        from kraftwalk.storage.plots import plot_compare

        plot_compare(table, out / "compare.png")
        typer.echo(f"written: {out}/compare.md, compare.parquet, compare.png")


def walks_made_by(*folders) -> str:
    """Which kraftwalk made each side's walks (its run.json's record)."""
    import json

    from kraftwalk.storage.provenance import recorded_made_by

    seen = []
    for folder in dict.fromkeys(f for f in folders if f is not None):
        try:
            made = recorded_made_by(json.loads((folder / "run.json").read_text()).get("versions"))
        except (OSError, ValueError, AttributeError):
            made = None
        seen.append(f"{folder}: {made or 'unknown'}")
    return "Walks made by " + "; ".join(seen) + "."


def _fmt(x: float) -> str:
    if x != x:  # NaN
        return "-"
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


def render_markdown(table, heading: str) -> str:
    """A table per cell: each statistic on both sides, B - A with its interval (in
    points for a share of walks), its change in % of A, and whether it differs."""
    lines = [heading]
    for cell, part in table.groupby("cell", sort=False):
        walks = f"{part['walks_a'].iloc[0]:,} and {part['walks_b'].iloc[0]:,} walks"
        lines += ["", f"**{cell}** ({walks})", "",
                  "| statistic | A | B | B - A | 95% interval | change | differs |",
                  "|---|---|---|---|---|---|---|"]
        for r in part.itertuples():
            unit = {"ms": " ms", "% of walks": " pt"}.get(r.unit, "")
            change = "-" if r.change_pct != r.change_pct else f"{r.change_pct:+.1f}%"
            name = f"{r.statistic} ({r.unit})" if r.unit else r.statistic
            lines.append(f"| {name} | {_fmt(r.a)} | {_fmt(r.b)} | {_signed(r.difference)}{unit} "
                         f"| [{_signed(r.ci_low)}, {_signed(r.ci_high)}] | {change} | "
                         f"{'yes' if r.differs else 'no'} |")
    return "\n".join(lines)


def _signed(x: float) -> str:
    return "-" if x != x else ("+" if x > 0 else "") + _fmt(x)
