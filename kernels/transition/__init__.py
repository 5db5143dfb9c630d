"""The transition relation: what may happen next in a walk, and what it does (the
environment's half, crashes, restarts, partitions and disk loss, is in :mod:`.faults`).

An action is (family, a, b). For each action family one rule says when node i may
take it (:func:`node_family_enabled`); the chooser's masks (:func:`node_masks`) and
replay's check of a recorded action (:func:`action_enabled`) are both derived from
it. :func:`do_action` applies an enabled action by calling the handler named after
the Kafka step it models. What is chosen, and how, is the chooser's business
(:mod:`..choosers`); nothing here draws a random number.
"""
import numpy as np

from kraftwalk.vocabulary.families import FAMILIES, FAMILY_ID, FAMILY_NAMES, N_BASE_FAMILIES

from ..jit import kernel

from ..protocol.election import (
    election_timeout_enabled, handle_vote_request, handle_vote_response, on_election_timeout,
    send_vote_request,
)
from .faults import (
    change_partition, crash_node, duplicate, lose_disk, lose_disk_enabled, lose_message,
    restart_node,
)
from ..features import DISK_LOSS, KAFKA_17030, RECONFIG, SNAPSHOTS
from ..state.layout import (
    ACKED_MASK, BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, CANDIDATE,
    END_QUORUM_EPOCH_REQUEST, END_QUORUM_EPOCH_RESPONSE, FETCH_REQUEST, FETCH_RESPONSE,
    FETCH_SNAPSHOT_REQUEST, FETCH_SNAPSHOT_RESPONSE, FETCHING_END,
    FOLLOWER, F_CORR, F_DST, F_EPOCH, F_SRC, F_TYPE, GRANTED, LEADER, LEADER_ID, LOG_END,
    FINGERPRINT_WIDTH, N_MSGS, PROSPECTIVE, P_NODES, REJECTED, RESIGNED, ROLE,
    S_MSGS_LOST, UNATTACHED, UP, VOTE_REQUEST, VOTE_RESPONSE, DELIVERED, FAMILY_COUNT,
)
from ..state.network import capacity, link_up, take_message
from ..protocol.quorum_epoch import (
    handle_begin_quorum_epoch_request, handle_begin_quorum_epoch_response,
    handle_end_quorum_epoch_request, handle_end_quorum_epoch_response, send_begin_quorum_epoch,
    send_end_quorum_epoch,
)
from ..protocol.replication import (
    check_quorum_enabled, check_quorum_expired, finish_poll, client_append, client_append_enabled,
    flush_enabled, flush_log, handle_fetch_request, handle_fetch_response, resign,
    send_fetch_request,
)
from ..protocol.quorum_state import vote_rejected
from ..protocol.reconfig import (
    add_voter_targets, handle_add_voter_request, handle_remove_voter_request,
    remove_voter_targets,
)
from ..state.rng import mix64
from ..protocol.snapshots import (
    create_snapshot, create_snapshot_enabled, delete_before_snapshot,
    delete_before_snapshot_enabled, handle_fetch_snapshot_request,
    handle_fetch_snapshot_response, send_fetch_snapshot_request,
)
from ..state.voters import is_voter, other_voters

# Action family ids, named for the code below: the registry's order
# (kraftwalk.vocabulary.families, where each family is declared with its weight).
FAM_TIMEOUT = FAMILY_ID["timeout"]              # an election / fetch timer expires
FAM_DELIVER = FAMILY_ID["deliver"]              # deliver one in-flight message
FAM_SEND = FAMILY_ID["send"]                    # a node sends the request its role calls for
FAM_CLIENT_APPEND = FAMILY_ID["client_append"]  # the leader appends a client record
FAM_FLUSH = FAMILY_ID["flush"]                  # a node flushes its log
FAM_CHECK_QUORUM = FAMILY_ID["check_quorum"]    # the leader's check-quorum timer expires
FAM_RESIGN = FAMILY_ID["resign"]                # the leader resigns gracefully
FAM_CRASH = FAMILY_ID["crash"]
FAM_RESTART = FAMILY_ID["restart"]
FAM_PARTITION = FAMILY_ID["partition"]          # cut or heal links
FAM_LOSE = FAMILY_ID["lose"]                    # an in-flight message is lost
FAM_DUPLICATE = FAMILY_ID["duplicate"]          # an in-flight message is duplicated
FAM_SNAPSHOT = FAMILY_ID["snapshot"]            # a node snapshots its log up to its HW
FAM_CLEAN = FAMILY_ID["clean"]                  # a node deletes its log below its snapshot
FAM_ADD_VOTER = FAMILY_ID["add_voter"]          # leader a adds node b to the voters
FAM_REMOVE_VOTER = FAMILY_ID["remove_voter"]    # leader a removes voter b
FAM_DISK_LOSS = FAMILY_ID["disk_loss"]          # node a loses its disk and starts empty
N_FAMILIES = len(FAMILY_NAMES)

# Families whose actions name a node (a); the others act on the network.
NODE_FAMILIES = tuple(k for k, f in enumerate(FAMILIES) if f.acts_on != "network")
# Node families whose action also names a second node (b), drawn from node_targets.
TARGET_FAMILIES = tuple(k for k, f in enumerate(FAMILIES) if f.acts_on == "node pair")


@kernel
def n_families(features):
    """The families a walk with these features can take (a compile-time constant)."""
    if features & DISK_LOSS:
        return N_FAMILIES
    if features & RECONFIG:
        return N_FAMILIES
    return FAM_ADD_VOTER if features & SNAPSHOTS else N_BASE_FAMILIES


@kernel
def request_targets(w, a, features):
    """Bitmask of the nodes node a's role would send a request to now."""
    r = w.node[ROLE, a]
    others = other_voters(w, a)
    if w.node[UP, a] == 0:
        return 0
    if r == FOLLOWER:
        ld = w.node[LEADER_ID, a]
        if ld < 0:
            return 0
        if not is_voter(w, a) or features & KAFKA_17030:
            # maybeSendFetchToBestNode: after a request to the leader timed out, a Fetch
            # to any bootstrap voter (a voter from 3.9.1, KAFKA-17030; an observer in
            # every release, and 3.9-4.1's observer whose fetch timeout expired)
            return (1 << ld) | others
        return 1 << ld  # 3.9.0: a voter fetches only from its leader
    if r == UNATTACHED:
        if not features & KAFKA_17030 and is_voter(w, a):
            return 0  # 3.9.0: an Unattached voter only waits for its election timeout
        return others  # discovery: Fetch from any bootstrap voter
    if r == PROSPECTIVE or r == CANDIDATE:
        if vote_rejected(w, a):
            return 0
        return others & ~(w.node[GRANTED, a] | w.node[REJECTED, a])
    if r == LEADER:
        return others  # BeginQuorumEpoch as a heartbeat, to any voter (KAFKA-16536, 3.9)
    if r == RESIGNED:
        return others & ~w.node[ACKED_MASK, a]  # EndQuorumEpoch until acknowledged
    return 0


@kernel
def has_target(f):
    """Does an action of family f name a second node b (TARGET_FAMILIES)?"""
    return f == FAM_SEND or f == FAM_ADD_VOTER or f == FAM_REMOVE_VOTER


@kernel
def node_targets(w, f, a, features):
    """Bitmask of the nodes b that action (f, a, b) of a target family may name now."""
    if f == FAM_SEND:
        return request_targets(w, a, features)
    if f == FAM_ADD_VOTER:
        return add_voter_targets(w, a, features)
    if f == FAM_REMOVE_VOTER:
        return remove_voter_targets(w, a, features)
    return 0


@kernel
def target_enabled(w, f, a, b, features):
    return 0 <= b < w.scal[P_NODES] and (node_targets(w, f, a, features) >> b) & 1 == 1


@kernel
def node_family_enabled(w, f, i, features):
    """The enabledness rule of node family f: may node i take an action of it now?
    (A target family's action also needs its target: :func:`target_enabled`.)"""
    if f == FAM_DISK_LOSS:
        return lose_disk_enabled(w, i, features)
    if w.node[UP, i] == 0:
        return f == FAM_RESTART
    if f == FAM_CRASH:
        return True
    if f == FAM_TIMEOUT:
        return election_timeout_enabled(w, i, features)
    if f == FAM_SEND:
        return request_targets(w, i, features) != 0
    if f == FAM_FLUSH:
        return flush_enabled(w, i)
    if f == FAM_RESIGN:
        return w.node[ROLE, i] == LEADER
    if f == FAM_CLIENT_APPEND:
        return client_append_enabled(w, i) and w.node[LOG_END, i] < w.log.shape[2]
    if f == FAM_CHECK_QUORUM:
        return check_quorum_enabled(w, i, features)
    if f == FAM_SNAPSHOT:
        return create_snapshot_enabled(w, i, features)
    if f == FAM_CLEAN:
        return delete_before_snapshot_enabled(w, i, features)
    if f == FAM_ADD_VOTER:
        return add_voter_targets(w, i, features) != 0
    if f == FAM_REMOVE_VOTER:
        return remove_voter_targets(w, i, features) != 0
    return False


@kernel
def _mark(w, masks, f, i, features):
    if node_family_enabled(w, f, i, features):
        masks[f] |= 1 << i


@kernel
def node_masks(w, masks, i, features):
    """Set node i's bit in the mask of every node family it may act in now. One call
    per family, each with a constant family, so the compiler folds the rule's
    dispatch away (a loop over NODE_FAMILIES would keep it in the hot path)."""
    _mark(w, masks, FAM_TIMEOUT, i, features)
    _mark(w, masks, FAM_SEND, i, features)
    _mark(w, masks, FAM_CLIENT_APPEND, i, features)
    _mark(w, masks, FAM_FLUSH, i, features)
    _mark(w, masks, FAM_CHECK_QUORUM, i, features)
    _mark(w, masks, FAM_RESIGN, i, features)
    _mark(w, masks, FAM_CRASH, i, features)
    _mark(w, masks, FAM_RESTART, i, features)
    if features & SNAPSHOTS:
        _mark(w, masks, FAM_SNAPSHOT, i, features)
        _mark(w, masks, FAM_CLEAN, i, features)
    if features & RECONFIG:
        _mark(w, masks, FAM_ADD_VOTER, i, features)
        _mark(w, masks, FAM_REMOVE_VOTER, i, features)
    if features & DISK_LOSS:
        _mark(w, masks, FAM_DISK_LOSS, i, features)


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
    for f in range(n_families(features)):
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
        for f in range(n_families(features)):
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
    for f in range(F_CORR + 1, FINGERPRINT_WIDTH):
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
        handle_begin_quorum_epoch_request(w, s, features)
    elif t == BEGIN_QUORUM_EPOCH_RESPONSE:
        handle_begin_quorum_epoch_response(w, s)
    elif t == END_QUORUM_EPOCH_REQUEST:
        handle_end_quorum_epoch_request(w, s)
    elif t == END_QUORUM_EPOCH_RESPONSE:
        handle_end_quorum_epoch_response(w, s)
    elif features & SNAPSHOTS and t == FETCH_SNAPSHOT_REQUEST:  # only sent with snapshots
        handle_fetch_snapshot_request(w, s, features)
    elif features & SNAPSHOTS and t == FETCH_SNAPSHOT_RESPONSE:
        handle_fetch_snapshot_response(w, s, features)


@kernel
def send_request(w, a, b, features):
    r = w.node[ROLE, a]
    if (features & SNAPSHOTS and r == FOLLOWER and w.node[FETCHING_END, a] > 0
            and b == w.node[LEADER_ID, a]):
        send_fetch_snapshot_request(w, a, b)  # a snapshot download comes before fetching
    elif r == FOLLOWER or r == UNATTACHED:
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
    if f == FAM_DELIVER or f == FAM_LOSE:
        return 0 <= a < w.scal[N_MSGS] and message_fingerprint(w, a) == b
    if f == FAM_DUPLICATE:
        return (0 <= a < w.scal[N_MSGS] and w.scal[N_MSGS] < capacity(w)
                and message_fingerprint(w, a) == b)
    if f == FAM_PARTITION:
        return 0 <= a < 4
    if a < 0 or a >= w.scal[P_NODES] or not node_family_enabled(w, f, a, features):
        return False
    return not has_target(f) or target_enabled(w, f, a, b, features)


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
        send_request(w, a, b, features)
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
    # a feature's families are never enabled without it; the test on the literal
    # feature mask also keeps their handlers out of the other masks' compiles
    elif features & SNAPSHOTS and f == FAM_SNAPSHOT:
        create_snapshot(w, a, features)
    elif features & SNAPSHOTS and f == FAM_CLEAN:
        delete_before_snapshot(w, a)
    elif features & RECONFIG and f == FAM_ADD_VOTER:
        handle_add_voter_request(w, a, b, features)
    elif features & RECONFIG and f == FAM_REMOVE_VOTER:
        handle_remove_voter_request(w, a, b)
    elif features & DISK_LOSS and f == FAM_DISK_LOSS:
        lose_disk(w, a, features)
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
