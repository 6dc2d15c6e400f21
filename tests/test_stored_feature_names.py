"""One check of the feature names a fitted object stores: params, moments and counts
accept and refuse the same names with the same messages (they once had three copies of
the check, which had drifted: the statistics took one string as a sequence of
letters)."""

import dataclasses

import numpy as np
import pytest

import fastgen


def _objects():
    rng = np.random.default_rng(0)
    X = rng.poisson(2.0, size=(40, 3)).astype(float)
    y = np.arange(40) % 2
    return {
        "GDAParams": fastgen.fit_gda(X, y),
        "MultinomialNBParams": fastgen.fit_multinomial_nb(X, y),
        "ClassMoments": fastgen.class_moments(X, y),
        "NBCounts": fastgen.nb_counts(X, y, "multinomial"),
    }


BAD = [
    ("abc", "must be a sequence of str, not one str"),
    (("a", "b", 3), "must all be str"),
    (("a", "b"), "has 2 names; the model has 3 features"),
    (("a", "a", "b"), "must be distinct"),
    (7, "must be a sequence of str; got 7"),
]


@pytest.mark.parametrize("names,problem", BAD)
@pytest.mark.parametrize("owner", list(_objects()))
def test_bad_names_are_refused_alike(owner, names, problem):
    obj = _objects()[owner]
    with pytest.raises(ValueError, match=f"^{owner}.feature_names {problem}"):
        dataclasses.replace(obj, feature_names=names)


@pytest.mark.parametrize("owner", list(_objects()))
def test_good_names_are_stored_as_a_tuple_of_str(owner):
    obj = _objects()[owner]
    for names in (["x", "y", "z"], np.array(["x", "y", "z"]), ("x", "y", "z")):
        got = dataclasses.replace(obj, feature_names=names).feature_names
        assert got == ("x", "y", "z") and all(type(n) is str for n in got)
    assert dataclasses.replace(obj, feature_names=None).feature_names is None
