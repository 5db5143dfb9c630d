"""The kernel's action encoding for message actions (a modelling convention, mirrored).

A recorded DELIVER / LOSE / DUPLICATE action is ``(family, slot, fingerprint)``:
the fingerprint is a content key of the message (type, ends, epoch and the first
payload fields of the kernel's message row; not its slot, not its correlation
id), so that a delivery still names the same message when a shrunk trace leaves
out earlier actions. The action applies to ``slot`` if the message there has the
fingerprint, else to the first message that has it; it is disabled if none has.

Reproducing the key needs the kernel's row layout of each message type (the
``F_*`` field constants, the values unused fields hold) and SplitMix64's
finaliser; both are spelled out here in plain Python.
"""
from __future__ import annotations

from kraftwalk.kernels.layout import (
    BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, END_QUORUM_EPOCH_REQUEST,
    END_QUORUM_EPOCH_RESPONSE, FETCH_REQUEST, FETCH_RESPONSE, F_BASE_OFFSET, F_CORR,
    F_DIVERGING_END, F_DIVERGING_EPOCH, F_ERROR, F_FETCH_OFFSET, F_GRANTED, F_HW, F_LAST_EPOCH,
    F_LAST_FETCHED_EPOCH, F_LAST_OFFSET, F_LEADER, F_N_RECORDS, F_PRE_VOTE, F_REQ_LEADER,
    F_SUCCESSORS, MSG_WIDTH, VOTE_REQUEST, VOTE_RESPONSE,
)

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1


def mix64(z: int) -> int:
    """SplitMix64's finaliser (Steele, Lea and Flood 2014) on 64-bit unsigned ints."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def payload_fields(msg) -> list:
    """The kernel row's fields F_CORR+1 .. MSG_WIDTH-1 for ``msg`` (unused ones hold 0)."""
    row = [0] * MSG_WIDTH
    t = msg.type
    if t == VOTE_REQUEST:
        row[F_LAST_EPOCH] = msg.last_epoch
        row[F_LAST_OFFSET] = msg.last_offset
        row[F_PRE_VOTE] = int(msg.pre_vote)
    elif t == VOTE_RESPONSE:
        row[F_ERROR] = msg.error
        row[F_LEADER] = msg.leader
        row[F_PRE_VOTE] = int(msg.pre_vote)
        row[F_GRANTED] = int(msg.granted)
    elif t == BEGIN_QUORUM_EPOCH_REQUEST:
        row[F_REQ_LEADER] = msg.req_leader
    elif t == END_QUORUM_EPOCH_REQUEST:
        row[F_REQ_LEADER] = msg.req_leader
        row[F_SUCCESSORS] = sum(1 << j for j in msg.successors)
    elif t in (BEGIN_QUORUM_EPOCH_RESPONSE, END_QUORUM_EPOCH_RESPONSE):
        row[F_ERROR] = msg.error
        row[F_LEADER] = msg.leader
    elif t == FETCH_REQUEST:
        row[F_FETCH_OFFSET] = msg.fetch_offset
        row[F_LAST_FETCHED_EPOCH] = msg.last_fetched_epoch
    elif t == FETCH_RESPONSE:
        row[F_ERROR] = msg.error
        row[F_LEADER] = msg.leader
        row[F_HW] = msg.hw
        if msg.diverging is not None:
            row[F_DIVERGING_EPOCH], row[F_DIVERGING_END] = msg.diverging
        elif msg.error == 0:
            row[F_DIVERGING_EPOCH], row[F_DIVERGING_END] = -1, -1
            row[F_BASE_OFFSET] = msg.base_offset
            row[F_N_RECORDS] = len(msg.records)
        else:
            row[F_DIVERGING_EPOCH] = -1
    return row[F_CORR + 1:]


def message_fingerprint(msg) -> int:
    h = msg.type | (msg.src << 4) | (msg.dst << 8) | ((msg.epoch & MASK32) << 12)
    for x in payload_fields(msg):
        h = mix64(h ^ (x & MASK32))
    return h >> 2
