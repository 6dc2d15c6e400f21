"""The error for a column out of float64's range names the column as the validation's
messages do: by its 0-based index, with the data frame's name (or the model's
``feature_names``) where X has one.

The family: pandas and polars frames, arrays and CSR; too large and too small; plain,
Firth, multinomial fits, ``irls_step`` and ``logistic_inference``.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from tests.reference import require

NAMES = ["age", "price", "rooms"]


def _data(K=2, seed=1, n=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + rng.logistic(size=n) > 0).astype(np.int64) if K == 2 \
        else rng.integers(0, K, size=n)
    return X, y


def _frame(X, kind):
    if kind == "pandas":
        pd = require("pandas")
        return pd.DataFrame(X, columns=NAMES)
    if kind == "polars":
        pl = require("polars")
        return pl.DataFrame({n: X[:, j] for j, n in enumerate(NAMES)})
    return sp.csr_matrix(X) if kind == "csr" else X


@pytest.mark.parametrize("fit", [{}, {"penalty": "firth"}, {"l2": 1.0}])
@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("factor,word", [(1e160, "large"), (1e-170, "small")])
@pytest.mark.parametrize("kind", ["pandas", "polars", "array", "csr"])
def test_the_column_is_named_by_its_frame_name(kind, factor, word, K, fit):
    X, y = _data(K)
    X[:, 1] *= factor
    before = X.copy()
    Xf = _frame(X, kind)
    label = "column 1 ('price'; its" if kind in ("pandas", "polars") else "column 1 (its"
    with pytest.raises(ValueError, match=rf"X has values too {word} for float64 products: "
                                         rf"in {re_escape(label)} largest \|x\| is "):
        fastgen.fit_logistic(Xf, y, **fit)
    assert np.array_equal(X, before)


def re_escape(text):
    import re

    return re.escape(text)


@pytest.mark.parametrize("kind", ["pandas", "array"])
def test_irls_step_and_inference_name_the_column(kind):
    X, y = _data(2)
    m = fastgen.fit_logistic(_frame(X, kind), y)
    Xb = X.copy()
    Xb[:, 2] *= 1e160
    label = "column 2 ('rooms'; its" if kind == "pandas" else "column 2 (its"
    with pytest.raises(ValueError, match=re_escape(f"in {label} largest")):
        fastgen.irls_step(m, _frame(Xb, kind), y)
    firth = fastgen.fit_logistic(_frame(X, kind), y, penalty="firth")
    with pytest.raises(ValueError, match=re_escape(f"in {label} largest")):
        fastgen.logistic_inference(firth, _frame(Xb, kind), y)
