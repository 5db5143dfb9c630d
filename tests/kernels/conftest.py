"""Shared helpers for the kernel tests.

Every test drives the real Numba kernels: a walk is built with ``new_walk``,
optionally edited by hand (its arrays are plain NumPy arrays), then moved on
with explicit actions through ``apply_and_check`` or checked directly with
``check_invariants``.

Feature masks are compile-time literals, and each distinct value costs a
compile: the whole suite uses only the handful defined here.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from kraftwalk.kernels.properties import checkers
from kraftwalk.kernels.properties.checkers import ALL_CHECKS, INVARIANT_NAMES
from kraftwalk.kernels.features import (
    DISK_LOSS, MUT_COMMIT_OLD_EPOCH, MUT_DOUBLE_VOTE, MUT_NO_CHECK_QUORUM, MUT_RESTARTED_LEADER,
    KAFKA_17030, KAFKA_17642, MUT_WIPED_SAME_ID, PRE_VOTE, RECONFIG, SNAPSHOTS,
)
from kraftwalk.kernels.state.layout import (
    BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, CANDIDATE, DIRTY_FROM, ENTRY_EPOCH,
    ENTRY_VALUE, EPOCH, FETCH_REQUEST, FETCH_RESPONSE, FLUSHED_END, FOLLOWER, F_DST, F_SRC,
    F_TYPE, LEADER, LOG_END, MSG_NAMES, N_MSGS, PROSPECTIVE, ROLE, ROLE_NAMES, V_EPOCH,
    V_INVARIANT, V_NODE_A, V_NODE_B, V_OFFSET, VOTE_REQUEST, VOTE_RESPONSE, make_params,
)
from kraftwalk.kernels.state.log import append_entry, truncate_to
from kraftwalk.kernels.transition import (
    FAM_DELIVER, FAM_DUPLICATE, FAM_FLUSH, FAM_LOSE, FAM_SEND, FAM_TIMEOUT
)
from kraftwalk.kernels.drivers.trace import apply_and_check, new_walk

try:  # message actions name their message by a content fingerprint in b (newer kernels)
    from kraftwalk.kernels.transition import message_fingerprint as _fingerprint
except ImportError:  # older kernels ignore b for message actions
    _fingerprint = None

# ---- the only feature masks the suite compiles --------------------------------------
F = PRE_VOTE | KAFKA_17642 | KAFKA_17030 | ALL_CHECKS  # Kafka 4.0 and later: every check
F_NOPV = ALL_CHECKS  # Kafka 3.9.0: no pre-vote, no vote kept, Unattached voters only wait
F_DOUBLE_VOTE = F | MUT_DOUBLE_VOTE
F_COMMIT_OLD_EPOCH = F | MUT_COMMIT_OLD_EPOCH
F_RESTARTED_LEADER = F | MUT_RESTARTED_LEADER
F_NO_CHECK_QUORUM = F | MUT_NO_CHECK_QUORUM
F_SNAPSHOTS = F | SNAPSHOTS          # snapshots on (KIP-630), and their invariants checked
F_RECONFIG = F | RECONFIG            # voter changes on (KIP-853), and their invariants checked
F_DISK_LOSS = F_RECONFIG | DISK_LOSS  # and disk loss, with directory ids
F_WIPED_SAME_ID = F_DISK_LOSS | MUT_WIPED_SAME_ID  # disk loss without directory ids


def params(voters=3, observers=1, log_capacity=16, msg_slots=16, max_epoch=20, max_records=4,
           depth=200, snapshots=False):
    return make_params(voters, observers, log_capacity, msg_slots, max_epoch, max_records, depth,
                       snapshots)


def fresh(voters=3, observers=1, **kw):
    """A walk in its initial state: every node Unattached in epoch 0, links up."""
    return new_walk(params(voters, observers, **kw))


# ---- invariant checks on crafted states ---------------------------------------------
def check(w, checks=ALL_CHECKS):
    """Run check_invariants on ``w`` as it is; return the recorded first violation as
    (invariant id or None, node_a, node_b, epoch, offset)."""
    checkers.check_invariants(w, int(checks))
    return violation(w)


def violation(w):
    v = int(w.scal[V_INVARIANT])
    return (None if v == 0 else v - 1, int(w.scal[V_NODE_A]), int(w.scal[V_NODE_B]),
            int(w.scal[V_EPOCH]), int(w.scal[V_OFFSET]))


def name_of(inv):
    return "none" if inv is None else INVARIANT_NAMES[inv]


def voters_record(mask, serial=0):
    """The value of a VotersRecord naming the voter set ``mask`` (layout: VOTERS_TAG)."""
    from kraftwalk.kernels.state.layout import SERIAL_MASK, VOTERS_SHIFT, VOTERS_TAG
    return -(VOTERS_TAG | (mask << VOTERS_SHIFT) | (serial & SERIAL_MASK))


def set_log(w, i, entries):
    """Replace node i's log with ``entries`` [(epoch, value), ...] through the log kernels,
    so that prefix hashes and DIRTY_FROM stay right. The log counts as flushed."""
    truncate_to(w, i, 0)
    for e, v in entries:
        assert append_entry(w, i, e, v)
    w.node[FLUSHED_END, i] = w.node[LOG_END, i]


def craft(w, i, role=None, epoch=None, voted=None, leader=None, hw=None, log=None,
          flushed=None, **fields):
    """Edit node i's fields by hand (``fields``: other node rows by name, e.g.
    EPOCH_START=2). ``log`` replaces its log (see set_log)."""
    from kraftwalk.kernels.state import layout
    for row, value in ((ROLE, role), (EPOCH, epoch), (layout.VOTED_ID, voted),
                       (layout.LEADER_ID, leader), (layout.HW, hw)):
        if value is not None:
            w.node[row, i] = value
    if log is not None:
        set_log(w, i, log)
    if flushed is not None:
        w.node[FLUSHED_END, i] = flushed
    for name, value in fields.items():
        w.node[getattr(layout, name), i] = value
    return w


def settle(w):
    """Check a hand-built state in full (this also records the ghost history the
    later checks compare against and clears the written-this-step marks): it must
    be a legal state."""
    got = check(w, ALL_CHECKS)
    assert got[0] is None, f"crafted state already violates {name_of(got[0])}: {got}"
    return w


def copy_walk(w):
    return type(w)(*(a.copy() for a in w))


def log_of(w, i):
    n = int(w.node[LOG_END, i])
    return [(int(w.log[ENTRY_EPOCH, i, k]), int(w.log[ENTRY_VALUE, i, k])) for k in range(n)]


def clean(w):
    """Forget what the current step wrote (as check_invariants does at its end)."""
    w.node[DIRTY_FROM, :] = w.log.shape[2]


# ---- the network ----------------------------------------------------------------------
def msgs(w, mtype=None, src=None, dst=None):
    """Rows of the in-flight messages matching the filters (rows move when one leaves)."""
    out = []
    for k in range(int(w.scal[N_MSGS])):
        m = w.msgs[k]
        if ((mtype is None or m[F_TYPE] == mtype) and (src is None or m[F_SRC] == src)
                and (dst is None or m[F_DST] == dst)):
            out.append(k)
    return out


def message_action(w, family, row):
    """The action (family, row, b) that delivers / loses / duplicates message ``row``."""
    b = int(_fingerprint(w, row)) if _fingerprint is not None else 0
    return (family, row, b)


def msg(w, mtype, src, dst):
    """The one in-flight message (a copy of its row) of that type from src to dst."""
    rows = msgs(w, mtype, src, dst)
    assert len(rows) == 1, f"expected one {MSG_NAMES[mtype]} {src}->{dst}, found {len(rows)}"
    return w.msgs[rows[0]].copy()


def describe(w):
    roles = [ROLE_NAMES[r] for r in w.node[ROLE]]
    net = [(MSG_NAMES[w.msgs[k, F_TYPE]], int(w.msgs[k, F_SRC]), int(w.msgs[k, F_DST]))
           for k in range(int(w.scal[N_MSGS]))]
    return f"roles={roles} epochs={w.node[EPOCH].tolist()} msgs={net}"


# ---- driving the protocol with explicit actions ---------------------------------------
def act(w, action, features=F, expect=0):
    """Apply one action; by default it must be enabled and break no invariant."""
    r = apply_and_check(w, action, features)
    if expect is not None:
        assert r == expect, (
            f"action {action}: got {r} ({name_of(r - 1) if r > 0 else r}), want {expect}; "
            f"{describe(w)}; violation={violation(w)}")
    return r


def timeout(w, i, features=F, expect=0):
    return act(w, (FAM_TIMEOUT, i, 0), features, expect)


def send(w, a, b, features=F, expect=0):
    return act(w, (FAM_SEND, a, b), features, expect)


def flush(w, i, features=F, expect=0):
    return act(w, (FAM_FLUSH, i, 0), features, expect)


def deliver(w, mtype, src, dst, features=F, expect=0, which=0):
    """Deliver the in-flight message of that type from src to dst (the ``which``-th one)."""
    rows = msgs(w, mtype, src, dst)
    assert len(rows) > which, f"no {MSG_NAMES[mtype]} {src}->{dst} in flight; {describe(w)}"
    return act(w, message_action(w, FAM_DELIVER, rows[which]), features, expect)


def duplicate(w, mtype, src, dst, features=F, expect=0):
    rows = msgs(w, mtype, src, dst)
    assert rows, f"no {MSG_NAMES[mtype]} {src}->{dst} in flight; {describe(w)}"
    return act(w, message_action(w, FAM_DUPLICATE, rows[0]), features, expect)


def lose(w, mtype, src, dst, features=F, expect=0):
    rows = msgs(w, mtype, src, dst)
    assert rows, f"no {MSG_NAMES[mtype]} {src}->{dst} in flight; {describe(w)}"
    return act(w, message_action(w, FAM_LOSE, rows[0]), features, expect)


def request(w, a, b, req, resp, features=F):
    """a sends its request to b, b handles it, a handles the response."""
    send(w, a, b, features)
    deliver(w, req, a, b, features)
    deliver(w, resp, b, a, features)


def vote_round(w, a, b, features=F):
    request(w, a, b, VOTE_REQUEST, VOTE_RESPONSE, features)


def fetch_round(w, a, b, features=F):
    request(w, a, b, FETCH_REQUEST, FETCH_RESPONSE, features)


def begin_round(w, leader, b, features=F):
    request(w, leader, b, BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, features)


def elect(w, leader, voters_asked, features=F):
    """Elect ``leader`` by explicit actions: its timer fires, it asks ``voters_asked`` in
    turn (pre-votes first when pre-vote is on) until it leads."""
    timeout(w, leader, features)
    for phase in (PROSPECTIVE, CANDIDATE):
        for j in voters_asked:
            if w.node[ROLE, leader] != phase:
                break
            vote_round(w, leader, j, features)
    assert w.node[ROLE, leader] == LEADER, describe(w)


def cluster_with_leader(features=F, **kw):
    """3 voters + 1 observer: node 0 leads epoch 1 (voted for by 1), voters 1 and 2 follow it
    (BeginQuorumEpoch acknowledged); the observer (3) is still Unattached in epoch 0."""
    w = fresh(**kw)
    elect(w, 0, [1, 2], features)
    begin_round(w, 0, 1, features)
    begin_round(w, 0, 2, features)
    assert w.node[ROLE].tolist()[:3] == [LEADER, FOLLOWER, FOLLOWER], describe(w)
    assert w.node[EPOCH].tolist()[:3] == [1, 1, 1]
    return w


@pytest.fixture
def w3():
    """3 voters + 1 observer, all Unattached in epoch 0."""
    return fresh()


@pytest.fixture
def led():
    return cluster_with_leader()



# ---- fresh processes sharing a module and a Numba cache -----------------------------
class ProbeProcesses:
    """Python processes, each fresh, that import a module ``probe`` (its source given)
    and share one Numba cache, both under ``where``: separate runs of a program, as the
    cache sees them."""

    def __init__(self, where, source: str) -> None:
        (where / "probe.py").write_text(source)
        self.where = where
        self.env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(where),
                    "NUMBA_CACHE_DIR": str(where / "cache")}

    def start(self, script: str, *args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", script, *args], env=self.env,
                                cwd=self.where, stderr=subprocess.PIPE, text=True)

    def run(self, script: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", script, *args], env=self.env,
                              cwd=self.where, capture_output=True, text=True, timeout=120)


@pytest.fixture
def probe_processes(tmp_path):
    """``probe_processes(source)``: a :class:`ProbeProcesses` in this test's tmp_path."""
    return lambda source: ProbeProcesses(tmp_path, source)
