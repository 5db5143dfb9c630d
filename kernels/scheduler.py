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
    send_vote_request, send_vote_request_enabled,
)
from .faults import change_partition, crash_node, duplicate, lose_message, restart_node
from .layout import (
    BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, END_QUORUM_EPOCH_REQUEST,
    END_QUORUM_EPOCH_RESPONSE, F_DST, F_SRC, F_TYPE, FETCH_REQUEST, FETCH_RESPONSE, FOLLOWER,
    LEADER, P_NODES, PROSPECTIVE, CANDIDATE, RESIGNED, S_DISABLED, S_MSGS_LOST, UNATTACHED,
    VOTE_REQUEST, VOTE_RESPONSE,
)
from .network import capacity, link_up, take_message
from .quorum_epoch import (
    handle_begin_quorum_epoch_request, handle_begin_quorum_epoch_response,
    handle_end_quorum_epoch_request, handle_end_quorum_epoch_response, send_begin_quorum_epoch,
    send_begin_quorum_epoch_enabled, send_end_quorum_epoch, send_end_quorum_epoch_enabled,
)
from .replication import (
    check_quorum_enabled, check_quorum_expired, client_append, client_append_enabled,
    fetch_target, flush_enabled, flush_log, handle_fetch_request, handle_fetch_response, resign,
    send_fetch_request,
)
from .rng import rand_below, rand_unit

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
# faults are rare enough for elections to finish.
DEFAULT_WEIGHTS = np.array(
    [1.0, 12.0, 8.0, 2.0, 2.0, 0.3, 0.1, 0.2, 1.0, 0.3, 0.5, 0.3], dtype=np.float64)
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
            if OMITTABLE[f] == 1 and rand_unit(w.rng) < OMIT_PROBABILITY:
                x = 0.0
            else:
                x = x * np.exp(SPREAD * (2.0 * rand_unit(w.rng) - 1.0))
        w.weights[f] = x
        total += x
        w.cum_weights[f] = total


@kernel(inline="always")
def pick_family(w):
    x = rand_unit(w.rng) * w.cum_weights[w.cum_weights.shape[0] - 1]
    f = 0
    while f < w.cum_weights.shape[0] - 1 and w.cum_weights[f] <= x:
        f += 1
    return f


@kernel
def send_enabled(w, a, b):
    """Can node a send its role's request to node b?"""
    r = w.role[a]
    if w.up[a] == 0:
        return False
    if r == FOLLOWER or r == UNATTACHED:
        return b == fetch_target(w, a, b) and b >= 0
    if r == PROSPECTIVE or r == CANDIDATE:
        return send_vote_request_enabled(w, a, b)
    if r == LEADER:
        return send_begin_quorum_epoch_enabled(w, a, b)
    if r == RESIGNED:
        return send_end_quorum_epoch_enabled(w, a, b)
    return False


@kernel
def pick_send_target(w, a, r):
    """A target for node a's request, uniformly among the enabled ones; -1 if none."""
    n = w.params[P_NODES]
    role = w.role[a]
    if role == FOLLOWER or role == UNATTACHED:
        return fetch_target(w, a, r)
    count = 0
    for b in range(n):
        if send_enabled(w, a, b):
            count += 1
    if count == 0:
        return -1
    pick = r % count
    for b in range(n):
        if send_enabled(w, a, b):
            if pick == 0:
                return b
            pick -= 1
    return -1


@kernel
def deliver_message(w, k, features):
    """Deliver in-flight message k to its destination's handler."""
    s = take_message(w, k)
    m = w.msgs[s]
    dst = m[F_DST]
    if w.up[dst] == 0 or not link_up(w, m[F_SRC], dst):
        w.stats[S_MSGS_LOST] += 1  # to a crashed node, or over a link cut since it was sent
        return
    t = m[F_TYPE]
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
    r = w.role[a]
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
    n = w.params[P_NODES]
    if f == FAM_DELIVER or f == FAM_LOSE:
        return 0 <= a < w.n_msgs[0]
    if f == FAM_DUPLICATE:
        return 0 <= a < w.n_msgs[0] and w.n_msgs[0] < capacity(w)
    if f == FAM_PARTITION:
        return 0 <= a < 4
    if a < 0 or a >= n:
        return False
    if f == FAM_TIMEOUT:
        return election_timeout_enabled(w, a)
    if f == FAM_SEND:
        return 0 <= b < n and send_enabled(w, a, b)
    if f == FAM_CLIENT_APPEND:
        return client_append_enabled(w, a) and w.log_end[a] < w.log_epoch.shape[1]
    if f == FAM_FLUSH:
        return flush_enabled(w, a)
    if f == FAM_CHECK_QUORUM:
        return check_quorum_enabled(w, a, features)
    if f == FAM_RESIGN:
        return w.up[a] == 1 and w.role[a] == LEADER
    if f == FAM_CRASH:
        return w.up[a] == 1
    if f == FAM_RESTART:
        return w.up[a] == 0
    return False


@kernel
def apply_action(w, f, a, b, features):
    """Apply action (f, a, b). Returns False, changing nothing, if it is not enabled."""
    if not action_enabled(w, f, a, b, features):
        return False
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
        return change_partition(w, a, b)
    elif f == FAM_LOSE:
        lose_message(w, a)
    elif f == FAM_DUPLICATE:
        duplicate(w, a)
    return True


@kernel
def draw_action(w, act):
    """Draw a family by weight, then its parameters; fills act = (f, a, b)."""
    f = pick_family(w)
    n = w.params[P_NODES]
    a = 0
    b = 0
    if f == FAM_DELIVER or f == FAM_LOSE or f == FAM_DUPLICATE:
        nm = w.n_msgs[0]
        a = rand_below(w.rng, nm) if nm > 0 else -1
    elif f == FAM_PARTITION:
        a = rand_below(w.rng, 4)
        b = rand_below(w.rng, 1 << 30)
    else:
        a = rand_below(w.rng, n)
        if f == FAM_SEND:
            b = pick_send_target(w, a, rand_below(w.rng, 1 << 30))
    act[0] = f
    act[1] = a
    act[2] = b


@kernel
def step(w, act, features):
    """Draw until an enabled action applies (disabled draws are counted, not steps).
    Returns False when nothing was enabled in MAX_ATTEMPTS draws."""
    for _ in range(MAX_ATTEMPTS):
        draw_action(w, act)
        if apply_action(w, act[0], act[1], act[2], features):
            return True
        w.stats[S_DISABLED] += 1
    return False
