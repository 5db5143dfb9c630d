"""Numba kernels of kraftwalk, installed as ``kraftwalk.kernels``.

``layout`` defines the packed state of a walk (``bundle`` hands its arrays to
kernels by reference); the protocol handlers live in
``quorum_state``, ``election``, ``replication`` and ``quorum_epoch``; ``faults``
holds crash, restart and network faults; ``checkers`` the safety invariants;
``transition`` says which actions are enabled and applies them (the transition
relation); ``swarm`` chooses the next action (the untimed swarm chooser); ``walk``
runs whole walks; ``trace`` records and replays them.

Numba's on-disk cache only notices edits to a function's own file, not to the
functions it calls in other files. The cache therefore lives in a folder named
after a hash of every kernel source file: any change to the kernels starts a
fresh cache instead of loading stale machine code.
"""
import hashlib
import os
from pathlib import Path

import numba


def _cache_dir() -> str:
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    h.update(numba.__version__.encode())
    root = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "kraftwalk")
    return os.path.join(root, "numba-" + h.hexdigest()[:16])


CACHE_DIR = _cache_dir()
numba.config.CACHE_DIR = CACHE_DIR
