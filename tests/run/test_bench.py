"""A bench's tables say which Kafka release, which Numba, and which kernels (the hooks or
plain Numba, 13x apart), they measured."""
from kraftwalk.run.bench import render_timed_markdown

TIMED = {"scenario": "leader-crash", "voters": 3, "observers": 1, "pre_vote": True,
         "events_per_s_per_core": 1e6, "steps_per_s_per_core": 9e5, "walks_per_s": 100.0,
         "bytes_per_walk": 1000, "jit_seconds": 1.0, "walks": 100, "seconds": 1.0}


def test_the_timed_table_names_the_numba_mode():
    res = {**TIMED, "versions": {"numba": "0.68.1", "numba_mode": "plain (KRAFTWALK_PLAIN_NUMBA=1)"}}
    assert "| Numba (kernels) | 0.68.1, plain (KRAFTWALK_PLAIN_NUMBA=1) |" in render_timed_markdown(res)
    assert "Numba (kernels)" not in render_timed_markdown(TIMED)  # a result from before


def test_the_timed_jit_rows_say_compile_or_load():
    """Since the timed JIT is measured in fresh processes, the table says which it is: a
    cold compile into an empty cache (with --cold) and the warm start; a result from
    before has its one in-process time, labelled as either."""
    res = {**TIMED, "warm_start_seconds": 0.9, "cold_jit_seconds": 27.7}
    md = render_timed_markdown(res)
    assert "| cold JIT of the timed kernels (empty cache) | 27.7 s |" in md
    assert "| warm start (cached: import + load) | 0.90 s |" in md
    assert "compile or load" not in md
    warm = render_timed_markdown({**TIMED, "warm_start_seconds": 0.9})
    assert "cold JIT" not in warm and "warm start" in warm
    assert "| JIT (compile or load the timed kernels) | 1.0 s |" in render_timed_markdown(TIMED)


def test_a_bench_says_which_kafka_release_it_modelled():
    assert render_timed_markdown({**TIMED, "kafka": "4.3"}).startswith(
        "Timed mode, Kafka 4.3, scenario leader-crash")
    assert render_timed_markdown(TIMED).startswith("Timed mode, scenario")  # from before
