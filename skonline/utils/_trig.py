"""Vectorisable sine and cosine for compiled random-feature maps.

``math.sin`` / ``math.cos`` are library calls that keep the compiler from vectorising a loop; a
random Fourier feature map evaluates 2D of them per row, which would dominate its cost. This is
the classic fdlibm scheme written as straight-line arithmetic: Cody--Waite reduction by pi/2 with a
three-part constant (fused multiply-adds allowed, which only makes the reduction more exact),
then the fdlibm minimax polynomials of sin and cos on [-pi/4, pi/4] and a
branch-free quadrant selection. The result is within about 1 ulp of libm for |x| <= 1e5; larger
arguments (where a three-part reduction loses accuracy) are recomputed with ``math.sin/cos``.
"""

import math

from ._jit import njit
from ._math import _float64_bits_as_int64

__all__ = ["sincos_buffer", "SINCOS_REDUCTION_LIMIT"]

#: beyond this |x| the library functions are used
SINCOS_REDUCTION_LIMIT = 1e5

_INV_PIO2 = 6.36619772367581382433e-01
_PIO2_1 = 1.57079632673412561417e00
_PIO2_2 = 6.07710050630396597660e-11
_PIO2_3 = 2.02226624871116645580e-21

_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10

_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11


_RND = 6755399441055744.0  # 1.5 * 2^52: (v + _RND) - _RND rounds v to the nearest integer


@njit(fastmath={"contract"})
def sincos_buffer(a, scale, c, s, m):
    """``c[:m] = cos(a[:m] * scale)``, ``s[:m] = sin(a[:m] * scale)`` (vectorised loop).

    Parameters
    ----------
    a : ndarray of float64
        Arguments (multiplied by ``scale`` first).
    scale : float
    c, s : ndarray of float64
        Outputs, at least ``m`` entries each.
    m : int
        Number of entries to compute.
    """
    for j in range(m):
        x = a[j] * scale
        shifted = x * _INV_PIO2 + _RND
        kf = shifted - _RND  # nearest integer (exact for |x| < 2^51)
        r = x - kf * _PIO2_1
        r = r - kf * _PIO2_2
        r = r - kf * _PIO2_3
        z = r * r
        # sin on [-pi/4, pi/4]
        ps = _S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))
        sv = r + r * z * (_S1 + z * ps)
        # cos on [-pi/4, pi/4] (fdlibm's w = 1 - z/2 correction)
        pc = z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
        hz = 0.5 * z
        w = 1.0 - hz
        cv = w + (((1.0 - w) - hz) + z * pc)
        # the quadrant kf mod 4 from the low bits of kf + 1.5 * 2^52, not from int64(kf): x86-64
        # converts floats to integers as a vector only from AVX-512 on (with AVX2 the compiler
        # converts the lanes one by one); the same value, kf being an integer below 2^51
        n = _float64_bits_as_int64(shifted) & 3
        swap = n & 1
        sgn_s = 1.0 - 2.0 * ((n >> 1) & 1)
        sgn_c = 1.0 - 2.0 * (((n + 1) >> 1) & 1)
        if swap == 1:
            s[j] = sgn_s * cv
            c[j] = sgn_c * sv
        else:
            s[j] = sgn_s * sv
            c[j] = sgn_c * cv
    for j in range(m):
        x = a[j] * scale
        if not abs(x) <= SINCOS_REDUCTION_LIMIT:
            c[j] = math.cos(x)
            s[j] = math.sin(x)
