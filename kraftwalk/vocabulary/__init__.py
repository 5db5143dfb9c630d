"""The model's vocabulary, declared once and importable without Numba.

Each name the kernels, the command line, the run files and the reports share is one
record here; the kernels take their ids from these records, and every other list of
them is derived (tests/vocabulary checks that none disagrees):

- ``properties``: every property, with its kind (always, eventually, sometimes),
  meaning and the options it needs;
- ``families``: every action family, with its kind, tuned weight and feature;
- ``mutations``: the known-bug mutations, each one bit of the feature mask;
- ``features``: the feature mask's switches, and the one function that turns a run's
  settings into the mask.
"""
