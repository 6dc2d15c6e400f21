"""Every message that names a column of a data frame X by position names it by its
column name too ("column 3 (0-based, 'age')"), for pandas and polars frames, whichever
layer raises it; arrays keep the position only."""

import numpy as np
import pytest

import fastgen

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

COLS = ["alcohol", "malic", "ash", "alcalinity"]


def _base(n=60):
    rng = np.random.default_rng(0)
    y = np.arange(n) % 3
    return np.abs(rng.normal(size=(n, 4))) + 1.0 + y[:, None], y


def _frame(kind, X):
    if kind == "pandas":
        return pd.DataFrame(X, columns=COLS)
    return pl.DataFrame(X, schema=COLS, orient="row")


def _case(name):
    X, y = _base()
    j = 2
    if name == "nan_gda":
        X[3, j] = np.nan
        return X, y, lambda F: fastgen.fit_gda(F, y), rf"row 3, column {j} \(0-based, 'ash'\)"
    if name == "nan_nb":
        X[5, 1] = np.nan
        return (X, y, lambda F: fastgen.fit_gaussian_nb(F, y),
                r"row 5, column 1 \(0-based, 'malic'\)")
    if name == "nan_logistic":
        X[7, 3] = np.nan
        return (X, y, lambda F: fastgen.fit_logistic(F, y),
                r"row 7, column 3 \(0-based, 'alcalinity'\)")
    if name == "inf_gda":
        X[3, j] = np.inf
        return (X, y, lambda F: fastgen.fit_gda(F, y),
                r"infinity at row 3, column 2 \(0-based, 'ash'\)")
    if name == "class_without_values":
        X[y == 1, j] = np.nan
        return (X, y, lambda F: fastgen.fit_gda(F, y, "pooled", nan_policy="marginalize"),
                r"class 1 has no observed value of feature 2 \(0-based, 'ash';")
    if name == "all_nan_column":
        X[:, 3] = np.nan
        return (X, y, lambda F: fastgen.fit_gaussian_nb(F, y, nan_policy="marginalize"),
                r"column 3 \(0-based, 'alcalinity'; every entry is NaN\)")
    if name == "category_code":
        X = np.ones_like(X)
        X[3, j] = 0.5
        return (X, y, lambda F: fastgen.fit_categorical_nb(F, y),
                r"non-integer category code \(0.5\) at row 3, column 2 \(0-based, 'ash'\)")
    if name == "bernoulli_non_binary":
        X = (X > 2).astype(float)
        X[4, 1] = 3.0
        return (X, y, lambda F: fastgen.fit_bernoulli_nb(F, y, binarize=None),
                r"X\[4, 1\] \(column 'malic'\) = 3")
    if name == "inference_nan":
        y2 = (np.arange(X.shape[0]) * 7 % 5 < 2).astype(int)
        m = fastgen.fit_logistic(X, y2)
        X[9, 0] = np.nan
        return (X, y2, lambda F: fastgen.logistic_inference(m, F, y2),
                r"row 9, column 0 \(0-based, 'alcohol'\)")
    raise AssertionError(name)


CASES = ["nan_gda", "nan_nb", "nan_logistic", "inf_gda", "class_without_values",
         "all_nan_column", "category_code", "bernoulli_non_binary", "inference_nan"]


@pytest.mark.parametrize("kind", ["pandas", "polars"])
@pytest.mark.parametrize("case", CASES)
def test_frame_messages_name_the_column(case, kind):
    X, _, call, match = _case(case)
    F = _frame(kind, X)
    with pytest.raises(ValueError, match=match):
        call(F)


@pytest.mark.parametrize("case", CASES)
def test_array_messages_keep_the_position_only(case):
    X, _, call, match = _case(case)
    X0 = X.copy()
    with pytest.raises(ValueError) as exc:
        call(X)
    assert "(0-based, '" not in str(exc.value) and "(column '" not in str(exc.value)
    np.testing.assert_array_equal(X, X0)


def test_with_column_names_rules():
    from fastgen._validation.names import with_column_names

    names = ("a", "b")
    assert with_column_names("column 1 (0-based)", names) == "column 1 (0-based, 'b')"
    assert with_column_names("feature 0 (0-based; x)", names) == "feature 0 (0-based, 'a'; x)"
    assert with_column_names("X[3, 1] = 2", names) == "X[3, 1] (column 'b') = 2"
    # beyond the names (another array's column) and already named: unchanged
    assert with_column_names("column 5 (0-based)", names) == "column 5 (0-based)"
    assert with_column_names("column 1 (0-based, 'b')", names) == "column 1 (0-based, 'b')"
    assert with_column_names("column 1 (0-based)", None) == "column 1 (0-based)"
