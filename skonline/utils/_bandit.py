"""Compiled primitives of bandit-style distributions over K arms (kernels, experts).

* :func:`sample_index` -- inverse-CDF sampling of an arm from one uniform number;
* :func:`exp_weights` -- ``softmax(-eta * L)`` in the log domain (finite for any finite ``L``);
* :func:`mix_uniform` -- ``(1 - delta) q + delta / K``, renormalised to sum to one;
* :func:`tsallis_omd_step` -- one online-mirror-descent step with the (modified) alpha-Tsallis
  entropy regulariser ``psi(p) = sum_i -(alpha / eta_i) p_i^(1/alpha)``, whose Lagrange multiplier
  is found by a bracketed, monotone Newton iteration (never NaN).

They take arrays and scalars only, write into caller-provided buffers and allocate nothing, so
compiled passes call them once per row.
"""

import math

from ._jit import njit

__all__ = ["sample_index", "exp_weights", "mix_uniform", "tsallis_omd_step"]

#: probabilities are floored here after a Tsallis step (keeps q^(-1 + 1/alpha) finite)
Q_FLOOR = 1e-300


@njit
def sample_index(p, u):
    """Index ``i`` with ``sum(p[:i]) <= u < sum(p[:i + 1])`` (inverse CDF), for ``u`` in [0, 1).

    If rounding leaves ``u`` above the running total, the last index with ``p > 0`` is returned.
    """
    c = 0.0
    last = 0
    for i in range(p.shape[0]):
        if p[i] > 0.0:
            last = i
        c += p[i]
        if u < c:
            return i
    return last


@njit
def exp_weights(L, eta, out):
    """``out = softmax(-eta * L)``, computed as ``exp(-eta (L - min L))`` normalised.

    The largest weight is ``exp(0) = 1`` before normalisation, so nothing overflows or becomes
    0/0 for any finite ``L`` and ``eta >= 0``.
    """
    K = L.shape[0]
    m = L[0]
    for i in range(1, K):
        if L[i] < m:
            m = L[i]
    s = 0.0
    for i in range(K):
        e = -eta * (L[i] - m)
        v = math.exp(e) if e > -745.0 else 0.0
        out[i] = v
        s += v
    for i in range(K):
        out[i] /= s


@njit
def mix_uniform(q, delta, out):
    """``out = (1 - delta) q + delta / K``, renormalised so that it sums to one exactly-ish."""
    K = q.shape[0]
    u = delta / K
    s = 0.0
    for i in range(K):
        v = (1.0 - delta) * q[i] + u
        out[i] = v
        s += v
    for i in range(K):
        out[i] /= s


@njit
def _tsallis_f(q_pow, eta, ct, mu, expo):
    """F(mu) = sum_i (q_i^(-a) + eta_i (c_i - mu))^expo - 1 and F'(mu); ``bad`` if a base <= 0."""
    f = -1.0
    df = 0.0
    for i in range(q_pow.shape[0]):
        b = q_pow[i] + eta[i] * (ct[i] - mu)
        if not b > 0.0:
            return math.inf, math.inf, True
        v = b**expo
        f += v
        df += -expo * eta[i] * v / b
    return f, df, False


@njit
def tsallis_omd_step(q, eta, ct, alpha, out, tol=1e-15, max_iter=200):
    """One OMD step with the modified alpha-Tsallis entropy; returns the multiplier mu*.

    Solves ``q'_i = (q_i^(1/alpha - 1) + eta_i (ct_i - mu))^(alpha / (1 - alpha))`` with ``mu`` the
    root of ``F(mu) = sum_i q'_i(mu) - 1`` (Li & Liao 2022, eq. (5) and Appendix B; alpha = 8 gives
    the exponents -7/8 and -8/7). ``F`` is increasing and convex on the interval where every base
    is positive, ``F(0) <= 0`` for ``ct >= 0`` and ``F`` reaches ``>= 0`` at
    ``min(max_i ct_i, positivity limit)``, so Newton's method started at 0 increases monotonically
    to the root; every iterate is also kept inside the bracket, with a bisection fallback. The
    bracket never lets a base become non-positive, so no NaN can occur even when a loss estimate
    exceeds the range the theory assumes (loss above ``loss_bound``). The result is renormalised
    to sum to one and floored at 1e-300.

    Parameters
    ----------
    q : ndarray of shape (K,)
        Current distribution (positive entries).
    eta : ndarray of shape (K,)
        Per-arm learning rates (positive).
    ct : ndarray of shape (K,)
        Loss estimates (non-negative).
    alpha : float
        Tsallis parameter, > 1.
    out : ndarray of shape (K,)
        Receives the new distribution (may be ``q`` itself).

    Returns
    -------
    mu : float
        The multiplier (0 when every estimate is 0: then ``out = q``).
    """
    K = q.shape[0]
    a = 1.0 - 1.0 / alpha  # q^(1/alpha - 1) = q^(-a)
    expo = -1.0 / a  # = alpha / (1 - alpha)
    cmax = 0.0
    for i in range(K):
        if ct[i] > cmax:
            cmax = ct[i]
    if cmax <= 0.0 or K == 1:
        for i in range(K):
            out[i] = q[i]
        return 0.0
    # positivity limit of the bases q_i^(-a) + eta_i (ct_i - mu), kept in a local buffer-free pass
    lim = math.inf
    for i in range(K):
        if eta[i] > 0.0:
            v = (q[i] ** (-a) + eta[i] * ct[i]) / eta[i]
            if v < lim:
                lim = v
    hi = cmax
    if lim * (1.0 - 1e-12) < hi:
        hi = lim * (1.0 - 1e-12)
    lo = 0.0
    # q^(-a) once; stored in out (overwritten at the end)
    for i in range(K):
        out[i] = q[i] ** (-a)
    mu = 0.0
    for _ in range(max_iter):
        f, df, bad = _tsallis_f(out, eta, ct, mu, expo)
        if bad or f >= 0.0:
            hi = mu
        else:
            lo = mu
        if (not bad) and abs(f) <= 1e-15:
            break
        if hi - lo <= tol * max(1.0, hi):
            break
        nxt = mu - f / df if (not bad) and df > 0.0 else 0.5 * (lo + hi)
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        mu = nxt
    # the final multiplier: the last point with F <= 0 side chosen unless F(mu) is usable
    f, df, bad = _tsallis_f(out, eta, ct, mu, expo)
    if bad:
        mu = lo
    s = 0.0
    for i in range(K):
        b = out[i] + eta[i] * (ct[i] - mu)
        v = b**expo
        out[i] = v
        s += v
    for i in range(K):
        v = out[i] / s
        out[i] = v if v > Q_FLOOR else Q_FLOOR
    return mu
