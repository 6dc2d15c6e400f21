"""Params from any source are consistent.

Every params type checks its fields when it is built: shapes that agree with the number
of classes and features, float dtypes, finite values, sorted distinct classes.  Direct
construction, :func:`dataclasses.replace` and :func:`fastgen.load_params` all build
through the constructor, so a crafted or damaged params file is a ParamsFileError and
never reaches a kernel.  Params own their arrays: a read-only view of memory the caller
can still write is copied, while the fresh arrays of a fit are kept without a copy.
"""

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import make_blobs

import fastgen

SETTINGS = settings()  # the profile's (tests/conftest.py): derandomized by default

GDA_TYPES = ("pooled", "per_class", "diagonal", "pooled_diagonal")


def _counts(dtype=np.float64):
    rng = np.random.default_rng(3)
    y = np.arange(60) % 3
    X = rng.poisson(1.0 + y[:, None] * np.array([0.5, 1.0, 0.1, 2.0, 0.3])).astype(dtype)
    return X, y


def _build():
    X, y = make_blobs(90, 4, 3, seed=11)
    X32 = X.astype(np.float32)
    Xc, yc = _counts()
    Xb, yb = make_blobs(80, 3, 2, seed=12, spread=0.7)
    Xr, yr = make_blobs(120, 3, 3, seed=13, spread=0.5)
    out = {f"gda-{c}": fastgen.fit_gda(X, y, c) for c in GDA_TYPES}
    out["gda-pooled-f32"] = fastgen.fit_gda(X32, y)
    out["gda-per_class-f32"] = fastgen.fit_gda(X32, y, "per_class")
    out.update({
        "gaussian_nb": fastgen.fit_gaussian_nb(X, y),
        "gaussian_nb-f32": fastgen.fit_gaussian_nb(X32, y),
        "bernoulli_nb": fastgen.fit_bernoulli_nb(Xc, yc, binarize=1.0),
        "multinomial_nb": fastgen.fit_multinomial_nb(Xc, yc),
        "multinomial_nb-f32": fastgen.fit_multinomial_nb(Xc.astype(np.float32), yc),
        "complement_nb": fastgen.fit_complement_nb(Xc, yc),
        "categorical_nb": fastgen.fit_categorical_nb(Xc, yc),
        "logistic-binary": fastgen.fit_logistic(Xb, yb),
        "logistic-multinomial": fastgen.fit_logistic(X, y, l2=1.0),
        "logistic-reference": fastgen.fit_logistic(Xr.astype(np.float32), yr),
    })
    return out


NAMES = [f"gda-{c}" for c in GDA_TYPES] + [
    "gda-pooled-f32", "gda-per_class-f32", "gaussian_nb", "gaussian_nb-f32",
    "bernoulli_nb", "multinomial_nb", "multinomial_nb-f32", "complement_nb",
    "categorical_nb", "logistic-binary", "logistic-multinomial", "logistic-reference"]

# Array fields whose values are free (any length, NaN allowed): the solver's record.
_FREE = {"objective_history", "grad_norm_history", "step_size_history"}


@pytest.fixture(scope="module")
def fitted():
    out = _build()
    assert sorted(out) == sorted(NAMES)
    return out


def _array_fields(p):
    return [f.name for f in dataclasses.fields(p)
            if isinstance(getattr(p, f.name), np.ndarray) and f.name not in _FREE]


# ------------------------------------------------------------------- the damages


def _wrong_shape(a, k, axes):
    """A copy of ``a`` one entry short or long along one of ``axes``, or (k % 5 == 4)
    flattened to its first entry, as a file with priors of shape (1,)."""
    if k % 5 == 4 and a.size > 1:
        return a.reshape(-1)[:1].copy()
    axis = axes[k % len(axes)]
    if k // len(axes) % 2 == 0 and a.shape[axis] > 1:
        return np.take(a, range(a.shape[axis] - 1), axis=axis)
    return np.concatenate([a, np.take(a, [0], axis=axis)], axis=axis)


def _poisoned(a, pos, value):
    b = np.array(a, dtype=a.dtype)
    b.reshape(-1)[pos % b.size] = value
    return b


def _wrong_dtype(field, a):
    if field == "classes":
        return a.astype(np.complex128) if a.dtype.kind in "biuf" else a.astype(object)
    if a.dtype.kind in "iu":  # n_categories, offsets
        return a.astype(np.float64)
    return a.astype(np.float16)


def _damaged(p, field, kind, k):
    """``(field, array)`` to put in place of ``p``'s field: a damage of ``kind``."""
    a = getattr(p, field)
    if kind == "shape":
        # LogisticParams takes d from coef alone: a column more or less is another model
        axes = [0] if field == "coef" else list(range(a.ndim))
        b = _wrong_shape(a, k, axes)
        assert b.shape != a.shape
        return b
    if kind == "nan":
        return _poisoned(a, k, np.nan)
    if kind == "inf":
        return _poisoned(a, k, np.inf)
    if kind == "dtype":
        return _wrong_dtype(field, a)
    raise AssertionError(kind)


def _applies(p, field, kind):
    a = getattr(p, field)
    if kind in ("nan", "inf"):
        return a.dtype.kind == "f" and field != "classes"
    return True


def _crafted_file(tmp_path, p, field, value):
    """A params file of ``p`` whose ``field`` array was replaced by ``value``."""
    path = fastgen.save_params(tmp_path / "good.npz", p)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays[field] = value
    bad = tmp_path / "crafted.npz"
    np.savez(bad, **arrays)
    return bad


def _refused(p, field, value, tmp_path):
    # the message names the field found inconsistent (another one, where the damaged
    # field fixes a size: fewer classes make the priors one too long)
    with pytest.raises(ValueError, match=rf"^{type(p).__name__}\.\w+ "):
        dataclasses.replace(p, **{field: value})
    if value.dtype == object:
        return  # cannot be saved without pickle; np.savez would pickle it
    with pytest.raises(fastgen.ParamsFileError,
                       match=rf"inconsistent params: {type(p).__name__}\.\w+ "):
        fastgen.load_params(_crafted_file(tmp_path, p, field, value))


# ------------------------------------------------------------------- the tests


@pytest.mark.parametrize("name", NAMES)
def test_every_field_refuses_every_damage(name, fitted, tmp_path):
    # the whole grid: every array field of every type, each damage that applies to it
    p = fitted[name]
    fields = _array_fields(p)
    assert {"classes"} < set(fields)
    for field in fields:
        for kind in ("shape", "nan", "inf", "dtype"):
            if _applies(p, field, kind):
                _refused(p, field, _damaged(p, field, kind, 0), tmp_path)


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_crafted_params_are_refused(name, fitted, tmp_path_factory, data):
    p = fitted[name]
    field = data.draw(st.sampled_from(_array_fields(p)), label="field")
    kind = data.draw(st.sampled_from([k for k in ("shape", "nan", "inf", "dtype")
                                      if _applies(p, field, k)]), label="damage")
    k = data.draw(st.integers(0, 10_000), label="where")
    _refused(p, field, _damaged(p, field, kind, k), tmp_path_factory.mktemp("crafted"))


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(data=st.data())
def test_classes_out_of_order_are_refused(name, fitted, data):
    p = fitted[name]
    K = p.classes.shape[0]
    perm = data.draw(st.permutations(range(K)).filter(lambda q: list(q) != sorted(q)))
    with pytest.raises(ValueError, match="must be sorted and distinct"):
        dataclasses.replace(p, classes=p.classes[list(perm)])
    dup = p.classes.copy()
    dup[data.draw(st.integers(1, K - 1))] = dup[0]
    with pytest.raises(ValueError, match="must be sorted and distinct"):
        dataclasses.replace(p, classes=np.sort(dup))


def test_priors_of_one_entry_are_refused(fitted, tmp_path):
    # the file: priors of shape (1,) for 3 classes broadcast over the classes
    p = fitted["gda-pooled"]
    bad = _crafted_file(tmp_path, p, "priors", np.array([1.0]))
    with pytest.raises(fastgen.ParamsFileError,
                       match=r"GDAParams.priors must have shape \(K,\) = \(3,\); got \(1,\)"):
        fastgen.load_params(bad)
    with pytest.raises(ValueError, match="priors must sum to 1"):
        dataclasses.replace(p, priors=np.array([0.5, 0.5, 0.5]))
    g = fitted["gaussian_nb"]
    with pytest.raises(ValueError, match=r"variances must have shape \(K, d\) = \(3, 4\)"):
        dataclasses.replace(g, variances=g.variances[:1])


def test_scalars_and_options_are_checked(fitted, tmp_path):
    cases = [("gda-pooled", "covariance_type", "diagonalish", "must be one of"),
             ("gda-pooled", "rank", 0, "rank must be an integer in"),
             ("gda-per_class", "rank", 2, "below 4 only for a pooled"),
             ("gaussian_nb", "epsilon", -1.0, "must be >= 0"),
             ("gaussian_nb", "var_smoothing", float("nan"), "must be finite"),
             ("multinomial_nb", "alpha", "1", "must be a real number"),
             ("bernoulli_nb", "binarize", float("inf"), "must be finite"),
             ("complement_nb", "norm", 1, "must be True or False"),
             ("logistic-binary", "parametrization", "symmetric", "'binary' for two"),
             ("logistic-binary", "fit_intercept", "yes", "must be True or False"),
             ("logistic-multinomial", "n_iter", -1, "must be >= 0"),
             ("logistic-multinomial", "l2", -1.0, "must be >= 0"),
             ("gda-pooled", "feature_names", ("a", "b"), "has 2 names; the model has 4"),
             ("gda-pooled", "feature_names", ("a", "a", "b", "c"), "must be distinct")]
    for name, field, value, msg in cases:
        with pytest.raises(ValueError, match=msg):
            dataclasses.replace(fitted[name], **{field: value})


def test_categorical_offsets_must_match_the_tables(fitted, tmp_path):
    p = fitted["categorical_nb"]
    off = p.offsets.copy()
    off[1] += 1  # feature 0 would read feature 1's first category
    with pytest.raises(ValueError, match=r"offsets must be \[0, cumsum\(n_categories\)\]"):
        dataclasses.replace(p, offsets=off)
    n_cat = p.n_categories.copy()
    n_cat[-1] += 2
    with pytest.raises(fastgen.ParamsFileError, match="offsets must be"):
        fastgen.load_params(_crafted_file(tmp_path, p, "n_categories", n_cat))


def test_damaged_header_fields_are_params_file_errors(fitted, tmp_path):
    p = fitted["gda-pooled"]
    path = fastgen.save_params(tmp_path / "good.npz", p)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(str(arrays["__fastgen__"][()]))
    for field, kind, value in (("rank", "int", np.arange(3)),
                               ("covariance_type", "str", np.asarray("cubic")),
                               ("priors", "float", np.asarray(1.0))):
        h = dict(header, fields=dict(header["fields"], **{field: kind}))
        bad = tmp_path / f"{field}.npz"
        np.savez(bad, **dict(arrays, __fastgen__=np.asarray(json.dumps(h)),
                             **{field: value}))
        with pytest.raises(fastgen.ParamsFileError):
            fastgen.load_params(bad)


@pytest.mark.parametrize("name", NAMES)
def test_params_own_their_arrays(name, fitted):
    p = fitted[name]
    for field in _array_fields(p):
        mine = np.array(getattr(p, field))  # the caller's writeable array
        view = mine[...]
        view.flags.writeable = False  # a read-only view of it
        q = dataclasses.replace(p, **{field: view})
        got = getattr(q, field)
        assert not got.flags.writeable and not np.shares_memory(got, mine), field
        # the fit's own arrays are kept as they are: no copy of what no one can write
        assert np.shares_memory(getattr(dataclasses.replace(p), field),
                                getattr(p, field)), field
    # a read-only view of a mutable buffer is copied too
    field = "classes"
    buf = bytearray(np.asarray(p.classes).tobytes())
    view = np.frombuffer(buf, dtype=p.classes.dtype)
    view.flags.writeable = False
    q = dataclasses.replace(p, classes=view)
    buf[:] = bytes(len(buf))
    np.testing.assert_array_equal(getattr(q, field), p.classes)


def test_editing_the_callers_array_leaves_the_params_alone(fitted):
    # the loophole: a read-only view of the caller's writeable array
    X, y = make_blobs(90, 4, 3, seed=11)
    p = fitted["gda-pooled"]
    buf = np.array([0.2, 0.3, 0.5])
    view = buf.view()
    view.flags.writeable = False
    q = dataclasses.replace(p, priors=view)
    before = fastgen.predict_proba(q, X)
    buf[:] = [0.6, 0.2, 0.2]
    np.testing.assert_array_equal(q.priors, [0.2, 0.3, 0.5])
    np.testing.assert_array_equal(fastgen.predict_proba(q, X), before)
    np.testing.assert_array_equal(fastgen.predict_proba(dataclasses.replace(q), X), before)


@pytest.mark.parametrize("name", NAMES)
def test_pickle_and_copy_build_through_the_checks(name, fitted):
    import copy
    import pickle

    p = fitted[name]
    for q in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert q == p
        for field in _array_fields(p):
            assert not getattr(q, field).flags.writeable, field
    # a damaged state (as an edited pickle would hold) is refused like a damaged file
    field = _array_fields(p)[1]
    state = dict(p.__getstate__(), **{field: _damaged(p, field, "shape", 0)})
    q = type(p).__new__(type(p))
    with pytest.raises(ValueError, match=rf"^{type(p).__name__}\.\w+ "):
        q.__setstate__(state)
