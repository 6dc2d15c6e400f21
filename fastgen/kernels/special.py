"""Log-space helpers shared by every scoring path.

``exp_nonpos`` is an exponential for arguments ≤ 0 (the only ones a softmax with the
row maximum subtracted needs) written without calls or branches, so LLVM vectorises
the loops that use it.  numba's ``np.exp`` calls the scalar libm routine, which made the
exponentials, not the likelihoods, the cost of predict_proba (1e7 of them per n=1e6,
K=10 call).  Accuracy: Cody-Waite reduction x = n·ln2 + r, |r| ≤ ln2/2, and the degree-13
Taylor polynomial of exp(r) (truncation error < 5e-18 relative), so results are within
about two ulps of libm's.
"""

import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.extending import intrinsic, overload

from ._jit import REASSOC, jit, pjit
from .modes import MODE_JLL, MODE_LOG_PROBA, MODE_PROBA

__all__ = ["logsumexp_rows", "log_normalize_rows", "softmax_rows", "argmax_rows",
           "exp_nonpos", "exp_normal", "EXP_NORMAL_MIN", "softmax_row", "sum_slots",
           "finish_row", "finish_rows", "finish_all_rows", "ROW_BLOCK", "MODE_JLL",
           "MODE_LOG_PROBA", "MODE_PROBA"]

#: Rows per parallel work item in every dense scoring kernel (GDA, naive Bayes, the
#: row helpers here).  Fixed, so that results never depend on the thread count.
ROW_BLOCK = 512

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10


def _scaler(offset):
    """An intrinsic ``(p, n) -> p·2ⁿ⁺ᵒᶠᶠˢᵉᵗ`` for a float64 n holding an integer, made
    by adding n + offset to p's exponent field.

    Adding 1.5·2^52 + offset to n puts n + offset (as an integer) in the low bits of the
    sum's significand, so the shift that moves it into the exponent field needs no
    float-to-integer conversion, which AVX2 has no vector instruction for (a scalar
    conversion per lane kept the loops of exponentials from vectorising well).  Exact
    when the result is a normal number, meaningless otherwise: the callers keep
    n + offset in range.
    """
    magic = 6755399441055744.0 + offset

    @intrinsic
    def scale(typingctx, p, n):
        sig = types.float64(types.float64, types.float64)

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            t = builder.fadd(args[1], ir.Constant(ir.DoubleType(), magic))
            # (0x4338… + n + offset) << 52: the constant's bits shift out
            step = builder.shl(builder.bitcast(t, i64), ir.Constant(i64, 52))
            bits = builder.add(builder.bitcast(args[0], i64), step)
            return builder.bitcast(bits, ir.DoubleType())

        return sig, codegen

    return scale


_scale_pow2 = _scaler(0)
_scale_pow2_up64 = _scaler(64)
_TWO_M64 = 2.0 ** -64


#: From this argument up, exp(x) is a normal float64 (the reduction's n ≥ −1021), and
#: :func:`exp_normal` equals :func:`exp_nonpos` bit for bit.
EXP_NORMAL_MIN = -708.0


@jit(inline="always")
def exp_normal(x):
    """:func:`exp_nonpos` for ``EXP_NORMAL_MIN ≤ x ≤ 0``, bit for bit, with fewer
    operations: the polynomial is scaled by 2ⁿ in one step, with no clamp and no
    underflow case.  Any other argument (below the range, −inf, NaN) gives a
    meaningless value: block loops test the range of the whole block first (each row's
    minimum against its maximum, see :func:`finish_rows`) and take :func:`exp_nonpos`
    otherwise.  Cheaper per exponential than :func:`exp_nonpos`
    (benchmarks/NOTES.md)."""
    p, n = _exp_reduced(x)
    return _scale_pow2(p, n)


@jit(inline="always")
def exp_nonpos(x):
    """exp(x) for x ≤ 0 (float64), vectorisable; exp(−inf) = 0, exp(NaN) = NaN.

    Arguments below −745.2 (where exp underflows to 0 in float64) give 0.  Positive
    arguments are not supported (the caller subtracts the row maximum first).

    The scaling by 2ⁿ (n ≥ −1076 after the clamp) goes in two exact steps: p·2ⁿ⁺⁶⁴ is
    a normal number, built in the exponent field as :func:`exp_normal` does, and the
    multiplication by 2⁻⁶⁴ is exact for a normal result and rounds a subnormal one once,
    as libm does (one multiplication fewer than two separately built powers of two,
    with the same bits).
    """
    xc = max(x, -746.0)  # also maps -inf to a finite value; exp(-746) rounds to 0
    p, n = _exp_reduced(xc)
    y = _scale_pow2_up64(p, n) * _TWO_M64
    return y if x == x else x  # a NaN's payload could have reached the exponent field


@jit(inline="always")
def _exp_reduced(x):
    """(p, n) with exp(x) = p·2ⁿ, n integral, p = exp(r) for the reduced |r| ≤ ln2/2
    (finite x ≤ 0; the shared core of :func:`exp_nonpos` and :func:`exp_normal`)."""
    n = np.floor(x * _LOG2E + 0.5)
    r = (x - n * _LN2_HI) - n * _LN2_LO
    # exp(r) = 1 + r(1 + r(½ + r·q(r))), q the degree-10 tail of the Taylor series by
    # Estrin's scheme (a dependency chain of 4 multiply-adds instead of Horner's 11; the
    # last three Horner steps keep the rounding of the leading terms): faster than
    # Horner throughout at the same accuracy (relative error against numpy's exp at
    # most 1.0ε; benchmarks/NOTES.md)
    r2 = r * r
    r4 = r2 * r2
    s0 = (1.0 / 6.0 + r * (1.0 / 24.0)) + (1.0 / 120.0 + r * (1.0 / 720.0)) * r2
    s1 = ((1.0 / 5040.0 + r * (1.0 / 40320.0))
          + (1.0 / 362880.0 + r * (1.0 / 3628800.0)) * r2)
    s2 = (1.0 / 39916800.0 + r * (1.0 / 479001600.0)) + (1.0 / 6227020800.0) * r2
    q = (s0 + s1 * r4) + s2 * (r4 * r4)
    p = 1.0 + r * (1.0 + r * (0.5 + r * q))
    return p, n


@jit(inline="always")
def softmax_row(v, e):
    """The one per-row softmax / log-sum-exp step: shifted exponentials of ``v`` (K,).

    With c = max_k v_k (c = 0 when every entry is −inf), writes
    ``e[k] = exp(v[k] − c)`` (by :func:`exp_nonpos`) and returns ``(c, s)``,
    s = Σ_k e[k], so that

        logsumexp(v) = c + log s,        softmax(v)_k = e[k] / s.

    s ≥ 1 for a finite maximum; s = 0 exactly when every entry is −inf (then
    ``c + log s`` = −inf); a +inf entry or a NaN gives s = NaN.  ``e`` may be ``v``
    itself (each entry is read before it is written).  Every per-row softmax in the
    kernels goes through here; :func:`finish_rows` is its block form (one long
    vectorised loop of exponentials over many rows, for scoring).
    """
    K = v.shape[0]
    c = -np.inf
    for k in range(K):
        if v[k] > c:
            c = v[k]
    if c == -np.inf:
        c = 0.0
    s = 0.0
    for k in range(K):
        t = exp_nonpos(v[k] - c)
        e[k] = t
        s += t
    return c, s


@jit
def _sum_rows(S):
    """Σ_g S[g] of (G, L) slots, in slot order: a new (L,) array."""
    out = S[0] + 0.0  # 0 + s_0, as a loop started from 0
    for g in range(1, S.shape[0]):
        out += S[g]
    return out


def _slot_shaped(total, slots):
    """``total`` (L,) in the shape of one slot of ``slots``: a float for (G,) slots."""
    if slots.ndim == 1:
        return float(total[0])
    return total.reshape(slots.shape[1:])


@overload(_slot_shaped, jit_options={"cache": True})
def _slot_shaped_numba(total, slots):
    if slots.ndim == 1:
        return lambda total, slots: total[0]
    return lambda total, slots: total.reshape(slots.shape[1:])


@jit
def sum_slots(slots):
    """Σ_g slots[g] over the first axis, in slot order: the epilogue of every
    deterministic parallel reduction (each work item fills its own slot; summing them
    serially in a fixed order makes the result independent of the thread count).

    ``slots`` is C-contiguous (G, …), G ≥ 1; returns a float for (G,) slots, else a new
    (…) array.  A serial function on purpose: inside a ``parallel=True`` kernel numba
    turns ``slots.sum()`` into a parallel reduction whose order follows the thread
    count.  The sum itself runs on the slots flattened to (G, L), so that one compiled
    loop serves slots of every rank.
    """
    G = slots.shape[0]
    return _slot_shaped(_sum_rows(slots.reshape((G, slots.size // G))), slots)


@jit(inline="always")
def finish_row(acc, out, i, mode):
    """Write row ``i`` of ``out`` from the joint log-likelihoods in ``acc`` (K,).

    mode ``MODE_JLL``: ``out[i] = acc``; ``MODE_LOG_PROBA``: ``acc − logsumexp(acc)``;
    ``MODE_PROBA``: ``exp(acc − logsumexp(acc))``.  ``acc`` is left unchanged.  A row
    whose entries are all −inf gives −inf (log posteriors) or zeros (posteriors),
    never NaN.
    """
    K = acc.shape[0]
    if mode == MODE_JLL:
        for k in range(K):
            out[i, k] = acc[k]
        return
    e = out[i]
    c, s = softmax_row(acc, e)
    if mode == MODE_LOG_PROBA:
        lse = c + np.log(s) if s != 0.0 else np.inf  # all -inf: stays -inf
        for k in range(K):
            out[i, k] = acc[k] - lse
    else:
        inv = 1.0 / s if s != 0.0 else 0.0  # all -inf: zeros
        for k in range(K):
            out[i, k] = e[k] * inv


@jit(fastmath=REASSOC)
def finish_rows(out, r0, r1, mode):
    """:func:`finish_row` in place on rows ``r0:r1`` of ``out``, vectorised.

    Subtracts each row's maximum, takes all the exponentials of the block in one long
    loop (which vectorises, where a loop over one row's K entries barely does), then
    normalises each row.  Rows of all −inf give −inf (log posteriors) or zeros.

    Returns the number of rows holding a NaN or whose maximum is ±inf (with
    ``MODE_JLL`` the rows are only counted).  The exponentials go by
    :func:`exp_normal` when the whole block's shifted scores lie in
    ``[EXP_NORMAL_MIN, 0]`` (no class 708 nats below its row's best), else by
    :func:`exp_nonpos`: the same results.  For the Gaussian models such a row can
    only come from a non-finite (or overflowing) x, which lets scoring skip a separate
    finiteness scan of X.

    Compiled with the kernels' reassociation and contraction flags: the exponential's
    polynomial then runs on fused multiply-adds (one rounding each instead of two),
    which is also faster (benchmarks/NOTES.md).
    """
    K = out.shape[1]
    m = r1 - r0
    bad = 0
    if m <= 0:
        return bad
    shift = np.empty(m)
    near = True  # every shifted score ≥ EXP_NORMAL_MIN: exp_normal below
    for r in range(m):
        i = r0 + r
        v = -np.inf
        lo = np.inf
        nan = False
        for k in range(K):
            x = out[i, k]
            nan |= x != x
            v = max(v, x)
            lo = min(lo, x)
        if nan or v == np.inf or v == -np.inf:
            bad += 1
            near = False
        near &= lo - v >= EXP_NORMAL_MIN
        shift[r] = v if v > -np.inf else 0.0  # rows of all -inf: e = 0 below
    if mode == MODE_JLL:
        return bad
    # shifted scores into one flat buffer (``out`` keeps the scores), whose
    # exponentials vectorise as one long loop
    e = np.empty(m * K)
    for r in range(m):
        c = shift[r]
        for k in range(K):
            e[r * K + k] = out[r0 + r, k] - c
    if near:  # the same exponentials, bit for bit, with fewer operations
        for t in range(m * K):
            e[t] = exp_normal(e[t])
    else:
        for t in range(m * K):
            e[t] = exp_nonpos(e[t])
    for r in range(m):
        s = 0.0
        for k in range(K):
            s += e[r * K + k]
        i = r0 + r
        if mode == MODE_LOG_PROBA:
            c = shift[r] + np.log(s) if s != 0.0 else np.inf  # all -inf: stays -inf
            for k in range(K):
                out[i, k] -= c
        else:
            inv = 1.0 / s if s != 0.0 else 0.0  # all -inf: zeros
            for k in range(K):
                out[i, k] = e[r * K + k] * inv
    return bad


@pjit
def logsumexp_rows(a):
    """log Σ_k exp(a[i, k]) for each row, using the row maximum.

    A row whose entries are all -inf gives -inf (not NaN).
    """
    n, K = a.shape
    out = np.empty(n, dtype=a.dtype)
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for b in prange(nb):
        e = np.empty(K)
        for i in range(b * ROW_BLOCK, min(n, (b + 1) * ROW_BLOCK)):
            c, s = softmax_row(a[i], e)
            out[i] = c + np.log(s) if c != np.inf else c
    return out


@pjit
def finish_all_rows(a, mode):
    """:func:`finish_rows` over every row of ``a`` in place (parallel over row blocks).

    Returns the number of rows with a NaN or a non-finite maximum.
    """
    n, K = a.shape
    nb = (n + ROW_BLOCK - 1) // ROW_BLOCK
    bad = 0
    for b in prange(nb):
        bad += finish_rows(a, b * ROW_BLOCK, min(n, (b + 1) * ROW_BLOCK), mode)
    return bad


def log_normalize_rows(a, out=None):
    """a[i, k] − log Σ_k exp(a[i, k]) in place (``out`` must be ``a`` or None).

    Rows of all −inf stay −inf.
    """
    finish_all_rows(a, MODE_LOG_PROBA)
    return a


def softmax_rows(a, out=None):
    """exp(a[i] − logsumexp(a[i])) in place (``out`` must be ``a`` or None); a row of
    all −inf gives zeros, not NaN."""
    finish_all_rows(a, MODE_PROBA)
    return a


@jit
def argmax_rows(a):
    """Index of the first maximum of each row (int64)."""
    n, K = a.shape
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        best = 0
        m = a[i, 0]
        for k in range(1, K):
            if a[i, k] > m:
                m = a[i, k]
                best = k
        out[i] = best
    return out
