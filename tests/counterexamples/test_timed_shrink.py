"""Shrinking a timed walk: a suppressed fault does not happen and the walk's other
scheduled faults keep their times and targets; a violating walk shrinks to fewer
faults with the same violation, none of which can go; `kraftwalk shrink` and
`kraftwalk replay --shrink` do it on an elect folder."""
from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.kernel_inputs import timed_features, timed_params, timing_params
from kraftwalk.elect_config import ElectConfig
from kraftwalk.kernels.state.clock import FAULTS_SEEN, LOSSES_SEEN, SCHEDULED
from kraftwalk.kernels.drivers.timed import record_timed_walk
from kraftwalk.kernels.transition import FAM_CRASH, FAM_LOSE, FAM_PARTITION
from kraftwalk.counterexamples.replay import shrink_trace
from kraftwalk.counterexamples.timed_replay import record_timed, timed_trace
from kraftwalk.counterexamples.timed_shrink import all_faults, drop_mask, shrink_faults, violation

runner = CliRunner()
SEED = 20261203
F_TIMED = timed_features(True, "none")  # the variant tests/kernels/test_timed.py compiles


def faults_of(actions: np.ndarray) -> list[tuple]:
    """The scheduled faults a walk applied: crashes and partitions, with their times."""
    return [tuple(int(x) for x in a) for a in actions
            if a[0] == FAM_CRASH or (a[0] == FAM_PARTITION and a[1] != 3)]


@pytest.fixture(scope="module")
def random_faults_walk():
    params = timed_params(3, 1, 1_000_000)
    tp = timing_params(ElectConfig(voters=(3,), scenario="random-faults",
                     timing={"loss": 0.01}))
    for walk in range(20):  # a walk with a few crashes or partitions and a lost message
        actions, _, c = record_timed_walk(SEED, walk, params, tp, F_TIMED)
        if len(faults_of(actions)) >= 3 and c.t[LOSSES_SEEN] > 0:
            return params, tp, walk, actions, c
    raise AssertionError("no walk with faults")


def test_every_fault_suppressed_leaves_no_crash_cut_or_loss(random_faults_walk):
    params, tp, walk, _, c = random_faults_walk
    faults = all_faults(int(c.t[FAULTS_SEEN]), int(c.t[LOSSES_SEEN]))
    actions, _, c2 = record_timed_walk(SEED, walk, params, tp, F_TIMED, drop_mask(faults[:0]))
    assert faults_of(actions) == []
    assert not (actions[:, 0] == FAM_LOSE).any()
    assert c2.t[FAULTS_SEEN] == c.t[FAULTS_SEEN]  # drawn all the same, on their own stream


def test_a_suppressed_fault_leaves_the_others_as_they_were(random_faults_walk):
    params, tp, walk, actions, c = random_faults_walk
    before = faults_of(actions)
    every = all_faults(int(c.t[FAULTS_SEEN]), int(c.t[LOSSES_SEEN]))
    for k in np.nonzero(every[:, 0] == SCHEDULED)[0]:
        kept = np.delete(every, k, axis=0)
        again, _, _ = record_timed_walk(SEED, walk, params, tp, F_TIMED, drop_mask(kept))
        after = faults_of(again)
        # a crash or cut went (or a loss burst, which is no action); the rest are unchanged
        assert len(before) - len(after) in (0, 1)
        assert set(after) <= set(before)


def test_no_drop_mask_and_keeping_every_fault_are_the_same_walk(random_faults_walk):
    params, tp, walk, actions, c = random_faults_walk
    every = all_faults(int(c.t[FAULTS_SEEN]), int(c.t[LOSSES_SEEN]))
    again, _, _ = record_timed_walk(SEED, walk, params, tp, F_TIMED, drop_mask(every))
    assert np.array_equal(actions, again)
    assert every[:, 0].tolist().count(SCHEDULED) == c.t[FAULTS_SEEN]


@pytest.fixture(scope="module")
def violating_elect(tmp_path_factory):
    """A random-faults run with the no-check-quorum bug: a leader cut off from the voters
    by a partition keeps leading (pre-vote on: the variant the liveness hunt compiles).
    No observer: its first violating walk has faults that shrinking can drop."""
    out = tmp_path_factory.mktemp("shrink") / "run"
    r = runner.invoke(app, ["elect", "--scenario", "random-faults", "--mutation",
                            "no-check-quorum", "--voters", "3", "--observers", "0",
                            "--pre-vote", "on", "--walks", "12", "--workers", "1", "--seed",
                            "3", "--out", str(out)])
    assert r.exit_code == 13, r.output  # a liveness violation found
    return out


def test_shrinking_keeps_the_violation_with_fewer_faults_none_of_which_can_go(violating_elect):
    trace = record_timed(violating_elect)
    assert trace.violation["invariant"] == "CutOffLeaderResigns"
    small = shrink_trace(trace)
    assert small.invariant == trace.invariant and small.shrunk_from == len(trace.actions)
    kept, total = small.faults_kept
    assert 1 <= kept < total
    # 1-minimal: suppress any one of the kept faults and the violation goes
    assert len(faults_of(small.actions)) <= kept
    tw = trace.timed_walk
    _, faults = timed_trace(tw, trace.cfg, trace.timed)
    minimal, _ = shrink_faults(tw, faults, trace.invariant)
    assert len(minimal) == kept
    assert violation(tw, drop_mask(minimal)) == trace.invariant
    for k in range(len(minimal)):
        assert violation(tw, drop_mask(np.delete(minimal, k, axis=0))) != trace.invariant


def test_shrink_and_replay_shrink_print_the_shrunk_timed_walk(violating_elect):
    r = runner.invoke(app, ["shrink", str(violating_elect)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "CutOffLeaderResigns after" in r.stdout and "it needs only" in r.stdout
    assert "VIOLATION CutOffLeaderResigns" in r.stdout
    r = runner.invoke(app, ["replay", str(violating_elect), "--shrink"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "random faults; " in r.stdout and "steps with all)" in r.stdout


def test_replay_of_a_voter_change_scenario_applies_its_voter_changes(tmp_path):
    """A timed walk that changes the voter set replays on the untimed relation with
    voter changes on: the removal happens there too, and the violation is the run's."""
    out = tmp_path / "r"
    r = runner.invoke(app, ["elect", "--scenario", "voter-removed", "--kafka", "3.9",
                            "--voters", "3", "--walks", "2", "--workers", "1",
                            "--no-fail-on-violation", "--out", str(out)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["replay", str(out), "--walk", "0"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "remove_voter: leader" in r.stdout and "not enabled" not in r.stdout
    assert "VIOLATION RemovedVoterStaysQuiet" in r.stdout
    assert "did not reproduce" not in r.stdout
