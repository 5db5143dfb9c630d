"""Walks and violations of two checkouts for one seed, compared row for row.

A speed change may not change what a step means: the same (master seed, walk index,
config) must give the same walk before and after. Each revision gets a worktree and
a virtual environment (as compare_speed.py), runs ``kraftwalk swarm --walks N --seed S``
(plus ``--extra``), and the two run folders' walks and violations datasets and
coverage tables are compared (run ids aside):

    python experiments/identity_run.py --old 77253bf [--new HEAD] [--walks 1000000]
        [--extra "--mutation double-vote"]

With ``--elect-scenario S`` (repeatable) it compares timed walks instead: ``kraftwalk
elect --scenario S --walks N --seed S`` (plus ``--extra``) per scenario under each
checkout, walks and violations datasets row for row (a change to one scenario's script
must leave the others' walks as they were).

writes NAME.md (and .json; --name, default identity-run) into --out.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_speed import checkouts, kraftwalk, resolve  # noqa: E402

from kraftwalk.storage import rundir  # noqa: E402


def table(run_dir: Path, dataset: str):
    t = rundir.read_dataset(run_dir, dataset)
    return t.drop_columns([c for c in ("run_id",) if c in t.column_names])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="git revision to compare against")
    ap.add_argument("--new", default="HEAD")
    ap.add_argument("--walks", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--extra", default="", help="further swarm options, e.g. '--voters 5'")
    ap.add_argument("--out", type=Path, default=Path.cwd(),
                    help="folder for the tables (default: the working directory)")
    ap.add_argument("--name", default="identity-run", help="file name stem of the results")
    ap.add_argument("--elect-scenario", action="append", default=[],
                    help="compare timed walks of this scenario (repeatable) instead of the swarm's")
    args = ap.parse_args()
    args.old, args.new = resolve(args.old), resolve(args.new)
    if args.elect_scenario:
        return elect_identity(args)
    swarm_args = ["--walks", str(args.walks), "--seed", str(args.seed), *args.extra.split()]
    with tempfile.TemporaryDirectory() as tmp, checkouts(args.old, args.new, Path(tmp)) as pys:
        runs = run_both(args, pys, Path(tmp), "run", ["swarm", *swarm_args])
        res = {"old": args.old, "new": args.new, "swarm_args": swarm_args}
        for name in (rundir.WALKS, rundir.VIOLATIONS):
            old, new = table(runs["old"], name), table(runs["new"], name)
            res[f"{name}_rows"] = [old.num_rows, new.num_rows]
            res[f"{name}_identical"] = old.equals(new)
        res["coverage_identical"] = pq.read_table(runs["old"] / rundir.COVERAGE_FILE).equals(
            pq.read_table(runs["new"] / rundir.COVERAGE_FILE))
    same = all(res[k] for k in ("walks_identical", "violations_identical", "coverage_identical"))
    md = ("| dataset | rows old / new | identical |\n|---|---|---|\n"
          f"| walks | {res['walks_rows'][0]:,} / {res['walks_rows'][1]:,} | "
          f"{'yes' if res['walks_identical'] else 'NO'} |\n"
          f"| violations | {res['violations_rows'][0]:,} / {res['violations_rows'][1]:,} | "
          f"{'yes' if res['violations_identical'] else 'NO'} |\n"
          f"| coverage | - | {'yes' if res['coverage_identical'] else 'NO'} |\n\n"
          f"`kraftwalk swarm {' '.join(swarm_args)}` under {args.old} and {args.new}: "
          + ("the same walks.\n" if same else "they differ.\n"))
    finish(args, res, md, same)


def run_both(args, pys: dict, where: Path, stem: str, argv: list[str]) -> dict:
    """``kraftwalk ARGV`` under the old checkout, then the new, each with its own Numba
    cache (kept across calls); returns {"old": folder, "new": folder}."""
    runs = {}
    for label in ("old", "new"):
        runs[label] = where / f"{stem}-{label}"
        t = time.perf_counter()
        kraftwalk(pys[label], argv, runs[label], where / f"cache-{label}")
        print(f"{stem} {label} ({getattr(args, label)}): {time.perf_counter() - t:.0f} s",
              flush=True)
    return runs


def finish(args, res: dict, md: str, same: bool) -> None:
    """NAME.json and NAME.md into --out, the table on stdout; exit 1 where walks differ."""
    args.out.mkdir(exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(res, indent=1) + "\n")
    (args.out / f"{args.name}.md").write_text(md)
    print(md)
    sys.exit(0 if same else 1)


def elect_table(run_dir: Path, dataset: str):
    """An elect folder's hive-partitioned dataset, in cell and walk order."""
    t = pq.read_table(run_dir / dataset)
    t = t.drop_columns([c for c in ("run_id",) if c in t.column_names])
    for k, field in enumerate(t.schema):  # the partition columns: plain strings
        if pa.types.is_dictionary(field.type):
            t = t.set_column(k, field.name, t.column(k).cast(pa.string()))
    keys = [c for c in ("kafka", "voters", "pre_vote", "walk") if c in t.column_names]
    return t.sort_by([(k, "ascending") for k in keys]) if t.num_rows else t


def elect_identity(args) -> None:
    """Timed walks of each scenario under both checkouts, compared row for row."""
    common = ["--walks", str(args.walks), "--seed", str(args.seed), *args.extra.split()]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, checkouts(args.old, args.new, Path(tmp)) as pys:
        for sc in args.elect_scenario:
            runs = run_both(args, pys, Path(tmp), sc, ["elect", "--scenario", sc, *common])
            for name in (rundir.WALKS, rundir.VIOLATIONS):
                old, new = elect_table(runs["old"], name), elect_table(runs["new"], name)
                rows.append({"scenario": sc, "dataset": name,
                             "rows": [old.num_rows, new.num_rows], "identical": old.equals(new)})
    same = all(r["identical"] for r in rows)
    res = {"old": args.old, "new": args.new, "elect_args": common, "datasets": rows}
    md = "| scenario | dataset | rows old / new | identical |\n|---|---|---|---|\n" + "".join(
        f"| {r['scenario']} | {r['dataset']} | {r['rows'][0]:,} / {r['rows'][1]:,} | "
        f"{'yes' if r['identical'] else 'NO'} |\n" for r in rows)
    md += (f"\n`kraftwalk elect --scenario S {' '.join(common)}` under {args.old} and "
           f"{args.new}: " + ("the same walks.\n" if same else "they differ.\n"))
    finish(args, res, md, same)


if __name__ == "__main__":
    main()
