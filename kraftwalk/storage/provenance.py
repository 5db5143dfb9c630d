"""Where a result came from: the kraftwalk version, the commit of the checkout it ran
from (with ``-dirty`` when tracked files other than the results and the pages differ
from it: a script that regenerates results/ writes there as it goes, and
experiments/update_readme.py copies them into README.md and docs/; none for an
installed copy),
and the hash of the kernel sources (what the walks are made of, the same hash that
names the kernels' Numba cache). run.json, bench.json and the Markdown tables that the
commands write record it, so a figure can be traced to the code that made it."""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from kraftwalk import __version__


@functools.lru_cache(maxsize=None)
def commit(here: Path | None = None) -> str | None:
    """The commit of the checkout at ``here`` (default: this kraftwalk's), 12 hex digits,
    ``-dirty`` with local changes outside results/, README.md and docs/ (none of which
    a walk is made of); None where there is no git."""
    here = here or Path(__file__).resolve().parents[2]
    try:
        rev = subprocess.run(["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain",
                                "--untracked-files=no", "--", ".", ":(exclude)results",
                                ":(exclude)README.md", ":(exclude)docs"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None  # no git here
    return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def provenance() -> dict[str, str | None]:
    from kraftwalk.kernels.jit.numba_cache import kernel_sources_hash

    return {"kraftwalk": __version__, "commit": commit(),
            "kernel_sources": kernel_sources_hash()[:16]}


def recorded_made_by(versions: object) -> str | None:
    """:func:`made_by` of a ``versions`` record read back from a results file (run.json,
    sweep.json), or None where the file has none or a damaged one (made before
    provenance was recorded, or edited)."""
    if isinstance(versions, dict) and versions.get("kernel_sources"):
        return made_by(versions)
    return None


def made_by(p: dict | None = None) -> str:
    """'kraftwalk 0.1.0, commit 0123456789ab, kernel sources 0123456789abcdef'."""
    p = p or provenance()
    where = f", commit {p['commit']}" if p.get("commit") else ""
    return f"kraftwalk {p['kraftwalk']}{where}, kernel sources {p['kernel_sources']}"
