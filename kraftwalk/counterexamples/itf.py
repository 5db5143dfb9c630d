"""Export a trace in the Informal Trace Format (ITF, Apalache ADR-015), as read by
Quint's and Apalache's tools: ``#meta``, ``vars`` and one object per state.

Values follow the ADR's encoding: integers as JSON numbers (``{"#bigint": ...}``
beyond 2**53), sets as ``{"#set": [...]}``, tuples as ``{"#tup": [...]}``, records
as JSON objects, sequences as JSON arrays.
"""
from __future__ import annotations

import json
from pathlib import Path

from kraftwalk.storage.output import write_text_atomic
from kraftwalk.storage.provenance import provenance

FORMAT_URL = "https://apalache-mc.org/docs/adr/015adr-trace.html"
VARS = ["nodes", "messages", "committed", "action"]


def _int(x: int):
    return x if abs(x) < 2**53 else {"#bigint": str(x)}


def _deep(x):
    """Every integer of a JSON-like value in the ADR's encoding (#bigint beyond 2**53)."""
    if isinstance(x, bool) or x is None or isinstance(x, (str, float)):
        return x
    if isinstance(x, int):
        return _int(x)
    if isinstance(x, dict):
        return {k: _deep(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_deep(v) for v in x]
    return x


def _set(xs) -> dict:
    return {"#set": [_int(int(x)) for x in sorted(xs)]}


def node_value(i: int, v: dict, voters: int) -> dict:
    from kraftwalk.kernels.state.layout import ROLE_NAMES

    rec = {
        "id": i, "voter": i < voters, "up": bool(v["up"]),
        "role": ROLE_NAMES[v["role"]] if v.get("role") is not None else "Down",
        "epoch": _int(v["epoch"]), "votedId": _int(v["voted_id"]), "leaderId": _int(v["leader_id"]),
        "log": [{"epoch": _int(e), "value": _int(val)} for e, val in v["log"]],
        "flushedEnd": _int(v["flushed_end"]),
        "highWatermark": _int(v["hw"] if v.get("hw") is not None else -1),
        "links": _set(v["links"]),
    }
    for key, name in (("granted", "votesGranted"), ("rejected", "votesRejected"),
                      ("acked", "acked"), ("fetched", "fetchedSinceCheckQuorum")):
        if v.get(key) is not None:
            rec[name] = _set(v[key])
    if v.get("epoch_start") is not None:
        rec["epochStartOffset"] = _int(v["epoch_start"])
    return rec


def message_value(m: tuple) -> dict:
    from kraftwalk.kernels.state.layout import MSG_NAMES

    def enc(x):
        if isinstance(x, bool):
            return x
        if isinstance(x, int):
            return _int(x)
        if x is None:
            return {"#tup": []}
        if isinstance(x, (tuple, list)):
            return {"#tup": [enc(y) for y in x]}
        return str(x)

    t, src, dst, epoch, corr = m[:5]
    return {"type": MSG_NAMES[t], "src": src, "dst": dst, "epoch": _int(epoch),
            "correlationId": _int(corr), "payload": {"#tup": [enc(x) for x in m[5:]]}}


def trace_to_itf(trace) -> dict:
    """The ITF document of a replayed trace (states read from the reference model)."""
    from kraftwalk.counterexamples.replay import describe_action, reference_states, shrunk_note

    cfg = trace.cfg
    states, actions = [], []

    def state(snap: dict, action: str) -> dict:
        return {
            "#meta": {"index": len(states)},
            "nodes": [node_value(i, v, cfg.voters) for i, v in enumerate(snap["nodes"])],
            "messages": [message_value(m) for m in snap["messages"]],
            "committed": [{"epoch": _int(e), "value": _int(v)} for e, v in snap["committed"]],
            "action": action,
        }

    violation = None
    for k, action, before, after, viol, r in reference_states(trace):
        if not states:
            states.append(state(before, "init"))
        if r == -1:
            continue
        desc = describe_action(action, before, after)
        actions.append({"step": len(states), "family": int(action[0]), "a": int(action[1]),
                        "b": int(action[2]), "description": desc})
        states.append(state(after, desc))
        if viol is not None:
            violation = {"invariant": viol.name, "step": viol.step, "node_a": viol.node_a,
                         "node_b": viol.node_b, "epoch": viol.epoch, "offset": viol.offset}
    return {
        "#meta": {
            "format": "ITF", "format-description": FORMAT_URL, "source": "kraftwalk",
            "description": f"walk {trace.walk} of seed {cfg.seed}{shrunk_note(trace)}",
            "seed": _int(cfg.seed), "walk": _int(trace.walk), "config": _deep(cfg.to_dict()),
            "actions": _deep(actions), "violation": _deep(violation),
            "versions": provenance(),  # the kraftwalk, commit and kernel sources it ran on
        },
        "vars": VARS,
        "states": states,
    }


def write_itf(trace, path: str | Path) -> None:
    write_text_atomic(path, json.dumps(trace_to_itf(trace), indent=1) + "\n")
