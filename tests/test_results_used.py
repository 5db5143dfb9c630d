"""Every file committed under results/ is one a page shows or names, or the data beside
one (the .json, .parquet or .png of the same name): nothing there is left over."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stem(name: str) -> str:
    return name.split(".", 1)[0]


def test_every_results_file_is_used_by_a_page():
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "results"], text=True,
                             capture_output=True, check=True).stdout.split()
    if not tracked:  # not a git checkout (an unpacked sdist): nothing to compare
        return
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *(ROOT / p for p in tracked if p.endswith(".md"))]
    text = "\n".join(p.read_text() for p in pages)
    top = sorted({p.split("/")[1] for p in tracked})
    named = {stem(x) for x in top if f"results/{x}" in text or f"({x})" in text
             or f"`{x}`" in text}
    unused = [x for x in top if stem(x) not in named]
    assert not unused, f"results/ files no page names: {unused}"
