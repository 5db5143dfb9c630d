"""A violating walk as users see it: replayed step by step, shrunk, exported as ITF."""
