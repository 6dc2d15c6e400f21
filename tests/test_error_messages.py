"""Errors that say what is wrong, and inputs that used to fail for no good reason.

Each family is a grid or a property: missing values in data frames and object arrays
(named with their row and column), missing labels (named with their row), priors keyed
by class label, long-double and half-precision X, uint64 labels near 2**64, stray
category codes, and the exact list of accepted label types (which round-trip through
save_params/load_params without pickle).
"""

import datetime
import decimal
import fractions

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import fastgen

SETTINGS = settings()  # the profile's (tests/conftest.py): derandomized by default

_rng = np.random.default_rng(7)
_X = np.abs(_rng.normal(size=(40, 3))) + np.arange(40)[:, None] % 2  # >= 0: counts too
_Y = np.arange(40) % 2
_C = _rng.poisson(2.0, size=(40, 3)).astype(np.float64)


def _fits(y=_Y):
    """name -> fit(X): one per family, dense X."""
    return {
        "gda": lambda X: fastgen.fit_gda(X, y, reg=0.1),
        "gaussian_nb": lambda X: fastgen.fit_gaussian_nb(X, y),
        "logistic": lambda X: fastgen.fit_logistic(X, y, l2=1.0),
        "multinomial_nb": lambda X: fastgen.fit_multinomial_nb(X, y),
    }


# ------------------------------------------------------------------ missing values in X

_MARKERS = {"pd.NA": pd.NA, "None": None, "NaN": np.nan, "NaT": pd.NaT}


def _frame_with(marker, i, j, how):
    """A frame (or object array) like _X with the missing value ``marker`` at (i, j)."""
    cols = {f"f{k}": _X[:, k].astype(object) for k in range(3)}
    if how == "object frame":
        cols[f"f{j}"][i] = _MARKERS[marker]
        return pd.DataFrame(cols)
    if how == "nullable frame":  # Float64 columns hold pd.NA
        df = pd.DataFrame({k: pd.array(v.astype(float), dtype="Float64")
                           for k, v in cols.items()})
        df.iloc[i, j] = pd.NA
        return df
    A = _X.astype(object)
    A[i, j] = _MARKERS[marker]
    return A


@pytest.mark.parametrize("fit", list(_fits()))
@pytest.mark.parametrize("how,marker", [
    ("object frame", "pd.NA"), ("object frame", "None"), ("object frame", "NaT"),
    ("nullable frame", "pd.NA"), ("object array", "None"), ("object array", "pd.NA"),
    ("object array", "NaT"),
])
@pytest.mark.parametrize("i,j", [(0, 0), (17, 2), (39, 1)])
def test_missing_value_in_X_is_named(fit, how, marker, i, j):
    X = _frame_with(marker, i, j, how)
    name = f", 'f{j}'" if "frame" in how else ""
    with pytest.raises(ValueError, match=rf"X contains a missing value \({marker}\) at "
                                         rf"row {i}, column {j} \(0-based{name}\); "):
        _fits()[fit](X)


@pytest.mark.parametrize("how", ["object frame", "object array"])
def test_missing_value_at_predict_time_is_named(how):
    model = fastgen.fit_gaussian_nb(_X, _Y)
    X = _frame_with("pd.NA", 5, 1, how)
    if how == "object frame":
        model = fastgen.fit_gaussian_nb(pd.DataFrame(_X, columns=["f0", "f1", "f2"]), _Y)
    with pytest.raises(ValueError, match=r"missing value \(pd.NA\) at row 5, column 1"):
        fastgen.predict_proba(model, X)


@pytest.mark.parametrize("value", ["abc", b"x", object()])
def test_non_numeric_entry_is_named(value):
    A = _X.astype(object)
    A[3, 2] = value
    with pytest.raises(ValueError,
                       match=r"non-numeric entries \(.* at row 3, column 2 \(0-based\)\)"):
        fastgen.fit_gaussian_nb(A, _Y)


# ---------------------------------------------------------------------- missing labels

def _labels_with_missing(container, marker, i):
    base = ["a", "b"] * 20
    if container == "datetime64":
        y = np.array(["2020-01-01", "2021-01-01"] * 20, dtype="datetime64[D]")
        y[i] = np.datetime64("NaT")
        return y
    values = list(base)
    values[i] = _MARKERS[marker]
    if container == "list":
        return values
    if container == "object array":
        return np.array(values, dtype=object)
    if container == "category":
        return pd.Series(values, dtype="category")
    return pd.Series(values, dtype=container)  # "object", "str", "string"


_MISSING_LABELS = [  # (container, marker given, marker named)
    ("object", "None", "None"), ("object", "NaN", "NaN"), ("object", "pd.NA", "pd.NA"),
    ("str", "None", "NaN"), ("str", "NaN", "NaN"), ("string", "None", "pd.NA"),
    ("string", "pd.NA", "pd.NA"), ("category", "NaN", "NaN"),
    ("object array", "None", "None"), ("object array", "pd.NA", "pd.NA"),
    ("list", "None", "None"), ("list", "NaN", "NaN"), ("datetime64", "NaT", "NaT"),
]


@pytest.mark.parametrize("container,marker,named", _MISSING_LABELS)
@pytest.mark.parametrize("i", [0, 13, 39])
@pytest.mark.parametrize("fit", ["gaussian_nb", "logistic"])
def test_missing_label_is_named(container, marker, named, i, fit):
    y = _labels_with_missing(container, marker, i)
    with pytest.raises(ValueError, match=rf"y contains {named} \(a missing label\) at "
                                         rf"row {i}; every sample needs a label"):
        _fits(y)[fit](_X)


@pytest.mark.parametrize("i", [0, 21])
def test_missing_float_label_is_named(i):
    y = _Y.astype(float)
    y[i] = np.nan
    with pytest.raises(ValueError, match=rf"y contains NaN \(a missing label\) at row {i}"):
        fastgen.fit_gda(_X, y)
    y[i] = np.inf
    with pytest.raises(ValueError, match=rf"y contains infinity at row {i}"):
        fastgen.fit_gda(_X, y)


# ---------------------------------------------------------------- priors by class label

_PRIOR_FITS = {
    "fit_gda": lambda X, y, p: fastgen.fit_gda(X, y, priors=p).priors,
    "fit_gaussian_nb": lambda X, y, p: np.exp(fastgen.fit_gaussian_nb(
        X, y, priors=p).class_log_prior),
    "gda_from_moments": lambda X, y, p: fastgen.gda_from_moments(
        fastgen.class_moments(X, y), priors=p).priors,
    "gaussian_nb_from_moments": lambda X, y, p: np.exp(fastgen.gaussian_nb_from_moments(
        fastgen.class_moments(X, y, kind="diagonal"), priors=p).class_log_prior),
    "fit_multinomial_nb": lambda X, y, p: np.exp(fastgen.fit_multinomial_nb(
        X, y, class_prior=p).class_log_prior),
    "fit_bernoulli_nb": lambda X, y, p: np.exp(fastgen.fit_bernoulli_nb(
        X, y, class_prior=p).class_log_prior),
    "nb_from_counts": lambda X, y, p: np.exp(fastgen.nb_from_counts(
        fastgen.nb_counts(X, y), class_prior=p).class_log_prior),
}


@st.composite
def labelled_priors(draw):
    K = draw(st.integers(2, 4))
    kind = draw(st.sampled_from(["str", "int", "uint64"]))
    if kind == "str":
        labels = draw(st.lists(st.text("abcxyz", min_size=1, max_size=3), min_size=K,
                               max_size=K, unique=True))
        classes = np.array(labels)
    else:
        top = 2**64 - 1 if kind == "uint64" else 1000
        labels = draw(st.lists(st.integers(top - 1000, top), min_size=K, max_size=K,
                               unique=True))
        classes = np.array(labels, dtype=np.uint64 if kind == "uint64" else np.int64)
    w = np.array(draw(st.lists(st.integers(1, 9), min_size=K, max_size=K)), float)
    order = draw(st.permutations(range(K)))
    return classes, w / w.sum(), order


@pytest.mark.parametrize("fit", list(_PRIOR_FITS))
@SETTINGS
@given(case=labelled_priors())
def test_priors_keyed_by_class_label(fit, case):
    """A mapping {label: prior}, in any key order, gives what the array in the order of
    the sorted classes gives; a Series too."""
    classes, p, order = case
    y = classes[np.arange(_X.shape[0]) % classes.shape[0]]
    srt = np.argsort(classes)
    want = _PRIOR_FITS[fit](_X, y, p[srt])
    mapping = {classes[k].item(): p[k] for k in order}
    np.testing.assert_allclose(_PRIOR_FITS[fit](_X, y, mapping), want, rtol=1e-12)
    np.testing.assert_allclose(_PRIOR_FITS[fit](_X, y, pd.Series(mapping)), want,
                               rtol=1e-12)


@pytest.mark.parametrize("fit", list(_PRIOR_FITS))
@pytest.mark.parametrize("priors,match", [
    ({"a": 0.5, "b": 0.5}, r"no entry for the class\(es\) \['c'\]; the classes are "
                           r"\['a', 'b', 'c'\]"),
    ({"a": 0.2, "b": 0.3, "c": 0.4, "d": 0.1}, r"entries for \['d'\], which are not "
                                               r"classes of y"),
    ({"a": 0.5, "b": 0.5, 7: 0.0}, r"no entry for the class\(es\) \['c'\] and entries "
                                   r"for \[7\]"),
    ({"a": 0.2, "b": 0.3, "c": 0.6}, r"must sum to 1"),
    ({0.2, 0.3, 0.5}, r"numbers in the order of the classes, or a dict"),
])
def test_priors_mapping_errors(fit, priors, match):
    y = np.array(["a", "b", "c"])[np.arange(_X.shape[0]) % 3]
    with pytest.raises(ValueError, match=match):
        _PRIOR_FITS[fit](_X, y, priors)


# -------------------------------------------------------------- long double and float16

_WIDE_AND_NARROW = [np.float16, np.longdouble, np.int8, np.uint64, np.bool_]


@pytest.mark.parametrize("dtype", _WIDE_AND_NARROW)
@pytest.mark.parametrize("fit", list(_fits()))
def test_other_real_dtypes_fit_as_float64(dtype, fit):
    """Every real dtype other than float32 becomes float64 (docs/guide/inputs.rst): the
    same model as from the float64 copy, and predictions on that dtype too."""
    X = _X * 4 if dtype in (np.int8, np.uint64) else _X
    X = X > 1 if dtype is np.bool_ else X
    Xd = X.astype(dtype)
    want = _fits()[fit](Xd.astype(np.float64))
    got = _fits()[fit](Xd)
    assert got.dtype == np.float64
    assert got == want
    np.testing.assert_array_equal(fastgen.predict_proba(got, Xd),
                                  fastgen.predict_proba(want, Xd.astype(np.float64)))


@pytest.mark.parametrize("sparse", [False, True])
def test_long_double_beyond_float64_is_named(sparse):
    X = _X.astype(np.longdouble)
    X[11, 2] = np.longdouble(10) ** 400
    X = sp.csr_matrix(X) if sparse else X
    with pytest.raises(ValueError, match=r"X value at row 11, column 2 \(0-based; 1e\+400\) "
                                         r"overflows float64"):
        fastgen.fit_multinomial_nb(X, _Y)


def test_long_double_at_predict_time_of_a_float32_model():
    model = fastgen.fit_gaussian_nb(_X.astype(np.float32), _Y)
    Xl = _X.astype(np.longdouble)
    np.testing.assert_array_equal(fastgen.predict(model, Xl),
                                  fastgen.predict(model, _X.astype(np.float32)))
    Xl[3, 0] = 1e300
    with pytest.raises(ValueError, match=r"row 3, column 0 \(0-based; 1e\+300\) overflows float32"):
        fastgen.predict(model, Xl)


# ------------------------------------------------------------- uint64 labels near 2**64

@pytest.mark.parametrize("fit", list(_fits()))
@SETTINGS
@given(labels=st.lists(st.integers(2**64 - 2**20, 2**64 - 1), min_size=2, max_size=4,
                       unique=True))
def test_uint64_labels_near_the_top_round_trip(fit, labels, tmp_path_factory):
    classes = np.array(labels, dtype=np.uint64)
    y = classes[np.arange(_X.shape[0]) % classes.shape[0]]
    model = _fits(y)[fit](_X)
    np.testing.assert_array_equal(model.classes, np.sort(classes))
    assert model.classes.dtype == np.uint64
    pred = fastgen.predict(model, _X)
    assert pred.dtype == np.uint64 and set(pred.tolist()) <= set(labels)
    path = fastgen.save_params(tmp_path_factory.mktemp("u64") / "m", model)
    assert fastgen.load_params(path) == model


# ---------------------------------------------------------------- stray category codes

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("code", [2000, 10**6, 10**9, 1e20])
@pytest.mark.parametrize("i,j", [(0, 0), (23, 2)])
def test_stray_category_code_is_refused(sparse, code, i, j):
    X = _rng.integers(0, 5, size=(40, 3)).astype(np.float64)
    X[i, j] = code
    Xs = sp.csr_matrix(X) if sparse else X
    with pytest.raises(ValueError, match=rf"category code {int(code)} at row {i}, column "
                                         rf"{j} \(0-based\), but feature {j} has \d distinct "
                                         rf"codes"):
        fastgen.fit_categorical_nb(Xs, _Y)


@pytest.mark.parametrize("sparse", [False, True])
def test_wide_tables_that_the_data_or_min_categories_justify(sparse):
    """Codes up to 1023, or up to 16 times a feature's distinct codes, or covered by
    min_categories, are categories: the table is as wide as they say."""
    n = 200
    y = np.arange(n) % 2
    X = np.zeros((n, 3))
    X[:, 0] = np.arange(n) % 4
    X[5, 0] = 1023  # within the floor
    X[:, 1] = np.arange(n) % 100 * 16  # 100 distinct codes up to 1584 < 16 * 100
    X[:, 2] = np.arange(n) % 3
    X[7, 2] = 10**5
    Xs = sp.csr_matrix(X) if sparse else X
    model = fastgen.fit_categorical_nb(Xs, y, min_categories=[0, 0, 10**5 + 1])
    np.testing.assert_array_equal(model.n_categories, [1024, 1585, 10**5 + 1])
    with pytest.raises(ValueError, match=r"category code 100000 at row 7, column 2 "
                                         r"\(0-based\), but "
                                         r"feature 2 has 4 distinct codes"):
        fastgen.fit_categorical_nb(Xs, y)
    X[9, 1] = 1700  # 1701 categories > 16 * 101 distinct codes: past the bound
    Xs = sp.csr_matrix(X) if sparse else X
    with pytest.raises(ValueError, match=r"category code 1700 at row 9, column 1 \(0-based\), but "
                                         r"feature 1 has 101 distinct codes"):
        fastgen.fit_categorical_nb(Xs, y, min_categories=[0, 0, 10**5 + 1])


# ------------------------------------------------------------------ accepted labels

_ACCEPTED = {
    "bool": [True, False],
    "int8": np.array([-3, 5], dtype=np.int8),
    "uint64": np.array([2**64 - 1, 0], dtype=np.uint64),
    "python int": [10**18, -(10**18)],
    "float32": np.array([0.5, -1.25], dtype=np.float32),
    "python float": [0.1, 2.5],
    "int and float": [1, 2.5],
    "str": ["spam", "eggs"],
    "str and np.str_": ["spam", np.str_("eggs")],
    "str and np.str_ (object)": np.array(["spam", np.str_("eggs")], dtype=object),
    "pandas str": pd.Series(["spam", "eggs"], dtype="str"),
    "pandas category": pd.Series(["spam", "eggs"], dtype="category"),
    "bytes": [b"spam", b"eggs"],
    "datetime64": np.array(["2020-02-29", "1999-12-31"], dtype="datetime64[D]"),
    "pandas timestamps": pd.Series(pd.to_datetime(["2020-02-29", "1999-12-31"])),
    "timedelta64": np.array([3, 7], dtype="timedelta64[s]"),
}


def _labels(two, n=40):
    two = list(two) if not isinstance(two, (np.ndarray, pd.Series)) else two
    idx = np.arange(n) % 2
    if isinstance(two, pd.Series):
        return pd.Series(np.asarray(two, dtype=object)[idx], dtype=two.dtype)
    if isinstance(two, np.ndarray):
        return two[idx]
    return [two[k] for k in idx]


@pytest.mark.parametrize("kind", list(_ACCEPTED))
def test_accepted_label_types_round_trip(kind, tmp_path):
    """Every accepted label type fits, predicts its own labels, and saves without
    pickle: the loaded params equal the fitted ones."""
    y = _labels(_ACCEPTED[kind])
    model = fastgen.fit_gaussian_nb(_X, y)
    assert model.classes.dtype != object
    values = np.asarray(y)
    if values.dtype == object:
        values = np.array(values.tolist())
    np.testing.assert_array_equal(model.classes, np.unique(values))
    # the same model as with the class codes, and its labels mapped back exactly
    codes = np.searchsorted(model.classes, values)
    pred = fastgen.predict(model, _X)
    np.testing.assert_array_equal(
        pred, model.classes[fastgen.predict(fastgen.fit_gaussian_nb(_X, codes), _X)])
    assert pred.dtype == model.classes.dtype
    assert fastgen.load_params(fastgen.save_params(tmp_path / "m", model)) == model


_REFUSED = {
    "datetime.date": ([datetime.date(2020, 1, 1), datetime.date(2021, 1, 1)],
                      r"type date .*datetime64\[D\]"),
    "datetime.datetime": ([datetime.datetime(2020, 1, 1), datetime.datetime(2021, 1, 1)],
                          r"type datetime .*datetime64"),
    "Decimal": ([decimal.Decimal("1.1"), decimal.Decimal("2.2")],
                r"type Decimal .*to str to keep every digit"),
    "Fraction": ([fractions.Fraction(1, 3), fractions.Fraction(1, 2)], r"type Fraction"),
    "tuple (Series)": (pd.Series([(1, 2), (3, 4)]), r"type tuple .*join each tuple"),
    "tuple (list)": ([(1, 2), (3, 4)], r"tuples are not accepted as labels"),
    "frozenset": ([frozenset([1]), frozenset([2])], r"type frozenset"),
    "int past 64 bits": ([2**64, -1], r"integer labels from -1 to 18446744073709551616"),
    "int and float inexact": ([2**53 + 1, 0.5], r"integer 9007199254740993 at row 0 has "
                                                r"no exact float64 value"),
    "trailing NUL": (["a", "a\0"], r"ending in a NUL character at row 1"),
    "str and int": (["a", 1], r"mixes label types \['int', 'str'\]"),
}


@pytest.mark.parametrize("kind", list(_REFUSED))
def test_refused_label_types_say_what_is_accepted(kind):
    two, match = _REFUSED[kind]
    y = pd.Series(list(two) * 20) if isinstance(two, pd.Series) else list(two) * 20
    with pytest.raises(ValueError, match=match) as info:
        fastgen.fit_gaussian_nb(_X, y)
    if "type" in match and "mixes" not in match:
        assert "labels must be bool, integers, floats, str, bytes" in str(info.value)
