"""Timing parameters of the timed mode: the one place they are defined.

A timed walk reads its parameters from a float64 array ``tp`` indexed by the
``TP_*`` constants below. :data:`TIMING` lists each with its default (Kafka's
where Kafka has one), the Kafka setting it stands for and what it means; the
CLI, the TOML config and the README table are generated from it. Times are in
milliseconds in :data:`TIMING` and in microseconds inside the kernels.
"""
from collections import namedtuple

# ---- latency distributions (one-way, drawn per message, the same for every link) ----
LAT_FIXED = 0         # always LATENCY_A
LAT_UNIFORM = 1       # uniform in [LATENCY_A, LATENCY_B)
LAT_EXPONENTIAL = 2   # LATENCY_A + exponential with mean LATENCY_B
LAT_LOGNORMAL = 3     # log-normal with median LATENCY_A and shape LATENCY_SIGMA
LATENCY_NAMES = ("fixed", "uniform", "exponential", "lognormal")

# ---- what a Candidate that a majority rejected does (KAFKA-18345; by release) -------
LOSS_BACKOFF = 0          # 3.9.0, 3.9.1, 4.0.0: 100 ms x uniform{0 .. 2^r - 1}, capped
LOSS_JITTERED = 1         # 4.0.1: 100 ms x uniform{1 .. 2^r - 1}, cap + uniform{0 .. 99}
LOSS_JITTERED_39 = 2      # 3.9.2: 100 ms x uniform{1 .. 2^r}, cap + uniform{0 .. 99}
LOSS_WAIT = 3             # 4.1 on: no backoff, it waits out its election timeout
ELECTION_LOSS_NAMES = ("backoff", "jittered-backoff", "jittered-backoff-3.9", "wait")

# ---- which voters the leader's BeginQuorumEpoch heartbeat goes to (by release) -------
BQE_EVERY_VOTER = 0       # 3.9-4.1 (KAFKA-16536): every other voter, each fetch timeout / 2
BQE_NOT_FETCHING = 1      # 4.2 on (KAFKA-16926): those that have not fetched for that long
BEGIN_QUORUM_EPOCH_NAMES = ("every-voter", "not-fetching")

# ---- what answers a Fetch the leader holds (KAFKA-14145; by release) ----------------
PURGATORY_RECORDS = 0     # up to 4.0.x: new records (the leader's log end), or the max wait
PURGATORY_HW = 1          # 4.1 on: also a high-watermark change; not held if the
                          # follower's high watermark is behind the leader's
FETCH_PURGATORY_NAMES = ("records", "high-watermark")

# ---- what an observer's fetch timeout does (KAFKA-19354; by release) ------------------
OBSERVER_FETCH_BOOTSTRAP = 0   # 3.9-4.1: it fetches from random bootstrap voters until a
                               # fetch succeeds
OBSERVER_FETCH_BEST_NODE = 1   # 4.2 on: nothing; it fetches from its leader, and from a
                               # bootstrap voter only after a request to it timed out
OBSERVER_FETCH_NAMES = ("bootstrap", "best-node")

# ---- scenarios: scripts over the same events ---------------------------------------
SC_COLD_START = 0       # every node starts at once; time to the first leader
SC_LEADER_CRASH = 1     # steady state, then the leader crashes
SC_LEADER_ISOLATED = 2  # steady state, then the leader is cut off from every node
SC_ROLLING_RESTART = 3  # steady state, then each voter in turn is crashed and restarted
SC_RANDOM_FAULTS = 4    # crashes, partitions, loss bursts for a fault phase; then all heals
SC_VOTER_REMOVED = 5    # steady state, then a follower is cut off, the leader removes it, and
                        # the cut heals: its log still names it a voter
SC_LEADER_REMOVED = 6   # steady state, then the leader removes itself while too few of the
                        # other voters reach it to commit the removal; the cut heals later
SC_VOTER_REMOVED_WHILE_DOWN = 7  # steady state, then the leader crashes; a voter that grants
                        # its vote in the election crashes before it learns who won, the
                        # new leader removes it, and it restarts Unattached (KAFKA-17030)
SCENARIO_NAMES = ("cold-start", "leader-crash", "leader-isolated", "rolling-restart",
                  "random-faults", "voter-removed", "leader-removed", "voter-removed-while-down")
# Scenarios that change the voter set: their walks run with KIP-853 voter changes on.
RECONFIG_SCENARIOS = ("voter-removed", "leader-removed", "voter-removed-while-down")

Timing = namedtuple("Timing", "name default kafka doc")

# Indices into tp. Order matters only to the kernels; names are what users see.
TP_ELECTION_TIMEOUT = 0
TP_FETCH_TIMEOUT = 1
TP_ELECTION_BACKOFF_MAX = 2
TP_RETRY_BACKOFF_BASE = 3
TP_REQUEST_TIMEOUT = 4
TP_OBSERVER_FETCH = 5
TP_FETCH_MAX_WAIT = 6
TP_CHECK_QUORUM_FACTOR = 7
TP_APPEND_INTERVAL = 8
TP_FLUSH_DELAY = 9
TP_LATENCY_KIND = 10
TP_LATENCY_A = 11
TP_LATENCY_B = 12
TP_LOSS = 13
TP_RANDOM_FETCH_TIMEOUT = 14
TP_SYNC_TIMERS = 15
TP_SCENARIO = 16
TP_SETTLE = 17
TP_RESTART_DELAY = 18
TP_ISOLATION = 19
TP_FAULT_PHASE = 20
TP_MTBF = 21
TP_PARTITION_INTERVAL = 22
TP_PARTITION_DURATION = 23
TP_LIVENESS_BOUND = 24
TP_CUT_OFF_SLACK = 25
TP_OBSERVE = 26
TP_MAX_TIME = 27
TP_LATENCY_SIGMA = 28
TP_ELECTION_LOSS = 29
TP_LOSS_BURST_INTERVAL = 30
TP_LOSS_BURST_DURATION = 31
TP_LOSS_BURST_RATE = 32
TP_CANDIDATE_TIMEOUT_BACKOFF = 33
TP_RESIGNED_KEEPS_TIME = 34
TP_BEGIN_QUORUM_EPOCH = 35
TP_FETCH_PURGATORY = 36
TP_APPEND_LINGER = 37
TP_WIDTH = 38

TIMING = {
    TP_ELECTION_TIMEOUT: Timing(
        "election_timeout_ms", 1000.0, "controller.quorum.election.timeout.ms",
        "T: each election timer waits uniformly in [T, 2T)"),
    TP_FETCH_TIMEOUT: Timing(
        "fetch_timeout_ms", 2000.0, "controller.quorum.fetch.timeout.ms",
        "a follower that has not fetched successfully for this long starts an election"),
    TP_ELECTION_BACKOFF_MAX: Timing(
        "election_backoff_max_ms", 1000.0, "controller.quorum.election.backoff.max.ms",
        "cap of the exponential backoff after a lost election"),
    TP_RETRY_BACKOFF_BASE: Timing(
        "retry_backoff_base_ms", 100.0, "KafkaRaftClient.RETRY_BACKOFF_BASE_MS",
        "unit of the election backoff: base * uniform{0 .. 2^retries - 1}, capped"),
    TP_REQUEST_TIMEOUT: Timing(
        "request_timeout_ms", 2000.0, "controller.quorum.request.timeout.ms",
        "an unanswered request is sent again after this long (a Follower's Fetch: to a "
        "random bootstrap voter, KafkaRaftClient.maybeSendFetchToBestNode)"),
    TP_OBSERVER_FETCH: Timing(
        "observer_fetch", float(OBSERVER_FETCH_BEST_NODE),
        "KafkaRaftClient.pollFollowerAsObserver",
        "what an observer does when its fetch timeout expires (the release sets it): "
        "bootstrap (3.9-4.1: it fetches from random bootstrap voters until a fetch "
        "succeeds) or best-node (4.2 on, KAFKA-19354: nothing; like a voter it turns to a "
        "bootstrap voter only after a request to its leader timed out)"),
    TP_FETCH_MAX_WAIT: Timing(
        "fetch_max_wait_ms", 500.0, "KafkaRaftClient.MAX_FETCH_WAIT_MS",
        "the leader holds a Fetch with nothing new for this long (0: answer at once)"),
    TP_CHECK_QUORUM_FACTOR: Timing(
        "check_quorum_factor", 1.5, "LeaderState.CHECK_QUORUM_TIMEOUT_FACTOR",
        "the leader resigns after factor x fetch timeout without fetches from a majority"),
    TP_APPEND_INTERVAL: Timing(
        "append_interval_ms", 500.0, "metadata.max.idle.interval.ms",
        "the leader appends a record this often (the controller's no-op record; 0: never)"),
    TP_APPEND_LINGER: Timing(
        "append_linger_ms", 25.0, "controller.quorum.append.linger.ms",
        "the leader writes a batch of records this long after its first one was asked for "
        "(BatchAccumulator); a leader that loses its role first drops the batch"),
    TP_FLUSH_DELAY: Timing(
        "flush_delay_ms", 0.0, "(disk)", "time from a leader's append to its flush"),
    TP_LATENCY_KIND: Timing(
        "latency", float(LAT_UNIFORM), "(network)",
        "one-way latency distribution: " + ", ".join(LATENCY_NAMES)),
    TP_LATENCY_A: Timing(
        "latency_a_ms", 1.0, "(network)",
        "fixed: the latency; uniform: low end; exponential: minimum; lognormal: median"),
    TP_LATENCY_B: Timing(
        "latency_b_ms", 5.0, "(network)",
        "uniform: high end; exponential: mean above the minimum"),
    TP_LATENCY_SIGMA: Timing(
        "latency_sigma", 0.5, "(network)", "lognormal: the shape sigma of log(latency)"),
    TP_LOSS: Timing("loss", 0.0, "(network)", "probability that a message is lost"),
    TP_ELECTION_LOSS: Timing(
        "election_loss", float(LOSS_WAIT), "KafkaRaftClient.maybeHandleElectionLoss",
        "what a Candidate that a majority rejected does (the release sets it, KAFKA-18345): "
        "backoff (3.9.0-3.9.1, 4.0.0: base x uniform{0..2^retries-1}, capped), "
        "jittered-backoff (4.0.1: base x uniform{1..2^retries-1}, cap + uniform{0..base-1}), "
        "jittered-backoff-3.9 (3.9.2: base x uniform{1..2^retries}, the same cap), "
        "wait (4.1 on, and Raft: it waits out its election timeout); then it runs again"),
    TP_CANDIDATE_TIMEOUT_BACKOFF: Timing(
        "candidate_timeout_backoff", 0.0, "KafkaRaftClient.pollCandidate",
        "1: a Candidate whose election times out backs off (as after a rejection) before it "
        "runs again (3.9); 0: it runs again at once (4.0 on; the release sets it)"),
    TP_RESIGNED_KEEPS_TIME: Timing(
        "resigned_keeps_time", 1.0, "QuorumState.transitionToUnattached",
        "1: a Resigned node that becomes Unattached keeps its election time left, as a "
        "Candidate, an Unattached node and a Prospective one not rejected do in every "
        "release (4.0 on); 0: it draws a fresh election timeout (3.9; the release sets it)"),
    TP_BEGIN_QUORUM_EPOCH: Timing(
        "begin_quorum_epoch", float(BQE_NOT_FETCHING),
        "KafkaRaftClient.maybeSendBeginQuorumEpochRequests",
        "which voters the leader's BeginQuorumEpoch heartbeat (every fetch timeout / 2) "
        "goes to (the release sets it): every-voter (3.9-4.1, KAFKA-16536: every other "
        "voter) or not-fetching (4.2 on, KAFKA-16926: the voters that have not fetched for "
        "fetch timeout / 2)"),
    TP_FETCH_PURGATORY: Timing(
        "fetch_purgatory", float(PURGATORY_HW), "KafkaRaftClient.handleFetchRequest",
        "what answers a Fetch the leader holds (the release sets it): records (up to "
        "4.0.x: new records, or the max wait) or high-watermark (4.1 on, KAFKA-14145: also "
        "a change of the leader's high watermark, and a fetch whose sender's high "
        "watermark is behind is answered at once)"),
    TP_RANDOM_FETCH_TIMEOUT: Timing(
        "randomized_fetch_timeout", 0.0, "(Raft)",
        "1: a follower's timer is an election timeout in [T, 2T) (Raft), not the fetch timeout"),
    TP_SYNC_TIMERS: Timing(
        "sync_timers", 0.0, "(experiment)",
        "1: at the scenario's fault every follower's timer restarts at once (Ongaro's setup)"),
    TP_SCENARIO: Timing(
        "scenario", float(SC_LEADER_CRASH), "(experiment)",
        "what the walk does: " + ", ".join(SCENARIO_NAMES)),
    TP_SETTLE: Timing(
        "settle_ms", 1000.0, "(experiment)",
        "after a leader is known to every voter, the fault comes uniformly within this"),
    TP_RESTART_DELAY: Timing(
        "restart_delay_ms", 5000.0, "(experiment)",
        "a crashed node restarts after this long (random-faults: exponential, this mean; "
        "voter-removed-while-down: the removed voter, this long after its removal commits)"),
    TP_ISOLATION: Timing(
        "isolation_ms", 10000.0, "(experiment)",
        "leader-isolated, voter-removed, leader-removed: the cut heals after this"),
    TP_FAULT_PHASE: Timing(
        "fault_phase_ms", 30000.0, "(experiment)",
        "random-faults: faults happen for this long, then everything heals"),
    TP_MTBF: Timing(
        "mtbf_ms", 10000.0, "(experiment)", "random-faults: mean time between a node's crashes"),
    TP_PARTITION_INTERVAL: Timing(
        "partition_interval_ms", 10000.0, "(experiment)",
        "random-faults: mean time between partitions"),
    TP_PARTITION_DURATION: Timing(
        "partition_duration_ms", 3000.0, "(experiment)",
        "random-faults: mean time a partition lasts"),
    TP_LOSS_BURST_INTERVAL: Timing(
        "loss_burst_interval_ms", 20000.0, "(experiment)",
        "random-faults: mean time between message-loss bursts (0: none)"),
    TP_LOSS_BURST_DURATION: Timing(
        "loss_burst_duration_ms", 1000.0, "(experiment)", "random-faults: mean length of a burst"),
    TP_LOSS_BURST_RATE: Timing(
        "loss_burst_rate", 0.3, "(network)", "probability that a message is lost during a burst"),
    TP_LIVENESS_BOUND: Timing(
        "liveness_bound_ms", 30000.0, "(property)",
        "after healing, a leader known to a majority and a new commit must come within this"),
    TP_CUT_OFF_SLACK: Timing(
        "cut_off_slack_ms", 100.0, "(property)",
        "a leader no majority can reach must resign within check quorum plus this"),
    TP_OBSERVE: Timing(
        "observe_ms", 10000.0, "(experiment)",
        "the walk goes on this long after the scenario is measured (commit latencies)"),
    TP_MAX_TIME: Timing(
        "max_time_ms", 600000.0, "(experiment)", "a walk ends at this simulated time at the latest"),
}
TIMING_BY_NAME = {t.name: k for k, t in TIMING.items()}
MAX_TIME_MS = 2_000_000.0  # times are int32 microseconds in messages: stay below 2^31

