"""Where a swarm walk's time goes, function by function, measured with ``perf``.

Numba's machine code has no symbols perf can see. This compiles the default
config's kernels into an empty cache (so each compiled module still lists its
functions), writes perf's map of JIT code (/tmp/perf-<pid>.map: address, size and
name of every function), runs walks for ``--seconds`` under ``perf record``, and
prints each function's share of the samples (self time: where the CPU was, not
who called it). Needs Linux ``perf``.

    python experiments/profile_kernel.py [--seconds 20] [--top 25] [--inline-threshold N]
                                         [--out results/profile-kernel.md]

The entry point inlines the step into three functions (kernels/jit/link_only.py), so perf
sees ``_run_walks``, ``do_action`` and ``deliver_message`` (71%, 15% and 6% of the
samples). ``--inline-threshold 250`` (LLVM's own
default) compiles the same kernels with calls left in place, function by function:
slower code, but it says which part of the step costs what.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def demangle(sym: str) -> str:
    """``_ZN9kraftwalk7kernels8election18handle_vote_requestB2v1...`` -> ``election.handle_vote_request``."""
    m = re.match(r"(?:cpython\.|cfunc\.)?_ZN((?:\d+\w+?)+?)(?:B\d|E)", sym)
    if not m:
        return sym
    parts, rest = [], m.group(1)
    while rest and rest[0].isdigit():
        n = int(re.match(r"\d+", rest).group())
        digits = len(str(n))
        parts.append(rest[digits:digits + n])
        rest = rest[digits + n:]
    name = ".".join(p for p in parts if p not in ("kraftwalk", "kernels"))
    return name.replace("__entry", "")


def write_perf_map(dispatchers) -> int:
    """perf's map of every function linked into the given kernels' compiled modules."""
    addrs = {}
    for disp in dispatchers:
        for cres in disp.overloads.values():
            lib = cres.library
            for fn in lib._final_module.functions:
                if not fn.is_declaration:
                    addr = lib.get_pointer_to_function(fn.name)
                    if addr:
                        addrs[addr] = fn.name
    starts = sorted(addrs)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
        for a, b in zip(starts, starts[1:] + [starts[-1] + 4096]):
            f.write(f"{a:x} {b - a:x} {addrs[a]}\n")
    return len(starts)


def child(seconds: float, threshold: int | None) -> None:
    if threshold is not None:
        from kraftwalk.kernels.jit import link_only

        link_only.INLINE_THRESHOLD = threshold  # what an entry point is optimized with
    from kraftwalk.config import RunConfig
    from kraftwalk.kernels.jit import entry
    from kraftwalk.kernels.drivers.walk import _run_walks, run_chunk
    from kraftwalk.kernel_inputs import features_for, params_for, walk_weights

    cfg = RunConfig()
    params, bw, feats = params_for(cfg), walk_weights(cfg)[0], features_for(cfg)
    run_chunk(0, 0, 10, params, bw, True, feats)
    n = write_perf_map([entry(_run_walks)])
    print(f"ready {n}", flush=True)
    first, end = 10, time.perf_counter() + seconds
    while time.perf_counter() < end:
        run_chunk(0, first, 2000, params, bw, True, feats)
        first += 2000


def main() -> None:
    from kraftwalk.storage.provenance import made_by
    from kraftwalk.vocabulary.releases import DEFAULT as KAFKA

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--out", type=Path, default=None, help="also write the table here (.md)")
    ap.add_argument("--inline-threshold", type=int, default=None,
                    help="LLVM's inlining threshold for this compile (default: the kernels')")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.seconds, args.inline_threshold)
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(tmp) / "numba")}
        # the child compiles first (not profiled), says "ready", then runs walks for
        # --seconds + 2 while perf samples it for --seconds
        extra = [] if args.inline_threshold is None else [
            "--inline-threshold", str(args.inline_threshold)]
        proc = subprocess.Popen([sys.executable, __file__, "--child", "--seconds",
                                 str(args.seconds + 2), *extra], env=env,
                                stdout=subprocess.PIPE, text=True)
        ready = proc.stdout.readline()
        if not ready.startswith("ready"):
            sys.exit(f"the walks did not start: {ready!r}")
        subprocess.run(["perf", "record", "-q", "-F", "1999", "-p", str(proc.pid), "-o",
                        str(data), "--", "sleep", str(args.seconds)], check=True)
        proc.wait()
        rep = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--stdio",
                              "-q", "--sort", "symbol", "--percent-limit", "0.1"],
                             check=True, capture_output=True, text=True).stdout
    rows = []
    for line in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+\[\.\]\s+(\S+)", line)
        if m:
            rows.append((float(m.group(1)), demangle(m.group(2))))
    total = sum(p for p, _ in rows)
    lines = ["| self % | function |", "|---:|---|"]
    lines += [f"| {p:.1f} | {name} |" for p, name in rows[:args.top]]
    lines.append(f"\n{len(rows)} functions above 0.1% of the samples, {total:.1f}% in all; "
                 f"`python experiments/profile_kernel.py --seconds {args.seconds:g}"
                 + ("" if args.inline_threshold is None
                    else f" --inline-threshold {args.inline_threshold}")
                 + f"` (perf record of the default swarm's walks, Kafka {KAFKA}, after their compile, "
                 "one core); "
                 + f"made by {made_by()}.")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text("# Where a walk's time goes (perf, self time)\n\n" + text + "\n")


if __name__ == "__main__":
    main()
