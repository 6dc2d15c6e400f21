"""Data frames' own missing-value markers (pandas' pd.NA in nullable columns, None in
object columns) are missing values under nan_policy="marginalize", exactly as NaN is;
under the default policy they are refused by name, as before."""

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

import fastgen  # noqa: E402


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(120) % 2
    X = rng.normal(size=(120, 3)) + y[:, None]
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def _frames(X):
    """The same values as frames with each kind of marker."""
    plain = pd.DataFrame(X, columns=list("abc"))
    nullable = plain.astype("Float64")  # NaN becomes pd.NA
    mixed = plain.copy()
    mixed["a"] = mixed["a"].astype("Float64")
    objects = plain.astype(object).where(~np.isnan(X), None)
    return {"nullable": nullable, "mixed": mixed, "object-none": objects}


FITS = {"pooled": lambda *a, **k: fastgen.fit_gda(*a, "pooled", **k),
        "per_class": lambda *a, **k: fastgen.fit_gda(*a, "per_class", **k),
        "diagonal": lambda *a, **k: fastgen.fit_gda(*a, "diagonal", **k),
        "gaussian_nb": fastgen.fit_gaussian_nb}


@pytest.mark.parametrize("form", ["nullable", "mixed", "object-none"])
@pytest.mark.parametrize("name", list(FITS))
def test_markers_are_missing_values(form, name):
    X, y = _data()
    frame = _frames(X)[form]
    want = FITS[name](pd.DataFrame(X, columns=list("abc")), y, nan_policy="marginalize")
    got = FITS[name](frame, y, nan_policy="marginalize")
    assert got == want
    np.testing.assert_array_equal(
        fastgen.predict_proba(got, frame, nan_policy="marginalize"),
        fastgen.predict_proba(want, pd.DataFrame(X, columns=list("abc")),
                              nan_policy="marginalize"))
    U = frame.iloc[:40]
    plain = pd.DataFrame(X, columns=list("abc"))
    assert FITS[name](frame.iloc[40:], y[40:], unlabeled=U, nan_policy="marginalize") == \
        FITS[name](plain.iloc[40:], y[40:], unlabeled=plain.iloc[:40],
                   nan_policy="marginalize")


@pytest.mark.parametrize("form", ["nullable", "mixed", "object-none"])
def test_default_policy_still_names_the_marker(form):
    X, y = _data(1)
    frame = _frames(X)[form]
    with pytest.raises(ValueError, match="missing value|NaN"):
        fastgen.fit_gda(frame, y)


def test_non_numbers_are_still_refused():
    X, y = _data(2)
    frame = pd.DataFrame(X, columns=list("abc")).astype(object)
    frame.iloc[5, 2] = "seven"
    with pytest.raises(ValueError, match="non-numeric entries \\('seven' at row 5"):
        fastgen.fit_gda(frame, y, nan_policy="marginalize")
