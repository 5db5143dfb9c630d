"""Peak memory of long runs: it must stay flat however long a run lasts.

Each run is a fresh process (``kraftwalk.bench``'s child runner) of the default
swarm on 2 workers for the given seconds; the figure is the peak RSS of the main
process and of the largest worker, with the walks it ran.

    python experiments/memory.py --seconds 60 --seconds 3600 [--nice]

writes results/memory-runs.md (and .json). ``--nice`` runs at the lowest CPU priority,
so a long run can share the machine: memory does not depend on speed.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from kraftwalk.bench import _child_run
from kraftwalk.config import RunConfig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, action="append", required=True)
    ap.add_argument("--nice", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    if args.nice:
        os.nice(19)
    d = RunConfig()
    common = {k: getattr(d, k) for k in ("voters", "observers", "depth", "seed", "weights")}
    rows = []
    for s in args.seconds:
        res = _child_run({**common, "duration": s, "workers": 2})
        rows.append({"seconds": s, "walks": res["walks"], "steps": res["steps"],
                     "main_rss_mib": round(res["peak_rss_mib"], 1),
                     "worker_rss_mib": round(res["peak_rss_children_mib"], 1)})
        print(rows[-1], flush=True)
    args.out.mkdir(exist_ok=True)
    (args.out / "memory-runs.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["| run | walks | peak RSS main | peak RSS largest worker |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['seconds']:g} s on 2 workers | {r['walks']:,} | "
                     f"{r['main_rss_mib']:.0f} MiB | {r['worker_rss_mib']:.0f} MiB |")
    note = " (at the lowest CPU priority, sharing the machine)" if args.nice else ""
    lines.append(f"\nDefault swarm config, fresh process per run{note}.")
    (args.out / "memory-runs.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
