"""Peak memory of long runs: it must stay flat however long a run lasts.

Each run is a fresh process (``kraftwalk.run.bench``'s child runner) of the default
swarm on 2 workers for the given seconds; the figure is the peak RSS of the main
process and of the largest worker, with the walks it ran.

    python experiments/memory.py --seconds 60 --seconds 3600 [--nice]
    python experiments/memory.py --sweep experiments/sweep-safety.toml [--nice]

writes results/memory-runs.md (and .json). A sweep runs as ``kraftwalk sweep`` in a
child process whose process tree (the sweep and its workers) is sampled from /proc
twice a second: peak RSS of the main process, of the largest worker and of all
together. ``--nice`` runs at the lowest CPU priority,
so a long run can share the machine: memory does not depend on speed.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kraftwalk.run.bench import _child_run
from kraftwalk.config import RunConfig
from kraftwalk.storage.provenance import made_by, provenance


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return out


def sweep_peak(sweep_file: str, keep: Path | None = None) -> dict:
    """Run a sweep in a child process; peak RSS of its process tree, sampled. The
    sweep folder is ``keep`` if given, else a temporary one."""
    with tempfile.TemporaryDirectory() as tmp:
        out = keep or Path(tmp) / "sweep"
        t = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "kraftwalk.cli", "sweep", sweep_file,
                                 "--out", str(out)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        main_peak = worker_peak = total_peak = half_peak = 0.0
        series = []  # (seconds, main RSS) every few seconds: flat, or growing with cells?
        while proc.poll() is None:
            tree, todo = [], [proc.pid]
            while todo:
                p = todo.pop()
                tree.append(p)
                todo += _children(p)
            rss = {p: _rss_mib(p) for p in tree}
            main_peak = max(main_peak, rss.get(proc.pid, 0.0))
            cells = _cells_done(out)
            if cells is not None and cells[0] * 2 <= cells[1]:
                half_peak = main_peak  # the peak while the first half of the cells ran
            if not series or time.monotonic() - t - series[-1][0] >= 5:
                series.append((round(time.monotonic() - t, 1), round(rss.get(proc.pid, 0.0), 1)))
            worker_peak = max([worker_peak] + [v for p, v in rss.items() if p != proc.pid])
            total_peak = max(total_peak, sum(rss.values()))
            time.sleep(0.5)
        if proc.returncode not in (0, 12, 13):  # 12, 13: its cells found violations
            raise SystemExit(f"the sweep failed (exit {proc.returncode})")
        meta = json.loads((out / "sweep.json").read_text())
    return {"run": f"sweep {Path(sweep_file).name}: {meta['cells']} cells",
            "walks": meta["walks"], "steps": meta["steps"],
            "seconds": round(time.monotonic() - t, 1), "main_rss_mib": round(main_peak, 1),
            "worker_rss_mib": round(worker_peak, 1), "total_rss_mib": round(total_peak, 1),
            "main_rss_first_half_mib": round(half_peak, 1), "main_rss_series": series}


def _cells_done(out: Path) -> tuple[int, int] | None:
    try:
        meta = json.loads((out / "sweep.json").read_text())
        return meta["cells_finished"], meta["cells"]
    except (OSError, ValueError, KeyError):
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, action="append", default=[])
    ap.add_argument("--sweep", action="append", default=[], help="a sweep file to measure")
    ap.add_argument("--sweep-out", type=Path, help="keep the (one) sweep's folder here")
    ap.add_argument("--append", action="store_true",
                    help="add to the rows already in OUT/memory-runs.json")
    ap.add_argument("--nice", action="store_true")
    ap.add_argument("--out", type=Path, default=Path("results"))
    args = ap.parse_args()
    if args.nice:
        os.nice(19)
    d = RunConfig()
    common = {k: getattr(d, k) for k in ("voters", "observers", "depth", "seed", "weights")}
    rows = []
    if args.append and (args.out / "memory-runs.json").is_file():
        rows = json.loads((args.out / "memory-runs.json").read_text())
    for s in args.seconds:
        res = _child_run({**common, "duration": s, "workers": 2})
        rows.append({"run": f"{s:g} s on 2 workers", "walks": res["walks"], "steps": res["steps"],
                     "main_rss_mib": round(res["peak_rss_mib"], 1),
                     "worker_rss_mib": round(res["peak_rss_children_mib"], 1)})
        rows[-1].update(nice=args.nice, versions=provenance(), kafka=d.kafka)
        print(rows[-1], flush=True)
    for f in args.sweep:
        rows.append({**sweep_peak(f, args.sweep_out), "nice": args.nice,
                     "versions": provenance()})  # a sweep's releases are in its file
        print(rows[-1], flush=True)
    args.out.mkdir(exist_ok=True)
    (args.out / "memory-runs.json").write_text(json.dumps(rows, indent=1) + "\n")
    lines = ["| run | walks | peak RSS main | peak RSS largest worker |", "|---|---|---|---|"]
    for r in rows:
        half = (f" ({r['main_rss_first_half_mib']:.0f} MiB in its first half of cells)"
                if r.get("main_rss_first_half_mib") else "")
        lines.append(f"| {r['run']} | {r['walks']:,} | "
                     f"{r['main_rss_mib']:.0f} MiB{half} | {r['worker_rss_mib']:.0f} MiB |")
    niced = [r["run"] for r in rows if r.get("nice")]
    note = (f" ({', '.join(niced)} at the lowest CPU priority, sharing the machine)"
            if niced else "")
    # Rows added by --append may come from another checkout: name each one made them.
    makers = sorted({made_by(r["versions"]) for r in rows if r.get("versions")})
    kafka = sorted({r["kafka"] for r in rows if r.get("kafka")})  # (rows from before: none)
    release = f" (Kafka {', '.join(kafka)})" if kafka else ""
    lines.append(f"\nA fresh process per run{note}: timed runs of the default swarm config"
                 f"{release} on 2 workers; sweeps as their file says, on all cores."
                 + (f" Made by {'; '.join(makers)}." if makers else ""))
    (args.out / "memory-runs.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
