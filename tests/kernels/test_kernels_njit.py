"""The kernels are callable from a user's own ``@numba.njit`` function.

They take validated, C-contiguous arrays: float64 data, int32 codes in [0, K), and the
weights as float64 (an empty array meaning "all ones").
"""

import numpy as np
import pytest
import reference as ref
from numba import njit
from reference import make_blobs, rel_err

import fastgen
from fastgen.kernels import checked
from fastgen.kernels.gaussian import pooled_scores
from fastgen.kernels.moments import moments_pooled


@njit
def _user_moments(X, codes, w, K, n_groups):
    """A user's own reduction: moments, then the pooled MLE covariance."""
    W, means, M2 = moments_pooled(X, codes, w, K, n_groups)
    return W, means, M2 / W.sum()


@njit
def _user_scores(Xt, center, Wc, bc, Linv, const):
    out = np.empty((Xt.shape[0], Wc.shape[1]))
    pooled_scores(Xt, center, Wc, bc, Linv, const, out)
    total = 0.0  # the result is an ordinary array inside the user's function
    for i in range(out.shape[0]):
        total += out[i, 0]
    return out, total


def _tables(W, means, S):
    """Σ⁻¹(μ_k − c), −½(μ_k − c)ᵀΣ⁻¹(μ_k − c) + log p_k, L⁻¹ and the constant (c = 0)."""
    d = S.shape[0]
    L = np.linalg.cholesky(S)
    Linv = np.linalg.inv(L)
    Wc = np.ascontiguousarray(np.linalg.solve(S, means.T))
    bc = -0.5 * np.einsum("dk,kd->k", Wc, means) + np.log(W / W.sum())
    const = -0.5 * (2 * np.sum(np.log(np.diag(L))) + d * np.log(2 * np.pi))
    return np.zeros(d), Wc, bc, np.ascontiguousarray(Linv), const


def test_user_njit_function_calls_kernels():
    X, y = make_blobs(20_000, 4, 3, seed=1)  # three row groups
    codes = y.astype(np.int32)
    Xt = X[:100].copy()
    for w, n_groups in ((np.empty(0), 3), (np.linspace(0.5, 2.0, len(y)), 1)):
        W, means, S = _user_moments(X, codes, w, 3, n_groups)
        r = ref.mle(X, y, None if w.size == 0 else w)
        assert rel_err(W, r["counts"]) <= 1e-13
        assert rel_err(means, r["means"]) <= 1e-10
        assert rel_err(S, r["pooled"]) <= 1e-10
        jll, total = _user_scores(Xt, *_tables(W, means, S))
        expected = ref.joint_log_likelihood(Xt, r["priors"], r["means"], r["pooled"])
        assert rel_err(jll, expected) <= 1e-10
        assert total == pytest.approx(expected[:, 0].sum(), rel=1e-10)
    # the public API agrees with the kernels it wraps
    p = fastgen.fit_gda(X, y)
    W, means, S = _user_moments(X, codes, np.empty(0), 3, 3)
    assert rel_err(fastgen.joint_log_likelihood(p, Xt),
                   _user_scores(Xt, *_tables(W, means, S))[0]) <= 1e-10


def test_group_count_does_not_change_the_moments_beyond_rounding():
    X, y = make_blobs(5000, 3, 2, seed=2)
    codes = y.astype(np.int32)
    ref_m = moments_pooled(X, codes, np.empty(0), 2, 1)
    for G in (2, 7, 64):
        m = moments_pooled(X, codes, np.empty(0), 2, G)
        for a, b in zip(m, ref_m):
            assert rel_err(a, b) <= 1e-12


# ----------------------------------------------------- a user's cache=True function
#
# The user's module lives in a temporary directory, so numba caches it in that
# directory's __pycache__; fastgen's kernels come from fastgen's own cache, as they do
# for any user once fastgen has been used.  The first process compiles and saves the
# user's function, the next ones load it.  numba 0.68 saved such a function without the
# hook that starts its threading layer, and the next process segfaulted in the
# parallel loop of moments_pooled (d=4: hand loops, d=40: BLAS SYRK).

_USER_MODULE = '''
import numba
import numpy as np
from fastgen.kernels.moments import moments_pooled


@numba.njit(cache=True)
def user_fit(X, codes, K):
    W, means, M2 = moments_pooled(X, codes, np.empty(0), K, 4)
    return W, means, M2
'''

_USER_RUN = '''
import json, sys
import numpy as np
import fastgen
import fastgen.kernels
runtime = sys.modules.get("fastgen.kernels._cache")
original = getattr(runtime, "_NUMBA_REBUILD", None)
if sys.argv[2] == "numba-rebuild" and original is not None:
    from numba.core.compiler import CompileResult  # numba's loader, as numba ships it
    CompileResult._rebuild = classmethod(original)
import user_kernels
d = int(sys.argv[1])
rng = np.random.default_rng(d)
X = rng.normal(size=(3000, d))
codes = rng.integers(0, 3, 3000).astype(np.int32)
W, means, M2 = user_kernels.user_fit(X, codes, 3)
stats = user_kernels.user_fit.stats
json.dump({"W": W.tolist(), "means": means.tolist(), "M2": M2.tolist(),
           "hits": sum(stats.cache_hits.values()),
           "misses": sum(stats.cache_misses.values())}, sys.stdout)
'''


def _user_data(d):
    rng = np.random.default_rng(d)
    X = rng.normal(size=(3000, d))
    return X, rng.integers(0, 3, 3000).astype(np.int32)


def _run_user(tmp, d, mode="fastgen"):
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp), root, env.get("PYTHONPATH", "")])
    res = subprocess.run([sys.executable, "-W", "error", "-c", _USER_RUN, str(d), mode],
                         env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, (res.returncode, res.stderr[-3000:])
    return json.loads(res.stdout)


def _check_user_result(out, d):
    X, codes = _user_data(d)
    m = fastgen.class_moments(X, codes)  # the public API, validated
    assert rel_err(np.array(out["W"]), m.counts) <= 1e-13
    assert rel_err(np.array(out["means"]), m.means) <= 1e-12
    assert rel_err(np.array(out["M2"]), m.scatter) <= 1e-12


def _user_dir(tmp):
    (tmp / "user_kernels.py").write_text(_USER_MODULE)
    # fastgen's own kernel for these argument types is in fastgen's cache, as after
    # any earlier use of fastgen: the user's compile then links the cached kernel.
    X, codes = _user_data(4)
    moments_pooled(X, codes, np.empty(0), 3, 4)
    return tmp


@pytest.fixture(scope="module")
def cached_user_function(tmp_path_factory):
    tmp = _user_dir(tmp_path_factory.mktemp("user_njit"))
    out = _run_user(tmp, 4)  # compiles and saves
    assert out["misses"] == 1 and out["hits"] == 0
    _check_user_result(out, 4)
    return tmp


@pytest.mark.parametrize("d", [4, 40])
def test_cached_user_function_runs_in_a_fresh_process(cached_user_function, d):
    out = _run_user(cached_user_function, d)  # loads from the cache
    assert out["hits"] == 1 and out["misses"] == 0
    _check_user_result(out, d)


def test_cache_entry_saved_without_the_threading_hook_still_loads(tmp_path):
    # An entry written by numba's own loader (as by an older fastgen) lacks the hook;
    # loading it must still start the threading layer.
    tmp = _user_dir(tmp_path)
    out = _run_user(tmp, 40, mode="numba-rebuild")
    assert out["misses"] == 1
    out = _run_user(tmp, 40)
    assert out["hits"] == 1 and out["misses"] == 0
    _check_user_result(out, 40)


# ------------------------------------------------------------------ checked kernels


@njit
def _user_checked_fit(X, codes, w, K, n_groups):
    return checked.moments_pooled(X, codes, w, K, n_groups)


def test_checked_kernels_agree_with_the_kernels_on_valid_input():
    X, y = make_blobs(2000, 4, 3, seed=3)
    codes = y.astype(np.int32)
    w = np.linspace(0.5, 2.0, len(y))
    for a, b in zip(_user_checked_fit(X, codes, w, 3, 2),
                    moments_pooled(X, codes, w, 3, 2)):
        assert np.array_equal(a, b)
    W, means, M2 = moments_pooled(X, codes, np.empty(0), 3, 2)
    tables = _tables(W, means, M2 / W.sum())
    Xt = X[:50].copy()
    out = np.empty((50, 3))
    checked.pooled_scores(Xt, *tables, out)
    assert np.array_equal(out, pooled_scores(Xt, *tables, np.empty((50, 3))))


@pytest.mark.parametrize("bad, message", [
    (3, r"codes\[17\] = 3 is outside \[0, K\) with K = 3"),
    (-1, r"codes\[17\] = -1 is outside \[0, K\) with K = 3"),
])
def test_checked_kernel_rejects_a_bad_code_inside_user_njit(bad, message):
    X, y = make_blobs(300, 4, 3, seed=4)
    codes = y.astype(np.int32)
    codes[17] = bad
    before = codes.copy()
    with pytest.raises(ValueError, match=message):
        _user_checked_fit(X, codes, np.empty(0), 3, 2)
    assert np.array_equal(codes, before)


def test_checked_kernels_reject_inconsistent_arguments():
    # the checked functions are @njit themselves: called here from Python
    X, y = make_blobs(300, 4, 3, seed=5)
    codes = y.astype(np.int32)
    e = np.empty(0)
    with pytest.raises(ValueError, match="codes has length 299 but X has 300 rows"):
        _user_checked_fit(X, codes[:-1].copy(), e, 3, 2)
    with pytest.raises(ValueError, match=r"w has length 5; it must be 0"):
        _user_checked_fit(X, codes, np.ones(5), 3, 2)
    w = np.ones(300)
    w[9] = -1.0
    with pytest.raises(ValueError, match=r"w\[9\] is negative or NaN"):
        _user_checked_fit(X, codes, w, 3, 2)
    with pytest.raises(ValueError, match=r"n_groups = 0 is outside \[1, 300\]"):
        _user_checked_fit(X, codes, e, 3, 0)
    W, means, M2 = moments_pooled(X, codes, e, 3, 2)
    center, Wc, bc, Linv, const = _tables(W, means, M2 / W.sum())
    Xt = X[:20].copy()
    with pytest.raises(ValueError, match=r"out.shape\[1\] \(classes\) has 2 where 3"):
        checked.pooled_scores(Xt, center, Wc, bc, Linv, const, np.empty((20, 2)))
    with pytest.raises(ValueError, match=r"Linv.shape\[0\] \(features\) has 3 where 4"):
        checked.pooled_scores(Xt, center, Wc, bc, Linv[:3, :3].copy(), const,
                             np.empty((20, 3)))
    from numba.core.errors import TypingError

    with pytest.raises(TypingError, match="X must be C-contiguous"):
        _user_checked_fit(np.asfortranarray(X), codes, e, 3, 2)
    with pytest.raises(TypingError, match="codes must be int32"):
        _user_checked_fit(X, codes.astype(np.int64), e, 3, 2)


def test_every_checked_kernel_matches_its_kernel_and_checks_shapes():
    from fastgen.kernels import gaussian, moments, nb

    X, y = make_blobs(400, 3, 2, seed=6)
    codes = y.astype(np.int32)
    e = np.empty(0)
    for name in ("moments_diagonal", "moments_per_class"):
        got = getattr(checked, name)(X, codes, e, 2, 2)
        for a, b in zip(got, getattr(moments, name)(X, codes, e, 2, 2)):
            assert np.array_equal(a, b)
        bad = codes.copy()
        bad[0] = 2
        with pytest.raises(ValueError, match=r"codes\[0\] = 2 is outside"):
            getattr(checked, name)(X, bad, e, 2, 2)
    W, means, M2 = moments.moments_per_class(X, codes, e, 2, 2)
    cov = M2 / W[:, None, None]
    Linv = np.ascontiguousarray(np.linalg.inv(np.linalg.cholesky(cov)))
    inv_var = np.ascontiguousarray(1.0 / np.diagonal(cov, axis1=1, axis2=2))
    bias = np.log(W / W.sum())
    out, ref_out = np.empty((400, 2)), np.empty((400, 2))
    cases = [
        ("per_class_scores", (X, means, Linv, bias), (X, means, Linv[:, :2, :2].copy(),
                                                      bias), r"Linv.shape\[1\]"),
        ("diagonal_scores", (X, means, inv_var, bias), (X, means, inv_var, bias[:1].copy()),
         r"bias.shape\[0\] \(classes\) has 1 where 2"),
    ]
    for name, args, bad_args, message in cases:
        getattr(checked, name)(*args, out)
        getattr(gaussian, name)(*args, ref_out)
        assert np.array_equal(out, ref_out)
        with pytest.raises(ValueError, match=message):
            getattr(checked, name)(*bad_args, out)
    const = np.log(W / W.sum()) - 0.5 * np.log(2 * np.pi / inv_var).sum(axis=1)
    assert checked.gaussian_nb_scores(X, means, inv_var, const, 0, out) == \
        nb.gaussian_nb_scores(X, means, inv_var, const, 0, ref_out)
    assert np.array_equal(out, ref_out)
    with pytest.raises(ValueError, match="mode = 7 is not"):
        checked.gaussian_nb_scores(X, means, inv_var, const, 7, out)
    with pytest.raises(ValueError, match=r"out.shape\[0\] \(rows\) has 399 where 400"):
        checked.gaussian_nb_scores(X, means, inv_var, const, 0, out[:-1])
