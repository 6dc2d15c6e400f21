"""Moved modules keep working for one release as deprecated aliases.

Each alias warns (DeprecationWarning) when it is first imported and gives the same
objects as the new home of its names.
"""

import importlib
import sys

import pytest

import fastgen
import fastgen.naive_bayes
import fastgen.stats

# old module -> {name: the object it must give}
ALIASES = {
    "fastgen.moments": {
        name: getattr(fastgen.stats, name)
        for name in ("ClassMoments", "class_moments", "merge_moments", "SCATTER_KINDS",
                     "total_variance", "variance_floor")
    },
    "fastgen.streaming": {
        name: getattr(fastgen.naive_bayes, name)
        for name in ("NB_MODELS", "NBCounts", "nb_counts", "merge_counts", "nb_from_counts")
    },
    "fastgen.naive_bayes.counts": {
        name: getattr(fastgen.naive_bayes, name)
        for name in ("NB_MODELS", "NBCounts", "nb_counts", "merge_counts", "nb_from_counts",
                     "gaussian_nb_from_moments", "bernoulli_nb_from_counts",
                     "multinomial_nb_from_counts", "complement_nb_from_counts",
                     "categorical_nb_from_counts")
    },
}


def _fresh_import(name):
    sys.modules.pop(name, None)
    parent, _, child = name.rpartition(".")
    if child in vars(sys.modules[parent]):
        delattr(sys.modules[parent], child)
    return importlib.import_module(name)


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_old_module_warns_and_gives_the_same_objects(name):
    with pytest.warns(DeprecationWarning, match=name.replace(".", r"\.")):
        mod = _fresh_import(name)
    for attr, obj in ALIASES[name].items():
        assert getattr(mod, attr) is obj, attr
    assert set(ALIASES[name]) <= set(mod.__all__)


@pytest.mark.parametrize("name", ["moments", "streaming"])
def test_old_submodule_attribute_warns(name):
    sys.modules.pop(f"fastgen.{name}", None)
    vars(fastgen).pop(name, None)
    with pytest.warns(DeprecationWarning):
        mod = getattr(fastgen, name)
    assert mod is sys.modules[f"fastgen.{name}"]


def test_new_homes_do_not_warn():
    """The package's own modules import the new paths only (pytest turns warnings into
    errors, so an internal import of an alias would fail the suite as well)."""
    for name in ("fastgen.stats", "fastgen.stats.counts", "fastgen.naive_bayes.from_counts"):
        importlib.import_module(name)
    for name in ("ClassMoments", "class_moments", "merge_moments", "NBCounts", "nb_counts",
                 "merge_counts", "nb_from_counts"):
        assert getattr(fastgen, name).__module__.startswith(
            ("fastgen.stats", "fastgen.naive_bayes.from_counts")), name


@pytest.mark.parametrize("old,new", [
    ("gaussian_nb_scores_by4", "gaussian_nb_scores_four_classes"),
    ("by4_is_faster", "four_class_sweep_is_faster"),
    ("BY4_MIN_FEATURES", "FOUR_CLASS_SWEEP_MIN_FEATURES"),
])
def test_renamed_kernel_names_warn(old, new):
    import fastgen.kernels.nb as nb_kernels

    with pytest.warns(DeprecationWarning, match=new):
        value = getattr(nb_kernels, old)
    assert value is getattr(nb_kernels, new)
    assert old not in nb_kernels.__all__ and new in nb_kernels.__all__
