"""Checked steps/s of two checkouts, measured side by side on this machine.

Machines of one kind differ by 2x or more, so a speed change is judged by a ratio
taken in one session: each revision gets a git worktree and a virtual environment
(system packages shared, the checkout installed in editable mode), its kernels are
compiled once into an empty Numba cache (that run's JIT time is the checkout's cold
compile, a second one-walk run's its warm start), then the same swarm runs
alternately under each, ``--rounds`` times, and the medians are compared.

    python experiments/compare_speed.py --old 1e54cdc [--new HEAD] [--walks 60000]

writes compare-speed.md (and .json) into --out. With ``--timed`` it compares the timed
mode instead: checked events/s per core of ``kraftwalk bench --timed-only --seconds S``
each round, and the timed kernels' cold and warm JIT; with ``--elect`` the timed mode as a
user runs it, end to end: events/s per core of ``kraftwalk elect --walks W`` (its
run.json: walks run, parts saved and run.json rewritten, compile excluded). ``--old-env``/``--new-env``
KEY=VALUE set a variable for one side's runs: one checkout on plain Numba against
itself on the hooks is ``--old HEAD --old-env KRAFTWALK_PLAIN_NUMBA=1``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def checkout(rev: str, where: Path) -> Path:
    """A worktree of ``rev`` with its own venv; returns the venv's python."""
    tree = where / f"tree-{rev}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), rev],
                   check=True, capture_output=True)
    venv = where / f"venv-{rev}"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "-e", str(tree)],
                   check=True, capture_output=True)
    return py


def resolve(rev: str) -> str:
    """The short commit id of ``rev``, so results name commits, never HEAD."""
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], check=True,
                          capture_output=True, text=True).stdout.strip()


@contextmanager
def checkouts(old: str, new: str, where: Path):
    """Worktrees and venvs of ``old`` and ``new`` under ``where`` (one if they are the
    same commit): yields {"old": python, "new": python}; the worktrees are removed
    afterwards."""
    try:
        py_old = checkout(old, where)
        yield {"old": py_old, "new": py_old if new == old else checkout(new, where)}
    finally:
        for rev in {old, new}:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(where / f"tree-{rev}")], capture_output=True)


def kraftwalk(py: Path, args: list[str], out: Path, cache: Path, env: dict | None = None) -> None:
    """``kraftwalk ARGS --out OUT`` under the checkout's python, with its own Numba cache
    and the variables ``env``."""
    done = subprocess.run([str(py), "-m", "kraftwalk.cli", *args, "--out", str(out)],
                          capture_output=True, cwd=out.parent,
                          env={**os.environ, **(env or {}), "NUMBA_CACHE_DIR": str(cache)})
    if done.returncode not in (0, 12, 13):  # 12, 13: it found violations (--extra mutations)
        raise subprocess.CalledProcessError(done.returncode, done.args, done.stdout, done.stderr)


def swarm(py: Path, out: Path, args: list[str], cache: Path, env: dict | None = None) -> dict:
    kraftwalk(py, ["swarm", *args], out, cache, env)
    return json.loads((out / "run.json").read_text())


def timed_bench(py: Path, out: Path, args: list[str], cache: Path,
                env: dict | None = None) -> dict:
    """A timed-mode bench run, in the shape of a swarm's run.json."""
    kraftwalk(py, ["bench", "--timed-only", *args], out, cache, env)
    res = json.loads((out / "bench-timed.json").read_text())
    return {"jit_seconds": res["jit_seconds"], "steps_per_s_per_core": res["events_per_s_per_core"]}


def elect(py: Path, out: Path, args: list[str], cache: Path, env: dict | None = None) -> dict:
    """An elect run, in the shape of a swarm's run.json."""
    kraftwalk(py, ["elect", *args], out, cache, env)
    res = json.loads((out / "run.json").read_text())
    workers = res.get("workers") or int(args[args.index("--workers") + 1])
    return {"jit_seconds": sum(c["jit_seconds"] for c in res["cells"]),
            "steps_per_s_per_core": res["events_per_second"] / workers}


def variables(pairs: list[str]) -> dict:
    """{"KEY": "VALUE"} of KEY=VALUE arguments."""
    out = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise SystemExit(f"compare_speed: error: {p!r}: expected KEY=VALUE")
        out[key] = value
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="git revision to compare against")
    ap.add_argument("--new", default="HEAD")
    ap.add_argument("--walks", type=int, default=60_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--extra", default="", help="further swarm options, e.g. '--voters 5'")
    ap.add_argument("--new-extra", default="",
                    help="options for the new side only, e.g. one the old checkout lacks "
                    "that makes it walk as the old one does ('--kafka 3.9 --pre-vote')")
    ap.add_argument("--out", type=Path, default=Path.cwd(),
                    help="folder for the tables (default: the working directory)")
    ap.add_argument("--timed", action="store_true",
                    help="compare the timed mode (kraftwalk bench --timed-only) instead")
    ap.add_argument("--elect", action="store_true",
                    help="compare kraftwalk elect end to end (--walks per round) instead")
    ap.add_argument("--seconds", type=float, default=10.0, help="--timed: seconds per round")
    ap.add_argument("--old-env", action="append", default=[], metavar="KEY=VALUE",
                    help="a variable set for the old side's runs (repeatable)")
    ap.add_argument("--new-env", action="append", default=[], metavar="KEY=VALUE",
                    help="a variable set for the new side's runs (repeatable)")
    args = ap.parse_args()
    args.old, args.new = resolve(args.old), resolve(args.new)
    envs = {"old": variables(args.old_env), "new": variables(args.new_env)}
    if args.old == args.new and envs["old"] == envs["new"]:
        ap.error(f"--old and --new are both {args.old} with the same variables: nothing to compare")
    names = {k: " ".join([rev, *(f"{a}={b}" for a, b in envs[k].items())])
             for k, rev in (("old", args.old), ("new", args.new))}
    side = {"old": [], "new": args.new_extra.split()}
    if side["new"]:
        names["new"] += " " + args.new_extra
    run_args = ["--walks", str(args.walks), "--workers", str(args.workers), *args.extra.split()]
    one = ["--walks", "1", "--workers", "1", *args.extra.split()]
    run, unit, what = swarm, "checked steps/s", "kraftwalk swarm"
    if args.timed:
        run_args = ["--seconds", f"{args.seconds:g}", *args.extra.split()]
        one = ["--seconds", "1", *args.extra.split()]
        run, unit, what = timed_bench, "checked events/s", "kraftwalk bench --timed-only"
    elif args.elect:
        run_args = ["--voters", "3", *run_args]
        one = ["--voters", "3", *one]
        run, unit, what = elect, "checked events/s", "kraftwalk elect"
    with tempfile.TemporaryDirectory() as tmp, checkouts(args.old, args.new, Path(tmp)) as pys:
        where = Path(tmp)
        cold, warm = {}, {}
        for label in ("old", "new"):
            cache = where / f"cache-{label}"
            cold[label] = run(pys[label], where / f"cold-{label}", one + side[label], cache,
                              envs[label])["jit_seconds"]
            warm[label] = run(pys[label], where / f"warm-{label}", one + side[label], cache,
                              envs[label])["jit_seconds"]
            print(f"{label}: cold JIT {cold[label]:.1f} s, warm load {warm[label]:.2f} s",
                  flush=True)
        rates = {"old": [], "new": []}
        for r in range(args.rounds):
            for label in ("old", "new"):
                res = run(pys[label], where / f"{label}-{r}", run_args + side[label],
                          where / f"cache-{label}", envs[label])
                rates[label].append(res["steps_per_s_per_core"])
                print(f"round {r + 1} {label}: {rates[label][-1]:,.0f} {unit} per core",
                      flush=True)
    med = {k: statistics.median(v) for k, v in rates.items()}
    res = {"old": names["old"], "new": names["new"],
           "mode": "timed" if args.timed else "elect" if args.elect else "swarm",
           "run_args": run_args, "rates": rates,
           "median": med, "ratio": med["new"] / med["old"], "cold_jit_seconds": cold,
           "warm_jit_seconds": warm}
    args.out.mkdir(exist_ok=True)
    (args.out / "compare-speed.json").write_text(json.dumps(res, indent=1) + "\n")
    md = ("| checkout | {unit} per core (median of {n}) |\n|---|---|\n"
          "| old ({old}) | {mo:,.0f} |\n| new ({new}) | {mn:,.0f} |\n\n"
          "new / old = {ratio:.3f}; `{what} {a}` per round, run alternately.\n\n"
          "| checkout | cold JIT (empty cache) | warm load (cached) |\n|---|---|---|\n"
          "| old ({old}) | {co:.1f} s | {wo:.2f} s |\n| new ({new}) | {cn:.1f} s | {wn:.2f} s |\n\n"
          "new / old cold JIT = {cr:.2f}; the JIT time of a short run (`{what} "
          "{o}`) into an empty cache, then again with it filled.\n").format(
        n=args.rounds, old=names["old"], new=names["new"], mo=med["old"], mn=med["new"],
        ratio=res["ratio"], a=" ".join(run_args), co=cold["old"], cn=cold["new"],
        wo=warm["old"], wn=warm["new"], cr=cold["new"] / cold["old"], o=" ".join(one),
        unit=unit, what=what)
    (args.out / "compare-speed.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
