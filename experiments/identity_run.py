"""Walks and violations of two checkouts for one seed, compared row for row.

A speed change may not change what a step means: the same (master seed, walk index,
config) must give the same walk before and after. Each revision gets a worktree and
a virtual environment (as compare_speed.py), runs ``kraftwalk swarm --walks N --seed S``
(plus ``--extra``), and the two run folders' walks and violations datasets and
coverage tables are compared (run ids aside):

    python experiments/identity_run.py --old 77253bf [--new HEAD] [--walks 1000000]
        [--extra "--mutation double-vote"]

writes NAME.md (and .json; --name, default identity-run) into --out.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_speed import checkouts, resolve, swarm  # noqa: E402

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
    args = ap.parse_args()
    args.old, args.new = resolve(args.old), resolve(args.new)
    swarm_args = ["--walks", str(args.walks), "--seed", str(args.seed), *args.extra.split()]
    with tempfile.TemporaryDirectory() as tmp, checkouts(args.old, args.new, Path(tmp)) as pys:
        where = Path(tmp)
        runs = {}
        for label in ("old", "new"):
            runs[label] = where / f"run-{label}"
            t = time.perf_counter()
            swarm(pys[label], runs[label], swarm_args, where / f"cache-{label}")
            print(f"{label} ({getattr(args, label)}): {time.perf_counter() - t:.0f} s", flush=True)
        res = {"old": args.old, "new": args.new, "swarm_args": swarm_args}
        for name in (rundir.WALKS, rundir.VIOLATIONS):
            old, new = table(runs["old"], name), table(runs["new"], name)
            res[f"{name}_rows"] = [old.num_rows, new.num_rows]
            res[f"{name}_identical"] = old.equals(new)
        res["coverage_identical"] = pq.read_table(runs["old"] / rundir.COVERAGE_FILE).equals(
            pq.read_table(runs["new"] / rundir.COVERAGE_FILE))
    args.out.mkdir(exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(res, indent=1) + "\n")
    same = all(res[k] for k in ("walks_identical", "violations_identical", "coverage_identical"))
    md = ("| dataset | rows old / new | identical |\n|---|---|---|\n"
          f"| walks | {res['walks_rows'][0]:,} / {res['walks_rows'][1]:,} | "
          f"{'yes' if res['walks_identical'] else 'NO'} |\n"
          f"| violations | {res['violations_rows'][0]:,} / {res['violations_rows'][1]:,} | "
          f"{'yes' if res['violations_identical'] else 'NO'} |\n"
          f"| coverage | - | {'yes' if res['coverage_identical'] else 'NO'} |\n\n"
          f"`kraftwalk swarm {' '.join(swarm_args)}` under {args.old} and {args.new}: "
          + ("the same walks.\n" if same else "they differ.\n"))
    (args.out / f"{args.name}.md").write_text(md)
    print(md)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
