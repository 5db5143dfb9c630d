"""The state of a simulated cluster: nodes, messages, counters.

A node's fields fall in three groups, as in Kafka:

* persistent -- the quorum-state file (epoch, vote, leader id) and the flushed
  prefix of the log survive a crash;
* the log itself, a list of ``(epoch, value)`` entries (``value > 0`` a client
  record, ``< 0`` a LeaderChange control record), of which only
  ``log[:flushed_end]`` survives a crash;
* volatile -- everything that belongs to the current ``EpochState`` object
  (the tally of a nominee, a leader's view of its replicas, ...). Every role
  transition starts these afresh, as Kafka builds a new state object.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from kraftwalk.kernels.layout import (
    BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, END_QUORUM_EPOCH_REQUEST,
    END_QUORUM_EPOCH_RESPONSE, ERR_NONE, FETCH_REQUEST, FETCH_RESPONSE, UNATTACHED,
    VOTE_REQUEST, VOTE_RESPONSE,
)

Entry = tuple  # (epoch, value)


@dataclass(frozen=True)
class Message:
    """One in-flight request or response. Only the fields of its type matter."""

    type: int
    src: int
    dst: int
    epoch: int             # a request's epoch; a response's: the responder's epoch
    corr: int              # correlation id of the request (echoed by its response)
    # every response
    error: int = ERR_NONE
    leader: int = -1       # responder's known leader in `epoch`, -1 none
    # VoteRequest / VoteResponse
    last_epoch: int = 0
    last_offset: int = 0
    pre_vote: bool = False
    granted: bool = False
    # BeginQuorumEpoch / EndQuorumEpoch requests
    req_leader: int = -1
    successors: frozenset = frozenset()
    # FetchRequest
    fetch_offset: int = 0
    last_fetched_epoch: int = 0
    # FetchResponse
    hw: int = -1                              # leader's HW, -1 unknown
    diverging: Optional[tuple] = None         # (epoch, end offset) to truncate to
    base_offset: int = 0
    records: tuple = ()                       # ((epoch, value), ...)

    def canonical(self) -> tuple:
        """The meaningful fields, as one comparable tuple."""
        head = (self.type, self.src, self.dst, self.epoch, self.corr)
        t = self.type
        if t == VOTE_REQUEST:
            return head + (self.last_epoch, self.last_offset, bool(self.pre_vote))
        if t == VOTE_RESPONSE:
            return head + (self.error, self.leader, bool(self.pre_vote), bool(self.granted))
        if t == BEGIN_QUORUM_EPOCH_REQUEST:
            return head + (self.req_leader,)
        if t == END_QUORUM_EPOCH_REQUEST:
            return head + (self.req_leader, tuple(sorted(self.successors)))
        if t in (BEGIN_QUORUM_EPOCH_RESPONSE, END_QUORUM_EPOCH_RESPONSE):
            return head + (self.error, self.leader)
        if t == FETCH_REQUEST:
            return head + (self.fetch_offset, self.last_fetched_epoch)
        if t == FETCH_RESPONSE:
            base = self.base_offset if self.records else None
            return head + (self.error, self.leader, self.hw, self.diverging, base,
                           tuple(self.records))
        raise ValueError(f"unknown message type {t}")


@dataclass(eq=False)
class Node:
    id: int
    up: bool = True
    role: int = UNATTACHED

    # ---- persistent: the quorum-state file ------------------------------------------
    epoch: int = 0
    voted_id: Optional[int] = None     # vote cast in `epoch`
    leader_id: Optional[int] = None    # leader known in `epoch`

    # ---- the log (only log[:flushed_end] survives a crash) --------------------------
    log: list = field(default_factory=list)
    flushed_end: int = 0

    # ---- volatile: the current EpochState --------------------------------------------
    hw: Optional[int] = None           # high watermark, None while unknown
    leader_endpoints_known: bool = False   # Kafka's state.leaderEndpoints() is non-empty
    granted: set = field(default_factory=set)       # nominee: voters that granted (self too)
    rejected: set = field(default_factory=set)      # nominee: voters that rejected
    has_fetched: bool = False          # follower: a fetch from the leader succeeded
    preferred: bool = False            # follower: named a preferred successor by EndQuorumEpoch
    successors: frozenset = frozenset()  # resigned: the preferred successors it names
    acked: set = field(default_factory=set)           # leader: acked BeginQuorumEpoch or fetched;
                                                      # resigned: acked EndQuorumEpoch
    fetched_voters: set = field(default_factory=set)  # leader: voters heard since the
                                                      # check-quorum timer restarted
    replica_end: dict = field(default_factory=dict)   # leader: each replica's fetch offset
    epoch_start: int = 0   # leader: offset of its LeaderChange record (kept after it steps
                           # down: the restarted-leader mutation reads it)
    inflight: dict = field(default_factory=dict)      # dst -> correlation id of the one
                                                      # outstanding request to dst

    # ---- the network links out of this node (a fault-injection knob) ----------------
    links: set = field(default_factory=set)          # destinations its messages reach

    @property
    def log_end(self) -> int:
        return len(self.log)

    def reset_connections(self) -> None:
        """Kafka's requestManager.resetAll(): responses to earlier requests are dropped."""
        self.inflight.clear()

    def fresh_epoch_state(self) -> None:
        """Start the volatile per-role state afresh (a new Kafka EpochState object)."""
        self.granted = set()
        self.rejected = set()
        self.has_fetched = False
        self.preferred = False
        self.successors = frozenset()
        self.acked = set()
        self.fetched_voters = set()
        self.replica_end = {}
        self.leader_endpoints_known = False
