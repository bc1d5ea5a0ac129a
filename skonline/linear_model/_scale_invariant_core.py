"""Compiled cores of Kotłowski's scale-invariant online learners (ALT 2017).

Algorithm 1 (coordinate-wise invariance, O(nnz) per row) and Algorithm 2 (full invariance,
O(d^2) per row through a rank-one update of the pseudo-inverse, paper App. E). Every pass runs
the prequential protocol for ``n_heads`` one-vs-rest heads that share the feature statistics:
for each row, predict with each head, take the loss derivative, update.

Internal scaling ('first'): each feature is divided by the absolute value of its first nonzero
value, a fixed diagonal map over the whole stream, so it changes no prediction in exact arithmetic
while keeping squares of values near 1e-150 or 1e150 representable. ``scale[j] == 0`` means feature j
has not been seen yet; with internal scaling off the scale is fixed to 1.

Each pass adds the loss of every prequential prediction, times the row's weight ``sw[i]``, to
``loss_acc[0]``, in row order; the weight also multiplies the loss derivative (``sw`` is all ones
without sample weights).

Status: each pass returns -1, or the index of the first row at which a prediction became non-finite
(the caller discards its working copy and raises); the full pass returns -2 - i when row i would
break the float64 precision of the pseudo-inverse (``BETA_MAX``).
"""

import math
from typing import NamedTuple

import numpy as np

from ..losses import loss_and_derivative
from ..utils._jit import compiled_only, njit
from ..utils._math import exp_fused, fast_dot

E_MAX = 700.0  # clamp for exponents of the potentials (exp(700) ~ 1e304)


@njit(inline="always")
def _unscale(x, s):
    """``x / s`` as ``x * (1 / s)`` (the historical rounding), or by division when ``1 / s``
    overflows (a subnormal scale: the data are tiny, not huge)."""
    inv = 1.0 / s
    if inv < math.inf:
        return x * inv
    return x / s


@njit(inline="always")
def _clamp(e, clamped):
    if e > E_MAX:
        clamped[0] += 1
        return E_MAX
    return e


# --------------------------------------------------------------------------- Algorithm 1
# For the coordinates present in a row, each pass fills zb (internal value z_j) and ib (1 / s^2_{t,j},
# with s^2_{t,j} including the current row); each head's prediction is then one vectorised loop over
# the row (exponent, exp, term) and one sum (_coord_predict).

#: a weight exp(E) h / (s^2 alpha t D) with E <= SAFE_EXPONENT (exp(600) ~ 3.8e260) and
#: |h| <= SAFE_RATIO s^2 min(scale, 1) is below 1e291 in internal and in feature units: finite
SAFE_EXPONENT = 600.0
SAFE_RATIO = 1e30


class Touched(NamedTuple):
    """The columns a coordinate pass over CSR rows writes, and what it proved about their weights.

    The pass appends the column of each non-zero of the chunk (and ``n_features`` once per row for
    the intercept) before it updates it: the estimator then refreshes only those columns of its
    next working copy (:mod:`skonline.utils._recycle`) and checks only those weights.

    cols : ndarray of shape (capacity,), int64
        Column of each entry (the intercept's is ``n_features``). Capacity 0: nothing is logged
        (every column counts as written).
    count : ndarray of shape (1,), int64
        Entries written.
    n_unsure : ndarray of shape (1,), int64
        (Row, head) updates after which the pass could not prove the weights of the row's columns
        finite without evaluating them (see ``SAFE_EXPONENT``); the estimator then checks the
        logged columns (every column without a log) exactly.
    feature_units : bool
        Whether the weights must also be finite in the units of the features (divided by the
        scale: ``predict_mode='linear'``).
    """

    cols: np.ndarray
    count: np.ndarray
    n_unsure: np.ndarray
    feature_units: bool


@compiled_only(fastmath={"reassoc"})
def _sum_buffer(xb, m):
    """``sum_q xb[q]``, vectorised (the order of the terms is the compiled code's, fixed: the same
    for every chunking). A function of its own: its flag must not reach the exp's range reduction."""
    p = 0.0
    for q in range(m):
        p += xb[q]
    return p


@njit(inline="always")
def _coord_predict(m, hb, zb, ib, half_a, xb, inv_atd, clamped):
    """One head's prediction from the gathered coordinates: sum_q exp(E_q) h_q z_q / s^2_q / (alpha t D)
    with ``E_q = min((h_q^2 + z_q^2) / (2 alpha s^2_q), E_MAX)``.

    One loop computes each term (exponent, exp, product) into ``xb`` -- it vectorises: the exp is
    :func:`~skonline.utils._math.exp_fused`, inlined, no buffer between the steps -- and
    :func:`_sum_buffer` adds the terms.
    """
    n_big = 0
    for q in range(m):
        hq = hb[q]
        z = zb[q]
        iv = ib[q]
        e = (hq * hq + z * z) * (iv * half_a)
        n_big += e > E_MAX
        e = min(e, E_MAX)
        xb[q] = exp_fused(e) * hq * z * iv
    clamped[0] += n_big
    return _sum_buffer(xb, m) * inv_atd


@njit(inline="always")
def _coord_gradient(loss, y, p, w, lip, loss_acc):
    """The row's weighted loss into ``loss_acc``; returns its derivative, weighted, over L."""
    lv, g = loss_and_derivative(loss, y, p)
    loss_acc[0] += w * lv
    return g * (w / lip)


@njit
def coordinate_pass_dense(X, Y, sw, t0, fit_intercept, use_scaling, alpha, loss, lip,
                          s2, h, scale, out, clamped, loss_acc):
    """Algorithm 1 on dense rows: every coordinate, branch-free (z_j = 0 adds nothing).

    The loops over the coordinates of a row are written to vectorise: the scale check runs only
    while some feature has no scale yet, and the division by a subnormal scale (whose inverse
    overflows) only once such a scale exists. With one head (binary classification, regression)
    and no subnormal scale, one loop computes each coordinate's internal value, ``s^2``, ``1 / s^2``
    and term of the prediction (the operations of :func:`_coord_predict`, in its order: the same
    bits), instead of three loops over the row: about 20 % of the pass at 1,000 features.
    """
    n, d = X.shape
    D = d + 1 if fit_intercept else d
    zb = np.zeros(D)
    ib = np.zeros(D)
    xb = np.empty(D)
    half_a = 0.5 / alpha
    inv_scale = np.ones(d)
    n_unset = 0  # features without a scale yet (internal scaling)
    subnormal = False  # a scale whose inverse overflows: divide instead
    if use_scaling:
        for j in range(d):
            if scale[j] > 0.0:
                inv_scale[j] = 1.0 / scale[j]
                subnormal |= not inv_scale[j] < math.inf
            else:
                inv_scale[j] = 0.0
                n_unset += 1
    for i in range(n):
        if n_unset > 0:
            for j in range(d):  # the first nonzero value of a feature fixes its scale
                if X[i, j] != 0.0 and scale[j] == 0.0:
                    scale[j] = abs(X[i, j])
                    inv_scale[j] = 1.0 / scale[j]
                    subnormal |= not inv_scale[j] < math.inf
                    n_unset -= 1
        inv_atd = 1.0 / (alpha * (t0 + i + 1) * D)
        one_head = h.shape[0] == 1 and not subnormal
        if one_head:
            # one loop: internal value, s^2 (with this row), 1 / s^2 and the head's term, the
            # term written out as in _coord_predict (the same bits; an inlined helper shared
            # with _coord_predict, returning the term and the clamp flag, made this pass about
            # 10 % slower at 1,000 features: measured, not kept)
            hk = h[0]
            n_big = 0
            for j in range(d):
                z = X[i, j] * inv_scale[j]
                zb[j] = z
                sj = s2[j] + z * z
                s2[j] = sj
                iv = 1.0 / sj if sj > 0.0 else 0.0
                ib[j] = iv
                hq = hk[j]
                e = (hq * hq + z * z) * (iv * half_a)
                n_big += e > E_MAX
                e = min(e, E_MAX)
                xb[j] = exp_fused(e) * hq * z * iv
            if fit_intercept:
                s2[d] += 1.0
                zb[d] = 1.0
                iv = 1.0 / s2[d]
                ib[d] = iv
                hq = hk[d]
                e = (hq * hq + 1.0) * (iv * half_a)
                n_big += e > E_MAX
                e = min(e, E_MAX)
                xb[d] = exp_fused(e) * hq * 1.0 * iv
            clamped[0] += n_big
        else:
            if subnormal:
                for j in range(d):
                    iv_s = inv_scale[j]
                    zb[j] = X[i, j] * iv_s if iv_s < math.inf else X[i, j] / scale[j]
            else:
                for j in range(d):
                    zb[j] = X[i, j] * inv_scale[j]
            for j in range(d):
                z = zb[j]
                sj = s2[j] + z * z  # s^2_{t,j} includes the current instance
                s2[j] = sj
                ib[j] = 1.0 / sj if sj > 0.0 else 0.0
            if fit_intercept:
                s2[d] += 1.0
                zb[d] = 1.0
                ib[d] = 1.0 / s2[d]
        for k in range(h.shape[0]):
            hk = h[k]
            if one_head:
                p = _sum_buffer(xb, D) * inv_atd
            else:
                p = _coord_predict(D, hk, zb, ib, half_a, xb, inv_atd, clamped)
            out[i, k] = p
            if not math.isfinite(p):
                return i
            g = _coord_gradient(loss, Y[i, k], p, sw[i], lip, loss_acc)
            for q in range(D):
                hk[q] -= g * zb[q]
    return -1


@njit
def coordinate_pass_csr(data, indices, indptr, d, Y, sw, t0, fit_intercept, use_scaling, alpha, loss,
                        lip, s2, h, scale, out, clamped, loss_acc, log):
    """Algorithm 1 on CSR rows: O(nnz) per row (absent coordinates neither predict nor move).

    Per row: the present coordinates are gathered (their columns logged in ``log``, a
    :class:`Touched`), the arithmetic runs on the gathered buffers (vectorised), and ``h`` is
    scattered back, each new value tested against the cheap finiteness bound.
    """
    n = indptr.shape[0] - 1
    H = h.shape[0]
    D = d + 1 if fit_intercept else d
    w = 1  # the buffers hold the longest row (and the intercept), not D entries
    for i in range(n):
        w = max(w, indptr[i + 1] - indptr[i] + 1)
    w = min(w, D)
    zb = np.empty(w)
    ib = np.empty(w)
    sb = np.empty(w)
    hb = np.empty(w)
    xb = np.empty(w)
    jb = np.empty(w, dtype=np.int64)
    lb = np.empty(w)  # min(scale, 1) of each gathered column in feature units, else 1
    half_a = 0.5 / alpha
    inv_elim = 1.0 / (2.0 * SAFE_EXPONENT * alpha)
    inv_ratio = 1.0 / SAFE_RATIO
    feature_units = log.feature_units
    logs = log.cols.shape[0] > 0
    u = log.count[0]
    unsure = 0
    for i in range(n):
        # the row's loads first, in a loop of their own: independent, they overlap (on a wide
        # stream most of them miss the cache), then the arithmetic on the gathered values
        m = 0
        for q in range(indptr[i], indptr[i + 1]):
            x = data[q]
            if x == 0.0:
                continue
            j = indices[q]
            jb[m] = j
            zb[m] = x
            lb[m] = scale[j]
            sb[m] = s2[j]
            hb[m] = h[0, j]
            m += 1
        for r in range(m):
            j = jb[r]
            x = zb[r]
            if logs:
                log.cols[u] = j
                u += 1
            sc = lb[r]
            if use_scaling:
                if sc == 0.0:
                    sc = abs(x)
                    scale[j] = sc
                z = _unscale(x, sc)
            else:
                z = x
            sj = sb[r] + z * z
            s2[j] = sj
            zb[r] = z
            sb[r] = sj
            ib[r] = 1.0 / sj
            lb[r] = min(sc, 1.0) if feature_units else 1.0
        if fit_intercept:
            if logs:
                log.cols[u] = d
                u += 1
            s2[d] += 1.0
            zb[m] = 1.0
            sb[m] = s2[d]
            ib[m] = 1.0 / s2[d]
            jb[m] = d
            hb[m] = h[0, d]
            lb[m] = 1.0
            m += 1
        log.count[0] = u
        inv_atd = 1.0 / (alpha * (t0 + i + 1) * D)
        for k in range(H):
            if k > 0:  # head 0 was gathered with the row
                for q in range(m):
                    hb[q] = h[k, jb[q]]
            p = _coord_predict(m, hb, zb, ib, half_a, xb, inv_atd, clamped)
            out[i, k] = p
            if not math.isfinite(p):
                log.n_unsure[0] += unsure
                return i
            g = _coord_gradient(loss, Y[i, k], p, sw[i], lip, loss_acc)
            for q in range(m):
                hb[q] -= g * zb[q]
            # the weight's exponent is (h^2 [+1]) / (2 alpha s^2) and |weight| <= e^E |h| / s^2 (in
            # feature units, / scale): both bounded here without evaluating the exp (NaN fails)
            worst = 0.0  # the largest of the two ratios to their bounds (<= 1: proved finite)
            for q in range(m):
                hq = hb[q]
                r = max((hq * hq + 1.0) * ib[q] * inv_elim, abs(hq) * ib[q] * inv_ratio / lb[q])
                worst = max(worst, r) + 0.0 * (hq + sb[q])  # a NaN or inf in h or s^2 propagates
            unsure += not (worst <= 1.0)
            for q in range(m):
                h[k, jb[q]] = hb[q]
    log.n_unsure[0] += unsure
    return -1


@njit
def coordinate_predict_online(X, t_next, d_aug, fit_intercept, alpha, s2, h, scale, out):
    """What round ``t_next`` would predict on each row of X, state frozen (paper's w_t(x))."""
    n, d = X.shape
    two_a = 2.0 * alpha
    inv = 1.0 / (alpha * t_next * d_aug)
    for i in range(n):
        for k in range(h.shape[0]):
            p = 0.0
            for j in range(d):
                x = X[i, j]
                if x == 0.0 or h[k, j] == 0.0:
                    continue
                z = _unscale(x, scale[j]) if scale[j] > 0.0 else x
                s = s2[j] + z * z
                e = min((h[k, j] * h[k, j] + z * z) / (two_a * s), E_MAX)
                p += math.exp(e) * h[k, j] * z / s
            if fit_intercept and h[k, d] != 0.0:
                s = s2[d] + 1.0
                e = min((h[k, d] * h[k, d] + 1.0) / (two_a * s), E_MAX)
                p += math.exp(e) * h[k, d] / s
            out[i, k] = p * inv


# --------------------------------------------------------------------------- Algorithm 2
@njit(inline="always")
def _project_out(z, U, r, xp):
    """``xp = (I - U U') z`` over the first ``r`` columns of ``U``, applied twice (classical
    Gram-Schmidt with one re-orthogonalisation pass); returns ``||xp||^2``."""
    D = z.shape[0]
    for a in range(D):
        xp[a] = z[a]
    for _ in range(2):
        for c in range(r):
            s = 0.0
            for a in range(D):
                s += U[a, c] * xp[a]
            for a in range(D):
                xp[a] -= s * U[a, c]
    n2 = 0.0
    for a in range(D):
        n2 += xp[a] * xp[a]
    return n2


class FullState(NamedTuple):
    """Algorithm 2's state (internal units, intercept last; D columns, H heads).

    P : ndarray of shape (D, D)
        S^dagger, exactly symmetric (every update is written symmetrically).
    U : ndarray of shape (D, D)
        Orthonormal basis of range(S) in its first ``rank[0]`` columns.
    rank : ndarray of shape (1,), int64
    h : ndarray of shape (H, D)
        h = -sum g x per head.
    Ph : ndarray of shape (H, D)
        P h per head, updated with P and h (O(D) per row and head instead of a D x D product)
        and recomputed from them every ``PH_REFRESH`` rows of the stream and after each new
        direction.
    gamma : ndarray of shape (H,)
        Gamma = sum g^2 x' S^dagger x per head.
    """

    P: np.ndarray
    U: np.ndarray
    rank: np.ndarray
    h: np.ndarray
    Ph: np.ndarray
    gamma: np.ndarray


#: Algorithm 2: a row with 1 + x'S^dagger x above this (2^46 ~ 7e13: the update P - u u' / beta
#: would keep about 1 % of the precision of P in the row's direction, less beyond) is rejected:
#: float64 cannot represent that update (one value many orders of magnitude beyond the rows before
#: it); the full pass returns -2 - i for row i
BETA_MAX = 2.0**46
#: rows of the stream between two recomputations of ``FullState.Ph`` from P and h (at absolute
#: row positions: the same for any chunking), so that its rounding drift stays bounded
PH_REFRESH = 1024


@njit(inline="always")
def _refresh_ph(P, h, Ph):
    """Ph[k] = P h[k] (P symmetric: a sum of the rows of P, vectorised)."""
    D = P.shape[0]
    for k in range(h.shape[0]):
        for a in range(D):
            Ph[k, a] = 0.0
        for b in range(D):
            hb = h[k, b]
            if hb != 0.0:
                for a in range(D):
                    Ph[k, a] += hb * P[b, a]


@njit(inline="always")
def _internal_row(X, i, scale, inv_scale, n_unset, fit_intercept, z):
    """Row ``i`` of ``X`` in internal units into ``z`` (intercept last), setting the scale of its
    features seen for the first time; returns the number of features still without a scale."""
    d = X.shape[1]
    if n_unset > 0:
        for j in range(d):
            x = X[i, j]
            if x != 0.0 and scale[j] == 0.0:
                scale[j] = abs(x)
                inv_scale[j] = 1.0 / scale[j]
                n_unset -= 1
    for j in range(d):
        x = X[i, j]
        iv = inv_scale[j]
        z[j] = x * iv if iv < math.inf else x / scale[j]
    if fit_intercept:
        z[z.shape[0] - 1] = 1.0
    return n_unset


@njit
def full_pass(X, Y, sw, t0, fit_intercept, use_scaling, alpha, loss, lip, rank_tol, st, scale,
              out, clamped, loss_acc, work):
    """Algorithm 2 with the O(d^2) pseudo-inverse update (paper App. E).

    ``st`` is the :class:`FullState`. A row in range(S) costs what a bare Sherman-Morrison update
    of P costs: u = P z (a sum of rows of P, vectorised), the rank-one update, and O(D) per head
    for x'S^dagger h, h'S^dagger h (read from ``st.Ph``) and the update of ``st.Ph``:
    P' h' = (P - u u' / beta)(h - g z) = P h - ((z'P h + g) / beta) u. ``work``: a scratch array
    of ``2 n_heads + n_features`` entries.

    One sweep over P per row: the rank-one update of row t computes, row by row of the updated
    P, the next row's u = P z (the same products summed in the same order as on their own, so
    the same bits: a chunk's first row, computed on its own, gets what any chunking gives). The
    row vectors are allocated here, not taken from ``work``: the compiler then knows they share
    no memory with P and vectorises the sweeps without overlap checks (about 20 % of the pass at
    10 to 100 features).
    """
    n, d = X.shape
    P, U, rank, h, Ph, gamma = st.P, st.U, st.rank, st.h, st.Ph, st.gamma
    D = P.shape[0]
    n_heads = h.shape[0]
    z = np.empty(D)
    u = np.empty(D)
    xp = np.empty(D)
    zn = np.empty(D)  # the next row's z and u, computed with this row's update (fused)
    un = np.empty(D)
    fused = False
    g = work[:n_heads]
    cs = work[n_heads:2 * n_heads]
    two_a = 2.0 * alpha
    # internal units: x / scale as x * (1 / scale), the inverses computed once (a subnormal scale,
    # whose inverse overflows, divides); features without a scale yet are checked row by row
    inv_scale = work[2 * n_heads:2 * n_heads + d]
    n_unset = 0
    for j in range(d):
        inv_scale[j] = 1.0
        if use_scaling:
            if scale[j] > 0.0:
                inv_scale[j] = 1.0 / scale[j]
            else:
                n_unset += 1
    for i in range(n):
        # internal (scaled) instance, and u = P z: computed with the previous row's update, or here
        if fused:
            z, zn = zn, z
            u, un = un, u
        else:
            n_unset = _internal_row(X, i, scale, inv_scale, n_unset, fit_intercept, z)
        next_fused = False
        zz = fast_dot(z, z, D)
        # x_t = 0: every head predicts 0 and nothing is learned (g * x = 0)
        skip = zz == 0.0
        beta = 1.0
        r = rank[0]
        n2 = 0.0
        new = False
        if not skip:
            # u = P z = sum_b z_b P[b, :] (P symmetric), beta = 1 + z'u
            if not fused:
                for a in range(D):
                    u[a] = 0.0
                for b in range(D):
                    zb = z[b]
                    if zb != 0.0:
                        for a in range(D):
                            u[a] += zb * P[b, a]
            beta += fast_dot(z, u, D)
            if beta > BETA_MAX:  # P - u u' / beta would cancel to rounding noise: reject the row
                return -2 - i
            # x_perp = (I - U U') z, twice for re-orthogonalisation (once S has full rank, no row
            # can bring a new direction and the projection is skipped)
            if r < D:
                n2 = _project_out(z, U, r, xp)
            # a new direction when ||x_perp|| > rank_tol ||x|| (norms: rounding leaves ~1e-16 ||x||)
            new = r < D and n2 > rank_tol * rank_tol * zz
        for k in range(n_heads):
            p = 0.0  # x_t = 0, or x_t outside range(S_{t-1}): x_t' S_t^dagger h_{t-1} = 0
            c = 0.0
            if not (skip or new):
                # rho = h'P h; c = z'P h = u'h
                rho = fast_dot(h[k], Ph[k], D)
                c = fast_dot(z, Ph[k], D)
                e = _clamp((rho - c * c / beta - gamma[k]) / two_a, clamped)
                p = math.exp(e) * c / (alpha * beta)
            cs[k] = c
            out[i, k] = p
            if not math.isfinite(p):
                return i
            lv, gk = loss_and_derivative(loss, Y[i, k], p)
            loss_acc[0] += sw[i] * lv
            g[k] = sw[i] * gk / lip
        if skip:
            fused = False
            continue
        if new:
            inv_n2 = 1.0 / n2
            bb = beta * inv_n2 * inv_n2
            for a in range(D):
                for b in range(D):
                    P[a, b] += -(u[a] * xp[b] + xp[a] * u[b]) * inv_n2 + bb * (xp[a] * xp[b])
            nrm = math.sqrt(n2)
            for a in range(D):
                U[a, r] = xp[a] / nrm
            rank[0] = r + 1
            lev = 1.0
        else:
            # P <- P - u u' / beta, as P - w w' with w = u / sqrt(beta): symmetric bit for bit
            sb = 1.0 / math.sqrt(beta)
            for a in range(D):
                xp[a] = u[a] * sb
            if i + 1 < n:  # the update, and the next row's u = P z as a sum of the rows of P
                n_unset = _internal_row(X, i + 1, scale, inv_scale, n_unset, fit_intercept, zn)
                for a in range(D):
                    un[a] = 0.0
                for a in range(D):
                    wa = xp[a]
                    za = zn[a]
                    if za != 0.0:
                        for b in range(D):
                            pab = P[a, b] - wa * xp[b]
                            P[a, b] = pab
                            un[b] += za * pab
                    else:
                        for b in range(D):
                            P[a, b] -= wa * xp[b]
                next_fused = True
            else:
                for a in range(D):
                    wa = xp[a]
                    for b in range(D):
                        P[a, b] -= wa * xp[b]
            lev = (beta - 1.0) / beta
            for k in range(n_heads):
                f = (cs[k] + g[k]) / beta
                for a in range(D):
                    Ph[k, a] -= f * u[a]
        for k in range(n_heads):
            gamma[k] += g[k] * g[k] * lev
            if g[k] != 0.0:
                for a in range(D):
                    h[k, a] -= g[k] * z[a]
        if new or (t0 + i + 1) % PH_REFRESH == 0:
            _refresh_ph(P, h, Ph)
        fused = next_fused
    return -1


@njit
def full_predict_online(X, fit_intercept, alpha, rank_tol, P, U, rank, h, gamma, scale, out):
    """What the next round would predict on each row of X, state frozen."""
    n, d = X.shape
    D = P.shape[0]
    z = np.zeros(D)
    xp = np.empty(D)
    Ph = h @ P  # P is symmetric: rows are P h_k
    r = rank[0]
    for i in range(n):
        zz = 0.0
        for j in range(d):
            x = X[i, j]
            if x != 0.0 and scale[j] > 0.0:
                x = _unscale(x, scale[j])
            z[j] = x
            zz += x * x
        if fit_intercept:
            z[D - 1] = 1.0
            zz += 1.0
        n2 = _project_out(z, U, r, xp)
        if zz == 0.0 or (r < D and n2 > rank_tol * rank_tol * zz):
            for k in range(h.shape[0]):
                out[i, k] = 0.0
            continue
        beta = 1.0
        for a in range(D):
            s = 0.0
            for b in range(D):
                s += P[a, b] * z[b]
            beta += z[a] * s
        for k in range(h.shape[0]):
            rho = 0.0
            c = 0.0
            for a in range(D):
                rho += h[k, a] * Ph[k, a]
                c += z[a] * Ph[k, a]
            e = min((rho - c * c / beta - gamma[k]) / (2.0 * alpha), E_MAX)
            out[i, k] = math.exp(e) * c / (alpha * beta)
