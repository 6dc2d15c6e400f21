"""nb_counts' categorical options: each error names the argument that is wrong."""

import numpy as np
import pytest

import fastgen


def _data():
    rng = np.random.default_rng(0)
    return rng.integers(0, 3, (50, 2)), rng.integers(0, 2, 50)


@pytest.mark.parametrize("kw,match", [
    (dict(n_categories=[5]), "n_categories must be an int or have shape"),
    (dict(n_categories=[2, 3]), "n_categories gives feature 0 2 categories"),
    (dict(n_categories=[5, 4], min_categories=8), "not both"),
    (dict(n_categories=[0, 4]), "n_categories must be positive"),
    (dict(min_categories=[1]), "min_categories must be an int or have shape"),
])
def test_errors_name_the_argument(kw, match):
    X, y = _data()
    X0 = X.copy()
    with pytest.raises(ValueError, match=match):
        fastgen.nb_counts(X, y, "categorical", **kw)
    np.testing.assert_array_equal(X, X0)


def test_a_code_beyond_the_fit_names_min_categories():
    X, y = _data()
    p = fastgen.fit_categorical_nb(X, y)
    with pytest.raises(ValueError, match="fitted with 3 categories.*min_categories"):
        fastgen.predict(p, np.array([[3, 0]]))
