"""The state of a simulated cluster: nodes, messages, counters.

A node's fields fall in three groups, as in Kafka:

* persistent -- the quorum-state file (epoch, vote, leader id) and the flushed
  prefix of the log survive a crash;
* the log itself, a list of ``(epoch, value)`` entries (``value > 0`` a client
  record, ``< 0`` a control record: LeaderChange, or a VotersRecord that
  ``voters.py`` reads the node's voter set from), of which only
  ``log[:flushed_end]`` survives a crash;
* volatile -- everything that belongs to the current ``EpochState`` object
  (the tally of a nominee, a leader's view of its replicas, ...). Every role
  transition starts these afresh, as Kafka builds a new state object.
"""
from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from typing import Optional

from kraftwalk.vocabulary import messages
from kraftwalk.kernels.state.layout import UNATTACHED

Entry = tuple  # (epoch, value)


def _canonical(self) -> tuple:
    """The meaningful fields of its type, as one comparable tuple."""
    return messages.canonical(self)


Message = make_dataclass(
    "Message",
    [(name, int) for name in messages.HEADER] + messages.reference_attributes(),
    frozen=True,
    namespace={
        "__doc__": "One in-flight request or response: the header, then every payload "
                   "attribute of the message table (kraftwalk/vocabulary/messages.py) with its default; "
                   "only the fields of its type matter.",
        "__module__": __name__,
        "canonical": _canonical,
    },
)


@dataclass(eq=False)
class Node:
    id: int
    up: bool = True
    role: int = UNATTACHED

    # ---- persistent: the disk's directory id (KIP-853: the replica key is (id, dir)) ----
    dir: int = 0                       # 0 as formatted; a replaced disk gets the next one

    # ---- persistent: the quorum-state file ------------------------------------------
    epoch: int = 0
    voted_id: Optional[int] = None     # vote cast in `epoch` ...
    voted_dir: int = 0                 # ... for the key (voted_id, voted_dir)
    leader_id: Optional[int] = None    # leader known in `epoch`

    # ---- the log (only log[:flushed_end] survives a crash) --------------------------
    log: list = field(default_factory=list)
    flushed_end: int = 0

    # ---- persistent: snapshots (KIP-630; see snapshots.py) ---------------------------
    log_start: int = 0                 # the log starts at the earliest snapshot's end
    start_epoch: int = 0               # that snapshot's epoch
    latest: tuple = (0, 0)             # (end, epoch) of the latest snapshot, (0, 0) none
    first_snapshot_epoch: int = 0      # while the log starts at 0: the epoch of the first
                                       # snapshot taken, which Kafka keeps (0 none)
    snapshots: dict = field(default_factory=dict)   # id -> content of the ones it holds

    # ---- volatile: the current EpochState --------------------------------------------
    hw: Optional[int] = None           # high watermark, None while unknown
    leader_endpoints_known: bool = False   # Kafka's state.leaderEndpoints() is non-empty
    granted: set = field(default_factory=set)       # nominee: voters that granted (self too)
    rejected: set = field(default_factory=set)      # nominee: voters that rejected
    has_fetched: bool = False          # follower: a fetch from the leader succeeded
    preferred: bool = False            # follower: named a preferred successor by EndQuorumEpoch
    successors: tuple = ()             # resigned: the preferred successors it names, by
                                       # descending fetch offset, then node id
    acked: set = field(default_factory=set)           # leader: acked BeginQuorumEpoch or fetched;
                                                      # resigned: acked EndQuorumEpoch
    fetched_voters: set = field(default_factory=set)  # leader: voters heard since the
                                                      # check-quorum timer restarted
    replica_end: dict = field(default_factory=dict)   # leader: each replica's fetch offset
    replica_dir: dict = field(default_factory=dict)   # leader: the directory id it fetched
                                                      # that offset with
    epoch_start: int = 0   # leader: offset of its LeaderChange record (kept after it steps
                           # down: the restarted-leader mutation reads it)
    inflight: dict = field(default_factory=dict)      # dst -> correlation id of the one
                                                      # outstanding request to dst
    fetching: Optional[tuple] = None   # follower: the snapshot id it is downloading

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
        self.successors = ()
        self.acked = set()
        self.fetched_voters = set()
        self.replica_end = {}
        self.replica_dir = {}
        self.leader_endpoints_known = False
        self.fetching = None
