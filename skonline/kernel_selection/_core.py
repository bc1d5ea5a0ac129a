"""Compiled passes of online kernel selection under bandit feedback (Li & Liao, ECML-PKDD 2022).

One pass per algorithm (:func:`oks_pass`, :func:`okspp_pass`, :func:`ioks_pass`); each handles both
hypothesis backends, chosen by the literal flag ``rf``:

* exact kernel expansion (``rf=False``): f_{h,k} = scale[h,k] * sum_j coef[h,k,j] kappa_k(x_{idx[h,k,j]}, .),
  the support rows in one shared store (a row is stored once even when several heads add it), the
  RKHS norm tracked exactly (||f + b kappa(x,.)||^2 = ||f||^2 + 2 b f(x) + b^2) and the projection
  onto the U-ball done lazily through ``scale``;
* random Fourier features (``rf=True``): f_{h,k}(x) = w[h,k] . z_k(x), z_k(x) = [cos(W_k x), sin(W_k x)]
  / sqrt(D) with W_k = base_b / sigma_k, projection = coordinate clipping at ``thr``. With one shared
  base the projections x . base of the rows do not depend on the state; the estimator computes
  them for the chunk beforehand (``pre``) and the pass only evaluates the sampled kernel's cos/sin.

State arrays are updated in place; all randomness is in the uniforms ``U`` (one per row and head)
drawn by the estimator. A pass returns -1, or the first row at which a prediction or the state
would become non-finite (the estimator then restores its snapshot and raises).
"""

import math

import numba
import numpy as np

from ..losses import loss_and_derivative
from ..utils._bandit import exp_weights, mix_uniform, sample_index, tsallis_omd_step
from ..utils._math import EXP_MIN, exp_buffer
from ..utils._trig import sincos_buffer

_FM = {"reassoc", "contract"}  # reductions only: the order is fixed by the compiled code
_SCALE_MIN = 1e-100


# ----------------------------------------------------------------------------------- kernels
@numba.njit(cache=True, fastmath=_FM)
def _sq_dist(x, store, j):
    acc = 0.0
    for k in range(x.shape[0]):
        r = x[k] - store[j, k]
        acc += r * r
    return acc


@numba.njit(cache=True, fastmath=_FM)
def _dot(a, b, n):
    acc = 0.0
    for j in range(n):
        acc += a[j] * b[j]
    return acc


@numba.njit(cache=True)
def expansion_value(x, store, idx, coef, n, inv2s2, ebuf, vbuf, kbuf):
    """sum_{j<n} coef[j] exp(-||x - store[idx[j]]||^2 * inv2s2) (the Gaussian expansion at x)."""
    for j in range(n):
        e = -_sq_dist(x, store, idx[j]) * inv2s2
        ebuf[j] = e if e > EXP_MIN else EXP_MIN
    exp_buffer(ebuf, vbuf, kbuf, n)
    return _dot(coef, vbuf, n)


@numba.njit(cache=True)
def _rf_project(X, row, sparse, Xdata, Xind, Xptr, base, proj):
    """proj = x . base  (base of shape (d, D)); fixed summation order over features."""
    D = proj.shape[0]
    for j in range(D):
        proj[j] = 0.0
    if sparse:
        for jj in range(Xptr[row], Xptr[row + 1]):
            v = Xdata[jj]
            col = Xind[jj]
            for j in range(D):
                proj[j] += v * base[col, j]
    else:
        for k in range(X.shape[1]):
            v = X[row, k]
            for j in range(D):
                proj[j] += v * base[k, j]


@numba.njit(cache=True, inline="always")
def _rf_features(k, X, row, sparse, Xdata, Xind, Xptr, sigmas, RF):
    """sqrt(D) z_k(x_row) = [cos, sin](x . base_b / sigma_k) into zbuf[k] (once per row and kernel)."""
    omega, W, proj, zbuf, pdone, zdone, pre = RF
    if zdone[k]:
        return
    D = proj.shape[1]
    z = zbuf[k]
    if pre.shape[0] > 0:  # shared base: projections of the rows precomputed by the estimator
        sincos_buffer(pre[row], 1.0 / sigmas[k], z[:D], z[D:], D)
        zdone[k] = True
        return
    b = k if omega.shape[0] > 1 else 0
    if not pdone[b]:
        _rf_project(X, row, sparse, Xdata, Xind, Xptr, omega[b], proj[b])
        pdone[b] = True
    sincos_buffer(proj[b], 1.0 / sigmas[k], z[:D], z[D:], D)  # sqrt(D) z_k(x), scaled by the callers
    zdone[k] = True


# ----------------------------------------------------------------------------------- backend
@numba.njit(cache=True, inline="always")
def _begin_row(rf, RF, EX):
    if rf:
        pdone = RF[4]
        zdone = RF[5]
        for b in range(pdone.shape[0]):
            pdone[b] = False
        for k in range(zdone.shape[0]):
            zdone[k] = False
    else:
        EX[7][0] = -1  # the current row is not in the store yet


@numba.njit(cache=True, inline="always")
def _predict(rf, h, k, X, row, sparse, Xdata, Xind, Xptr, sigmas, inv2s2, RF, EX, SCR):
    if rf:
        _rf_features(k, X, row, sparse, Xdata, Xind, Xptr, sigmas, RF)
        W = RF[1]
        zbuf = RF[3]
        return _dot(W[h, k], zbuf[k], W.shape[2]) * (1.0 / math.sqrt(W.shape[2] // 2))
    store, nstore, idx, coef, nsv, scale, norm2, cur, _ = EX
    n = nsv[h, k]
    if n == 0:
        return 0.0
    return scale[h, k] * expansion_value(
        X[row], store, idx[h, k], coef[h, k], n, inv2s2[k], SCR[0], SCR[1], SCR[2]
    )


@numba.njit(cache=True, inline="always")
def _gradient_step(rf, h, k, X, row, step, pred, radius, thr, RF, EX):
    """f_{h,k} <- Proj(f_{h,k} - step * phi_k(x_row)); returns False if the state became non-finite."""
    if rf:
        W = RF[1]
        z = RF[3][k]
        w = W[h, k]
        step = step * (1.0 / math.sqrt(w.shape[0] // 2))  # z_k(x) = zbuf[k] / sqrt(D)
        ok = True
        if radius > 0.0:
            for j in range(w.shape[0]):
                v = w[j] - step * z[j]
                if v > thr:
                    v = thr
                elif v < -thr:
                    v = -thr
                w[j] = v
        else:
            for j in range(w.shape[0]):
                v = w[j] - step * z[j]
                w[j] = v
                if not abs(v) < math.inf:
                    ok = False
        return ok
    if step == 0.0:
        return True
    store, nstore, idx, coef, nsv, scale, norm2, cur, dropped = EX
    beta = -step
    if cur[0] < 0:
        s = nstore[0]
        if s == store.shape[0]:  # budget reached (the store is allocated at the budget): no step
            dropped[0] += 1
            return True
        for c in range(X.shape[1]):
            store[s, c] = X[row, c]
        cur[0] = s
        nstore[0] = s + 1
    n = nsv[h, k]
    idx[h, k, n] = cur[0]
    coef[h, k, n] = beta / scale[h, k]
    nsv[h, k] = n + 1
    nn = norm2[h, k] + 2.0 * beta * pred + beta * beta
    if nn < 0.0:
        nn = 0.0
    if not nn < math.inf:
        return False
    if radius > 0.0 and nn > radius * radius:
        scale[h, k] *= radius / math.sqrt(nn)
        nn = radius * radius
        if scale[h, k] < _SCALE_MIN:
            sc = scale[h, k]
            for j in range(n + 1):
                coef[h, k, j] *= sc
            scale[h, k] = 1.0
    norm2[h, k] = nn
    return True


@numba.njit(cache=True, inline="always")
def _choose(p, U, forced, r, h):
    if forced.shape[0] > 0 and forced[r, h] >= 0:
        return forced[r, h]
    return sample_index(p, U[r, h])


# ----------------------------------------------------------------------------------- horizons
@numba.njit(cache=True)
def oks_constants(T, K, loss_bound, G, step_scale):
    """delta, eta, lambda of OKS (Remark 1 of the paper; step_scale multiplies lambda)."""
    delta = (G / loss_bound) ** (2.0 / 3.0) * (K / T) ** (1.0 / 3.0)
    if delta > 1.0:
        delta = 1.0
    eta = math.sqrt(2.0 * (1.0 - delta) * math.log(K)) / math.sqrt(K * T * loss_bound * loss_bound)
    lam = step_scale * math.sqrt(delta / (K * T * G * G))
    return delta, eta, lam


@numba.njit(cache=True)
def ioks_constants(T, K, U, G1, loss_bound, eta_scale):
    """delta = T^(-3/4), eta = c * l_max K^(3/8) / (U G1 sqrt(T ln T)), upsilon = e^(2/(3 ln T))."""
    Te = T if T > 3.0 else 3.0
    delta = Te ** (-0.75)
    eta = eta_scale * loss_bound * K**0.375 / (U * G1 * math.sqrt(Te * math.log(Te)))
    ups = math.exp(2.0 / (3.0 * math.log(Te)))
    return delta, eta, ups


# ----------------------------------------------------------------------------------- passes
@numba.njit(cache=True)
def oks_pass(rf, X, sparse, Xdata, Xind, Xptr, Y, SW, U, forced, t0, sigmas, inv2s2,
             loss_code, loss_mult, radius, thr, loss_bound, G, step_scale,
             ST, RF, EX, SCR, out, loss_acc):
    """OKS (Yang et al. 2012; Algorithm 1 of the paper with the constants of Remark 1)."""
    q, p, L, C, S, counts, lam, delta, eta, rho, gam, T = ST
    n = Y.shape[0]
    H = Y.shape[1]
    K = q.shape[1]
    d_, e_, l_ = oks_constants(T[0], K, loss_bound, G, step_scale)
    for r in range(n):
        t = t0 + r + 1
        if t > T[0]:
            while t > T[0]:
                T[0] *= 2.0
            d_, e_, l_ = oks_constants(T[0], K, loss_bound, G, step_scale)
        _begin_row(rf, RF, EX)
        for h in range(H):
            I = _choose(p[h], U, forced, r, h)
            pred = _predict(rf, h, I, X, r, sparse, Xdata, Xind, Xptr, sigmas, inv2s2, RF, EX, SCR)
            out[r, h] = pred
            if not abs(pred) < math.inf:
                return r
            lv, g = loss_and_derivative(loss_code, Y[r, h], pred, 0.0)
            wm = loss_mult * SW[r]  # the row's weight multiplies its loss and derivative
            lv *= wm
            g *= wm
            loss_acc[0] += lv
            if not (abs(loss_acc[0]) < math.inf and abs(g) < math.inf):
                return r  # the loss overflows: reject the row before any state changes
            pI = p[h, I]
            L[h, I] += lv / pI
            C[h] += lv / pI
            counts[h, I] += 1
            lam[h, I] = l_
            if not _gradient_step(rf, h, I, X, r, l_ * g / pI, pred, radius, thr, RF, EX):
                return r
            exp_weights(L[h], e_, q[h])
            mix_uniform(q[h], d_, p[h])
            delta[h] = d_
            eta[h, :] = e_
    return -1


@numba.njit(cache=True)
def okspp_pass(rf, X, sparse, Xdata, Xind, Xptr, Y, SW, U, forced, t0, sigmas, inv2s2,
               loss_code, loss_mult, radius, thr, a, b, lam_num, lam_den,
               ST, RF, EX, SCR, out, loss_acc):
    """OKS++ (Theorem 3.1; Algorithm 3 for random features), FTRL form of the weights."""
    q, p, L, C, S, counts, lam, delta, eta, rho, gam, T = ST
    n = Y.shape[0]
    H = Y.shape[1]
    K = q.shape[1]
    two_ln_k = 2.0 * math.log(K)
    for r in range(n):
        _begin_row(rf, RF, EX)
        for h in range(H):
            I = _choose(p[h], U, forced, r, h)
            pred = _predict(rf, h, I, X, r, sparse, Xdata, Xind, Xptr, sigmas, inv2s2, RF, EX, SCR)
            out[r, h] = pred
            if not abs(pred) < math.inf:
                return r
            lv, g = loss_and_derivative(loss_code, Y[r, h], pred, 0.0)
            wm = loss_mult * SW[r]  # the row's weight multiplies its loss and derivative
            lv *= wm
            g *= wm
            loss_acc[0] += lv
            if not (abs(loss_acc[0]) < math.inf and abs(g) < math.inf):
                return r  # the loss overflows: reject the row before any state changes
            pI = p[h, I]
            ct = lv / pI
            C[h] += ct
            S[h] += q[h, I] * ct * ct
            L[h, I] += ct
            counts[h, I] += 1
            m = 8.0 * C[h]
            if b > m:
                m = b
            lam_t = lam_num * m ** (-1.0 / 6.0) / (lam_den * math.sqrt(1.0 + L[h, I]))
            lam[h, I] = lam_t
            if not _gradient_step(rf, h, I, X, r, lam_t * g / pI, pred, radius, thr, RF, EX):
                return r
            c3 = 2.0 * C[h] ** (1.0 / 3.0)
            d_ = a / (2.0 * (a if a > c3 else c3))
            e_ = math.sqrt(two_ln_k) / math.sqrt(1.0 + S[h])
            exp_weights(L[h], e_, q[h])
            mix_uniform(q[h], d_, p[h])
            delta[h] = d_
            eta[h, :] = e_
    return -1


@numba.njit(cache=True)
def ioks_pass(rf, X, sparse, Xdata, Xind, Xptr, Y, SW, U, forced, t0, sigmas, inv2s2,
              loss_code, loss_mult, radius, thr, loss_bound, G1, eta_scale, alpha,
              ST, RF, EX, SCR, out, loss_acc):
    """IOKS (Algorithm 2; Algorithm 4 for random features)."""
    q, p, L, C, S, counts, lam, delta, eta, rho, gam, T = ST
    n = Y.shape[0]
    H = Y.shape[1]
    K = q.shape[1]
    cvec = SCR[3]
    qnew = SCR[4]
    d_, e0, ups = ioks_constants(T[0], K, radius, G1, loss_bound, eta_scale)
    for r in range(n):
        t = t0 + r + 1
        if t > T[0]:
            while t > T[0]:
                T[0] *= 2.0
            d_, e1, ups = ioks_constants(T[0], K, radius, G1, loss_bound, eta_scale)
            for h in range(H):
                for i in range(K):
                    eta[h, i] *= e1 / e0  # keep the increases already applied
            e0 = e1
        _begin_row(rf, RF, EX)
        for h in range(H):
            I = _choose(p[h], U, forced, r, h)
            pred = _predict(rf, h, I, X, r, sparse, Xdata, Xind, Xptr, sigmas, inv2s2, RF, EX, SCR)
            out[r, h] = pred
            if not abs(pred) < math.inf:
                return r
            lv, g = loss_and_derivative(loss_code, Y[r, h], pred, 0.0)
            wm = loss_mult * SW[r]  # the row's weight multiplies its loss and derivative
            lv *= wm
            g *= wm
            loss_acc[0] += lv
            if not (abs(loss_acc[0]) < math.inf and abs(g) < math.inf):
                return r  # the loss overflows: reject the row before any state changes
            pI = p[h, I]
            gp = g / pI
            gam[h, I] += gp * gp
            counts[h, I] += 1
            lam_t = radius / (math.sqrt(2.0) * math.sqrt(1.0 + gam[h, I]))
            lam[h, I] = lam_t
            if not _gradient_step(rf, h, I, X, r, lam_t * gp, pred, radius, thr, RF, EX):
                return r
            c = lv / loss_bound
            m = eta[h, 0]
            for i in range(1, K):
                if eta[h, i] > m:
                    m = eta[h, i]
            ct = c / pI if pI >= m else c / (pI + m)  # eq. (4)
            L[h, I] += ct
            C[h] += ct
            for i in range(K):
                cvec[i] = 0.0
            cvec[I] = ct
            tsallis_omd_step(q[h], eta[h], cvec, alpha, qnew)
            for i in range(K):
                q[h, i] = qnew[i]
            mix_uniform(q[h], d_, p[h])
            delta[h] = d_
            for i in range(K):
                if 1.0 / p[h, i] > rho[h, i]:
                    rho[h, i] = 2.0 / p[h, i]
                    eta[h, i] *= ups
    return -1


# ----------------------------------------------------------------------------------- predict
@numba.njit(cache=True)
def expansion_decision(X, weights, inv2s2, store, idx, coef, nsv, scale, out):
    """out[r, h] = sum_k weights[h, k] f_{h,k}(X[r]) for the exact backend (no state change)."""
    cap = store.shape[0]
    ebuf = np.empty(cap)
    vbuf = np.empty(cap)
    kbuf = np.empty(cap, dtype=np.int64)
    H = weights.shape[0]
    K = weights.shape[1]
    for r in range(X.shape[0]):
        for h in range(H):
            acc = 0.0
            for k in range(K):
                wk = weights[h, k]
                n = nsv[h, k]
                if wk == 0.0 or n == 0:
                    continue
                acc += wk * scale[h, k] * expansion_value(
                    X[r], store, idx[h, k], coef[h, k], n, inv2s2[k], ebuf, vbuf, kbuf
                )
            out[r, h] = acc
