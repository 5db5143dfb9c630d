"""The kernels' package: every sub-package a layer, and the old flat module names
still importing (as the very module objects the new names give)."""
import importlib
import pkgutil

import pytest

import kraftwalk.kernels as kernels


@pytest.mark.parametrize("old", sorted(kernels.MOVED))
def test_an_old_name_is_the_moved_module(old):
    before = importlib.import_module(f"kraftwalk.kernels.{old}")
    assert before is importlib.import_module(f"kraftwalk.kernels.{kernels.MOVED[old]}")


@pytest.mark.parametrize("old", sorted(kernels.MOVED_OUT))
def test_a_table_moved_to_the_vocabulary_keeps_its_old_name(old):
    assert importlib.import_module(f"kraftwalk.kernels.{old}") is \
        importlib.import_module(kernels.MOVED_OUT[old])


def test_every_module_has_one_name_only():
    """No moved module is also left at its old place (a twin would compile apart)."""
    flat = {m.name for m in pkgutil.iter_modules(kernels.__path__) if not m.ispkg}
    assert flat == {"features"}
    assert not (set(kernels.MOVED) | set(kernels.MOVED_OUT)) & flat


def test_an_unknown_name_still_fails():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("kraftwalk.kernels.no_such_module")


def test_no_jit_submodule_shadows_a_name_the_jit_package_exports():
    """Importing a submodule sets it as an attribute of its package: one named like an
    exported function (bundle) would replace that function for every later import."""
    import types

    from kraftwalk.kernels import jit

    for m in pkgutil.iter_modules(jit.__path__):
        importlib.import_module(f"{jit.__name__}.{m.name}")
    for name in ("kernel", "entry", "bundle", "call_with_features", "literally"):
        assert not isinstance(getattr(jit, name), types.ModuleType), name
