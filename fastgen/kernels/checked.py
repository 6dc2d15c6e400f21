"""Checked versions of the main kernels, callable from a user's ``@njit`` code.

The kernels never validate: a class code outside ``[0, K)`` or a table of the wrong
shape reads or writes outside an array and can crash the process.  Each function here
takes the same arguments as the kernel of the same name, checks them, then calls it:

* at compile time (a ``numba.core.errors.TypingError`` naming the argument): array
  dtypes (data float32/float64, codes int32, weights and tables float64 or the
  dtype the kernel needs) and C-contiguity;
* at run time (``ValueError`` naming the argument, the index and the value): every
  class code in ``[0, K)``, weights of length 0 or n and non-negative, consistent
  shapes (n, d, K), ``n_groups`` in ``[1, max(n, 1)]``, a known scoring ``mode``.

The checks cost one extra pass over the codes and weights (O(n)), nothing over X;
use the unchecked kernels once the calling code is known to be right.  Example::

    from fastgen.kernels import checked

    @numba.njit(cache=True)
    def my_fit(X, codes, K):
        return checked.moments_pooled(X, codes, np.empty(0), K, 4)
"""

from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from . import gaussian as gaussian_kernels
from . import moments as moment_kernels
from . import nb as nb_kernels
from ._jit import jit
from .special import MODE_JLL, MODE_PROBA

__all__ = [
    "moments_pooled",
    "moments_diagonal",
    "moments_per_class",
    "pooled_scores",
    "per_class_scores",
    "diagonal_scores",
    "gaussian_nb_scores",
]

_FLOATS = (types.float32, types.float64)


# ------------------------------------------------------------- compile-time checks


def _array_check(kind):
    """A stub ``check(a, name, ndim)`` whose typing rejects a wrong array type.

    ``kind``: "float" (float32 or float64), "f64" (float64) or "i32" (int32).
    """

    def check(a, name, ndim):  # pragma: no cover - replaced by the overload
        pass

    @overload(check, prefer_literal=True)
    def _typed(a, name, ndim):
        label = getattr(name, "literal_value", "argument")
        nd = getattr(ndim, "literal_value", None)
        if not isinstance(a, types.Array):
            raise TypingError(f"fastgen.kernels.checked: {label} must be a numpy "
                              f"array, got {a}")
        want = {"float": "float32 or float64", "f64": "float64", "i32": "int32"}[kind]
        ok = {"float": a.dtype in _FLOATS, "f64": a.dtype == types.float64,
              "i32": a.dtype == types.int32}[kind]
        if not ok:
            raise TypingError(f"fastgen.kernels.checked: {label} must be {want}, "
                              f"got {a.dtype}")
        if nd is not None and a.ndim != nd:
            raise TypingError(f"fastgen.kernels.checked: {label} must be {nd}-D, got "
                              f"{a.ndim}-D")
        if a.layout != "C":
            raise TypingError(f"fastgen.kernels.checked: {label} must be C-contiguous "
                              f"(layout 'C'), got layout {a.layout!r}; pass "
                              f"np.ascontiguousarray({label})")
        return lambda a, name, ndim: None

    return check


_float_array = _array_check("float")
_f64_array = _array_check("f64")
_i32_array = _array_check("i32")


def _same_dtype(a, b, names):  # pragma: no cover - replaced by the overload
    pass


@overload(_same_dtype, prefer_literal=True)
def _same_dtype_typed(a, b, names):
    label = getattr(names, "literal_value", "arrays")
    if a.dtype != b.dtype:
        raise TypingError(f"fastgen.kernels.checked: {label} must have the same dtype, "
                          f"got {a.dtype} and {b.dtype}")
    return lambda a, b, names: None


# ------------------------------------------------------------------ run-time checks


@jit
def _fail_shape(name, got, want):
    raise ValueError("fastgen.kernels.checked: " + name + " has " + str(got)
                     + " where " + str(want) + " is needed")


@jit
def _check_dim(name, got, want):
    if got != want:
        _fail_shape(name, got, want)


@jit
def _check_codes(codes, K, n):
    if codes.shape[0] != n:
        raise ValueError("fastgen.kernels.checked: codes has length "
                         + str(codes.shape[0]) + " but X has " + str(n) + " rows")
    if K < 1:
        raise ValueError("fastgen.kernels.checked: K must be at least 1, got "
                         + str(K))
    for i in range(n):
        c = codes[i]
        if c < 0 or c >= K:
            raise ValueError("fastgen.kernels.checked: codes[" + str(i) + "] = "
                             + str(c) + " is outside [0, K) with K = " + str(K))


@jit
def _check_weights(w, n):
    m = w.shape[0]
    if m != 0 and m != n:
        raise ValueError("fastgen.kernels.checked: w has length " + str(m)
                         + "; it must be 0 (all weights one) or n = " + str(n))
    for i in range(m):
        if not w[i] >= 0.0:  # also catches NaN
            raise ValueError("fastgen.kernels.checked: w[" + str(i)
                             + "] is negative or NaN; weights must be >= 0")


@jit
def _check_fit_args(X, codes, w, K):
    """The checks every moments kernel needs: X (n, d) float, codes (n,) int32 in
    [0, K), w (n,) or (0,) float64 non-negative."""
    _float_array(X, "X", 2)
    _i32_array(codes, "codes", 1)
    _f64_array(w, "w", 1)
    n = X.shape[0]
    _check_codes(codes, K, n)
    _check_weights(w, n)


@jit
def _check_groups(name, g, n):
    top = max(n, 1)
    if g < 1 or g > top:
        raise ValueError("fastgen.kernels.checked: " + name + " = " + str(g)
                         + " is outside [1, " + str(top) + "]")


# ------------------------------------------------------------------------ moments


@jit
def moments_pooled(X, codes, w, K, n_groups):
    """Checked :func:`fastgen.kernels.moments.moments_pooled`.

    ``X`` (n, d) float32/float64, ``codes`` (n,) int32 in [0, K), ``w`` (n,) or (0,)
    float64 non-negative, ``1 <= n_groups <= max(n, 1)``.  Returns ``W`` (K,),
    ``means`` (K, d) and the pooled scatter (d, d), float64.
    """
    _check_fit_args(X, codes, w, K)
    _check_groups("n_groups", n_groups, X.shape[0])
    return moment_kernels.moments_pooled(X, codes, w, K, n_groups)


@jit
def moments_diagonal(X, codes, w, K, n_groups):
    """Checked :func:`fastgen.kernels.moments.moments_diagonal`.

    Arguments as :func:`moments_pooled`; the scatter is per class and feature, (K, d).
    """
    _check_fit_args(X, codes, w, K)
    _check_groups("n_groups", n_groups, X.shape[0])
    return moment_kernels.moments_diagonal(X, codes, w, K, n_groups)


@jit
def moments_per_class(X, codes, w, K, max_groups):
    """Checked :func:`fastgen.kernels.moments.moments_per_class`.

    Arguments as :func:`moments_pooled`, with ``max_groups >= 1`` the most (d, d)
    partial scatters alive at once; the scatter is per class, (K, d, d).
    """
    _check_fit_args(X, codes, w, K)
    if max_groups < 1:
        raise ValueError("fastgen.kernels.checked: max_groups must be at least 1, got "
                         + str(max_groups))
    return moment_kernels.moments_per_class(X, codes, w, K, max_groups)


# ------------------------------------------------------------------------ scoring
# The scoring wrappers are alike in shape and kept separate on purpose: each checks its
# own kernel's arguments in that kernel's order, so the first wrong one is named.


@jit
def _check_out(out, n, K):
    _check_dim("out.shape[0] (rows)", out.shape[0], n)
    _check_dim("out.shape[1] (classes)", out.shape[1], K)


@jit
def pooled_scores(X, center, Wc, bc, Linv, const, out):
    """Checked :func:`fastgen.kernels.gaussian.pooled_scores`.

    ``X`` (n, d); ``center`` (d,); ``Wc`` (d, K); ``bc`` (K,); ``Linv`` (d, d), or
    (0, 0) to leave out the shared quadratic term; ``out`` (n, K).  ``Wc`` and
    ``Linv`` share one float dtype (the BLAS call reads both as it).
    """
    _float_array(X, "X", 2)
    _float_array(center, "center", 1)
    _float_array(Wc, "Wc", 2)
    _float_array(bc, "bc", 1)
    _float_array(Linv, "Linv", 2)
    _float_array(out, "out", 2)
    _same_dtype(Wc, Linv, "Wc and Linv")
    n, d = X.shape
    K = Wc.shape[1]
    _check_dim("center.shape[0] (features)", center.shape[0], d)
    _check_dim("Wc.shape[0] (features)", Wc.shape[0], d)
    _check_dim("bc.shape[0] (classes)", bc.shape[0], K)
    if Linv.shape[0] != 0 or Linv.shape[1] != 0:
        _check_dim("Linv.shape[0] (features)", Linv.shape[0], d)
        _check_dim("Linv.shape[1] (features)", Linv.shape[1], d)
    _check_out(out, n, K)
    return gaussian_kernels.pooled_scores(X, center, Wc, bc, Linv, const, out)


@jit
def per_class_scores(X, means, Linv, bias, out):
    """Checked :func:`fastgen.kernels.gaussian.per_class_scores`.

    ``X`` (n, d); ``means`` (K, d); ``Linv`` (K, d, d) inverse lower Cholesky factors;
    ``bias`` (K,); ``out`` (n, K).
    """
    _float_array(X, "X", 2)
    _float_array(means, "means", 2)
    _float_array(Linv, "Linv", 3)
    _float_array(bias, "bias", 1)
    _float_array(out, "out", 2)
    n, d = X.shape
    K = means.shape[0]
    _check_dim("means.shape[1] (features)", means.shape[1], d)
    _check_dim("Linv.shape[0] (classes)", Linv.shape[0], K)
    _check_dim("Linv.shape[1] (features)", Linv.shape[1], d)
    _check_dim("Linv.shape[2] (features)", Linv.shape[2], d)
    _check_dim("bias.shape[0] (classes)", bias.shape[0], K)
    _check_out(out, n, K)
    return gaussian_kernels.per_class_scores(X, means, Linv, bias, out)


@jit
def diagonal_scores(X, means, inv_var, bias, out):
    """Checked :func:`fastgen.kernels.gaussian.diagonal_scores`.

    ``X`` (n, d); ``means`` (K, d); ``inv_var`` (K, d), or (1, d) shared by the
    classes; ``bias`` (K,); ``out`` (n, K).
    """
    _float_array(X, "X", 2)
    _float_array(means, "means", 2)
    _float_array(inv_var, "inv_var", 2)
    _float_array(bias, "bias", 1)
    _float_array(out, "out", 2)
    n, d = X.shape
    K = means.shape[0]
    _check_dim("means.shape[1] (features)", means.shape[1], d)
    if inv_var.shape[0] != 1:
        _check_dim("inv_var.shape[0] (classes, or 1)", inv_var.shape[0], K)
    _check_dim("inv_var.shape[1] (features)", inv_var.shape[1], d)
    _check_dim("bias.shape[0] (classes)", bias.shape[0], K)
    _check_out(out, n, K)
    return gaussian_kernels.diagonal_scores(X, means, inv_var, bias, out)


@jit
def gaussian_nb_scores(X, means, inv_var, const, mode, out):
    """Checked :func:`fastgen.kernels.nb.gaussian_nb_scores`; where
    :func:`fastgen.kernels.nb.four_class_sweep_is_faster` it runs
    :func:`fastgen.kernels.nb.gaussian_nb_scores_four_classes`, as the params do.

    ``X`` (n, d); ``means``, ``inv_var`` (K, d) float64; ``const`` (K,) float64;
    ``mode`` one of ``MODE_JLL``, ``MODE_LOG_PROBA``, ``MODE_PROBA``
    (:mod:`fastgen.kernels.special`); ``out`` (n, K).
    """
    _float_array(X, "X", 2)
    _f64_array(means, "means", 2)
    _f64_array(inv_var, "inv_var", 2)
    _f64_array(const, "const", 1)
    _float_array(out, "out", 2)
    n, d = X.shape
    K = const.shape[0]
    _check_dim("means.shape[0] (classes)", means.shape[0], K)
    _check_dim("means.shape[1] (features)", means.shape[1], d)
    _check_dim("inv_var.shape[0] (classes)", inv_var.shape[0], K)
    _check_dim("inv_var.shape[1] (features)", inv_var.shape[1], d)
    _check_out(out, n, K)
    if mode < MODE_JLL or mode > MODE_PROBA:
        raise ValueError("fastgen.kernels.checked: mode = " + str(mode) + " is not "
                         "MODE_JLL (0), MODE_LOG_PROBA (1) or MODE_PROBA (2)")
    if nb_kernels.four_class_sweep_is_faster(d, K):
        return nb_kernels.gaussian_nb_scores_four_classes(X, means, inv_var, const, mode, out)
    return nb_kernels.gaussian_nb_scores(X, means, inv_var, const, mode, out)

