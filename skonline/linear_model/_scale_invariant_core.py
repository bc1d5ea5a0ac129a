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
(the caller discards its working copy and raises).
"""

import math

import numpy as np

from ..losses import loss_and_derivative
from ..utils._jit import njit
from ..utils._math import exp_buffer

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
# Both drivers fill, for the m coordinates present in the row: zb (internal value z_j), ib
# (1 / s^2_{t,j}, with s^2_{t,j} including the current row), cb (ib / (2 alpha)) and, for CSR, jb
# (column); each head's prediction is then one vectorised exp over the row (_coord_head).


@njit(inline="always")
def _coord_head(m, zb, ib, cb, hb, eb, xb, inv_atd):
    """Prediction of one head from the coordinates' h (``hb``), z, 1/s^2 and 1/(2 alpha s^2).

    Returns the prediction and how many exponents were clamped at E_MAX (exponents are >= 0).
    """
    n_big = 0
    for q in range(m):
        e = (hb[q] * hb[q] + zb[q] * zb[q]) * cb[q]
        n_big += e > E_MAX
        eb[q] = min(e, E_MAX)
    exp_buffer(eb, xb, m)
    p = 0.0
    for q in range(m):
        p += xb[q] * hb[q] * zb[q] * ib[q]
    return p * inv_atd, n_big


@njit(inline="always")
def _coord_heads_sparse(m, jb, zb, ib, cb, hb, eb, xb, inv_atd, Y_row, w, loss, lip,
                        h, out_row, clamped, loss_acc):
    """Predict and update every head on one CSR row (coordinates gathered in jb)."""
    for k in range(h.shape[0]):
        for q in range(m):
            hb[q] = h[k, jb[q]]
        p, n_big = _coord_head(m, zb, ib, cb, hb, eb, xb, inv_atd)
        clamped[0] += n_big
        out_row[k] = p
        if not math.isfinite(p):
            return False
        lv, g = loss_and_derivative(loss, Y_row[k], p)
        loss_acc[0] += w * lv
        g *= w / lip
        if g != 0.0:
            for q in range(m):
                h[k, jb[q]] -= g * zb[q]
    return True


@njit
def coordinate_pass_dense(X, Y, sw, t0, fit_intercept, use_scaling, alpha, loss, lip,
                          s2, h, scale, out, clamped, loss_acc):
    """Algorithm 1 on dense rows: every coordinate, branch-free (z_j = 0 adds nothing).

    The loops are written out (no helper with runtime flags inside the hot loops): this lets the
    compiler vectorise them, about twice as fast as the gathered CSR form on dense data.
    """
    n, d = X.shape
    D = d + 1 if fit_intercept else d
    zb = np.zeros(D)
    ib = np.zeros(D)
    cb = np.zeros(D)
    eb = np.empty(D)
    xb = np.empty(D)
    half_a = 0.5 / alpha
    inv_scale = np.ones(d)
    if use_scaling:
        for j in range(d):
            inv_scale[j] = 1.0 / scale[j] if scale[j] > 0.0 else 0.0
    for i in range(n):
        if use_scaling:
            for j in range(d):  # the first nonzero value of a feature fixes its scale
                if X[i, j] != 0.0 and scale[j] == 0.0:
                    scale[j] = abs(X[i, j])
                    inv_scale[j] = 1.0 / scale[j]
        for j in range(d):
            iv_s = inv_scale[j]  # 1/scale overflows for a subnormal scale: divide instead
            z = X[i, j] * iv_s if iv_s < math.inf else X[i, j] / scale[j]
            sj = s2[j] + z * z  # s^2_{t,j} includes the current instance
            s2[j] = sj
            zb[j] = z
            iv = 1.0 / sj if sj > 0.0 else 0.0
            ib[j] = iv
            cb[j] = iv * half_a
        if fit_intercept:
            s2[d] += 1.0
            zb[d] = 1.0
            ib[d] = 1.0 / s2[d]
            cb[d] = ib[d] * half_a
        inv_atd = 1.0 / (alpha * (t0 + i + 1) * D)
        for k in range(h.shape[0]):
            hk = h[k]
            n_big = 0
            for q in range(D):
                e = (hk[q] * hk[q] + zb[q] * zb[q]) * cb[q]
                n_big += e > E_MAX
                eb[q] = min(e, E_MAX)
            clamped[0] += n_big
            exp_buffer(eb, xb, D)
            p = 0.0
            for q in range(D):
                p += xb[q] * hk[q] * zb[q] * ib[q]
            p *= inv_atd
            out[i, k] = p
            if not math.isfinite(p):
                return i
            lv, g = loss_and_derivative(loss, Y[i, k], p)
            loss_acc[0] += sw[i] * lv
            g *= sw[i] / lip
            for q in range(D):
                hk[q] -= g * zb[q]
    return -1


@njit
def coordinate_pass_csr(data, indices, indptr, d, Y, sw, t0, fit_intercept, use_scaling, alpha, loss,
                        lip, s2, h, scale, out, clamped, loss_acc):
    """Algorithm 1 on CSR rows: O(nnz) per row (absent coordinates neither predict nor move)."""
    n = indptr.shape[0] - 1
    D = d + 1 if fit_intercept else d
    zb = np.empty(D)
    ib = np.empty(D)
    cb = np.empty(D)
    hb = np.empty(D)
    eb = np.empty(D)
    xb = np.empty(D)
    jb = np.empty(D, dtype=np.int64)
    half_a = 0.5 / alpha
    for i in range(n):
        m = 0
        for q in range(indptr[i], indptr[i + 1]):
            x = data[q]
            if x == 0.0:
                continue
            j = indices[q]
            if use_scaling:
                if scale[j] == 0.0:
                    scale[j] = abs(x)
                z = _unscale(x, scale[j])
            else:
                z = x
            s2[j] += z * z
            zb[m] = z
            ib[m] = 1.0 / s2[j]
            cb[m] = ib[m] * half_a
            jb[m] = j
            m += 1
        if fit_intercept:
            s2[d] += 1.0
            zb[m] = 1.0
            ib[m] = 1.0 / s2[d]
            cb[m] = ib[m] * half_a
            jb[m] = d
            m += 1
        inv_atd = 1.0 / (alpha * (t0 + i + 1) * D)
        if not _coord_heads_sparse(m, jb, zb, ib, cb, hb, eb, xb, inv_atd, Y[i], sw[i], loss,
                                   lip, h, out[i], clamped, loss_acc):
            return i
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


@njit
def full_pass(X, Y, sw, fit_intercept, use_scaling, alpha, loss, lip, rank_tol,
              P, U, rank, h, gamma, scale, out, clamped, loss_acc, work):
    """Algorithm 2 with the O(d^2) pseudo-inverse update (paper App. E).

    State: ``P`` = S^dagger (D x D), ``U[:, :rank[0]]`` an orthonormal basis of range(S),
    ``h`` (n_heads x D) = -sum g x, ``gamma`` (n_heads,) = sum g^2 x'S^dagger x. ``work``: a
    scratch array of ``3 D + n_heads`` entries (allocated by the caller: nothing to compile here).
    """
    n, d = X.shape
    D = P.shape[0]
    n_heads = h.shape[0]
    z = work[:D]
    u = work[D:2 * D]
    xp = work[2 * D:3 * D]
    g = work[3 * D:3 * D + n_heads]
    two_a = 2.0 * alpha
    for i in range(n):
        # internal (scaled) instance
        zz = 0.0
        for j in range(d):
            x = X[i, j]
            if x != 0.0 and use_scaling:
                if scale[j] == 0.0:
                    scale[j] = abs(x)
                x = _unscale(x, scale[j])
            z[j] = x
            zz += x * x
        if fit_intercept:
            z[D - 1] = 1.0
            zz += 1.0
        # x_t = 0: every head predicts 0 and nothing is learned (g * x = 0)
        skip = zz == 0.0
        beta = 1.0
        r = rank[0]
        n2 = 0.0
        new = False
        if not skip:
            # u = P z, beta = 1 + z'u
            for a in range(D):
                s = 0.0
                for b in range(D):
                    s += P[a, b] * z[b]
                u[a] = s
                beta += z[a] * s
            # x_perp = (I - U U') z, twice for re-orthogonalisation (once S has full rank, no row
            # can bring a new direction and the projection is skipped)
            if r < D:
                n2 = _project_out(z, U, r, xp)
            # a new direction when ||x_perp|| > rank_tol ||x|| (norms: rounding leaves ~1e-16 ||x||)
            new = r < D and n2 > rank_tol * rank_tol * zz
        for k in range(n_heads):
            p = 0.0  # x_t = 0, or x_t outside range(S_{t-1}): x_t' S_t^dagger h_{t-1} = 0
            if not (skip or new):
                # coef = P h_k; rho = h'Ph; c = u'h = z'P h
                rho = 0.0
                c = 0.0
                for a in range(D):
                    s = 0.0
                    for b in range(D):
                        s += P[a, b] * h[k, b]
                    rho += h[k, a] * s
                    c += z[a] * s
                e = _clamp((rho - c * c / beta - gamma[k]) / two_a, clamped)
                p = math.exp(e) * c / (alpha * beta)
            out[i, k] = p
            if not math.isfinite(p):
                return i
            lv, gk = loss_and_derivative(loss, Y[i, k], p)
            loss_acc[0] += sw[i] * lv
            g[k] = sw[i] * gk / lip
        if skip:
            continue
        if new:
            inv_n2 = 1.0 / n2
            bb = beta * inv_n2 * inv_n2
            for a in range(D):
                for b in range(D):
                    P[a, b] += -(u[a] * xp[b] + xp[a] * u[b]) * inv_n2 + bb * xp[a] * xp[b]
            nrm = math.sqrt(n2)
            for a in range(D):
                U[a, r] = xp[a] / nrm
            rank[0] = r + 1
            lev = 1.0
        else:
            ib = 1.0 / beta
            for a in range(D):
                ua = u[a] * ib
                for b in range(D):
                    P[a, b] -= ua * u[b]
            lev = (beta - 1.0) / beta
        for k in range(n_heads):
            gamma[k] += g[k] * g[k] * lev
            if g[k] != 0.0:
                for a in range(D):
                    h[k, a] -= g[k] * z[a]
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
