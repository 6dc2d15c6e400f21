"""The catalogue of rejected inputs, table-driven.

Each row is ``(id, callable, expected_exception, message_regex)``: calling ``callable()``
must raise exactly ``expected_exception`` (or a subclass) with a message matching
``message_regex``, and must leave every numpy array it was given byte-for-byte
unchanged.  Build callables with :func:`call` (a ``functools.partial``) so the arrays
passed can be found and hashed; rows for other models are appended to ``CASES``.
A row that documents a known bug is wrapped in ``pytest.param(..., marks=xfail)``.

Importing this module fits nothing and writes no file: fitted models, moments, counts
and files are :class:`Lazy` arguments, built when their test runs (fits once per session
by the ``fitted`` fixture, files under the test's ``tmp_path``).
"""

import functools
import hashlib
import json
import types

import numpy as np
import pytest
import scipy.sparse as sp
from reference import make_blobs

import fastgen
from fastgen import SingularCovarianceError


def call(fn, *args, **kwargs):
    return functools.partial(fn, *args, **kwargs)


class Lazy:
    """An argument built when its test runs: ``build(env)``, with ``env.fitted(name)``
    (a model fitted once per session) and ``env.tmp`` (the test's ``tmp_path``)."""

    def __init__(self, build):
        self.build = build


def _resolve(obj, env):
    """``obj`` with every :class:`Lazy` inside (partials, lists, tuples, dicts) built."""
    if isinstance(obj, Lazy):
        return obj.build(env)
    if isinstance(obj, functools.partial):
        return functools.partial(obj.func, *_resolve(obj.args, env),
                                 **_resolve(obj.keywords, env))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_resolve(v, env) for v in obj)
    if isinstance(obj, dict):
        return {k: _resolve(v, env) for k, v in obj.items()}
    return obj


def fitted(name):
    """The model ``_FITS[name]``, fitted when first needed."""
    return Lazy(lambda env: env.fitted(name))


@pytest.fixture(scope="session")
def _fitted_models():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = _FITS[name]()
        return cache[name]

    return get


@pytest.fixture
def env(_fitted_models, tmp_path):
    return types.SimpleNamespace(fitted=_fitted_models, tmp=tmp_path)


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
    elif hasattr(obj, "__dataclass_fields__") and not isinstance(obj, type):
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


def _edited(base, edits):
    """A fresh copy of ``base`` with the entry at ``edits["at"]`` set to ``edits["value"]``
    (no edit without ``at``)."""
    A = base.copy()
    if "at" in edits:
        A[edits["at"]] = edits["value"]
    return A


def X(**edits):
    """A fresh copy of the base data with entries replaced: X(at=(3, 1), value=nan)."""
    return _edited(_X, edits)


def y():
    return _y.copy()


def _npy_file(env):
    path = env.tmp / "array.npy"
    np.save(path, np.arange(3.0))
    return str(path)


def _one_sample_class():
    yy = y()
    yy[yy == 2] = 1
    yy[0] = 2
    return yy


def _constant_feature():
    A = X()
    A[:, 1] = 4.0
    return A


def _constant_in_class():
    A = X()
    A[_y == 1, 2] = 0.5
    return A


def _constant_in_every_class():
    A = X()
    for c in np.unique(_y):
        A[_y == c] = A[np.flatnonzero(_y == c)[0]]
    return A


def _identical_in_class():
    A = X()
    A[_y == 0] = A[np.flatnonzero(_y == 0)[0]]
    return A


def _moments(kind="pooled", data=None, yy=None):
    A = _X if data is None else data
    return Lazy(lambda env: fastgen.class_moments(A, _y if yy is None else yy, kind=kind))


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
    # (a constant or duplicated column gives a pooled model of lower rank, not an error)
    ("pooled-constant-in-every-class", call(fastgen.fit_gda, _constant_in_every_class(), y()),
     SingularCovarianceError, r"pooled within-class covariance is zero.*reg>0"),
    ("per-class-constant-in-class", call(fastgen.fit_gda, _constant_in_class(), y(),
                                         "per_class"),
     SingularCovarianceError, r"per-class covariance of class 1 is .*reg"),
    ("diagonal-constant-in-class", call(fastgen.fit_gda, _constant_in_class(), y(),
                                        "diagonal", var_smoothing=0.0),
     SingularCovarianceError, r"feature 2 \(0-based\) has zero variance in class 1"
     r".*var_smoothing>0"),
    ("pooled-diagonal-constant", call(fastgen.fit_gda, _constant_feature(), y(),
                                      "pooled_diagonal", var_smoothing=0.0),
     SingularCovarianceError, r"feature 1 \(0-based\) has zero pooled within-class variance"),
    ("unbiased-n-equals-K", call(fastgen.fit_gda, _X[:3].copy(), np.arange(3),
                                 unbiased=True),
     SingularCovarianceError, r"more samples than classes"),
    ("unbiased-diagonal-one-sample", call(fastgen.fit_gda, X(), _one_sample_class(),
                                          "diagonal", unbiased=True),
     SingularCovarianceError, r"class 2 has 1 sample.*unbiased"),
    # ---- scoring ----
    ("predict-n-features", call(fastgen.predict, fitted("gda-pooled"), np.ones((4, 5))), ValueError,
     r"X has 5 features, but the model was fitted with 3"),
    ("proba-n-features", call(fastgen.predict_proba, fitted("gda-per_class"), np.ones((4, 2))),
     ValueError, r"X has 2 features, but the model was fitted with 3"),
    ("proba-nan", call(fastgen.predict_proba, fitted("gda-per_class"),
                       np.where(np.arange(15).reshape(5, 3) == 7, np.nan, _Xt)),
     ValueError, r"X contains NaN at row 2, column 1"),
    ("jll-1d", call(fastgen.joint_log_likelihood, fitted("gda-pooled"), _Xt[0].copy()), ValueError,
     r"X must be 2-D"),
    ("log-proba-complex", call(fastgen.predict_log_proba, fitted("gda-pooled"), _Xt + 0j),
     ValueError, r"complex"),
    ("score-wrong-params", call(fastgen.predict_proba, {"means": _X}, _Xt), ValueError,
     r"params must be a fitted fastgen params object.*dict"),
    ("score-moments-as-params", call(fastgen.predict, _moments(), _Xt), ValueError,
     r"params must be a fitted fastgen params object.*ClassMoments"),
    ("jll-wrong-params", call(fastgen.joint_log_likelihood, None, _Xt), ValueError,
     r"params must be a fitted fastgen params object.*NoneType"),
    ("log-proba-wrong-params", call(fastgen.predict_log_proba, "model.npz", _Xt),
     ValueError, r"params must be a fitted fastgen params object.*str"),
    ("linear-discriminant-per-class", call(fastgen.linear_discriminant, fitted("gda-per_class")),
     ValueError, r"only for a covariance shared by the classes"),
    ("linear-discriminant-type", call(fastgen.linear_discriminant, _X), ValueError,
     r"params must be GDAParams"),
    ("lda-transform-n-components", call(fastgen.lda_transform, fitted("gda-pooled"), _Xt,
                                        n_components=3),
     ValueError, r"n_components must be an integer in \[1, 2\]"),
    ("lda-transform-n-components-float", call(fastgen.lda_transform, fitted("gda-pooled"), _Xt,
                                              n_components=1.0),
     ValueError, r"n_components must be an integer"),
    ("lda-transform-per-class", call(fastgen.lda_transform, fitted("gda-per_class"), _Xt),
     ValueError, r"only for a covariance shared"),
    ("lda-transform-n-features", call(fastgen.lda_transform, fitted("gda-pooled"), np.ones((2, 4))),
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
                              _moments(data=_X[:, :2].copy())),
     ValueError, r"cannot merge moments with 3 and 2 features"),
    ("merge-int-str-labels", call(fastgen.merge_moments, _moments(),
                                  _moments(yy=np.array(["a", "b", "c"])[_y])),
     ValueError, r"incompatible label types"),
    ("load-npy", call(fastgen.load_params, Lazy(_npy_file)), ValueError,
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
    ("from-moments-type", call(fastgen.gda_from_moments, fitted("gda-pooled")), ValueError,
     r"moments must be ClassMoments"),
    ("from-moments-priors", call(fastgen.gda_from_moments, _moments(), priors=[1.0]),
     ValueError, r"priors must have shape \(3,\)"),
    ("from-moments-singular", call(fastgen.gda_from_moments,
                                   _moments("per_class", _constant_feature()), "per_class"),
     SingularCovarianceError, r"per-class covariance of class 0 .*reg=1e-\d+ makes"),
    # ---- io ----
    ("save-not-params", call(fastgen.save_params, "unused.npz", _moments()), ValueError,
     r"params must be a fitted fastgen params object"),
    ("load-missing", call(fastgen.load_params, "/nonexistent/dir/params.npz"), ValueError,
     r"does not exist"),
]


# ---- data shared by the naive Bayes, logistic and streaming rows ----
_rng = np.random.default_rng(7)
_C = _rng.poisson(1.5, size=(30, 4)).astype(np.float64)  # counts (every class non-empty)
_Cat = _rng.integers(0, 3, size=(30, 4)).astype(np.float64)  # category codes
_y2 = np.arange(30) % 2  # two classes
_X2 = _X + 2.0 * _y2[:, None]


def C(**edits):
    """A fresh copy of the count data with entries replaced."""
    return _edited(_C, edits)


def Cat(**edits):
    return _edited(_Cat, edits)


def X2(**edits):
    return _edited(_X2, edits)


def y2():
    return _y2.copy()


def csr(A, *, at=None, value=None, index_dtype=None):
    """A CSR copy of A; ``at``/``value`` overwrite one stored value (keeps sparsity)."""
    M = sp.csr_matrix(A)
    if at is not None:
        M.data[at] = value
    if index_dtype is not None:
        M.indices = M.indices.astype(index_dtype)
        M.indptr = M.indptr.astype(index_dtype)
    return M


_FITS = {  # fitted on first use (see ``fitted``), never at import
    "gda-pooled": lambda: fastgen.fit_gda(_X, _y, "pooled"),
    "gda-per_class": lambda: fastgen.fit_gda(_X, _y, "per_class"),
    "nb-gaussian": lambda: fastgen.fit_gaussian_nb(_X, _y),
    "nb-bernoulli": lambda: fastgen.fit_bernoulli_nb(_C, _y),
    "nb-multinomial": lambda: fastgen.fit_multinomial_nb(_C, _y),
    "nb-complement": lambda: fastgen.fit_complement_nb(_C, _y),
    "nb-categorical": lambda: fastgen.fit_categorical_nb(_Cat, _y),
    "logistic": lambda: fastgen.fit_logistic(_X2, _y2, l2=1.0),
    "logistic-3": lambda: fastgen.fit_logistic(_X, _y, l2=1.0),
}
_LOGIT, _LOGIT3 = fitted("logistic"), fitted("logistic-3")
_NB_MODELS = ("gaussian", "bernoulli", "multinomial", "complement", "categorical")
_TMP_FILE = Lazy(lambda env: str(env.tmp / "x.npz"))
_COUNT_FITS = {
    "bernoulli": fastgen.fit_bernoulli_nb,
    "multinomial": fastgen.fit_multinomial_nb,
    "complement": fastgen.fit_complement_nb,
    "categorical": fastgen.fit_categorical_nb,
}
_DATA_OF = {"bernoulli": C, "multinomial": C, "complement": C, "categorical": Cat}

# files for load_params (written under the test's tmp_path): truncated, garbage, a
# foreign npz, a pickled header, and headers from the future


def _good_npz(env):
    path = env.tmp / "good.npz"
    if not path.exists():
        fastgen.save_params(path, env.fitted("nb-multinomial"))
    return path


def _file(name, write):
    """A Lazy path: ``write(path, env)`` fills ``tmp_path/name``."""

    def build(env):
        path = env.tmp / name
        write(path, env)
        return str(path)

    return Lazy(build)


def _truncated(path, env):
    blob = _good_npz(env).read_bytes()
    path.write_bytes(blob[: len(blob) // 2])


_TRUNC = _file("truncated.npz", _truncated)
_GARBAGE = _file("garbage.npz",
                 lambda path, env: path.write_bytes(b"this is not a zip file at all" * 10))
_EMPTY_FILE = _file("empty.npz", lambda path, env: path.write_bytes(b""))
_FOREIGN = _file("foreign.npz",
                 lambda path, env: np.savez(path, a=np.arange(3), b=np.ones((2, 2))))
_PICKLED = _file("pickled.npz", lambda path, env: np.savez(
    path, __fastgen__=np.array([{"format": "x"}], dtype=object)))


def _good_arrays(env, drop=None):
    with np.load(_good_npz(env)) as f:
        return {k: f[k] for k in f.files if k != drop}


def _with_header(name, **changes):
    """A copy of the good file whose JSON header has ``changes`` applied."""

    def write(path, env):
        arrays = _good_arrays(env)
        header = json.loads(str(arrays["__fastgen__"][()]))
        for k, v in changes.items():
            if v is None:
                header.pop(k, None)
            else:
                header[k] = v
        arrays["__fastgen__"] = np.asarray(json.dumps(header))
        np.savez(path, **arrays)

    return _file(name, write)


def _with_header_json(name, text):
    def write(path, env):
        arrays = _good_arrays(env)
        arrays["__fastgen__"] = np.asarray(text)
        np.savez(path, **arrays)

    return _file(name, write)


def _without_field(name, field):
    return _file(name, lambda path, env: np.savez(path, **_good_arrays(env, drop=field)))


def _counts(model="multinomial", data=None, yy=None, **kw):
    A = (_X if model == "gaussian" else _C) if data is None else data
    return Lazy(lambda env: fastgen.nb_counts(A, _y if yy is None else yy, model, **kw))


NB_CASES = [
    # ---- X, every naive Bayes fit ----
    *[(f"{m}-X-nan", call(f, _DATA_OF[m](at=(4, 2), value=np.nan), y()), ValueError,
       r"X contains NaN at row 4, column 2") for m, f in _COUNT_FITS.items()],
    *[(f"{m}-X-inf", call(f, _DATA_OF[m](at=(11, 0), value=np.inf), y()), ValueError,
       r"X contains infinity at row 11, column 0") for m, f in _COUNT_FITS.items()],
    ("gaussian-X-nan", call(fastgen.fit_gaussian_nb, X(at=(6, 1), value=np.nan), y()),
     ValueError, r"X contains NaN at row 6, column 1"),
    ("gaussian-X-neg-inf", call(fastgen.fit_gaussian_nb, X(at=(29, 2), value=-np.inf), y()),
     ValueError, r"X contains infinity at row 29, column 2"),
    ("gaussian-X-empty", call(fastgen.fit_gaussian_nb, np.empty((0, 3)),
                              np.empty(0, dtype=int)), ValueError, r"X has 0 rows"),
    ("multinomial-X-empty", call(fastgen.fit_multinomial_nb, np.empty((0, 4)),
                                 np.empty(0, dtype=int)), ValueError, r"X has 0 rows"),
    ("bernoulli-0-features", call(fastgen.fit_bernoulli_nb, np.empty((30, 0)), y()),
     ValueError, r"X has 0 features"),
    ("categorical-0-features", call(fastgen.fit_categorical_nb, np.empty((30, 0)), y()),
     ValueError, r"X has 0 features"),
    ("gaussian-X-1d", call(fastgen.fit_gaussian_nb, _X[:, 0].copy(), y()), ValueError,
     r"X must be 2-D.*got 1-D"),
    ("complement-X-3d", call(fastgen.fit_complement_nb, _C.reshape(30, 2, 2).copy(), y()),
     ValueError, r"X must be 2-D.*got 3-D"),
    ("gaussian-X-sparse", call(fastgen.fit_gaussian_nb, csr(_X), y()), ValueError,
     r"X is a scipy sparse matrix"),
    ("multinomial-X-complex", call(fastgen.fit_multinomial_nb, C() + 0j, y()), ValueError,
     r"X has complex dtype"),
    ("bernoulli-X-object", call(fastgen.fit_bernoulli_nb,
                                np.array([["x", 1.0, 0.0, 1.0]] * 30, dtype=object), y()),
     ValueError, r"X has dtype object with non-numeric entries"),
    ("categorical-X-complex", call(fastgen.fit_categorical_nb, Cat() + 0j, y()), ValueError,
     r"X has complex dtype"),
    # ---- negative counts and bad category codes ----
    # (rows alike in shape are kept separate on purpose: each is its own case, with its
    # own model, data edit and expected message)
    ("multinomial-negative", call(fastgen.fit_multinomial_nb, C(at=(7, 3), value=-2.0), y()),
     ValueError, r"X contains a negative value \(-2\.0\) at row 7, column 3 \(0-based\); "
     r"multinomial"),
    ("complement-negative", call(fastgen.fit_complement_nb, C(at=(0, 1), value=-0.5), y()),
     ValueError, r"X contains a negative value \(-0\.5\) at row 0, column 1 \(0-based\); "
     r"complement"),
    ("multinomial-negative-csr", call(fastgen.fit_multinomial_nb,
                                      csr(C(at=(5, 2), value=-1.0)), y()),
     ValueError, r"X contains a negative value \(-1\.0\) at row 5, column 2"),
    ("complement-negative-csr", call(fastgen.fit_complement_nb,
                                     csr(C(at=(28, 0), value=-3.0)), y()),
     ValueError, r"X contains a negative value \(-3\.0\) at row 28, column 0"),
    ("categorical-negative", call(fastgen.fit_categorical_nb, Cat(at=(3, 3), value=-1.0), y()),
     ValueError, r"X contains a negative category code \(-1\.0\) at row 3, column 3"),
    ("categorical-negative-csr", call(fastgen.fit_categorical_nb,
                                      csr(Cat(at=(9, 1), value=-2.0)), y()),
     ValueError, r"X contains a negative category code \(-2\.0\) at row 9, column 1"),
    ("categorical-fraction", call(fastgen.fit_categorical_nb, Cat(at=(2, 0), value=1.5), y()),
     ValueError, r"X contains a non-integer category code \(1\.5\) at row 2, column 0"),
    # ---- NaN / inf in sparse data ----
    ("multinomial-csr-nan", call(fastgen.fit_multinomial_nb, csr(_C, at=3, value=np.nan),
                                 y()), ValueError, r"X contains NaN at row \d+, column \d+"),
    ("bernoulli-csr-inf", call(fastgen.fit_bernoulli_nb, csr(_C, at=0, value=np.inf), y()),
     ValueError, r"X contains infinity at row 0, column \d+"),
    ("complement-csr-int64-nan", call(fastgen.fit_complement_nb,
                                      csr(_C, at=5, value=np.nan, index_dtype=np.int64), y()),
     ValueError, r"X contains NaN at row \d+"),
    # the CSR count kernel finds these on its way (no scan beforehand); a binarizing fit
    # must not read NaN as "absent"
    ("bernoulli-csr-nan", call(fastgen.fit_bernoulli_nb, csr(_C, at=4, value=np.nan), y()),
     ValueError, r"X contains NaN at row \d+, column \d+"),
    ("bernoulli-csr-nan-binarize-none", call(fastgen.fit_bernoulli_nb,
                                             csr((_C > 0) * 1.0, at=4, value=np.nan), y(),
                                             binarize=None),
     ValueError, r"X contains NaN at row \d+, column \d+"),
    ("multinomial-csr-negative-and-nan", call(fastgen.fit_multinomial_nb,
                                              csr(_C, at=[1, 6], value=[-1.0, np.nan]), y()),
     ValueError, r"X contains NaN at row \d+"),
    ("categorical-csr-nan", call(fastgen.fit_categorical_nb, csr(_Cat, at=2, value=np.nan),
                                 y()), ValueError, r"X contains NaN at row \d+"),
    ("multinomial-csc-nan", call(fastgen.fit_multinomial_nb,
                                 sp.csc_matrix(C(at=(8, 1), value=np.nan)), y()),
     ValueError, r"X contains NaN at row 8, column 1"),
    ("bernoulli-coo-inf", call(fastgen.fit_bernoulli_nb,
                               sp.coo_matrix(C(at=(12, 3), value=-np.inf)), y()),
     ValueError, r"X contains infinity at row 12, column 3"),
    # ---- y ----
    ("multinomial-y-length", call(fastgen.fit_multinomial_nb, C(), y()[:-2]), ValueError,
     r"y has 28 labels but X has 30 rows"),
    ("gaussian-y-none", call(fastgen.fit_gaussian_nb, X(),
                             np.array(["a", None] * 15, dtype=object)),
     ValueError, r"y contains None"),
    ("bernoulli-y-mixed", call(fastgen.fit_bernoulli_nb, C(),
                               np.array(["a", 2, 3.5] * 10, dtype=object)),
     ValueError, r"y mixes label types"),
    ("categorical-y-nan", call(fastgen.fit_categorical_nb, Cat(),
                               np.where(_y == 0, np.nan, _y)),
     ValueError, r"y contains NaN"),
    ("complement-y-empty", call(fastgen.fit_complement_nb, C()[:0], np.empty(0)),
     ValueError, r"X has 0 rows"),
    # ---- sample_weight ----
    ("gaussian-w-nan", call(fastgen.fit_gaussian_nb, X(), y(),
                            sample_weight=np.r_[np.ones(5), np.nan, np.ones(24)]),
     ValueError, r"sample_weight contains a non-finite value at index 5"),
    ("bernoulli-w-inf", call(fastgen.fit_bernoulli_nb, C(), y(),
                             sample_weight=np.r_[np.ones(29), -np.inf]),
     ValueError, r"sample_weight contains a non-finite value at index 29"),
    ("complement-w-negative", call(fastgen.fit_complement_nb, C(), y(),
                                   sample_weight=np.r_[-1.0, np.ones(29)]),
     ValueError, r"sample_weight contains a negative value \(-1\.0\) at index 0"),
    ("categorical-w-zero", call(fastgen.fit_categorical_nb, Cat(), y(),
                                sample_weight=np.zeros(30)),
     ValueError, r"sample_weight is zero everywhere"),
    ("multinomial-w-length", call(fastgen.fit_multinomial_nb, C(), y(),
                                  sample_weight=np.ones(31)),
     ValueError, r"sample_weight must have shape \(30,\)"),
    # ---- options ----
    ("gaussian-priors-sum", call(fastgen.fit_gaussian_nb, X(), y(),
                                 priors=np.array([0.2, 0.2, 0.2])),
     ValueError, r"priors must sum to 1; they sum to 0.6"),
    ("multinomial-class-prior-sum", call(fastgen.fit_multinomial_nb, C(), y(),
                                         class_prior=np.array([0.5, 0.5, 0.5])),
     ValueError, r"class_prior must sum to 1; they sum to 1.5"),
    ("bernoulli-class-prior-length", call(fastgen.fit_bernoulli_nb, C(), y(),
                                          class_prior=np.array([0.5, 0.5])),
     ValueError, r"class_prior must have shape \(3,\)"),
    ("gaussian-var-smoothing-negative", call(fastgen.fit_gaussian_nb, X(), y(),
                                             var_smoothing=-1e-9),
     ValueError, r"var_smoothing must be >= 0"),
    ("multinomial-alpha-negative", call(fastgen.fit_multinomial_nb, C(), y(), alpha=-1.0),
     ValueError, r"alpha must be >= 0"),
    ("categorical-alpha-nan", call(fastgen.fit_categorical_nb, Cat(), y(), alpha=np.nan),
     ValueError, r"alpha must be finite"),
    ("bernoulli-binarize-str", call(fastgen.fit_bernoulli_nb, C(), y(), binarize="0.5"),
     ValueError, r"binarize must be a real number"),
    ("categorical-min-categories-negative", call(fastgen.fit_categorical_nb, Cat(), y(),
                                                 min_categories=-1),
     ValueError, r"min_categories must be non-negative"),
    # ---- scoring: every params type ----
    *[(f"{m}-predict-n-features", call(fastgen.predict, fitted(f"nb-{m}"),
                                       np.ones((3, 5 if m != "gaussian" else 2))),
       ValueError, r"X has \d features, but the model was fitted with \d")
      for m in _NB_MODELS],
    *[(f"{m}-proba-nan", call(fastgen.predict_proba, fitted(f"nb-{m}"),
                              np.where(np.arange(12).reshape(3, 4) == 5, np.nan, 1.0)
                              [:, : 3 if m == "gaussian" else 4]),
       ValueError, r"X contains NaN at row 1, column 1") for m in _NB_MODELS],
    ("gaussian-jll-sparse", call(fastgen.joint_log_likelihood, fitted("nb-gaussian"), csr(_Xt)),
     ValueError, r"X is a scipy sparse matrix"),
    ("multinomial-log-proba-1d", call(fastgen.predict_log_proba, fitted("nb-multinomial"),
                                      np.ones(4)), ValueError, r"X must be 2-D"),
    ("bernoulli-jll-complex", call(fastgen.joint_log_likelihood, fitted("nb-bernoulli"),
                                   np.ones((2, 4)) + 0j), ValueError, r"complex"),
    ("bernoulli-predict-csr-nan", call(fastgen.predict, fitted("nb-bernoulli"),
                                       csr(_C[:5], at=2, value=np.nan)),
     ValueError, r"X contains NaN at row \d+, column \d+"),
    ("multinomial-jll-csr-inf", call(fastgen.joint_log_likelihood, fitted("nb-multinomial"),
                                     csr(_C[:5], at=0, value=-np.inf)),
     ValueError, r"X contains infinity at row 0"),
    ("complement-proba-csr-inf", call(fastgen.predict_proba, fitted("nb-complement"),
                                      csr(_C[:5], at=1, value=np.inf)),
     ValueError, r"X contains infinity at row \d+"),
    ("categorical-predict-out-of-range", call(fastgen.predict, fitted("nb-categorical"),
                                              np.full((2, 4), 5.0)),
     ValueError, r"X has category 5 at row 0, column 0 \(0-based\), but feature 0 was "
     r"fitted with 3"),
    ("categorical-proba-negative", call(fastgen.predict_proba, fitted("nb-categorical"),
                                        -np.ones((2, 4))),
     ValueError, r"negative category code"),
    ("score-counts-as-params", call(fastgen.predict_proba, _counts(), _C[:3].copy()),
     ValueError, r"params must be a fitted fastgen params object.*NBCounts"),
    ("score-array-as-params", call(fastgen.predict, _C, _C[:3].copy()), ValueError,
     r"params must be a fitted fastgen params object.*ndarray"),
    ("score-class-as-params", call(fastgen.joint_log_likelihood, fastgen.GDAParams, _Xt),
     ValueError, r"params must be a fitted fastgen params object"),
    # ---- streaming statistics ----
    ("nb-counts-model", call(fastgen.nb_counts, C(), y(), "poisson"), ValueError,
     r"model must be one of .*'poisson'"),
    ("nb-counts-negative", call(fastgen.nb_counts, C(at=(1, 1), value=-1.0), y()),
     ValueError, r"X contains a negative value \(-1\.0\) at row 1, column 1"),
    ("nb-counts-nan", call(fastgen.nb_counts, C(at=(2, 3), value=np.nan), y(), "bernoulli"),
     ValueError, r"X contains NaN at row 2, column 3"),
    ("nb-counts-gaussian-inf", call(fastgen.nb_counts, X(at=(0, 2), value=np.inf), y(),
                                    "gaussian"),
     ValueError, r"X contains infinity at row 0, column 2"),
    ("nb-counts-gaussian-sparse", call(fastgen.nb_counts, csr(_X), y(), "gaussian"),
     ValueError, r"X is a scipy sparse matrix"),
    ("nb-counts-y-length", call(fastgen.nb_counts, C(), y()[:10], "complement"), ValueError,
     r"y has 10 labels but X has 30 rows"),
    ("nb-counts-w-negative", call(fastgen.nb_counts, C(), y(),
                                  sample_weight=np.r_[np.ones(29), -2.0]),
     ValueError, r"sample_weight contains a negative value"),
    ("nb-counts-gaussian-w-nan", call(fastgen.nb_counts, X(), y(), "gaussian",
                                      sample_weight=np.r_[np.nan, np.ones(29)]),
     ValueError, r"sample_weight contains a non-finite value at index 0"),
    ("nb-counts-unknown-label", call(fastgen.nb_counts, C(), y(), classes=np.array([0, 1])),
     ValueError, r"y contains labels \[2\] that are not in classes"),
    ("nb-counts-unsorted-classes", call(fastgen.nb_counts, C(), y(),
                                        classes=np.array([2, 1, 0])),
     ValueError, r"classes must be sorted and unique"),
    ("merge-counts-models", call(fastgen.merge_counts, _counts("multinomial"),
                                 _counts("complement")),
     ValueError, r"cannot merge counts of model 'multinomial' with model 'complement'"),
    ("merge-counts-n-features", call(fastgen.merge_counts, _counts(),
                                     _counts(data=_C[:, :3].copy())),
     ValueError, r"cannot merge counts with 4 and 3 features"),
    ("merge-counts-binarize", call(fastgen.merge_counts, _counts("bernoulli"),
                                   _counts("bernoulli", binarize=1.0)),
     ValueError, r"cannot merge Bernoulli counts taken with binarize=0.0 and binarize=1.0"),
    ("merge-counts-label-types", call(fastgen.merge_counts, _counts(),
                                      _counts(yy=np.array(["a", "b", "c"])[_y])),
     ValueError, r"incompatible label types"),
    ("merge-counts-not-counts", call(fastgen.merge_counts, _counts(), _C), ValueError,
     r"b must be NBCounts; got ndarray"),
    ("merge-counts-moments", call(fastgen.merge_counts, _moments(), _counts()), ValueError,
     r"a must be NBCounts; got ClassMoments"),
    ("gnb-from-moments-kind", call(fastgen.gaussian_nb_from_moments, _moments()),
     ValueError, r"moments must be ClassMoments of kind 'diagonal'"),
    ("nb-from-counts-type", call(fastgen.nb_from_counts, _moments()), ValueError,
     r"counts must be NBCounts; got ClassMoments"),
    ("nb-from-counts-alpha", call(fastgen.nb_from_counts, _counts(), alpha=-1.0), ValueError,
     r"alpha must be >= 0"),
    ("nb-from-counts-priors", call(fastgen.nb_from_counts, _counts(),
                                   class_prior=np.array([0.9, 0.9, 0.9])),
     ValueError, r"class_prior must sum to 1"),
    ("nb-from-counts-gaussian-priors", call(fastgen.nb_from_counts, _counts("gaussian"),
                                            priors=np.array([1.0, 1.0])),
     ValueError, r"priors must have shape \(3,\)"),
    # ---- moments (beyond the GDA rows) ----
    ("moments-X-1d", call(fastgen.class_moments, _X[:, 0].copy(), y()), ValueError,
     r"X must be 2-D"),
    ("moments-y-mixed", call(fastgen.class_moments, X(),
                             np.array([None, "a", 1] * 10, dtype=object)),
     ValueError, r"y contains None"),
    ("moments-sparse", call(fastgen.class_moments, csr(_X), y()), ValueError,
     r"X is a scipy sparse matrix"),
    ("merge-moments-not-moments", call(fastgen.merge_moments, _counts("gaussian"),
                                       _moments()),
     ValueError, r"a must be ClassMoments; got NBCounts"),
]

LOGISTIC_CASES = [
    ("separation-X-nan", call(fastgen.detect_separation, X2(at=(13, 0), value=np.nan), y2()),
     ValueError, r"X contains NaN at row 13, column 0"),
    ("inference-not-a-model", call(fastgen.logistic_inference, "model", X2(), y2()),
     ValueError, r"model must be a LogisticParams"),
    ("logistic-X-nan", call(fastgen.fit_logistic, X2(at=(13, 0), value=np.nan), y2()),
     ValueError, r"X contains NaN at row 13, column 0"),
    ("logistic-X-inf", call(fastgen.fit_logistic, X2(at=(0, 2), value=-np.inf), y2()),
     ValueError, r"X contains infinity at row 0, column 2"),
    ("logistic-X-empty", call(fastgen.fit_logistic, np.empty((0, 3)), np.empty(0, int)),
     ValueError, r"X has 0 rows"),
    ("logistic-0-features", call(fastgen.fit_logistic, np.empty((30, 0)), y2()), ValueError,
     r"X has 0 features"),
    ("logistic-X-3d", call(fastgen.fit_logistic, _X2.reshape(30, 3, 1).copy(), y2()),
     ValueError, r"X must be 2-D.*got 3-D"),
    ("logistic-X-complex", call(fastgen.fit_logistic, X2() * 1j, y2()), ValueError,
     r"X has complex dtype"),
    ("logistic-X-object-none", call(fastgen.fit_logistic,
                                    np.array([[None, 1.0, 2.0]] * 30, dtype=object), y2()),
     ValueError, r"X contains a missing value \(None\) at row 0, column 0"),
    ("logistic-X-object-str", call(fastgen.fit_logistic,
                                   np.array([["1", 1.0, {}]] * 30, dtype=object), y2()),
     ValueError, r"X has dtype object with non-numeric entries"),
    ("logistic-csr-nan", call(fastgen.fit_logistic, csr(_X2, at=10, value=np.nan), y2()),
     ValueError, r"X contains NaN at row 3, column 1"),
    ("logistic-one-class", call(fastgen.fit_logistic, X2(), np.zeros(30, int)), ValueError,
     r"y has 1 distinct class.*at least 2"),
    ("logistic-one-class-str", call(fastgen.fit_logistic, X2(), np.array(["spam"] * 30)),
     ValueError, r"y has 1 distinct class"),
    ("logistic-one-weighted-class", call(fastgen.fit_logistic, X2(), y2(),
                                         sample_weight=(_y2 == 0).astype(float)),
     ValueError, r"class 1 has zero total weight.*every class of y to carry weight"),
    ("logistic-one-weighted-class-multinomial", call(fastgen.fit_logistic, X(), y(),
                                                     sample_weight=(_y != 2).astype(float)),
     ValueError, r"class 2 has zero total weight"),
    ("logistic-y-length", call(fastgen.fit_logistic, X2(), y2()[1:]), ValueError,
     r"y has 29 labels but X has 30 rows"),
    ("logistic-y-none", call(fastgen.fit_logistic, X2(),
                             np.array([None, "b"] * 15, dtype=object)),
     ValueError, r"y contains None"),
    ("logistic-y-mixed", call(fastgen.fit_logistic, X2(),
                              np.array([1, "b"] * 15, dtype=object)),
     ValueError, r"y mixes label types"),
    ("logistic-w-nan", call(fastgen.fit_logistic, X2(), y2(),
                            sample_weight=np.r_[np.ones(3), np.nan, np.ones(26)]),
     ValueError, r"sample_weight contains a non-finite value at index 3"),
    ("logistic-w-negative", call(fastgen.fit_logistic, X2(), y2(),
                                 sample_weight=np.r_[np.ones(29), -0.5]),
     ValueError, r"sample_weight contains a negative value \(-0\.5\) at index 29"),
    ("logistic-l2-inf", call(fastgen.fit_logistic, X2(), y2(), l2=np.inf), ValueError,
     r"l2 must be finite"),
    ("logistic-init-nan", call(fastgen.fit_logistic, X2(), y2(),
                               init=(np.full((1, 3), np.nan), np.zeros(1))),
     ValueError, r"init contains NaN or infinity"),
    ("logistic-init-classes", call(fastgen.fit_logistic, X2(), y2() + 1, init=_LOGIT),
     ValueError, r"init was fitted with classes \[0, 1\] but y has classes \[1, 2\]"),
    ("logistic-sparse-int64-inf", call(fastgen.fit_logistic,
                                       csr(_X2, at=0, value=np.inf, index_dtype=np.int64),
                                       y2()),
     ValueError, r"X contains infinity at row 0, column 0"),
    # ---- irls_step ----
    ("irls-step-params-type", call(fastgen.irls_step, fitted("nb-gaussian"), X2(), y2()),
     ValueError, r"params must be a LogisticParams.*GaussianNBParams"),
    ("irls-step-n-features", call(fastgen.irls_step, _LOGIT, _X2[:, :2].copy(), y2()),
     ValueError, r"X has 2 features, but the model was fitted with 3"),
    ("irls-step-classes", call(fastgen.irls_step, _LOGIT, X2(), y()), ValueError,
     r"y has classes \[0, 1, 2\] but params were fitted with \[0, 1\]"),
    ("irls-step-one-class", call(fastgen.irls_step, _LOGIT, X2(), np.ones(30, int)),
     ValueError, r"y has 1 distinct class"),
    ("irls-step-nan", call(fastgen.irls_step, _LOGIT, X2(at=(1, 1), value=np.nan), y2()),
     ValueError, r"X contains NaN at row 1, column 1"),
    ("irls-step-w-inf", call(fastgen.irls_step, _LOGIT, X2(), y2(),
                             sample_weight=np.full(30, np.inf)),
     ValueError, r"sample_weight contains a non-finite value at index 0"),
    ("irls-step-l2-negative", call(fastgen.irls_step, _LOGIT, X2(), y2(), l2=-1.0),
     ValueError, r"l2 must be >= 0"),
    # ---- scoring ----
    ("logistic-predict-n-features", call(fastgen.predict, _LOGIT, np.ones((2, 4))),
     ValueError, r"X has 4 features, but the model was fitted with 3"),
    ("logistic-multinomial-jll-n-features", call(fastgen.joint_log_likelihood, _LOGIT3,
                                                 np.ones((2, 1))),
     ValueError, r"X has 1 features, but the model was fitted with 3"),
    ("logistic-proba-csr-nan", call(fastgen.predict_proba, _LOGIT,
                                    csr(_Xt, at=0, value=np.nan)),
     ValueError, r"X contains NaN at row 0"),
    ("logistic-log-proba-inf", call(fastgen.predict_log_proba, _LOGIT3,
                                    np.array([[0.0, np.inf, 1.0]])),
     ValueError, r"X contains infinity at row 0, column 1"),
    ("logistic-predict-3d", call(fastgen.predict, _LOGIT, np.ones((2, 3, 1))), ValueError,
     r"X must be 2-D"),
    ("logistic-predict-empty-features", call(fastgen.predict, _LOGIT, np.ones((2, 0))),
     ValueError, r"X has 0 features"),
]

IO_CASES = [
    ("load-truncated", call(fastgen.load_params, _TRUNC), ValueError,
     r"could not be read as a fastgen params file"),
    ("load-garbage", call(fastgen.load_params, _GARBAGE), ValueError,
     r"could not be read as a fastgen params file"),
    ("load-empty-file", call(fastgen.load_params, _EMPTY_FILE), ValueError,
     r"could not be read as a fastgen params file"),
    ("load-foreign-npz", call(fastgen.load_params, _FOREIGN), fastgen.ParamsFileError,
     r"not a fastgen params file \(no fastgen header\)"),
    ("load-names-foreign-npz", call(fastgen.load_feature_names, _FOREIGN),
     fastgen.ParamsFileError, r"not a fastgen params file \(no fastgen header\)"),
    ("load-json-list-header", call(fastgen.load_params, _with_header_json("list.npz", "[1]")),
     ValueError, r"could not be read as a fastgen params file"),
    ("load-pickled-header", call(fastgen.load_params, _PICKLED), ValueError,
     r"could not be read as a fastgen params file"),
    ("load-wrong-format", call(fastgen.load_params, _with_header("fmt.npz", format="other")),
     ValueError, r"is not a fastgen params file"),
    ("load-newer-version", call(fastgen.load_params, _with_header("ver.npz", version=99)),
     ValueError, r"written by a newer fastgen \(format version 99\)"),
    ("load-unknown-type", call(fastgen.load_params,
                               _with_header("type.npz", type="RandomForestParams")),
     ValueError, r"unknown params type 'RandomForestParams'"),
    ("load-missing-field", call(fastgen.load_params,
                                _without_field("nofield.npz", "feature_log_prob")),
     ValueError, r"lacks the field 'feature_log_prob'"),
    ("load-directory", call(fastgen.load_params, Lazy(lambda env: str(env.tmp))), ValueError,
     r"is a directory, not a params file"),
    ("save-array", call(fastgen.save_params, _TMP_FILE, _C), ValueError,
     r"params must be a fitted fastgen params object; got ndarray"),
    ("save-counts", call(fastgen.save_params, _TMP_FILE, _counts()),
     ValueError, r"params must be a fitted fastgen params object; got NBCounts"),
]

CASES = list(GDA_CASES) + NB_CASES + LOGISTIC_CASES + IO_CASES


def _unpack(case):
    if hasattr(case, "values"):  # a pytest.param
        return pytest.param(*case.values, marks=case.marks, id=case.values[0])
    return pytest.param(*case, id=case[0])


@pytest.mark.parametrize("case_id, fn, exc, match", [_unpack(c) for c in CASES])
def test_rejected(case_id, fn, exc, match, env):
    fn = _resolve(fn, env)
    arrays = list(_arrays_in(fn))
    before = _digest(arrays)
    with pytest.raises(exc, match=match) as info:
        fn()
    # every rejection is a ValueError (SingularCovarianceError is one too)
    assert isinstance(info.value, ValueError)
    assert _digest(arrays) == before, "the caller's arrays were modified"


def _func_name(fn):
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn.__name__


def _public_functions():
    import inspect

    return {n for n in fastgen.__all__ if inspect.isfunction(getattr(fastgen, n))}


def test_catalogue_covers_every_public_function():
    # every public function that takes input has at least one rejected call in the
    # catalogue (a new function without a row fails here), and ids are unique
    rows = [c.values if hasattr(c, "values") else c for c in CASES]
    covered = {_func_name(fn) for _id, fn, _exc, _match in rows}
    assert _public_functions() - covered == set()
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids))
    assert len(GDA_CASES) >= 20
    assert len(NB_CASES) + len(LOGISTIC_CASES) + len(IO_CASES) >= 60


def test_singular_covariance_error_is_both():
    assert issubclass(SingularCovarianceError, np.linalg.LinAlgError)
    assert issubclass(SingularCovarianceError, ValueError)


# --------------------------------------------------------------------------- accepted
#
# Valid but unusual inputs must work and give what the canonical input gives: each row is
# ``(id, odd_callable, canonical_callable)``; the odd call must also leave its arrays
# unchanged (non-canonical CSR is canonicalised on a copy).


def _duplicate_csr(A):
    """CSR storing each value as two halves at the same (row, column)."""
    M = sp.csr_matrix(A)
    indices = np.repeat(M.indices, 2)
    data = np.repeat(M.data / 2, 2)
    D = sp.csr_matrix((data, indices, 2 * M.indptr), shape=A.shape)
    assert D.nnz == 2 * M.nnz and not D.has_canonical_format
    return D


def _readonly_memmap(A, name):
    def build(env):
        path = env.tmp / name
        np.save(path, A)
        M = np.load(path, mmap_mode="r")
        assert not M.flags.writeable
        return M

    return Lazy(build)


_Cb = (_C > 1).astype(bool)  # binary features as bool

ACCEPTED = [
    # ---- sparse layouts, every sparse-capable fit ----
    *[(f"{m}-{kind}", call(f, make(_DATA_OF[m]()), y()), call(f, csr(_DATA_OF[m]()), y()))
      for m, f in _COUNT_FITS.items()
      for kind, make in [("csr-duplicates", _duplicate_csr), ("csc", sp.csc_matrix),
                         ("coo", sp.coo_matrix), ("csr-array", sp.csr_array),
                         ("dense", np.asarray)]],
    ("logistic-csr-duplicates", call(fastgen.fit_logistic, _duplicate_csr(_X2), y2(), l2=1.0),
     call(fastgen.fit_logistic, csr(_X2), y2(), l2=1.0)),
    ("logistic-csc", call(fastgen.fit_logistic, sp.csc_matrix(_X2), y2(), l2=1.0),
     call(fastgen.fit_logistic, csr(_X2), y2(), l2=1.0)),
    ("logistic-coo", call(fastgen.fit_logistic, sp.coo_matrix(_X2), y2(), l2=1.0),
     call(fastgen.fit_logistic, csr(_X2), y2(), l2=1.0)),
    ("nb-counts-csc", call(fastgen.nb_counts, sp.csc_matrix(_C), y()),
     call(fastgen.nb_counts, _C, y())),
    ("bernoulli-jll-coo", call(fastgen.joint_log_likelihood, fitted("nb-bernoulli"),
                               sp.coo_matrix(_C)),
     call(fastgen.joint_log_likelihood, fitted("nb-bernoulli"), _C)),
    ("logistic-log-proba-csc", call(fastgen.predict_log_proba, _LOGIT,
                                    sp.csc_matrix(_X2)),
     call(fastgen.predict_log_proba, _LOGIT, _X2)),
    # ---- layouts and dtypes: read-only memmap, int, bool, float16 (the matrix zoo below
    # covers float32/float64, C/F order, read-only arrays and CSR index layouts) ----
    *[(f"{name}-memmap", call(f, _readonly_memmap(A, f"{name}.npy"), yy), call(f, A, yy))
      for name, f, A, yy in [
          ("gda-pooled", fastgen.fit_gda, _X, _y), ("gaussian-nb", fastgen.fit_gaussian_nb,
                                                    _X, _y),
          ("complement", fastgen.fit_complement_nb, _C, _y),
          ("categorical", fastgen.fit_categorical_nb, _Cat, _y),
          ("logistic", fastgen.fit_logistic, _X2, _y2),
          ("nb-counts", fastgen.nb_counts, _C, _y)]],
    *[(f"{name}-int", call(f, A.astype(np.int64), _y), call(f, A, _y))
      for name, f, A in [("gda-per-class", functools.partial(fastgen.fit_gda,
                                                             covariance="per_class"), _C + 0),
                         ("multinomial", fastgen.fit_multinomial_nb, _C),
                         ("categorical", fastgen.fit_categorical_nb, _Cat),
                         ("logistic", functools.partial(fastgen.fit_logistic, l2=1.0), _C)]],
    *[(f"{name}-bool", call(f, _Cb.copy(), _y), call(f, _Cb.astype(np.float64), _y))
      for name, f in [("bernoulli", fastgen.fit_bernoulli_nb),
                      ("multinomial", fastgen.fit_multinomial_nb),
                      ("logistic", functools.partial(fastgen.fit_logistic, l2=1.0))]],
    *[(f"{name}-float16", call(f, A.astype(np.float16), _y),
       call(f, A.astype(np.float16).astype(np.float64), _y))
      for name, f, A in [("gda-pooled", fastgen.fit_gda, _X),
                         ("gaussian-nb", fastgen.fit_gaussian_nb, _X),
                         ("multinomial", fastgen.fit_multinomial_nb, _C)]],
    ("gda-proba-memmap", call(fastgen.predict_proba, fitted("gda-pooled"),
                              _readonly_memmap(_X, "score.npy")),
     call(fastgen.predict_proba, fitted("gda-pooled"), _X)),
    ("gaussian-nb-jll-int", call(fastgen.joint_log_likelihood, fitted("nb-gaussian"),
                                 np.arange(12).reshape(4, 3)),
     call(fastgen.joint_log_likelihood, fitted("nb-gaussian"),
          np.arange(12.0).reshape(4, 3))),
    ("logistic-predict-bool", call(fastgen.predict, _LOGIT, _X2 > 0),
     call(fastgen.predict, _LOGIT, (_X2 > 0).astype(np.float64))),
    ("irls-step-fortran", call(fastgen.irls_step, _LOGIT, np.asfortranarray(_X2),
                               _y2),
     call(fastgen.irls_step, _LOGIT, _X2, _y2)),
    # ---- labels: pandas-style object arrays, lists, bool ----
    ("gda-y-object-str", call(fastgen.fit_gda, _X, np.array(["a", "b", "c"], dtype=object)[_y]),
     call(fastgen.fit_gda, _X, np.array(["a", "b", "c"])[_y])),
    ("multinomial-y-list", call(fastgen.fit_multinomial_nb, _C, _y.tolist()),
     call(fastgen.fit_multinomial_nb, _C, _y)),
    ("logistic-y-bool", call(fastgen.fit_logistic, _X2, _y2.astype(bool)),
     call(fastgen.fit_logistic, _X2, _y2.astype(bool).astype(object))),
    ("priors-within-tolerance", call(fastgen.fit_gda, _X, _y,
                                     priors=np.array([0.2, 0.3, 0.5 + 1e-12])),
     call(fastgen.fit_gda, _X, _y, priors=np.array([0.2, 0.3, 0.5 + 1e-12]))),
]


def _values(obj):
    """The arrays and scalars of a result (params, moments, counts, or an array)."""
    if isinstance(obj, np.ndarray):
        return {"": obj}
    out = {}
    for name in obj.__dataclass_fields__:
        v = getattr(obj, name)
        if hasattr(v, "__dataclass_fields__"):
            out.update({f"{name}.{k}": x for k, x in _values(v).items()})
        else:
            out[name] = v
    return out


@pytest.mark.parametrize("case_id, odd, canonical",
                         [pytest.param(*c, id=c[0]) for c in ACCEPTED])
def test_accepted(case_id, odd, canonical, env):
    odd, canonical = _resolve(odd, env), _resolve(canonical, env)
    arrays = list(_arrays_in(odd))
    before = _digest(arrays)
    got, want = odd(), canonical()
    assert _digest(arrays) == before, "the caller's arrays were modified"
    _assert_same_values(got, want)


def _assert_same_values(got, want):
    got, want = _values(got), _values(want)
    assert got.keys() == want.keys()
    for k in want:
        g, w = got[k], want[k]
        if isinstance(w, np.ndarray) and w.dtype.kind == "f":
            assert g.dtype == w.dtype, k
            # duplicate CSR entries are summed first: the sums may differ by rounding
            np.testing.assert_allclose(g, w, rtol=64 * np.finfo(w.dtype).eps, atol=1e-12,
                                       err_msg=k)
        elif isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w, err_msg=k)
        elif isinstance(w, float):
            assert g == pytest.approx(w, rel=1e-12), k
        else:
            assert g == w, k


def test_accepted_catalogue_covers_every_fit():
    # every public fit meets odd-but-valid input, here or on the matrix zoo below
    fits = {n for n in _public_functions() if n.startswith("fit_")} | {"class_moments",
                                                                         "nb_counts"}
    covered = {_func_name(odd) for _id, odd, _canonical in ACCEPTED}
    covered |= {_func_name(f) for f, _A, _y, _sparse in _ZOO_FITS.values()}
    assert fits - covered == set()
    assert len(ACCEPTED) >= 30
    assert len({c[0] for c in ACCEPTED}) == len(ACCEPTED)


# ------------------------------------------------------------------ the matrix zoo
#
# Every fit (and, for params, scoring) on every layout of the shared ``matrix_zoo``
# fixture gives what the canonical layout of the same dtype gives, and leaves the
# caller's arrays unchanged.  Fits that take no sparse X must reject CSR clearly.

_ZOO_FITS = {  # name: (fit, X, y, takes sparse X)
    "gda-pooled": (fastgen.fit_gda, _X, _y, False),
    "gda-per-class": (functools.partial(fastgen.fit_gda, covariance="per_class"), _X, _y,
                      False),
    "class-moments": (fastgen.class_moments, _X, _y, False),
    "gaussian-nb": (fastgen.fit_gaussian_nb, _X, _y, False),
    **{m: (f, _DATA_OF[m](), _y, True) for m, f in _COUNT_FITS.items()},
    "nb-counts": (fastgen.nb_counts, _C, _y, True),
    "logistic": (functools.partial(fastgen.fit_logistic, l2=1.0), _X2, _y2, True),
}


@pytest.mark.parametrize("name", list(_ZOO_FITS))
def test_matrix_zoo(name, matrix_zoo):
    fit, A, yy, takes_sparse = _ZOO_FITS[name]
    Xz = matrix_zoo(A)
    arrays = list(_arrays_in(call(fit, Xz)))
    before = _digest(arrays)
    if matrix_zoo.sparse and not takes_sparse:
        with pytest.raises(ValueError, match="sparse"):
            fit(Xz, yy)
        assert _digest(arrays) == before, "the caller's arrays were modified"
        return
    got, want = fit(Xz, yy), fit(matrix_zoo.canonical(A), yy)
    _assert_same_values(got, want)
    if hasattr(got, "n_features_in"):  # a params object: score the same layout
        np.testing.assert_array_equal(fastgen.predict(got, Xz),
                                      fastgen.predict(want, matrix_zoo.canonical(A)))
        _assert_same_values(fastgen.predict_log_proba(got, Xz),
                            fastgen.predict_log_proba(want, matrix_zoo.canonical(A)))
    assert _digest(arrays) == before, "the caller's arrays were modified"
