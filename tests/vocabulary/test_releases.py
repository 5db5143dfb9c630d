"""Kafka releases: versions resolve to releases, each change belongs to one, and a
release's modelled changes are exactly the switches its feature mask carries."""
import pytest

from kraftwalk.vocabulary import releases as R
from kraftwalk.vocabulary.features import RUN_SWITCHES, SWITCH_BIT, feature_mask


def test_releases_are_in_order_and_the_newest_is_the_default():
    keys = [tuple(int(x) for x in r.split(".")) for r in R.RELEASES]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert R.DEFAULT == R.RELEASES[-1]


def test_a_version_names_its_release_and_an_unknown_one_lists_the_known():
    assert R.release_of("4.0.0") == "4.0" and R.release_of("4.3.1") == "4.3"
    assert all(R.release_of(r) == r for r in R.RELEASES)
    with pytest.raises(ValueError) as e:
        R.release_of("5.0")
    assert "'5.0'" in str(e.value) and ", ".join(R.RELEASES) in str(e.value)


def test_every_change_is_in_a_release_and_modelled_or_says_what_the_model_does():
    for c in R.CHANGES:
        assert c.since in R.RELEASES, c
        assert bool(c.switch) != bool(c.model), c  # a switch, or what the model does instead
        assert c.issue.startswith(("KAFKA-", "KIP-")), c
    for r in R.RELEASES[1:]:  # every release after the first changed something, or says so
        assert R.new_in(r) or r in R.QUIET, r


def test_a_release_has_every_change_of_the_releases_before_it():
    for c in R.CHANGES:
        have = [R.has(r, c) for r in R.RELEASES]
        assert have == sorted(have), c  # off ... off on ... on


def test_the_feature_mask_carries_exactly_the_releases_switches():
    for r in R.RELEASES:
        mask = feature_mask(pre_vote=True, kafka=r)
        for name, on in R.switches(r).items():
            if name in RUN_SWITCHES:
                continue  # pre-vote is its own option; the config defaults it by release
            assert bool(mask & SWITCH_BIT[name]) == on, (r, name)
    assert not feature_mask(pre_vote=False, kafka="3.9") & SWITCH_BIT["kafka_17642"]
    assert feature_mask(pre_vote=True, kafka="4.0") & SWITCH_BIT["kafka_17642"]


def test_the_table_has_a_row_per_change():
    table = R.markdown_table()
    assert all(c.issue in table for c in R.CHANGES)
    assert len(table.splitlines()) == 2 + len(R.CHANGES) + len(R.QUIET)


def test_the_readme_shows_the_registrys_table():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert f"<!-- releases -->\n{R.markdown_table()}\n<!-- end -->" in readme, \
        "run python experiments/update_readme.py"
