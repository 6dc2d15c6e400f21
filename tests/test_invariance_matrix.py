"""The invariance matrix (issue 42): every public fit (a row) against every
transformation of its input (a column).

Each cell states how the answer must respond:

* ``UNCHANGED``: the posteriors on the (equally transformed) training rows equal the
  reference fit's, to the row's tolerance;
* ``EXACT``: the answer is transformed exactly as the input was (class columns
  permuted with the labels; the params equal field by field);
* ``refused(error, match)``: the fit raises that error, the message matching;
* ``na(reason)``: the transformation does not apply to the model (it changes what the
  model means), with the reason.

A new fit costs one row; a new transformation one column and one cell per row.
The offset columns of logistic regression are covered by the logistic engine's own
tests.  docs/reliability.rst lists the invariances checked here.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from reference import require

import fastgen

pd = require("pandas")
pl = require("polars")

UNCHANGED, EXACT = "unchanged", "exact"


@dataclasses.dataclass(frozen=True)
class refused:  # noqa: N801 - reads as a cell value
    error: type
    match: str


@dataclasses.dataclass(frozen=True)
class na:  # noqa: N801
    reason: str


# ------------------------------------------------------------------------------ data


def _gauss(K=3, n=150, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    X = rng.normal(size=(n, 3)) + 0.8 * y[:, None] * np.array([1.0, -0.5, 0.3])
    return X * np.array([1.0, 30.0, 0.01]) + np.array([0.0, 500.0, -2.0]), y


def _counts(seed=1):
    rng = np.random.default_rng(seed)
    y = np.arange(150) % 3
    X = rng.poisson(1.0 + y[:, None] * np.array([0.3, 1.0, 0.1, 2.0])).astype(float)
    X[:, 0] += 1.0  # no empty row
    return X, y


def _categories(seed=2):
    X, y = _counts(seed)
    return np.minimum(X, 4.0), y


# ------------------------------------------------------------------------------ rows


@dataclasses.dataclass(frozen=True)
class Row:
    fit: object  # fit(X, y, **kw) -> params
    data: object  # () -> (X, y)
    atol: float  # the posteriors' tolerance for UNCHANGED
    continuous: bool  # real-valued features (scale and offset apply)
    sparse: bool  # accepts CSR
    merge: object = None  # (X, y, chunks) -> params from merged statistics, or None
    decision: object = None  # (X, y) -> the rank / refusal / warning the rule decides
    #: options of the scale, offset and weight cells.  The diagonal models take
    #: var_smoothing=0 there: the default floor ε = var_smoothing·max_j Var(x_j) is one
    #: value for every column (scikit-learn's rule), so scaling one column moves the
    #: others' floors, and fit_gaussian_nb takes Var(x_j) over the unweighted rows
    #: (scikit-learn's GaussianNB), so weights and repeats differ by the floor
    invariant_kw: dict = dataclasses.field(default_factory=dict)


def _gda(kind):
    moments_kind = {"pooled": "pooled", "per_class": "per_class",
                    "diagonal": "diagonal", "pooled_diagonal": "diagonal"}[kind]

    def merge(X, y, chunks):
        ms = [fastgen.class_moments(X[c], y[c], kind=moments_kind) for c in chunks]
        m = ms[0]
        for other in ms[1:]:
            m = fastgen.merge_moments(m, other)
        return fastgen.gda_from_moments(m, kind)

    diagonal = kind in ("diagonal", "pooled_diagonal")
    return Row(lambda X, y, **kw: fastgen.fit_gda(X, y, kind, **kw), _gauss, 1e-9,
               True, False, merge, _gda_decision(kind),
               {"var_smoothing": 0.0} if diagonal else {})


def _gda_decision(kind):
    if kind == "pooled":
        return lambda X, y: ("rank", fastgen.fit_gda(X, y).rank)
    if kind == "per_class":
        def refusal(X, y):
            try:
                fastgen.fit_gda(X, y, "per_class")
            except fastgen.SingularCovarianceError as exc:
                return ("refused", "rank" in str(exc))
            return ("fitted",)
        return refusal
    return None


def _nb_merge(model, **options):
    def merge(X, y, chunks):
        kw = {"binarize": options["binarize"]} if "binarize" in options else {}
        cs = [fastgen.nb_counts(X[c], y[c], model, **kw) for c in chunks]
        c = cs[0]
        for other in cs[1:]:
            c = fastgen.merge_counts(c, other)
        return fastgen.nb_from_counts(c)
    return merge


def _logistic_decision(X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fastgen.fit_logistic(X, y)
    return ("warned", sorted({w.category.__name__ for w in caught}))


ROWS = {
    **{f"gda-{k}": _gda(k) for k in ("pooled", "per_class", "diagonal", "pooled_diagonal")},
    "gaussian_nb": Row(fastgen.fit_gaussian_nb, _gauss, 1e-8, True, False,
                       _nb_merge("gaussian"), invariant_kw={"var_smoothing": 0.0}),
    "bernoulli_nb": Row(lambda X, y, **kw: fastgen.fit_bernoulli_nb(X, y, binarize=1.5,
                                                                    **kw),
                        _counts, 1e-12, False, True, _nb_merge("bernoulli", binarize=1.5)),
    "multinomial_nb": Row(fastgen.fit_multinomial_nb, _counts, 1e-12, False, True,
                          _nb_merge("multinomial")),
    "complement_nb": Row(fastgen.fit_complement_nb, _counts, 1e-12, False, True,
                         _nb_merge("complement")),
    "categorical_nb": Row(fastgen.fit_categorical_nb, _categories, 1e-12, False, True),
    "logistic-binary": Row(fastgen.fit_logistic, lambda: _gauss(K=2), 1e-7, True, True,
                           decision=_logistic_decision),
    "logistic-multinomial": Row(fastgen.fit_logistic, lambda: _gauss(K=3, n=300), 1e-6,
                                True, True),
    "logistic-firth": Row(lambda X, y, **kw: fastgen.fit_logistic(X, y, penalty="firth",
                                                                  **kw),
                          lambda: _gauss(K=2), 1e-6, True, True),
}

_COUNTS_NA = na("the features are counts or categories: a scale or an offset changes "
                "what they count")
_NO_MERGE = {
    "categorical_nb": na("no mergeable statistics (nb_counts has no categorical model)"),
    "logistic-binary": na("no sufficient statistics: Dask fits iterate over the blocks"),
    "logistic-multinomial": na("no sufficient statistics"),
    "logistic-firth": na("no sufficient statistics"),
}
_NO_DECISION = na("no rank, separation or collinearity decision in this model")
_DENSE_ONLY = refused(ValueError, r"X is a scipy sparse matrix, which this function does "
                                  r"not accept; pass a dense array")

COLUMNS = ["scale", "offset", "scale_offset", "column_permutation", "row_permutation",
           "label_permutation", "labels_str", "labels_leading_zeros", "labels_bool",
           "labels_pandas_string", "weights_vs_repeats", "chunks_merged", "csr",
           "float32", "save_load", "pandas", "polars", "row_subsets"]


def expected(row_name, column):
    """The cell: what the answer of ``row_name`` must do under ``column``."""
    row = ROWS[row_name]
    if column in ("scale", "offset", "scale_offset"):
        return UNCHANGED if row.continuous else _COUNTS_NA
    if column == "labels_bool":
        n_classes = len(np.unique(row.data()[1]))
        return EXACT if n_classes == 2 else na("bool labels have two classes")
    if column == "chunks_merged":
        return _NO_MERGE.get(row_name, UNCHANGED)
    if column == "csr":
        return UNCHANGED if row.sparse else _DENSE_ONLY
    if column == "row_subsets":
        return EXACT if row.decision is not None else _NO_DECISION
    if column in ("save_load", "pandas", "polars", "label_permutation") or column.startswith(
            "labels_"):
        return EXACT
    return UNCHANGED


# ------------------------------------------------------------------------------ cells


def _proba(p, X):
    return fastgen.predict_proba(p, X)


def _close(a, b, atol):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64),
                               np.asarray(b, dtype=np.float64), rtol=0, atol=atol)


def _check_labels(row, X, y, labels):
    """Fit with y mapped through ``labels`` (one per class, in class order): the classes
    are those labels and the posteriors those of the integer fit, column for column."""
    p = row.fit(X, y)
    q = row.fit(X, labels[y] if not isinstance(labels, pd.core.arrays.ExtensionArray)
                else labels.take(y))
    order = np.argsort(np.asarray(labels, dtype=object).astype(str)) if not isinstance(
        labels, np.ndarray) or labels.dtype != bool else np.arange(len(labels))
    assert [str(c) for c in q.classes] == [str(c) for c in np.asarray(labels)[order]]
    _close(_proba(q, X), _proba(p, X)[:, order], row.atol)


def run_cell(row_name, column):
    row = ROWS[row_name]
    X, y = row.data()
    n, d = X.shape
    rng = np.random.default_rng(42)
    K = len(np.unique(y))
    if column in ("scale", "offset", "scale_offset"):
        c = np.array([1e-3, 1.0, 1e4]) if column != "offset" else np.ones(d)
        b = np.array([3.0, -1e3, 7e2]) if column != "scale" else np.zeros(d)
        Xt = X * c + b
        kw = row.invariant_kw
        return _close(_proba(row.fit(Xt, y, **kw), Xt), _proba(row.fit(X, y, **kw), X),
                      row.atol)
    if column == "column_permutation":
        perm = rng.permutation(d)
        return _close(_proba(row.fit(X[:, perm], y), X[:, perm]),
                      _proba(row.fit(X, y), X), row.atol)
    if column == "row_permutation":
        perm = rng.permutation(n)
        return _close(_proba(row.fit(X[perm], y[perm]), X), _proba(row.fit(X, y), X),
                      row.atol)
    if column == "label_permutation":
        perm = rng.permutation(K)
        while np.array_equal(perm, np.arange(K)):
            perm = rng.permutation(K)
        # class k becomes label perm[k]: the new fit's column perm[k] is the old column k
        q = row.fit(X, perm[y])
        _close(_proba(q, X)[:, perm], _proba(row.fit(X, y), X), row.atol)
        return None
    if column == "labels_str":
        return _check_labels(row, X, y, np.array(["ant", "bee", "cat"][:K]))
    if column == "labels_leading_zeros":
        return _check_labels(row, X, y, np.array(["007", "010", "09"][:K]))
    if column == "labels_bool":
        return _check_labels(row, X, y, np.array([False, True]))
    if column == "labels_pandas_string":
        return _check_labels(row, X, y, pd.array(["ant", "bee", "cat"][:K], dtype="string"))
    if column == "weights_vs_repeats":
        w = rng.integers(0, 4, n)
        w[:K] = 1  # every class keeps a row
        kw = row.invariant_kw
        return _close(_proba(row.fit(X, y, sample_weight=w.astype(float), **kw), X),
                      _proba(row.fit(np.repeat(X, w, axis=0), np.repeat(y, w), **kw), X),
                      row.atol)
    if column == "chunks_merged":
        chunks = [np.arange(0, n, 3), np.arange(1, n, 3), np.arange(2, n, 3)]
        return _close(_proba(row.merge(X, y, chunks), X), _proba(row.fit(X, y), X),
                      row.atol)
    if column == "csr":
        return _close(_proba(row.fit(sp.csr_matrix(X), y), sp.csr_matrix(X)),
                      _proba(row.fit(X, y), X), row.atol)
    if column == "float32":
        # the documented tolerance of float32 fits: posteriors within 1e-4
        return _close(_proba(row.fit(X.astype(np.float32), y), X.astype(np.float32)),
                      _proba(row.fit(X, y), X), 1e-4)
    if column == "save_load":
        import tempfile
        p = row.fit(X, y)
        with tempfile.TemporaryDirectory() as tmp:
            q = fastgen.load_params(fastgen.save_params(f"{tmp}/m.npz", p))
        assert q == p
        np.testing.assert_array_equal(_proba(q, X), _proba(p, X))
        return None
    if column in ("pandas", "polars"):
        names = [f"x{j}" for j in range(d)]
        frame = (pd.DataFrame(X, columns=names) if column == "pandas"
                 else pl.DataFrame(X, schema=names))
        p = row.fit(frame, y)
        assert p.feature_names == tuple(names)
        assert p == dataclasses.replace(row.fit(X, y), feature_names=tuple(names))
        np.testing.assert_array_equal(_proba(p, frame), _proba(row.fit(X, y), X))
        return None
    if column == "row_subsets":
        # an exactly dependent column (a difference stored beside its two columns):
        # the decision on every 70 % subset is the decision on the full data
        Z = np.column_stack([X, X[:, 0] - X[:, 1]])
        full = row.decision(Z, y)
        for _ in range(8):
            idx = np.sort(rng.permutation(n)[: int(0.7 * n)])
            assert row.decision(Z[idx], y[idx]) == full
        return None
    raise AssertionError(f"no cell for {column!r}")  # pragma: no cover


CELLS = [(r, c) for r in ROWS for c in COLUMNS]


@pytest.mark.parametrize("row_name,column", CELLS, ids=[f"{r}-{c}" for r, c in CELLS])
def test_cell(row_name, column):
    cell = expected(row_name, column)
    if isinstance(cell, na):
        assert cell.reason  # a cell that does not apply says why
        return
    if isinstance(cell, refused):
        with pytest.raises(cell.error, match=cell.match):
            run_cell(row_name, column)
        return
    run_cell(row_name, column)


def test_the_matrix_covers_every_public_fit():
    fits = {n for n in fastgen.__all__ if n.startswith("fit_")}
    covered = {"fit_gda", "fit_gaussian_nb", "fit_bernoulli_nb", "fit_multinomial_nb",
               "fit_complement_nb", "fit_categorical_nb", "fit_logistic"}
    assert fits == covered
    assert {f"gda-{k}" for k in ("pooled", "per_class", "diagonal", "pooled_diagonal")} \
        <= set(ROWS)


def test_the_reliability_page_lists_the_columns():
    from pathlib import Path
    page = (Path(__file__).parents[1] / "docs" / "reliability.rst").read_text()
    for column in COLUMNS:
        assert f"``{column}``" in page, column
