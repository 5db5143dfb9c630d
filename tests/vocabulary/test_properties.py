"""The registry of properties is the one list: the kernels' ids, the configuration's
names, the command line's help, the timed mode's names and the documentation's tables
are all derived from it, and importing it (or the configuration) loads no Numba."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kraftwalk.vocabulary import properties as P

ROOT = Path(__file__).resolve().parents[2]


def documentation() -> str:
    """README.md and every docs/*.md page, one after another: a generated table may live
    in any of them (experiments/update_readme.py fills them all)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return "\n".join(page.read_text() for page in pages)


def test_each_property_is_declared_once_with_a_kind_and_a_one_line_meaning():
    names = [p.name for p in P.PROPERTIES]
    assert len(names) == len(set(names))
    for p in P.PROPERTIES:
        assert p.kind in P.KINDS, p
        assert re.fullmatch(r"[A-Z][A-Za-z]+", p.name), p.name
        assert p.meaning and "\n" not in p.meaning, p.name
        assert set(p.needs) <= set(P.FEATURE_TEXT), p.name
    assert [p.kind for p in P.PROPERTIES] == sorted(
        (p.kind for p in P.PROPERTIES), key=P.KINDS.index), "declared kind by kind"


def _constants(module, prefix=""):
    """{value: NAME} of the module's upper-case int constants starting with prefix."""
    return {v: k for k, v in vars(module).items()
            if k.isupper() and k.startswith(prefix) and type(v) is int}


def _snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def test_the_kernels_ids_are_the_registrys():
    from kraftwalk.kernels.properties import checkers
    from kraftwalk.kernels.state import layout
    from kraftwalk.kernels.properties import liveness

    assert checkers.INVARIANT_NAMES == P.INVARIANT_NAMES
    assert checkers.N_INVARIANTS == len(P.INVARIANT_NAMES)
    assert checkers.ALL_CHECKS == (1 << len(P.INVARIANT_NAMES)) - 1
    for name, k in P.INVARIANT_ID.items():
        assert getattr(checkers, _snake(name)) == k, name
    assert liveness.LIVENESS_NAMES == P.LIVENESS_NAMES
    for name, k in P.LIVENESS_ID.items():
        assert getattr(liveness, _snake(name)) == k, name
    assert liveness.ALL_LIVENESS == sum(1 << k for k in P.LIVENESS_ID.values())
    assert layout.TARGET_NAMES == P.TARGET_NAMES and layout.N_TARGETS == len(P.TARGET_NAMES)
    targets = {k: v for k, v in vars(layout).items()
               if re.fullmatch(r"T_[A-Z_]+", k) and type(v) is int}
    assert sorted(targets.values()) == list(range(len(P.TARGET_NAMES))), targets


def test_the_command_line_and_the_run_files_name_the_registrys_properties():
    from typer.testing import CliRunner

    from kraftwalk import config

    from kraftwalk.run import elect
    from kraftwalk.cli import app

    assert config.INVARIANTS == P.INVARIANT_NAMES
    assert elect.property_names() == (*P.INVARIANT_NAMES, *P.LIVENESS_NAMES)
    text = " ".join(CliRunner().invoke(app, ["swarm", "--help"],
                                       env={"COLUMNS": "4000"}).output.split())
    text = text.replace("│", " ")
    for name in (*P.INVARIANT_NAMES, *P.TARGET_NAMES):
        assert name in text, name


@pytest.mark.parametrize("kind", P.KINDS)
def test_the_documentations_tables_are_the_registrys(kind):
    blocks = re.findall(rf"<!-- properties:{kind} -->\n(.*?)\n<!-- end -->",
                        documentation(), flags=re.S)
    assert blocks, f"neither README.md nor docs/*.md has a properties:{kind} table"
    for block in blocks:
        assert block == P.markdown_table(kind), "run experiments/update_readme.py"


@pytest.mark.parametrize("module", ["kraftwalk.vocabulary.properties", "kraftwalk.config"])
def test_importing_loads_no_numba(module):
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out
