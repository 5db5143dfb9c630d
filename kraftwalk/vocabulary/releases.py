"""Kafka as released: every raft/ behaviour that changed between the releases the
model covers, named after its KAFKA issue, and each release as the changes it has.

A change the kernels model is a compile-time switch (``features.SWITCHES``, named
``kafka_<number>``): a release is a set of switch bits, costs nothing at run time,
and a walk stays a pure function of (seed, walk, config), the release part of the
config. A change not modelled yet is listed all the same, with what the model does
instead, so that ``kraftwalk versions`` says how far each release is modelled.

A change that only moves time (a backoff, when a held fetch is answered) is a
run-time parameter of the timed chooser instead (``timing``: the value of a
``kraftwalk.vocabulary.timing`` parameter from that release on, and before it),
so releases share one compile of the timed kernels.

Releases are the versions whose raft/ behaviour differs from the one before; a
version with the same raft/ behaviour is an alias (4.3.1 of 4.3; 3.9.0 is 3.9).
Fixes reach older lines as backports (KAFKA-18723 is in 4.0.1 and 3.9.1), so a
change names the first release of each line that has it. The newest is the
default. Sources: Kafka's raft/ package at each release point
(apache/kafka 3.9; confluentinc/kafka's 4.0-4.3 branches), by file and line in
``results/findings/`` and ``kraftwalk/reference/deviations.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

RELEASES: tuple[str, ...] = ("3.9", "3.9.1", "3.9.2", "4.0", "4.0.1", "4.1", "4.2", "4.3")
DEFAULT = RELEASES[-1]
# x.y.0 is x.y; a later patch release whose raft/ changed nothing consensus-related
# (listeners, buffers, metrics) is the release before it
ALIASES: dict[str, str] = {"3.9.0": "3.9", "4.0.0": "4.0", "4.0.2": "4.0.1", "4.1.0": "4.1",
                           "4.1.1": "4.1", "4.1.2": "4.1", "4.2.0": "4.2", "4.2.1": "4.2",
                           "4.3.0": "4.3", "4.3.1": "4.3"}
# Releases whose raft/ changed nothing the model covers (what did change, for the table)
QUIET: dict[str, str] = {
    "4.3": "no consensus change (raft/ gained bootstrap servers for the KRaft listener, "
           "configurable RPC sizes, metrics)"}


@dataclass(frozen=True)
class Change:
    issue: str        # the KAFKA issue (or KIP) that made it
    since: str        # the first release of the newest line that has it
    now: str          # the behaviour from that release on
    before: str       # the behaviour in the releases before it
    switch: str = ""  # the compile-time feature switch that models it
    timing: tuple = ()  # (timing parameter, value from this release on, value before)
    model: str = ""   # not modelled yet: what the model does in every release instead
    backports: tuple[str, ...] = ()  # first release of each older line that has it
    line: str = ""    # only this line has it (a backport that differs from the original)
    always: bool = False  # every release the model covers has it: the model's own rule

    @property
    def modelled(self) -> bool:
        return bool(self.switch or self.timing or self.always)


CHANGES: tuple[Change, ...] = (
    Change("KAFKA-17030", "4.0",
           "an Unattached voter fetches from a bootstrap voter, so it finds a leader that "
           "does not know it (a removed and re-added voter); a Follower voter whose "
           "request to its leader timed out fetches from a bootstrap voter",
           "an Unattached voter waits for its election timeout; a Follower voter fetches "
           "only from its leader",
           switch="kafka_17030", backports=("3.9.1",)),
    Change("KAFKA-17973", "4.0",
           "a replica that reads a VotersRecord with no majority overlapping the last one "
           "logs it and goes on",
           "it fails (IllegalArgumentException in VoterSetHistory.addAt)",
           model="goes on in every release (a leader never writes such a record)",
           backports=("3.9.1",)),
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
    Change("KAFKA-17642", "4.0",
           "a Candidate whose election timeout expires runs again at once (Prospective; "
           "the pre-vote commit, #18240)",
           "it backs off first (\"Election has timed out, backing off\"), then runs again",
           timing=(("candidate_timeout_backoff", 0.0, 1.0),)),
    Change("KAFKA-17642", "4.0",
           "a Resigned node that becomes Unattached (its election timer expired, or a "
           "higher epoch) keeps the election time it had left (QuorumState."
           "transitionToUnattached), as a Candidate and an Unattached node always did",
           "it draws a fresh election timeout",
           timing=(("resigned_keeps_time", 1.0, 0.0),)),
    Change("KAFKA-18723", "4.0.1",
           "a follower's append stops at a batch whose epoch is above its own",
           "a follower appends whatever batches the response carries",
           model="stops at such a batch in every release (4.0.1's rule); in Kafka such a "
                 "batch came from a leader's log read racing a truncation, which the "
                 "model's atomic steps cannot meet",
           backports=("3.9.1",)),
    Change("KAFKA-18345", "3.9.2",
           "a rejected Candidate's backoff is jittered and at least 100 ms (the backport "
           "draws 100 ms x uniform{1..2^retries})",
           "the binary-exponential backoff may be 0 and its cap is exact",
           timing=(("election_loss", "jittered-backoff-3.9", "backoff"),), line="3.9"),
    Change("KAFKA-18345", "4.0.1",
           "a rejected Candidate's backoff is jittered and at least 100 ms",
           "the binary-exponential backoff may be 0 and its cap is exact",
           timing=(("election_loss", "jittered-backoff", "backoff"),)),
    Change("KAFKA-18345", "4.1",
           "a rejected Candidate waits out the rest of its election timeout: no backoff",
           "it backs off, then runs again",
           timing=(("election_loss", "wait", "jittered-backoff"),)),
    Change("KAFKA-14145", "4.1",
           "a Fetch carries the follower's high watermark; a held fetch is answered when "
           "the leader's high watermark moves or the follower's is behind",
           "a held fetch waits for new records or 500 ms",
           timing=(("fetch_purgatory", "high-watermark", "records"),)),
    Change("KAFKA-16536", "3.9",
           "the leader sends BeginQuorumEpoch to every voter each fetch timeout / 2",
           "BeginQuorumEpoch goes to each voter until it acknowledges",
           model="the leader may send BeginQuorumEpoch to any other voter at any time "
                 "(timed walks: every fetch timeout / 2)", always=True),
    Change("KAFKA-16926", "4.2",
           "BeginQuorumEpoch goes only to the voters that have not fetched for fetch "
           "timeout / 2",
           "to every voter each fetch timeout / 2 (KAFKA-16536)",
           timing=(("begin_quorum_epoch", "not-fetching", "every-voter"),)),
    Change("KAFKA-19354", "4.2",
           "an observer whose fetch timeout expired goes on fetching from its leader "
           "(maybeSendFetchToBestNode: a bootstrap voter only after a request to the "
           "leader timed out)",
           "it fetches from random bootstrap voters until a fetch succeeds",
           timing=(("observer_fetch", "best-node", "bootstrap"),)),
)

SWITCHED: tuple[Change, ...] = tuple(c for c in CHANGES if c.switch)
PRE_VOTE = next(c for c in CHANGES if c.switch == "pre_vote")


def _vt(version: str) -> tuple[int, ...]:
    parts = tuple(int(x) for x in version.split("."))
    return parts + (0,) * (3 - len(parts))


def _line(version: str) -> tuple[int, ...]:
    return _vt(version)[:2]


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
    """Does ``release`` have ``change``? In the change's own line and the lines after
    it, from ``since`` on; in an older line, from its backport on."""
    r = release_of(release)
    if change.line and _line(r) != _line(change.line):
        return False
    for start in (change.since,) + change.backports:
        if _line(start) == _line(r):
            return _vt(r) >= _vt(start)
    return _line(r) > _line(change.since)


def switches(release: str) -> dict[str, bool]:
    """Each modelled change's switch, on or off in ``release``."""
    return {c.switch: has(release, c) for c in SWITCHED}


def timing(release: str) -> dict[str, object]:
    """The timing parameters ``release`` sets (timed walks), by name: each one's value
    in the release, from the oldest rule through every change the release has."""
    out: dict[str, object] = {}
    for c in sorted(CHANGES, key=lambda c: _vt(c.since)):
        for name, now, before in c.timing:
            out.setdefault(name, before)
            if has(release, c):
                out[name] = now
    return out


def new_in(release: str) -> tuple[Change, ...]:
    """The changes ``release`` brought (since the release before it in its line, or
    the last release of the line before)."""
    r = release_of(release)
    i = RELEASES.index(r)
    prev = RELEASES[i - 1] if i else None
    same_line = [p for p in RELEASES[:i] if _line(p) == _line(r)]
    prev = same_line[-1] if same_line else prev
    return tuple(c for c in CHANGES if has(r, c) and (prev is None or not has(prev, c)))


def table(code=str) -> list[tuple[str, str, str, str, str]]:
    """(release, change, from this release on, before, modelled), release by release:
    a row per change, one for a release that changed nothing modelled (``QUIET``);
    ``code`` formats a switch's name."""
    rows = []
    for r in RELEASES:
        if r in QUIET:
            rows.append((r, "-", QUIET[r], "", ""))
        for c in new_in(r):
            if c.switch:
                modelled = f"yes ({code(c.switch)})"
            elif c.timing:
                modelled = "yes, timed walks (" + ", ".join(
                    code(f"{n}={now}" if isinstance(now, str) else f"{n}={now:g}")
                    for n, now, _ in c.timing) + ")"
            elif c.always:
                modelled = f"yes, every release: {c.model}"
            else:
                modelled = f"not yet: {c.model}"
            rows.append((r, c.issue, c.now, c.before, modelled))
    return rows


def markdown_table() -> str:
    """:func:`table` as the README shows it."""
    head = ["| release | change | from this release on | before | modelled |",
            "|---|---|---|---|---|"]
    return "\n".join(head + ["| " + " | ".join(row) + " |"
                              for row in table(lambda s: f"`{s}`")])
