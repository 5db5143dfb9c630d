"""BeginQuorumEpoch (a new leader announces itself) and EndQuorumEpoch (a resigned
leader hands over), after KafkaRaftClient's handlers."""
from ..jit import kernel

from ..state.layout import (
    ACKED_MASK, BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, C_NEXT_CORR,
    END_QUORUM_EPOCH_REQUEST, END_QUORUM_EPOCH_RESPONSE, EPOCH, ERR_FENCED_LEADER_EPOCH,
    ERR_NONE, FOLLOWER, F_CORR, F_DST, F_EPOCH, F_ERROR, F_LEADER, F_REQ_LEADER, F_SRC,
    F_SUCCESSORS, INFLIGHT, LEADER, LEADER_ID, PREFERRED, RESIGNED, ROLE, T_GRACEFUL_HANDOVER,
    INTENT_ARG, I_END_EPOCH, DIR, ERR_INVALID_VOTER_KEY, F_VOTER_DIR, F_POSITION, P_NODES,
    REPLICA_END,
)
from ..features import DISK_LOSS
from ..state.coverage import reach
from ..state.network import new_message
from .quorum_state import accept_response, intend, maybe_transition
from ..state.voters import popcount, view_dir


@kernel
def _send_request(w, mtype, i, j):
    k = new_message(w, mtype, i, j, w.node[EPOCH, i])
    w.scal[C_NEXT_CORR] += 1
    w.peer[INFLIGHT, i, j] = w.scal[C_NEXT_CORR]
    if k >= 0:
        w.msgs[k, F_CORR] = w.scal[C_NEXT_CORR]
        w.msgs[k, F_REQ_LEADER] = i
    return k


@kernel
def _respond(w, mtype, s, error):
    m = w.msgs[s]
    i = m[F_DST]
    k = new_message(w, mtype, i, m[F_SRC], w.node[EPOCH, i])
    if k >= 0:
        w.msgs[k, F_CORR] = m[F_CORR]
        w.msgs[k, F_ERROR] = error
        w.msgs[k, F_LEADER] = w.node[LEADER_ID, i]


@kernel
def send_begin_quorum_epoch(w, i, j):
    """The leader announces itself to a voter: its heartbeat (KAFKA-16536, 3.9 on; the
    timed chooser sends it every fetch timeout / 2 to the voters the release names)."""
    k = _send_request(w, BEGIN_QUORUM_EPOCH_REQUEST, i, j)
    if k >= 0:
        w.msgs[k, F_VOTER_DIR] = view_dir(w, i, j)


@kernel
def handle_begin_quorum_epoch_request(w, s, features):
    m = w.msgs[s]
    i = m[F_DST]
    if m[F_EPOCH] < w.node[EPOCH, i]:
        _respond(w, BEGIN_QUORUM_EPOCH_RESPONSE, s, ERR_FENCED_LEADER_EPOCH)
        return
    maybe_transition(w, i, m[F_REQ_LEADER], m[F_EPOCH])
    if features & DISK_LOSS and m[F_VOTER_DIR] != w.node[DIR, i]:
        # the leader's voter set names another directory id for this id: not an
        # acknowledgement (the node follows the leader all the same, as an observer)
        _respond(w, BEGIN_QUORUM_EPOCH_RESPONSE, s, ERR_INVALID_VOTER_KEY)
        return
    _respond(w, BEGIN_QUORUM_EPOCH_RESPONSE, s, ERR_NONE)


@kernel
def handle_begin_quorum_epoch_response(w, s):
    m = w.msgs[s]
    i = m[F_DST]
    src = m[F_SRC]
    if not accept_response(w, s):
        return
    if w.node[ROLE, i] == LEADER:
        w.node[ACKED_MASK, i] |= 1 << src  # addAcknowledgementFrom


@kernel
def successor_position(w, i, j):
    """Voter j's place in resigned leader i's preferred successors, which Kafka orders
    by descending fetch offset, ties (and voters that never fetched, last) by node id
    (LeaderState.nonLeaderVotersByDescendingFetchOffset); the list's length if j is
    not in it. A Resigned node's replica states are those it had as leader."""
    mask = w.node[PREFERRED, i]
    if not (mask >> j) & 1:
        return popcount(mask)
    mine = w.peer[REPLICA_END, i, j]
    ahead = 0
    for m in range(w.scal[P_NODES]):
        if m != j and (mask >> m) & 1:
            theirs = w.peer[REPLICA_END, i, m]
            if theirs > mine or (theirs == mine and m < j):
                ahead += 1
    return ahead


@kernel
def send_end_quorum_epoch(w, i, j):
    """A resigned leader tells a voter that has not acknowledged yet, naming its
    preferred successors (their order only shortens timers: timing, not safety)."""
    k = _send_request(w, END_QUORUM_EPOCH_REQUEST, i, j)
    if k >= 0:
        w.msgs[k, F_SUCCESSORS] = w.node[PREFERRED, i]
        w.msgs[k, F_POSITION] = successor_position(w, i, j)


@kernel
def handle_end_quorum_epoch_request(w, s):
    m = w.msgs[s]
    i = m[F_DST]
    if m[F_EPOCH] < w.node[EPOCH, i]:
        _respond(w, END_QUORUM_EPOCH_RESPONSE, s, ERR_FENCED_LEADER_EPOCH)
        return
    leader = m[F_REQ_LEADER]
    reach(w, T_GRACEFUL_HANDOVER, 0)
    maybe_transition(w, i, leader, m[F_EPOCH])
    if w.node[ROLE, i] == FOLLOWER and w.node[LEADER_ID, i] == leader:
        # overrideFetchTimeout: a preferred successor's fetch timer is cut short.
        w.node[PREFERRED, i] = (m[F_SUCCESSORS] >> i) & 1
        w.node[INTENT_ARG, i] = (m[F_POSITION] << 8) | popcount(m[F_SUCCESSORS])
        intend(w, i, I_END_EPOCH)
    _respond(w, END_QUORUM_EPOCH_RESPONSE, s, ERR_NONE)


@kernel
def handle_end_quorum_epoch_response(w, s):
    m = w.msgs[s]
    i = m[F_DST]
    src = m[F_SRC]
    if not accept_response(w, s):
        return
    if w.node[ROLE, i] == RESIGNED:
        w.node[ACKED_MASK, i] |= 1 << src  # acknowledgeResignation
