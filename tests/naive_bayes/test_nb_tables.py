"""The CSR count kernel that writes each class row of the count table from one work
item and takes the naive Bayes logarithms of the row in the same pass
(``kernels.sparse.csr_class_tables``), and the helpers it shares with the standalone
log pass: the same bits for any split of the work and any thread count, the same bits
as the models built from counts, and the branch-free argmax of CSR ``predict``."""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import fastgen
import fastgen.naive_bayes.discrete as nb_discrete
from fastgen.kernels.nb import class_log_totals, log_counts, row_total
from fastgen.kernels.sparse import (
    count_plan,
    csr_class_tables,
    log_pair,
    no_logs,
    normalised_logs,
    values_count_as_one,
)
from fastgen.kernels.sparse_scores import _top_two
from fastgen.naive_bayes import bernoulli_nb_from_counts, multinomial_nb_from_counts

#: the finish steps of the count kernel these tests run
LOGS_NONE, LOGS_MULTINOMIAL, LOGS_BERNOULLI = "none", "multinomial", "bernoulli"

SETTINGS = settings()  # the profile's (tests/conftest.py): derandomized by default
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@st.composite
def count_problems(draw):
    """Small CSR count data: int32 or int64 indices, integer or fractional values (a
    zero stored now and then), optional weights, K classes of which some may be
    empty."""
    n = draw(st.integers(1, 40))
    d = draw(st.integers(1, 30))
    K = draw(st.integers(1, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=draw(st.sampled_from([0.05, 0.3, 1.0])), format="csr",
                  random_state=rng)
    values = draw(st.sampled_from(["ones", "counts", "fractions"]))
    if values == "ones":  # binary: every value counts as one (the index-only pass)
        X.data[:] = 1.0
    elif values == "counts":
        X.data = np.floor(X.data * 6.0)  # integer counts, some stored zeros
    else:
        X.data = X.data * 3.0 + 0.25  # all above the threshold 0.5 only now and then
    if draw(st.booleans()):
        X.indices = X.indices.astype(np.int64)
        X.indptr = X.indptr.astype(np.int64)
    codes = rng.integers(0, K, n).astype(np.int32)
    w = rng.uniform(0.1, 2.0, n) if draw(st.booleans()) else np.empty(0)
    return X, codes, w, K


def _tables(X, codes, w, K, binarize, threshold, split, kind, alpha=1.0):
    d = X.shape[1]
    wt = np.ones(codes.shape[0]) if w.shape[0] == 0 else w
    N = np.bincount(codes, weights=wt, minlength=K)
    table = np.log(np.arange(min(4096, K * d // 8), dtype=np.float64) + alpha)
    out = np.empty((K, d))
    la = np.empty((K, d) if kind != LOGS_NONE else (0, 0))
    lb = np.empty((K, d) if kind == LOGS_BERNOULLI else (0, 0))
    finish = no_logs()
    if kind == LOGS_MULTINOMIAL:
        finish = normalised_logs(alpha, table, la)
    elif kind == LOGS_BERNOULLI:
        finish = log_pair(alpha, np.log(N + 2 * alpha), N, table, la, lb)
    first = csr_class_tables(X.indptr.astype(np.int64), X.indices, X.data, codes, w,
                             binarize, threshold, split, finish, out)
    return out, la, lb, first, N, table


def _numpy_counts(X, codes, w, K, binarize, threshold):
    A = X.toarray()
    if binarize:
        A = (A > threshold).astype(np.float64)
    wt = np.ones(A.shape[0]) if w.shape[0] == 0 else w
    out = np.zeros((K, A.shape[1]))
    np.add.at(out, codes, A * wt[:, None])
    return out


@SETTINGS
@given(problem=count_problems(), binarize=st.booleans(),
       kind=st.sampled_from([LOGS_NONE, LOGS_MULTINOMIAL, LOGS_BERNOULLI]),
       col_blocks=st.integers(1, 40), ahead=st.integers(1, 20), scan=st.booleans())
def test_csr_tables_do_not_depend_on_the_split(problem, binarize, kind, col_blocks, ahead,
                                               scan):
    """Counts and log tables are the same bits for every cut of the class rows into
    column ranges, every prefetch distance, and with or without the index-only pass
    for values that all count as one; and they match numpy: the counts
    Σ w_i v(x_ij), log θ = log(N_kj + α) − log(Σ_j N_kj + α·d) and the Bernoulli pair
    log(F + α) − log(N + 2α), log(N − F + α) − log(N + 2α)."""
    X, codes, w, K = problem
    binarize = binarize or kind == LOGS_BERNOULLI  # F_kj <= N_k: binary features
    thr = 0.5 if binarize else 0.0
    one = _tables(X, codes, w, K, binarize, thr, (1, 2, False), kind)
    got = _tables(X, codes, w, K, binarize, thr, (col_blocks, ahead, scan), kind)
    for a, b in zip(one[:3], got[:3]):
        assert a.shape == b.shape and a.tobytes() == b.tobytes()
    assert one[3] == got[3] == -1
    counts, la, lb, _, N, _ = got
    np.testing.assert_allclose(counts, _numpy_counts(X, codes, w, K, binarize, thr),
                               rtol=1e-13, atol=1e-13)
    with np.errstate(divide="ignore"):
        if kind == LOGS_MULTINOMIAL:
            want = np.log(counts + 1.0) - np.log(counts.sum(axis=1) + X.shape[1])[:, None]
            np.testing.assert_allclose(la, want, rtol=1e-13, atol=1e-13)
        if kind == LOGS_BERNOULLI:
            den = np.log(N + 2.0)[:, None]
            np.testing.assert_allclose(la, np.log(counts + 1.0) - den, rtol=1e-13,
                                       atol=1e-13)
            np.testing.assert_allclose(lb, np.log((N[:, None] - counts) + 1.0) - den,
                                       rtol=1e-13, atol=1e-13)


@SETTINGS
@given(problem=count_problems(), kind=st.sampled_from([LOGS_MULTINOMIAL, LOGS_BERNOULLI]),
       col_blocks=st.integers(1, 5))
def test_fused_logs_equal_the_separate_log_pass(problem, kind, col_blocks):
    """The logs taken in the counting pass are bit for bit those of the standalone
    kernels (``log_counts`` with ``class_log_totals``) on the same counts."""
    X, codes, w, K = problem
    binarize = kind == LOGS_BERNOULLI
    counts, la, lb, _, N, table = _tables(X, codes, w, K, binarize, 0.5 * binarize,
                                          (col_blocks, 3, True), kind)
    out = np.empty_like(counts)
    zeros = np.zeros(K)
    if kind == LOGS_MULTINOMIAL:
        shift = class_log_totals(counts, 1.0 * X.shape[1])
        assert log_counts(counts, zeros, 1.0, 1.0, shift, table, out).tobytes() == \
            la.tobytes()
    else:
        shift = np.log(N + 2.0)
        assert log_counts(counts, zeros, 1.0, 1.0, shift, table, out).tobytes() == \
            la.tobytes()
        assert log_counts(counts, N, -1.0, 1.0, shift, table, out).tobytes() == \
            lb.tobytes()


@SETTINGS
@given(problem=count_problems(), col_blocks=st.integers(1, 5), binarize=st.booleans())
def test_csr_tables_flag_the_first_bad_value(problem, col_blocks, binarize):
    """A NaN, an infinity or (without binarize) a negative value is reported by its
    position in ``data``: each class reports its first in row order, the lowest of
    those wins (the lowest overall), whatever the split, also among values that
    otherwise all count as one."""
    X, codes, w, K = problem
    if X.nnz == 0:
        return
    X = X.copy()
    rng = np.random.default_rng(X.nnz)
    pos = np.sort(rng.choice(X.nnz, size=min(3, X.nnz), replace=False))
    bad = [np.nan, np.inf, np.nan] if binarize else [np.nan, -1.0, np.inf]
    X.data[pos] = bad[:pos.shape[0]]
    got = {_tables(X, codes, w, K, binarize, 0.0, (cb, 2, scan), LOGS_NONE)[3]
           for cb in (1, col_blocks) for scan in (False, True)}
    assert got == {pos[0]}


def _model_tables(p):
    names = ("feature_log_prob", "neg_feature_log_prob", "feature_count", "class_count")
    return [getattr(p, f).tobytes() for f in names if hasattr(p, f)]


@pytest.mark.parametrize("model", ["multinomial", "bernoulli"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_classes", [1, 3, 20])
def test_csr_fit_equals_the_model_built_from_its_counts(model, weighted, n_classes):
    """A CSR fit takes its log tables in the counting pass; building the model from the
    fit's counts (the streaming path, separate log pass) gives the same bits."""
    rng = np.random.default_rng(n_classes)
    X = sp.random(300, 500, density=0.03, format="csr", random_state=rng,
                  data_rvs=lambda m: rng.integers(1, 4, m).astype(float))
    y = rng.integers(0, n_classes, 300)
    w = rng.uniform(0.2, 3.0, 300) if weighted else None
    if model == "multinomial":
        p = fastgen.fit_multinomial_nb(X, y, alpha=0.5, sample_weight=w)
        q = multinomial_nb_from_counts(p.classes, p.class_count, p.feature_count,
                                       alpha=0.5)
    else:
        p = fastgen.fit_bernoulli_nb(X, y, alpha=0.5, binarize=1.5, sample_weight=w)
        q = bernoulli_nb_from_counts(p.classes, p.class_count, p.feature_count, alpha=0.5,
                                     binarize=1.5)
    assert _model_tables(p) == _model_tables(q)
    dense = getattr(fastgen, f"fit_{model}_nb")(X.toarray(), y, alpha=0.5,
                                               sample_weight=w,
                                               **({"binarize": 1.5} if model ==
                                                  "bernoulli" else {}))
    np.testing.assert_allclose(p.feature_log_prob, dense.feature_log_prob, rtol=1e-13)


@pytest.mark.usefixtures("kernel_path")
def test_csr_fits_take_no_separate_log_pass(monkeypatch):
    """The multinomial and Bernoulli CSR fits compute their (K, d) logarithms inside the
    counting kernel, while each class row is in cache: the standalone log kernels are
    not called (dense fits and models built from counts still use them)."""
    rng = np.random.default_rng(3)
    X = sp.random(200, 300, density=0.05, format="csr", random_state=rng)
    X.data[:] = 1.0
    y = rng.integers(0, 4, 200)
    want = [fastgen.fit_multinomial_nb(X, y), fastgen.fit_bernoulli_nb(X, y)]

    def fail(*args, **kwargs):
        raise AssertionError("a separate log pass ran")

    monkeypatch.setattr(nb_discrete.nb_kernels, "log_counts", fail)
    monkeypatch.setattr(nb_discrete.nb_kernels, "class_log_totals", fail)
    got = [fastgen.fit_multinomial_nb(X, y), fastgen.fit_bernoulli_nb(X, y)]
    for a, b in zip(want, got):
        assert _model_tables(a) == _model_tables(b)
    with pytest.raises(AssertionError, match="separate log pass"):
        fastgen.fit_multinomial_nb(X.toarray(), y)


@SETTINGS
@given(st.lists(st.floats(-1e6, 1e6), min_size=0, max_size=70))
def test_row_total_adds_in_its_stated_order(values):
    """``row_total``: eight running sums over j mod 8, combined pairwise, then the tail
    in order — transcribed in Python, the same bits."""
    a = np.array(values, dtype=np.float64)
    m = a.shape[0] - a.shape[0] % 8
    lanes = [0.0] * 8
    for j in range(m):
        lanes[j % 8] += a[j]
    s = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + \
        ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
    for j in range(m, a.shape[0]):
        s += a[j]
    assert row_total(a) == s


@numba.njit
def _top_two_of(a):
    return _top_two(a)


@SETTINGS
@given(st.lists(st.sampled_from([-np.inf, -3.0, -1.0, -1.0 + 1e-12, 0.0, 2.5, 2.5]),
                min_size=1, max_size=25))
def test_top_two_is_argmax_and_runner_up(values):
    """The argmax kernels' branch-free scan: the first index of the largest value (as
    ``np.argmax``), that value, and the largest of the other entries (-inf for one
    entry; the largest again on a tie)."""
    a = np.array(values)
    best, top, second = _top_two_of(a)
    assert best == np.argmax(a) and top == a.max()
    rest = np.delete(a, best)
    assert second == (rest.max() if rest.size else -np.inf)


def test_count_plan_follows_the_row_length():
    """About 160 stored values ahead, in whole rows: far ahead for titles, two rows for
    long documents; the scan for values that all count as one from 16 values a row."""
    assert count_plan(1_800_000, 200_000, 1) == (1, 16, False)
    assert count_plan(4_800_000, 200_000, 3) == (3, 7, True)
    assert count_plan(20_000_000, 200_000, 1) == (1, 2, True)
    assert count_plan(0, 0, 1) == (1, 16, False)


@SETTINGS
@given(n=st.integers(0, 3000), where=st.floats(0.0, 1.0), binarize=st.booleans(),
       bad=st.sampled_from([2.0, 0.0, 0.5, -1.0, np.nan, np.inf]))
def test_values_count_as_one(n, where, binarize, bad):
    """Every value 1 (or with binarize above 0.5 and finite), up to ``nnz``; one value
    anywhere that does not count makes it False, one past ``nnz`` does not matter."""
    data = np.ones(n + 1)
    if binarize:
        data[:n] = np.linspace(0.75, 9.0, n)
    assert values_count_as_one(data, n, binarize, 0.5)
    data[n] = bad
    assert values_count_as_one(data, n, binarize, 0.5)
    if n:
        data[min(n - 1, int(where * n))] = bad
        counts = (bad > 0.5 and bad < np.inf) if binarize else bad == 1.0
        assert values_count_as_one(data, n, binarize, 0.5) == counts


_SCRIPT = r"""
import hashlib, numpy as np, scipy.sparse as sp, fastgen
rng = np.random.default_rng(11)
X = sp.random(3000, 700, density=0.02, format="csr", random_state=rng,
              data_rvs=lambda m: rng.integers(1, 5, m).astype(float))
h = hashlib.sha256()
for K in (1, 2, 3):
    y = rng.integers(0, K, 3000)
    for p in (fastgen.fit_multinomial_nb(X, y), fastgen.fit_bernoulli_nb(X, y),
              fastgen.fit_complement_nb(X, y)):
        h.update(p.feature_log_prob.tobytes() + p.feature_count.tobytes())
print(h.hexdigest())
"""


def test_fits_with_fewer_classes_than_threads_do_not_depend_on_the_thread_count():
    """With fewer classes than threads the class rows are cut into column ranges, as
    many as the thread count asks for; the tables are the same bits at 1, 2 and 3
    threads."""
    digests = set()
    for threads in (1, 2, 3):
        env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), PYTHONPATH=ROOT)
        res = subprocess.run([sys.executable, "-W", "error", "-c", _SCRIPT], env=env,
                             cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-3000:]
        digests.add(res.stdout.strip())
    assert len(digests) == 1
