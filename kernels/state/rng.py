"""Counter-based random streams: each walk's stream depends only on (seed, walk index).

SplitMix64 (Steele, Lea and Flood 2014): a 64-bit counter stepped by the golden
gamma and passed through a bijective finaliser. Seeding each walk by hashing
(master seed, walk index) makes walks independent of thread count, chunking,
process and machine.
"""
import numpy as np
from ..jit import kernel
from .layout import RNG

GAMMA = np.uint64(0x9E3779B97F4A7C15)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
S30 = np.uint64(30)
S27 = np.uint64(27)
S31 = np.uint64(31)
S11 = np.uint64(11)
INV53 = 1.0 / 9007199254740992.0  # 2**-53


@kernel
def mix64(z):
    z = (z ^ (z >> S30)) * M1
    z = (z ^ (z >> S27)) * M2
    return z ^ (z >> S31)


@kernel
def walk_stream_seed(master_seed, walk_index):
    """Initial stream state of walk ``walk_index`` under ``master_seed``."""
    return mix64(mix64(np.uint64(master_seed) ^ GAMMA) + np.uint64(walk_index) * GAMMA)


@kernel
def next_u64(scal):
    """Step the stream kept (as int64 bits) in scal[RNG]."""
    x = np.uint64(scal[RNG]) + GAMMA
    scal[RNG] = np.int64(x)
    return mix64(x)


@kernel
def rand_below(scal, n):
    """Uniform integer in [0, n) (n >= 1), by multiply-shift (Lemire); bias < 2**-32."""
    return np.int64((next_u64(scal) >> np.uint64(32)) * np.uint64(n) >> np.uint64(32))


@kernel
def rand_unit(scal):
    """Uniform float in [0, 1)."""
    return np.float64(next_u64(scal) >> S11) * INV53
