"""KL (neg-entropy) projection onto the capped simplex, in log space, and DepRound.

Capped simplex: ``S_{m,k} = {q in R^m : 0 <= q_i <= 1/k, sum_i q_i = 1}`` with ``1 <= k <= m``
(``k = 1`` is the probability simplex, ``k = m`` the single point ``1/m``). It is the feasible set
of the dual player of the average top-k risk (Zhang et al., Sec. 5): ``max_{q in S_{m,k}} sum q_i
R_i`` is the average of the k largest ``R_i``.

KL projection (Zhang et al., Alg. 8, after Si Salem et al. 2023): for a positive ``p`` (any scale)

    argmin_{q in S_{m,k}} sum_i q_i log(q_i / p_i) - q_i + p_i   =   min(1/k, c p_i)

with the scalar ``c > 0`` fixed by ``sum q = 1``: the ``j`` largest entries are capped at ``1/k``
and the others rescaled, ``c = (1 - j/k) / sum_{uncapped} p_i``, for the smallest ``j`` at which the
largest uncapped entry satisfies ``c p <= 1/k``. Here everything is done on ``log p``: the sums
over the uncapped entries are suffix log-sum-exps (no subtraction, so no cancellation when the
capped entries dominate, and no underflow of tiny weights), and the result is ``log q``.

DepRound (Gandhi et al. 2006; Zhang et al., Alg. 9): given ``p in S_{m,k}``, draw a set ``I`` of
exactly ``k`` distinct indices with ``P(i in I) = k p_i``. Start from ``x = k p in [0, 1]^m``;
repeatedly take two fractional entries ``x_i, x_j`` and move mass between them so that one becomes
0 or 1, with the direction chosen at random so that each coordinate's expectation is unchanged
(hence the marginals) and the sum is unchanged (hence ``|I| = k``). One left-to-right pass that
carries the single current fractional index does it in ``m - 1`` coin flips at most. The coins are
uniforms passed in (``m - 1`` per draw), so a caller drawing them from its own Generator controls
all the randomness.

The compiled kernels take scratch buffers and allocate nothing, so a per-round loop can call them.
"""

import math
import numbers

import numpy as np

from ._jit import compiled_only, njit

__all__ = ["kl_project_capped_simplex", "depround"]

#: tolerance (in log space for the projection, absolute for DepRound) for snapping to caps/0/1
_TOL = 1e-12


@njit(inline="always")
def _logaddexp(a, b):
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    if a > b:
        return a + math.log1p(math.exp(b - a))
    return b + math.log1p(math.exp(a - b))


@compiled_only
def log_normalize(logq):
    """``logq -= logsumexp(logq)`` in place (the KL projection onto the simplex, k = 1)."""
    m = logq.shape[0]
    mx = -math.inf
    for i in range(m):
        if logq[i] > mx:
            mx = logq[i]
    s = 0.0
    for i in range(m):
        s += math.exp(logq[i] - mx)
    lse = mx + math.log(s)
    for i in range(m):
        logq[i] -= lse


@njit(inline="always")
def sort_desc(vals, order):
    """Insertion-sort the permutation ``order`` so that ``vals[order]`` is non-increasing.

    Linear time when ``order`` is already nearly sorted (as between two rounds of a mirror step).
    """
    m = order.shape[0]
    for a in range(1, m):
        o = order[a]
        v = vals[o]
        b = a - 1
        while b >= 0 and vals[order[b]] < v:
            order[b + 1] = order[b]
            b -= 1
        order[b + 1] = o


@njit
def project_capped_log(logp, k, order, suffix, out):
    """``out = log argmin_{q in S_{m,k}} KL(q || exp(logp))`` (``out`` may be ``logp``).

    ``order`` is an int64 permutation of ``range(m)`` (kept between calls: it is re-sorted in
    place, in linear time when nearly sorted); ``suffix`` is a float work buffer of size ``m + 1``.
    Entries of ``logp`` must be finite. Returns the number of capped entries.
    """
    m = logp.shape[0]
    if k >= m:
        v = -math.log(m)
        for i in range(m):
            out[i] = v
        return m
    if k <= 1:
        for i in range(m):
            out[i] = logp[i]
        log_normalize(out)
        return 0
    sort_desc(logp, order)
    # suffix[j] = log sum of every entry except the j largest (j = 0..k), by direct accumulation
    mx = logp[order[k]]
    s = 0.0
    for a in range(k, m):
        s += math.exp(logp[order[a]] - mx)
    suffix[k] = mx + math.log(s)
    for j in range(k - 1, -1, -1):
        suffix[j] = _logaddexp(logp[order[j]], suffix[j + 1])
    logk = math.log(k)
    n_cap = k - 1
    logc = math.log1p(-(k - 1) / k) - suffix[k - 1]
    for j in range(k):
        lc = math.log1p(-j / k) - suffix[j]
        if lc + logp[order[j]] <= -logk + _TOL:
            n_cap = j
            logc = lc
            break
    for i in range(m):
        v = logp[i] + logc
        out[i] = v if v < -logk else -logk
    for a in range(n_cap):
        out[order[a]] = -logk
    return n_cap


@njit(inline="always")
def project_capped_log_lin(logp, k, order, suffix, out, q):
    """:func:`project_capped_log` that also writes the projection in linear space into ``q``.

    With ``1 < k < m`` it computes the shifted weights ``exp(logp - max)`` once (m exponentials)
    and does the search with direct sums of them: no further exponential and one logarithm, where
    the log-space version needs about 2m transcendental calls (plus m to leave log space). When
    the uncapped weights underflow in linear space it falls back to the log-space computation.
    ``out`` may be ``logp``; ``q`` must not alias either.
    """
    m = logp.shape[0]
    if k <= 1 or k >= m:
        project_capped_log(logp, k, order, suffix, out)
        for i in range(m):
            q[i] = math.exp(out[i])
        return
    sort_desc(logp, order)
    mx = logp[order[0]]
    for i in range(m):
        q[i] = math.exp(logp[i] - mx)  # shifted weights, in (0, 1]
    s = 0.0
    for a in range(k, m):
        s += q[order[a]]
    suffix[k] = s
    for j in range(k - 1, -1, -1):
        suffix[j] = q[order[j]] + suffix[j + 1]
    inv_k = 1.0 / k
    n_cap = k - 1
    for j in range(k):
        if (1.0 - j / k) * q[order[j]] <= inv_k * suffix[j] * (1.0 + _TOL):
            n_cap = j
            break
    if not suffix[n_cap] > 1e-290:
        project_capped_log(logp, k, order, suffix, out)
        for i in range(m):
            q[i] = math.exp(out[i])
        return
    c = (1.0 - n_cap / k) / suffix[n_cap]
    logc = math.log(c) - mx
    logk = math.log(k)
    for i in range(m):
        v = logp[i] + logc
        out[i] = v if v < -logk else -logk
        if logp[i] - mx > -700.0:
            w = q[i] * c
            q[i] = w if w < inv_k else inv_k
        else:  # the shifted weight is subnormal (or 0): take it from log space
            q[i] = math.exp(out[i])
    for a in range(n_cap):
        out[order[a]] = -logk
        q[order[a]] = inv_k


@njit(inline="always")
def _snap(v):
    if v < _TOL:
        return 0.0
    if v > 1.0 - _TOL:
        return 1.0
    return v


@njit(inline="always")
def depround_select(p, k, u, x, out):
    """DepRound: write ``k`` distinct indices with ``P(i in out) = k p_i`` into ``out`` (sorted).

    ``p`` lies in the capped simplex ``S_{m,k}``; ``u`` holds at least ``m - 1`` uniforms in [0, 1)
    (one coin per pairing; at most ``m - 1`` are used); ``x`` is a float work buffer of size m.
    Returns the number of coins used.
    """
    m = p.shape[0]
    for i in range(m):
        v = k * p[i]
        if v < 0.0:
            v = 0.0
        elif v > 1.0:
            v = 1.0
        x[i] = _snap(v)
    carry = -1
    used = 0
    for j in range(m):
        xj = x[j]
        if xj <= 0.0 or xj >= 1.0:
            continue
        if carry < 0:
            carry = j
            continue
        i = carry
        a = min(1.0 - x[i], xj)  # x_i up by a, x_j down by a   (probability b / (a + b))
        b = min(x[i], 1.0 - xj)  # x_i down by b, x_j up by b   (probability a / (a + b))
        if u[used] * (a + b) < b:
            x[i] = _snap(x[i] + a)
            x[j] = _snap(xj - a)
        else:
            x[i] = _snap(x[i] - b)
            x[j] = _snap(xj + b)
        used += 1
        if 0.0 < x[i] < 1.0:
            continue  # x_j became integral; keep carrying i
        carry = j if 0.0 < x[j] < 1.0 else -1
    n = 0
    for i in range(m):
        if x[i] >= 1.0 and n < k:
            out[n] = i
            n += 1
    # floating residue: at most one fractional entry can be left over; complete with the largest
    while n < k:
        best = -1
        bv = -1.0
        for i in range(m):
            if x[i] < 1.0 and x[i] > bv:
                bv = x[i]
                best = i
        x[best] = 1.0
        a = n
        while a > 0 and out[a - 1] > best:
            out[a] = out[a - 1]
            a -= 1
        out[a] = best
        n += 1
    return used


@njit
def _depround_many(p, k, U, out):
    x = np.empty(p.shape[0])
    for r in range(U.shape[0]):
        depround_select(p, k, U[r], x, out[r])


def _check_k(k, m):
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError(f"k must be an int, got {k!r}.")
    if not 1 <= k <= m:
        raise ValueError(f"k must satisfy 1 <= k <= m = {m}; got k={k}.")
    return int(k)


def kl_project_capped_simplex(log_p, k):
    """KL projection onto the capped simplex ``{q : 0 <= q_i <= 1/k, sum q = 1}``, in log space.

    Solves ``argmin_q sum_i q_i log(q_i / p_i)`` over the capped simplex for ``p = exp(log_p)``
    (``p`` need not be normalised). The solution is ``q_i = min(1/k, c p_i)`` for one scalar ``c``
    (Zhang et al., Alg. 8); it is computed from ``log p`` with suffix log-sum-exps, so neither tiny
    nor dominating weights lose precision.

    Parameters
    ----------
    log_p : array-like of shape (m,)
        Finite log-weights.
    k : int
        Cap ``1/k``, with ``1 <= k <= m`` (``k = 1``: the probability simplex).

    Returns
    -------
    log_q : ndarray of shape (m,)
        Logarithm of the projection.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.utils import kl_project_capped_simplex
    >>> q = np.exp(kl_project_capped_simplex(np.log([8.0, 1.0, 1.0, 1.0]), k=2))
    >>> q.round(4).tolist()
    [0.5, 0.1667, 0.1667, 0.1667]
    """
    logp = np.array(log_p, dtype=np.float64).ravel()
    m = logp.shape[0]
    if m == 0:
        raise ValueError("log_p is empty.")
    if not np.all(np.isfinite(logp)):
        raise ValueError("log_p must be finite (use a very negative number for a tiny weight).")
    k = _check_k(k, m)
    out = np.empty(m)
    project_capped_log(logp, k, np.arange(m, dtype=np.int64), np.empty(m + 1), out)
    return out


def depround(p, k, random_state=None, size=None):
    """Dependent rounding: ``k`` distinct indices with inclusion probabilities ``k p``.

    Gandhi et al.'s DepRound (Zhang et al., Alg. 9): for ``p`` in the capped simplex
    (``sum p = 1``, ``p_i <= 1/k``) it returns a set ``I`` with ``|I| = k`` exactly and
    ``P(i in I) = k p_i`` for every ``i``. Each draw uses ``m - 1`` uniforms from ``random_state``.

    Parameters
    ----------
    p : array-like of shape (m,)
        Probabilities in the capped simplex (renormalised to sum to 1; entries above ``1/k`` by
        more than 1e-9 are an error).
    k : int
        Set size, ``1 <= k <= m``.
    random_state : None, int, numpy.random.Generator or RandomState
        Source of the coins.
    size : int, optional
        Number of independent draws.

    Returns
    -------
    I : ndarray of shape (k,) or (size, k)
        Sorted indices.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.utils import depround
    >>> draws = depround([0.5, 0.25, 0.25, 0.0], k=2, random_state=0, size=20000)
    >>> draws.shape
    (20000, 2)
    >>> bool(np.all(draws[:, 0] == 0))       # k p_0 = 1: always included
    True
    >>> freq = np.bincount(draws.ravel(), minlength=4) / 20000   # close to k p = [1, .5, .5, 0]
    >>> np.round(freq, 2).tolist()
    [1.0, 0.5, 0.5, 0.0]
    """
    from ..base import make_generator

    p = np.array(p, dtype=np.float64).ravel()
    m = p.shape[0]
    if m == 0:
        raise ValueError("p is empty.")
    k = _check_k(k, m)
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError("p must be finite and non-negative.")
    s = p.sum()
    if s <= 0:
        raise ValueError("p must have a positive sum.")
    p = p / s
    if np.any(p > 1.0 / k + 1e-9):
        raise ValueError(f"p is not in the capped simplex: max(p) = {p.max():.6g} > 1/k = {1 / k:.6g}.")
    rng = make_generator(random_state)
    n = 1 if size is None else int(size)
    U = rng.random((n, max(m - 1, 1)))
    out = np.empty((n, k), dtype=np.int64)
    _depround_many(p, k, U, out)
    return out[0] if size is None else out
