"""Two processes saving different variants of one kernel into one Numba cache at
once (kraftwalk.precompile compiles feature masks side by side) must both land:
unlocked, both read the same index, pick the same data-file number, and one entry
is lost or points at the other's code."""
import textwrap

PROBE = textwrap.dedent("""
    from numba import njit

    @njit(cache=True)
    def probe(x):
        return x + 1
""")

# Each saver holds every index read open for a while, so both read the empty index
# before either writes it: the race happens on every run instead of now and then.
SAVE = textwrap.dedent("""
    import sys, time
    from numba.core import caching
    import kraftwalk.kernels.jit
    load = caching.IndexDataCacheFile._load_index
    def slow_load(self):
        index = load(self)
        time.sleep(1.5)
        return index
    caching.IndexDataCacheFile._load_index = slow_load
    from probe import probe
    probe(eval(sys.argv[1]))  # compiles and saves the variant of that type
""")

CHECK = textwrap.dedent("""
    import kraftwalk.kernels.jit  # kraftwalk's cache folder, as in the savers
    from probe import probe
    assert probe(1) == 2 and probe(1.5) == 2.5 and probe(2.0 ** 40) == 2.0 ** 40 + 1
    assert not probe.stats.cache_misses, dict(probe.stats.cache_misses)
    assert len(probe.stats.cache_hits) == 2, dict(probe.stats.cache_hits)
""")


def test_concurrent_saves_of_two_variants_both_land(probe_processes):
    procs = probe_processes(PROBE)
    savers = [procs.start(SAVE, arg) for arg in ("1", "1.5")]
    for p in savers:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    check = procs.run(CHECK)
    assert check.returncode == 0, check.stderr
