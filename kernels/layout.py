"""The packed state of one walk: the one place the layout is defined.

A walk is one simulated KRaft cluster. Its whole state lives in the fixed-size
NumPy arrays of a :class:`Walk` (a namedtuple, so Numba passes it by value and
indexes fields at compile time). Nothing is allocated while a walk runs; a
worker allocates one ``Walk`` and resets it for each walk it simulates.

Node ids: voters are ``0 .. V-1``, observers ``V .. V+O-1`` (N = V + O).
Offsets are 0-based; a log holds entries ``[0, log_end)``.

Per node (arrays of shape [N], int32 unless noted)
  role          UNATTACHED / PROSPECTIVE / CANDIDATE / FOLLOWER / LEADER / RESIGNED
  up            1 while running, 0 while crashed
  epoch         current epoch                                    (persistent)
  voted_id      voted candidate in ``epoch`` or -1               (persistent)
  leader_id     known leader in ``epoch`` or -1                  (persistent, as
                Kafka's quorum-state file keeps it)
  log_end       log end offset
  flushed_end   end of the flushed prefix of the log             (persistent)
  hw            high watermark, -1 while unknown (a new leader has none until
                an entry of its epoch is on a majority)
  granted       bitmask of voters that granted this node's (pre-)vote request
  rejected      bitmask of voters that rejected it
  has_fetched   1 once a follower fetched successfully from its leader this epoch
  epoch_start   leader: offset of its LeaderChange record (epochStartOffset)
  fetched_mask  leader: voters heard from since the last check-quorum tick
  acked_mask    leader: voters that acknowledged BeginQuorumEpoch or fetched;
                resigned: voters that acknowledged EndQuorumEpoch
  preferred     bitmask of preferred successors received in EndQuorumEpoch

Per node pair, shape [N, N]
  inflight      correlation id of node i's outstanding request to j (0 none):
                a response is handled only if it answers that request, as
                Kafka's RequestManager does; state changes reset connections
  replica_end   leader i's view of replica j's log end (from j's fetch offsets);
                -1 = unknown. Row i is only meaningful while i leads.

Logs, shape [N, CAP]
  log_epoch     epoch of each entry
  log_value     unique id of each entry: >0 client data, <0 LeaderChange record
  log_hash      uint64 prefix hash of entries [0, k] (incremental; lets the
                checkers compare whole prefixes in O(1))

Network: a bag of up to M in-flight messages, packed in rows [0, n_msgs)
  msgs          int32 [M+1, MSG_WIDTH + 2*R] (the last row is scratch); field indices are the ``F_*`` below,
                R = max records in one FetchResponse.
  links         int32 [N]: bit j of links[i] set = messages i -> j get through
                (one-way cuts are a single cleared bit).

Ghost state (history the checkers need; never read by the protocol)
  g_leader      [MAX_EPOCH+2] leader elected in each epoch, -1 none
  g_vote        [N, MAX_EPOCH+2] candidate each voter granted a vote in each epoch
  g_commit_*    the committed log as first established: epoch, value, hash
                (shape [CAP]) and the epoch of the leader whose HW covered it
  g_reach       [MAX_EPOCH+2] committed entries every leader of a later epoch
                must hold: g_reach[e] = 1 + highest offset committed in epoch <= e
  g_node        [N, G_NODE_WIDTH] per-node history (previous epoch, role, ...)
  g_prev_hash   [N] uint64 prefix hash of a leader's log after the previous step
  g_scalar      [G_WIDTH] int64 scalars (committed length, leader HW, ...)
  dirty_from    [N] lowest log offset written by the current step (CAP if none)

Per walk counters and parameters
  counters      int32 [C_WIDTH] id sources: next entry value, next correlation id
  stats         int64 [S_WIDTH] walk statistics (``S_*`` below)
  viol          int64 [V_WIDTH] the first violation found (``V_*`` below)
  params        int64 [P_WIDTH] the walk's sizes and bounds (``P_*`` below)
  weights       float64 [N_FAMILIES] the walk's action-family weights
  cum_weights   float64 [N_FAMILIES] their running sum, for sampling
  rng           uint64 [1] the walk's random stream state
"""

from collections import namedtuple

import numpy as np

# ---- node roles (Kafka's EpochState implementations) -----------------------
UNATTACHED = 0
PROSPECTIVE = 1
CANDIDATE = 2
FOLLOWER = 3
LEADER = 4
RESIGNED = 5
ROLE_NAMES = ("Unattached", "Prospective", "Candidate", "Follower", "Leader", "Resigned")

# ---- message types ---------------------------------------------------------
MSG_NONE = 0
VOTE_REQUEST = 1
VOTE_RESPONSE = 2
BEGIN_QUORUM_EPOCH_REQUEST = 3
BEGIN_QUORUM_EPOCH_RESPONSE = 4
END_QUORUM_EPOCH_REQUEST = 5
END_QUORUM_EPOCH_RESPONSE = 6
FETCH_REQUEST = 7
FETCH_RESPONSE = 8
MSG_NAMES = (
    "None", "VoteRequest", "VoteResponse", "BeginQuorumEpochRequest",
    "BeginQuorumEpochResponse", "EndQuorumEpochRequest", "EndQuorumEpochResponse",
    "FetchRequest", "FetchResponse",
)

# ---- error codes carried in responses --------------------------------------
ERR_NONE = 0
ERR_FENCED_LEADER_EPOCH = 1
ERR_NOT_LEADER_OR_FOLLOWER = 2
ERR_UNKNOWN_LEADER_EPOCH = 3
ERROR_NAMES = ("NONE", "FENCED_LEADER_EPOCH", "NOT_LEADER_OR_FOLLOWER", "UNKNOWN_LEADER_EPOCH")

# ---- message fields: common header -----------------------------------------
F_TYPE = 0
F_SRC = 1
F_DST = 2
F_EPOCH = 3          # a request's epoch; a response's: the responder's epoch
F_CORR = 4           # correlation id of the request (echoed by its response)
# every response
F_ERROR = 5
F_LEADER = 6         # responder's known leader in F_EPOCH, -1 none
# VoteRequest
F_LAST_EPOCH = 5     # candidate's last log entry epoch
F_LAST_OFFSET = 6    # candidate's log end offset
F_PRE_VOTE = 7       # 1 = pre-vote (echoed in VoteResponse)
# VoteResponse
F_GRANTED = 8
# BeginQuorumEpoch / EndQuorumEpoch request
F_REQ_LEADER = 5
F_SUCCESSORS = 6     # EndQuorumEpoch: bitmask of preferred successors
# FetchRequest
F_FETCH_OFFSET = 5
F_LAST_FETCHED_EPOCH = 6
# FetchResponse
F_HW = 7             # leader's HW, -1 unknown
F_DIVERGING_EPOCH = 8  # -1 none
F_DIVERGING_END = 9
F_BASE_OFFSET = 10
F_N_RECORDS = 11
F_RECORDS = 12       # then (epoch, value) pairs
MSG_WIDTH = 12

# ---- per-node ghost fields (g_node) ----------------------------------------
GN_PREV_EPOCH = 0        # epoch after the previous step
GN_PREV_LEADER_EPOCH = 1 # epoch in which the node was leader after the previous step, -1 none
GN_PREV_LOG_END = 2      # its log end then
G_NODE_WIDTH = 3

# ---- ghost scalars (g_scalar) ----------------------------------------------
G_COMMIT_LEN = 0         # length of the ghost committed log
G_LEADER_HW = 1          # last HW seen on the highest-epoch leader, -1 none
G_LEADER_HW_EPOCH = 2    # the epoch of that leader
G_WIDTH = 3

# ---- id counters (counters) ----------------------------------------------------
C_NEXT_VALUE = 0
C_NEXT_CORR = 1
C_WIDTH = 2

# ---- walk statistics (stats) -----------------------------------------------
S_STEPS = 0              # checked steps (applied actions)
S_DISABLED = 1           # attempts at disabled actions (not steps)
S_ELECTIONS = 2          # transitions to Candidate
S_PRE_ELECTIONS = 3      # transitions to Prospective
S_LEADER_CHANGES = 4     # transitions to Leader
S_COMMITTED = 5          # length of the committed log at the end
S_MSGS_SENT = 6
S_MSGS_DROPPED_FULL = 7  # sends dropped because the network was full
S_MSGS_LOST = 8          # messages lost by a fault action or a cut link
S_MSGS_DUPLICATED = 9
S_CRASHES = 10
S_MAX_EPOCH = 11
S_BOUND_HIT = 12         # which bound ended or limited the walk (BOUND_*), 0 none
S_CLIENT_APPENDS = 13
S_RESIGNATIONS = 14      # check-quorum and graceful resignations
S_TRUNCATIONS = 15       # follower truncations on a diverging epoch
S_LOG_FULL = 16          # appends refused because the log was full
S_DISRUPTIONS = 17       # a leader displaced while it still heard from a majority
S_WIDTH = 18
STAT_NAMES = (
    "steps", "disabled_attempts", "elections", "pre_elections", "leader_changes",
    "committed", "msgs_sent", "msgs_dropped_full", "msgs_lost", "msgs_duplicated",
    "crashes", "max_epoch", "bound_hit", "client_appends", "resignations",
    "truncations", "log_full", "disruptions",
)

BOUND_NONE = 0
BOUND_EPOCH = 1          # an election would pass max_epoch: the walk ends
BOUND_LOG = 2            # a new leader could not append its LeaderChange record
BOUND_NAMES = ("none", "max_epoch", "log_capacity")

# ---- the first violation (viol) ---------------------------------------------
V_INVARIANT = 0          # invariant id + 1 (0 = none)
V_STEP = 1
V_NODE_A = 2
V_NODE_B = 3
V_EPOCH = 4
V_OFFSET = 5
V_WIDTH = 6

# ---- walk parameters (params) ------------------------------------------------
P_VOTERS = 0
P_OBSERVERS = 1
P_NODES = 2
P_LOG_CAP = 3
P_MSG_SLOTS = 4
P_MAX_EPOCH = 5
P_MAX_RECORDS = 6        # records per FetchResponse
P_DEPTH = 7              # checked steps per walk
P_MAJORITY = 8
P_WIDTH = 9

Walk = namedtuple("Walk", [
    "role", "up", "epoch", "voted_id", "leader_id", "log_end", "flushed_end", "hw",
    "granted", "rejected", "has_fetched", "epoch_start", "fetched_mask", "acked_mask",
    "preferred", "inflight", "replica_end",
    "log_epoch", "log_value", "log_hash",
    "msgs", "n_msgs", "links",
    "g_leader", "g_vote", "g_commit_epoch", "g_commit_value", "g_commit_hash",
    "g_commit_by", "g_reach", "g_node", "g_prev_hash", "g_scalar", "dirty_from",
    "counters", "stats", "viol", "params", "weights", "cum_weights", "rng",
])


def make_params(voters, observers, log_capacity, msg_slots, max_epoch, max_records, depth):
    p = np.zeros(P_WIDTH, dtype=np.int64)
    p[P_VOTERS] = voters
    p[P_OBSERVERS] = observers
    p[P_NODES] = voters + observers
    p[P_LOG_CAP] = log_capacity
    p[P_MSG_SLOTS] = msg_slots
    p[P_MAX_EPOCH] = max_epoch
    p[P_MAX_RECORDS] = max_records
    p[P_DEPTH] = depth
    p[P_MAJORITY] = voters // 2 + 1
    return p


def alloc_walk(params, n_families):
    """Allocate one walk's arrays for the sizes in ``params`` (done once per worker)."""
    n = int(params[P_NODES])
    cap = int(params[P_LOG_CAP])
    m = int(params[P_MSG_SLOTS])
    e = int(params[P_MAX_EPOCH]) + 2
    width = MSG_WIDTH + 2 * int(params[P_MAX_RECORDS])
    i32 = np.int32

    def node():
        return np.zeros(n, dtype=i32)

    return Walk(
        role=node(), up=node(), epoch=node(), voted_id=node(), leader_id=node(),
        log_end=node(), flushed_end=node(), hw=node(), granted=node(), rejected=node(),
        has_fetched=node(), epoch_start=node(), fetched_mask=node(), acked_mask=node(),
        preferred=node(), inflight=np.zeros((n, n), dtype=i32),
        replica_end=np.zeros((n, n), dtype=i32),
        log_epoch=np.zeros((n, cap), dtype=i32), log_value=np.zeros((n, cap), dtype=i32),
        log_hash=np.zeros((n, cap), dtype=np.uint64),
        msgs=np.zeros((m + 1, width), dtype=i32), n_msgs=np.zeros(1, dtype=i32), links=node(),
        g_leader=np.zeros(e, dtype=i32), g_vote=np.zeros((n, e), dtype=i32),
        g_commit_epoch=np.zeros(cap, dtype=i32), g_commit_value=np.zeros(cap, dtype=i32),
        g_commit_hash=np.zeros(cap, dtype=np.uint64), g_commit_by=np.zeros(cap, dtype=i32), g_reach=np.zeros(e, dtype=i32),
        g_node=np.zeros((n, G_NODE_WIDTH), dtype=i32), g_prev_hash=np.zeros(n, dtype=np.uint64),
        g_scalar=np.zeros(G_WIDTH, dtype=np.int64),
        dirty_from=node(), counters=np.zeros(C_WIDTH, dtype=i32),
        stats=np.zeros(S_WIDTH, dtype=np.int64), viol=np.zeros(V_WIDTH, dtype=np.int64),
        params=params.astype(np.int64), weights=np.zeros(n_families, dtype=np.float64),
        cum_weights=np.zeros(n_families, dtype=np.float64), rng=np.zeros(1, dtype=np.uint64),
    )


def state_bytes(walk):
    """Bytes of state one walk occupies (all arrays of a Walk)."""
    return int(sum(a.nbytes for a in walk))
