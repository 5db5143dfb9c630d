"""Every deliberate difference between the model and the Kafka release it models.

A change of behaviour between releases is a record in :mod:`.releases` (a switch, a
timing rule, or "not modelled yet" with what the model does instead). What is here
differs from *every* release: a simplification, a scenario choice, or a convention.
Each says what Kafka does (class and method of raft/), what the model does, why, and
what it costs: ``timing`` (a statistic of ``kraftwalk elect`` moves; no checker can
see it), ``coverage`` (a path the swarm reaches less often than Kafka would) or
``convention`` (Kafka stops a node where the model goes on, so that a checker reports
the broken promise instead). None may hide a state that an invariant would flag;
the one that could (``crash_guards``) is there so that the checker sees it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Difference:
    name: str
    kafka: str   # what every modelled release does
    model: str   # what the model does instead
    why: str
    cost: str    # timing | coverage | convention


DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "held_fetch_stale_success",
        "a leader deposed to Unattached by a higher-epoch Vote keeps its fetch purgatory: "
        "held fetches expire up to 500 ms later as 'success, leader = me'",
        "a leader's held fetches are answered at once when its role changes",
        "the model answers a held fetch from the state it releases it in",
        "timing"),
    Difference(
        "bootstrap_servers",
        "a node fetches for discovery from controller.quorum.bootstrap.servers: every "
        "controller, itself included (a Fetch to itself is answered "
        "NOT_LEADER_OR_FOLLOWER), picked from a random place in the list",
        "it fetches from a random other voter of its own view",
        "the model's nodes have no addresses: the voter set stands for the bootstrap list",
        "timing"),
    Difference(
        "snapshot_download_via_bootstrap",
        "a Follower downloading a snapshot whose request to its leader timed out sends a "
        "plain Fetch to the bootstrap voter it picks, the leader too",
        "to its leader it sends FetchSnapshot whichever way it picked it",
        "not yet modelled: the untimed relation does not tell the two ways to the leader "
        "apart",
        "coverage"),
    Difference(
        "snapshots_kept",
        "KafkaRaftLog keeps every snapshot it took until the log start passes it "
        "(deleteBeforeSnapshot), and serves a FetchSnapshot for any of them",
        "a node keeps its latest snapshot, the one at its log start and (before the log "
        "is cleaned) the epoch of the first one; a FetchSnapshot for one that a newer one "
        "replaced is answered SNAPSHOT_NOT_FOUND, and the follower fetches again (and "
        "gets the newer id)",
        "the snapshots in between are read by nothing but such a FetchSnapshot; keeping "
        "them would grow every walk's state by a list of snapshots",
        "coverage"),
    Difference(
        "add_voter_caught_up",
        "AddVoter waits until the new voter is caught up (LeaderState.isReplicaCaughtUp: "
        "reached the leader's end within the last hour) and an ApiVersions round trip; "
        "UpdateVoter also appends a VotersRecord",
        "AddVoter needs the new voter to have fetched in this epoch; no UpdateVoter",
        "the preconditions that keep voter sets overlapping (no pending change, HW "
        "established, an entry of the leader's epoch committed) are Kafka's",
        "coverage"),
    Difference(
        "restart_leader_outside_voter_set",
        "QuorumState.initialize (3.9 on): a node whose stored leader has no endpoints in "
        "its latest voter set restarts Unattached, keeping that leader and its vote, and "
        "finds the leader through the bootstrap voters",
        "it restarts as Follower of that leader and fetches from it",
        "not yet modelled. Both refuse a standard vote in that epoch (Unattached with a "
        "known leader does, QuorumState.unattachedOrProspectiveCanGrantVote) and grant a "
        "pre-vote to an up-to-date log, so no vote differs; which node it fetches from and "
        "its timer (election timeout, not fetch timeout) do",
        "timing"),
    Difference(
        "rolling_restart_by_crash",
        "an operator's rolling restart shuts a node down gracefully (a leader resigns "
        "with EndQuorumEpoch first)",
        "the rolling-restart scenario crashes each voter in turn",
        "a scenario choice: the worst case of a restart",
        "timing"),
    Difference(
        "crash_guards",
        "Kafka throws (and the node stops) on a truncation below the high watermark, a "
        "follower's high watermark moving back, a second leader of its epoch "
        "(hasConsistentLeader), a restart as Candidate of a node no longer a voter, and "
        "the other IllegalStateException guards of QuorumState",
        "the node goes on",
        "so that the checkers report the broken promise (LeaderCompleteness, "
        "HighWatermarkMonotonic, ElectionSafety, ...) rather than the walk ending quietly",
        "convention"),
)

BY_NAME = {d.name: d for d in DIFFERENCES}
COSTS = ("timing", "coverage", "convention")


def markdown_table() -> str:
    """The README's table of differences."""
    rows = ["| difference | Kafka | the model | why | cost |", "|---|---|---|---|---|"]
    rows += [f"| `{d.name}` | {d.kafka} | {d.model} | {d.why} | {d.cost} |" for d in DIFFERENCES]
    return "\n".join(rows)
