"""The unmutated model's timed walks under every release's rules and every scenario
(experiments/sweep-correct-liveness.toml), checked by every safety invariant and
liveness property: walks and violations by release and scenario, and each violated
property. Only the settled findings in results/findings/ may appear.

    python experiments/correct_liveness.py [--walks N] [--out results] [--name correct-liveness]

Writes NAME.md into --out.
"""
from __future__ import annotations

import argparse
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

SWEEP = Path(__file__).resolve().parent / "sweep-correct-liveness.toml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--walks", type=int, default=None,
                    help="walks per release, scenario and cluster size (default: the file's)")
    ap.add_argument("--out", type=Path, default=Path("results"))
    ap.add_argument("--name", default="correct-liveness")
    args = ap.parse_args()
    import pyarrow.parquet as pq

    from kraftwalk.storage.elect_folder import has_cells, read_cells
    from kraftwalk.storage.provenance import made_by
    from kraftwalk.sweep_spec import cell_dir, load_sweep

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "sweep"
        budget = ["--walks", str(args.walks)] if args.walks else []
        subprocess.run(["kraftwalk", "sweep", str(SWEEP), *budget, "--no-fail-on-violation",
                        "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
        spec = load_sweep(out / "sweep.toml")
        rows = pq.read_table(out / "summary.parquet").to_pylist()
        found: dict[tuple, Counter] = {}
        for cell in spec.cells():
            folder = cell_dir(out, cell)
            if has_cells(folder, "violations", cell.config):
                props = read_cells(folder, "violations", ["property"], cell.config)
                if props.num_rows:
                    found[(cell.values["kafka"], cell.values["scenario"])] = Counter(
                        props.column("property").to_pylist())
    releases = spec.grid["kafka"]
    scenarios = spec.grid["scenario"]
    walks = Counter()
    bad = Counter()
    for r in rows:
        walks[(r["kafka"], r["scenario"])] += r["walks"]
        bad[(r["kafka"], r["scenario"])] += r["violations"]
    lines = ["| Kafka | " + " | ".join(scenarios) + " |",
             "|---|" + "---|" * len(scenarios)]
    for k in releases:
        lines.append(f"| {k} | " + " | ".join(
            f"{bad[(k, s)]:,} of {walks[(k, s)]:,}" for s in scenarios) + " |")
    total = sum(walks.values())
    lines += ["", "Violations of walks per release (each cell: 3 and 5 voters + 1 observer, "
              "the release's pre-vote, Kafka's default timing); "
              f"{total:,} timed walks in all."]
    if found:
        lines.append("Properties violated: " + "; ".join(
            f"{k} {s}: " + ", ".join(f"{p} {n}" for p, n in sorted(c.items()))
            for (k, s), c in sorted(found.items())) + ".")
    lines.append(f"\n`python experiments/correct_liveness.py{' --walks ' + str(args.walks) if args.walks else ''}`"
                 f" (`kraftwalk sweep experiments/sweep-correct-liveness.toml`); made by {made_by()}.")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
