"""Check the kernels' Numba hooks on given Numba releases: the test before widening
the range pyproject.toml pins.

For each version, a fresh virtual environment gets that Numba (and the llvmlite it
pins) and this checkout with its test extras; there the hooks' tests run (the hooks
themselves, the fall-back to plain Numba, and plain Numba giving the same walks,
violations and coverage as the hooks), and a default swarm whose walks are compared
with the same swarm under the first version given:

    python experiments/numba_range.py 0.61.2 0.68.1 [--out DIR]

writes DIR/numba-range.md (default: the working directory).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
HOOK_TESTS = ["tests/kernels/test_hooks.py", "tests/kernels/test_link_only.py",
              "tests/kernels/test_bundle.py", "tests/kernels/test_cache_lock.py",
              "tests/kernels/test_jit.py", "tests/kernels/test_plain_numba.py"]
SWARM = ["swarm", "--walks", "20000", "--seed", "3", "--workers", "1"]


def environment(version: str, where: Path) -> Path:
    """A venv with Numba ``version`` and this checkout (editable); its python."""
    venv = where / f"venv-{version}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", f"numba=={version}",
                    "-e", f"{ROOT}[test]"], check=True)
    return py


def check(py: Path, where: Path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(where / "cache")}
    info = json.loads(subprocess.run(
        [str(py), "-c", "import json, numba, llvmlite, numpy; from kraftwalk.kernels import jit;"
         "print(json.dumps({'numba': numba.__version__, 'llvmlite': llvmlite.__version__,"
         "'numpy': numpy.__version__, 'mode': jit.describe()}))"],
        env=env, check=True, capture_output=True, text=True).stdout)
    tests = subprocess.run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            *HOOK_TESTS], cwd=ROOT, env=env, capture_output=True, text=True)
    info["tests"] = tests.stdout.strip().splitlines()[-1] if tests.stdout.strip() else "no output"
    info["tests_ok"] = tests.returncode == 0
    out = where / "swarm"
    subprocess.run([str(py), "-m", "kraftwalk.cli", *SWARM, "--out", str(out)], env=env,
                   check=True, capture_output=True)
    info["walks"] = pd.read_parquet(out / "walks").sort_values("walk").reset_index(drop=True)
    info["steps_per_s_per_core"] = json.loads((out / "run.json").read_text())[
        "steps_per_s_per_core"]
    return info


def main() -> None:
    from kraftwalk.storage.provenance import made_by
    from kraftwalk.vocabulary.releases import DEFAULT as KAFKA

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="+", help="Numba versions, e.g. 0.61.2 0.68.1")
    ap.add_argument("--out", type=Path, default=Path.cwd())
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for v in args.versions:
            where = Path(tmp) / v
            where.mkdir()
            rows.append(check(environment(v, where), where))
            print(f"numba {v}: {rows[-1]['mode']}, {rows[-1]['tests']}", flush=True)
    first = rows[0]["walks"]
    md = ["| numba | llvmlite | numpy | kernels | hook tests | walks as under numba "
          f"{rows[0]['numba']} | checked steps/s per core |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        same = "identical" if r["walks"].equals(first) else "DIFFER"
        md.append(f"| {r['numba']} | {r['llvmlite']} | {r['numpy']} | {r['mode']} | "
                  f"{r['tests']} | {same} | {r['steps_per_s_per_core']:,.0f} |")
    md.append(f"\n`python experiments/numba_range.py {' '.join(args.versions)}`: the hook "
              f"tests ({', '.join(Path(t).name for t in HOOK_TESTS)}) in a fresh venv per "
              f"version, and `kraftwalk {' '.join(SWARM)}` (Kafka {KAFKA}; one run each, so the speeds are "
              f"only indicative). Made by {made_by()}.\n")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "numba-range.md").write_text("\n".join(md))
    print("\n".join(md))
    if not all(r["tests_ok"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
