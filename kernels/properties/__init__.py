"""The properties checked on the state after every step: the safety invariants
(``checkers``, always) and the timed liveness properties (``liveness``, eventually).
They read the state and report; they never change what a walk does."""
