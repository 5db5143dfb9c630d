"""Two processes saving different variants of one kernel into one Numba cache at
once (kraftwalk.run.precompile compiles feature masks side by side) must both land:
unlocked, both read the same index, pick the same data-file number, and one entry
is lost or points at the other's code. The lock is the kernels' own: Numba's cache
class, and other Numba code's cache, stay as Numba ships them."""
import textwrap

import pytest

from kraftwalk.kernels import jit

pytestmark = pytest.mark.skipif(
    not jit.parallel_compile_safe(), reason="plain Numba: saves unlocked, compiles not parallel")

PROBE = textwrap.dedent("""
    from kraftwalk.kernels.jit import kernel

    @kernel
    def probe(x):
        return x + 1
""")

# Each saver holds every index read open for a while, so both read the empty index
# before either writes it: the race happens on every run instead of now and then.
SAVE = textwrap.dedent("""
    import sys, time
    from numba.core import caching
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
    from kraftwalk.kernels.jit import entry
    from probe import probe
    assert probe(1) == 2 and probe(1.5) == 2.5 and probe(2.0 ** 40) == 2.0 ** 40 + 1
    stats = entry(probe).stats
    assert not stats.cache_misses, dict(stats.cache_misses)
    assert len(stats.cache_hits) == 2, dict(stats.cache_hits)
""")


def test_concurrent_saves_of_two_variants_both_land(probe_processes):
    procs = probe_processes(PROBE)
    savers = [procs.start(SAVE, arg) for arg in ("1", "1.5")]
    for p in savers:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    check = procs.run(CHECK)
    assert check.returncode == 0, check.stderr


# A kraftwalk kernel and, beside it, plain Numba code with a cache of its own.
BESIDE_PROBE = PROBE + textwrap.dedent("""
    import numba

    @numba.njit(cache=True)
    def other(x):
        return x * 2
""")

BESIDE = textwrap.dedent("""
    import numba
    from numba.core import caching
    save = caching.IndexDataCacheFile.save
    from probe import other, probe
    assert probe(3) == 4
    assert caching.IndexDataCacheFile.save is save, "Numba's own cache class was patched"
    assert numba.config.CACHE_DIR == "", numba.config.CACHE_DIR
    assert other(2) == 4
    print(other._cache._cache_path)
""")


def test_other_numba_code_caches_where_numba_puts_it(probe_processes, tmp_path):
    procs = probe_processes(BESIDE_PROBE)
    del procs.env["NUMBA_CACHE_DIR"]
    procs.env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    run = procs.run(BESIDE)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(tmp_path / "__pycache__")  # Numba's in-tree default
    assert any((tmp_path / "xdg" / "kraftwalk").glob("numba-*/**/*.nbi"))  # the kernel's
