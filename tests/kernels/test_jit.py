"""Choosing between the hooks on Numba's internals and plain Numba (kernels/jit/__init__.py):
the switch, and the fall-back when this Numba lacks an internal the hooks need
(simulated by hiding one before the kernels load): one warning line, then correct
results on plain Numba."""
import textwrap

import pytest
from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.kernels import jit

PROBE = textwrap.dedent("""
    from kraftwalk.kernels.jit import call_with_features, kernel
    from numba import literally

    @kernel
    def twice(x):
        return 2 * x

    @kernel
    def probe(x, features):
        literally(features)
        return twice(x) + (1 if features & 4 else 0)
""")

RUN = textwrap.dedent("""
    {hide}
    from kraftwalk.kernels import jit
    from probe import call_with_features, probe
    assert call_with_features(probe, 5, 4) == 11 and call_with_features(probe, 5, 0) == 10
    import os
    print(jit.MODE, "|", jit.describe(), "|", os.environ.get("KRAFTWALK_PLAIN_NUMBA"))
""")

HIDDEN = {
    "an import": "from numba.core import caching; del caching.CompileResultCacheImpl",
    "an attribute": ("from numba.core.compiler_machinery import PassManager; "
                     "del PassManager.add_pass_after"),
}


@pytest.mark.parametrize("what", sorted(HIDDEN))
def test_a_missing_internal_falls_back_to_plain_numba_with_one_warning_line(
        probe_processes, what):
    procs = probe_processes(PROBE)
    run = procs.run(RUN.format(hide=HIDDEN[what]))
    assert run.returncode == 0, run.stderr
    mode, why, env = (p.strip() for p in run.stdout.split("|"))
    assert mode == "plain" and why.startswith("plain (fall-back: "), why
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("kraftwalk: warning: Numba ") and "plain Numba" in lines[0]
    assert "13x slower" in lines[0] and "0.61-0.68" in lines[0], lines[0]
    assert env == "1"  # worker processes start plain, without warning again


def test_the_switch_turns_the_hooks_off_without_a_warning(probe_processes):
    procs = probe_processes(PROBE)
    procs.env["KRAFTWALK_PLAIN_NUMBA"] = "1"
    run = procs.run(RUN.format(hide=""))
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("|")[:2] == ["plain ", " plain (KRAFTWALK_PLAIN_NUMBA=1) "]
    assert not run.stderr, run.stderr


def test_the_hooks_install_on_this_numba():
    """The pinned range is the tested one: here the hooks are on, unless switched off."""
    from kraftwalk.kernels.jit.numba_switch import plain_requested

    assert jit.MODE == ("plain" if plain_requested() else "hooks")
    assert jit.describe() == jit.MODE or plain_requested()


@pytest.mark.parametrize("value", ["yes", "2"])
def test_a_bad_switch_value_is_one_line_and_exit_2(value):
    res = CliRunner().invoke(app, ["swarm", "--walks", "1"],
                             env={"KRAFTWALK_PLAIN_NUMBA": value, "COLUMNS": "200"})
    assert res.exit_code == 2, res.output
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert lines == [f"kraftwalk: error: KRAFTWALK_PLAIN_NUMBA='{value}': expected 1 "
                     "(plain Numba, no hooks) or 0"], res.stderr
