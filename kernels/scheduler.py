"""Action choice: weighted families, then parameters; and applying one action.

An action is (family, a, b). Every random choice is made here, by the scheduler,
so an action is fully described by its three numbers: replaying a recorded
action list reproduces a walk without its random stream.

Swarm testing (Groce et al., ISSTA 2012): at the start of each walk its family
weights are drawn at random and some fault families are left out entirely, so
different walks stress different mixes of behaviour.
"""
import numpy as np
from .jit import kernel

from .election import (
    election_timeout_enabled, handle_vote_request, handle_vote_response, on_election_timeout,
    send_vote_request,
)
from .faults import change_partition, crash_node, duplicate, lose_message, restart_node
from .layout import (
    ACKED_MASK, BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, CANDIDATE, CUM_WEIGHT,
    END_QUORUM_EPOCH_REQUEST, END_QUORUM_EPOCH_RESPONSE, FETCH_REQUEST, FETCH_RESPONSE,
    FOLLOWER, F_CORR, F_DST, F_EPOCH, F_SRC, F_TYPE, GRANTED, LEADER, LEADER_ID, LOG_END,
    MSG_WIDTH, N_MSGS, PROSPECTIVE, P_NODES, P_VOTERS, REJECTED, RESIGNED, ROLE, S_DISABLED,
    S_MSGS_LOST, UNATTACHED, UP, VOTE_REQUEST, VOTE_RESPONSE, WEIGHT, DELIVERED, FAMILY_COUNT,
)
from .network import capacity, link_up, take_message
from .quorum_epoch import (
    handle_begin_quorum_epoch_request, handle_begin_quorum_epoch_response,
    handle_end_quorum_epoch_request, handle_end_quorum_epoch_response, send_begin_quorum_epoch,
    send_end_quorum_epoch,
)
from .replication import (
    check_quorum_enabled, check_quorum_expired, finish_poll, client_append, client_append_enabled,
    flush_enabled, flush_log, handle_fetch_request, handle_fetch_response, resign,
    send_fetch_request,
)
from .quorum_state import popcount, vote_rejected
from .features import FULL_CHECKS, TRACE
from .rng import mix64, rand_below, rand_unit

FAM_TIMEOUT = 0        # an election / fetch timer expires
FAM_DELIVER = 1        # deliver one in-flight message
FAM_SEND = 2           # a node sends the request its role calls for
FAM_CLIENT_APPEND = 3  # the leader appends a client record
FAM_FLUSH = 4          # a node flushes its log
FAM_CHECK_QUORUM = 5   # the leader's check-quorum timer expires
FAM_RESIGN = 6         # the leader resigns gracefully
FAM_CRASH = 7
FAM_RESTART = 8
FAM_PARTITION = 9      # cut or heal links
FAM_LOSE = 10          # an in-flight message is lost
FAM_DUPLICATE = 11     # an in-flight message is duplicated
N_FAMILIES = 12
FAMILY_NAMES = (
    "timeout", "deliver", "send", "client_append", "flush", "check_quorum", "resign",
    "crash", "restart", "partition", "lose", "duplicate",
)

# Fixed weights (also the centre of the swarm's draws): message traffic dominates,
# faults are rare enough for elections to finish. Chosen by experiments/tune_swarm.py
# (results/swarm_tuning.md): sending at a third of the delivery rate, rather than
# two thirds, halved the median steps to the deep Figure 8 violation.
DEFAULT_WEIGHTS = np.array(
    [1.0, 12.0, 4.0, 2.0, 2.0, 0.3, 0.1, 0.2, 1.0, 0.3, 0.5, 0.3], dtype=np.float64)
# Families a swarm walk may leave out altogether (feature omission).
OMITTABLE = np.array([0, 0, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1], dtype=np.int64)
OMIT_PROBABILITY = 0.3
SPREAD = 1.5  # swarm weights are base * exp(U(-SPREAD, SPREAD))

MAX_ATTEMPTS = 256  # draws per step before the walk counts as stuck


@kernel
def draw_weights(w, base, swarm):
    """The walk's family weights: the base weights, or a swarm draw from them."""
    total = 0.0
    for f in range(base.shape[0]):
        x = base[f]
        if swarm:
            if OMITTABLE[f] == 1 and rand_unit(w.scal) < OMIT_PROBABILITY:
                x = 0.0
            else:
                x = x * np.exp(SPREAD * (2.0 * rand_unit(w.scal) - 1.0))
        w.weights[WEIGHT, f] = x
        total += x
        w.weights[CUM_WEIGHT, f] = total


@kernel(inline="always")
def nth_set_bit(mask, r):
    """Index of the r-th (0-based) set bit of mask."""
    for _ in range(r):
        mask &= mask - 1
    b = 0
    while not (mask >> b) & 1:
        b += 1
    return b


@kernel(inline="always")
def request_targets(w, a):
    """Bitmask of the nodes node a's role would send a request to now."""
    r = w.node[ROLE, a]
    v = w.scal[P_VOTERS]
    others = ((1 << v) - 1) & ~(1 << a)
    if w.node[UP, a] == 0:
        return 0
    if r == FOLLOWER:
        ld = w.node[LEADER_ID, a]
        return (1 << ld) if ld >= 0 else 0
    if r == UNATTACHED:
        return others  # discovery: Fetch from any bootstrap voter
    if r == PROSPECTIVE or r == CANDIDATE:
        if vote_rejected(w, a):
            return 0
        return others & ~(w.node[GRANTED, a] | w.node[REJECTED, a])
    if r == LEADER or r == RESIGNED:
        return others & ~w.node[ACKED_MASK, a]
    return 0


@kernel
def send_enabled(w, a, b):
    return 0 <= b < w.scal[P_NODES] and (request_targets(w, a) >> b) & 1 == 1


@kernel
def node_masks(w, masks, i, features):
    """Set node i's bit in the mask of every node family it may act in now."""
    bit = 1 << i
    if w.node[UP, i] == 0:
        masks[FAM_RESTART] |= bit
        return
    masks[FAM_CRASH] |= bit
    if election_timeout_enabled(w, i):
        masks[FAM_TIMEOUT] |= bit
    if request_targets(w, i) != 0:
        masks[FAM_SEND] |= bit
    if flush_enabled(w, i):
        masks[FAM_FLUSH] |= bit
    if w.node[ROLE, i] == LEADER:
        masks[FAM_RESIGN] |= bit
        if w.node[LOG_END, i] < w.log.shape[2]:
            masks[FAM_CLIENT_APPEND] |= bit
        if check_quorum_enabled(w, i, features):
            masks[FAM_CHECK_QUORUM] |= bit


@kernel
def network_masks(w, masks):
    nm = w.scal[N_MSGS]
    masks[FAM_DELIVER] = 1 if nm > 0 else 0
    masks[FAM_LOSE] = masks[FAM_DELIVER]
    masks[FAM_DUPLICATE] = 1 if 0 < nm < capacity(w) else 0
    masks[FAM_PARTITION] = 1


@kernel
def enabled_masks(w, masks, features):
    """For each action family, the bitmask of nodes it may act on now (network
    families: 1 if enabled)."""
    for f in range(N_FAMILIES):
        masks[f] = 0
    for i in range(w.scal[P_NODES]):
        node_masks(w, masks, i, features)
    network_masks(w, masks)


@kernel
def update_masks(w, masks, touched, features):
    """Bring the masks up to date after a step that changed only node ``touched``
    (its own fields are all a node family's enabledness depends on)."""
    if touched >= 0:
        keep = ~(1 << touched)
        for f in range(N_FAMILIES):
            masks[f] &= keep
        node_masks(w, masks, touched, features)
    network_masks(w, masks)


@kernel
def message_fingerprint(w, k):
    """A content key of in-flight message k (type, ends, epoch and first payload
    fields; not its slot or correlation id), so a recorded delivery still names the
    same message when a shrunk trace leaves out earlier actions."""
    m = w.msgs[k]
    h = np.uint64(m[F_TYPE]) | (np.uint64(m[F_SRC]) << np.uint64(4)) | (
        np.uint64(m[F_DST]) << np.uint64(8)) | (np.uint64(np.uint32(m[F_EPOCH])) << np.uint64(12))
    for f in range(F_CORR + 1, MSG_WIDTH):
        h = mix64(h ^ np.uint64(np.uint32(m[f])))
    return np.int64(h >> np.uint64(2))


@kernel
def resolve_message(w, a, b):
    """The slot of the message with fingerprint b: slot a if it matches, else the first
    match; -1 if no in-flight message has it."""
    n = w.scal[N_MSGS]
    if 0 <= a < n and message_fingerprint(w, a) == b:
        return a
    for k in range(n):
        if message_fingerprint(w, k) == b:
            return k
    return -1


@kernel
def touched_node(w, f, a):
    """The one node action (f, a, .) may change: a delivered message's receiver, the
    node a node action names, or -1 for actions on the network alone."""
    if f == FAM_DELIVER:
        return w.msgs[a, F_DST]
    if f == FAM_PARTITION or f == FAM_LOSE or f == FAM_DUPLICATE:
        return -1
    return a


@kernel
def deliver_message(w, k, features):
    """Deliver in-flight message k to its destination's handler."""
    s = take_message(w, k)
    m = w.msgs[s]
    dst = m[F_DST]
    if w.node[UP, dst] == 0 or not link_up(w, m[F_SRC], dst):
        w.scal[S_MSGS_LOST] += 1  # to a crashed node, or over a link cut since it was sent
        return
    finish_poll(w, dst, features)
    t = m[F_TYPE]
    w.scal[DELIVERED + t] += 1
    if t == VOTE_REQUEST:
        handle_vote_request(w, s, features)
    elif t == VOTE_RESPONSE:
        handle_vote_response(w, s, features)
    elif t == FETCH_REQUEST:
        handle_fetch_request(w, s, features)
    elif t == FETCH_RESPONSE:
        handle_fetch_response(w, s, features)
    elif t == BEGIN_QUORUM_EPOCH_REQUEST:
        handle_begin_quorum_epoch_request(w, s)
    elif t == BEGIN_QUORUM_EPOCH_RESPONSE:
        handle_begin_quorum_epoch_response(w, s)
    elif t == END_QUORUM_EPOCH_REQUEST:
        handle_end_quorum_epoch_request(w, s)
    elif t == END_QUORUM_EPOCH_RESPONSE:
        handle_end_quorum_epoch_response(w, s)


@kernel
def send_request(w, a, b):
    r = w.node[ROLE, a]
    if r == FOLLOWER or r == UNATTACHED:
        send_fetch_request(w, a, b)
    elif r == PROSPECTIVE or r == CANDIDATE:
        send_vote_request(w, a, b)
    elif r == LEADER:
        send_begin_quorum_epoch(w, a, b)
    elif r == RESIGNED:
        send_end_quorum_epoch(w, a, b)


@kernel
def action_enabled(w, f, a, b, features):
    """Whether action (f, a, b) may be applied now (used when replaying actions)."""
    n = w.scal[P_NODES]
    if f == FAM_DELIVER or f == FAM_LOSE:
        return 0 <= a < w.scal[N_MSGS] and message_fingerprint(w, a) == b
    if f == FAM_DUPLICATE:
        return (0 <= a < w.scal[N_MSGS] and w.scal[N_MSGS] < capacity(w)
                and message_fingerprint(w, a) == b)
    if f == FAM_PARTITION:
        return 0 <= a < 4
    if a < 0 or a >= n:
        return False
    if f == FAM_TIMEOUT:
        return election_timeout_enabled(w, a)
    if f == FAM_SEND:
        return send_enabled(w, a, b)
    if f == FAM_CLIENT_APPEND:
        return client_append_enabled(w, a) and w.node[LOG_END, a] < w.log.shape[2]
    if f == FAM_FLUSH:
        return flush_enabled(w, a)
    if f == FAM_CHECK_QUORUM:
        return check_quorum_enabled(w, a, features)
    if f == FAM_RESIGN:
        return w.node[UP, a] == 1 and w.node[ROLE, a] == LEADER
    if f == FAM_CRASH:
        return w.node[UP, a] == 1
    if f == FAM_RESTART:
        return w.node[UP, a] == 0
    return False


@kernel
def do_action(w, f, a, b, features):
    """Apply an enabled action (f, a, b); False if it turned out to change nothing."""
    if f == FAM_TIMEOUT or f == FAM_SEND or f == FAM_CHECK_QUORUM or f == FAM_RESIGN:
        finish_poll(w, a, features)
    if f == FAM_TIMEOUT:
        on_election_timeout(w, a, features)
    elif f == FAM_DELIVER:
        deliver_message(w, a, features)
    elif f == FAM_SEND:
        send_request(w, a, b)
    elif f == FAM_CLIENT_APPEND:
        client_append(w, a)
    elif f == FAM_FLUSH:
        flush_log(w, a, features)
    elif f == FAM_CHECK_QUORUM:
        check_quorum_expired(w, a)
    elif f == FAM_RESIGN:
        resign(w, a)
    elif f == FAM_CRASH:
        crash_node(w, a)
    elif f == FAM_RESTART:
        restart_node(w, a, features)
    elif f == FAM_PARTITION:
        if not change_partition(w, a, b):
            return False
    elif f == FAM_LOSE:
        lose_message(w, a)
    elif f == FAM_DUPLICATE:
        duplicate(w, a)
    w.scal[FAMILY_COUNT + f] += 1
    return True


@kernel
def apply_action(w, f, a, b, features):
    """Apply a recorded action (f, a, b); a message action finds its message by the
    fingerprint b. Returns the node it touched (-1: the network only), or -2, having
    changed nothing, if the action is not enabled."""
    if f == FAM_DELIVER or f == FAM_LOSE or f == FAM_DUPLICATE:
        a = resolve_message(w, a, b)
    if not action_enabled(w, f, a, b, features):
        return -2
    t = touched_node(w, f, a)
    if not do_action(w, f, a, b, features):
        return -2
    return t


@kernel
def draw_action(w, masks, act, features):
    """Draw an enabled action: a family by weight among the enabled families, then a
    node uniformly among that family's enabled nodes, then the remaining parameter.
    Fills act = (f, a, b); False when no family is enabled."""
    total = 0.0
    for f in range(N_FAMILIES):
        if masks[f] != 0:
            total += w.weights[WEIGHT, f]
        w.weights[CUM_WEIGHT, f] = total
    if total <= 0.0:
        return False
    x = rand_unit(w.scal) * total
    f = 0
    while f < N_FAMILIES - 1 and (w.weights[CUM_WEIGHT, f] <= x or masks[f] == 0):
        f += 1
    a = 0
    b = 0
    if f == FAM_DELIVER or f == FAM_LOSE or f == FAM_DUPLICATE:
        a = rand_below(w.scal, w.scal[N_MSGS])
        if features & TRACE:
            b = message_fingerprint(w, a)
    elif f == FAM_PARTITION:
        a = rand_below(w.scal, 4)
        b = rand_below(w.scal, 1 << 30)
    else:
        mask = masks[f]
        a = nth_set_bit(mask, rand_below(w.scal, popcount(mask)))
        if f == FAM_SEND:
            t = request_targets(w, a)
            b = nth_set_bit(t, rand_below(w.scal, popcount(t)))
    act[0] = f
    act[1] = a
    act[2] = b
    return True


@kernel
def step(w, act, masks, features):
    """Apply one enabled action; act = (f, a, b, touched node). ``masks`` must be up to
    date on entry and is kept so. Draws that change nothing (a partition already in
    place) count as disabled attempts, not steps. False when nothing is enabled."""
    for _ in range(MAX_ATTEMPTS):
        if features & FULL_CHECKS:
            enabled_masks(w, masks, features)
        if not draw_action(w, masks, act, features):
            return False
        t = touched_node(w, act[0], act[1])
        if do_action(w, act[0], act[1], act[2], features):
            act[3] = t
            update_masks(w, masks, t, features)
            return True
        w.scal[S_DISABLED] += 1
    return False
