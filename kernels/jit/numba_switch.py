"""The switch between the fast kernels on Numba's internals and plain Numba
(:mod:`.jit`), read without importing Numba so the command line can check it first."""
import os

ENV = "KRAFTWALK_PLAIN_NUMBA"
# Numba's minor versions the hooks are tested on (pyproject.toml pins this range).
SUPPORTED = "numba 0.61-0.68"
COST = "about 13x slower, the same walks"


def plain_requested() -> bool:
    """Whether ``$KRAFTWALK_PLAIN_NUMBA`` asks for plain Numba ("1"; "0" or unset: no)."""
    value = os.environ.get(ENV, "").strip()
    if value not in ("", "0", "1"):
        raise ValueError(f"{ENV}={value!r}: expected 1 (plain Numba, no hooks) or 0")
    return value == "1"
