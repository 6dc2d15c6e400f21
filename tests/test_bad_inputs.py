"""The catalogue of rejected inputs, table-driven.

Each row is ``(id, callable, expected_exception, message_regex)``: calling ``callable()``
must raise exactly ``expected_exception`` (or a subclass) with a message matching
``message_regex``, and must leave every numpy array it was given byte-for-byte
unchanged.  Build callables with :func:`call` (a ``functools.partial``) so the arrays
passed can be found and hashed; rows for other models are appended to ``CASES``.
A row that documents a known bug is wrapped in ``pytest.param(..., marks=xfail)``.
"""

import atexit
import functools
import hashlib
import os
import shutil
import tempfile

import numpy as np
import pytest
import scipy.sparse as sp

import fastgen
from fastgen import SingularCovarianceError
from reference import make_blobs


def call(fn, *args, **kwargs):
    return functools.partial(fn, *args, **kwargs)


def _arrays_in(obj, depth=0):
    """Every ndarray reachable from a partial's arguments (lists, tuples, dicts, params)."""
    if depth > 3:
        return
    if isinstance(obj, np.ndarray):
        yield obj
    elif isinstance(obj, functools.partial):
        yield from _arrays_in(obj.args, depth + 1)
        yield from _arrays_in(obj.keywords, depth + 1)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _arrays_in(v, depth + 1)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _arrays_in(v, depth + 1)
    elif hasattr(obj, "__dataclass_fields__"):
        for name in obj.__dataclass_fields__:
            yield from _arrays_in(getattr(obj, name), depth + 1)
    elif sp.issparse(obj):
        for a in ("data", "indices", "indptr", "row", "col"):
            if hasattr(obj, a):
                yield getattr(obj, a)


def _digest(arrays):
    h = []
    for a in arrays:
        m = hashlib.sha256()
        m.update(str((a.dtype, a.shape, a.strides)).encode())
        if a.dtype == object:
            m.update(repr(a.tolist()).encode())
        else:
            m.update(np.ascontiguousarray(a).tobytes())
        h.append(m.hexdigest())
    return h


# ---- data shared by the GDA rows (each row gets its own copies) ----
_X, _y = make_blobs(30, 3, 3, seed=0)
_Xt = _X[:5].copy()


def X(**edits):
    """A fresh copy of the base data with entries replaced: X(at=(3, 1), value=nan)."""
    A = _X.copy()
    if "at" in edits:
        A[edits["at"]] = edits["value"]
    return A


def y():
    return _y.copy()


def _params(covariance="pooled"):
    return fastgen.fit_gda(_X, _y, covariance)


_TMP = tempfile.mkdtemp(prefix="fastgen-bad-inputs-")
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
_NPY = os.path.join(_TMP, "array.npy")
np.save(_NPY, np.arange(3.0))

_P = {c: _params(c) for c in ("pooled", "per_class")}


def _one_sample_class():
    yy = y()
    yy[yy == 2] = 1
    yy[0] = 2
    return yy


def _constant_feature():
    A = X()
    A[:, 1] = 4.0
    return A


def _duplicated_column():
    A = X()
    A[:, 2] = A[:, 0]
    return A


def _constant_in_class():
    A = X()
    A[_y == 1, 2] = 0.5
    return A


def _identical_in_class():
    A = X()
    A[_y == 0] = A[np.flatnonzero(_y == 0)[0]]
    return A


def _moments(kind="pooled", data=None):
    A = _X if data is None else data
    return fastgen.class_moments(A, _y, kind=kind)


GDA_CASES = [
    # ---- X ----
    ("X-nan", call(fastgen.fit_gda, X(at=(3, 1), value=np.nan), y()), ValueError,
     r"X contains NaN at row 3, column 1"),
    ("X-inf", call(fastgen.fit_gda, X(at=(17, 2), value=-np.inf), y()), ValueError,
     r"X contains infinity at row 17, column 2"),
    ("X-nan-fortran", call(fastgen.fit_gda, np.asfortranarray(X(at=(5, 0), value=np.nan)),
                           y()), ValueError, r"X contains NaN at row 5, column 0"),
    ("X-overflowing-squares", call(fastgen.fit_gda, X() * 1e160, y()), ValueError,
     r"X has values so large that their squares overflow"),
    ("moments-X-inf", call(fastgen.class_moments, X(at=(9, 0), value=np.inf), y(),
                           kind="per_class"), ValueError, r"X contains infinity at row 9"),
    ("X-1d", call(fastgen.fit_gda, _X[:, 0].copy(), y()), ValueError,
     r"X must be 2-D.*got 1-D.*reshape"),
    ("X-3d", call(fastgen.fit_gda, _X.reshape(30, 3, 1).copy(), y()), ValueError,
     r"X must be 2-D.*got 3-D"),
    ("X-empty", call(fastgen.fit_gda, np.empty((0, 3)), np.empty(0, dtype=int)), ValueError,
     r"X has 0 rows"),
    ("X-0-features", call(fastgen.fit_gda, np.empty((30, 0)), y()), ValueError,
     r"X has 0 features"),
    ("X-complex", call(fastgen.fit_gda, X() + 1j, y()), ValueError, r"X has complex dtype"),
    ("X-object-str", call(fastgen.fit_gda, np.array([["a", 1.0]] * 30, dtype=object), y()),
     ValueError, r"X has dtype object with non-numeric entries"),
    ("X-str", call(fastgen.fit_gda, X().astype(str), y()), ValueError,
     r"X has dtype <U\d+; expected a real numeric dtype"),
    ("X-sparse", call(fastgen.fit_gda, sp.csr_matrix(X()), y()), ValueError,
     r"X is a scipy sparse matrix"),
    ("X-ragged", call(fastgen.fit_gda, [[1.0, 2.0], [3.0]], [0, 1]), ValueError,
     r"X could not be converted to an array"),
    # ---- y ----
    ("y-length", call(fastgen.fit_gda, X(), y()[:-1]), ValueError,
     r"y has 29 labels but X has 30 rows"),
    ("y-2d", call(fastgen.fit_gda, X(), np.stack([y(), y()], axis=1)), ValueError,
     r"y must be 1-D"),
    ("y-nan", call(fastgen.fit_gda, X(), np.where(_y == 1, np.nan, _y)), ValueError,
     r"y contains NaN"),
    ("y-none", call(fastgen.fit_gda, X(), np.array([None] + ["a"] * 29, dtype=object)),
     ValueError, r"y contains None"),
    ("y-mixed", call(fastgen.fit_gda, X(), np.array([1, "a"] * 15, dtype=object)),
     ValueError, r"y mixes label types"),
    ("y-complex", call(fastgen.fit_gda, X(), _y + 1j), ValueError, r"y has complex dtype"),
    # ---- sample_weight ----
    ("w-negative", call(fastgen.fit_gda, X(), y(), sample_weight=np.r_[np.ones(29), -1.0]),
     ValueError, r"sample_weight contains a negative value \(-1.0\) at index 29"),
    ("w-nan", call(fastgen.fit_gda, X(), y(), sample_weight=np.r_[np.nan, np.ones(29)]),
     ValueError, r"sample_weight contains a non-finite value at index 0"),
    ("w-inf", call(fastgen.fit_gda, X(), y(), sample_weight=np.r_[np.ones(29), np.inf]),
     ValueError, r"sample_weight contains a non-finite value at index 29"),
    ("w-zero", call(fastgen.fit_gda, X(), y(), sample_weight=np.zeros(30)), ValueError,
     r"sample_weight is zero everywhere"),
    ("w-length", call(fastgen.fit_gda, X(), y(), sample_weight=np.ones(29)), ValueError,
     r"sample_weight must have shape \(30,\)"),
    ("w-class-zero", call(fastgen.fit_gda, X(), y(),
                          sample_weight=np.where(_y == 1, 0.0, 1.0)),
     ValueError, r"class 1 has zero total weight"),
    ("w-str", call(fastgen.fit_gda, X(), y(), sample_weight=np.array(["1"] * 30)),
     ValueError, r"sample_weight has dtype"),
    # ---- options ----
    ("covariance-name", call(fastgen.fit_gda, X(), y(), "full"), ValueError,
     r"covariance must be one of .*'full'"),
    ("covariance-none", call(fastgen.fit_gda, X(), y(), None), ValueError,
     r"covariance must be one of"),
    ("shrinkage-high", call(fastgen.fit_gda, X(), y(), shrinkage=1.5), ValueError,
     r"shrinkage must be <= 1"),
    ("shrinkage-negative", call(fastgen.fit_gda, X(), y(), shrinkage=-0.1), ValueError,
     r"shrinkage must be >= 0"),
    ("shrinkage-auto", call(fastgen.fit_gda, X(), y(), shrinkage="auto"), ValueError,
     r"shrinkage must be None, a float in \[0, 1\], 'ledoit-wolf' or 'oas'"),
    ("shrinkage-nan", call(fastgen.fit_gda, X(), y(), shrinkage=np.nan), ValueError,
     r"shrinkage must be finite"),
    ("shrinkage-lw-diagonal", call(fastgen.fit_gda, X(), y(), "diagonal",
                                   shrinkage="ledoit-wolf"),
     ValueError, r"pass a float shrinkage"),
    ("reg-negative", call(fastgen.fit_gda, X(), y(), reg=-0.1), ValueError,
     r"reg must be >= 0"),
    ("reg-high", call(fastgen.fit_gda, X(), y(), "per_class", reg=2.0), ValueError,
     r"reg must be <= 1"),
    ("reg-nan", call(fastgen.fit_gda, X(), y(), reg=float("nan")), ValueError,
     r"reg must be finite"),
    ("reg-str", call(fastgen.fit_gda, X(), y(), reg="0.1"), ValueError,
     r"reg must be a real number"),
    ("unbiased-str", call(fastgen.fit_gda, X(), y(), unbiased="yes"), ValueError,
     r"unbiased must be True or False"),
    ("priors-length", call(fastgen.fit_gda, X(), y(), priors=np.array([0.5, 0.5])),
     ValueError, r"priors must have shape \(3,\)"),
    ("priors-sum", call(fastgen.fit_gda, X(), y(), priors=np.array([0.5, 0.5, 0.5])),
     ValueError, r"priors must sum to 1; they sum to 1.5"),
    ("priors-negative", call(fastgen.fit_gda, X(), y(), priors=np.array([-0.5, 0.5, 1.0])),
     ValueError, r"priors must be finite and non-negative"),
    ("priors-nan", call(fastgen.fit_gda, X(), y(), priors=np.array([np.nan, 0.5, 0.5])),
     ValueError, r"priors must be finite"),
    # ---- singular covariances ----
    ("per-class-one-sample", call(fastgen.fit_gda, X(), _one_sample_class(), "per_class"),
     SingularCovarianceError, r"class 2 has 1 sample.*reg>0"),
    ("per-class-identical-samples", call(fastgen.fit_gda, _identical_in_class(), y(),
                                         "per_class"),
     SingularCovarianceError, r"class 0 has 1 sample or only identical samples.*reg>0"),
    ("per-class-unbiased-one-sample", call(fastgen.fit_gda, X(), _one_sample_class(),
                                           "per_class", unbiased=True),
     SingularCovarianceError, r"class 2 .*unbiased.*pass unbiased=False or reg>0"),
    ("pooled-constant-feature", call(fastgen.fit_gda, _constant_feature(), y()),
     SingularCovarianceError, r"pooled covariance is (not positive definite|singular).*reg"),
    ("pooled-duplicated-column", call(fastgen.fit_gda, _duplicated_column(), y()),
     SingularCovarianceError, r"pooled covariance is (not positive definite|singular).*reg"),
    ("per-class-constant-in-class", call(fastgen.fit_gda, _constant_in_class(), y(),
                                         "per_class"),
     SingularCovarianceError, r"per-class covariance of class 1 is .*reg"),
    ("diagonal-constant-in-class", call(fastgen.fit_gda, _constant_in_class(), y(),
                                        "diagonal"),
     SingularCovarianceError, r"feature 2 has zero variance in class 1.*reg"),
    ("pooled-diagonal-constant", call(fastgen.fit_gda, _constant_feature(), y(),
                                      "pooled_diagonal"),
     SingularCovarianceError, r"feature 1 has zero pooled within-class variance"),
    ("unbiased-n-equals-K", call(fastgen.fit_gda, _X[:3].copy(), np.arange(3),
                                 unbiased=True),
     SingularCovarianceError, r"more samples than classes"),
    ("unbiased-diagonal-one-sample", call(fastgen.fit_gda, X(), _one_sample_class(),
                                          "diagonal", unbiased=True),
     SingularCovarianceError, r"class 2 has 1 sample.*unbiased"),
    # ---- scoring ----
    ("predict-n-features", call(fastgen.predict, _P["pooled"], np.ones((4, 5))), ValueError,
     r"X has 5 features, but the model was fitted with 3"),
    ("proba-n-features", call(fastgen.predict_proba, _P["per_class"], np.ones((4, 2))),
     ValueError, r"X has 2 features, but the model was fitted with 3"),
    ("proba-nan", call(fastgen.predict_proba, _P["per_class"],
                       np.where(np.arange(15).reshape(5, 3) == 7, np.nan, _Xt)),
     ValueError, r"X contains NaN at row 2, column 1"),
    ("jll-1d", call(fastgen.joint_log_likelihood, _P["pooled"], _Xt[0].copy()), ValueError,
     r"X must be 2-D"),
    ("log-proba-complex", call(fastgen.predict_log_proba, _P["pooled"], _Xt + 0j),
     ValueError, r"complex"),
    ("score-wrong-params", call(fastgen.predict_proba, {"means": _X}, _Xt), ValueError,
     r"params must be a fitted fastgen params object.*dict"),
    ("score-moments-as-params", call(fastgen.predict, _moments(), _Xt), ValueError,
     r"params must be a fitted fastgen params object.*ClassMoments"),
    ("jll-wrong-params", call(fastgen.joint_log_likelihood, None, _Xt), ValueError,
     r"params must be a fitted fastgen params object.*NoneType"),
    ("log-proba-wrong-params", call(fastgen.predict_log_proba, "model.npz", _Xt),
     ValueError, r"params must be a fitted fastgen params object.*str"),
    ("linear-discriminant-per-class", call(fastgen.linear_discriminant, _P["per_class"]),
     ValueError, r"only for a covariance shared by the classes"),
    ("linear-discriminant-type", call(fastgen.linear_discriminant, _X), ValueError,
     r"params must be GDAParams"),
    ("lda-transform-n-components", call(fastgen.lda_transform, _P["pooled"], _Xt,
                                        n_components=3),
     ValueError, r"n_components must be an integer in \[1, 2\]"),
    ("lda-transform-n-components-float", call(fastgen.lda_transform, _P["pooled"], _Xt,
                                              n_components=1.0),
     ValueError, r"n_components must be an integer"),
    ("lda-transform-per-class", call(fastgen.lda_transform, _P["per_class"], _Xt),
     ValueError, r"only for a covariance shared"),
    ("lda-transform-n-features", call(fastgen.lda_transform, _P["pooled"], np.ones((2, 4))),
     ValueError, r"X has 4 features, but the model was fitted with 3"),
    # ---- moments ----
    ("moments-kind", call(fastgen.class_moments, X(), y(), kind="full"), ValueError,
     r"kind must be one of"),
    ("moments-X-nan", call(fastgen.class_moments, X(at=(0, 0), value=np.nan), y()),
     ValueError, r"X contains NaN at row 0, column 0"),
    ("moments-w-negative", call(fastgen.class_moments, X(), y(),
                                sample_weight=-np.ones(30)),
     ValueError, r"sample_weight contains a negative value"),
    ("merge-kinds", call(fastgen.merge_moments, _moments("pooled"), _moments("diagonal")),
     ValueError, r"cannot merge moments of kind 'pooled' with kind 'diagonal'"),
    ("merge-n-features", call(fastgen.merge_moments, _moments(),
                              fastgen.class_moments(_X[:, :2].copy(), _y)),
     ValueError, r"cannot merge moments with 3 and 2 features"),
    ("merge-int-str-labels", call(fastgen.merge_moments, _moments(),
                                  fastgen.class_moments(_X, np.array(["a", "b", "c"])[_y])),
     ValueError, r"incompatible label types"),
    ("load-npy", call(fastgen.load_params, _NPY), ValueError,
     r"not a fastgen params file"),
    ("merge-not-moments", call(fastgen.merge_moments, _moments(), _X), ValueError,
     r"b must be ClassMoments"),
    ("from-moments-kind", call(fastgen.gda_from_moments, _moments("pooled"), "per_class"),
     ValueError, r"moments of kind 'pooled' cannot give covariance='per_class'"),
    ("from-moments-diag-to-pooled", call(fastgen.gda_from_moments, _moments("diagonal"),
                                         "pooled"),
     ValueError, r"cannot give covariance='pooled'"),
    ("from-moments-lw", call(fastgen.gda_from_moments, _moments(), shrinkage="ledoit-wolf"),
     ValueError, r"ledoit-wolf.*fourth moments"),
    ("from-moments-type", call(fastgen.gda_from_moments, _P["pooled"]), ValueError,
     r"moments must be ClassMoments"),
    ("from-moments-priors", call(fastgen.gda_from_moments, _moments(), priors=[1.0]),
     ValueError, r"priors must have shape \(3,\)"),
    ("from-moments-singular", call(fastgen.gda_from_moments,
                                   _moments("per_class", _constant_feature()), "pooled"),
     SingularCovarianceError, r"pooled covariance"),
    # ---- io ----
    ("save-not-params", call(fastgen.save_params, "unused.npz", _moments()), ValueError,
     r"params must be a fitted fastgen params object"),
    ("load-missing", call(fastgen.load_params, "/nonexistent/dir/params.npz"), ValueError,
     r"does not exist"),
]

# Rows for other models are appended here: CASES += NB_CASES, etc.
CASES = list(GDA_CASES)


def _unpack(case):
    if hasattr(case, "values"):  # a pytest.param
        return pytest.param(*case.values, marks=case.marks, id=case.values[0])
    return pytest.param(*case, id=case[0])


@pytest.mark.parametrize("case_id, fn, exc, match", [_unpack(c) for c in CASES])
def test_rejected(case_id, fn, exc, match):
    arrays = list(_arrays_in(fn))
    before = _digest(arrays)
    with pytest.raises(exc, match=match) as info:
        fn()
    # every rejection is a ValueError (SingularCovarianceError is one too)
    assert isinstance(info.value, ValueError)
    assert _digest(arrays) == before, "the caller's arrays were modified"


def test_catalogue_is_large_enough():
    assert len(GDA_CASES) >= 20
    ids = [c.values[0] if hasattr(c, "values") else c[0] for c in CASES]
    assert len(ids) == len(set(ids))


def test_singular_covariance_error_is_both():
    assert issubclass(SingularCovarianceError, np.linalg.LinAlgError)
    assert issubclass(SingularCovarianceError, ValueError)
