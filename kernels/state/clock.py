"""The timed mode's own state: a clock, per-node deadlines, and the draws of time.

A timed walk keeps the untimed ``Walk`` (what the protocol knows) and beside it a
``Clock`` (when things happen), which only the timed chooser reads:

t       int64 [T_WIDTH]        the walk's clock and scenario state, then its timed
                               statistics (TS_*, TS_NAMES order)
node    int64 [TN_ROWS, N]     per-node deadlines (INF: none) and bookkeeping
  DL_TIMER        the role's timer: election timer (Unattached, Prospective,
                  Candidate, Resigned) or fetch timer (Follower)
  TIMER_KIND      0 the role's timer; 1 a candidate's election backoff; 2 an observer's
                  fetch timeout has expired (3.9-4.1: it fetches from bootstrap voters)
  DL_POLL         when the node next has a request to send
  DL_CHECK_QUORUM leader: when its check-quorum timer expires
  DL_FLUSH        leader or observer: when its unflushed tail is flushed
  DL_CRASH, DL_RESTART   scripted or random faults
  RETRIES         consecutive candidacies (the election backoff's exponent)
  CUT_SINCE       leader: since when no majority of voters can reach it (-1 none)
  CUT_UNION       leader: the voters (itself included) that could reach it at some
                  moment since CUT_SINCE (a mask)
  CUT_RESTARTED   leader: 1 once its check-quorum timer restarted since CUT_SINCE
  PRE_REACH       prospective: 1 once it has had two-way links with a majority
  PREV_ROLE       the role it had after the previous step
  ELECTION_AT     when its election timer expires (Unattached, Prospective, Candidate,
                  Resigned; a candidate's backoff leaves it be): what Unattached keeps
  APPEND_AT       leader: when its batch of client records is written (the append
                  linger after its first record; INF: no batch)
  APPEND_FROM     when that batch's first record was asked for (commit latency)
pair    int64 [PAIR_ROWS, N, N]
  NEXT_TRY        [i, j] earliest time i may send j a new request (a pending one
                  is sent again once it times out); a leader's are its one
                  BeginQuorumEpoch timer (every fetch timeout / 2)
  LAST_DUE        [i, j] delivery time of the last message on link i -> j: links
                  deliver in order, as TCP does
  LAST_FETCH      [i, j] leader i: when j's last valid Fetch arrived (-INF: not in
                  this epoch; Kafka's lastFetchTimestamp, read by 4.2's heartbeat)
  SENT_AT         [i, j] when i last sent j a request (an unanswered one blocks the
                  next until the request timeout: RequestManager.isReady)
tp      float64 [TP_WIDTH]     timing parameters (kernels.timing)
drop    uint8   [2, F]         shrinking only: drop[0, k] = 1 suppresses the walk's k-th
                               scheduled fault, drop[1, k] its k-th lost message (empty
                               in runs: every fault happens)

Message delivery times live in the two last columns of ``Walk.msgs`` so that
they move with their message. All times are integer microseconds.
"""
import numpy as np

from ..jit import bundle
from ..jit import kernel
from .layout import RNG
from .rng import GAMMA, INV53, S11, mix64, rand_below, rand_unit
from kraftwalk.vocabulary.timing import (
    LAT_EXPONENTIAL, LAT_FIXED, LAT_LOGNORMAL, LAT_UNIFORM, TP_ELECTION_BACKOFF_MAX,
    TP_ELECTION_TIMEOUT, TP_LATENCY_A, TP_LATENCY_B, TP_LATENCY_KIND, TP_LATENCY_SIGMA,
    TP_RETRY_BACKOFF_BASE, TP_ELECTION_LOSS, LOSS_JITTERED, LOSS_JITTERED_39,
)

INF = np.int64(1) << np.int64(62)

# ---- t: clock and scenario state ----------------------------------------------------
NOW = 0
END = 1             # the walk ends at this time
PHASE = 2
NEXT_SCRIPT = 3     # the scenario's next scripted event
NEXT_APPEND = 4     # the next client append
NEXT_PARTITION = 5  # random faults: the next partition
HEAL_AT = 6         # the current partition heals
TRIGGER_AT = 7      # when the scenario's fault struck (-1 not yet)
TRIGGER_EPOCH = 8   # the leader's epoch then
TRIGGER_LEADER = 9
TRIGGER_COMMIT = 10  # the committed log's length then
HEALED_AT = 11      # when the last fault healed (-1 none pending)
HEALED_COMMIT = 12
HEALTHY = 13        # 1 while no fault has happened and a leader is known to every voter
ROLL = 14           # rolling restart: the next voter to restart; voter-removed-while-down:
                    # the voter that crashed once it had voted (-1: none yet)
KNOWN = 15          # the leader known to a majority of voters, -1 none
KNOWN_ALL = 16      # the leader known to every voter, -1 none
PROBE_VALUE = 17    # the client record whose commit is being timed (0 none)
PROBE_OFFSET = 18
PROBE_AT = 19
LOSS_AT = 20        # when the last leader was lost (-1: one is known)
LIVE_DEADLINE = 21  # HealedClusterRecovers: recovery is due by then
FAULTS_END = 22     # random faults stop then
DONE = 23           # 1 once the scenario is measured (the walk then observes and ends)
HEALTHY_OK = 24     # 1 when HealthyLeaderKept applies (no loss, bounded latency)
ROLES_CHANGED = 25  # a step changed a role or a node's liveness: re-read who leads
HEALS = 26          # heals so far (a restart or a healed cut that ends a fault)
NEXT_BURST = 27     # random faults: the next message-loss burst
BURST_END = 28      # the current burst ends (INF: none under way)
FAULTS_SEEN = 29    # scheduled random faults drawn so far (crashes, partitions, bursts)
LOSSES_SEEN = 30    # messages lost so far (to loss or a burst)
BURST_MUTED = 31    # 1 while the current burst is one that ``drop`` suppressed
FAULT_RNG = 32      # the random faults' own stream (see ``fault_u64``)
CATCH_UP_DEADLINE = 33  # ReplicasCatchUp: every live replica knows CATCH_UP_TARGET by then
CATCH_UP_TARGET = 34    # the committed length that shows a commit made after the heal
CATCH_UP_FROM = 35      # the heal it counts from
STATS_AT = 36

# ---- t: timed statistics, per walk ---------------------------------------------------
TS_FIRST_LEADER = 36     # first time a leader was known to a majority of voters
TS_ELECT = 37            # from the scenario's fault to a new leader known to a majority
TS_UNAVAILABLE = 38      # from the fault until the committed log grows again
TS_ELECTION_EPOCHS = 39  # epochs that election used (more than 1: split votes)
TS_FIRST_TIMEOUT = 40    # from the fault to the first voter's timer expiring
TS_FAILED_PRE_VOTES = 41  # pre-vote rounds that did not make a candidate
TS_LOST_ELECTIONS = 42   # candidacies that did not make a leader
TS_STALE_LEADER = 43     # how long a cut-off leader went on leading
TS_COMMIT_SUM = 44       # client append to commit: sum, max and count of samples
TS_COMMIT_MAX = 45
TS_COMMITS = 46
TS_LEADER_LOSSES = 47    # times no leader was known to a majority any more
TS_RECOVERY_SUM = 48     # from such a loss to the next leader known to a majority
TS_RECOVERY_MAX = 49
TS_EVENTS = 50           # events handled (actions plus timer-only events)
TS_END = 51              # the walk's final time
TS_VIOLATION_AT = 52     # time of the violation, -1 none
TS_HEALED_RECOVERY = 53  # from the last heal to a leader known to a majority plus a commit
TS_DISRUPTIVE = 54       # leaders deposed by a vote request while a majority could reach them
TS_CAUGHT_UP = 55        # from the last heal to every live replica knowing a commit made after it
T_WIDTH = 56
TS_WIDTH = T_WIDTH - STATS_AT
TS_NAMES = (
    "first_leader_us", "elect_us", "unavailable_us", "election_epochs", "first_timeout_us",
    "failed_pre_votes", "lost_elections", "stale_leader_us", "commit_latency_sum_us",
    "commit_latency_max_us", "commits_timed", "leader_losses", "recovery_sum_us",
    "recovery_max_us", "events", "end_us", "violation_us", "healed_recovery_us",
    "disruptive_elections", "caught_up_us",
)

# ---- phases ---------------------------------------------------------------------------
PH_WARMUP = 0    # waiting for a leader known to every voter, with a commit in its epoch
PH_SETTLE = 1    # waiting for the fault's moment
PH_MEASURE = 2   # the fault struck

# ---- node rows ------------------------------------------------------------------------
DL_TIMER = 0
TIMER_KIND = 1
DL_POLL = 2
DL_CHECK_QUORUM = 3
DL_FLUSH = 4
DL_CRASH = 5
DL_RESTART = 6
RETRIES = 7
CUT_SINCE = 8
PRE_REACH = 9
PREV_ROLE = 10
ELECTION_AT = 11
APPEND_AT = 12
APPEND_FROM = 13
CUT_UNION = 14
CUT_RESTARTED = 15
TN_ROWS = 16
NEXT_TRY = 0
LAST_DUE = 1
LAST_FETCH = 2
SENT_AT = 3
PAIR_ROWS = 4

Clock = bundle("Clock", ["t", "node", "pair", "tp", "drop"], __name__)  # by reference: .bundle


def alloc_clock(n, tp, drop=None):
    return Clock(t=np.zeros(T_WIDTH, dtype=np.int64),
                 node=np.zeros((TN_ROWS, n), dtype=np.int64),
                 pair=np.zeros((PAIR_ROWS, n, n), dtype=np.int64),
                 tp=np.asarray(tp, dtype=np.float64),
                 drop=np.zeros((2, 0), dtype=np.uint8) if drop is None
                 else np.ascontiguousarray(drop, dtype=np.uint8).reshape(2, -1))


SCHEDULED = 0  # fault kinds that shrinking counts apart: crashes, partitions, bursts
LOST = 1       # messages lost


@kernel
def fault_happens(c, kind):
    """Count one random fault of ``kind`` the walk draws; False if shrinking suppresses
    it. A suppressed fault still takes its draws and schedules what follows it, so the
    walk's other scheduled faults keep their ordinals and times."""
    k = c.t[FAULTS_SEEN + kind]
    c.t[FAULTS_SEEN + kind] = k + 1
    return k >= c.drop.shape[1] or c.drop[kind, k] == 0


@kernel
def due_col(w):
    return w.msgs.shape[1] - 2


@kernel
def parked_col(w):
    return w.msgs.shape[1] - 1


@kernel
def election_timeout(w, c):
    """A fresh election timer: uniform in [T, 2T) (randomElectionTimeoutMs)."""
    t = np.int64(c.tp[TP_ELECTION_TIMEOUT])
    return t + rand_below(w.scal, t) if t > 0 else np.int64(0)


@kernel
def election_backoff(w, c, retries):
    """binaryExponentialElectionBackoffMs as the release has it (``election_loss``):
    3.9.0 and 4.0.0 draw base * uniform{0 .. 2^r - 1}, capped at the maximum; KAFKA-18345's
    jitter (4.0.1; 3.9.2's backport draws one unit more) never draws 0, and caps at the
    maximum plus uniform{0 .. base - 1}, so candidates at the cap do not collide."""
    cap = np.int64(c.tp[TP_ELECTION_BACKOFF_MAX])
    if cap <= 0:
        return np.int64(0)
    base = np.int64(c.tp[TP_RETRY_BACKOFF_BASE])
    r = max(retries, 1)
    kind = np.int64(c.tp[TP_ELECTION_LOSS])
    if kind == LOSS_JITTERED or kind == LOSS_JITTERED_39:
        span = np.int64(2) << np.int64(min(10, r - 1))
        if kind == LOSS_JITTERED:
            units = 1 + rand_below(w.scal, span - 1)   # nextInt(1, 2^r)
        else:
            units = 1 + rand_below(w.scal, span)       # 1 + nextInt(2^r)
        jitter = rand_below(w.scal, max(base // 1000, np.int64(1))) * 1000  # whole ms
        return min(base * units, cap + jitter)
    span = np.int64(2) << np.int64(min(20, r - 1))
    return min(base * rand_below(w.scal, span), cap)


@kernel
def end_epoch_backoff(c, position, total):
    """endEpochElectionBackoff: a follower's fetch timer after EndQuorumEpoch:
    strictExponentialElectionBackoffMs of its place in the list of ``total``
    successors (the list's length if it is absent). So the first successor, and
    everyone told by an empty list (a restarted leader's), times out at once; one
    absent from a list waits the cap."""
    cap = np.int64(c.tp[TP_ELECTION_BACKOFF_MAX])
    if position == 0:
        return np.int64(0)
    if position < 0 or position >= total:
        return cap
    base = cap >> np.int64(total - 1)
    return min(cap, base << np.int64(position - 1))


# random-faults draws its schedule (when, what, for how long) from a stream of its own,
# seeded from the walk's: the schedule then does not depend on what the protocol drew,
# so a walk meets the same faults with pre-vote on or off, under any mutation, and
# with some of its faults suppressed (shrinking).
FAULT_SALT = np.uint64(0x6A09E667F3BCC909)


@kernel
def seed_fault_stream(w, c):
    c.t[FAULT_RNG] = np.int64(mix64(np.uint64(w.scal[RNG]) ^ FAULT_SALT))


@kernel
def fault_u64(c):
    x = np.uint64(c.t[FAULT_RNG]) + GAMMA
    c.t[FAULT_RNG] = np.int64(x)
    return mix64(x)


@kernel
def fault_below(c, n):
    return np.int64((fault_u64(c) >> np.uint64(32)) * np.uint64(n) >> np.uint64(32))


@kernel
def fault_exponential(c, mean):
    """An exponentially distributed delay (us) with the given mean, on the faults' stream."""
    u = np.float64(fault_u64(c) >> S11) * INV53
    return np.int64(-mean * np.log(1.0 - u))


@kernel
def latency(w, c):
    """One message's one-way delay (at least 1 us)."""
    kind = np.int64(c.tp[TP_LATENCY_KIND])
    a = c.tp[TP_LATENCY_A]
    b = c.tp[TP_LATENCY_B]
    x = a
    if kind == LAT_UNIFORM:
        x = a + (b - a) * rand_unit(w.scal)
    elif kind == LAT_EXPONENTIAL:
        x = a - b * np.log(1.0 - rand_unit(w.scal))
    elif kind == LAT_LOGNORMAL:
        u1 = 1.0 - rand_unit(w.scal)
        u2 = rand_unit(w.scal)
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
        x = a * np.exp(c.tp[TP_LATENCY_SIGMA] * z)
    elif kind != LAT_FIXED:
        x = a
    return max(np.int64(1), np.int64(x))
