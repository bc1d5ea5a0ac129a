"""Compiled scalar and buffer math shared by the families' cores."""

import math

import numpy as np
from llvmlite import ir
from numba.core import types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from ._jit import compiled_only, njit

#: inputs of :func:`exp_buffer` are clamped to this range (2^k stays a normal float64)
EXP_MIN = -708.0
EXP_MAX = 709.0


@intrinsic
def _int64_bits_as_float64(typingctx, bits):
    """The float64 whose bit pattern is the int64 ``bits`` (a register bitcast, no memory view)."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return sig, codegen


@intrinsic
def _float64_bits_as_int64(typingctx, x):
    """The int64 whose bit pattern is the float64 ``x`` (a register bitcast, no memory view)."""
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return sig, codegen


@intrinsic
def fmuladd(typingctx, a, b, c):
    """``a * b + c``, fused into one rounding where the CPU has fused multiply-add instructions
    (LLVM's ``llvm.fmuladd``: fused on this machine or never, whatever the code around it), else
    a product and a sum. Unlike the ``contract`` fastmath flag, which lets the compiler choose
    which products to fuse by the shape of the code (two loops with the same arithmetic can then
    round differently), each call rounds the same way wherever it is inlined."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fmuladd", [d], ir.FunctionType(d, [d, d, d]))
        return builder.call(fn, args)

    return sig, codegen


#: 1.5 * 2^52: an integer-valued float k with |k| < 2^51 added to it is exact, and k is then the low
#: bits of the sum's bit pattern (plus 2^51)
_SHIFTER = 6755399441055744.0


@njit(inline="always")
def pow2_int(k):
    """``2^k`` for an integer-valued float64 ``k`` in [-1022, 1023], built from bit patterns.

    The bit pattern of ``k + 1.5 * 2^52`` (exact) ends with ``2^51 + k``; adding the exponent bias
    and shifting left by 52 leaves ``(k + 1023) << 52``, the pattern of ``2^k`` -- the same bits as
    ``(int64(k) + 1023) << 52``, but with no float-to-integer conversion, which x86-64 has as a
    vector instruction only from AVX-512 on: with AVX2 the compiler converts the lanes one by one,
    and a vectorised exp loop spends a third of its time there (``exp_buffer``: 4.9 -> 3.1 ns per
    value on an AVX2 machine). Exact under any fastmath flag (a bitcast is not arithmetic).
    """
    return _int64_bits_as_float64((_float64_bits_as_int64(k + _SHIFTER) + 1023) << 52)


@compiled_only(fastmath={"reassoc", "contract"})
def fast_dot(a, b, n):
    """``sum_j a[j] b[j]`` over the first ``n`` entries, vectorised: the compiler may reorder the sum
    and fuse the products (fastmath reassoc and contract on this function only). The order is the
    compiled code's, fixed: the same for every chunking of a stream. A function of its own: inlined,
    it would take its caller's flags."""
    acc = 0.0
    for j in range(n):
        acc += a[j] * b[j]
    return acc


@njit(inline="always")
def exp_reduced(x):
    """``(k, p)`` with ``exp(x) = p 2^k`` (within 1 ulp): the range reduction ``x = k ln2 + r`` and a
    degree-13 Taylor polynomial ``p = e^r`` on ``|r| <= ln2/2``; the caller builds ``2^k``
    (:func:`pow2_int`). ``k`` is an integer-valued float64 (``np.floor``, not ``math.floor``, whose
    int64 result costs a conversion per lane that AVX2 lacks: see :func:`pow2_int`). Inlined
    into its callers' loops (numba IR inlining), under their compiler flags."""
    k = np.floor(x * 1.4426950408889634 + 0.5)
    r = x - k * 6.93147180369123816490e-01 - k * 1.90821492927058770002e-10
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return k, p


@njit(inline="always")
def exp_fused(x):
    """``exp(x)`` for ``x`` in ``[EXP_MIN, EXP_MAX]``: :func:`exp_reduced`'s reduction and polynomial
    in fused multiply-adds (:func:`fmuladd`), times ``2^k``: as accurate, about 40 % fewer
    operations on a CPU with FMA, and bits that differ from :func:`exp_reduced` in the last place
    there (the same where there is no FMA). For the compiled loops whose results no golden hash
    pins across machines (the scale-invariant coordinate passes)."""
    k = np.floor(x * 1.4426950408889634 + 0.5)
    r = fmuladd(-k, 1.90821492927058770002e-10, fmuladd(-k, 6.93147180369123816490e-01, x))
    p = fmuladd(1.0 / 6227020800.0, r, 1.0 / 479001600.0)
    p = fmuladd(p, r, 1.0 / 39916800.0)
    p = fmuladd(p, r, 1.0 / 3628800.0)
    p = fmuladd(p, r, 1.0 / 362880.0)
    p = fmuladd(p, r, 1.0 / 40320.0)
    p = fmuladd(p, r, 1.0 / 5040.0)
    p = fmuladd(p, r, 1.0 / 720.0)
    p = fmuladd(p, r, 1.0 / 120.0)
    p = fmuladd(p, r, 1.0 / 24.0)
    p = fmuladd(p, r, 1.0 / 6.0)
    p = fmuladd(p, r, 0.5)
    p = fmuladd(p, r, 1.0)
    p = fmuladd(p, r, 1.0)
    return p * pow2_int(k)


@njit(inline="always")
def exp_buffer(e, out, m):
    """``out[:m] = exp(e[:m])`` in a loop the compiler vectorises (within 1 ulp of libm).

    The scalar ``math.exp`` is a library call that blocks SIMD; this is the classic range
    reduction ``x = k ln2 + r``, a degree-13 Taylor polynomial on ``|r| <= ln2/2`` and ``2^k`` built
    from its bit pattern (a register bitcast: no array view to compile). Precondition (the caller
    clamps): every input lies in ``[EXP_MIN, EXP_MAX]``.
    """
    for j in range(m):
        k, p = exp_reduced(e[j])
        out[j] = p * pow2_int(k)


@njit
def exp_array(x):
    """:func:`exp_buffer` on a 1-D array, inputs clamped to ``[EXP_MIN, EXP_MAX]``."""
    out = np.empty_like(x)
    c = np.minimum(np.maximum(x, EXP_MIN), EXP_MAX)
    exp_buffer(c, out, x.shape[0])
    return out


@njit(inline="always")
def logsumexp_1d(a):
    """``log(sum(exp(a)))`` computed stably; ``-inf`` for an empty or all ``-inf`` input."""
    m = -math.inf
    for v in a:
        if v > m:
            m = v
    if m == -math.inf:
        return -math.inf
    s = 0.0
    for v in a:
        s += math.exp(v - m)
    return m + math.log(s)


@njit
def distinct_columns(cols, n_columns):
    """The distinct values of ``cols`` (int64, each in ``[0, n_columns)``), sorted: one pass over
    ``cols`` setting bits of a bitmap (one bit per column: 32 kB for 2^18 columns, cache-resident)
    and one scan of its words (``np.unique`` sorts ``cols``, and costs more than the pass that
    logged them); sorted columns make the copies that use them sequential."""
    n_words = (n_columns + 63) // 64
    bits = np.zeros(n_words, dtype=np.uint64)
    one = np.uint64(1)
    for j in cols:
        bits[j >> 6] |= one << np.uint64(j & 63)
    out = np.empty(min(cols.shape[0], n_columns), dtype=np.int64)
    m = 0
    for w in range(n_words):
        b = bits[w]
        while b != 0:  # the set bits, lowest first
            out[m] = 64 * w + np.int64(trailing_zeros(b))
            m += 1
            b &= b - one
    return out[:m]


@njit
def copy_columns(dst, src, cols):
    """``dst[..., cols] = src[..., cols]`` for 1-D and 2-D arrays (columns beyond ``dst``'s last
    axis skipped), without the temporaries of fancy indexing."""
    n = dst.shape[-1]
    if dst.ndim == 1:
        d1 = dst.reshape((1, n))
        s1 = src.reshape((1, n))
    else:
        d1 = dst.reshape((-1, n))
        s1 = src.reshape((-1, n))
    for j in cols:
        if j < n:
            for k in range(d1.shape[0]):
                d1[k, j] = s1[k, j]


def running_sum(start, values):
    """``start + values[0] + values[1] + ...`` summed left to right.

    Unlike ``np.sum`` (pairwise), the result does not depend on how a stream was split into chunks.
    ``np.add.accumulate`` adds in order (each partial sum is the previous one plus the next value),
    so this is the sequential sum, computed without a compiled loop (nothing to compile on a first
    fit).
    """
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    if values.shape[0] == 0:
        return float(start)
    return float(np.add.accumulate(np.concatenate(([float(start)], values)))[-1])
