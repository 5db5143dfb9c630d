"""Results say where they came from: the kraftwalk version, the checkout's commit and
the kernel-source hash, in run.json and in the Markdown tables the commands write."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from kraftwalk import __version__
from kraftwalk.config import RunConfig
from kraftwalk.kernels.jit.numba_cache import kernel_sources_hash
from kraftwalk.run.hunt import render_markdown
from kraftwalk.run.runner import run_swarm
from kraftwalk.storage.provenance import commit, made_by, provenance

ROOT = Path(__file__).resolve().parents[2]


def test_provenance_names_version_commit_and_kernel_sources():
    p = provenance()
    assert p["kraftwalk"] == __version__
    assert p["kernel_sources"] == kernel_sources_hash()[:16]
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True)
    if head.returncode == 0:  # a checkout: its commit, -dirty with local changes
        assert re.fullmatch(re.escape(head.stdout.strip()) + r"(-dirty)?", commit())
    assert made_by(p).startswith(f"kraftwalk {__version__}")
    assert p["kernel_sources"] in made_by(p)


def test_run_json_and_hunt_tables_record_it(tmp_path):
    run_swarm(RunConfig(walks=200, depth=50, workers=1, out=str(tmp_path / "r")))
    versions = json.loads((tmp_path / "r" / "run.json").read_text())["versions"]
    assert {k: versions[k] for k in provenance()} == provenance()
    md = render_markdown([], 30)
    assert f"made by {made_by()}." in md


def test_dirty_means_code_not_results(tmp_path):
    """A script that regenerates results/ writes there as it goes, and copies them into
    the pages (README.md, docs/): the results it makes after the first must not call
    their own checkout dirty; a changed source file does."""
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "table.md").write_text("old\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("old\n")
    (tmp_path / "README.md").write_text("old\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c")
    for page in ("results/table.md", "docs/page.md", "README.md"):
        (tmp_path / page).write_text("new\n")
    assert re.fullmatch(r"[0-9a-f]{12}", commit(tmp_path))
    (tmp_path / "code.py").write_text("x = 2\n")
    commit.cache_clear()
    assert commit(tmp_path).endswith("-dirty")


def test_a_recorded_provenance_is_read_back_or_refused():
    """A results file's ``versions`` as a sentence, or None where it has none or a
    damaged one, so no reader prints a half-filled one."""
    from kraftwalk.storage.provenance import recorded_made_by

    assert recorded_made_by(provenance()) == made_by()
    for bad in (None, {}, "0.1.0", ["x"], {"kraftwalk": "0.1.0", "commit": "abc"}):
        assert recorded_made_by(bad) is None, bad
