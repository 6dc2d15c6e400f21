"""Shared fixtures: small seeded data sets."""

import os
import sys

import numpy as np
import pytest
from hypothesis import settings as _hyp_settings

sys.path.insert(0, os.path.dirname(__file__))

# fastgen's one-line "compiling kernels ... on first use" message depends on the state of
# numba's cache, not on the code under test: keep it out of the stderr of the commands
# the tests run in subprocesses (tests/test_compile.py tests the message itself).
os.environ.setdefault("FASTGEN_QUIET", "1")

from reference import make_blobs  # noqa: E402

# ------------------------------------------------------------------ hypothesis profiles
#
# "default": derandomized (the same examples on every machine and every run, with or
# without CI set), no example database; "thorough": random, many more examples, for
# local runs that hunt for new failures (HYPOTHESIS_PROFILE=thorough python -m pytest).
# A failure either profile finds is kept in its test as an @example.

_hyp_settings.register_profile("default", max_examples=20, deadline=None,
                               derandomize=True, database=None, print_blob=True)
_hyp_settings.register_profile("thorough", max_examples=500, deadline=None,
                               derandomize=False, database=None, print_blob=True)
_hyp_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def blobs3():
    """n=150, d=4, K=3 well-separated correlated classes (float64, int labels)."""
    return make_blobs(150, 4, 3, seed=1)


@pytest.fixture(scope="session")
def blobs2():
    """n=80, d=3, K=2 (binary)."""
    return make_blobs(80, 3, 2, seed=2)


# ------------------------------------------------------------------ the matrix zoo
#
# Every layout a caller may hand fastgen, built from one dense float64 array.  Tests take
# the ``matrix_zoo`` (dense and CSR) or ``dense_zoo`` fixture, build ``zoo(A)`` and compare
# with the same call on ``zoo.canonical(A)``: C-contiguous of the layout's dtype (dense) or
# a canonical int32-index CSR of that dtype (sparse).


class MatrixLayout:
    """One layout of the zoo: ``layout(A)`` builds it from a dense array."""

    def __init__(self, name, dtype, order="C", readonly=False, sparse=False,
                 index_dtype=np.int32, unsorted=False):
        self.name, self.dtype, self.order = name, np.dtype(dtype), order
        self.readonly, self.sparse = readonly, sparse
        self.index_dtype, self.unsorted = np.dtype(index_dtype), unsorted

    def __repr__(self):
        return f"MatrixLayout({self.name})"

    def canonical(self, A):
        """The reference input: the same values, C order (or canonical int32 CSR)."""
        import scipy.sparse as sp

        A = np.ascontiguousarray(A, dtype=self.dtype)
        return sp.csr_matrix(A) if self.sparse else A

    def __call__(self, A):
        import scipy.sparse as sp

        if not self.sparse:
            M = np.array(A, dtype=self.dtype, order=self.order)
            M.flags.writeable = not self.readonly
            return M
        M = sp.csr_matrix(np.asarray(A, dtype=self.dtype))
        M.indices = M.indices.astype(self.index_dtype)
        M.indptr = M.indptr.astype(self.index_dtype)
        if self.unsorted:  # each row's stored values reversed: valid CSR, not sorted
            for i in range(M.shape[0]):
                lo, hi = M.indptr[i], M.indptr[i + 1]
                M.indices[lo:hi] = M.indices[lo:hi][::-1].copy()
                M.data[lo:hi] = M.data[lo:hi][::-1].copy()
            M.has_sorted_indices = False
        return M


DENSE_ZOO = [MatrixLayout(f"{t}-{o}{'-readonly' if ro else ''}", dt, order=o, readonly=ro)
             for t, dt in (("f64", np.float64), ("f32", np.float32))
             for o, ro in (("C", False), ("F", False), ("C", True))]
CSR_ZOO = [MatrixLayout("csr-f64-i32", np.float64, sparse=True),
           MatrixLayout("csr-f32-i32", np.float32, sparse=True),
           MatrixLayout("csr-f64-i64", np.float64, sparse=True, index_dtype=np.int64),
           MatrixLayout("csr-f64-unsorted", np.float64, sparse=True, unsorted=True)]


@pytest.fixture(params=DENSE_ZOO + CSR_ZOO, ids=lambda z: z.name)
def matrix_zoo(request):
    """Every layout: float32/float64 × C/F order × read-only, and CSR with int32/int64
    indices, float32 data and unsorted indices."""
    return request.param


@pytest.fixture(params=DENSE_ZOO, ids=lambda z: z.name)
def dense_zoo(request):
    """The dense layouts of :func:`matrix_zoo` (for functions that take no sparse X)."""
    return request.param


@pytest.fixture
def kernel_path(monkeypatch):
    """Every input goes to the compiled kernels, whatever its size (small inputs take
    the numpy passes otherwise, see fastgen._small): for tests of the kernels
    themselves on small data."""
    from fastgen import _small

    monkeypatch.setattr(_small, "SMALL_VALUES", -1)
