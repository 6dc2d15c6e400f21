"""BLAS level-3 routines that numba's ``np.dot`` does not reach: SYRK and TRMM.

numba's ``np.dot`` always runs a full GEMM, so ``Z.T @ Z`` costs twice the flops of the
symmetric rank-k update (numpy itself calls SYRK there), and a product with a triangular
factor costs twice those of TRMM (benchmarks/NOTES.md).

How: scipy exports its BLAS as ``scipy.linalg.cython_blas``.  At import this module
registers those addresses with LLVM under fixed symbol names (``fastgen_dsyrk`` …), and
the intrinsics below emit calls to the symbols by name.  Compiled code therefore holds
no raw address, so ``cache=True`` keeps working: a cached kernel is linked against the
symbols that the importing process has just registered (ctypes function pointers would
disable numba's cache).  Every array is passed in row-major (C) layout and the calls are
phrased in Fortran's column-major terms accordingly.
"""

import llvmlite.binding as _ll
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import get_cython_function_address, intrinsic

from ._jit import jit

__all__ = ["syrk_upper", "symmetrize_from_upper", "trmm_lower_rows"]


def _register():
    for prefix in "sd":
        for op in ("syrk", "trmm"):
            name = prefix + op
            _ll.add_symbol("fastgen_" + name,
                           get_cython_function_address("scipy.linalg.cython_blas", name))


_register()


def _prefix(dtype):
    if dtype == types.float32:
        return "s"
    if dtype == types.float64:
        return "d"
    raise TypeError(f"BLAS routines need float32 or float64 arrays, not {dtype}")


def _require_c(*arrays):
    for a in arrays:
        if not isinstance(a, types.Array) or a.layout != "C":
            raise TypeError(f"BLAS routines need C-contiguous arrays, got {a}")


def _args(context, builder, specs):
    """Lower (value, numba type, kind) triples to the pointers Fortran BLAS expects."""
    out = []
    for val, ty, kind in specs:
        if kind == "char":
            c = context.cast(builder, val, ty, types.uint8)
            out.append(cgutils.alloca_once_value(builder, c))
        elif kind == "int":
            c = context.cast(builder, val, ty, types.int32)
            out.append(cgutils.alloca_once_value(builder, c))
        elif kind[0] == "real":
            c = context.cast(builder, val, ty, kind[1])
            out.append(cgutils.alloca_once_value(builder, c))
        else:  # array: pointer to its first element
            arr = cgutils.create_struct_proxy(ty)(context, builder, value=val)
            out.append(arr.data)
    return out


def _call_codegen(kinds, symbol):
    """Codegen of an intrinsic that calls the void C function ``symbol`` with its
    arguments passed as :func:`_args` lays them out (``kinds``)."""

    def codegen(context, builder, signature, args):
        ptrs = _args(context, builder, zip(args, signature.args, kinds))
        fnty = ir.FunctionType(ir.VoidType(), [p.type for p in ptrs])
        fn = cgutils.get_or_insert_function(builder.module, fnty, symbol)
        builder.call(fn, ptrs)
        return context.get_dummy_value()

    return codegen


@intrinsic
def _syrk(typingctx, uplo, trans, n, k, alpha, a, lda, beta, c, ldc):
    _require_c(a, c)
    dt = a.dtype
    sig = types.void(uplo, trans, n, k, alpha, a, lda, beta, c, ldc)
    kinds = ["char", "char", "int", "int", ("real", dt), "arr", "int", ("real", dt),
             "arr", "int"]

    return sig, _call_codegen(kinds, "fastgen_" + _prefix(dt) + "syrk")


@intrinsic
def _trmm(typingctx, side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb):
    _require_c(a, b)
    dt = b.dtype
    sig = types.void(side, uplo, transa, diag, m, n, alpha, a, lda, b, ldb)
    kinds = ["char", "char", "char", "char", "int", "int", ("real", dt), "arr", "int",
             "arr", "int"]

    return sig, _call_codegen(kinds, "fastgen_" + _prefix(dt) + "trmm")


@jit
def syrk_upper(Z, m, C):
    """C += Z[:m]ᵀ·Z[:m] on the upper triangle of C (row-major, (d, d), contiguous).

    ``Z`` is a C-contiguous (rows, d) array of the same dtype as C; only its first ``m``
    rows are read.  The strictly lower triangle of C is left untouched.
    """
    d = Z.shape[1]
    if m == 0:
        return
    # Row-major Z (m, d) is column-major Zᶠ (d, m) with ld = d, and Zᵀ Z = Zᶠ Zᶠᵀ
    # (trans = 'N').  Fortran's lower triangle of C is row-major's upper triangle.
    _syrk(ord("L"), ord("N"), d, m, 1.0, Z, d, 1.0, C, d)


@jit
def symmetrize_from_upper(C):
    """Copy the upper triangle of the square C onto its lower one (after
    :func:`syrk_upper`, which fills the upper triangle only)."""
    d = C.shape[0]
    for j in range(d):
        for l in range(j + 1, d):
            C[l, j] = C[j, l]


@jit
def trmm_lower_rows(Linv, Z, m):
    """Z[:m] ← Z[:m]·Linvᵀ in place, for Linv lower triangular (d, d), row-major.

    Row by row this is u_r = L⁻¹ z_r: the whitening step of a Mahalanobis distance.
    """
    d = Z.shape[1]
    if m == 0:
        return
    # Column-major view: Zᶠ (d, m) ← op(A)·Zᶠ with A the row-major Linv read as
    # column-major (that is Linvᵀ, upper); op = transpose gives Linv back.
    _trmm(ord("L"), ord("U"), ord("T"), ord("N"), d, m, 1.0, Linv, d, Z, d)
