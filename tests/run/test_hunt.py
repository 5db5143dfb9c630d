"""The hunt finds each safety mutation with a fixed seed (deterministic walk counts)."""
from kraftwalk.config import RunConfig
from kraftwalk.run.hunt import hunt, hunt_configs, render_markdown, summarize


def test_hunt_finds_each_safety_mutation():
    base = RunConfig(workers=1)
    rows = hunt(base, ["double-vote", "commit-old-epoch", "restarted-leader-keeps-leading"],
                ["swarm"], [0], budget=60, log=lambda m: None)
    assert all(r["found"] for r in rows), rows
    by = {r["mutation"]: r for r in rows}
    assert by["double-vote"]["invariant"] == "VoteUniqueness"
    assert by["commit-old-epoch"]["invariant"] == "CommitCurrentEpoch"
    # deterministic: walks and steps to the first violation do not depend on time
    again = hunt(base, ["double-vote"], ["swarm"], [0], budget=60, log=lambda m: None)[0]
    assert (again["walks"], again["steps"]) == (by["double-vote"]["walks"], by["double-vote"]["steps"])
    s = summarize(rows)
    assert all(x["found"] == 1 for x in s)


def test_hunt_of_the_correct_model_finds_nothing():
    row = hunt(RunConfig(workers=1, depth=200), ["none"], ["swarm"], [0], budget=1.0,
               log=lambda m: None)[0]
    assert not row["found"] and row["steps"] > 0


def test_hunt_finds_each_liveness_mutation_with_timed_walks():
    rows = hunt(RunConfig(workers=1), ["no-check-quorum", "no-fetch-timer-reset"], ["swarm"],
                [0, 1], budget=60, log=lambda m: None)
    by = {(r["mutation"], r["seed"]): r for r in rows}
    assert all(r["found"] for r in rows), rows
    assert {r["invariant"] for r in rows if r["mutation"] == "no-check-quorum"} == \
        {"CutOffLeaderResigns"}
    assert {r["invariant"] for r in rows if r["mutation"] == "no-fetch-timer-reset"} == \
        {"HealthyLeaderKept"}
    assert by[("no-check-quorum", 0)]["weights"] == "timed leader-isolated"
    again = hunt(RunConfig(workers=1), ["no-check-quorum"], ["swarm"], [0], budget=60,
                 log=lambda m: None)[0]
    assert (again["walks"], again["steps"]) == (by[("no-check-quorum", 0)]["walks"],
                                                by[("no-check-quorum", 0)]["steps"])


def test_a_mutation_hidden_by_later_releases_is_hunted_on_the_release_it_shows_on():
    """KAFKA-17030's mutation shows only without pre-vote: its hunts run on 3.9.2 (pre-vote
    off, voter changes on), the others on the run's release, and the table says so."""
    cfgs = hunt_configs(RunConfig(), ["voter-skips-bootstrap-fetch", "no-check-quorum"],
                        ["swarm"], [0])
    assert [(c.mutation, c.kafka, c.pre_vote) for c in cfgs] == [
        ("voter-skips-bootstrap-fetch", "3.9.2", False), ("no-check-quorum", "4.3", True)]
    assert cfgs[0].reconfig
    rows = [{"kafka": c.kafka, "mutation": c.mutation, "weights": "timed", "seed": 0,
             "found": True, "invariant": "P", "walk": 0, "walks": 1, "steps": 10,
             "seconds": 0.1} for c in cfgs]
    text = render_markdown(summarize(rows), 30)
    assert "Kafka 4.3 (voter-skips-bootstrap-fetch on Kafka 3.9.2: the newest" in text
    assert "| voter-skips-bootstrap-fetch | KAFKA-17030 |" in text


def test_hunt_finds_each_snapshot_mutation():
    """They need snapshots on: the hunt turns them on for these mutations."""
    rows = hunt(RunConfig(workers=1), ["snapshot-above-hw", "leader-loads-snapshot"], ["swarm"],
                [0], budget=120, log=lambda m: None)
    assert all(r["found"] for r in rows), rows
    by = {r["mutation"]: r for r in rows}
    assert by["snapshot-above-hw"]["invariant"] == "SnapshotConsistent"


def test_hunt_finds_each_voter_change_mutation():
    """They need voter changes on: the hunt turns them on for these mutations."""
    rows = hunt(RunConfig(workers=1), ["reconfig-before-commit", "two-pending-changes"],
                ["swarm"], [0], budget=120, log=lambda m: None)
    assert all(r["found"] for r in rows), rows
    assert all(r["invariant"] == "AtMostOneUncommittedVoterSet" for r in rows), rows


def test_a_hunt_killed_midway_keeps_every_finished_hunt(tmp_path):
    """kill -9 of a real `kraftwalk hunt`: the hunts that finished before it are on disk
    (NAME.parquet and NAME.md, each replaced whole as a hunt ends), readable, and a
    prefix of the seeds in order."""
    import os
    import signal
    import subprocess
    import sys
    import time

    import pyarrow.parquet as pq

    def saved(path):  # one open file: a save that replaces it meanwhile is not mixed in
        with open(path, "rb") as f:
            return pq.ParquetFile(f).metadata.num_rows

    out = tmp_path / "hunts"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kraftwalk.cli", "hunt", "--mutation", "double-vote",
         "--seeds", "1000", "--duration", "30", "--workers", "1", "--weights", "uniform",
         "--out", str(out)],  # uniform: slower to find, so 1000 hunts outlast the poll
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240   # (a cold compile comes first)
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "hunt.parquet").exists() and saved(out / "hunt.parquet") >= 3:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the hunt ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    rows = pq.read_table(out / "hunt.parquet").to_pylist()
    assert len(rows) >= 3 and all(r["found"] for r in rows)
    assert [r["seed"] for r in rows] == list(range(len(rows)))
    md = (out / "hunt.md").read_text()   # written with the parquet: the same hunts, or one fewer
    assert any(f"| double-vote | - | uniform | {n}/{n} |" in md for n in (len(rows), len(rows) - 1))
