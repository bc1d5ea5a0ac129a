"""Compiled numerics shared by the kernel feature maps and the online kernel ridge forecasters.

* Taylor features of the Gaussian kernel (Jézéquel, Gaillard & Rudi 2019, eq. 6): multi-index
  tables in scikit-learn's ``PolynomialFeatures`` order and a per-row evaluation that cannot
  overflow (direct recursion whenever ``exp(-||z||^2 / 2)`` is a normal number, log domain otherwise).
* Gaussian (and linear) kernel values of a point against stored points kept as the *columns* of
  a (d, capacity) array, so the loop over points is the inner one and vectorises, with the
  vectorisable exponential.
* The Sherman-Morrison rank-one update of an inverse ``P = A^{-1}`` (``A <- A + v v'``), written as
  row operations (axpy) that the compiler vectorises; it keeps ``P`` exactly symmetric.
* Growing a symmetric inverse by one row/column (Schur complement) and a Cholesky factor ``L`` by
  one row (block append), ``L`` kept transposed so that forward substitution runs by columns
  (vectorises).
* One KORS step (Kernel Online Row Sampling, Calandriello et al. 2017): approximate ridge leverage
  score of the incoming point against the weighted dictionary, in closed form.
* Stores of points in a dense or a sparse layout (the dictionary of an online Nyström map, the
  rows of history of PKAWV), with the chunk's rows dense or CSR.

Every function works on the top-left ``m x m`` block of preallocated (padded) arrays, so the
callers can grow their state by doubling without reallocating in the hot loop.
"""

import itertools
import math
from typing import NamedTuple

import numpy as np
from numba import types
from numba.extending import overload

from ._growing import grow, next_capacity  # noqa: F401 (the growing models import them here)
from ._jit import OVERLOAD_OPTIONS, compiled_only, njit
from ._math import EXP_MIN, exp_buffer

#: below this value of ||z||^2 / 2, exp(-||z||^2 / 2) is a normal float64 and the Taylor recursion
#: runs directly (every intermediate value is itself a feature, bounded by 1 in absolute value)
_TAYLOR_DIRECT_MAX = 700.0


# --------------------------------------------------------------------------- Taylor features
#: the largest multi-index tables :func:`taylor_tables` builds (bytes)
TAYLOR_TABLES_MAX_BYTES = 2**30


def taylor_tables(n_features, degree):
    """Multi-index tables of the Taylor features of total degree ``<= degree``.

    The order is scikit-learn's ``PolynomialFeatures(degree, include_bias=True)`` order: by total
    degree, then ``itertools.combinations_with_replacement`` order within a degree.

    Returns
    -------
    powers : ndarray of shape (r, n_features), int64
    parent : ndarray of shape (r,), int64
        Feature ``f > 0`` is ``feature[parent[f]] * z[var[f]] / sqrt(powers[f, var[f]])``.
    var : ndarray of shape (r,), int64
    inv_sqrt : ndarray of shape (r,), float64
        ``1 / sqrt(powers[f, var[f]])`` (1 for the constant feature).

    Raises
    ------
    ValueError
        If the tables would take more than ``TAYLOR_TABLES_MAX_BYTES`` (before building them).
    """
    r = math.comb(degree + n_features, n_features)
    size = r * (n_features + 3) * 8
    if size > TAYLOR_TABLES_MAX_BYTES:
        raise ValueError(
            f"Taylor features of degree {degree} on {n_features:,} features: {r:,} output features, whose "
            f"multi-index tables alone would take {size / 2**30:,.1f} GiB (and each row's output "
            f"{8 * r / 2**20:,.1f} MiB). Reduce the features or the degree, or use random features "
            "(RandomFourierFeatures, OnlineNystroem)."
        )
    combos = [()]
    for j in range(1, degree + 1):
        combos.extend(itertools.combinations_with_replacement(range(n_features), j))
    index = {c: i for i, c in enumerate(combos)}
    r = len(combos)
    powers = np.zeros((r, n_features), dtype=np.int64)
    parent = np.zeros(r, dtype=np.int64)
    var = np.zeros(r, dtype=np.int64)
    inv_sqrt = np.ones(r, dtype=np.float64)
    for i, c in enumerate(combos):
        for v in c:
            powers[i, v] += 1
        if c:
            parent[i] = index[c[:-1]]
            var[i] = c[-1]
            inv_sqrt[i] = 1.0 / math.sqrt(powers[i, c[-1]])
    return powers, parent, var, inv_sqrt


@njit(inline="always")
def taylor_row(x, center, inv_sigma, parent, var, inv_sqrt, z, out):
    """``out[:r] = `` the Taylor features g_k(x) of the Gaussian kernel, |k| <= M.

    ``g_k(x) = exp(-||z||^2 / 2) prod_i z_i^{k_i} / sqrt(k_i!)`` with ``z = (x - center) / sigma``.
    ``z`` is a scratch buffer of at least ``len(x) + r`` entries. Never overflows: every value of
    the direct recursion is itself a feature, bounded by 1; rows with ``||z||^2 / 2 > 700``
    (where ``exp(-||z||^2/2)`` is no longer a normal number) are evaluated in the log domain.
    """
    d = x.shape[0]
    r = parent.shape[0]
    sq = 0.0
    for i in range(d):
        zi = (x[i] - center[i]) * inv_sigma
        z[i] = zi
        sq += zi * zi
    half = 0.5 * sq
    if half < _TAYLOR_DIRECT_MAX:
        out[0] = math.exp(-half)
        for f in range(1, r):
            out[f] = out[parent[f]] * z[var[f]] * inv_sqrt[f]
        return
    if not math.isfinite(half):  # features are exactly representable as 0
        for f in range(r):
            out[f] = 0.0
        return
    # log domain: out[f] = log|g_f|, z[d + f] = sign(g_f) (parents precede their children)
    out[0] = -half
    z[d] = 1.0
    for f in range(1, r):
        zi = z[var[f]]
        lp = out[parent[f]]
        z[d + f] = z[d + parent[f]] * (1.0 if zi >= 0.0 else -1.0)
        if zi == 0.0 or lp == -math.inf:
            out[f] = -math.inf
        else:
            out[f] = lp + math.log(abs(zi)) + math.log(inv_sqrt[f])
    for f in range(r):
        lf = out[f]
        out[f] = z[d + f] * math.exp(lf) if lf > -math.inf else 0.0


@njit
def taylor_transform(X, center, inv_sigma, parent, var, inv_sqrt, out):
    """:func:`taylor_row` on every row of ``X`` (``out`` has shape (n, r))."""
    z = np.empty(X.shape[1] + parent.shape[0])
    for i in range(X.shape[0]):
        taylor_row(X[i], center, inv_sigma, parent, var, inv_sqrt, z, out[i])


# --------------------------------------------------------------------------- Gaussian kernel
@compiled_only
def rbf_cols(XT, n, x, gamma, e, out):
    """``out[i] = exp(-gamma ||XT[:, i] - x||^2)`` for ``i < n``: the points are the *columns* of
    ``XT`` (shape (d, capacity)), so the loop over points is the inner one and vectorises.

    Each squared distance is summed over the features in order, as a loop over one point's
    features would (the same bits). ``e``: scratch (>= n).
    """
    d = x.shape[0]
    for i in range(n):
        e[i] = 0.0
    for j in range(d):
        xj = x[j]
        Xj = XT[j]
        for i in range(n):
            t = Xj[i] - xj
            e[i] += t * t
    for i in range(n):
        v = -gamma * e[i]
        e[i] = v if v > EXP_MIN else EXP_MIN
    exp_buffer(e, out, n)
    for i in range(n):  # exp(EXP_MIN) ~ 1e-308: call it zero, as exp() of the true value would
        if e[i] <= EXP_MIN:
            out[i] = 0.0


@compiled_only
def linear_cols(XT, n, x, out):
    """``out[i] = XT[:, i] . x`` for ``i < n`` (points as columns; each dot product summed over
    the features in order)."""
    d = x.shape[0]
    for i in range(n):
        out[i] = 0.0
    for j in range(d):
        xj = x[j]
        Xj = XT[j]
        for i in range(n):
            out[i] += Xj[i] * xj


@compiled_only
def rbf_sparse_rows(val, idx, ptr, sq, n, work, xsq, gamma, e, out):
    """``out[j] = exp(-gamma ||c_j - x||^2)`` for the sparse points ``j < n`` (point j: entries
    ``val[ptr[j]:ptr[j + 1]]`` in columns ``idx[...]``, squared norm ``sq[j]``), with ``x``
    scattered in the dense ``work`` and ``xsq = ||x||^2``: ``||c||^2 + ||x||^2 - 2 c'x``, floored at
    0. O(nnz(c_j)) per point."""
    for j in range(n):
        acc = 0.0
        for p in range(ptr[j], ptr[j + 1]):
            acc += val[p] * work[idx[p]]
        dist = xsq + sq[j] - 2.0 * acc
        if dist < 0.0:
            dist = 0.0
        v = -gamma * dist
        e[j] = v if v > EXP_MIN else EXP_MIN
    exp_buffer(e, out, n)
    for j in range(n):
        if e[j] <= EXP_MIN:
            out[j] = 0.0


@compiled_only
def linear_sparse_rows(val, idx, ptr, n, work, out):
    """``out[j] = c_j' x`` for the sparse points ``j < n`` (as :func:`rbf_sparse_rows`), with
    ``x`` scattered in the dense ``work``; each dot product summed over the point's entries in
    order (sorted columns: the bits of a dense dot product over every column in order)."""
    for j in range(n):
        acc = 0.0
        for p in range(ptr[j], ptr[j + 1]):
            acc += val[p] * work[idx[p]]
        out[j] = acc


@njit(inline="always")
def sparse_kernel_rows(kernel, val, idx, ptr, sq, n, work, xsq, gamma, e, out):
    """Kernel values of ``x`` (scattered in ``work``, ``xsq = ||x||^2``) against the sparse points
    ``j < n``: :func:`rbf_sparse_rows` (``kernel`` 0) or :func:`linear_sparse_rows` (1)."""
    if kernel == 0:
        rbf_sparse_rows(val, idx, ptr, sq, n, work, xsq, gamma, e, out)
    else:
        linear_sparse_rows(val, idx, ptr, n, work, out)


@njit
def rbf_matrix_t(A, BT, m, gamma):
    """Gaussian kernel matrix ``exp(-gamma ||a_i - b_j||^2)`` against the first ``m`` columns of
    ``BT`` (points as columns), shape (n, m)."""
    n = A.shape[0]
    out = np.empty((n, m))
    e = np.empty(m)
    for i in range(n):
        rbf_cols(BT, m, A[i], gamma, e, out[i])
    return out


# --------------------------------------------------------------------------- inverse updates
@njit(inline="always")
def sym_matvec(P, m, v, u):
    """``u[:m] = P[:m, :m] @ v[:m]`` for symmetric ``P``, as a sum of rows (vectorises)."""
    for k in range(m):
        u[k] = 0.0
    for j in range(m):
        vj = v[j]
        if vj != 0.0:
            Pj = P[j]
            for k in range(m):
                u[k] += vj * Pj[k]


@njit(inline="always")
def sm_factor(u, m, s, w, g):
    """``g = u sqrt(w / (1 + w s))`` (``u / sqrt(1 + s)`` when ``w == 1``, zero when ``w == 0``):
    with ``u = P v`` and ``s = v' u``, ``P - g g'`` is the inverse of ``A + w v v'`` for
    ``P = A^{-1}`` (Sherman-Morrison)."""
    if w == 0.0:
        for k in range(m):
            g[k] = 0.0
    else:
        c = 1.0 / math.sqrt(1.0 + s) if w == 1.0 else math.sqrt(w / (1.0 + w * s))
        for k in range(m):
            g[k] = u[k] * c


@njit(inline="always")
def rank_one_downdate(P, m, g):
    """``P[:m, :m] -= g g'`` (rows with ``g_i = 0`` skipped; ``P`` stays exactly symmetric: entries
    ``(i, j)`` and ``(j, i)`` receive the same product ``g_i g_j``)."""
    for i in range(m):
        gi = g[i]
        if gi != 0.0:
            Pi = P[i]
            for k in range(m):
                Pi[k] -= gi * g[k]


@njit(inline="always")
def sherman_morrison(P, m, v, u, g):
    """Rank-one update ``A <- A + v v'`` of ``P = A^{-1}`` (top-left ``m x m`` block).

    On return ``u = P_old v`` and ``s = v' P_old v`` is returned; ``g`` is scratch. ``P`` stays
    exactly symmetric (:func:`rank_one_downdate`).
    """
    sym_matvec(P, m, v, u)
    s = 0.0
    for k in range(m):
        s += v[k] * u[k]
    sm_factor(u, m, s, 1.0, g)
    rank_one_downdate(P, m, g)
    return s


@compiled_only
def unit_update(P, m, k, c, h):
    """``A <- A + c e_k e_k'`` on ``P = A^{-1}``: Sherman-Morrison with a unit vector,
    ``P -= h h'``, ``h = P e_k sqrt(c / (1 + c P_kk))`` (``h``: scratch)."""
    Pk = P[k]
    f = math.sqrt(c / (1.0 + c * Pk[k]))
    for i in range(m):
        h[i] = Pk[i] * f
    for i in range(m):
        Pi = P[i]
        hi = h[i]
        for l in range(m):
            Pi[l] = Pi[l] - hi * h[l]


@compiled_only
def inverse_append(P, m, c, corner, q):
    """Grow ``P = A^{-1}`` (``m x m``) to the inverse of ``[[A, c], [c', corner]]``.

    Schur complement: ``q = P c``, ``delta = corner - c' q``; ``P <- [[P + q q'/delta, -q/delta],
    [-q'/delta, 1/delta]]``. Returns ``delta`` (the caller guards ``delta > 0``). ``q`` is scratch.
    """
    sym_matvec(P, m, c, q)
    delta = corner
    for k in range(m):
        delta -= c[k] * q[k]
    inv = 1.0 / delta
    for i in range(m):
        a = q[i] * inv
        Pi = P[i]
        for k in range(m):
            Pi[k] += a * q[k]
        P[i, m] = -a
        P[m, i] = -a
    P[m, m] = inv
    return delta


@compiled_only
def lower_solve_t(U, m, b, out):
    """``out[:m] = L^{-1} b[:m]`` with the lower-triangular ``L`` stored transposed, ``U = L'``
    (upper triangular, row k of ``U`` is column k of ``L``).

    Column-oriented forward substitution, four columns at a time: once ``out[k:k+4]`` are known
    they are subtracted from every later entry in one loop over contiguous rows of ``U`` (the
    compiler vectorises it). Each entry receives the same operations in the same order as in the
    row-oriented substitution ``out[i] = (b[i] - sum_{k<i} L[i, k] out[k]) / L[i, i]`` (summed in
    order of k), so the two give the same bits.
    """
    for i in range(m):
        out[i] = b[i]
    k = 0
    while k + 4 <= m:
        o0 = out[k] / U[k, k]
        out[k] = o0
        o1 = (out[k + 1] - U[k, k + 1] * o0) / U[k + 1, k + 1]
        out[k + 1] = o1
        o2 = ((out[k + 2] - U[k, k + 2] * o0) - U[k + 1, k + 2] * o1) / U[k + 2, k + 2]
        out[k + 2] = o2
        o3 = (((out[k + 3] - U[k, k + 3] * o0) - U[k + 1, k + 3] * o1) - U[k + 2, k + 3] * o2) / U[k + 3, k + 3]
        out[k + 3] = o3
        rest = out[k + 4 : m]  # slices of equal length: the compiler vectorises this loop
        u0 = U[k, k + 4 : m]
        u1 = U[k + 1, k + 4 : m]
        u2 = U[k + 2, k + 4 : m]
        u3 = U[k + 3, k + 4 : m]
        for i in range(rest.shape[0]):
            rest[i] = (((rest[i] - u0[i] * o0) - u1[i] * o1) - u2[i] * o2) - u3[i] * o3
        k += 4
    while k < m:
        ok = out[k] / U[k, k]
        out[k] = ok
        rest = out[k + 1 : m]
        Uk = U[k, k + 1 : m]
        for i in range(rest.shape[0]):
            rest[i] -= Uk[i] * ok
        k += 1


# --------------------------------------------------------------------------- KORS
class KORSSettings(NamedTuple):
    """The Nyström dictionary grown by KORS (Calandriello et al. 2017), fixed for the chunk.

    gamma : float
        Gaussian kernel ``exp(-gamma ||x - x'||^2)``.
    mu, eps, beta : float
        KORS's ridge level, accuracy and oversampling factor (``p_t = min(beta tau_t, 1)``).
    sqrt_weight : bool
        Weight ``1 / sqrt(p)`` of an inserted point (``kors_weighting='inverse_sqrt_p'``), else ``1 / p``.
    rho_tol : float
        An insertion whose squared residual ``rho^2`` is below this is skipped (already in the span).
    max_m : int
        Budget on the dictionary size m (``max_components``).
    max_hist : int
        PKAWV: rows of history an insertion re-projects (the most recent ones; ``max_history``).
    kernel : int
        0: the Gaussian kernel (the only one KORS grows a dictionary for).
    """

    gamma: float
    mu: float
    eps: float
    beta: float
    sqrt_weight: bool
    rho_tol: float
    max_m: int
    max_hist: int
    kernel: int


@njit(inline="always")
def residual(kxx, a, b, m):
    """``max(0, kxx - a[:m]' b[:m])``: a kernel value less what a projection explains (the squared
    distance of ``phi(x)`` to a span, a posterior variance), clamped at 0 against rounding."""
    s2 = kxx
    for k in range(m):
        s2 -= a[k] * b[k]
    if s2 < 0.0:
        s2 = 0.0
    return s2


@njit(inline="always")
def kors_score(Ginv, m, wk, kxx, mu, eps, q):
    """KORS ridge-leverage-score estimate of a point against the weighted dictionary.

    ``wk = W k_D(x)`` (dictionary weights times kernel values), ``Ginv = (W K_DD W + mu I)^{-1}``.
    Returns ``(tau, s2)`` with ``s2 = k(x,x) - wk' Ginv wk`` and the closed form
    ``tau = (1 + eps) s2 / (s2 + mu)`` of the paper's ``(1+eps)/mu (k_tt - kbar' T^{-1} kbar)``;
    ``q`` is scratch (``q = Ginv wk`` on return).
    """
    sym_matvec(Ginv, m, wk, q)
    s2 = residual(kxx, wk, q, m)
    return (1.0 + eps) * s2 / (s2 + mu), s2


@njit(inline="always")
def kors_decide(kD, m, U, Ginv, w, mu, eps, beta, u_draw, phi, wk, q):
    """One KORS decision for a point whose Gaussian-kernel values against the dictionary are
    ``kD[:m]`` (``k(x, x) = 1``).

    Fills ``phi = L^{-1} kD`` (the embedding of ``x`` with the current dictionary, ``L L' = K_DD``,
    ``U = L'``), computes the KORS probability ``p = clip(beta tau, 0, 1)`` and returns
    ``(z, p, rho2)`` with ``z = u_draw < p`` the Bernoulli draw and ``rho2 = k(x, x) - phi' phi``
    the squared distance of ``phi(x)`` to the span of the dictionary (``wk``, ``q``: scratch of at
    least ``m`` entries; ``wk = W kD`` on return).
    """
    lower_solve_t(U, m, kD, phi)
    for k in range(m):
        wk[k] = w[k] * kD[k]
    tau, s2 = kors_score(Ginv, m, wk, 1.0, mu, eps, q)
    p = beta * tau
    if p > 1.0:
        p = 1.0
    elif not p > 0.0:
        p = 0.0
    rho2 = 1.0
    for k in range(m):
        rho2 -= phi[k] * phi[k]
    return u_draw < p, p, rho2


@njit(inline="always")
def kors_insert(m, U, Ginv, w, probs, mu, p, sqrt_weight, phi, rho, wk, q):
    """Add a point to the dictionary after a positive KORS draw (capacity ``> m`` and storing the
    point itself are the caller's).

    Appends the row ``(phi', rho)`` to ``L`` (the column ``(phi, rho)`` to ``U = L'``), the KORS
    weight ``1/p`` (or ``1/sqrt(p)`` when ``sqrt_weight``) and grows
    ``Ginv = (W K_DD W + mu I)^{-1}`` by the Schur complement. ``wk`` must still hold
    ``W k_D(x)``. Sets ``phi[m] = rho`` (the new coordinate of ``x``).
    """
    for k in range(m):
        U[k, m] = phi[k]
        U[m, k] = 0.0
    U[m, m] = rho
    wn = 1.0 / math.sqrt(p) if sqrt_weight else 1.0 / p
    for k in range(m):
        wk[k] *= wn
    inverse_append(Ginv, m, wk, wn * wn + mu, q)
    w[m] = wn
    probs[m] = p
    phi[m] = rho


# --------------------------------------------------------------------------- stores of points
class DenseStore(NamedTuple):
    """Where an online Nyström map keeps its points, dense layout: each point is a column (the loops over
    points are the inner ones and vectorise). The chunk's rows are a dense (n, d) array.

    XdT : (d, c_m) the dictionary points; XhT : (d, c_t) the rows of history (kept to re-project
    the past on an insertion).
    """

    XdT: np.ndarray
    XhT: np.ndarray


class SparseRows(NamedTuple):
    """The chunk's rows in CSR form (validated before the pass): ``data`` (nnz,) float64,
    ``indices`` (nnz,) int64, ``indptr`` (n + 1,) int64; ``n_features`` the width d."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    n_features: int


def sparse_rows(Z):
    """:class:`SparseRows` of a validated CSR matrix ``Z`` (float64 data, int64 index copies)."""
    return SparseRows(data=np.ascontiguousarray(Z.data, dtype=np.float64), indices=Z.indices.astype(np.int64),
                      indptr=Z.indptr.astype(np.int64), n_features=Z.shape[1])


class SparseStore(NamedTuple):
    """Where an online Nyström map keeps its points, sparse layout (wide inputs): each point is a sparse
    row. The chunk's rows are :class:`SparseRows`; a row is scattered into a dense work vector
    for its kernel values, ``k(x, c) = exp(-gamma (||x||^2 + ||c||^2 - 2 x'c))`` (O(nnz(c)) each).

    D_val, D_idx : (nnz capacity,) the dictionary points' entries (float64, int64), point j in
    ``D_ptr[j]:D_ptr[j + 1]`` (D_ptr (c_m + 1,) int64); D_sq : (c_m,) their squared norms; H_val,
    H_idx, H_ptr, H_sq: the same for the rows of history.
    """

    D_val: np.ndarray
    D_idx: np.ndarray
    D_ptr: np.ndarray
    D_sq: np.ndarray
    H_val: np.ndarray
    H_idx: np.ndarray
    H_ptr: np.ndarray
    H_sq: np.ndarray


@njit(inline="always")
def _sparse_append(val, idx, ptr, sq, pos, X, i, xsq):
    """Append row ``i`` of the CSR rows ``X`` as sparse point ``pos`` (capacity is the caller's)."""
    start = ptr[pos]
    k = start
    for p in range(X.indptr[i], X.indptr[i + 1]):
        val[k] = X.data[p]
        idx[k] = X.indices[p]
        k += 1
    ptr[pos + 1] = k
    sq[pos] = xsq


# Each store has its operations, chosen from the type of its record (overloads of the stubs):
#   n_rows(X)                                  rows of the chunk
#   store_row_begin(store, X, i, work) -> ||x||^2   (sparse: scatter row i into work)
#   store_row_end(store, X, i, work)                 (sparse: zero work again)
#   store_dict_fits(store, X, i, m), store_hist_fits(store, X, i, t) -> bool   room for row i
#   store_dict_kernel(store, kernel, X, i, m, gamma, xsq, work, e, out)
#   store_hist_kernel(store, X, i, n, gamma, xsq, work, e, out)
#   store_add_dict(store, X, i, m, xsq) ; store_add_hist(store, X, i, t, xsq)
def n_rows(X):
    """Rows of the chunk."""


def row_width(X):
    """Entries of a dense row (0 for CSR rows)."""


def new_work(X):
    """The dense work vector a CSR row is scattered into (empty for dense rows)."""


def store_row_begin(store, X, i, work):
    """Start row i: returns ``||x||^2`` (sparse layout, with row i scattered into ``work``)."""


def store_row_end(store, X, i, work):
    """End row i (sparse layout: ``work`` back to zeros)."""


def store_dict_fits(store, X, i, m):
    """Whether row i fits in the dictionary (as point m)."""


def store_hist_fits(store, X, i, t):
    """Whether row i fits in the history (as row t)."""


def store_dict_kernel(store, kernel, X, i, m, gamma, xsq, work, e, out):
    """``out[:m] = k(x_j, X[i])`` over the dictionary points (0 Gaussian, 1 linear kernel)."""


def store_hist_kernel(store, X, i, n, gamma, xsq, work, e, out):
    """``out[:n] = k(x_s, X[i])`` over the first n rows of history."""


def store_add_dict(store, X, i, m, xsq):
    """Row i becomes dictionary point m."""


def store_add_hist(store, X, i, t, xsq):
    """Row i becomes row t of the history."""


def _dense_n_rows(X):
    return X.shape[0]


def _dense_row_width(X):
    return X.shape[1]


def _dense_new_work(X):
    return np.zeros(0)


def _dense_row_begin(store, X, i, work):
    return 0.0


def _dense_row_end(store, X, i, work):
    pass


def _dense_dict_fits(store, X, i, m):
    return True


def _dense_hist_fits(store, X, i, t):
    return True


def _dense_dict_kernel(store, kernel, X, i, m, gamma, xsq, work, e, out):
    if kernel == 0:
        rbf_cols(store.XdT, m, X[i], gamma, e, out)
    else:
        linear_cols(store.XdT, m, X[i], out)


def _dense_hist_kernel(store, X, i, n, gamma, xsq, work, e, out):
    rbf_cols(store.XhT, n, X[i], gamma, e, out)


def _dense_store_dict(store, X, i, m, xsq):
    x = X[i]
    for j in range(x.shape[0]):
        store.XdT[j, m] = x[j]


def _dense_store_hist(store, X, i, t, xsq):
    x = X[i]
    for j in range(x.shape[0]):
        store.XhT[j, t] = x[j]


def _sparse_n_rows(X):
    return X.indptr.shape[0] - 1


def _sparse_row_width(X):
    return 0


def _sparse_new_work(X):
    return np.zeros(X.n_features)


def _sparse_row_begin(store, X, i, work):
    xsq = 0.0
    for p in range(X.indptr[i], X.indptr[i + 1]):
        v = X.data[p]
        work[X.indices[p]] = v
        xsq += v * v
    return xsq


def _sparse_row_end(store, X, i, work):
    for p in range(X.indptr[i], X.indptr[i + 1]):
        work[X.indices[p]] = 0.0


def _sparse_dict_fits(store, X, i, m):
    return store.D_ptr[m] + (X.indptr[i + 1] - X.indptr[i]) <= store.D_val.shape[0]


def _sparse_hist_fits(store, X, i, t):
    return store.H_ptr[t] + (X.indptr[i + 1] - X.indptr[i]) <= store.H_val.shape[0]


def _sparse_dict_kernel(store, kernel, X, i, m, gamma, xsq, work, e, out):
    rbf_sparse_rows(store.D_val, store.D_idx, store.D_ptr, store.D_sq, m, work, xsq, gamma, e, out)


def _sparse_hist_kernel(store, X, i, n, gamma, xsq, work, e, out):
    rbf_sparse_rows(store.H_val, store.H_idx, store.H_ptr, store.H_sq, n, work, xsq, gamma, e, out)


def _sparse_store_dict(store, X, i, m, xsq):
    _sparse_append(store.D_val, store.D_idx, store.D_ptr, store.D_sq, m, X, i, xsq)


def _sparse_store_hist(store, X, i, t, xsq):
    _sparse_append(store.H_val, store.H_idx, store.H_ptr, store.H_sq, t, X, i, xsq)


def _is(typ, record):
    """Whether the numba type ``typ`` is that of the named tuple class ``record``."""
    return isinstance(typ, types.BaseNamedTuple) and typ.instance_class is record


_STORE_OPS = {
    "dense": (_dense_row_begin, _dense_row_end, _dense_dict_fits, _dense_dict_kernel, _dense_hist_kernel,
              _dense_store_dict, _dense_store_hist, _dense_hist_fits),
    "sparse": (_sparse_row_begin, _sparse_row_end, _sparse_dict_fits, _sparse_dict_kernel, _sparse_hist_kernel,
               _sparse_store_dict, _sparse_store_hist, _sparse_hist_fits),
}


def _store_op(store, k):
    if _is(store, DenseStore):
        return _STORE_OPS["dense"][k]
    if _is(store, SparseStore):
        return _STORE_OPS["sparse"][k]
    return None


@overload(n_rows, jit_options=OVERLOAD_OPTIONS)
def _n_rows_impl(X):
    return _sparse_n_rows if _is(X, SparseRows) else _dense_n_rows


@overload(row_width, jit_options=OVERLOAD_OPTIONS)
def _row_width_impl(X):
    return _sparse_row_width if _is(X, SparseRows) else _dense_row_width


@overload(new_work, jit_options=OVERLOAD_OPTIONS)
def _new_work_impl(X):
    return _sparse_new_work if _is(X, SparseRows) else _dense_new_work


@overload(store_row_begin, jit_options=OVERLOAD_OPTIONS)
def _row_begin_impl(store, X, i, work):
    return _store_op(store, 0)


@overload(store_row_end, jit_options=OVERLOAD_OPTIONS)
def _row_end_impl(store, X, i, work):
    return _store_op(store, 1)


@overload(store_dict_fits, jit_options=OVERLOAD_OPTIONS)
def _dict_fits_impl(store, X, i, m):
    return _store_op(store, 2)


@overload(store_hist_fits, jit_options=OVERLOAD_OPTIONS)
def _hist_fits_impl(store, X, i, t):
    return _store_op(store, 7)


@overload(store_dict_kernel, jit_options=OVERLOAD_OPTIONS)
def _dict_kernel_impl(store, kernel, X, i, m, gamma, xsq, work, e, out):
    return _store_op(store, 3)


@overload(store_hist_kernel, jit_options=OVERLOAD_OPTIONS)
def _hist_kernel_impl(store, X, i, n, gamma, xsq, work, e, out):
    return _store_op(store, 4)


@overload(store_add_dict, jit_options=OVERLOAD_OPTIONS)
def _store_dict_impl(store, X, i, m, xsq):
    return _store_op(store, 5)


@overload(store_add_hist, jit_options=OVERLOAD_OPTIONS)
def _store_hist_impl(store, X, i, t, xsq):
    return _store_op(store, 6)


#: first capacities of the growing buffers (doubled when full; a deterministic function of the
#: stream, so any chunking of the stream gives the same buffers); CAP_NNZ: entries per point of the
#: sparse layout
CAP_ROWS = 256
CAP_COMPONENTS = 16
CAP_NNZ = 64
#: from this many features on, an online Nyström map keeps its points in the sparse layout
#: (:class:`SparseStore`; a decision from the shape only, never from the container of the rows)
SPARSE_LAYOUT_MIN_FEATURES = 4096


def rbf_matrix_sparse(Z, C, c_sq, gamma):
    """Gaussian kernel matrix (n, m) of the CSR rows ``Z`` against the CSR points ``C`` (squared
    norms ``c_sq``): ``exp(-gamma (||z||^2 + ||c||^2 - 2 z'c))``, the distance floored at 0."""
    z_sq = np.asarray(Z.multiply(Z).sum(axis=1)).ravel()
    dist = z_sq[:, None] + c_sq[None, :] - 2.0 * (Z @ C.T).toarray()
    return np.exp(-gamma * np.maximum(dist, 0.0))


class KORSDictionaryMixin:
    """Public views of a dictionary grown by KORS (OnlineNystroem, PKAWV with features='nystrom').

    The estimator keeps the dictionary in preallocated buffers ``_dict_XT_`` (points as columns),
    ``_dict_idx_``,
    ``_kors_w_`` and ``_kors_p_``, of which the first ``_dictionary_size()`` rows are in use. The
    hook ``_dictionary_size()`` checks that the estimator is fitted (and has a dictionary; raise
    ``AttributeError`` otherwise) and returns that size. The views are copies.
    """

    def _dictionary_size(self):
        raise NotImplementedError

    def _dictionary_view(self, name):
        return getattr(self, name)[: self._dictionary_size()].copy()

    @property
    def components_(self):
        """Dictionary points, shape ``(n_components_, n_features)``."""
        return self._dict_XT_[:, : self._dictionary_size()].T.copy()

    @property
    def component_indices_(self):
        """Stream positions (0-based) of the dictionary points."""
        return self._dictionary_view("_dict_idx_")

    @property
    def component_weights_(self):
        """KORS weights of the dictionary points."""
        return self._dictionary_view("_kors_w_")

    @property
    def component_probabilities_(self):
        """KORS inclusion probabilities of the dictionary points."""
        return self._dictionary_view("_kors_p_")
