"""Replaying a walk of a run: re-run it from its seed and print it step by step.

The kernel re-runs the walk (``record_walk``) to get its actions and must
reproduce the violation recorded in the run's violations dataset. The same actions then
drive the kernel again, one at a time, and the plain-Python reference model beside it:
the states printed are the kernel's own, and wherever the reference model's differ,
the difference is printed too. A bug that lives only in the kernel (as a real one
would) then shows in the kernel's states, step by step, instead of being papered over
by a model that does not have it.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from kraftwalk.config import RunConfig, load_config, make_config
from kraftwalk.counterexamples.counterexample import Trace, violation_info
from kraftwalk.counterexamples.findings import explain
from kraftwalk.errors import RunError, UsageError
from kraftwalk.vocabulary.properties import MEANING, TARGET_NAMES


def load_run(run_dir: str | Path) -> RunConfig:
    run = Path(run_dir)
    cfg_file = run / "config.toml"
    if not cfg_file.is_file():
        raise UsageError(f"{run_dir} is not a run folder: it has no config.toml")
    return make_config(str(cfg_file))


def walks_run(run_dir: str | Path) -> int | None:
    """How many walks the run folder holds results for (None if it cannot tell)."""
    from kraftwalk.storage import rundir

    if rundir.saved_ranges(run_dir):
        return max(b for _, b in rundir.saved_ranges(run_dir))
    try:
        import json

        return int(json.loads((Path(run_dir) / rundir.RUN_JSON).read_text())["walks"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def pick_walk(run_dir: str | Path, walk: int | None) -> int:
    """The walk to replay: ``walk`` if given (one the run ran), else the run's first
    violating walk."""
    from kraftwalk.storage import rundir

    ran = walks_run(run_dir)
    if walk is not None:
        if ran is not None and walk >= ran:
            raise UsageError(f"--walk {walk} is not a walk of {run_dir}: it ran walks 0.."
                             f"{ran - 1}" if ran else f"--walk {walk}: {run_dir} ran no walks")
        return walk
    if not rundir.has_dataset(run_dir, rundir.VIOLATIONS):
        raise UsageError(f"{run_dir} has no violations dataset; give --walk N")
    walks = rundir.read_dataset(run_dir, rundir.VIOLATIONS, columns=["walk"]).column("walk")
    if len(walks) == 0:
        raise UsageError(f"{run_dir} recorded no violation; give --walk N")
    return int(min(walks.to_pylist()))


def record(cfg: RunConfig, walk: int) -> Trace:
    """Re-run walk ``walk`` of the run described by ``cfg`` and record its actions."""
    from kraftwalk.vocabulary.properties import INVARIANT_NAMES
    from kraftwalk.kernels.drivers.trace import record_walk
    from kraftwalk.kernel_inputs import features_for, params_for, walk_weights

    actions, _, viol, _, _ = record_walk(cfg.seed, walk, params_for(cfg), *walk_weights(cfg),
                                         features_for(cfg))
    return Trace(cfg, walk, actions, int(viol[0]), violation_info(viol, INVARIANT_NAMES))


class ReplayMismatch(RunError):
    """The replayed walk does not give the violation its run recorded."""


def check_against_run(run_dir: str | Path, trace: Trace) -> None:
    """The replay must reproduce the violation the run recorded for this walk."""
    from kraftwalk.storage import rundir

    if not rundir.has_dataset(run_dir, rundir.VIOLATIONS):
        return
    t = rundir.read_dataset(run_dir, rundir.VIOLATIONS, columns=["walk", "invariant", "step"],
                            filters=[("walk", "==", trace.walk)]).to_pylist()
    row = t[0] if t else None
    got = trace.violation or {}
    want = (row["invariant"], row["step"]) if row else (None, None)
    if want != (got.get("invariant"), got.get("step")):
        recorded = f"{want[0]} at step {want[1]}" if row else "no violation"
        raise ReplayMismatch(
            f"replay of walk {trace.walk} gives {got.get('invariant') or 'no violation'}"
            f"{' at step ' + str(got['step']) if got else ''}, but the run recorded {recorded}: "
            "the kernel or the run's config.toml changed since the run")


def coverage_of(run_dir: str | Path):
    """The run's coverage (aggregated from its coverage dataset)."""
    from kraftwalk.storage import rundir
    from kraftwalk.storage.coverage import Coverage

    if not rundir.has_dataset(run_dir, rundir.COVERAGE):
        raise UsageError(f"{run_dir} has no coverage dataset (a run folder from before coverage "
                         "was recorded, or not a run folder)")
    return Coverage.from_table(rundir.read_dataset(run_dir, rundir.COVERAGE))


def witness_trace(run_dir: str | Path, name: str) -> Trace:
    """The walk that first reached target ``name``, up to the step that reached it;
    the kernel must reach it there again."""
    from kraftwalk.kernels.state.layout import REACHED
    from kraftwalk.kernels.drivers.trace import replay_actions
    from kraftwalk.kernel_inputs import features_for, params_for

    names = TARGET_NAMES
    if name not in names:
        raise UsageError(f"--witness {name!r} is not a reachability target; known: "
                         f"{', '.join(names)}")
    cfg = load_run(run_dir)
    cov = coverage_of(run_dir)
    t = names.index(name)
    if cov.first_walk[t] < 0:
        raise UsageError(f"{run_dir} never reached {name}: it has no witness")
    walk, step = int(cov.first_walk[t]), int(cov.first_step[t])
    trace = record(cfg, walk)
    actions = trace.actions[:step]
    _, _, w = replay_actions(params_for(cfg), actions, features_for(cfg))
    if len(actions) != step or not (w.scal[REACHED] >> t) & 1:
        raise ReplayMismatch(f"replay of walk {walk} does not reach {name} at step {step} as "
                             "the run recorded: the kernel or the run's config.toml changed "
                             "since the run")
    violation = trace.violation if trace.violation and trace.violation["step"] <= step else None
    return dataclasses.replace(trace, actions=actions, witness=name,
                               invariant=trace.invariant if violation else 0,
                               violation=violation)


def shrink_trace(trace: Trace) -> Trace:
    """A short walk with the same violation: fewer actions, or for a timed walk fewer
    random faults (``kraftwalk.counterexamples.timed_shrink`` says why)."""
    if trace.timed_walk is not None:
        from kraftwalk.counterexamples.timed_replay import shrink_timed_trace

        return shrink_timed_trace(trace)
    from kraftwalk.kernel_inputs import features_for, params_for
    from kraftwalk.counterexamples.shrink import shrink

    res = shrink(params_for(trace.cfg), trace.actions, features_for(trace.cfg), trace.invariant)
    return dataclasses.replace(trace, actions=res.actions, shrunk_from=res.original_length)


# ---- the kernel's states, and the reference model's beside them -------------------
def reference_states(trace: Trace):
    """Yield (step index, action, snapshot before, snapshot after, violation) through the
    reference model. Actions the model finds disabled are reported and skipped."""
    from kraftwalk.reference import KERNEL_COMPAT_ALL, ReferenceCluster
    from kraftwalk.kernel_inputs import features_for, params_for

    # Where the reference model knowingly departs from the kernel (reference/deviations.py),
    # follow the kernel: this is the kernel's walk, shown through the readable model.
    c = ReferenceCluster(params_for(trace.cfg), features_for(trace.cfg),
                         kernel_compat=KERNEL_COMPAT_ALL)
    before = c.snapshot()
    for k, action in enumerate(trace.actions):
        r = c.apply_and_check(tuple(int(x) for x in action))
        after = c.snapshot()
        yield k, action, before, after, (c.violation if r > 0 else None), r
        before = after
        if r > 0:
            return


@dataclasses.dataclass
class Step:
    """One replayed step: the kernel's states around it and its verdict (-1: the action
    was not enabled, else the id + 1 of its first violation so far), and the reference
    model's state after it and its verdict."""
    index: int
    action: object
    before: dict
    after: dict
    verdict: int
    reference: dict
    reference_verdict: int
    reference_violation: object


def walk_states(trace: Trace) -> tuple[list[Step], object]:
    """The kernel applies the trace's actions one at a time, the reference model beside
    it (an action it finds disabled changes nothing there): a :class:`Step` per action,
    up to the kernel's first violation, and that violation (None if none)."""
    from kraftwalk.kernel_inputs import features_for, params_for
    from kraftwalk.kernels.drivers.trace import apply_and_check, new_walk
    from kraftwalk.reference import KERNEL_COMPAT_ALL, ReferenceCluster
    from kraftwalk.reference.from_kernel import kernel_snapshot

    params, features = params_for(trace.cfg), features_for(trace.cfg)
    w = new_walk(params)
    # Where the reference model knowingly departs from the kernel (reference/deviations.py),
    # it follows the kernel: only a difference nobody has explained is shown.
    c = ReferenceCluster(params, features, kernel_compat=KERNEL_COMPAT_ALL)
    before = kernel_snapshot(w)
    found = None
    steps = []
    for k, action in enumerate(trace.actions):
        act = tuple(int(x) for x in action)
        r = apply_and_check(w, act, features)
        rr = c.apply_and_check(act) if found is None else 0
        if rr > 0:
            found = c.violation
        after = kernel_snapshot(w)
        steps.append(Step(k, action, before, after, r, c.snapshot(), rr, found))
        before = after
        if r > 0:
            return steps, kernel_violation(w)
    return steps, None


def kernel_violation(w):
    """The kernel's first violation as the reference model's Violation reads."""
    from kraftwalk.kernels.state.layout import V_EPOCH, V_INVARIANT, V_NODE_A, V_NODE_B, V_OFFSET, V_STEP
    from kraftwalk.reference.checkers import Violation

    s = w.scal
    return Violation(int(s[V_INVARIANT]) - 1, int(s[V_STEP]), int(s[V_NODE_A]),
                     int(s[V_NODE_B]), int(s[V_EPOCH]), int(s[V_OFFSET]))


def reference_differences(st: Step) -> list[str]:
    """Where the reference model's state after a step differs from the kernel's."""
    out = [] if st.reference_verdict != -1 else ["the action is not enabled there"]
    for i, (x, y) in enumerate(zip(st.after["nodes"], st.reference["nodes"])):
        d = describe_node_change(i, x, y)
        if d:
            out.append(d)
    if st.after["committed"] != st.reference["committed"]:
        out.append(f"committed log {entries_text(st.reference['committed'])}")
    kernel_only = [m for m in st.after["messages"] if m not in st.reference["messages"]]
    reference_only = [m for m in st.reference["messages"] if m not in st.after["messages"]]
    if kernel_only or reference_only:
        out.append("in flight " + (", ".join(map(describe_message, reference_only)) or "nothing")
                   + " where the kernel has "
                   + (", ".join(map(describe_message, kernel_only)) or "nothing"))
    return out


def moved_message(before: dict, after: dict, name: str):
    """The message an action took out of the bag (deliver, lose) or copied (duplicate)."""
    from collections import Counter

    b, a = Counter(before["messages"]), Counter(after["messages"])
    diff = (a - b) if name == "duplicate" else (b - a)
    gone = [m for m in before["messages"] if diff.get(m)]
    if name == "deliver":  # the handler may answer with messages of its own; the delivered
        return gone[0] if gone else None  # one is the one missing afterwards
    return gone[0] if gone else ([m for m in after["messages"] if diff.get(m)] or [None])[0]


def describe_action(action, before: dict, after: dict | None = None) -> str:
    from kraftwalk.vocabulary.families import FAMILY_NAMES

    f, a, b = (int(x) for x in action)
    name = FAMILY_NAMES[f]
    if name in ("deliver", "lose", "duplicate"):
        m = moved_message(before, after, name) if after is not None else None
        return f"{name} {describe_message(m)}" if m else f"{name} a message"
    if name == "send":
        return f"send: node {a} -> node {b}"
    if name == "add_voter":
        return f"add_voter: leader {a} adds node {b}"
    if name == "remove_voter":
        return f"remove_voter: leader {a} removes node {b}"
    if name == "partition":
        kinds = ("isolate a node", "cut one link one way", "split in two", "heal all links")
        return f"partition: {kinds[a]}"
    return f"{name}: node {a}"


def _pre_vote(f: dict) -> str:
    return "pre-vote " if f["pre_vote"] else ""


def _describe_vote_response(head: str, f: dict) -> str:
    from kraftwalk.kernels.state.layout import ERROR_NAMES

    err, leader = f["error"], f["leader"]
    return (f"{head} {_pre_vote(f)}{'granted' if f['granted'] else 'rejected'}"
            f"{'' if err == 0 else ' ' + ERROR_NAMES[err]}{'' if leader < 0 else f' leader={leader}'}")


def _describe_fetch_response(head: str, f: dict) -> str:
    from kraftwalk.kernels.state.layout import ERROR_NAMES

    s = f"{head} hw={f['hw']}"
    if f["error"]:
        s += f" {ERROR_NAMES[f['error']]} leader={f['leader']}"
    diverging = f["diverging"]
    if diverging is not None and diverging != -1 and diverging != (-1, -1):
        s += f" diverging={diverging}"
    if f["records"]:
        s += f" records@{f['base_offset']}={entries_text(f['records'])}"
    if f.get("snapshot_end", -1) >= 0:
        s += f" fetch snapshot ({f['snapshot_end']}, e{f['snapshot_epoch']})"
    return s


def _describe_fetch_snapshot_response(head: str, f: dict) -> str:
    from kraftwalk.kernels.state.layout import ERROR_NAMES

    if f["error"]:
        return f"{head} {ERROR_NAMES[f['error']]} leader={f['leader']}"
    return (f"{head} snapshot ({f['snapshot_end']}, e{f['snapshot_epoch']})="
            f"{entries_text(f['snapshot_records'])}")


# How replay words a message, by type name, from its named payload fields; a type not
# listed here shows its payload values in the message table's order.
DESCRIBE = {
    "VoteRequest": lambda head, f: (f"{head} {_pre_vote(f)}"
                                    f"last=({f['last_offset']}, e{f['last_epoch']})"),
    "VoteResponse": _describe_vote_response,
    "FetchRequest": lambda head, f: (f"{head} offset={f['fetch_offset']} "
                                     f"lastEpoch={f['last_fetched_epoch']}"),
    "FetchResponse": _describe_fetch_response,
    "FetchSnapshotRequest": lambda head, f: (f"{head} snapshot ({f['req_snapshot_end']}, "
                                             f"e{f['req_snapshot_epoch']})"),
    "FetchSnapshotResponse": _describe_fetch_snapshot_response,
}


def describe_message(m: tuple) -> str:
    """One line for a message's canonical tuple (``Message.canonical``)."""
    from kraftwalk.vocabulary.messages import canonical_names, message_type

    t, src, dst, epoch, corr = m[:5]
    name = message_type(t).name
    head = f"{name} {src}->{dst} e{epoch}"
    describe = DESCRIBE.get(name)
    if describe is None:
        return f"{head} " + " ".join(str(x) for x in m[5:])
    return describe(head, dict(zip(canonical_names(t), m[5:])))


def describe_node_change(i: int, x: dict, y: dict) -> str | None:
    from kraftwalk.kernels.state.layout import ROLE_NAMES

    parts = []
    if x["up"] != y["up"]:
        parts.append("crashed" if not y["up"] else "restarted")
    if x.get("role") != y.get("role") and y.get("role") is not None:
        parts.append(f"{ROLE_NAMES[x['role']] if x.get('role') is not None else '-'} -> "
                     f"{ROLE_NAMES[y['role']]}")
    for f in ("epoch", "voted_id", "leader_id", "hw", "flushed_end", "latest", "log_start",
              "fetching", "dir"):
        if x.get(f) != y.get(f):
            parts.append(f"{f} {x.get(f)} -> {y.get(f)}")
    if x.get("voters") and y.get("voters") and x["voters"][0] != y["voters"][0]:
        parts.append(f"voters {set(x['voters'][0])} -> {set(y['voters'][0])}")
    lx, ly = x["log"], y["log"]
    if lx != ly:
        k = 0
        while k < min(len(lx), len(ly)) and lx[k] == ly[k]:
            k += 1
        if k < len(lx):
            parts.append(f"log truncated to {k}")
        if k < len(ly):
            parts.append("log +" + " ".join(f"{o}:(e{e},{entry_text(v)})" for o, (e, v) in
                                           enumerate(ly[k:], start=k)))
    for f in ("granted", "rejected", "acked", "fetched"):
        if x.get(f) != y.get(f) and y.get(f) is not None and x.get(f) is not None:
            parts.append(f"{f} {set(y[f]) or '{}'}")
    if x.get("links") != y.get("links"):
        parts.append(f"links {list(y['links'])}")
    return f"node {i}: " + ", ".join(parts) if parts else None


def entry_text(value: int) -> str:
    """A log entry's value as replay shows it: a client record's id, LeaderChange's
    negative id, or a VotersRecord's voter set (and the directory id of the voter it
    adds, when a disk loss gave it one)."""
    from kraftwalk.reference.voters import is_voters_record, record_added_dir, record_voters

    if not is_voters_record(value):
        return str(value)
    added = record_added_dir(value)
    return f"voters{set(record_voters(value))}" + (f" adding dir {added}" if added else "")


def entries_text(entries) -> str:
    """(epoch, value) entries as replay shows them (see entry_text)."""
    return "[" + ", ".join(f"({e}, {entry_text(x)})" for e, x in entries) + "]"


def node_line(i: int, v: dict, voters: int) -> str:
    from kraftwalk.kernels.state.layout import ROLE_NAMES

    view = v.get("voters")  # (its voter set, the record's offset, its size)
    keys = v.get("voter_dirs")  # ((voter, directory id), ...), its own key a voter?
    own = keys[1] if keys and keys[1] is not None else (view and i in view[0])
    kind = ("voter" if own else "observer") if view else (
        "voter" if i < voters else "observer")
    if v.get("dir"):
        kind += f", directory id {v['dir']}"
    if view and view[1] >= 0:
        kind += f", voters {set(view[0])} from offset {view[1]}"
    if keys and any(d for _, d in keys[0]):
        kind += " (directory ids " + ", ".join(f"{j}:{d}" for j, d in keys[0]) + ")"
    log = f"log end {len(v['log'])} flushed {v['flushed_end']} {entries_text(v['log'])}"
    if v.get("latest", (0, 0))[0] > 0:
        log += f", snapshot {v['latest']} log start {v['log_start']}"
    if not v["up"]:
        return f"node {i} ({kind}): down, epoch {v['epoch']} voted {v['voted_id']}, {log}"
    start = "" if v.get("epoch_start") is None else f" epoch start {v['epoch_start']}"
    return (f"node {i} ({kind}): {ROLE_NAMES[v['role']]} epoch {v['epoch']} leader {v['leader_id']} "
            f"voted {v['voted_id']} hw {v['hw']}{start}, {log}")


def shrunk_note(trace: Trace) -> str:
    if trace.faults_kept is not None:
        kept, total = trace.faults_kept
        return (f" (shrunk to {kept} of its {total} random faults; {trace.shrunk_from} steps "
                "with all)")
    return "" if trace.shrunk_from is None else f" (shrunk from {trace.shrunk_from})"


def render(trace: Trace) -> list[tuple[str, str]]:
    """The trace as (style, line) pairs: a header, each step's action and changes, and
    the violation with the offending nodes' final state."""
    lines = []
    cfg = trace.cfg
    head = (f"walk {trace.walk} of seed {cfg.seed}: Kafka {cfg.kafka}, {cfg.voters} voters + "
            f"{cfg.observers} observers, pre-vote {'on' if cfg.pre_vote else 'off'}, "
            f"mutation {cfg.mutation}, {len(trace.actions)} steps")
    features = [name for name in ("snapshots", "reconfig", "disk_loss") if getattr(cfg, name, False)]
    if features or cfg.disabled_checks:
        head = head.replace(", pre-vote", "".join(f", {f}" for f in features) + ", pre-vote")
        if cfg.disabled_checks:
            head += f" (checks off: {', '.join(cfg.disabled_checks)})"
    head += shrunk_note(trace)
    if trace.timed:
        head += f"; timed: {trace.timed}"
    lines.append(("bold", head))
    last = None

    def when(k: int) -> str:
        return "" if trace.times is None else f"{trace.times[k] / 1000:>10.3f} ms  "

    steps, kernel_viol = walk_states(trace)
    shown = []  # the reference model's differences last printed
    for st in steps:
        k, before, after = st.index, st.before, st.after
        if st.verdict == -1:
            lines.append(("yellow", f"{k + 1:>4}  {when(k)}{describe_action(st.action, before)}  "
                                    "(not enabled in the kernel: skipped)"))
            continue
        lines.append(("cyan", f"{k + 1:>4}  {when(k)}{describe_action(st.action, before, after)}"))
        for i, (x, y) in enumerate(zip(before["nodes"], after["nodes"])):
            d = describe_node_change(i, x, y)
            if d:
                lines.append(("", f"        {d}"))
        sent = [m for m in after["messages"] if m not in before["messages"]]
        for m in sent:
            lines.append(("dim", f"        sent {describe_message(m)}"))
        differs = reference_differences(st)
        if differs != shown:
            if differs:
                lines.append(("yellow", "        reference model differs (kernel -> reference): "
                                        + "; ".join(differs)))
            else:
                lines.append(("yellow", "        reference model agrees again"))
            shown = differs
        if st.reference_verdict > 0 and st.verdict == 0:
            lines.append(("yellow", f"        the reference model finds "
                                    f"{st.reference_violation.name} here; the kernel does not"))
        last = (after, kernel_viol if st is steps[-1] else None)
    if last and last[1] is not None:
        after, v = last
        lines.append(("bold red", f"VIOLATION {v.name} at step {v.step}: nodes {v.node_a}"
                                  f"{'' if v.node_b < 0 else ', ' + str(v.node_b)}, epoch {v.epoch}, "
                                  f"offset {v.offset}"))
        lines.append(("red", f"  {v.name}: {MEANING.get(v.name, '')}"))
        for i, node in enumerate(after["nodes"]):
            style = "bold red" if i in (v.node_a, v.node_b) else ""
            lines.append((style, "  " + node_line(i, node, cfg.voters)))
        lines.append(("", f"  committed log: {entries_text(after['committed'])}"))
        known = explain(steps, v)
        if known is not None:
            lines.append(("bold yellow", f"known finding {known.name} ({known.jira}): "
                                         f"{known.summary}; written up in kraftwalk's "
                                         f"results/findings/{known.name}.md"))
        ref = steps[-1].reference_violation
        if ref is None or (ref.invariant, ref.step) != (v.invariant, v.step):
            lines.append(("bold red", "the reference model did not reproduce the kernel's "
                                      "violation: "
                                      + ("it found no violation" if ref is None else
                                         f"it found {ref}")))
    elif trace.times is not None and trace.violation and last:  # liveness: a fact about time
        v = trace.violation
        t = trace.times[-1] / 1000 if len(trace.times) else 0.0
        lines.append(("bold red", f"VIOLATION {v['invariant']} after step {v['step']} "
                                  f"(last action at {t:.3f} ms): node {v['node_a']}, "
                                  f"epoch {v['epoch']}"))
        lines.append(("red", f"  {v['invariant']}: {MEANING.get(v['invariant'], '')}"))
        for i, node in enumerate(last[0]["nodes"]):
            style = "bold red" if i == v["node_a"] else ""
            lines.append((style, "  " + node_line(i, node, cfg.voters)))
    elif trace.witness and last:
        lines.append(("bold green", f"REACHED {trace.witness} at step {len(trace.actions)}"))
        for i, node in enumerate(last[0]["nodes"]):
            lines.append(("", "  " + node_line(i, node, cfg.voters)))
        lines.append(("", f"  committed log: {entries_text(last[0]['committed'])}"))
    elif trace.invariant:
        lines.append(("bold red", "the replay did not reach the kernel's recorded violation "
                                  f"{trace.violation}"))
    else:
        lines.append(("green", "no violation"))
    return lines


def cfg_for_replay(run_dir: str | Path | None, overrides: dict) -> RunConfig:
    if run_dir is None:
        return make_config(None, **overrides)
    cfg = load_run(run_dir)
    return dataclasses.replace(cfg, **{k: v for k, v in overrides.items() if v is not None})


__all__ = ["Trace", "load_run", "pick_walk", "record", "check_against_run", "shrink_trace",
           "render", "reference_states", "load_config"]
