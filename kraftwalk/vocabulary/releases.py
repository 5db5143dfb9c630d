"""Kafka as released: every raft/ behaviour that changed between the releases the
model covers, named after its KAFKA issue, and each release as the changes it has.

A change the kernels model is a compile-time switch (``features.SWITCHES``, named
``kafka_<number>``): a release is a set of switch bits, costs nothing at run time,
and a walk stays a pure function of (seed, walk, config), the release part of the
config. A change not modelled yet is listed all the same, with what the model does
instead, so that ``kraftwalk versions`` says how far each release is modelled.

Releases are the lines whose raft/ behaviour differs from the one before; a
version with the same raft/ behaviour is an alias (4.3.1 of 4.3). The newest is
the default. Sources: Kafka's raft/ package at each release point
(apache/kafka 3.9; confluentinc/kafka's 4.0-4.3 branches), by file and line in
``results/findings/`` and ``kraftwalk/reference/deviations.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

RELEASES: tuple[str, ...] = ("3.9", "4.0", "4.0.1", "4.1", "4.2", "4.3")
DEFAULT = RELEASES[-1]
# x.y.0 is x.y; 4.3.1's raft/ is 4.3.0's
ALIASES: dict[str, str] = {"3.9.0": "3.9", "4.0.0": "4.0", "4.1.0": "4.1", "4.2.0": "4.2",
                           "4.3.0": "4.3", "4.3.1": "4.3"}
# Releases whose raft/ changed nothing the model covers (what did change, for the table)
QUIET: dict[str, str] = {
    "4.3": "no consensus change (raft/ gained bootstrap servers for the KRaft listener, "
           "configurable RPC sizes, metrics)"}


@dataclass(frozen=True)
class Change:
    issue: str        # the KAFKA issue (or KIP) that made it
    since: str        # the first release that has it
    now: str          # the behaviour from that release on
    before: str       # the behaviour in the releases before it
    switch: str = ""  # the feature switch that models it; "" = not modelled yet
    model: str = ""   # not modelled yet: what the model does in every release instead


CHANGES: tuple[Change, ...] = (
    Change("KAFKA-17642", "4.0",
           "a Follower's quorum state keeps its vote: a voter that voted for itself, then "
           "followed its epoch's leader, restarts as Candidate of that epoch (and Leader at "
           "once if it is the only voter in its view)",
           "a Follower's quorum state holds no vote: it restarts as Follower of that leader",
           switch="kafka_17642"),
    Change("KIP-996", "4.0",
           "pre-vote: a voter whose timer expires becomes Prospective and asks whether it "
           "could win before it raises its epoch (KAFKA-17642's ProspectiveState)",
           "a voter whose timer expires becomes Candidate of the next epoch",
           switch="pre_vote"),
    Change("KAFKA-18723", "4.0.1",
           "a follower's append stops at a batch whose epoch is above its own",
           "a follower appends whatever batches the response carries",
           model="stops at such a batch in every release (4.0.1's rule)"),
    Change("KAFKA-18345", "4.0.1",
           "a rejected Candidate's backoff is jittered and at least 100 ms",
           "the binary-exponential backoff may be 0 and its cap is exact",
           model="the 4.0.0 backoff in every release (timed walks)"),
    Change("KAFKA-18345", "4.1",
           "a rejected Candidate waits out the rest of its election timeout: no backoff",
           "it backs off, then becomes Prospective",
           model="backs off in every release; `--timing backoff_on_rejection=0 "
                 "election_backoff_max_ms=0` gives 4.1's rule (timed walks)"),
    Change("KAFKA-14145", "4.1",
           "a Fetch carries the follower's high watermark; a held fetch is answered when "
           "the leader's high watermark moves or the follower's is behind",
           "a held fetch waits for new records or 500 ms",
           model="4.1's rule in every release (timed walks)"),
    Change("KAFKA-16536", "3.9",
           "the leader sends BeginQuorumEpoch to every voter each fetch timeout / 2",
           "BeginQuorumEpoch goes to each voter until it acknowledges",
           model="sent until acknowledged in every release"),
    Change("KAFKA-16926", "4.2",
           "BeginQuorumEpoch goes only to the voters that have not fetched for fetch "
           "timeout / 2",
           "to every voter each fetch timeout / 2 (KAFKA-16536)",
           model="sent until acknowledged in every release"),
)

SWITCHED: tuple[Change, ...] = tuple(c for c in CHANGES if c.switch)
PRE_VOTE = next(c for c in CHANGES if c.switch == "pre_vote")


def release_of(version: str) -> str:
    """The release a version names (an alias resolved); ValueError naming the known
    ones if it names none."""
    v = str(version).strip()
    v = ALIASES.get(v, v)
    if v not in RELEASES:
        raise ValueError(f"--kafka {version!r} is not a Kafka release kraftwalk models; "
                         f"known: {', '.join(RELEASES)} (default {DEFAULT})")
    return v


def has(release: str, change: Change) -> bool:
    """Does ``release`` have ``change``?"""
    return RELEASES.index(release_of(release)) >= RELEASES.index(change.since)


def switches(release: str) -> dict[str, bool]:
    """Each modelled change's switch, on or off in ``release``."""
    return {c.switch: has(release, c) for c in SWITCHED}


def new_in(release: str) -> tuple[Change, ...]:
    """The changes ``release`` brought (since the release before it)."""
    return tuple(c for c in CHANGES if c.since == release_of(release))


def table(code=str) -> list[tuple[str, str, str, str, str]]:
    """(release, change, from this release on, before, modelled), release by release:
    a row per change, one for a release that changed nothing modelled (``QUIET``);
    ``code`` formats a switch's name."""
    rows = []
    for r in RELEASES:
        if r in QUIET:
            rows.append((r, "-", QUIET[r], "", ""))
        for c in new_in(r):
            modelled = f"yes ({code(c.switch)})" if c.switch else f"not yet: {c.model}"
            rows.append((r, c.issue, c.now, c.before, modelled))
    return rows


def markdown_table() -> str:
    """:func:`table` as the README shows it."""
    head = ["| release | change | from this release on | before | modelled |",
            "|---|---|---|---|---|"]
    return "\n".join(head + ["| " + " | ".join(row) + " |"
                              for row in table(lambda s: f"`{s}`")])
