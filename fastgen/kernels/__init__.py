"""Numba kernels: no validation, no Python objects, no optional imports.

Every kernel here can be called from a user's own ``@njit`` function, including one
compiled with ``cache=True``.  Each assumes validated arguments; the public functions in
:mod:`fastgen` do that validation, and :mod:`fastgen.kernels.checked` offers checked
versions of the main entry points for use from ``@njit`` code.

Argument contract
-----------------
* ``X``: (n, d) C-contiguous float32 or float64 (CSR kernels: the canonical
  ``indptr, indices, data`` arrays, sorted indices, no duplicates).
* ``codes``: (n,) int32 class codes in ``[0, K)``, as from
  ``np.unique(y, return_inverse=True)``.  A code outside that range is not checked and
  reads or writes outside the arrays (a crash, or silently wrong numbers).
* ``w``: (n,) float64 non-negative weights, or an empty float64 array for "all ones".
* ``K``: the number of classes (int); classes without rows get weight 0.
* ``n_groups`` (``moments_pooled``, ``moments_diagonal``): the number of groups of
  consecutive rows the work is split into, 1 to n.  Groups run in parallel, each in its
  own buffers, and are merged serially in a fixed order, so the result depends on
  ``n_groups`` (up to rounding) and never on the thread count.  Memory is ``n_groups``
  times K·(2d+1) + d² + 128·d doubles (pooled) or 3·K·d (diagonal);
  ``moments.n_row_groups(n, per_group_doubles, budget_doubles)`` gives the value the
  public functions use.  ``moments_per_class`` takes ``max_groups`` instead: the most
  (d, d) partial scatters alive at once (a memory bound; results do not depend on it
  beyond rounding).
* Scoring kernels write into a caller-provided C-contiguous ``out`` (n, K) and
  return it (``gaussian_nb_scores`` returns a count of non-finite rows).

Main entry points
-----------------
* ``moments.moments_pooled(X, codes, w, K, n_groups)`` returns float64 ``W`` (K,)
  class weights, ``means`` (K, d) and the pooled scatter
  Σ_i w_i (x_i − μ_{y_i})(x_i − μ_{y_i})ᵀ (d, d);
* ``moments.moments_diagonal(X, codes, w, K, n_groups)``: the same with a per-class,
  per-feature scatter (K, d);
* ``moments.moments_per_class(X, codes, w, K, max_groups)``: per-class scatter
  (K, d, d);
* ``moments.merge_pooled`` / ``merge_diagonal`` / ``merge_per_class``: add a second
  set of moments into the first, in place;
* ``gaussian.pooled_scores(X, center, Wc, bc, Linv, const, out)``,
  ``gaussian.per_class_scores(X, means, Linv, bias, out)``,
  ``gaussian.diagonal_scores(X, means, inv_var, bias, out)``: GDA joint
  log-likelihoods;
* ``nb.gaussian_nb_scores(X, means, inv_var, const, mode, out)``: Gaussian naive Bayes
  (``mode`` one of ``special.MODE_JLL``, ``MODE_LOG_PROBA``, ``MODE_PROBA``;
  ``nb.gaussian_nb_scores_four_classes``, the same arguments, is faster for d ≥ 16
  and K ≥ 4);
* ``nb.dense_class_counts``, ``sparse.csr_class_counts``: naive Bayes count tables.

Each kernel's docstring gives its formula and the shapes of its tables.  Kernels that
call BLAS (the pooled and per-class moments for d ≥ ``moments.GEMM_MIN_D``, the pooled
and per-class scores) run it inside their own parallel loop: hold the BLAS library at
one thread around such calls (``threadpoolctl.threadpool_limits(1)``), as the public
functions do, to avoid oversubscription.

Caching.  The kernels are compiled with ``cache=True``; a user's ``cache=True``
function that calls them is saved and reloaded by numba like any other, in a fresh
process too: importing any kernel module configures numba first
(:mod:`fastgen.kernels._setup`, run by :mod:`fastgen.kernels._jit`), which makes numba
keep the parallel kernels' threading start-up hook in the user's cache entry.

Importing this package alone does nothing: it imports nothing of fastgen outside
``fastgen.kernels``, and numba is configured by the first kernel module imported.
"""
