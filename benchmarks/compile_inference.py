"""First-call compile time of the dense and CSR inference pass kernels, in a fresh
process with an empty numba cache: run it once per tree and kernel.

Usage::

    python benchmarks/compile_inference.py binary|multinomial|csr

Prints the seconds (wall and CPU) of the first call (compile, or load from NUMBA_CACHE_DIR when that
holds the kernel) and of a second call.  Set NUMBA_CACHE_DIR to a new empty folder for
each run to time compilation.
"""

import sys
import time

import numpy as np
import scipy.sparse as sp


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
    if which == "csr":
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
