"""Known-bug mutations: protocol bugs the checker must find, each one switch
(protocol-notes.md, "Known bugs a checker must be able to find").

Each is one bit of the kernels' compile-time feature mask (features.py), so the
unmutated kernel is compiled without them and pays nothing: the k-th mutation
declared here is bit FIRST_BIT + k (kernels/features.py names them MUT_*), so a new
one goes at the end. The names are the ones users pass to ``--mutation``.
"""
from __future__ import annotations

from dataclasses import dataclass

FIRST_BIT = 40
LAST_BIT = 62  # the mask is a signed 64-bit literal


@dataclass(frozen=True)
class Mutation:
    name: str
    kind: str          # "safety", "liveness" or "statistics" (a worse statistic, no violation)
    description: str
    scenario: str = ""  # liveness, statistics: the timed scenario that exposes it
    needs: tuple = ()   # features it breaks, which must be on: ("snapshots",), ("reconfig",), ("disk_loss",)
    jira: str = ""      # Kafka's own bug, where it had this one
    fixed_in: str = ""  # the first Kafka release with the fix (every earlier KRaft had it)
    release: str = ""   # the newest release it shows on, where a later one hides it
    reverts: str = ""   # the release switch of the bug's fix, which the mutation turns off


MUTATIONS: dict[str, Mutation] = {m.name: m for m in (
    Mutation("commit-old-epoch", "safety",
             "the leader advances its HW over an earlier epoch's entry by counting "
             "replicas, without waiting for an entry of its own epoch (Raft Figure 8)"),
    Mutation("double-vote", "safety",
             "a voter grants a second vote in an epoch in which it already voted"),
    Mutation("restarted-leader-keeps-leading", "safety",
             "a leader that restarts resumes leading its old epoch after losing its "
             "unflushed tail, instead of coming back Resigned",
             jira="KAFKA-10527", fixed_in="2.7.0"),
    Mutation("no-check-quorum", "liveness",
             "a leader that stops hearing from a majority never resigns (a liveness "
             "bug: no safety invariant can catch it; the timed mode's CutOffLeaderResigns "
             "does)", "leader-isolated", jira="KAFKA-15489", fixed_in="3.7.0"),
    Mutation("no-fetch-timer-reset", "liveness",
             "a follower does not restart its fetch timer on a successful fetch, so it "
             "times out and starts elections under a healthy leader (found by the timed "
             "mode's HealthyLeaderKept)", "cold-start"),
    Mutation("snapshot-above-hw", "safety",
             "a node snapshots its log up to its log end instead of its high watermark, so "
             "a snapshot holds entries that may never commit", needs=("snapshots",)),
    Mutation("leader-loads-snapshot", "safety",
             "a node installs any snapshot download it receives without checking that it is "
             "still the follower that asked for it, even once it leads", needs=("snapshots",)),
    Mutation("reconfig-before-commit", "safety",
             "a new leader accepts a voter change before it has committed an entry of its "
             "own epoch, taking the voter set in its log as settled: the single-server "
             "membership change bug", needs=("reconfig",)),
    Mutation("two-pending-changes", "safety",
             "a leader accepts a voter change while its previous one is still uncommitted",
             needs=("reconfig",)),
    Mutation("wiped-replica-same-id", "safety",
             "a node that lost its disk comes back under its old directory id, so its "
             "empty log votes and acknowledges as the voter that held the committed entries "
             "(disk loss without directory ids)", needs=("disk_loss",)),
    Mutation("hw-at-epoch-start", "safety",
             "a new leader exposes a high watermark once a majority has reached its epoch "
             "start offset, before the LeaderChange record of its own epoch is committed "
             "(LeaderState.maybeUpdateHighWatermark's >= where > belongs)",
             jira="KAFKA-12619", fixed_in="3.0.0"),
    Mutation("no-flush-after-append", "safety",
             "nothing flushes the log after an append: the leader counts its unflushed end "
             "towards the high watermark and followers fetch past their flushed end, so a "
             "crash can lose committed entries (Kafka's simulation saw "
             "MonotonicHighWatermark fail)",
             jira="KAFKA-10533", fixed_in="2.8.0"),
    Mutation("observer-skips-flush", "safety",
             "a follower that is not a voter in its own view does not flush after an append, "
             "though the leader may already count it as a voter being added (no "
             "followersAlwaysFlush): a crash can lose entries the leader committed on it",
             needs=("reconfig",), jira="KAFKA-17332", fixed_in="3.9.0"),
    Mutation("non-voter-candidate", "safety",
             "a non-voter that has voted (VotedState) runs for election when its election "
             "timer expires; Kafka's transition to Candidate then threw on the raft thread, "
             "which stops the controller",
             needs=("reconfig",), jira="KAFKA-17067", fixed_in="3.9.0"),
    Mutation("check-quorum-counts-leader", "liveness",
             "a leader counts itself towards the check-quorum majority even once it has "
             "removed itself from the voters, so one fetching voter too few keeps it "
             "leading: cut off from a majority of the new voter set, it never resigns "
             "(CutOffLeaderResigns)", "leader-removed",
             needs=("reconfig",), jira="KAFKA-16531", fixed_in="3.9.0"),
    Mutation("park-diverging-fetch", "statistics",
             "the leader holds a Fetch whose answer is a diverging epoch in its fetch "
             "purgatory, as it holds one with nothing new, instead of answering it at "
             "once: a follower with a log to truncate waits up to the fetch max wait (or "
             "until the leader's log end passes its offset) to learn it, so it catches up "
             "later (a statistics bug: `kraftwalk compare` over the same walks). From 4.1 "
             "a Fetch from a follower behind the leader's high watermark is answered at "
             "once (KAFKA-14145), as such a follower is, which hides it: it shows on 4.0",
             "leader-isolated", jira="KAFKA-15100", fixed_in="3.5.2", release="4.0"),
    Mutation("voter-skips-bootstrap-fetch", "liveness",
             "KAFKA-17030's fix undone: an Unattached voter only waits for its election "
             "timeout, and a Follower voter fetches only from its leader, so a voter the "
             "leader does not know (one removed while it was down) never learns the leader "
             "and runs an election; without pre-vote its vote request deposes the leader "
             "that removed it (RemovedVoterStaysQuiet). From 4.0 pre-vote hides it (the "
             "refused pre-vote names the leader): it shows on 3.9.2",
             "voter-removed-while-down", needs=("reconfig",), jira="KAFKA-17030",
             fixed_in="3.9.1", release="3.9.2", reverts="kafka_17030"),
)}

MUTATION_NAMES: tuple[str, ...] = ("none", *MUTATIONS)
MUTATION_BIT: dict[str, int] = {name: 1 << (FIRST_BIT + k) for k, name in enumerate(MUTATIONS)}
if FIRST_BIT + len(MUTATIONS) - 1 > LAST_BIT:
    raise ValueError("more mutations than bits of the feature mask")


def timed_scenario(name: str) -> str | None:
    """The timed scenario that exposes a liveness mutation; None for the others."""
    m = MUTATIONS.get(name)
    return m.scenario if m is not None and m.kind == "liveness" else None


def statistics_refusal(name: str, where: str) -> str | None:
    """Why ``where`` (a command) cannot run a statistics mutation, with the commands that
    show it; None for every other mutation. Such a bug breaks no property, and only timed
    walks have what it changes (the fetch purgatory), so it shows only as a worse statistic
    of elect's walks against the correct model's."""
    m = MUTATIONS.get(name)
    if m is None or m.kind != "statistics":
        return None
    cell = f"--scenario {m.scenario}" + (f" --kafka {m.release}" if m.release else "")
    return (f"--mutation {name} is a statistics bug, which breaks no property and which "
            f"{where} cannot show; compare timed walks with and without it: kraftwalk elect "
            f"{cell} --out a; kraftwalk elect {cell} --mutation {name} --out b; "
            f"kraftwalk compare a b")


def mutation_needs(name: str) -> tuple:
    """The features a mutation breaks (they must be on to run it); () for unknown names."""
    m = MUTATIONS.get(name)
    return m.needs if m is not None else ()


def mutation_bit(name: str) -> int:
    return 0 if name == "none" else MUTATION_BIT[name]


def mutation_reverts(name: str) -> str:
    """The release switch a mutation turns off (the fix it undoes); "" for the others."""
    m = MUTATIONS.get(name)
    return m.reverts if m is not None else ""


def mutation_release(name: str) -> str:
    """The release a mutation shows on where a later one hides it; "" for the others."""
    m = MUTATIONS.get(name)
    return m.release if m is not None else ""
