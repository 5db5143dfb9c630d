"""The unmutated model hunted under every release whose swarm walks differ, every
feature on: how many walks and steps each checked in its budget, and every violation
by invariant. Only the settled findings in results/findings/ may appear.

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
            "versions": run["versions"]}


def render(rows: list[dict], seconds: float) -> str:
    from kraftwalk.storage.provenance import made_by

    lines = ["| Kafka | walks | steps checked | violations | by invariant |",
             "|---|---|---|---|---|"]
    for r in rows:
        by = ", ".join(f"{k} {v:,}" for k, v in sorted(r["by_invariant"].items())) or "-"
        lines.append(f"| {r['kafka']} | {r['walks']:,} | {r['steps']:,} | {r['violations']:,} "
                     f"| {by} |")
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
            print(f"Kafka {k}: {rows[-1]['walks']:,} walks, {rows[-1]['violations']} "
                  f"violations {rows[-1]['by_invariant']}", file=sys.stderr)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{a.name}.md").write_text(render(rows, a.seconds))
    (out / f"{a.name}.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"written: {out / (a.name + '.md')}")


if __name__ == "__main__":
    main()
