"""Exact Bregman (KL) projections onto the clipped simplex and the clipped spectraplex.

Clipped simplex (Lu & Zhang, eq. 11): ``{w in Delta_K : w[i] >= gamma}`` with ``0 <= gamma <= 1/K``.
For a nonnegative, nonzero ``p`` the KL projection of ``p / sum(p)`` onto it is

    w[i] = max(gamma, lam * p[i]),   lam > 0 the unique scalar with sum(w) = 1

(KKT conditions: free coordinates keep their ratios, clipped ones sit at the floor). Consequently
the clipped mirror step ``argmin_{w in clipped simplex} <w, g> + KL(w || v)`` is the projection of
``v * exp(-g)`` (Lu & Zhang, Prop. 1 for g = eta * loss: Herbster & Warmuth's projection update).
The projection is invariant to scaling ``p``, so it is computed from ``log p`` shifted by its
maximum: no overflow, and a coordinate that underflows simply ends at the floor.

Clipped spectraplex (eq. 19): ``{W symmetric PSD : Tr W = 1, lambda_min(W) >= gamma}``. The
constraint set and the von Neumann entropy depend on the eigenvalues only, and the von Neumann
trace inequality makes the minimiser share the eigenvectors of ``Q``, so

    argmin_{W in clipped spectraplex} Tr(W log W) - Tr(W Q) = V diag(proj(q, gamma)) V'

for ``Q = V diag(q) V'``: one symmetric eigendecomposition and the vector projection of the
eigenvalues (taken as log-weights).

The compiled kernels (``clip_project``, ``jacobi_eigh``) take scratch buffers and allocate nothing,
so the experts' per-round loops can call them once or twice per row.
"""

import math

import numpy as np

from ._jit import compiled_only, njit
from ._math import EXP_MIN, exp_reduced

__all__ = ["project_clipped_simplex", "project_clipped_spectraplex"]

#: Michelot-style fixed-point passes tried before falling back to the exact O(K log K) solution
_MAX_FIXED_POINT_PASSES = 4


#: 2^-k for k = 0..1099 (exact powers of two), for exp on [EXP_MIN, 0]
_POW2_NEG = np.ldexp(1.0, -np.arange(1100))


@compiled_only(fastmath={"contract"})
def exp_nonpos(x):
    """``exp(x)`` for ``x <= 0`` (within 1 ulp), clamped below at ``EXP_MIN``; no library call.

    The range reduction and polynomial of :func:`~skonline.utils._math.exp_reduced`, with
    ``2^k`` read from a table (k <= 0), which is cheaper than a buffer pass for the few coordinates
    of one round. Compiled with fused multiply-adds allowed (``contract``: ~1.6x faster, as
    accurate or better); scalar-only, so LLVM inlines it into the callers' loops.
    """
    k, q = exp_reduced(x if x > EXP_MIN else EXP_MIN)
    return q * _POW2_NEG[-int(k)]


@njit(inline="always")
def shifted_exp(logp, K, d, p):
    """``d = logp - max(logp)`` and ``p = exp(d)`` (exactly 0 below exp's range); returns ``sum(p)``."""
    m = -math.inf
    for i in range(K):
        if logp[i] > m:
            m = logp[i]
    return shifted_exp_max(logp, m, K, d, p)


@njit(inline="always")
def shifted_exp_max(logp, m, K, d, p):
    """:func:`shifted_exp` given ``m = max(logp[:K])`` (a caller that took the maximum while it wrote
    ``logp`` saves a pass)."""
    s = 0.0
    for i in range(K):
        di = logp[i] - m
        d[i] = di
        pi = exp_nonpos(di) if di > EXP_MIN else 0.0
        p[i] = pi
        s += pi
    return s


@compiled_only
def _sift_down(a, j, end):
    """Restore the max-heap order of ``a[:end]`` below position ``j``."""
    x = a[j]
    c = 2 * j + 1
    while c < end:
        if c + 1 < end and a[c + 1] > a[c]:
            c += 1
        if a[c] > x:
            a[j] = a[c]
            j = c
            c = 2 * j + 1
        else:
            break
    a[j] = x


@compiled_only
def sorted_lambda(p, K, floor, sbuf):
    """The projection's ``lam`` from ``p[:K]`` in descending order (exact): the top k* coordinates
    are free, k* the last k with ``q_k (1 - (K - k) floor) >= floor (q_1 + ... + q_k)``.

    The fallback of the fixed point in :func:`clip_project`. The coordinates are taken in
    descending order from a max-heap (built in ``sbuf``, K scratch entries): O(K + k* log K), and
    no call to ``ndarray.sort``, whose generic quicksort costs about a second of compilation on a
    cold start for this rare path.
    """
    for i in range(K):
        sbuf[i] = p[i]
    for j in range(K // 2 - 1, -1, -1):
        _sift_down(sbuf, j, K)
    end = K
    cum = 0.0
    lam = 0.0
    for k in range(1, K + 1):
        q = sbuf[0]  # the k-th largest
        end -= 1
        sbuf[0] = sbuf[end]
        _sift_down(sbuf, 0, end)
        cum += q
        rest = 1.0 - (K - k) * floor
        if k == 1 or q * rest >= floor * cum:
            lam = rest / cum
        else:
            break
    return lam


@njit(inline="always")
def clip_project(logp, K, floor, log_floor, w, logw, d, p, sbuf):
    """KL projection of ``exp(logp[:K])`` onto the clipped simplex with floor ``floor``.

    Writes the weights to ``w[:K]`` and their logarithms to ``logw[:K]`` (``log_floor`` for clipped
    coordinates, ``log(lam) + logp - max(logp)`` for free ones, so no logarithm is taken per
    coordinate). ``d``, ``p`` and ``sbuf`` are scratch buffers of at least K entries. ``logp`` may
    contain ``-inf`` (those coordinates end exactly at the floor) and may alias ``logw``. Requires
    ``0 <= K * floor <= 1`` and at least one finite entry in ``logp``.

    Cost: a few O(K) fixed-point passes (Michelot's algorithm: clip every coordinate below the floor
    at the current lam, recompute lam; lam only decreases, so it stops after at most K passes), and
    after ``_MAX_FIXED_POINT_PASSES`` passes the exact O(K log K) :func:`sorted_lambda` (in ``sbuf``).
    Returns lam.
    """
    m = -math.inf
    for i in range(K):
        if logp[i] > m:
            m = logp[i]
    return clip_project_max(logp, m, K, floor, log_floor, w, logw, d, p, sbuf)


@njit(inline="always")
def clip_project_max(logp, m, K, floor, log_floor, w, logw, d, p, sbuf):
    """:func:`clip_project` given ``m = max(logp[:K])``: the one copy of the projection, which the
    experts' passes inline into their row loops (they take the maximum while they write ``logp``)."""
    s = shifted_exp_max(logp, m, K, d, p)
    if floor <= 0.0:
        lam = 1.0 / s
        log_lam = -math.log(s)
        for i in range(K):
            w[i] = lam * p[i]
            logw[i] = log_lam + d[i]
    else:
        # fixed point (Michelot): sbuf[i] = 1 marks a clipped coordinate. Each pass clips the free
        # coordinates below the floor at the current lam and sums the remaining free ones; lam only
        # decreases. The maximum (p = 1) is never clipped because lam >= (1 - (K - n) floor) / n >=
        # floor whenever K floor <= 1 (the test p < 1 guards the rounding when K floor == 1).
        for i in range(K):
            sbuf[i] = 0.0
        lam = 1.0 / s
        converged = False
        for _ in range(_MAX_FIXED_POINT_PASSES):
            changed = False
            n_clip = 0
            s_free = 0.0
            for i in range(K):
                if sbuf[i] == 0.0 and p[i] < 1.0 and lam * p[i] < floor:
                    sbuf[i] = 1.0
                    changed = True
                if sbuf[i] == 0.0:
                    s_free += p[i]
                else:
                    n_clip += 1
            if not changed:
                converged = True
                break
            lam = (1.0 - n_clip * floor) / s_free
        if not converged:
            lam = sorted_lambda(p, K, floor, sbuf)
        log_lam = math.log(lam)
        for i in range(K):
            v = lam * p[i]
            if v > floor:
                w[i] = v
                logw[i] = log_lam + d[i]
            else:
                w[i] = floor
                logw[i] = log_floor
    return lam


@compiled_only
def jacobi_eigh(A, K, V, max_sweeps=100):
    """Eigen-decomposition of the symmetric ``A[:K, :K]`` in place (cyclic Jacobi rotations).

    On return the diagonal of ``A`` holds the eigenvalues and the columns of ``V`` the eigenvectors
    (``A_in = V diag(A) V'``). No allocation; accurate to a few ulps of ``||A||``. A diagonal input
    is returned unchanged with ``V = I``.
    """
    for i in range(K):
        for j in range(K):
            V[i, j] = 1.0 if i == j else 0.0
    for _ in range(max_sweeps):
        off = 0.0
        scale = 0.0
        for i in range(K):
            scale += A[i, i] * A[i, i]
            for j in range(i + 1, K):
                off += A[i, j] * A[i, j]
        if off <= 1e-32 * (scale + 2.0 * off) or off == 0.0:
            break
        for p_ in range(K - 1):
            for q in range(p_ + 1, K):
                apq = A[p_, q]
                if apq == 0.0:
                    continue
                app = A[p_, p_]
                aqq = A[q, q]
                theta = (aqq - app) / (2.0 * apq)
                t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(K):
                    akp = A[k, p_]
                    akq = A[k, q]
                    A[k, p_] = c * akp - s * akq
                    A[k, q] = s * akp + c * akq
                for k in range(K):
                    apk = A[p_, k]
                    aqk = A[q, k]
                    A[p_, k] = c * apk - s * aqk
                    A[q, k] = s * apk + c * aqk
                A[p_, q] = 0.0
                A[q, p_] = 0.0
                for k in range(K):
                    vkp = V[k, p_]
                    vkq = V[k, q]
                    V[k, p_] = c * vkp - s * vkq
                    V[k, q] = s * vkp + c * vkq
    return 0


def _check_floor(K, floor):
    floor = float(floor)
    if not (floor >= 0.0) or not math.isfinite(floor):
        raise ValueError(f"floor must be a finite number >= 0; got {floor!r}.")
    if K * floor > 1.0 + 1e-12:
        raise ValueError(
            f"Infeasible floor: K * floor = {K * floor:g} > 1 (K={K}); the clipped set is empty."
        )
    return min(floor, 1.0 / K)


def project_clipped_simplex(log_p, floor):
    """KL projection onto the clipped simplex ``{w >= 0, sum(w) = 1, w[i] >= floor}``.

    Returns ``argmin_w KL(w || p / sum(p))`` over the clipped simplex for ``p = exp(log_p)``, i.e.
    ``w[i] = max(floor, lam * p[i])`` with the unique ``lam`` making ``w`` sum to one. With
    ``log_p = log(v) - g`` this is the mirror step ``argmin <w, g> + KL(w || v)`` over the clipped
    simplex (Lu & Zhang, Lemma in their Appendix A / Herbster & Warmuth's projection update).
    Exact, in O(K log K) at worst; scale invariant in ``p``.

    Parameters
    ----------
    log_p : array-like of shape (K,) or (n, K)
        Logarithms of the nonnegative weights to project (``-inf`` for a zero weight); each row needs
        at least one finite entry. A 2-D input is projected row by row.
    floor : float
        The clip level gamma, ``0 <= K * floor <= 1`` (``floor = 0`` is plain normalisation).

    Returns
    -------
    w : ndarray of the shape of ``log_p``
        The projection(s).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.utils import project_clipped_simplex
    >>> w = project_clipped_simplex(np.log([0.9, 0.09, 0.01]), floor=0.05)
    >>> np.round(w, 6).tolist()
    [0.863636, 0.086364, 0.05]
    >>> float(w.sum())
    1.0
    """
    a = np.asarray(log_p, dtype=np.float64)
    if a.ndim not in (1, 2) or a.shape[-1] == 0:
        raise ValueError(f"log_p must be a non-empty 1-D or 2-D array; got shape {a.shape}.")
    if np.any(np.isnan(a)) or np.any(a == np.inf):
        raise ValueError("log_p must not contain NaN or +inf.")
    rows = a.reshape(-1, a.shape[-1])
    if np.any(np.all(rows == -np.inf, axis=1)):
        raise ValueError("Every row of log_p needs at least one finite entry (a nonzero weight).")
    K = rows.shape[1]
    floor = _check_floor(K, floor)
    log_floor = math.log(floor) if floor > 0 else -math.inf
    out = np.empty_like(rows)
    logw = np.empty(K)
    d = np.empty(K)
    p = np.empty(K)
    s = np.empty(K)
    for r in range(rows.shape[0]):
        lp = np.ascontiguousarray(rows[r])
        clip_project(lp, K, floor, log_floor, out[r], logw, d, p, s)
    return out.reshape(a.shape)


def project_clipped_spectraplex(Q, floor):
    """Minimiser of ``Tr(W log W) - Tr(W Q)`` over the clipped spectraplex.

    The clipped spectraplex is ``{W symmetric PSD : Tr W = 1, lambda_min(W) >= floor}`` (Lu & Zhang,
    eq. 19). The minimiser shares the eigenvectors of ``Q`` and its eigenvalues are the clipped
    simplex projection of ``exp(eigenvalues of Q)``; with ``Q = log W_t - G`` it is the matrix mirror
    step ``argmin Tr(W G) + D_psi(W || W_t)`` (von Neumann entropy), used by PCSP.

    Parameters
    ----------
    Q : array-like of shape (K, K)
        Symmetric matrix (symmetrised as ``(Q + Q') / 2``).
    floor : float
        Lower bound gamma on the eigenvalues, ``0 <= K * floor <= 1``.

    Returns
    -------
    eigenvalues : ndarray of shape (K,)
        Eigenvalues of the minimiser (each >= floor, summing to one).
    eigenvectors : ndarray of shape (K, K)
        Orthonormal eigenvectors (columns): ``W = (eigenvectors * eigenvalues) @ eigenvectors.T``.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.utils import project_clipped_spectraplex
    >>> w, V = project_clipped_spectraplex(np.diag([0.0, -50.0]), floor=0.1)
    >>> W = (V * w) @ V.T
    >>> np.round(W, 6).tolist()
    [[0.9, 0.0], [0.0, 0.1]]
    """
    Q = np.asarray(Q, dtype=np.float64)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or Q.shape[0] == 0:
        raise ValueError(f"Q must be a non-empty square matrix; got shape {Q.shape}.")
    if not np.all(np.isfinite(Q)):
        raise ValueError("Q must be finite.")
    q, V = np.linalg.eigh((Q + Q.T) / 2.0)
    w = project_clipped_simplex(q, floor)
    return w, V
