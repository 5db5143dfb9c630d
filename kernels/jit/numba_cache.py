"""Where kraftwalk's compiled kernels are cached, and how Numba is told so.

Numba's on-disk cache only notices edits to a function's own file, not to the
functions it calls in other files. The kernels' cache therefore lives in a folder
named after a hash of every kernel source file (and of the vocabulary they take
their ids from, kraftwalk/vocabulary), the Numba and llvmlite versions and
the compile mode (:mod:`.jit`): any change starts a fresh cache instead of loading
stale machine code, and the two modes (whose entries for one function differ in
kind) never read each other's.

The folder is given to Numba only while a kraftwalk kernel's cache is made
(:func:`kernel_cache_dir`): Numba's locator reads ``numba.config.CACHE_DIR`` when a
function's cache is created and keeps the path, so other Numba code in the process
caches where it would without kraftwalk.
"""
import functools
import hashlib
import os
import threading
from contextlib import contextmanager
from pathlib import Path

_LOCK = threading.Lock()


def cache_root() -> str:
    """``$NUMBA_CACHE_DIR`` if set, else ``~/.cache/kraftwalk`` (``$XDG_CACHE_HOME``)."""
    return os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "kraftwalk")


@functools.lru_cache(maxsize=None)
def cache_dir(mode: str) -> str:
    """The cache folder of the kernels compiled in ``mode`` ("hooks" or "plain")."""
    import llvmlite
    import numba

    h = _sources_digest().copy()
    h.update(f"{numba.__version__} {llvmlite.__version__} {mode}".encode())
    return os.path.join(cache_root(), "numba-" + h.hexdigest()[:16])


def kernel_sources_hash() -> str:
    """SHA-256 of every kernel source file and the vocabulary they take their ids from:
    what the compiled walks are made of (a run records it, kraftwalk/run/fingerprint.py)."""
    return _sources_digest().hexdigest()


@functools.lru_cache(maxsize=None)
def _sources_digest():
    import kraftwalk.vocabulary

    h = hashlib.sha256()
    kernels = Path(__file__).resolve().parents[1]  # kernels/, every sub-package in it
    for folder in (kernels, Path(kraftwalk.vocabulary.__file__).resolve().parent):
        for path in sorted(folder.rglob("*.py")):
            h.update(path.relative_to(folder.parent).as_posix().encode())
            h.update(path.read_bytes())
    return h


@contextmanager
def kernel_cache_dir(mode: str):
    """Numba's cache folder is the kernels' for the duration (a cache made inside
    keeps it), then back to what it was."""
    import numba

    with _LOCK:
        before = numba.config.CACHE_DIR
        numba.config.CACHE_DIR = cache_dir(mode)
        try:
            yield
        finally:
            numba.config.CACHE_DIR = before
