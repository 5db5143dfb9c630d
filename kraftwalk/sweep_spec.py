"""Sweep files: a command, the settings every cell shares, and a grid of settings.

::

    # experiments/sweep-safety.toml
    command = "swarm"

    [swarm]             # every cell's settings (the keys of a swarm --config file)
    walks = 100000      # the budget of each cell: walks or duration (seconds)

    [grid]              # one cell per combination; the first key varies slowest
    voters = [1, 2, 3, 4, 5]
    pre_vote = [true, false]

Each cell is a swarm run whose datasets live in the sweep's hive partition
``voters=3/pre_vote=true`` (:mod:`kraftwalk.run.sweep`). Every cell's config is checked
before any cell runs; an error names the file and the key or cell.

A sweep of timed walks names ``command = "elect"``: its ``[elect]`` table holds the
keys of an elect --config file (with an ``[elect.timing]`` table), and its grid may
vary any of them or any timing parameter by name::

    command = "elect"
    [elect]
    walks = 2000
    voters = [3, 5, 7]          # every sweep cell runs these as an elect run does
    [grid]
    election_timeout_ms = [500, 1000, 2000]
    latency_b_ms = [5, 20, 50]

Each cell is an elect run whose cells (release, voters, pre-vote) live under the
sweep's partition: ``election_timeout_ms=500/latency_b_ms=5/kafka=4.3/voters=3/...``.
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kraftwalk.config import (
    FIELD_NAMES, KEY_ALIASES, RunConfig, _toml_value, option_name, read_toml,
)
from kraftwalk.errors import UsageError
from kraftwalk.vocabulary.mutations import statistics_refusal

COMMANDS = ("swarm", "elect")
# Settings a grid may not vary: they change where or how walks run, never what a walk
# does, or (out) belong to the sweep as a whole.
NOT_IN_GRID = ("out", "workers", "backend", "chunk_walks", "flush_seconds", "disabled_checks",
               "timing")
MAX_CELLS = 10_000
CELLS = "cells"  # the sweep folder's folder of cell run folders
# The sweep folder's own files
SWEEP_FILE = "sweep.toml"   # the sweep as run (--resume reads it)
SWEEP_JSON = "sweep.json"   # status and totals, with the fingerprint --resume checks
SUMMARY = "summary.parquet"  # a row per cell
SUMMARY_MD = "summary.md"


@dataclass(frozen=True)
class Cell:
    """One combination of the grid: its values (grid order), partition and config."""

    values: dict[str, Any]
    config: Any  # RunConfig of a swarm sweep, ElectConfig of an elect sweep

    @property
    def partition(self) -> str:
        return partition_of(self.values)


@dataclass(frozen=True)
class SweepSpec:
    command: str
    base: dict[str, Any]  # RunConfig field -> value, shared by every cell
    grid: dict[str, list[Any]]  # RunConfig field -> values, in file order

    def cells(self) -> list[Cell]:
        """Every cell, the first grid key varying slowest."""
        out = []
        for combo in itertools.product(*self.grid.values()):
            values = dict(zip(self.grid, combo))
            try:
                cfg = (elect_cell(self.base, values) if self.command == "elect" else
                       RunConfig(**{**self.base, **values}))
                refusal = (None if self.command == "elect" else
                           statistics_refusal(cfg.mutation, "a swarm sweep"))
                if refusal:
                    raise UsageError(refusal)
            except UsageError as e:
                raise UsageError(f"sweep cell {partition_of(values) or '(the only one)'}: {e}"
                                 ) from None
            out.append(Cell(values, cfg))
        return out

    def to_toml(self) -> str:
        """The sweep file as run, read back by ``kraftwalk sweep --resume``."""
        lines = ["# kraftwalk sweep, as run; continue with: kraftwalk sweep --resume <this folder>",
                 f"command = {_toml_value(self.command)}", "", f"[{self.command}]"]
        lines += [f"{key_text(k)} = {_toml_value(_listed(v))}" for k, v in self.base.items()
                  if k != "timing"]
        if self.base.get("timing"):
            lines += ["", f"[{self.command}.timing]"]
            lines += [f"{k} = {_toml_value(v)}" for k, v in self.base["timing"].items()]
        lines += ["", "[grid]"]
        lines += [f"{key_text(k)} = {_toml_value(v)}" for k, v in self.grid.items()]
        return "\n".join(lines) + "\n"


def key_text(name: str) -> str:
    """A setting's key in a sweep file: the option's spelling; a timing parameter's name."""
    from kraftwalk.vocabulary.timing import TIMING_BY_NAME

    return name if name in TIMING_BY_NAME else option_name(name)[2:]


def _listed(value: Any) -> Any:
    """Tuples as TOML lists, pre-vote settings as on/off."""
    if isinstance(value, tuple):
        return [("on" if v else "off") if isinstance(v, bool) else v for v in value]
    return value


def elect_cell(base: dict[str, Any], values: dict[str, Any]):
    """The ElectConfig of an elect sweep's cell: the [elect] settings, the grid's values
    over them (a timing parameter's into its timing; kafka, voters and pre-vote as the
    cell's one value)."""
    from kraftwalk.elect_config import ElectConfig, KEYS, pre_vote_values

    settings = {k: v for k, v in base.items() if k != "timing"}
    timing = dict(base.get("timing") or {})
    for k, v in values.items():
        if k not in KEYS:
            timing[k] = v
        elif k == "pre_vote":
            settings[k] = (v,) if isinstance(v, bool) else pre_vote_values([str(v)])
        elif k in ("kafka", "voters"):
            settings[k] = (v,)
        else:
            settings[k] = v
    try:
        return ElectConfig(**settings, timing=timing)
    except TypeError as err:  # a wrong type, e.g. voters = "three"
        raise UsageError(f"bad value: {err}") from None


def value_text(value: Any) -> str:
    """A setting's value as TOML writes it: true/false, 0.3, 5, double-vote."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def partition_value(value: Any) -> str:
    """A value in a partition path: as :func:`value_text`, strings URL-quoted."""
    if isinstance(value, str):
        return urllib.parse.quote(value, safe="")
    return value_text(value)


def partition_of(values: dict[str, Any]) -> str:
    """Hive partition path of a cell: ``voters=3/pre_vote=true`` (column names as the
    config's field names, so they need no quoting in SQL)."""
    return "/".join(f"{k}={partition_value(v)}" for k, v in values.items())


def _elect_field(key: str, where: str) -> str:
    """The ElectConfig field or timing parameter an elect sweep's grid key names."""
    from kraftwalk.elect_config import KEYS, key_name
    from kraftwalk.vocabulary.timing import TIMING_BY_NAME

    name = key_name(key)
    if name in KEYS or (name in TIMING_BY_NAME and name != "scenario"):
        return name
    allowed = ", ".join(k.replace("_", "-") for k in KEYS if k not in NOT_IN_GRID)
    raise UsageError(f"unknown key {key!r} in {where}; allowed keys: {allowed}, or a timing "
                     "parameter (kraftwalk elect --help lists them)")


def _field(key: str, where: str) -> str:
    name = KEY_ALIASES.get(key)
    if name is None:
        allowed = ", ".join(option_name(n)[2:] for n in FIELD_NAMES)
        raise UsageError(f"unknown key {key!r} in {where}; allowed keys: {allowed}")
    return name


def parse_sweep(data: dict, shown: str) -> SweepSpec:
    """A sweep spec from the parsed TOML of file ``shown``; every cell is validated."""
    if not isinstance(data, dict):
        raise UsageError(f"{shown}: not a sweep file")
    extra = sorted(set(data) - {"command", "grid", *COMMANDS})
    if extra:
        raise UsageError(f"unknown key {extra[0]!r} in sweep file {shown}; allowed: command, "
                         f"[{'], ['.join(COMMANDS)}], [grid]")
    command = data.get("command", "swarm")
    if command not in COMMANDS:
        raise UsageError(f"command = {command!r} in sweep file {shown}: the commands a sweep "
                         f"runs are {', '.join(COMMANDS)}")
    base_in = data.get(command, {})
    grid_in = data.get("grid")
    for name, table in ((f"[{command}]", base_in), ("[grid]", grid_in)):
        if not isinstance(table, dict):
            raise UsageError(f"{name} in sweep file {shown} must be a table of settings")
    base: dict[str, Any] = {}
    if command == "elect":
        from kraftwalk.elect_config import elect_values

        base = elect_values(base_in, f"[elect] of sweep file {shown}")
    for key, value in base_in.items() if command == "swarm" else ():
        name = _field(key, f"[{command}] of sweep file {shown}")
        if name == "out":
            raise UsageError(f"out in [{command}] of sweep file {shown}: the sweep folder is "
                             "given by kraftwalk sweep --out")
        base[name] = value
    grid: dict[str, list[Any]] = {}
    for key, values in grid_in.items():
        where = f"[grid] of sweep file {shown}"
        name = _elect_field(key, where) if command == "elect" else _field(key, where)
        where = f"{key} in [grid] of sweep file {shown}"
        if name in NOT_IN_GRID:
            fixed = ", ".join(option_name(n)[2:] for n in NOT_IN_GRID if n != "timing")
            raise UsageError(f"{where}: a grid cannot vary {key_text(name)}; the keys it "
                             f"cannot vary are {fixed}"
                             + (" (vary a timing parameter by its name)" if command == "elect"
                                else ""))
        if name in grid:
            raise UsageError(f"{where}: the grid names {key_text(name)} twice")
        if not isinstance(values, list) or not values:
            raise UsageError(f"{where} must be a non-empty list of values, got {values!r}")
        for v in values:
            if not isinstance(v, (bool, int, float, str)):
                raise UsageError(f"{where}: values must be numbers, booleans or strings, "
                                 f"got {v!r}")
        shown_values = [partition_value(v) for v in values]
        if len(set(shown_values)) != len(shown_values):
            raise UsageError(f"{where} repeats a value: {values!r}")
        grid[name] = values
        base.pop(name, None)  # the grid's values win
        if isinstance(base.get("timing"), dict):
            base["timing"].pop(name, None)
    if not grid:
        raise UsageError(f"[grid] of sweep file {shown} names no setting to vary")
    n = 1
    for values in grid.values():
        n *= len(values)
    if n > MAX_CELLS:
        raise UsageError(f"sweep file {shown} has {n:,} cells; at most {MAX_CELLS:,} are allowed")
    spec = SweepSpec(command, base, grid)
    spec.cells()  # every cell's config is valid, or a one-line error names the cell
    return spec


def load_sweep(path: str | os.PathLike[str]) -> SweepSpec:
    return parse_sweep(read_toml(path, "sweep file"), os.fspath(path))


def with_base(spec: SweepSpec, **overrides: Any) -> SweepSpec:
    """The spec with the sweep command's options (None = not given) in its base; the
    grid's settings stay the grid's. A budget given alone (walks or duration) replaces
    the file's budget, both its walks and its duration."""
    given = {k: v for k, v in overrides.items() if v is not None}
    if spec.command == "elect" and "duration" in given:
        raise UsageError("--duration is a swarm sweep's budget; an elect sweep's is --walks "
                         "per cell")
    for name in given:
        if name in spec.grid:
            raise UsageError(f"{option_name(name)} is varied by the sweep's grid; leave it out")
    base = dict(spec.base)
    if ("walks" in given) != ("duration" in given):
        base.pop("walks", None)
        base.pop("duration", None)
    new = dataclasses.replace(spec, base={**base, **given})
    new.cells()  # the options given are valid for every cell
    return new


def cell_dir(sweep: Path, cell: Cell) -> Path:
    return sweep / CELLS / cell.partition
