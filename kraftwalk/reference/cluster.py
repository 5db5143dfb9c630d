"""ReferenceCluster: the whole simulated cluster, driven one action at a time.

An action is ``(family, a, b)`` (the kernel's encoding, ``kraftwalk.kernels.transition``):

=============  ====================================================================
family         meaning
=============  ====================================================================
TIMEOUT a      node a's election timer (or a follower's fetch timer) expires
DELIVER k      in-flight message k reaches its destination's handler
SEND a b       node a sends node b the request its role calls for
CLIENT_APPEND  leader a appends a client record
FLUSH a        node a flushes its log
CHECK_QUORUM   leader a's check-quorum timer expires: it resigns
RESIGN a       leader a resigns gracefully
CRASH a        node a crashes (its unflushed tail is lost)
RESTART a      node a restarts from its persisted state
PARTITION k r  cut or heal links (k: kind, r: random word picking the nodes)
LOSE k         in-flight message k is lost
DUPLICATE k    in-flight message k is duplicated
SNAPSHOT a     node a snapshots its log up to its HW (with snapshots on)
CLEAN a        node a deletes its log below its latest snapshot (with snapshots on)
ADD_VOTER a b  leader a adds node b to its voters (with voter changes on)
REMOVE_VOTER   leader a removes voter b (with voter changes on)
DISK_LOSS a    node a, up or down, loses its disk and restarts empty under a new
               directory id (with disk loss on)
=============  ====================================================================
"""
from __future__ import annotations

from typing import Optional

from kraftwalk.kernels.features import KAFKA_17030
from kraftwalk.kernels.properties.checkers import INVARIANT_NAMES
from kraftwalk.kernels.state.layout import (
    BEGIN_QUORUM_EPOCH_REQUEST, BEGIN_QUORUM_EPOCH_RESPONSE, BOUND_NONE, CANDIDATE,
    END_QUORUM_EPOCH_REQUEST, END_QUORUM_EPOCH_RESPONSE, FETCH_REQUEST, FETCH_RESPONSE,
    FETCH_SNAPSHOT_REQUEST, FETCH_SNAPSHOT_RESPONSE, FOLLOWER, LEADER, PROSPECTIVE, RESIGNED, STAT_NAMES, UNATTACHED, VOTE_REQUEST,
    VOTE_RESPONSE,
)
from kraftwalk.kernels.transition import (
    FAM_ADD_VOTER, FAM_CHECK_QUORUM, FAM_CLEAN, FAM_CLIENT_APPEND, FAM_CRASH, FAM_DELIVER,
    FAM_DISK_LOSS, FAM_DUPLICATE, FAM_FLUSH, FAM_LOSE, FAM_PARTITION, FAM_REMOVE_VOTER,
    FAM_RESIGN, FAM_RESTART, FAM_SEND, FAM_SNAPSHOT, FAM_TIMEOUT,
)

from . import canonical
from .checkers import History, Violation, check_invariants
from .deviations import check_names
from .encoding import message_fingerprint
from .election import (
    election_timeout_enabled, handle_vote_request, handle_vote_response, on_election_timeout,
    send_vote_request,
)
from .faults import change_partition, crash_node, lose_disk, lose_disk_enabled, restart_node
from .network import Network
from .params import Params
from .quorum_epoch import (
    handle_begin_quorum_epoch_request, handle_begin_quorum_epoch_response,
    handle_end_quorum_epoch_request, handle_end_quorum_epoch_response, send_begin_quorum_epoch,
    send_end_quorum_epoch,
)
from .quorum_state import vote_rejected
from .reconfig import (
    add_voter_targets, handle_add_voter_request, handle_remove_voter_request,
    remove_voter_targets,
)
from .voters import is_voter, latest_voters_record, other_voters, voter_keys, voters
from .replication import (
    check_quorum_enabled, check_quorum_expired, client_append, client_append_enabled,
    finish_poll, flush_enabled, flush_log, handle_fetch_request, handle_fetch_response, resign,
    send_fetch_request,
)
from .snapshots import (
    create_snapshot, create_snapshot_enabled, delete_before_snapshot,
    delete_before_snapshot_enabled, handle_fetch_snapshot_request,
    handle_fetch_snapshot_response, send_fetch_snapshot_request,
)
from .state import Message, Node

# the statistics the kernel also keeps (STAT_NAMES order; attempts at disabled actions
# are a property of the random scheduler, not of the transition system)
COUNTED_STATS = tuple(s for s in STAT_NAMES if s != "disabled_attempts")

HANDLERS = {
    VOTE_REQUEST: handle_vote_request,
    VOTE_RESPONSE: handle_vote_response,
    FETCH_REQUEST: handle_fetch_request,
    FETCH_RESPONSE: handle_fetch_response,
    BEGIN_QUORUM_EPOCH_REQUEST: handle_begin_quorum_epoch_request,
    BEGIN_QUORUM_EPOCH_RESPONSE: handle_begin_quorum_epoch_response,
    END_QUORUM_EPOCH_REQUEST: handle_end_quorum_epoch_request,
    END_QUORUM_EPOCH_RESPONSE: handle_end_quorum_epoch_response,
    FETCH_SNAPSHOT_REQUEST: handle_fetch_snapshot_request,
    FETCH_SNAPSHOT_RESPONSE: handle_fetch_snapshot_response,
}


class ReferenceCluster:
    """A KRaft cluster in its initial state: every node up, Unattached in epoch 0, empty
    logs, every link up, no message in flight.

    ``features`` is the kernel's feature mask (pre-vote, enabled checks, mutations).
    ``kernel_compat`` names disagreements (see :mod:`.deviations`) for which the model
    should do what the kernel does instead of what Kafka does.
    """

    def __init__(self, params, features: int, kernel_compat=()):
        self.params = Params.of(params)
        self.features = int(features)
        self.compat = check_names(kernel_compat)
        n = self.params.nodes
        self.nodes = [Node(i, links=set(range(n))) for i in range(n)]
        self.bootstrap_voters = frozenset(range(self.params.voters))  # see voters.py
        self.stats = {name: 0 for name in COUNTED_STATS}
        self.net = Network(self.params.msg_slots, self.stats)
        self.next_value = 0       # last entry value handed out
        self.next_corr = 0        # last correlation id handed out
        self.bound_hit = BOUND_NONE
        self.steps = 0
        self.history = History(n)
        self.violation: Optional[Violation] = None

    # ---- plumbing used by the protocol modules ------------------------------------------
    def link_up(self, src: int, dst: int) -> bool:
        return dst in self.nodes[src].links

    def send(self, msg: Message) -> bool:
        return self.net.send(msg, self.link_up(msg.src, msg.dst))

    def expect_response(self, node: Node, msg: Message) -> bool:
        """RequestManager.isResponseExpected: only the answer to the node's outstanding
        request to msg.src is handled (which also makes it no longer outstanding)."""
        if node.inflight.get(msg.src) != msg.corr:
            return False
        del node.inflight[msg.src]
        return True

    # ---- which actions are enabled ----------------------------------------------------------
    def request_targets(self, a: int) -> set:
        """The nodes node a's role would send a request to now."""
        node = self.nodes[a]
        if not node.up:
            return set()
        others = other_voters(self, node)
        r = node.role
        if r == FOLLOWER:
            if node.leader_id is None:
                return set()
            if not is_voter(self, node) or self.features & KAFKA_17030:
                # maybeSendFetchToBestNode: any bootstrap voter after the leader's
                # request timed out (a voter from 3.9.1; an observer always)
                return {node.leader_id} | others
            return {node.leader_id}
        if r == UNATTACHED:
            if not self.features & KAFKA_17030 and is_voter(self, node):
                return set()                   # 3.9.0: it waits for its election timeout
            return others                      # discovery: Fetch from any voter
        if r in (PROSPECTIVE, CANDIDATE):
            if vote_rejected(self, node):
                return set()
            return others - node.granted - node.rejected
        if r == LEADER:
            return others                      # BeginQuorumEpoch heartbeat (KAFKA-16536)
        if r == RESIGNED:
            return others - node.acked
        return set()

    def node_targets(self, f: int, a: int) -> set:
        """The nodes b that action (f, a, b) of a family naming a second node may name now."""
        node = self.nodes[a]
        if f == FAM_SEND:
            return self.request_targets(a)
        if f == FAM_ADD_VOTER:
            return add_voter_targets(self, node)
        if f == FAM_REMOVE_VOTER:
            return remove_voter_targets(self, node)
        return set()

    def message_matches(self, k: int, fingerprint: int) -> bool:
        return 0 <= k < len(self.net) and message_fingerprint(self.net.messages[k]) == fingerprint

    def resolve_message(self, k: int, fingerprint: int) -> int:
        """The slot a message action applies to: k if the message there has the fingerprint,
        else the first one that has it, else -1 (see :mod:`.encoding`)."""
        if self.message_matches(k, fingerprint):
            return k
        for j, msg in enumerate(self.net.messages):
            if message_fingerprint(msg) == fingerprint:
                return j
        return -1

    def action_enabled(self, action) -> bool:
        """Whether action (family, a, b) may be applied now (for a message action, ``a``
        is the slot after resolving the fingerprint ``b``)."""
        f, a, b = (int(x) for x in action)
        n = self.params.nodes
        nm = len(self.net)
        if f in (FAM_DELIVER, FAM_LOSE):
            return self.message_matches(a, b)
        if f == FAM_DUPLICATE:
            return self.message_matches(a, b) and nm < self.params.msg_slots
        if f == FAM_PARTITION:
            return 0 <= a < 4
        if not 0 <= a < n:
            return False
        node = self.nodes[a]
        if f == FAM_TIMEOUT:
            return election_timeout_enabled(self, node)
        if f in (FAM_SEND, FAM_ADD_VOTER, FAM_REMOVE_VOTER):
            return 0 <= b < n and b in self.node_targets(f, a)
        if f == FAM_CLIENT_APPEND:
            return client_append_enabled(self, node)
        if f == FAM_FLUSH:
            return flush_enabled(self, node)
        if f == FAM_CHECK_QUORUM:
            return check_quorum_enabled(self, node)
        if f == FAM_RESIGN:
            return node.up and node.role == LEADER
        if f == FAM_CRASH:
            return node.up
        if f == FAM_RESTART:
            return not node.up
        if f == FAM_SNAPSHOT:
            return create_snapshot_enabled(self, node)
        if f == FAM_CLEAN:
            return delete_before_snapshot_enabled(self, node)
        if f == FAM_DISK_LOSS:
            return lose_disk_enabled(self, node)
        return False

    def enabled(self, action) -> bool:
        """Whether ``apply(action)`` would do something, without doing it."""
        f, a, b = (int(x) for x in action)
        if f in (FAM_DELIVER, FAM_LOSE, FAM_DUPLICATE):
            a = self.resolve_message(a, b)
        if not self.action_enabled((f, a, b)):
            return False
        if f == FAM_PARTITION:
            saved = [set(node.links) for node in self.nodes]
            changed = change_partition(self, a, b)
            for node, links in zip(self.nodes, saved):
                node.links = links
            return changed
        return True

    # ---- applying actions -----------------------------------------------------------------
    def apply(self, action) -> bool:
        """Apply action (family, a, b). False, with nothing changed, if it is not enabled
        (or is a partition that would change nothing)."""
        f, a, b = (int(x) for x in action)
        if f in (FAM_DELIVER, FAM_LOSE, FAM_DUPLICATE):
            a = self.resolve_message(a, b)
        if not self.action_enabled((f, a, b)):
            return False
        self.history.begin_step(self)
        if f == FAM_PARTITION:
            if not change_partition(self, a, b):
                return False
        else:
            self._do(f, a, b)
        self.steps += 1
        return True

    def _do(self, f: int, a: int, b: int) -> None:
        if f == FAM_DELIVER:
            self.deliver(a)
        elif f == FAM_LOSE:
            self.net.lose(a)
        elif f == FAM_DUPLICATE:
            self.net.duplicate(a)
        else:
            node = self.nodes[a]
            if f in (FAM_TIMEOUT, FAM_SEND, FAM_CHECK_QUORUM, FAM_RESIGN):
                finish_poll(self, node)
            if f == FAM_TIMEOUT:
                on_election_timeout(self, node)
            elif f == FAM_SEND:
                self.send_request(node, b)
            elif f == FAM_CLIENT_APPEND:
                client_append(self, node)
            elif f == FAM_FLUSH:
                flush_log(self, node)
            elif f == FAM_CHECK_QUORUM:
                check_quorum_expired(self, node)
            elif f == FAM_RESIGN:
                resign(self, node)
            elif f == FAM_CRASH:
                crash_node(self, node)
            elif f == FAM_RESTART:
                restart_node(self, node)
            elif f == FAM_SNAPSHOT:
                create_snapshot(self, node)
            elif f == FAM_CLEAN:
                delete_before_snapshot(self, node)
            elif f == FAM_ADD_VOTER:
                handle_add_voter_request(self, node, b)
            elif f == FAM_REMOVE_VOTER:
                handle_remove_voter_request(self, node, b)
            elif f == FAM_DISK_LOSS:
                lose_disk(self, node)

    def deliver(self, k: int) -> None:
        """Message k leaves the network; it is lost if its destination is down or the link
        was cut since it was sent, else its destination handles it."""
        msg = self.net.take(k)
        if not self.nodes[msg.dst].up or not self.link_up(msg.src, msg.dst):
            self.stats["msgs_lost"] += 1
            return
        finish_poll(self, self.nodes[msg.dst])
        HANDLERS[msg.type](self, msg)

    def send_request(self, node: Node, b: int) -> None:
        r = node.role
        if r == FOLLOWER and node.fetching is not None and b == node.leader_id:
            send_fetch_snapshot_request(self, node, b)   # the download comes first
        elif r in (FOLLOWER, UNATTACHED):
            send_fetch_request(self, node, b)
        elif r in (PROSPECTIVE, CANDIDATE):
            send_vote_request(self, node, b)
        elif r == LEADER:
            send_begin_quorum_epoch(self, node, b)
        elif r == RESIGNED:
            send_end_quorum_epoch(self, node, b)

    # ---- checking ---------------------------------------------------------------------------
    def check(self):
        """Check the invariants after a step. Returns (invariant id or None, details) of the
        FIRST violation of the walk so far (later ones are not kept)."""
        v = check_invariants(self, self.features)
        if self.violation is None and v is not None:
            self.violation = v
        if self.violation is None:
            return None, None
        return self.violation.invariant, self.violation

    def apply_and_check(self, action) -> int:
        """The kernel's ``apply_and_check`` convention: -1 if the action is not enabled,
        else the first violated invariant's id + 1 (0 = none so far)."""
        if not self.apply(action):
            return -1
        inv, _ = self.check()
        return 0 if inv is None else inv + 1

    # ---- observing ---------------------------------------------------------------------------
    def snapshot(self) -> dict:
        """A canonical, comparable view of the whole state (see :mod:`.canonical`)."""
        n = self.params.nodes
        nodes = []
        for node in self.nodes:
            nodes.append(canonical.node_view(
                up=node.up, role=node.role, epoch=node.epoch,
                voted_id=-1 if node.voted_id is None else node.voted_id,
                leader_id=-1 if node.leader_id is None else node.leader_id,
                log=node.log, flushed_end=node.flushed_end,
                hw=-1 if node.hw is None else node.hw,
                granted=node.granted, rejected=node.rejected, has_fetched=node.has_fetched,
                epoch_start=node.epoch_start,
                fetched=node.fetched_voters - {node.id},
                acked=node.acked - {node.id},
                preferred=(node.preferred if node.role == FOLLOWER
                           else frozenset(node.successors)),
                links=node.links - {node.id},
                inflight=node.inflight,
                replica_end=[node.replica_end.get(j, -1) for j in range(n)],
                log_start=node.log_start, start_epoch=node.start_epoch, latest=node.latest,
                first_snapshot_epoch=node.first_snapshot_epoch,
                fetching=node.fetching,
                voters=voters(self, node), voters_at=latest_voters_record(node),
                dir=node.dir, voted_dir=node.voted_dir,
                replica_dir=[node.replica_dir.get(j, 0) for j in range(n)],
                voter_dirs=voter_keys(self, node), self_voter=is_voter(self, node),
            ))
        stats = dict(self.stats)
        stats["steps"] = self.steps
        stats["committed"] = len(self.history.committed)
        stats["bound_hit"] = self.bound_hit
        return canonical.snapshot_view(
            nodes=nodes,
            messages=[m.canonical() for m in self.net.messages],
            next_value=self.next_value, next_corr=self.next_corr,
            stats=stats, committed=self.history.committed)

    def describe(self) -> str:
        from kraftwalk.kernels.state.layout import ROLE_NAMES
        parts = []
        for node in self.nodes:
            role = ROLE_NAMES[node.role] if node.up else "down"
            parts.append(f"{node.id}:{role}/e{node.epoch}/L{node.leader_id}/V{node.voted_id}"
                         f"/log{len(node.log)}/hw{node.hw}")
        v = f" violation={self.violation}" if self.violation else ""
        return " ".join(parts) + f" msgs={len(self.net)}{v}"


__all__ = ["ReferenceCluster", "COUNTED_STATS", "INVARIANT_NAMES"]
