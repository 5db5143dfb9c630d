"""Sweep files: cells in grid order, hive partitions, and one-line errors for bad files."""
from __future__ import annotations

from pathlib import Path

import pytest

from kraftwalk.errors import UsageError
from kraftwalk.sweep_spec import load_sweep, parse_sweep, partition_of, with_base

ROOT = Path(__file__).resolve().parent.parent


def spec(grid, base=None, **top):
    return parse_sweep({"command": "swarm", "swarm": base or {"walks": 10}, "grid": grid,
                        **top}, "s.toml")


def test_cells_in_grid_order_first_key_slowest():
    s = spec({"voters": [3, 5], "pre_vote": [True, False]})
    cells = s.cells()
    assert [c.partition for c in cells] == [
        "voters=3/pre_vote=true", "voters=3/pre_vote=false",
        "voters=5/pre_vote=true", "voters=5/pre_vote=false"]
    assert [(c.config.voters, c.config.pre_vote) for c in cells] == [
        (3, True), (3, False), (5, True), (5, False)]
    assert all(c.config.walks == 10 for c in cells)


def test_partition_values_are_plain_and_safe():
    assert partition_of({"partition_weight": 0.3, "mutation": "double-vote"}) == \
        "partition_weight=0.3/mutation=double-vote"
    assert partition_of({"mutation": "a/b c"}) == "mutation=a%2Fb%20c"


def test_to_toml_round_trips(tmp_path):
    s = spec({"voters": [1, 9], "partition_weight": [0.0, 1.5]},
             {"walks": 5, "disable-check": ["LogMatching"], "pre-vote": False})
    path = tmp_path / "sweep.toml"
    path.write_text(s.to_toml())
    assert load_sweep(path) == s


def test_options_given_to_the_command_join_the_base():
    s = with_base(spec({"voters": [3]}), workers=1, seed=4, walks=None)
    assert s.base["workers"] == 1 and s.base["seed"] == 4 and s.base["walks"] == 10
    with pytest.raises(UsageError, match="varied by the sweep's grid"):
        with_base(spec({"seed": [1, 2]}), seed=3)


@pytest.mark.parametrize("grid, base, top, message", [
    ({"voters": [1]}, None, {"command": "hunt"}, "the commands a sweep runs are swarm, elect"),
    ({"voters": [1]}, None, {"extra": 1}, "unknown key 'extra' in sweep file s.toml"),
    ({"votes": [1]}, None, {}, "unknown key 'votes' in [grid] of sweep file s.toml"),
    ({"voters": []}, None, {}, "voters in [grid] of sweep file s.toml must be a non-empty list"),
    ({"voters": 3}, None, {}, "must be a non-empty list of values, got 3"),
    ({"voters": [3, 3]}, None, {}, "repeats a value"),
    ({"workers": [1, 2]}, None, {}, "a grid cannot vary workers"),
    ({"disable-check": [["LogMatching"]]}, None, {}, "a grid cannot vary disable-check"),
    ({"voters": [{"a": 1}]}, None, {}, "values must be numbers, booleans or strings"),
    ({}, None, {}, "names no setting to vary"),
    ({"voters": [3, 10]}, None, {}, "sweep cell voters=10: --voters must be between 1 and 9, "
                                    "got 10"),
    ({"partition_weight": [-1.0]}, None, {}, "cell partition_weight=-1.0: --partition-weight"),
    ({"voters": [3]}, {"out": "x"}, {}, "the sweep folder is given by kraftwalk sweep --out"),
    ({"mutation": ["none", "park-diverging-fetch"]}, None, {},
     "cell mutation=park-diverging-fetch: --mutation park-diverging-fetch is a statistics "
     "bug, which breaks no property and which a swarm sweep cannot show"),
    ({"voters": list(range(1, 10)), "depth": list(range(1, 1200))}, None, {},
     "at most 10,000 are allowed"),
])
def test_bad_sweep_files_name_what_is_wrong(grid, base, top, message):
    with pytest.raises(UsageError) as e:
        spec(grid, base, **top)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_unreadable_sweep_files(tmp_path):
    with pytest.raises(UsageError, match="cannot read sweep file"):
        load_sweep(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("grid = [")
    with pytest.raises(UsageError, match="invalid TOML in sweep file"):
        load_sweep(bad)


@pytest.mark.parametrize("name", ["sweep-safety.toml", "sweep-disruptions.toml"])
def test_shipped_sweep_files_are_valid(name):
    s = load_sweep(ROOT / "experiments" / name)
    assert len(s.cells()) >= 10


def test_a_budget_given_alone_replaces_the_files_budget():
    s = spec({"voters": [3]}, {"walks": 10, "duration": 5.0})
    assert with_base(s, walks=7).base == {"walks": 7}
    assert with_base(s, duration=2.0).base == {"duration": 2.0}
    assert with_base(s, walks=7, duration=2.0).base == {"walks": 7, "duration": 2.0}
    assert with_base(s, seed=1).base == {"walks": 10, "duration": 5.0, "seed": 1}
