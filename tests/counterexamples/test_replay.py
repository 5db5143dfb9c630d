"""Replay, shrink and ITF export of a violating walk found by a swarm run."""
from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from kraftwalk.storage.provenance import provenance
from kraftwalk.cli import app
from kraftwalk.config import RunConfig
from kraftwalk.run.runner import run_swarm

runner = CliRunner()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "dv"
    run_swarm(RunConfig(walks=300, seed=1, workers=1, mutation="double-vote", out=str(out)))
    return out


def test_replay_reproduces_the_recorded_violation(run_dir):
    res = runner.invoke(app, ["replay", str(run_dir)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "VIOLATION VoteUniqueness" in res.output
    assert "deliver VoteRequest" in res.output


def test_shrink_makes_it_shorter_and_keeps_the_invariant(run_dir):
    from kraftwalk.counterexamples.replay import pick_walk, record, shrink_trace, load_run

    trace = record(load_run(run_dir), pick_walk(run_dir, None))
    small = shrink_trace(trace)
    assert small.shrunk_from == trace.violation["step"]
    assert 0 < len(small.actions) < len(trace.actions)
    from kraftwalk.kernels.drivers.trace import replay_actions
    from kraftwalk.kernel_inputs import features_for, params_for

    inv, at, _ = replay_actions(params_for(trace.cfg), small.actions, features_for(trace.cfg))
    assert inv == trace.invariant and at == len(small.actions) - 1


def itf_value_ok(v) -> bool:
    """A value in ADR-015's encoding: JSON scalars, arrays, records, or #set/#tup/#map/#bigint."""
    if isinstance(v, (bool, int, str)):
        return True
    if isinstance(v, list):
        return all(itf_value_ok(x) for x in v)
    if isinstance(v, dict):
        if set(v) == {"#bigint"}:
            return isinstance(v["#bigint"], str) and v["#bigint"].lstrip("-").isdigit()
        if set(v) in ({"#set"}, {"#tup"}):
            return all(itf_value_ok(x) for x in next(iter(v.values())))
        if set(v) == {"#map"}:
            return all(len(p) == 2 and all(itf_value_ok(x) for x in p) for p in v["#map"])
        return all(not k.startswith("#") and itf_value_ok(x) for k, x in v.items())
    return False


def test_itf_export_is_valid(run_dir, tmp_path):
    import jsonschema

    path = tmp_path / "t.itf.json"
    res = runner.invoke(app, ["shrink", str(run_dir), "--quiet", "--itf", str(path)])
    assert res.exit_code == 0, res.output
    doc = json.loads(path.read_text())
    schema = {
        "type": "object", "required": ["vars", "states"],
        "properties": {
            "#meta": {"type": "object"},
            "params": {"type": "array", "items": {"type": "string"}},
            "vars": {"type": "array", "items": {"type": "string"}},
            "states": {"type": "array", "items": {"type": "object",
                                                   "properties": {"#meta": {"type": "object"}}}},
            "loop": {"type": "integer"},
        },
    }
    jsonschema.validate(doc, schema)
    assert doc["#meta"]["format"] == "ITF"
    assert doc["#meta"]["seed"] == 1 and doc["#meta"]["violation"]["invariant"] == "VoteUniqueness"
    assert len(doc["#meta"]["actions"]) == len(doc["states"]) - 1
    assert doc["#meta"]["versions"] == provenance()
    for state in doc["states"]:
        assert set(doc["vars"]) <= set(state)  # every state binds every variable
        assert all(itf_value_ok(state[v]) for v in doc["vars"])


def test_replay_errors(tmp_path):
    res = runner.invoke(app, ["replay", str(tmp_path)])
    assert res.exit_code == 2 and "no config.toml" in res.stderr


def test_replay_prints_the_kernels_states_and_the_reference_model_agrees(run_dir):
    res = runner.invoke(app, ["replay", str(run_dir)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "reference model differs" not in res.output
    assert "did not reproduce" not in res.output


def test_a_bug_only_the_kernel_has_shows_in_the_kernels_states(run_dir, monkeypatch):
    """A reference model without the double-vote bug: the kernel's states still show the
    second vote and its violation; the reference model's differences are printed where
    they start, and the end says it did not reproduce the violation."""
    import kraftwalk.reference as reference
    from kraftwalk.kernels.features import MUT_DOUBLE_VOTE

    class WithoutTheBug(reference.ReferenceCluster):
        def __init__(self, params, features, **kw):
            super().__init__(params, features & ~MUT_DOUBLE_VOTE, **kw)

    monkeypatch.setattr(reference, "ReferenceCluster", WithoutTheBug)
    res = runner.invoke(app, ["replay", str(run_dir), "--shrink"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    at = next(k for k, x in enumerate(lines) if "reference model differs" in x)
    # the second vote: refused by the reference model, granted by the kernel
    assert re.search(r"in flight VoteResponse (\d)->(\d) e1 rejected where the kernel has "
                     r"VoteResponse \1->\2 e1 granted", lines[at]), lines[at]
    assert "VIOLATION VoteUniqueness" in res.output  # the kernel's verdict, printed
    assert lines[-1].startswith("the reference model did not reproduce the kernel's "
                                "violation: it found no violation")
