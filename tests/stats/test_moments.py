"""Class moments: class_moments, merge_moments, gda_from_moments.

The moments are exact sufficient statistics, so merging the moments of chunks must give
the moments of the concatenated data (up to rounding), in any grouping, with chunks that
miss some classes, and a model built from merged moments must equal the model fitted on
all the data.
"""

import numpy as np
import pytest
import reference as ref
from hypothesis import given
from hypothesis import strategies as st
from reference import make_blobs, rel_err

import fastgen

KINDS = ("pooled", "per_class", "diagonal")
COV_TYPES = ("pooled", "per_class", "diagonal", "pooled_diagonal")
RTOL = 1e-10


def _expected_scatter(r, kind):
    S = r["scatter"]
    return {"pooled": S.sum(0), "per_class": S, "diagonal": np.einsum("kjj->kj", S)}[kind]


def _assert_moments_close(a, b, rtol=1e-12):
    np.testing.assert_array_equal(a.classes, b.classes)
    assert a.kind == b.kind and a.dtype == b.dtype
    assert rel_err(a.counts, b.counts) <= rtol
    assert rel_err(a.means, b.means) <= rtol
    assert rel_err(a.scatter, b.scatter) <= rtol


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("d", [3, 30])  # below and above the BLAS switch (24)
def test_class_moments_match_reference(kind, weighted, d):
    X, y = make_blobs(9000, d, 4, seed=d)  # two row groups; classes of 2250 rows
    w = np.random.default_rng(1).uniform(0.1, 3.0, len(y)) if weighted else None
    m = fastgen.class_moments(X, y, kind=kind, sample_weight=w)
    r = ref.mle(X, y, w)
    assert m.kind == kind and m.dtype == "float64"
    for a in (m.counts, m.means, m.scatter):
        assert a.dtype == np.float64
    np.testing.assert_array_equal(m.classes, np.arange(4))
    assert rel_err(m.counts, r["counts"]) <= 1e-14
    assert rel_err(m.means, r["means"]) <= RTOL
    assert rel_err(m.scatter, _expected_scatter(r, kind)) <= RTOL
    assert m.n_features == d
    assert m.total == pytest.approx(float(r["counts"].sum()), rel=1e-14)


def test_float32_moments_are_float64():
    X, y = make_blobs(500, 4, 2, seed=3, dtype=np.float32)
    m = fastgen.class_moments(X, y, kind="per_class")
    assert m.dtype == "float32"
    assert m.means.dtype == m.scatter.dtype == m.counts.dtype == np.float64
    r = ref.mle(X.astype(np.float64), y)
    assert rel_err(m.scatter, r["scatter"]) <= RTOL
    p = fastgen.gda_from_moments(m, "per_class")
    assert p.covariance.dtype == np.float32


@pytest.mark.parametrize("kind", ["pooled", "per_class"])
def test_matrix_zoo_same_moments(dense_zoo, kind):
    # float32/float64, C/F order, read-only: bitwise the moments of the C-ordered array
    X, y = make_blobs(300, 5, 3, seed=8)
    Xz = dense_zoo(X)
    got = fastgen.class_moments(Xz, y, kind=kind)
    want = fastgen.class_moments(dense_zoo.canonical(X), y, kind=kind)
    assert got.dtype == want.dtype == dense_zoo.dtype.name
    for f in ("counts", "means", "scatter"):
        assert getattr(got, f).tobytes() == getattr(want, f).tobytes(), f
    np.testing.assert_array_equal(Xz, dense_zoo.canonical(X))  # untouched


def _split(X, y, cuts):
    cuts = [0, *sorted(cuts), len(y)]
    return [(X[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:]) if b > a]


@pytest.mark.parametrize("kind", KINDS)
def test_merge_equals_concatenation(kind):
    X, y = make_blobs(600, 5, 3, seed=4)
    whole = fastgen.class_moments(X, y, kind=kind)
    a = fastgen.class_moments(X[:250], y[:250], kind=kind)
    b = fastgen.class_moments(X[250:], y[250:], kind=kind)
    _assert_moments_close(fastgen.merge_moments(a, b), whole)
    _assert_moments_close(fastgen.merge_moments(b, a), whole)  # commutative


@pytest.mark.parametrize("kind", KINDS)
def test_merge_is_associative(kind):
    X, y = make_blobs(600, 4, 3, seed=5)
    a, b, c = (fastgen.class_moments(X[s], y[s], kind=kind)
               for s in (slice(0, 100), slice(100, 350), slice(350, 600)))
    left = fastgen.merge_moments(fastgen.merge_moments(a, b), c)
    right = fastgen.merge_moments(a, fastgen.merge_moments(b, c))
    _assert_moments_close(left, right)
    _assert_moments_close(left, fastgen.class_moments(X, y, kind=kind))


@pytest.mark.parametrize("kind", KINDS)
def test_merge_chunks_missing_classes(kind):
    X, y = make_blobs(400, 3, 4, seed=6)
    order = np.argsort(y, kind="stable")  # chunks hold one or two classes each
    X, y = X[order], y[order]
    whole = fastgen.class_moments(X, y, kind=kind)
    parts = [fastgen.class_moments(Xc, yc, kind=kind)
             for Xc, yc in _split(X, y, [50, 150, 260])]
    assert [p.classes.tolist() for p in parts] == [[0], [0, 1], [1, 2], [2, 3]]
    acc = parts[0]
    for p in parts[1:]:
        acc = fastgen.merge_moments(acc, p)
    _assert_moments_close(acc, whole)


@pytest.mark.parametrize("kind", KINDS)
def test_merge_disjoint_string_class_sets(kind):
    X, y = make_blobs(300, 3, 3, seed=7)
    names = np.array(["ant", "bee", "cat"])
    ys = names[y]
    a = fastgen.class_moments(X[y != 1], ys[y != 1], kind=kind)  # ant, cat
    b = fastgen.class_moments(X[y == 1], ys[y == 1], kind=kind)  # bee
    merged = fastgen.merge_moments(a, b)
    np.testing.assert_array_equal(merged.classes, names)
    _assert_moments_close(merged, fastgen.class_moments(X, ys, kind=kind))


def test_merge_rejects_int_and_str_labels():
    X, y = make_blobs(60, 2, 2, seed=8)
    a = fastgen.class_moments(X, y)
    b = fastgen.class_moments(X, np.array(["0", "1"])[y])
    with pytest.raises(ValueError, match="incompatible"):
        fastgen.merge_moments(a, b)


def test_merge_keeps_inputs_unchanged():
    X, y = make_blobs(200, 3, 2, seed=9)
    a = fastgen.class_moments(X[:120], y[:120], kind="per_class")
    b = fastgen.class_moments(X[120:], y[120:], kind="per_class")
    before = [x.tobytes() for m in (a, b) for x in (m.counts, m.means, m.scatter)]
    fastgen.merge_moments(a, b)
    assert [x.tobytes() for m in (a, b) for x in (m.counts, m.means, m.scatter)] == before


def test_merge_dtype_is_the_wider():
    X, y = make_blobs(100, 2, 2, seed=10)
    a = fastgen.class_moments(X[:50].astype(np.float32), y[:50])
    b = fastgen.class_moments(X[50:], y[50:])
    assert fastgen.merge_moments(a, a).dtype == "float32"
    assert fastgen.merge_moments(a, b).dtype == "float64"


@given(cuts=st.lists(st.integers(1, 299), min_size=1, max_size=5, unique=True),
       kind=st.sampled_from(KINDS), weighted=st.booleans())
def test_merge_of_any_split_equals_whole(cuts, kind, weighted):
    X, y = make_blobs(300, 3, 3, seed=11, offset=1e4)
    w = np.linspace(0.2, 2.0, 300) if weighted else None
    whole = fastgen.class_moments(X, y, kind=kind, sample_weight=w)
    cuts = [0, *sorted(cuts), 300]
    acc = None
    for a, b in zip(cuts[:-1], cuts[1:]):
        part = fastgen.class_moments(X[a:b], y[a:b], kind=kind,
                                     sample_weight=None if w is None else w[a:b])
        acc = part if acc is None else fastgen.merge_moments(acc, part)
    np.testing.assert_array_equal(acc.classes, whole.classes)
    assert rel_err(acc.counts, whole.counts) <= 1e-14
    assert rel_err(acc.means, whole.means) <= 1e-14
    assert rel_err(acc.scatter, whole.scatter) <= 1e-9  # offset 1e4: a few digits go


_OPTIONS = [{}, {"reg": 0.2}, {"shrinkage": 0.3}, {"unbiased": True},
            {"priors": [0.2, 0.3, 0.5]}]


@pytest.mark.parametrize("covariance, options",
                         [(c, o) for c in COV_TYPES for o in _OPTIONS]
                         + [(c, {"shrinkage": "oas"}) for c in ("pooled", "per_class")])
def test_gda_from_per_class_moments_equals_fit(covariance, options):
    X, y = make_blobs(300, 4, 3, seed=12)
    m = fastgen.class_moments(X, y, kind="per_class")
    a = fastgen.gda_from_moments(m, covariance, **options)
    b = fastgen.fit_gda(X, y, covariance, **options)
    np.testing.assert_array_equal(a.classes, b.classes)
    assert a.covariance_type == b.covariance_type == covariance
    for f in ("priors", "means", "covariance", "cholesky", "log_det", "n_per_class"):
        assert getattr(a, f).shape == getattr(b, f).shape, f
        assert rel_err(getattr(a, f), getattr(b, f)) <= 1e-12, f


@pytest.mark.parametrize("kind, covariance", [
    ("pooled", "pooled"),
    ("pooled", "pooled_diagonal"),
    ("diagonal", "diagonal"), ("diagonal", "pooled_diagonal"),
])
def test_gda_from_other_moment_kinds(kind, covariance):
    X, y = make_blobs(300, 4, 3, seed=13)
    m = fastgen.class_moments(X, y, kind=kind)
    a = fastgen.gda_from_moments(m, covariance, shrinkage=0.1)
    b = fastgen.fit_gda(X, y, covariance, shrinkage=0.1)
    for f in ("priors", "means", "covariance", "cholesky", "log_det", "n_per_class"):
        assert rel_err(getattr(a, f), getattr(b, f)) <= 1e-12, f


@pytest.mark.parametrize("covariance", COV_TYPES)
def test_streaming_fit_equals_batch_fit(covariance):
    X, y = make_blobs(1200, 3, 3, seed=14)
    acc = None
    for Xc, yc in _split(X, y, [100, 500, 501, 900]):
        m = fastgen.class_moments(Xc, yc, kind="per_class")
        acc = m if acc is None else fastgen.merge_moments(acc, m)
    a = fastgen.gda_from_moments(acc, covariance)
    b = fastgen.fit_gda(X, y, covariance)
    for f in ("priors", "means", "covariance", "log_det"):
        assert rel_err(getattr(a, f), getattr(b, f)) <= 1e-12, f
    Xt = X[:50]
    np.testing.assert_allclose(fastgen.predict_proba(a, Xt), fastgen.predict_proba(b, Xt),
                               rtol=0, atol=1e-12)


def test_pooled_moments_with_many_classes_never_store_per_class_scatter():
    rng = np.random.default_rng(15)
    K, d = 3000, 8
    y = np.arange(12_000) % K
    X = rng.normal(size=(12_000, d)) + 5 * rng.normal(size=(K, d))[y]
    m = fastgen.class_moments(X, y, kind="pooled")
    assert m.scatter.shape == (d, d)
    Z = X - m.means[y]
    assert rel_err(m.scatter, Z.T @ Z) <= RTOL


def test_class_moments_extreme_offset():
    X, y = make_blobs(20_000, 4, 2, seed=16, offset=-1e8, correlated=False)
    r = ref.mle(X, y)
    for kind in KINDS:
        m = fastgen.class_moments(X, y, kind=kind)
        assert rel_err(m.scatter, _expected_scatter(r, kind)) <= 1e-8, kind


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_groups", [1, 3])
def test_standardised_fourth_moment_kernel(weighted, dtype, n_groups):
    """Σ_{i∈k} w_i ‖D_k⁻¹(x_i − μ_k)‖⁴ per class against numpy, with a constant feature
    (inverse standard deviation 0) left out."""
    from fastgen.kernels import moments as km

    X, y = make_blobs(500, 5, 3, seed=4)
    X = (X * np.array([1e-3, 1.0, 10.0, 1e4, 1.0])).astype(dtype)
    rng = np.random.default_rng(0)
    w = rng.uniform(0.1, 3.0, y.size) if weighted else np.empty(0)
    means = np.stack([X[y == k].astype(np.float64).mean(axis=0) for k in range(3)])
    inv_sd = 1.0 / rng.uniform(0.5, 2.0, (3, 5))
    inv_sd[:, 4] = 0.0
    got = km.standardised_fourth_moment(np.ascontiguousarray(X), y.astype(np.int32), w,
                                        means, inv_sd, n_groups)
    Z = (X.astype(np.float64) - means[y]) * inv_sd[y]
    q = np.sum(Z * Z, axis=1) ** 2 * (w if weighted else 1.0)
    expected = np.array([q[y == k].sum() for k in range(3)])
    assert rel_err(got, expected) <= 1e-12
