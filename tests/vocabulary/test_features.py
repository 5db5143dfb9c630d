"""The feature mask's bits are declared once: the switches and the mutations, each in
its place, none overlapping another or the property checks; the kernels name them
from the registry, and a run's settings become its mask in one function."""
from kraftwalk.vocabulary import features as V
from kraftwalk.vocabulary.mutations import (
    FIRST_BIT, LAST_BIT, MUTATION_BIT, MUTATION_NAMES, MUTATIONS, timed_scenario,
)
from kraftwalk.vocabulary.properties import INVARIANT_NAMES, LIVENESS_NAMES


def test_the_bits_do_not_overlap():
    checks = (1 << (len(INVARIANT_NAMES) + len(LIVENESS_NAMES))) - 1
    assert checks <= V.CHECKS_MASK
    bits = [s.bit for s in V.SWITCHES] + list(MUTATION_BIT.values())
    assert len(set(bits)) == len(bits)
    assert all(b & V.CHECKS_MASK == 0 and bin(b).count("1") == 1 for b in bits)
    assert all(1 << 32 <= s.bit < 1 << FIRST_BIT for s in V.SWITCHES)
    assert sorted(MUTATION_BIT.values()) == [1 << (FIRST_BIT + k) for k in range(len(MUTATIONS))]
    assert max(MUTATION_BIT.values()) <= 1 << LAST_BIT


def test_the_kernels_name_the_registrys_bits():
    from kraftwalk.kernels import features as K

    for s in V.SWITCHES:
        assert getattr(K, s.name.upper()) == s.bit, s.name
    named = {v for k, v in vars(K).items() if k.startswith("MUT_")}
    assert named == set(MUTATION_BIT.values())


def test_mutations_are_well_formed():
    from kraftwalk.config import MUTATIONS as CONFIG_MUTATIONS
    from kraftwalk.vocabulary.timing import SCENARIO_NAMES as SCENARIOS

    assert CONFIG_MUTATIONS == MUTATION_NAMES == ("none", *MUTATIONS)
    for m in MUTATIONS.values():
        assert m.kind in ("safety", "liveness", "statistics") and m.description, m.name
        assert set(m.needs) <= set(V.RUN_SWITCHES), m.name
        assert (timed_scenario(m.name) in SCENARIOS) == (m.kind == "liveness"), m.name
        assert (m.scenario in SCENARIOS) == (m.kind != "safety"), m.name


def test_a_runs_settings_make_its_mask():
    base = V.feature_mask(pre_vote=False, kafka="3.9")  # the oldest release: no switches
    assert base == (1 << len(INVARIANT_NAMES)) - 1
    assert V.feature_mask(pre_vote=True, kafka="3.9") == base | V.SWITCH_BIT["pre_vote"]
    assert V.feature_mask(pre_vote=False) == (  # the newest: every release switch on
        base | V.SWITCH_BIT["kafka_17642"] | V.SWITCH_BIT["kafka_17030"])
    assert V.feature_mask(pre_vote=False, kafka="3.9.1") == base | V.SWITCH_BIT["kafka_17030"]
    off = V.feature_mask(pre_vote=False, kafka="3.9", disabled_checks=("LogMatching",))
    assert off == base & ~(1 << INVARIANT_NAMES.index("LogMatching"))
    both = V.feature_mask(pre_vote=False, kafka="3.9", snapshots=True,
                          mutation="snapshot-above-hw")
    assert both == base | V.SWITCH_BIT["snapshots"] | MUTATION_BIT["snapshot-above-hw"]
    # a mutation that undoes a fix turns its release switch off: 3.9.2 as 3.9 had it
    undone = V.feature_mask(pre_vote=False, kafka="3.9.2", mutation="voter-skips-bootstrap-fetch")
    assert undone == base | MUTATION_BIT["voter-skips-bootstrap-fetch"]
    timed = V.feature_mask(pre_vote=False, kafka="3.9", liveness=True)
    assert timed == (1 << (len(INVARIANT_NAMES) + len(LIVENESS_NAMES))) - 1
    quiet = V.feature_mask(pre_vote=False, kafka="3.9", liveness=True,
                           disabled_checks=("HealthyLeaderKept",))
    assert quiet == timed & ~(1 << (len(INVARIANT_NAMES)
                                    + LIVENESS_NAMES.index("HealthyLeaderKept")))
