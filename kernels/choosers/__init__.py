"""Who picks the next action: the untimed swarm chooser (``swarm``, weighted random
among the enabled actions) and the timed one (``timed_step``: the earliest event in
simulated time; ``scenarios`` scripts its faults). Both apply the same transitions."""
