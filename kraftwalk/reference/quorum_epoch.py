"""BeginQuorumEpoch (a new leader announces itself) and EndQuorumEpoch (a resigned leader
hands over), after KafkaRaftClient's handlers."""
from __future__ import annotations

from kraftwalk.kernels.features import DISK_LOSS
from kraftwalk.kernels.state.layout import (
    BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, END_QUORUM_EPOCH_REQUEST,
    END_QUORUM_EPOCH_RESPONSE, ERR_FENCED_LEADER_EPOCH, ERR_INVALID_VOTER_KEY, ERR_NONE,
    FOLLOWER, LEADER, RESIGNED,
)

from .quorum_state import maybe_handle_common_response, maybe_transition
from .state import Message
from .voters import view_dir


def _respond(c, node, request: Message, mtype: int, error: int) -> None:
    c.send(Message(mtype, node.id, request.src, node.epoch, request.corr, error=error,
                   leader=-1 if node.leader_id is None else node.leader_id))


def send_begin_quorum_epoch(c, node, j: int) -> None:
    """The leader (re)announces itself to a voter that has not acknowledged it yet, naming
    the voter's key as its voter set has it."""
    c.next_corr += 1
    c.send(Message(BEGIN_QUORUM_EPOCH_REQUEST, node.id, j, node.epoch, c.next_corr,
                   req_leader=node.id, voter_dir=view_dir(c, node, j)))
    node.inflight[j] = c.next_corr


def handle_begin_quorum_epoch_request(c, msg: Message) -> None:
    """validateVoterOnlyRequest, then maybeTransition(leader, epoch), then isValidVoterKey:
    a node whose disk was replaced follows the leader all the same, but does not
    acknowledge it as the voter the leader named."""
    node = c.nodes[msg.dst]
    if msg.epoch < node.epoch:
        _respond(c, node, msg, BEGIN_QUORUM_EPOCH_RESPONSE, ERR_FENCED_LEADER_EPOCH)
        return
    maybe_transition(c, node, msg.req_leader, msg.epoch)
    if c.features & DISK_LOSS and msg.voter_dir != node.dir:
        _respond(c, node, msg, BEGIN_QUORUM_EPOCH_RESPONSE, ERR_INVALID_VOTER_KEY)
        return
    _respond(c, node, msg, BEGIN_QUORUM_EPOCH_RESPONSE, ERR_NONE)


def handle_begin_quorum_epoch_response(c, msg: Message) -> None:
    node = c.nodes[msg.dst]
    if not c.expect_response(node, msg):
        return
    if maybe_handle_common_response(c, node, msg.error, msg.leader, msg.epoch):
        return
    if msg.error == ERR_NONE and node.role == LEADER:
        node.acked.add(msg.src)   # addAcknowledgementFrom


def successor_position(node, j: int) -> int:
    """j's place in the ordered successor list; the list's length if j is absent."""
    order = node.successors
    return order.index(j) if j in order else len(order)


def send_end_quorum_epoch(c, node, j: int) -> None:
    """A resigned leader tells a voter that has not acknowledged yet, naming its preferred
    successors (whose fetch timers it cuts short: timing, not safety)."""
    c.next_corr += 1
    c.send(Message(END_QUORUM_EPOCH_REQUEST, node.id, j, node.epoch, c.next_corr,
                   req_leader=node.id, successors=frozenset(node.successors),
                   position=successor_position(node, j)))
    node.inflight[j] = c.next_corr


def handle_end_quorum_epoch_request(c, msg: Message) -> None:
    node = c.nodes[msg.dst]
    if msg.epoch < node.epoch:
        _respond(c, node, msg, END_QUORUM_EPOCH_RESPONSE, ERR_FENCED_LEADER_EPOCH)
        return
    maybe_transition(c, node, msg.req_leader, msg.epoch)
    if node.role == FOLLOWER and node.leader_id == msg.req_leader:
        # overrideFetchTimeout: a preferred successor's fetch timer is cut short
        node.preferred = node.id in msg.successors
    _respond(c, node, msg, END_QUORUM_EPOCH_RESPONSE, ERR_NONE)


def handle_end_quorum_epoch_response(c, msg: Message) -> None:
    node = c.nodes[msg.dst]
    if not c.expect_response(node, msg):
        return
    if maybe_handle_common_response(c, node, msg.error, msg.leader, msg.epoch):
        return
    if msg.error == ERR_NONE and node.role == RESIGNED:
        node.acked.add(msg.src)   # acknowledgeResignation
