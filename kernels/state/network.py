"""The network of a walk: a bag of in-flight messages in fixed slots.

Messages occupy rows [0, n_msgs) of ``msgs``; any of them may be delivered
next, which gives reordering for free. Removing a message moves the last row
into its place. The extra last row of ``msgs`` is scratch: the message being
handled is copied there first, so handlers may send new messages freely.
"""
from ..jit import kernel

from .layout import (
    F_DST, F_EPOCH, F_SRC, F_TYPE, LINKS, N_MSGS, S_MSGS_DROPPED_FULL, S_MSGS_DUPLICATED,
    S_MSGS_LOST, S_MSGS_SENT,
)


@kernel
def capacity(w):
    return w.msgs.shape[0] - 1


@kernel
def link_up(w, src, dst):
    return (w.node[LINKS, src] >> dst) & 1


@kernel
def new_message(w, mtype, src, dst, epoch):
    """Open a message row and fill its header; -1 if it was dropped.

    A message over a cut link is lost; one that finds the network full is
    dropped and counted (the bound is part of the model, not an error).
    """
    w.scal[S_MSGS_SENT] += 1
    if not link_up(w, src, dst):
        w.scal[S_MSGS_LOST] += 1
        return -1
    k = w.scal[N_MSGS]
    if k >= capacity(w):
        w.scal[S_MSGS_DROPPED_FULL] += 1
        return -1
    row = w.msgs[k]
    for f in range(row.shape[0]):
        row[f] = 0
    row[F_TYPE] = mtype
    row[F_SRC] = src
    row[F_DST] = dst
    row[F_EPOCH] = epoch
    w.scal[N_MSGS] = k + 1
    return k


@kernel
def copy_row(a, src, dst):
    for f in range(a.shape[1]):
        a[dst, f] = a[src, f]


@kernel
def remove_message(w, k):
    last = w.scal[N_MSGS] - 1
    if k != last:
        copy_row(w.msgs, last, k)
    w.scal[N_MSGS] = last


@kernel
def take_message(w, k):
    """Move message k into the scratch row and out of the bag; returns the scratch row index."""
    s = capacity(w)
    copy_row(w.msgs, k, s)
    remove_message(w, k)
    return s


@kernel
def duplicate_message(w, k):
    n = w.scal[N_MSGS]
    if n >= capacity(w):
        return False
    copy_row(w.msgs, k, n)
    w.scal[N_MSGS] = n + 1
    w.scal[S_MSGS_DUPLICATED] += 1
    return True
