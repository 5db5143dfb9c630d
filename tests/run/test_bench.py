"""A bench's tables say which Numba, and which kernels (the hooks or plain Numba,
13x apart), they measured."""
from kraftwalk.run.bench import render_timed_markdown

TIMED = {"scenario": "leader-crash", "voters": 3, "observers": 1, "pre_vote": True,
         "events_per_s_per_core": 1e6, "steps_per_s_per_core": 9e5, "walks_per_s": 100.0,
         "bytes_per_walk": 1000, "jit_seconds": 1.0, "walks": 100, "seconds": 1.0}


def test_the_timed_table_names_the_numba_mode():
    res = {**TIMED, "versions": {"numba": "0.68.1", "numba_mode": "plain (KRAFTWALK_PLAIN_NUMBA=1)"}}
    assert "| Numba (kernels) | 0.68.1, plain (KRAFTWALK_PLAIN_NUMBA=1) |" in render_timed_markdown(res)
    assert "Numba (kernels)" not in render_timed_markdown(TIMED)  # a result from before
