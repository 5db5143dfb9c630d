"""The unmutated model hunted under every release whose swarm walks differ, every
feature on: how many walks and steps each checked in its budget, and every violation
by invariant. Only the settled findings in results/findings/ may appear: every violating
walk is replayed and matched against them (kraftwalk.counterexamples.findings), and the
table says how many each explains and how many nothing explains.

    python experiments/correct_model.py [--seconds 600] [--kafka 3.9 --kafka 3.9.1 ...]
        [--out results] [--name correct-model]

Releases after 3.9.1 differ from the newest in timing rules only (run-time values of
the timed mode), so their swarm walks are the newest's: the default hunts 3.9, 3.9.1
and the newest. Writes NAME.md (and .json) into --out.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

FEATURES = ["--snapshots", "--reconfig", "--disk-loss"]


def hunt(kafka: str, seconds: float, where: Path) -> dict:
    out = where / f"kafka-{kafka}"
    subprocess.run(["kraftwalk", "swarm", "--kafka", kafka, *FEATURES, "--duration",
                    str(seconds), "--walk-stats", "histogram", "--no-fail-on-violation",
                    "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    run = json.loads((out / "run.json").read_text())
    return {"kafka": kafka, "walks": run["walks"], "steps": run["steps"],
            "violations": run["violations"], "by_invariant": run["violations_by_invariant"],
            "explained": explain_walks(out), "versions": run["versions"]}


def explain_walks(run_dir: Path) -> dict:
    """Every violating walk of the run replayed and matched against the settled findings:
    finding name (or "unexplained") -> the walks it covers."""
    from kraftwalk.counterexamples.findings import explain
    from kraftwalk.counterexamples.replay import load_run, record, walk_states
    from kraftwalk.storage import rundir

    if not rundir.has_dataset(run_dir, rundir.VIOLATIONS):
        return {}
    cfg = load_run(run_dir)
    walks = rundir.read_dataset(run_dir, rundir.VIOLATIONS, columns=["walk"]).column("walk")
    found: dict = {}
    for walk in sorted(set(walks.to_pylist())):
        finding = explain(*walk_states(record(cfg, walk)))
        found.setdefault(finding.name if finding else "unexplained", []).append(walk)
    return found


def render(rows: list[dict], seconds: float) -> str:
    from kraftwalk.storage.provenance import made_by

    lines = ["| Kafka | walks | steps checked | violations | by invariant | replayed: "
             "explained by | unexplained |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        by = ", ".join(f"{k} {v:,}" for k, v in sorted(r["by_invariant"].items())) or "-"
        ex = r["explained"]
        known = ", ".join(f"`{k}` {len(v):,}" for k, v in sorted(ex.items())
                          if k != "unexplained") or "-"
        lines.append(f"| {r['kafka']} | {r['walks']:,} | {r['steps']:,} | {r['violations']:,} "
                     f"| {by} | {known} | {len(ex.get('unexplained', [])):,} |")
    lines.append("")
    lines.append(f"`kraftwalk swarm --kafka K {' '.join(FEATURES)} --duration {seconds:g}` "
                 f"(3 voters + 1 observer, swarm weights, seed 0); made by "
                 f"{made_by(rows[0]['versions'])}.")
    return "\n".join(lines) + "\n"


def main() -> None:
    from kraftwalk.vocabulary.releases import DEFAULT

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=600.0)
    ap.add_argument("--kafka", action="append", help="a release to hunt (repeatable)")
    ap.add_argument("--out", default=".")
    ap.add_argument("--name", default="correct-model")
    a = ap.parse_args()
    releases = a.kafka or ["3.9", "3.9.1", DEFAULT]
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for k in releases:
            rows.append(hunt(k, a.seconds, Path(tmp)))
            r = rows[-1]
            print(f"Kafka {k}: {r['walks']:,} walks, {r['violations']} violations "
                  f"{r['by_invariant']}, explained {({n: len(w) for n, w in r['explained'].items()})}",
                  file=sys.stderr)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{a.name}.md").write_text(render(rows, a.seconds))
    (out / f"{a.name}.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"written: {out / (a.name + '.md')}")


if __name__ == "__main__":
    main()
