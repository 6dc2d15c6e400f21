"""First-call compile time of a kernel, in a fresh process with an empty numba cache:
run it once per tree and kernel, alternating the trees.

Usage::

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/first_call.py KERNEL

KERNEL: ``binary``, ``multinomial``, ``csr`` (the inference pass kernels), or
``counts``, ``multinomial-fit``, ``bernoulli-fit``, ``all-counts`` (the CSR count
kernel: counts alone, the multinomial and Bernoulli fits with their finish steps, and
all three in one process, on data large enough for the parallel kernel).

Prints the seconds (wall and CPU) of the first call (compile, or load from NUMBA_CACHE_DIR when that
holds the kernel) and of a second call.  Set NUMBA_CACHE_DIR to a new empty folder for
each run to time compilation.
"""

import sys
import time

import numpy as np
import scipy.sparse as sp


def _count_call(which):
    import fastgen

    rng = np.random.default_rng(0)
    M = sp.random(20_000, 2_000, density=0.01, random_state=1, format="csr")
    M.data = np.ceil(M.data * 3)
    y = rng.integers(0, 5, M.shape[0])
    if which == "counts":
        return lambda: fastgen.nb_counts(M, y, "multinomial")
    if which == "multinomial-fit":
        return lambda: fastgen.fit_multinomial_nb(M, y)
    if which == "bernoulli-fit":
        return lambda: fastgen.fit_bernoulli_nb(M, y)
    return lambda: (fastgen.fit_multinomial_nb(M, y), fastgen.fit_bernoulli_nb(M, y),
                    fastgen.nb_counts(M, y, "multinomial"))


def main(which):
    from fastgen.kernels import inference as ki

    rng = np.random.default_rng(0)
    n, d = 400, 5
    X = rng.normal(size=(n, d))
    w = np.empty(0)
    bounds = np.array([0, 200, 400], dtype=np.int64)
    m = 1 if which == "binary" else 2
    y = (rng.integers(0, m + 1, n)).astype(np.int32)
    B = rng.normal(size=(m, d + 1)) * 0.1
    R = np.zeros((n, m))
    if which in ("counts", "multinomial-fit", "bernoulli-fit", "all-counts"):
        call = _count_call(which)
    elif which == "csr":
        M = sp.csr_matrix(X)
        call = lambda: ki.inference_pass_csr(M.indptr, M.indices, M.data, d, y, w, B,  # noqa: E731
                                             True, bounds, True, R, True)
    else:
        kernel = ki.inference_pass_binary if m == 1 else ki.inference_pass_multinomial
        call = lambda: kernel(X, y, w, B, True, bounds, 64, True, R, True)  # noqa: E731
    t, c = time.perf_counter(), time.process_time()
    call()
    first, first_cpu = time.perf_counter() - t, time.process_time() - c
    t = time.perf_counter()
    call()
    print(f"{which}: first call {first:.2f} s ({first_cpu:.2f} s CPU), second "
          f"{time.perf_counter() - t:.4f} s")


if __name__ == "__main__":
    main(sys.argv[1])
