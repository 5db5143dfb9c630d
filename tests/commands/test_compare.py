"""`kraftwalk compare`: two configurations' timed statistics, each difference with a
95% bootstrap interval; walks paired by seed and index where both sides have the same
ones; bad folders and options are one line and exit 2."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from kraftwalk.cli import app
from kraftwalk.run.compare import difference

runner = CliRunner()
ELECT = ["elect", "--scenario", "cold-start", "--voters", "3", "--walks", "150",
         "--workers", "1", "--seed", "7", "--no-fail-on-violation"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The same 150 walks without and with a bug whose cost shows in the statistics (a
    follower whose fetch timer never restarts runs elections under a healthy leader),
    and one run of both pre-vote settings."""
    base = tmp_path_factory.mktemp("compare")
    a, b, both = base / "a", base / "b", base / "both"
    for out, extra in ((a, []), (b, ["--mutation", "no-fetch-timer-reset"]),
                       (both, ["--pre-vote", "both"])):
        r = runner.invoke(app, [*ELECT, *extra, "--out", str(out)])
        assert r.exit_code == 0, r.output
    return a, b, both


def rows(output: str) -> dict[str, list[str]]:
    return {c[1].strip(): [x.strip() for x in c[2:-1]]
            for c in (line.split("|") for line in output.splitlines())
            if len(c) > 7 and c[1].strip() not in ("statistic", "---")}


def test_a_bug_that_costs_elections_shows_as_differences(folders, tmp_path):
    a, b, _ = folders
    r = runner.invoke(app, ["compare", str(a), str(b), "--out", str(tmp_path / "c")],
                      env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "walks paired by seed and index" in r.output
    assert ("mutation none -> no-fetch-timer-reset: kafka 4.3, voters 3, pre-vote on, "
            "scenario cold-start") in r.output
    got = rows(r.output)
    # every walk of the mutated side breaks HealthyLeaderKept, none of the other
    a_share, b_share, _, _, _, differs = got["walks with a liveness or safety violation "
                                            "(% of walks)"]
    assert (a_share, b_share, differs) == ("0", "100", "yes")
    assert got["time to elect, p50 (ms)"][-1] in ("yes", "no")
    t = pd.read_parquet(tmp_path / "c" / "compare.parquet")
    assert t["paired"].all() and (t["walks_a"] == 150).all()
    assert ((t["ci_low"] <= t["difference"]) & (t["difference"] <= t["ci_high"])).all()
    assert (tmp_path / "c" / "compare.png").stat().st_size > 10_000
    again = runner.invoke(app, ["compare", str(a), str(b)], env={"COLUMNS": "200"})
    assert again.output.splitlines()[2:] == r.output.splitlines()[2:-1]  # deterministic


def test_one_folder_split_by_a_setting(folders):
    _, _, both = folders
    r = runner.invoke(app, ["compare", str(both), "--by", "pre-vote", "--baseline", "off"],
                      env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "pre-vote off -> on: kafka 4.3, voters 3, scenario cold-start" in r.output
    # pre-vote lets no partitioned voter stand: failed pre-votes appear only with it
    assert "failed pre-votes per walk" in rows(r.output)


@pytest.mark.parametrize("args, message", [
    (["compare"], "give the elect folder to compare"),
    (["compare", "{missing}"], "is not a folder"),
    (["compare", "{a}"], "give --by to compare the values of one setting of this folder, "
                         "or a second elect folder"),
    (["compare", "{both}"], "give --by to compare the values of one setting of this folder:"
                            " it varies pre-vote"),
    (["compare", "{both}", "--by", "colour"], "--by must be one of kafka, voters"),
    (["compare", "{both}", "--by", "voters"], "--by voters: the folder has one value of it"),
    (["compare", "{both}", "--by", "pre-vote", "--baseline", "maybe"],
     "--baseline maybe is not a pre-vote value of the folder; it has off, on"),
    (["compare", "{a}", "--baseline", "on"], "--baseline needs --by"),
    (["compare", "{a}", "{b}", "--by", "kafka"], "--by and --baseline split one folder"),
    (["compare", "{swarm}"], "is not an elect folder"),
])
def test_bad_input_is_one_line_and_exit_2(folders, tmp_path, args, message):
    a, b, both = folders
    swarm = tmp_path / "swarm"
    swarm.mkdir()
    (swarm / "run.json").write_text('{"command": "swarm"}')
    paths = {"a": a, "b": b, "both": both, "missing": tmp_path / "nope", "swarm": swarm}
    r = runner.invoke(app, [x.format(**paths) for x in args])
    assert r.exit_code == 2, r.output
    assert message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def crafted(where, both, voters_on: int, voters_off: int):
    """An elect folder of ``both``'s walks, those with pre-vote on saved as the cell of
    ``voters_on`` voters and the others as that of ``voters_off``."""
    import pyarrow.compute as pc

    from kraftwalk.storage import elect_folder as ef, rundir

    t = ef.read_cells(both, "walks")
    where.mkdir()
    (where / "run.json").write_bytes((both / "run.json").read_bytes())
    (where / "config.toml").write_text((both / "config.toml").read_text()
                                       .replace("voters = [3]", "voters = [3, 5]"))
    for pre_vote, voters in ((True, voters_on), (False, voters_off)):
        part = t.filter(pc.equal(t["pre_vote"], pre_vote))
        rundir.write_part(ef.cell_layout(where, "4.3", voters, pre_vote), "walks", 0,
                          part.num_rows, part)


def test_folders_without_a_common_cell_are_refused(folders, tmp_path):
    """Each folder has both pre-vote settings and both cluster sizes, but no cell is in
    both: refused by name."""
    _, _, both = folders
    crafted(tmp_path / "other", both, 5, 3)
    crafted(tmp_path / "mixed", both, 3, 5)
    r = runner.invoke(app, ["compare", str(tmp_path / "other"), str(tmp_path / "mixed")])
    assert r.exit_code == 2 and "share no cell" in r.output


def test_paired_intervals_see_what_unpaired_ones_cannot():
    """B = A + 1 ms on every walk, over a spread of seconds: the pairs pin the difference
    at 1; the sides resampled apart give an interval hundreds of times wider."""
    rng = np.random.default_rng(0)
    a = rng.exponential(1000.0, 2000)
    b = a + 1.0
    _, _, d, low, high, _, _ = difference(a, b, "mean", True, np.random.default_rng(1))
    assert d == pytest.approx(1.0) and low == pytest.approx(1.0) and high == pytest.approx(1.0)
    _, _, _, low, high, _, _ = difference(a, b, "mean", False, np.random.default_rng(1))
    assert low < 0 < high and high - low > 50


def test_shares_and_quantiles():
    a = np.array([0, 0, 1, 1], dtype=float)  # 50% of walks
    b = np.array([1, 1, 1, 1], dtype=float)
    sa, sb, d, *_ = difference(a, b, "share", True, np.random.default_rng(0))
    assert (sa, sb, d) == (50.0, 100.0, 50.0)
    x = np.arange(1, 101, dtype=float)
    sa, _, _, *_ = difference(x, x, "p50", True, np.random.default_rng(0))
    assert sa == pytest.approx(50.5)
    y = np.where(x > 50, np.nan, x)  # unmeasured walks do not count
    sa, *_ = difference(y, y, "mean", True, np.random.default_rng(0))
    assert sa == pytest.approx(25.5)


def test_a_liveness_bugs_cost_with_its_property_off(tmp_path):
    """--disable-check lets the walks of a liveness bug go on past the property that
    would stop them, so its cost shows: a follower whose fetch timer never restarts
    deposes healthy leaders."""
    common = ["elect", "--scenario", "random-faults", "--voters", "3", "--walks", "200",
              "--workers", "1", "--seed", "7"]
    a, b = tmp_path / "a", tmp_path / "b"
    assert runner.invoke(app, [*common, "--out", str(a)]).exit_code == 0
    r = runner.invoke(app, [*common, "--mutation", "no-fetch-timer-reset", "--disable-check",
                            "HealthyLeaderKept", "--out", str(b)])
    assert r.exit_code == 0, r.output  # nothing checked fired
    assert 'disabled-checks = ["HealthyLeaderKept"]' in (b / "config.toml").read_text()
    got = rows(runner.invoke(app, ["compare", str(a), str(b)],
                             env={"COLUMNS": "200"}).output)
    a_share, b_share, _, _, _, differs = got["walks with a disruptive election (% of walks)"]
    assert float(b_share) > float(a_share) + 30 and differs == "yes"
    # config.toml repeats the run, the property still off
    again = runner.invoke(app, ["elect", "--config", str(b / "config.toml"), "--out",
                                str(tmp_path / "again")])
    assert again.exit_code == 0, again.output
    from kraftwalk.storage.elect_folder import read_cells

    assert read_cells(tmp_path / "again", "walks").equals(read_cells(b, "walks"))


def test_elect_refuses_an_unknown_property_to_disable(tmp_path):
    r = runner.invoke(app, ["elect", "--disable-check", "Liveness", "--out",
                            str(tmp_path / "x")])
    assert r.exit_code == 2 and "unknown property 'Liveness' in --disable-check" in r.output
    assert not (tmp_path / "x").exists()
