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
        assert c.since in R.RELEASES and all(b in R.RELEASES for b in c.backports), c
        # a switch or timing, or what the model does (always: the model's rule, said how)
        assert (c.switch or c.timing) != bool(c.model) or c.always, c
        assert not c.always or (c.since == R.RELEASES[0] and c.model), c
        assert c.issue.startswith(("KAFKA-", "KIP-")), c
    for r in R.RELEASES[1:]:  # every release after the first changed something, or says so
        assert R.new_in(r) or r in R.QUIET, r


def test_within_a_line_a_release_has_every_change_of_the_releases_before_it():
    def vt(v):
        return tuple(int(x) for x in v.split(".")) + (0,) * (3 - v.count(".") - 1)

    lines = {}
    for r in R.RELEASES:
        lines.setdefault(vt(r)[:2], []).append(r)
    for c in R.CHANGES:
        for line in lines.values():
            have = [R.has(r, c) for r in line]
            assert have == sorted(have), (c, line)  # off ... off on ... on
        newer = [r for r in R.RELEASES if vt(r)[:2] > vt(c.since)[:2]]
        assert all(R.has(r, c) for r in newer) or c.line, c


def test_a_backport_reaches_the_older_line_from_its_release_on():
    k18723 = next(c for c in R.CHANGES if c.issue == "KAFKA-18723")
    assert [R.has(r, k18723) for r in ("3.9", "3.9.1", "3.9.2", "4.0", "4.0.1", "4.3")] == \
        [False, True, True, False, True, True]


def test_the_lost_election_rule_of_each_release():
    """KAFKA-18345 as released: 3.9.0 and 4.0.0 back off as before, 3.9.2 and 4.0.1 with
    their own jitter, 4.1 on waits; a timed-out Candidate backs off only before 4.0."""
    loss = {r: R.timing(r)["election_loss"] for r in R.RELEASES}
    assert loss == {"3.9": "backoff", "3.9.1": "backoff", "3.9.2": "jittered-backoff-3.9",
                    "4.0": "backoff", "4.0.1": "jittered-backoff", "4.1": "wait",
                    "4.2": "wait", "4.3": "wait"}
    assert [R.timing(r)["candidate_timeout_backoff"] for r in ("3.9.2", "4.0")] == [1.0, 0.0]


def test_every_timing_a_release_sets_is_a_timing_parameter_with_the_newest_as_default():
    from kraftwalk.elect_config import timing_value
    from kraftwalk.vocabulary.timing import TIMING, TIMING_BY_NAME

    for r in R.RELEASES:
        for name, value in R.timing(r).items():
            timing_value(name, value)  # a valid value (raises if not)
    for name, value in R.timing(R.DEFAULT).items():
        assert TIMING[TIMING_BY_NAME[name]].default == timing_value(name, value), name


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
    rows = sum(1 for r in R.RELEASES for _ in R.new_in(r))
    assert len(table.splitlines()) == 2 + rows + len(R.QUIET)
    assert rows >= len(R.CHANGES)


def documentation() -> str:
    """README.md and every docs/*.md page, one after another: a generated table may live
    in any of them (experiments/update_readme.py fills them all)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    return "\n".join(page.read_text() for page in pages)


def test_the_documentation_shows_the_registrys_table():
    assert f"<!-- releases -->\n{R.markdown_table()}\n<!-- end -->" in documentation(), \
        "run python experiments/update_readme.py"


def test_every_difference_says_what_kafka_and_the_model_do_why_and_its_cost():
    from kraftwalk.vocabulary.differences import BY_NAME, COSTS, DIFFERENCES

    assert len(BY_NAME) == len(DIFFERENCES)
    for d in DIFFERENCES:
        assert d.kafka and d.model and d.why and d.cost in COSTS, d


def test_the_documentation_shows_the_differences():
    from kraftwalk.vocabulary.differences import markdown_table

    assert f"<!-- differences -->\n{markdown_table()}\n<!-- end -->" in documentation(), \
        "run python experiments/update_readme.py"
