"""The registry of action families is the one list: the kernels' family ids, the
tuned weights, the omittable families, the feature families and the fault-weight
options are derived from it."""
import numpy as np
from typer.testing import CliRunner

from kraftwalk.vocabulary import families as F


def test_each_family_is_declared_once_in_the_kernels_cut_off_order():
    assert len(set(F.FAMILY_NAMES)) == len(F.FAMILIES)
    for f in F.FAMILIES:
        assert f.kind in F.KINDS and f.acts_on in F.ACTS_ON and f.feature in F.FEATURES, f
        assert f.weight > 0 and f.meaning, f
    # the base families first, then each feature's together (kernels.transition.n_families)
    order = [F.FEATURES.index(f.feature) for f in F.FAMILIES]
    assert order == sorted(order)
    assert F.N_BASE_FAMILIES == order.count(0)


def test_the_kernels_families_are_the_registrys():
    from kraftwalk.kernels.state import layout
    from kraftwalk.kernels.choosers import swarm
    from kraftwalk.kernels import transition

    assert transition.FAMILY_NAMES == F.FAMILY_NAMES
    assert transition.N_FAMILIES == len(F.FAMILIES) <= layout.MAX_FAMILIES
    for name, k in F.FAMILY_ID.items():
        assert getattr(transition, "FAM_" + name.upper()) == k, name
    np.testing.assert_array_equal(swarm.DEFAULT_WEIGHTS, F.BASE_WEIGHTS)
    np.testing.assert_array_equal(swarm.OMITTABLE, [f.omittable for f in F.FAMILIES])
    assert swarm.FEATURE_WEIGHTS == F.FEATURE_WEIGHTS
    for feature, weights in F.FEATURE_WEIGHTS.items():
        w = swarm.with_feature_weights(swarm.DEFAULT_WEIGHTS, [feature])
        assert {F.FAMILY_NAMES[k]: w[k] for k in np.flatnonzero(w != swarm.DEFAULT_WEIGHTS)} \
            == weights
    assert set(transition.NODE_FAMILIES) | {F.FAMILY_ID[f.name] for f in F.FAMILIES
                                           if f.acts_on == "network"} \
        == set(range(len(F.FAMILIES)))


def test_the_fault_weight_options_are_the_registrys():
    from kraftwalk.cli import app
    from kraftwalk.config import FAULT_WEIGHTS, RunConfig

    assert FAULT_WEIGHTS == F.WEIGHT_OPTIONS
    fields = set(RunConfig.__dataclass_fields__)
    text = CliRunner().invoke(app, ["swarm", "--help"], env={"COLUMNS": "4000"}).output
    for option, family in F.WEIGHT_OPTIONS.items():
        assert option in fields and F.FAMILY_ID[family] >= 0
        assert "--" + option.replace("_", "-") in text, option
    assert F.weights_help() in " ".join(text.replace("│", " ").split())
