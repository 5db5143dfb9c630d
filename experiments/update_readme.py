"""Copy the measured tables from results/ into README.md and every docs/*.md page,
between markers like

    <!-- results/bench.md -->
    ...replaced...
    <!-- end -->

so every figure in the README and the documentation is the output of a command in this
repository (experiments/readme_figures.sh writes results/); and the tables of properties
from their registry (``<!-- properties:always -->``: kraftwalk.vocabulary.properties), and
the Kafka releases' changes from theirs (``<!-- releases -->``: kraftwalk.vocabulary.releases),
and the model's differences from every release (``<!-- differences -->``:
kraftwalk.vocabulary.differences). A block is filled wherever it is, so a section can
move between the README and the pages with its markers. Prints which files changed.
"""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def fill(m: re.Match) -> str:
    path = root / m.group(1)
    if not path.is_file():
        sys.exit(f"missing {path}: run experiments/readme_figures.sh first")
    body = path.read_text().rstrip("\n")
    if path.suffix == ".txt":
        body = "```\n" + body + "\n```"
    return f"<!-- {m.group(1)} -->\n{body}\n<!-- end -->"


def properties(m: re.Match) -> str:
    from kraftwalk.vocabulary.properties import markdown_table

    return f"<!-- properties:{m.group(1)} -->\n{markdown_table(m.group(1))}\n<!-- end -->"


def releases(m: re.Match) -> str:
    from kraftwalk.vocabulary.releases import markdown_table

    return f"<!-- releases -->\n{markdown_table()}\n<!-- end -->"


def differences(m: re.Match) -> str:
    from kraftwalk.vocabulary.differences import markdown_table

    return f"<!-- differences -->\n{markdown_table()}\n<!-- end -->"


changed = []
for page in pages:
    text = page.read_text()
    new = re.sub(r"<!-- (results/[^ ]+) -->\n.*?<!-- end -->", fill, text, flags=re.S)
    new = re.sub(r"<!-- properties:(\w+) -->\n.*?<!-- end -->", properties, new, flags=re.S)
    new = re.sub(r"<!-- releases -->\n.*?<!-- end -->", releases, new, flags=re.S)
    new = re.sub(r"<!-- differences -->\n.*?<!-- end -->", differences, new, flags=re.S)
    if new != text:
        page.write_text(new)
        changed.append(page.relative_to(root).as_posix())
print("updated: " + ", ".join(changed) if changed
      else f"unchanged: {len(pages)} files (README.md and docs/*.md)")
