"""The settled findings of results/findings/: Kafka's own faults the swarm found, each
with the shape its walks take, so that a violation can be told apart from a new one.

A swarm of the correct model should find nothing but these. ``explain`` reads a
replayed walk's kernel states (replay.walk_states) and names the finding it is an
instance of, or None: a violation nothing here explains is new and needs a look.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Finding:
    name: str         # stable: the write-up's file stem in results/findings/
    jira: str         # the Kafka change that brought it
    invariant: str    # the property its walks break
    summary: str
    matches: Callable  # (steps, violation) -> bool


def restarted_as_candidate(steps, v) -> bool:
    """KAFKA-17642's restart rule: one of the two leaders of epoch E became leader after
    a restart that brought it back as Candidate of E (or at once Leader, alone in its
    voter set), having gone down as a Follower of E that still held its own vote; its
    epoch did not move from that restart to the violation."""
    from kraftwalk.kernels.state.layout import CANDIDATE, FOLLOWER, LEADER

    for n in (v.node_a, v.node_b):
        restart = last_restart(steps, n)
        if restart is None:
            continue
        back = steps[restart].after["nodes"][n]
        down = last_up_state(steps, n, restart)
        if (back["epoch"] == v.epoch and back["role"] in (CANDIDATE, LEADER)
                and down is not None and down["epoch"] == v.epoch
                and down["role"] == FOLLOWER and down["voted_id"] == n
                and down["leader_id"] not in (-1, n)
                and all(st.after["nodes"][n]["epoch"] == v.epoch for st in steps[restart:])
                and steps[-1].after["nodes"][n]["role"] == LEADER):
            return True
    return False


def last_restart(steps, n: int) -> int | None:
    """The index of the last step that brought node n back up."""
    for k in range(len(steps) - 1, -1, -1):
        if not steps[k].before["nodes"][n]["up"] and steps[k].after["nodes"][n]["up"]:
            return k
    return None


def last_up_state(steps, n: int, before: int) -> dict | None:
    """Node n's state when it last went down before step ``before``."""
    for k in range(before - 1, -1, -1):
        if steps[k].before["nodes"][n]["up"] and not steps[k].after["nodes"][n]["up"]:
            return steps[k].before["nodes"][n]
    return None


FINDINGS: tuple[Finding, ...] = (
    Finding("kafka-17642-restart-as-candidate", "KAFKA-17642", "ElectionSafety",
            "a voter that voted for itself, then followed the epoch's leader, restarts as "
            "Candidate of that epoch and becomes a second leader of it (Kafka 4.0+)",
            restarted_as_candidate),
)


def explain(steps, violation) -> Finding | None:
    """The settled finding a replayed walk's violation is an instance of; None if none."""
    if violation is None:
        return None
    return next((f for f in FINDINGS if f.invariant == violation.name
                 and f.matches(steps, violation)), None)
