"""``kraftwalk bench``: the speed figures of the README, measured.

Every figure comes from a fresh subprocess or a timed in-process run:
checked steps/s per core, walks/s, bytes of state per walk, cold JIT time
(empty cache) and warm start (cached), the 1 -> 2 core speed-up, peak memory as
walks grow (it must stay flat), and the cost of each phase of a step.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kraftwalk.config import RunConfig

_CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from kraftwalk.config import RunConfig
from kraftwalk.run.runner import run_swarm
cfg = RunConfig(**json.loads(sys.argv[1]))
t1 = time.perf_counter()
res = run_swarm(cfg)
res["import_seconds"] = t1 - t0
res["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
res["peak_rss_children_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print("RESULT " + json.dumps(res, default=str))
"""


_TIMED_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from kraftwalk.config import RunConfig
from kraftwalk.run.elect import kafka_timed, warm_up
cfg = RunConfig(**json.loads(sys.argv[1]))
params, tp, features = kafka_timed(cfg, sys.argv[2])
t1 = time.perf_counter()
print("RESULT " + json.dumps({"import_seconds": t1 - t0,
                              "jit_seconds": warm_up(params, tp, features)}))
"""


def _child(script: str, *args: str, env: dict | None = None) -> dict:
    """Run ``script`` in a fresh Python process; the JSON of its ``RESULT`` line."""
    proc = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {proc.stderr.strip().splitlines()[-1:]}")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def _child_timed_jit(cfg: dict, scenario: str, env: dict | None = None) -> dict:
    """Compile (or load) the timed kernels in a fresh Python process: its import and JIT
    seconds."""
    return _child(_TIMED_CHILD, json.dumps(cfg), scenario, env=env)


def timed_jit(common: dict, scenario: str, cold: bool, log=print) -> dict:
    """The timed kernels' JIT as the swarm's is measured, each in a fresh process: into
    an empty cache (with ``cold``), and loaded from a filled one (import + load).
    ``jit_seconds`` is the first one's, a compile or a load as the cache had them
    (experiments/compare_speed.py reads it as the JIT into the cache it gave)."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            log(f"timed mode ({scenario}): compiling the timed kernels into an empty cache ...")
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            first = _child_timed_jit(common, scenario, env)["jit_seconds"]
            out["cold_jit_seconds"] = round(first, 2)
        else:  # the user's cache may lack these kernels: fill it first
            env = None
            first = _child_timed_jit(common, scenario)["jit_seconds"]
        out["jit_seconds"] = round(first, 2)
        log(f"timed mode ({scenario}): warm start, a fresh process with the cache filled ...")
        res = _child_timed_jit(common, scenario, env)
    out["warm_start_seconds"] = round(res["import_seconds"] + res["jit_seconds"], 2)
    return out


def _child_run(cfg: dict, env: dict | None = None) -> dict:
    """Run a swarm in a fresh Python process; returns its summary plus memory figures."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = {**cfg, "out": os.path.join(tmp, "run")}
        t = time.perf_counter()
        res = _child(_CHILD, json.dumps(cfg), env=env)
        res["wall_seconds"] = time.perf_counter() - t
    return res


def measure(base: RunConfig, seconds: float = 10.0, cold: bool = False,
            memory_walks: tuple[int, ...] = (100_000,),
            log=print) -> dict:
    """All benchmark figures for the cluster described by ``base``."""
    from kraftwalk.kernels.state.layout import alloc_walk, state_bytes
    from kraftwalk.kernels.drivers.profile import phase_costs
    from kraftwalk.kernels.transition import N_FAMILIES
    from kraftwalk.kernels.drivers.trace import new_walk
    from kraftwalk.kernel_inputs import features_for, params_for, walk_weights
    from kraftwalk.run.runner import versions

    common = {k: getattr(base, k) for k in (
        "kafka", "voters", "observers", "depth", "seed", "weights", "pre_vote", "snapshots",
        "reconfig", "disk_loss", "mutation",
        "log_capacity", "msg_slots", "max_epoch", "max_records", "chunk_walks")}
    common["disabled_checks"] = list(base.disabled_checks)
    out: dict = {"config": common, "cpu_count": os.cpu_count(), "versions": versions()}
    params = params_for(base)
    out["bytes_per_walk"] = state_bytes(alloc_walk(params, N_FAMILIES))

    one = {**common, "walks": 1, "workers": 1}
    with tempfile.TemporaryDirectory() as cache:
        if cold:
            log("cold JIT: compiling every kernel into an empty cache ...")
            env = {**os.environ, "NUMBA_CACHE_DIR": cache}
            out["cold_jit_seconds"] = _child_run(one, env=env)["jit_seconds"]
        else:  # the user's cache may lack these kernels: fill it first
            env = None
            _child_run(one)
        log("warm start: a fresh process with the cache filled ...")
        res = _child_run(one, env=env)
    out["warm_start_seconds"] = res["import_seconds"] + res["jit_seconds"]

    # Size the timed runs by walks (deterministic work) from a short calibration.
    rate = _child_run({**common, "walks": 20_000, "workers": 1})["walks_per_s"]
    for workers in (1, 2):
        log(f"throughput on {workers} core(s), ~{seconds:.0f} s ...")
        n = max(int(rate * seconds * workers), 1000)
        res = _child_run({**common, "walks": n, "workers": workers})
        out[f"cores_{workers}"] = {k: res[k] for k in (
            "walks", "steps", "seconds", "steps_per_s", "steps_per_s_per_core", "walks_per_s",
            "disabled_attempts")}
    out["speedup_1_to_2_cores"] = out["cores_2"]["steps_per_s"] / out["cores_1"]["steps_per_s"]
    c1 = out["cores_1"]
    out["disabled_attempts_per_step"] = c1["disabled_attempts"] / max(c1["steps"], 1)

    out["peak_memory"] = []
    for n in memory_walks:
        log(f"peak memory of a {n:,}-walk run on 2 cores ...")
        res = _child_run({**common, "walks": n, "workers": 2})
        out["peak_memory"].append({
            "walks": n, "main_rss_mib": round(res["peak_rss_mib"], 1),
            "worker_rss_mib": round(res["peak_rss_children_mib"], 1),
            "seconds": round(res["seconds"], 1)})

    log("the reference model on the same walks ...")
    out["reference_steps_per_s"] = reference_speed(base)
    out["kernel_speedup_over_reference"] = (out["cores_1"]["steps_per_s_per_core"]
                                            / out["reference_steps_per_s"])

    log("cost of each phase of a step ...")
    bw = walk_weights(base)[0]
    w = new_walk(params, base_weights=bw)
    out["phase_ns"] = {k: round(v, 1) for k, v in phase_costs(w, bw, features_for(base)).items()}
    out["timed"] = measure_timed(base, seconds, cold=cold, log=log)
    return out


def measure_timed(base: RunConfig, seconds: float = 20.0, scenario: str = "leader-crash",
                  cold: bool = False, log=print) -> dict:
    """The timed mode on one core, in this process: checked events and actions per
    second, walks/s, bytes of state per walk, for ``scenario`` at Kafka's default timing
    (every safety invariant and liveness property checked); and its JIT, each in a fresh
    process: warm start, and with ``cold`` a compile into an empty cache."""
    from kraftwalk.run.elect import kafka_timed, run_chunk, warm_up
    from kraftwalk.kernels.state.clock import TS_NAMES, alloc_clock
    from kraftwalk.kernels.state.layout import S_STEPS, STATS_BASE, alloc_walk, state_bytes
    from kraftwalk.kernels.transition import N_FAMILIES
    from kraftwalk.run.runner import versions

    params, tp, features = kafka_timed(base, scenario)
    common = {k: getattr(base, k) for k in (
        "kafka", "voters", "observers", "depth", "seed", "pre_vote", "mutation")}
    out = {"versions": versions(), "kafka": base.kafka, "scenario": scenario, "voters": base.voters,
           "observers": base.observers, "pre_vote": base.pre_vote,
           **timed_jit(common, scenario, cold, log=log)}
    warm_up(params, tp, features)  # loads what the child compiled
    clock = alloc_clock(base.voters + base.observers, tp)
    out["bytes_per_walk"] = (state_bytes(alloc_walk(params, N_FAMILIES))
                             + sum(a.nbytes for a in clock))
    log(f"timed mode ({scenario}): ~{seconds:.0f} s on one core ...")
    ev_col = TS_NAMES.index("events")
    walks = events = steps = 0
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        _, stats, _, timed = run_chunk(base.seed, walks, 200, params, tp, features)
        walks += len(stats)
        events += int(timed[:, ev_col].sum())
        steps += int(stats[:, S_STEPS - STATS_BASE].sum())
    secs = time.perf_counter() - t
    out.update(walks=walks, events=events, steps=steps, seconds=round(secs, 2),
               events_per_s_per_core=events / secs, steps_per_s_per_core=steps / secs,
               walks_per_s=walks / secs)
    return out


def _made_by_row(res: dict) -> list[str]:
    """The code that measured it: [] for a result recorded before benches said so."""
    from kraftwalk.storage.provenance import made_by

    v = res.get("versions") or {}
    return [f"| made by | {made_by(v)} |"] if v.get("kernel_sources") else []


def _numba_row(res: dict) -> list[str]:
    """The Numba the kernels ran on, and whether on the hooks or plain (13x apart):
    [] for a result recorded before benches said so."""
    v = res.get("versions")
    return [f"| Numba (kernels) | {v['numba']}, {v['numba_mode']} |"] if v else []


def _timed_jit_rows(res: dict) -> list[str]:
    """The timed kernels' JIT rows; a result from before the fresh-process figures had one
    in-process time, a compile or a load, whichever its cache gave."""
    if "warm_start_seconds" not in res:
        return [f"| JIT (compile or load the timed kernels) | {res['jit_seconds']:.1f} s |"]
    rows = []
    if "cold_jit_seconds" in res:
        rows.append(f"| cold JIT of the timed kernels (empty cache) | {res['cold_jit_seconds']:.1f} s |")
    rows.append(f"| warm start (cached: import + load) | {res['warm_start_seconds']:.2f} s |")
    return rows


def _kafka(release: str | None) -> str:
    """"Kafka R, " for a result that recorded its release; "" for one from before."""
    return f"Kafka {release}, " if release else ""


def render_timed_markdown(res: dict) -> str:
    return "\n".join([
        f"Timed mode, {_kafka(res.get('kafka'))}scenario {res['scenario']} at Kafka's default "
        f"timing, {res['voters']} "
        f"voters + {res['observers']} observer(s), pre-vote {'on' if res['pre_vote'] else 'off'}, "
        "every safety invariant and liveness property checked, one core:", "",
        "| figure | value |", "|---|---|",
        f"| checked events/s per core | {res['events_per_s_per_core']:,.0f} |",
        f"| of which protocol actions (steps)/s | {res['steps_per_s_per_core']:,.0f} |",
        f"| walks/s per core | {res['walks_per_s']:,.0f} |",
        f"| bytes of state per walk (walk + clock) | {res['bytes_per_walk']:,} |",
        *_timed_jit_rows(res),
        f"| walks measured | {res['walks']:,} in {res['seconds']:.1f} s |",
        *_numba_row(res), *_made_by_row(res)]) + "\n"


def reference_speed(cfg: RunConfig, walks: int = 40) -> float:
    """Checked steps/s of the plain-Python reference model replaying recorded walks
    (apply + check every invariant, as the kernel does)."""
    from kraftwalk.kernels.drivers.trace import record_walk
    from kraftwalk.reference import ReferenceCluster
    from kraftwalk.kernel_inputs import features_for, params_for, walk_weights

    params, features = params_for(cfg), features_for(cfg)
    traces = [record_walk(cfg.seed, k, params, *walk_weights(cfg), features)[0] for k in range(walks)]
    steps = 0
    t = time.perf_counter()
    for actions in traces:
        c = ReferenceCluster(params, features)
        for a in actions:
            c.apply_and_check(tuple(int(x) for x in a))
        steps += len(actions)
    return steps / (time.perf_counter() - t)


def write_report(res: dict, folder: Path, name: str = "bench",
                 render=None) -> tuple[Path, Path]:
    """NAME.json and NAME.md (rendered by ``render``, default render_markdown)."""
    folder.mkdir(parents=True, exist_ok=True)
    from kraftwalk.storage.output import write_json_atomic, write_text_atomic

    j = folder / f"{name}.json"
    write_json_atomic(j, res)
    md = folder / f"{name}.md"
    write_text_atomic(md, (render or render_markdown)(res))
    return j, md


def render_markdown(res: dict) -> str:
    c1, c2 = res["cores_1"], res["cores_2"]
    kafka = res.get("config", {}).get("kafka")
    lines = [
        "| figure | value |", "|---|---|",
        *([f"| Kafka release modelled | {kafka} |"] if kafka else []),
        f"| checked steps/s per core (1 core) | {c1['steps_per_s_per_core']:,.0f} |",
        f"| checked steps/s on 2 cores | {c2['steps_per_s']:,.0f} |",
        f"| speed-up 1 -> 2 cores | {res['speedup_1_to_2_cores']:.2f}x |",
        f"| walks/s per core | {c1['walks_per_s']:,.0f} |",
        f"| disabled draws per step (not counted as steps) | {res['disabled_attempts_per_step']:.4f} |",
        f"| bytes of state per walk | {res['bytes_per_walk']:,} |",
        f"| reference model (plain Python), checked steps/s | {res['reference_steps_per_s']:,.0f} |",
        f"| kernel speed-up over the reference model (per core) | "
        f"{res['kernel_speedup_over_reference']:,.0f}x |",
    ]
    lines += _numba_row(res) + _made_by_row(res)
    if "cold_jit_seconds" in res:
        lines.append(f"| cold JIT (empty cache) | {res['cold_jit_seconds']:.1f} s |")
    lines.append(f"| warm start (cached: import + load) | {res['warm_start_seconds']:.2f} s |")
    for m in res["peak_memory"]:
        lines.append(f"| peak RSS, {m['walks']:,} walks (main / largest worker) | "
                     f"{m['main_rss_mib']:.0f} MiB / {m['worker_rss_mib']:.0f} MiB |")
    lines += ["", "| phase of a step | ns |", "|---|---|"]
    lines += [f"| {k} | {v:.1f} |" for k, v in res["phase_ns"].items()]
    if "timed" in res:
        lines += ["", render_timed_markdown(res["timed"]).rstrip("\n")]
    return "\n".join(lines) + "\n"
