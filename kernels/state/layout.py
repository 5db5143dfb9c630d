"""The packed state of one walk: the one place the layout is defined.

A walk is one simulated KRaft cluster. Its whole state lives in eight
fixed-size NumPy arrays, bundled in a :class:`Walk` namedtuple. Fields are rows
of those arrays, named by the constants below: ``w.node[EPOCH, i]`` is node i's
epoch, ``w.log[ENTRY_EPOCH, i, k]`` the epoch of its entry at offset k. Kernels
receive the walk by reference (:mod:`.bundle`): one pointer per call, whatever
the number of arrays. Few arrays still make it the struct-of-arrays shape a GPU
kernel would index. Nothing is allocated while
a walk runs; a worker allocates one ``Walk`` and resets it for every walk.

Node ids: the bootstrap voters are ``0 .. V-1``, observers ``V .. V+O-1`` (N = V + O).
Who votes in a node's view is read only through ``kernels/state/voters.py``.
Offsets are 0-based; a log holds entries ``[0, log_end)``.

node    int32 [NODE_FIELDS, N]                         per-node fields
  ROLE          UNATTACHED / PROSPECTIVE / CANDIDATE / FOLLOWER / LEADER / RESIGNED
  UP            1 while running, 0 while crashed
  EPOCH         current epoch                                    (persistent)
  VOTED_ID      vote cast in EPOCH, -1 none                      (persistent)
  LEADER_ID     known leader in EPOCH, -1 none (persistent, as in Kafka's
                quorum-state file)
  LOG_END       log end offset
  FLUSHED_END   end of the flushed prefix of the log             (persistent)
  HW            high watermark, -1 unknown (a new leader has none until an
                entry of its epoch is on a majority)
  GRANTED       bitmask of voters that granted this nominee's (pre-)vote
  REJECTED      bitmask of voters that rejected it
  HAS_FETCHED   follower: fetched successfully from its leader in this epoch
  EPOCH_START   leader: offset of its LeaderChange record (epochStartOffset)
  FETCHED_MASK  leader: voters heard from since the check-quorum timer restarted
  ACKED_MASK    leader: voters that acknowledged BeginQuorumEpoch or fetched (Kafka's
                hasAcknowledgedLeader; the heartbeat goes to them all the same);
                resigned: voters that acknowledged EndQuorumEpoch
  PREFERRED     resigned: preferred successors (bitmask); follower: 1 if named one
  LINKS         bit j set: messages from this node to j get through
  DIRTY_FROM    lowest log offset written by the current step (CAP if none)
  GN_PREV_*     ghost: epoch, leader epoch (-1 none) and log end after the
                previous step, for the monotonicity and append-only checks
  INTENT        timer intents (I_* bits) the handlers record for the timed chooser
                (kernels.timed), which reads and clears them; the untimed one ignores them
  INTENT_ARG    argument of an intent: EndQuorumEpoch's place << 8 | the successor
                list's length (follower), the replica whose Fetch it took (leader)
  LOG_START     log start offset: the end of the earliest snapshot kept, 0 none (persistent)
  START_EPOCH   that snapshot's epoch (of the last entry it covers), 0 none (persistent)
  SNAP_END      end offset of the latest snapshot, 0 none (persistent; KIP-630)
  SNAP_EPOCH    its epoch, 0 none (persistent)
  FIRST_SNAP_EPOCH  while the log starts at 0: the epoch of the earliest snapshot kept (the
                first one taken), 0 none (persistent; validateOffsetAndEpoch reads it)
  FETCHING_END  follower: end offset of the snapshot it is fetching (FetchSnapshot), 0 none
  FETCHING_EPOCH  that snapshot's epoch
  GN_PREV_SNAP_END  ghost: SNAP_END after the previous step (SnapshotMonotonic)
  GN_LOADED     ghost: role + 1 of the node when it last loaded a snapshot in the current
                step, 0 none (LeaderNeverLoadsSnapshot); cleared by its checks
  VOTERS        the node's voter set (bitmask; kernels/state/voters.py reads it): the latest
                VotersRecord in its log, committed or not, else the bootstrap voters
  VOTERS_AT     offset of that VotersRecord, -1 the bootstrap voters
  VOTER_COUNT   popcount of VOTERS (kept with it: majorities are counted on hot paths)
  GN_HW_VOTERS  ghost, leader with voter changes on: its voter set when its HW last moved
                up (MajorityReachedHighWatermark counts holders in it)
  DIR           the node's directory id (KIP-853 replica key = (id, DIR)): 0 as formatted,
                + 1 for each disk loss, at most MAX_DIR                  (persistent)
  VOTER_DIRS    the directory id of each voter in the node's view, DIR_BITS bits per node
                id (voter j's at bits DIR_BITS * j)
  SELF_VOTER    1 if the node's own key (id, DIR) is in its voter set (is_voter reads it)
  VOTED_DIR     directory id of the candidate VOTED_ID names                (persistent)
  Entries below SNAP_END are the snapshots' content (the model's state machine is the
  log prefix): they stay in ``log`` and ``hashes`` and are never truncated, and only
  offsets from LOG_START on are the log proper (what Fetch serves).

peer    int32 [3, N, N]
  INFLIGHT      [i, j] correlation id of i's outstanding request to j (0 none):
                a response is handled only if it answers that request, as with
                Kafka's RequestManager; role changes reset connections
  REPLICA_END   [i, j] leader i's view of j's log end (j's fetch offset), -1 unknown
  REPLICA_DIR   [i, j] the directory id j fetched with when REPLICA_END was set: the
                replica state is a voter's only if it matches i's view of j (DISK_LOSS)

log     int32 [2, N, CAP]
  ENTRY_EPOCH   epoch of each entry
  ENTRY_VALUE   unique id of each entry: > 0 client record, < 0 a control record:
                LeaderChange, or (with VOTERS_TAG set in -value) a VotersRecord whose
                voter set is bits VOTERS_SHIFT.. of -value and the directory id of the
                voter it adds bits ADDED_DIR_SHIFT.. (KIP-853; voters_record_value)

hashes  uint64 [2 + N, max(CAP, N)]
  COMMIT_HASH   ghost committed log: prefix hash at each offset
  PREV_HASH     [i] ghost: prefix hash of node i's log after the previous step
  LOG_HASH + i  node i's prefix hash at each offset (hash of entries [0, k]):
                checkers compare whole prefixes in O(1)

msgs    int32 [M + 1, MSG_WIDTH + 2 R + 2]   the network: a bag of in-flight messages
        in rows [0, n_msgs), columns F_* per message type as the table in messages.py
        says (a header, then each type's fields); R = records per FetchResponse
        (or, with snapshots on, per FetchSnapshotResponse if that is more);
        the last row is scratch for the message being handled. The last two
        columns belong to the timed chooser: the delivery time (0 not yet drawn,
        negative: lost at that time) and 1 once a Fetch has been parked

ghost   int32 [GHOST_ROWS + N, max(MAX_EPOCH + 2, CAP)]   history for the checkers
  G_LEADER      [e] leader elected in epoch e, -1 none
  G_REACH       [e] 1 + highest offset committed in an epoch <= e: every leader of
                a later epoch must hold [0, G_REACH[e])
  CM_EPOCH, CM_VALUE, CM_BY   the committed log as first established: entry
                epoch, entry value, epoch of the node whose HW first covered it
  G_VOTE + i    [e] the candidate voter i granted its vote to in epoch e, -1 none

scal    int64 [SCAL_WIDTH]   scalars, in sections: parameters (P_*), statistics
        (S_*, STAT_NAMES order), the first violation (V_*), id counters (C_*),
        ghost scalars (G_*), N_MSGS, RNG (the walk's stream state, stored
        as int64 bits), and coverage: REACHED targets (T_*) with their first
        steps, steps per action family, deliveries per message type

weights float64 [2, N_FAMILIES]   WEIGHT and CUM_WEIGHT of each action family
"""


import numpy as np

from kraftwalk.vocabulary.properties import TARGET_ID, TARGET_NAMES

from ..jit import bundle

# ---- node roles (Kafka's EpochState implementations) -----------------------
UNATTACHED = 0
PROSPECTIVE = 1
CANDIDATE = 2
FOLLOWER = 3
LEADER = 4
RESIGNED = 5
ROLE_NAMES = ("Unattached", "Prospective", "Candidate", "Follower", "Leader", "Resigned")

# ---- message types and row columns ------------------------------------------------
# Type ids (VOTE_REQUEST .. FETCH_RESPONSE, MSG_NONE = 0), MSG_NAMES, the row columns
# F_TYPE .. F_RECORDS and MSG_WIDTH are derived from the message table in messages.py
# and re-exported here as plain ints.
from kraftwalk.vocabulary.messages import *  # noqa: E402,F401,F403

# ---- error codes carried in responses --------------------------------------
ERR_NONE = 0
ERR_FENCED_LEADER_EPOCH = 1
ERR_NOT_LEADER_OR_FOLLOWER = 2
ERR_UNKNOWN_LEADER_EPOCH = 3
ERR_SNAPSHOT_NOT_FOUND = 4
ERR_INVALID_VOTER_KEY = 5  # a Vote/BeginQuorumEpoch request named another directory id
ERROR_NAMES = ("NONE", "FENCED_LEADER_EPOCH", "NOT_LEADER_OR_FOLLOWER", "UNKNOWN_LEADER_EPOCH",
               "SNAPSHOT_NOT_FOUND", "INVALID_VOTER_KEY")

# ---- node fields (rows of node) -------------------------------------------------
ROLE = 0
UP = 1
EPOCH = 2
VOTED_ID = 3
LEADER_ID = 4
LOG_END = 5
FLUSHED_END = 6
HW = 7
GRANTED = 8
REJECTED = 9
HAS_FETCHED = 10
EPOCH_START = 11
FETCHED_MASK = 12
ACKED_MASK = 13
PREFERRED = 14
LINKS = 15
DIRTY_FROM = 16
GN_PREV_EPOCH = 17
GN_PREV_LEADER_EPOCH = 18
GN_PREV_LOG_END = 19
INTENT = 20
INTENT_ARG = 21
LOG_START = 22
START_EPOCH = 23
SNAP_END = 24
SNAP_EPOCH = 25
FETCHING_END = 26
FETCHING_EPOCH = 27
GN_PREV_SNAP_END = 28
GN_LOADED = 29
VOTERS = 30
VOTERS_AT = 31
VOTER_COUNT = 32
GN_HW_VOTERS = 33
DIR = 34
VOTER_DIRS = 35
SELF_VOTER = 36
VOTED_DIR = 37
FIRST_SNAP_EPOCH = 38
NODE_FIELDS = 39

# ---- timer intents (bits of INTENT) ---------------------------------------------------
I_ROLE = 1            # entered a role (or crashed / restarted): start its timers afresh
I_FETCH_RESET = 2     # a successful FetchResponse: restart the follower's fetch timer
I_BACKOFF = 4         # the candidate's vote was rejected: back off before retrying
I_CHECK_QUORUM = 8    # a majority fetched: restart the leader's check-quorum timer
I_END_EPOCH = 16      # EndQuorumEpoch from the leader: override the fetch timer
I_KEEP_TIMER = 32     # Unattached keeping the election time left of the role it left
I_FETCHED = 64        # leader: a valid Fetch from replica INTENT_ARG (lastFetchTimestamp)
I_ELECTION_RESET = 128  # a granted vote: a fresh election timer, the connections kept

# ---- peer, log, hashes and ghost rows ---------------------------------------------
INFLIGHT = 0
REPLICA_END = 1
REPLICA_DIR = 2
PEER_ROWS = 3
ENTRY_EPOCH = 0
ENTRY_VALUE = 1
COMMIT_HASH = 0
PREV_HASH = 1
LOG_HASH = 2
G_LEADER = 0
G_REACH = 1
CM_EPOCH = 2
CM_VALUE = 3
CM_BY = 4
G_VOTE = 5
GHOST_ROWS = 5
WEIGHT = 0
CUM_WEIGHT = 1

# ---- scal: parameters ---------------------------------------------------------------
P_VOTERS = 0             # bootstrap voters (read through kernels/state/voters.py)
P_OBSERVERS = 1
P_NODES = 2
P_LOG_CAP = 3
P_MSG_SLOTS = 4
P_MAX_EPOCH = 5
P_MAX_RECORDS = 6        # records per FetchResponse
P_DEPTH = 7              # checked steps per walk
                         # 8: free (was the bootstrap majority; majorities are per node now)
P_SNAPSHOT_RECORDS = 9   # entries a FetchSnapshotResponse can carry (the log capacity when
                         # snapshots are on, else 0): widens the message rows' tail
P_WIDTH = 10

# ---- scal: walk statistics (STATS_BASE + STAT_NAMES order) ---------------------------
STATS_BASE = 16
S_STEPS = 16             # checked steps (applied actions)
S_DISABLED = 17          # attempts at disabled actions (not steps)
S_ELECTIONS = 18         # transitions to Candidate
S_PRE_ELECTIONS = 19     # transitions to Prospective
S_LEADER_CHANGES = 20    # transitions to Leader
S_COMMITTED = 21         # length of the committed log at the end
S_MSGS_SENT = 22
S_MSGS_DROPPED_FULL = 23 # sends dropped because the network was full
S_MSGS_LOST = 24         # lost by a fault action, a cut link or a crashed receiver
S_MSGS_DUPLICATED = 25
S_CRASHES = 26
S_MAX_EPOCH = 27
S_BOUND_HIT = 28         # which bound ended the walk (BOUND_*), 0 none
S_CLIENT_APPENDS = 29
S_RESIGNATIONS = 30      # check-quorum and graceful resignations
S_TRUNCATIONS = 31       # follower truncations on a diverging epoch
S_LOG_FULL = 32          # appends refused because the log was full
S_DISRUPTIONS = 33       # leaders deposed by a vote request of a higher epoch
S_SNAPSHOTS = 34         # snapshots taken (createNewSnapshot)
S_SNAPSHOTS_LOADED = 35  # snapshots downloaded from the leader and installed
S_VOTER_CHANGES = 36     # VotersRecords appended by a leader (AddVoter, RemoveVoter)
S_DISK_LOSSES = 37       # nodes that lost their disk and started empty
S_WIDTH = 22
STAT_NAMES = (
    "steps", "disabled_attempts", "elections", "pre_elections", "leader_changes",
    "committed", "msgs_sent", "msgs_dropped_full", "msgs_lost", "msgs_duplicated",
    "crashes", "max_epoch", "bound_hit", "client_appends", "resignations",
    "truncations", "log_full", "disruptions", "snapshots", "snapshots_loaded",
    "voter_changes", "disk_losses",
)

BOUND_NONE = 0
BOUND_EPOCH = 1          # an election would pass max_epoch: the walk ends
BOUND_LOG = 2            # a new leader could not append its LeaderChange record
BOUND_STUCK = 3          # no action was enabled
BOUND_NAMES = ("none", "max_epoch", "log_capacity", "stuck")

# ---- scal: the first violation ----------------------------------------------------------
VIOL_BASE = 40
V_INVARIANT = 40         # invariant id + 1 (0 = none)
V_STEP = 41
V_NODE_A = 42
V_NODE_B = 43
V_EPOCH = 44
V_OFFSET = 45
V_WIDTH = 6
VIOL_NAMES = ("invariant", "step", "node_a", "node_b", "epoch", "offset")

# ---- scal: id counters, ghost scalars, network, random stream ----------------------------
C_NEXT_VALUE = 48        # last entry value handed out
C_NEXT_CORR = 49         # last correlation id handed out
G_COMMIT_LEN = 52        # length of the ghost committed log
G_LEADER_HW = 53         # last HW seen on the highest-epoch leader, -1 none
G_LEADER_HW_EPOCH = 54   # that leader's epoch
G_COMMIT_VOTERS = 55     # voter set (in the leader's view) that last grew the committed
                         # log, 0 none yet (QuorumOverlap)
N_MSGS = 56              # messages in flight
RNG = 57                 # random stream state

# ---- scal: coverage (what the walk reached; "sometimes" properties) ---------------------
REACHED = 64             # bit t set: the walk reached target t (T_* below)
REACH_STEP = 65          # [t] 1-based step at which it first did (its witness)
FAMILY_COUNT = 84        # [f] steps of action family f (transition.FAMILY_NAMES order)
DELIVERED = 102          # [m] messages of type m delivered to a live node (MSG_NAMES order)
SCAL_WIDTH = 120
if DELIVERED + len(MSG_NAMES) > SCAL_WIDTH:  # a new message type needs its delivery counter
    raise ValueError("scal: the delivery counters of the message types pass SCAL_WIDTH")

# Reachability targets: a run that finds no violation is worth what it reached.
# (kraftwalk.vocabulary.properties declares them, with their meanings, in id order)
T_LEADER_ELECTED = TARGET_ID["LeaderElected"]
T_ENTRY_COMMITTED = TARGET_ID["EntryCommitted"]
T_FOLLOWER_TRUNCATED = TARGET_ID["FollowerTruncated"]
T_CHECK_QUORUM_RESIGNED = TARGET_ID["CheckQuorumResigned"]
T_GRACEFUL_HANDOVER = TARGET_ID["GracefulHandover"]
T_PRE_VOTE_REFUSED = TARGET_ID["PreVoteRefused"]
T_DISRUPTION = TARGET_ID["Disruption"]
T_UNFLUSHED_TAIL_LOST = TARGET_ID["UnflushedTailLost"]
T_ELECTED_COMMITTED_ON_MINORITY = TARGET_ID["ElectedWithCommittedOnMinority"]
T_EPOCH_BOUND_HIT = TARGET_ID["EpochBoundHit"]
T_LOG_CAPACITY_HIT = TARGET_ID["LogCapacityHit"]
T_SNAPSHOT_LOADED = TARGET_ID["SnapshotLoaded"]
T_RESTARTED_FROM_SNAPSHOT = TARGET_ID["RestartedFromSnapshot"]
T_VOTER_ADDED = TARGET_ID["VoterAdded"]
T_VOTER_REMOVED = TARGET_ID["VoterRemoved"]
T_REMOVED_LEADER_RESIGNED = TARGET_ID["RemovedLeaderResigned"]
T_DISK_LOST = TARGET_ID["DiskLost"]
T_WIPED_VOTER_READDED = TARGET_ID["WipedVoterReadded"]
N_TARGETS = len(TARGET_NAMES)
MAX_FAMILIES = 17  # room for the action families' step counters
if REACH_STEP + N_TARGETS > FAMILY_COUNT or FAMILY_COUNT + MAX_FAMILIES > DELIVERED:
    raise ValueError("scal: the coverage sections overlap")

# ---- VotersRecord values (KIP-853) ---------------------------------------------------
# A VotersRecord's value is -(VOTERS_TAG | voter set << VOTERS_SHIFT
# | added voter's directory id << ADDED_DIR_SHIFT | serial & SERIAL_MASK): a control record
# (negative) carrying its voter set, unique per (epoch, offset) in practice (the serial is
# the record counter). Each record is one change from the previous one in the same log
# (Log Matching: the leader that wrote it held that prefix), so the directory id of the
# voter it adds is all it needs to carry; the others' come from the records before it.
# Nodes number at most 13 (9 + 4).
VOTERS_TAG = 1 << 30
VOTERS_SHIFT = 16
ADDED_DIR_SHIFT = 14
SERIAL_MASK = (1 << ADDED_DIR_SHIFT) - 1
VOTERS_MASK = (1 << 14) - 1
DIR_BITS = 2
MAX_DIR = (1 << DIR_BITS) - 1   # three disk losses per node and walk

Walk = bundle("Walk", ["node", "peer", "log", "hashes", "msgs", "ghost", "scal", "weights"], __name__)


def make_params(voters, observers, log_capacity, msg_slots, max_epoch, max_records, depth,
                snapshots=False):
    p = np.zeros(P_WIDTH, dtype=np.int64)
    p[P_VOTERS] = voters
    p[P_OBSERVERS] = observers
    p[P_NODES] = voters + observers
    p[P_LOG_CAP] = log_capacity
    p[P_MSG_SLOTS] = msg_slots
    p[P_MAX_EPOCH] = max_epoch
    p[P_MAX_RECORDS] = max_records
    p[P_DEPTH] = depth
    p[P_SNAPSHOT_RECORDS] = log_capacity if snapshots else 0
    return p


def alloc_walk(params, n_families):
    """Allocate one walk's arrays for the sizes in ``params`` (once per worker)."""
    n = int(params[P_NODES])
    cap = int(params[P_LOG_CAP])
    m = int(params[P_MSG_SLOTS])
    e = int(params[P_MAX_EPOCH]) + 2
    width = MSG_WIDTH + 2 * max(int(params[P_MAX_RECORDS]), int(params[P_SNAPSHOT_RECORDS]))
    scal = np.zeros(SCAL_WIDTH, dtype=np.int64)
    scal[:P_WIDTH] = params[:P_WIDTH]
    return Walk(
        node=np.zeros((NODE_FIELDS, n), dtype=np.int32),
        peer=np.zeros((PEER_ROWS, n, n), dtype=np.int32),
        log=np.zeros((2, n, cap), dtype=np.int32),
        hashes=np.zeros((LOG_HASH + n, max(cap, n)), dtype=np.uint64),
        msgs=np.zeros((m + 1, width + 2), dtype=np.int32),
        ghost=np.zeros((GHOST_ROWS + n, max(e, cap)), dtype=np.int32),
        scal=scal,
        weights=np.zeros((2, n_families), dtype=np.float64),
    )


def state_bytes(walk):
    """Bytes of state one walk occupies (all arrays of a Walk)."""
    return int(sum(a.nbytes for a in walk))
