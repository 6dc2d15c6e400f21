"""Software prefetch for kernels whose reads jump around memory.

The CSR class counts visit the rows of X grouped by class, so every row starts a new
stream somewhere else in ``data`` and ``indices``; the hardware prefetcher only picks
a stream up after a few misses, so the counts ask for the row two ahead while summing
the current one (benchmarks/NOTES.md).

``prefetch`` lowers to LLVM's ``llvm.prefetch`` intrinsic: no call and no address in
the compiled code, so kernels using it still cache.  A prefetch never faults, but the
index is still kept in bounds by the callers.

The CSR scoring kernels read one row of the (d, K) weight table per stored value; the
rows of rare columns come from L3 or memory, so they prefetch the row needed 48
stored values ahead.
"""

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._jit import jit

__all__ = ["prefetch", "prefetch_csr_row", "prefetch_span"]


@intrinsic
def prefetch(typingctx, arr, idx):
    """Hint that ``arr[idx]`` (1-D array, integer index) will be read soon."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(
            idx, types.Integer):
        return None
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):
        a = cgutils.create_struct_proxy(signature.args[0])(context, builder, value=args[0])
        i = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = builder.bitcast(builder.gep(a.data, [i]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # read (0), keep in all cache levels (3), data cache (1)
        builder.call(fn, [ptr, i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@jit(inline="always")
def prefetch_csr_row(indptr, indices, data, i):
    """Prefetch every cache line of row ``i``'s stored values and column indices."""
    a = indptr[i]
    b = indptr[i + 1]
    for q in range(a, b, 8):  # 8 values of 8 bytes (or 16 of 4) per 64-byte line
        prefetch(data, q)
        prefetch(indices, q)


@jit(inline="always")
def prefetch_span(a, start, length):
    """Prefetch the cache lines of ``a[start:start + length]`` (1-D ``a``), one prefetch
    every 8 items: a line's worth for float64.  For float32 rows that is two per line,
    and still the faster choice than stepping by the item size (benchmarks/NOTES.md)."""
    for q in range(start, start + length, 8):
        prefetch(a, q)
    prefetch(a, start + length - 1)
