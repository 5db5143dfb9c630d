"""Every figure under results/ says where it came from and which Kafka release it
modelled: the tables the commands and the experiment scripts write end with "made by
kraftwalk V, commit C, kernel sources H", JSON results carry the same as "versions" (or as a table's made-by row), and the side-by-side
speed and identity runs name the commits they measured. Only the pages people write
by hand (the findings' write-ups, the log of speed levers tried) are exempt."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from kraftwalk.storage.provenance import recorded_made_by

ROOT = Path(__file__).resolve().parent.parent

# "made by kraftwalk ...", "| made by | kraftwalk ..." (a table row), "made by a: kraftwalk
# ..." (compare's two folders)
MADE_BY = re.compile(r"made by[ |]+(?:\w+: )?kraftwalk \S+(, commit [0-9a-f]{12}(-dirty)?)?, "
                     r"kernel sources [0-9a-f]{16}", re.IGNORECASE)
# Two checkouts side by side: the file names the commits it measured instead, as
# compare_speed.py ("old (C)", "new (C)") and identity_run.py ("under C and C") write them
# (numba-plain-mode's two sides are one commit).
COMMITS = re.compile(r"(?:old|new) \([0-9a-f]{7,40}\)|under [0-9a-f]{7,40} and [0-9a-f]{7,40}")
TWO_CHECKOUTS = ("compare-speed", "identity-run", "numba-plain-mode")
BY_HAND = ("findings/", "speed-levers.md")


def _tracked(suffix: str) -> list[str]:
    git = subprocess.run(["git", "-C", str(ROOT), "ls-files", "results"], text=True,
                         capture_output=True)
    out = git.stdout.split() if git.returncode == 0 else []  # an unpacked sdist: nothing
    return [p for p in out if p.endswith(suffix) and not p.startswith(
        tuple(f"results/{x}" for x in BY_HAND))]


def test_every_results_table_names_what_made_it():
    missing = []
    for path in _tracked(".md"):
        text = (ROOT / path).read_text()
        name = path.split("/", 1)[1]
        if name.startswith(TWO_CHECKOUTS):
            ok = bool(COMMITS.search(text))
        else:
            ok = bool(MADE_BY.search(text))
        if not ok:
            missing.append(path)
    assert not missing, f"results tables with no provenance: {missing}"


# "Kafka 4.3", a table's Kafka column or a sweep's "kafka = 4.3" / "kafka=4.3" cell
RELEASE = re.compile(r"Kafka [0-9]+\.[0-9]|\| Kafka \||\| kafka \||kafka ?= ?[0-9]|"
                     r"Kafka release", re.IGNORECASE)


def test_every_results_table_names_the_kafka_release_it_modelled():
    """Every output says which release it describes (the two-checkout speed and identity
    runs compare code, not releases: their commits are what they name)."""
    missing = [p for p in _tracked(".md")
               if not p.split("/", 1)[1].startswith(TWO_CHECKOUTS)
               and not RELEASE.search((ROOT / p).read_text())]
    assert not missing, f"results tables that do not say which Kafka release: {missing}"


def test_every_itf_trace_records_its_versions():
    for path in _tracked(".itf.json"):
        meta = json.loads((ROOT / path).read_text())["#meta"]
        made = recorded_made_by(meta.get("versions"))
        assert made and MADE_BY.search(f"made by {made}"), path
