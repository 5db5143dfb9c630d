"""Coverage: which reachability targets ("sometimes" properties) a walk reached, and
the step at which it first reached each, its witness (layout: REACHED, REACH_STEP)."""
from ..jit import kernel
from .layout import REACHED, REACH_STEP, S_STEPS


@kernel
def reach(w, target, counted):
    """Mark ``target`` reached by the step under way: ``counted`` is 1 where the step is
    already counted (the checks), 0 inside the action itself."""
    bit = 1 << target
    if not w.scal[REACHED] & bit:
        w.scal[REACHED] |= bit
        w.scal[REACH_STEP + target] = w.scal[S_STEPS] + 1 - counted
