"""kraftwalk: swarm random-walk checking of the Kafka KRaft consensus protocol.

Many short random walks over a simulated KRaft cluster run in Numba kernels
(``kraftwalk.kernels``); every step is checked against the safety invariants
and violations are written to a run folder as Parquet and JSON.
"""

__version__ = "0.1.0"
