"""Every property kraftwalk checks, declared once with its kind, as model checkers
declare theirs:

- ``always``: the safety invariants, checked after every step; a walk that breaks
  one is a violation. Their order is the kernels' ids (checkers.py) and the bits of
  the check mask (features.py), so a new one goes at the end.
- ``eventually``: the liveness properties of timed walks (kernels/properties/liveness.py); their
  ids follow the invariants'.
- ``sometimes``: the reachability targets; a run that finds no violation is worth
  what it reached (coverage). Their order is the kernels' target ids (layout.py).
"""
from __future__ import annotations

from dataclasses import dataclass

KINDS = ("always", "eventually", "sometimes")
# How a needed feature reads in the tables ("with `--snapshots`: ...").
FEATURE_TEXT = {"pre_vote": "pre-vote on", "snapshots": "`--snapshots`",
                "reconfig": "`--reconfig`", "disk_loss": "`--disk-loss`"}


@dataclass(frozen=True)
class Property:
    name: str
    kind: str             # one of KINDS
    meaning: str          # one line, for reports, replays and the README's tables
    needs: tuple = ()     # the run options (FEATURE_TEXT) it is checked or reachable under


def _always(name: str, meaning: str, needs: tuple = ()) -> Property:
    return Property(name, "always", meaning, needs)


def _eventually(name: str, meaning: str, needs: tuple = ()) -> Property:
    return Property(name, "eventually", meaning, needs)


def _sometimes(name: str, meaning: str, needs: tuple = ()) -> Property:
    return Property(name, "sometimes", meaning, needs)


_SNAP, _RECONFIG, _DISK = ("snapshots",), ("reconfig",), ("disk_loss",)

PROPERTIES: tuple[Property, ...] = (
    _always("ElectionSafety", "at most one leader per epoch, over the whole history"),
    _always("VoteUniqueness", "a voter grants at most one vote per epoch (history too)"),
    _always("LeaderAppendOnly",
            "while leading an epoch, a node's log only grows (even across a crash)"),
    _always("EpochMonotonic", "a node's epoch never decreases"),
    _always("LogMatching",
            "same epoch at an offset in two logs => identical prefixes up to it"),
    _always("LeaderCompleteness",
            "every entry committed in an earlier epoch is in every later leader's log"),
    _always("StateMachineSafety",
            "a voter's log below its HW is a prefix of the committed log, which is kept as "
            "a ghost so later losses are caught"),
    _always("HighWatermarkValid", "HW <= log end"),
    _always("HighWatermarkMonotonic",
            "the HW of the highest-epoch leader never decreases (Kafka's "
            "MonotonicHighWatermark)"),
    _always("MajorityReachedHighWatermark",
            "a majority of voters hold every entry below a leader's HW"),
    _always("CommitCurrentEpoch", "a leader's HW covers an entry of its own epoch"),
    _always("ObserverConsistency",
            "an observer's log below its HW is a prefix of the committed log"),
    _always("SnapshotMonotonic",
            "a node's latest snapshot never moves back, crashes included",
            _SNAP),
    _always("SnapshotConsistent",
            "a snapshot ending at N is the committed log up to N, epoch included", _SNAP),
    _always("SnapshotAtLogStart", "a running node's log starts at a snapshot it holds", _SNAP),
    _always("LeaderNeverLoadsSnapshot",
            "only a follower installs a snapshot downloaded from the leader", _SNAP),
    _always("AtMostOneUncommittedVoterSet",
            "past the committed log, a node's log holds at most one VotersRecord", _RECONFIG),
    _always("QuorumOverlap",
            "the voter set that elects a leader, and the one that commits an entry, have "
            "majorities that meet those of the set that committed the entry before",
            _RECONFIG),
    _always("CandidateIsVoter",
            "a running node is Prospective or Candidate only while its own voter set holds "
            "it (Kafka's QuorumState refuses the transition otherwise)"),
    _always("LogEpochsMonotonic",
            "the epochs along a log never go down (Kafka's leader-epoch cache refuses an "
            "epoch below its latest), seen in the log that breaks it, whoever else holds "
            "what it replaced"),

    _eventually("HealedClusterRecovers",
                "once every fault has healed, a leader known to a majority of voters and a "
                "new commit come within `liveness_bound_ms` (TigerBeetle's VOPR liveness "
                "mode)"),
    _eventually("CutOffLeaderResigns",
                "a leader that no majority of voters can reach, at once or one after "
                "another since it was cut off, stops leading within check quorum (1.5 x "
                "fetch timeout) plus `cut_off_slack_ms` of the cut, or of the one restart "
                "of its timer that fetches from before the cut can still make"),
    _eventually("PreVoteIsolatedNeverCandidate",
                "a voter that has not had two-way links with a majority since it became "
                "Prospective never becomes Candidate (KIP-996's promise)", ("pre_vote",)),
    _eventually("HealthyLeaderKept",
                "while no fault has happened, a follower of a leader known to every voter "
                "never times out (no loss, latencies far below the timeouts)"),
    _eventually("ReplicasCatchUp",
                "once every fault has healed, every live replica, observers included, "
                "learns of a commit made after the heal (its high watermark passes it) "
                "within `liveness_bound_ms`"),
    _eventually("RemovedVoterStaysQuiet",
                "in the scenarios that change the voter set (`voter-removed`, "
                "`leader-removed`, `voter-removed-while-down`): a node outside a voter's committed voter set (a "
                "removed voter) never raises that voter's epoch with a vote request; it "
                "learns it was removed before it disrupts anyone"),

    _sometimes("LeaderElected", "a node becomes leader"),
    _sometimes("EntryCommitted",
               "the committed log grows (a high watermark passes a new entry)"),
    _sometimes("FollowerTruncated", "a follower truncates its log on a diverging epoch"),
    _sometimes("CheckQuorumResigned", "a leader resigns for lack of fetches from a majority"),
    _sometimes("GracefulHandover", "a voter handles a resigned leader's EndQuorumEpoch"),
    _sometimes("PreVoteRefused", "a voter refuses a pre-vote"),
    _sometimes("Disruption", "a leader is deposed by a vote request of a higher epoch"),
    _sometimes("UnflushedTailLost", "a crash loses a node's unflushed log tail"),
    _sometimes("ElectedWithCommittedOnMinority",
               "a leader is elected while the last committed entry is on fewer running "
               "voters than a majority"),
    _sometimes("EpochBoundHit", "an election would pass `--max-epoch`"),
    _sometimes("LogCapacityHit", "an append finds a full log"),
    _sometimes("SnapshotLoaded",
               "a follower installs a snapshot downloaded from the leader", _SNAP),
    _sometimes("RestartedFromSnapshot",
               "a restart finds its log behind its snapshot and starts the log there", _SNAP),
    _sometimes("VoterAdded", "a leader appends a VotersRecord adding a voter", _RECONFIG),
    _sometimes("VoterRemoved", "a leader appends a VotersRecord removing a voter", _RECONFIG),
    _sometimes("RemovedLeaderResigned",
               "a leader resigns once its own removal is committed", _RECONFIG),
    _sometimes("DiskLost", "a node loses its disk and starts empty", _DISK),
    _sometimes("WipedVoterReadded",
               "a leader adds a voter back under the directory id a disk loss gave it",
               ("disk_loss", "reconfig")),
)


def of_kind(kind: str) -> tuple[Property, ...]:
    return tuple(p for p in PROPERTIES if p.kind == kind)


INVARIANT_NAMES: tuple[str, ...] = tuple(p.name for p in of_kind("always"))
LIVENESS_NAMES: tuple[str, ...] = tuple(p.name for p in of_kind("eventually"))
TARGET_NAMES: tuple[str, ...] = tuple(p.name for p in of_kind("sometimes"))
# The kernels' ids: invariants from 0, liveness properties after them (one id space,
# the bits of the check mask), targets from 0 in their own space.
INVARIANT_ID: dict[str, int] = {n: k for k, n in enumerate(INVARIANT_NAMES)}
LIVENESS_ID: dict[str, int] = {n: len(INVARIANT_NAMES) + k for k, n in enumerate(LIVENESS_NAMES)}
TARGET_ID: dict[str, int] = {n: k for k, n in enumerate(TARGET_NAMES)}
MEANING: dict[str, str] = {p.name: p.meaning for p in PROPERTIES}

# The README's tables of each kind: (heading of the name column, of the meaning column).
_COLUMNS = {"always": ("invariant", "meaning"), "eventually": ("property", "meaning"),
            "sometimes": ("target", "reached when")}


def markdown_table(kind: str) -> str:
    """The properties of ``kind`` as the README shows them."""
    name, meaning = _COLUMNS[kind]
    rows = [f"| {name} | {meaning} |", "|---|---|"]
    for p in of_kind(kind):
        needs = " ".join(FEATURE_TEXT[f] for f in p.needs)
        rows.append(f"| {p.name} | {f'with {needs}: ' if needs else ''}{p.meaning} |")
    return "\n".join(rows)
