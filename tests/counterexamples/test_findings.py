"""Telling a settled finding's walks from new violations (counterexamples/findings.py)."""
from __future__ import annotations

from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.config import make_config
from kraftwalk.counterexamples.findings import FINDINGS, explain
from kraftwalk.counterexamples.replay import record, walk_states
from kraftwalk.run.runner import run_swarm

# Walk 190440 of `kraftwalk swarm --reconfig --voters 3 --observers 1` (Kafka 4.3, seed 0):
# node 2 votes for itself in epoch 1, follows node 1, restarts and is at once Leader of 1.
KAFKA_4_3 = dict(reconfig=True, voters=3, observers=1, seed=0)
RESTART_WALK = 190440


def test_the_kafka_17642_walk_is_explained_by_its_finding():
    steps, v = walk_states(record(make_config(None, **KAFKA_4_3), RESTART_WALK))
    assert v is not None and v.name == "ElectionSafety"
    assert explain(steps, v).name == "kafka-17642-restart-as-candidate"


def test_the_same_steps_without_the_voters_own_vote_are_not():
    """The matcher asks for the vote the Follower kept: drop it from the state it went
    down in, and the same walk is no longer this finding."""
    steps, v = walk_states(record(make_config(None, **KAFKA_4_3), RESTART_WALK))
    for st in steps:
        for state in (st.before, st.after):
            node = state["nodes"][2]
            if node["voted_id"] == 2 and node.get("role") == 3:  # a Follower holding its vote
                node["voted_id"] = -1
    assert explain(steps, v) is None


def test_an_election_safety_violation_of_another_cause_is_not_explained(tmp_path):
    """Two leaders of an epoch through a double vote break the same invariant; no
    finding claims them."""
    out = tmp_path / "dv"
    run_swarm(make_config(None, walks=400, seed=0, workers=1, mutation="double-vote",
                          disabled_checks=("VoteUniqueness",), out=str(out)))
    cfg = make_config(str(out / "config.toml"))
    steps, v = walk_states(record(cfg, 84))
    assert v is not None and v.name == "ElectionSafety"
    assert explain(steps, v) is None


def test_replay_names_the_finding(tmp_path):
    run = tmp_path / "run"  # the run's config alone: replay re-runs the walk from it
    run.mkdir()
    (run / "config.toml").write_text(make_config(None, **KAFKA_4_3).to_toml())
    res = CliRunner().invoke(app, ["replay", str(run), "--walk", str(RESTART_WALK)],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "VIOLATION ElectionSafety" in res.output
    assert "known finding kafka-17642-restart-as-candidate (KAFKA-17642)" in res.output


def test_every_finding_has_its_write_up():
    from pathlib import Path

    findings = Path(__file__).resolve().parents[2] / "results" / "findings"
    for f in FINDINGS:
        assert (findings / f"{f.name}.md").is_file(), f.name
