"""Compiled passes of the stochastic-approximation GDRO algorithms (Zhang et al.).

Every algorithm plays the same game ``min_{w in W} max_{q} sum_i q_i R_i(w)``: the w-player runs
projected SGD on the Euclidean ball ``W = {||w||_2 <= R}`` (``w`` holds every head's coefficients and
intercept), the q-player a mirror step in log space on the simplex or the capped simplex. One round
(:func:`_round`) takes the samples the algorithm drew, computes their losses and gradients at
``w_t``, and updates both players simultaneously:

============ ================================= ================================= ===================
algorithm    w-gradient                        q-step (log q_i += ...)           samples per round
============ ================================= ================================= ===================
SMD          sum_i q_i grad l_i                + eta_q l_i          (Hedge)      one per group
SMD_WEIGHTED sum_{i in C_t} q_i grad l_i       + eta_q l_i, i in C_t (Hedge)     Bernoulli(p_i)
SMD_UNIFORM  m q_i grad l   (i uniform)        + eta_q m l  (Hedge)              1
ONLINE       grad l         (i ~ q_t)          - eta_q (1 - l)/(q_i + gamma)     1
DEPROUND     (1/k) sum_{i in I} grad l_i       - eta_q (1 - l_i)/(k q_i + gamma) k (I = DepRound)
============ ================================= ================================= ===================

followed by normalisation (``k = 1``) or the KL projection onto the capped simplex (``k > 1``).
The q-player sees the scaled loss ``l / B`` (clipped at 1 when a loss bound ``B`` is given); the
w-player the gradient of ``l / B``. Mirror-prox (Alg. 4) has its own pass.

Averaging: before the update of round t the pass adds ``a_t w_t`` and ``a_t q_t`` to the running
sums, with ``a_t = 1`` (fixed steps) or ``1 / sqrt(t)`` (anytime schedules, where both step sizes are
proportional to it: the paper's eq. (20)).

Randomness: the pool pass (``fit``) reads a fixed number of uniforms per round; the stream pass
(``partial_fit``) receives a fixed number per row, queued until a random decision needs them (see
``stream_pass``). Neither calls a random generator.

Status: passes return -1, or the index (row or round) at which a loss became non-finite.
"""

import math

import numba
import numpy as np

from ..losses import loss_and_derivative, loss_value
from ..utils._capped_simplex import (
    depround_select,
    log_normalize,
    project_capped_log_lin,
)

SMD = 0
SMD_UNIFORM = 1
ONLINE = 2
DEPROUND = 3
SMD_WEIGHTED = 4
MIRROR_PROX = 5

RESYNC = 1024  # rounds between exact renormalisations of q (see _round)

LIP_CONST = 0  # Lipschitz loss: |dl/dp| <= lip
LIP_SQUARED = 1  # squared error: |dl/dp| <= R ||x|| + |y|


# --------------------------------------------------------------------------- step sizes
@numba.njit(cache=True)
def step_constants(alg, anytime, T, D, G, m, k):
    """Theory step-size constants ``(c_w, c_q)``: eta_t = c (fixed) or c / sqrt(t) (anytime).

    SMD / SMD_WEIGHTED (Thm 1, 9, 12; anytime eqs 19, 52), with ``L = ln(m/k)``:
        fixed   eta_w = D^2 sqrt(8 / (5 T (D^2 G^2 + L))),   eta_q = L sqrt(8 / (5 T (D^2 G^2 + L)))
        anytime eta_w = D^2 sqrt(2 / (t (D^2 G^2 + L))),     eta_q = L sqrt(2 / (t (D^2 G^2 + L)))
    SMD_UNIFORM (SMD(1), no step size in the paper): the SMD(m) values divided by m (Theorem 1's
        construction with gradient norms m G and q-gradients bounded by m).
    ONLINE (Thm 3, 4; anytime eq 30; Alg 7 uses the anytime values with ln m and m):
        fixed   eta_w = 2 D / (G sqrt(5 T)),   eta_q = sqrt(ln m / (m T))
        anytime eta_w = D / (G sqrt(t)),        eta_q = sqrt(ln m / (m t))
    DEPROUND (Thm 15): eta_w = 2 D / (G sqrt(5 T)),  eta_q = sqrt(k ln m / (m T)).
    The IX coefficient is always gamma = eta_q / 2.
    """
    lnm = math.log(m)
    if alg == SMD or alg == SMD_WEIGHTED or alg == SMD_UNIFORM:
        L = math.log(m / k)
        denom = D * D * G * G + L
        if not denom > 0.0:
            return 0.0, 0.0
        if anytime:
            base = math.sqrt(2.0 / denom)
        else:
            base = math.sqrt(8.0 / (5.0 * T * denom))
        cw = D * D * base
        cq = L * base
        if alg == SMD_UNIFORM:
            cw /= m
            cq /= m
        return cw, cq
    kk = k if alg == DEPROUND else 1
    if anytime:
        cw = D / G if G > 0.0 else 0.0
        cq = math.sqrt(lnm / m)
    else:
        cw = 2.0 * D / (G * math.sqrt(5.0 * T)) if G > 0.0 else 0.0
        cq = math.sqrt(kk * lnm / (m * T))
    return cw, cq


@numba.njit(cache=True)
def lipschitz_bound(lip_kind, lip, x_norm, y_max, R, n_heads, inv_b):
    """G: bound on the Frobenius norm of the gradient of the (scaled, head-averaged) loss."""
    if lip_kind == LIP_SQUARED:
        lp = R * x_norm + y_max
    else:
        lp = lip
    return lp * x_norm * inv_b / math.sqrt(n_heads)


# --------------------------------------------------------------------------- row kernels
@numba.njit(cache=True, inline="always")
def _dot(x, w, d, fi):
    s = 0.0
    for j in range(d):
        s += w[j] * x[j]
    if fi:
        s += w[d]
    return s


@numba.njit(cache=True, inline="always")
def _loss_grad(X, Y, row, W, d, fi, code, eps, inv_hb, dbuf, jj):
    """Head-averaged loss of row ``row`` at W (raw scale); dbuf[jj, h] = dl_h/dp * inv_hb.

    ``Y`` has one column per head plus, last, the row's sample weight, which multiplies the loss
    and its derivative (weighted per-sample loss; 1 without weights). Also returns
    ``sum_h dbuf[jj, h] p_h`` and ``||[x, 1]||^2`` (for the incremental norm of W).
    Indexes the 2-D arrays directly: a row view per sample costs reference counting.
    """
    H = W.shape[0]
    wr = Y[row, H]
    tot = 0.0
    dp = 0.0
    x2 = 0.0
    for h in range(H):
        p = 0.0
        if h == 0:
            for j in range(d):
                xv = X[row, j]
                p += W[0, j] * xv
                x2 += xv * xv
            if fi:
                p += W[0, d]
                x2 += 1.0
        else:
            for j in range(d):
                p += W[h, j] * X[row, j]
            if fi:
                p += W[h, d]
        lv, g = loss_and_derivative(code, Y[row, h], p, eps)
        tot += lv
        dbuf[jj, h] = g * inv_hb * wr
        dp += dbuf[jj, h] * p
    return wr * tot / H, dp, x2


@numba.njit(cache=True, inline="always")
def _axpy(X, row, dbuf, jj, coef, W, d, fi):
    """W[h] -= coef * dbuf[jj, h] * [X[row], 1]."""
    for h in range(W.shape[0]):
        c = coef * dbuf[jj, h]
        if c != 0.0:
            for j in range(d):
                W[h, j] -= c * X[row, j]
            if fi:
                W[h, d] -= c


@numba.njit(cache=True, inline="always")
def _project_ball(W, R):
    """Project W onto the Frobenius ball of radius R; returns ||W||^2 after."""
    s = 0.0
    for h in range(W.shape[0]):
        for j in range(W.shape[1]):
            s += W[h, j] * W[h, j]
    if s > R * R:
        _scale_to(W, R, s)
        return R * R
    return s


@numba.njit(cache=True, inline="always")
def _scale_to(W, R, s):
    c = R / math.sqrt(s)
    for h in range(W.shape[0]):
        for j in range(W.shape[1]):
            W[h, j] *= c


@numba.njit(cache=True, inline="always")
def _fill_q(logq, qbuf):
    for i in range(logq.shape[0]):
        qbuf[i] = math.exp(logq[i])


@numba.njit(cache=True, inline="always")
def _categorical(qbuf, u):
    """Inverse-CDF draw from qbuf (sums to 1 up to rounding)."""
    m = qbuf.shape[0]
    c = 0.0
    last = 0
    for i in range(m):
        if qbuf[i] > 0.0:
            last = i
            c += qbuf[i]
            if u < c:
                return i
    return last


# --------------------------------------------------------------------------- one round
@numba.njit(cache=True, inline="always")
def _round(alg, Xs, Ys, rows, grp, r, t, anytime, k, fi, code, clip, par, W, w_sum, logq, q_sum,
           sc, qbuf, dbuf, lbuf, order, suffix, g_loss, g_draws):
    """One simultaneous update of both players from ``r`` samples (``Xs[rows[j]]``, group grp[j]).

    ``par = [c_w, c_q, R, epsilon, 1 / (n_heads B), 1 / B]``; ``sc = [sum of averaging weights,
    eta_w, eta_q, gamma, ||W||^2]`` (eta and gamma written: the values of this round). ``qbuf`` is the
    state ``q_t`` in linear space, kept equal to ``exp(logq)`` (to rounding; exactly every RESYNC
    rounds) and updated here. Returns False on a non-finite loss. Inlined into the passes (a
    call with this many array arguments costs as much as a low-dimensional round); numba inlines
    calls of fewer than 32 arguments only.
    """
    m = logq.shape[0]
    d = Xs.shape[1]
    cw, cq, R, eps, inv_hb, inv_b = par[0], par[1], par[2], par[3], par[4], par[5]
    a = 1.0 / math.sqrt(t) if anytime else 1.0
    for h in range(W.shape[0]):
        for j in range(W.shape[1]):
            w_sum[h, j] += a * W[h, j]
    for i in range(m):
        q_sum[i] += a * qbuf[i]
    sc[0] += a
    eta_w = cw * a
    eta_q = cq * a
    gamma = 0.5 * eta_q
    dp = 0.0
    x2 = 0.0
    for j in range(r):
        lv, dp, x2 = _loss_grad(Xs, Ys, rows[j], W, d, fi, code, eps, inv_hb, dbuf, j)
        if not math.isfinite(lv):
            return False
        lbuf[j] = lv
        g_loss[grp[j]] += lv
        g_draws[grp[j]] += 1
    c = 0.0
    for j in range(r):
        g = grp[j]
        if alg == SMD or alg == SMD_WEIGHTED:
            c = qbuf[g]
        elif alg == SMD_UNIFORM:
            c = m * qbuf[g]
        elif alg == ONLINE:
            c = 1.0
        else:
            c = 1.0 / k
        _axpy(Xs, rows[j], dbuf, j, eta_w * c, W, d, fi)
    if r == 1 and t % RESYNC != 0:
        # one sample: ||W - s dvec x~'||^2 = ||W||^2 - 2 s dvec.p + s^2 ||dvec||^2 ||x~||^2,
        # no pass over W (exact recomputation every RESYNC rounds)
        st = eta_w * c
        dd = 0.0
        for h in range(W.shape[0]):
            dd += dbuf[0, h] * dbuf[0, h]
        n2 = sc[4] - 2.0 * st * dp + st * st * dd * x2
        if n2 < 0.0:
            n2 = 0.0
        if n2 > R * R:
            _scale_to(W, R, n2)
            n2 = R * R
        sc[4] = n2
    else:
        sc[4] = _project_ball(W, R)
    if eta_q > 0.0:
        # sparse update (a few coordinates, simplex): renormalise in O(m) multiplications from
        # Z = sum_i q_i exp(delta_i) = sum_i q_i + sum_{updated} q_i (exp(delta_i) - 1) (the
        # actual sum, so rounding errors do not compound); exactly (m exponentials) every RESYNC
        # rounds, for a k > 1 projection, or if Z is small (cancellation)
        sparse = k == 1 and alg != SMD and t % RESYNC != 0
        z = 0.0
        if sparse:
            for i in range(m):
                z += qbuf[i]
        for j in range(r):
            lv = lbuf[j] * inv_b
            if clip and lv > 1.0:
                lv = 1.0
            g = grp[j]
            if alg == SMD or alg == SMD_WEIGHTED:
                delta = eta_q * lv
            elif alg == SMD_UNIFORM:
                delta = eta_q * m * lv
            elif alg == ONLINE:
                delta = -eta_q * (1.0 - lv) / (qbuf[g] + gamma)
            else:
                delta = -eta_q * (1.0 - lv) / (k * qbuf[g] + gamma)
            logq[g] += delta
            if sparse:
                e = math.exp(delta)
                lbuf[j] = e
                z += qbuf[g] * (e - 1.0)
        if sparse and z > 0.25 and z < 1e300:
            lz = math.log(z)
            iz = 1.0 / z
            for i in range(m):
                logq[i] -= lz
                qbuf[i] *= iz
            for j in range(r):
                qbuf[grp[j]] *= lbuf[j]
        elif k > 1:
            project_capped_log_lin(logq, k, order, suffix, logq, qbuf)
        else:
            log_normalize(logq)
            _fill_q(logq, qbuf)
    sc[1] = eta_w
    sc[2] = eta_q
    sc[3] = gamma
    return True


@numba.njit(cache=True, inline="always")
def _decide(alg, m, k, qbuf, u, x, pend):
    """Groups needed by the next round (into ``pend``); returns how many."""
    if alg == SMD:
        for i in range(m):
            pend[i] = i
        return m
    if alg == SMD_UNIFORM:
        g = int(u[0] * m)
        pend[0] = g if g < m else m - 1
        return 1
    if alg == ONLINE or k == 1:
        pend[0] = _categorical(qbuf, u[0])
        return 1
    depround_select(qbuf, k, u, x, pend)
    return k


def uniforms_per_decision(alg, m, k):
    """Uniforms consumed by one random decision of the stream pass (fixed per algorithm)."""
    if alg == SMD:
        return 0
    if alg == DEPROUND and k > 1:
        return m - 1
    return 1


def uniforms_per_row(alg, m, k):
    """Uniforms attached to each arriving row (enough for one decision per round)."""
    u = uniforms_per_decision(alg, m, k)
    if alg == DEPROUND and k > 1:
        return -(-u // k)
    return u


def uniforms_per_round(alg, m, k):
    """Uniforms one round of the pool pass reads."""
    if alg == SMD or alg == SMD_WEIGHTED:
        return m
    if alg == DEPROUND and k > 1:
        return m - 1 + k
    return 2


# --------------------------------------------------------------------------- pool pass (fit)
@numba.njit(cache=True)
def pool_pass(alg, X, Y, pool_ptr, pool_idx, seq_pos, p_incl, U, t0, anytime, k, fi, code, clip,
              par, W, w_sum, logq, qbuf, q_sum, sc, order, g_loss, g_draws, rec_every, hist_W,
              hist_q, hist_t, n_rec):
    """``U.shape[0]`` rounds drawing from per-group pools ``pool_idx[pool_ptr[i]:pool_ptr[i+1]]``.

    SMD, SMD_UNIFORM, ONLINE, DEPROUND draw uniformly with replacement from the pools (the group(s)
    as the algorithm prescribes). SMD_WEIGHTED includes group i with probability ``p_incl[i]`` and
    reads its pool in order from position ``seq_pos[i]`` (the pools are then concatenated
    permutations, read without replacement and wrapping around).
    Every ``rec_every`` rounds the averaged iterate is appended to ``hist_*`` (``n_rec[0]`` counts).
    ``par`` and ``sc`` as in :func:`_round`.
    """
    m = logq.shape[0]
    H = W.shape[0]
    rows = np.empty(max(m, k), dtype=np.int64)
    grp = np.empty(max(m, k), dtype=np.int64)
    dbuf = np.empty((max(m, k), H))
    lbuf = np.empty(max(m, k))
    suffix = np.empty(m + 1)
    xw = np.empty(m)
    u = np.empty(U.shape[1])
    for s in range(U.shape[0]):
        for c in range(U.shape[1]):
            u[c] = U[s, c]
        t = t0 + s + 1
        r = 0
        if alg == SMD:
            for i in range(m):
                n_i = pool_ptr[i + 1] - pool_ptr[i]
                o = int(u[i] * n_i)
                rows[i] = pool_idx[pool_ptr[i] + (o if o < n_i else n_i - 1)]
                grp[i] = i
            r = m
        elif alg == SMD_WEIGHTED:
            for i in range(m):
                if u[i] < p_incl[i]:
                    n_i = pool_ptr[i + 1] - pool_ptr[i]
                    rows[r] = pool_idx[pool_ptr[i] + seq_pos[i] % n_i]
                    seq_pos[i] += 1
                    grp[r] = i
                    r += 1
        else:
            if alg == SMD_UNIFORM or alg == ONLINE or k == 1:
                r = _decide(alg, m, k, qbuf, u, xw, grp)
                off = 1
            else:
                r = _decide(alg, m, k, qbuf, u, xw, grp)
                off = m - 1
            for j in range(r):
                i = grp[j]
                n_i = pool_ptr[i + 1] - pool_ptr[i]
                o = int(u[off + j] * n_i)
                rows[j] = pool_idx[pool_ptr[i] + (o if o < n_i else n_i - 1)]
        if not _round(alg, X, Y, rows, grp, r, t, anytime, k, fi, code, clip, par, W, w_sum, logq,
                      q_sum, sc, qbuf, dbuf, lbuf, order, suffix, g_loss, g_draws):
            return s
        if rec_every > 0 and t % rec_every == 0 and n_rec[0] < hist_t.shape[0]:
            _record(W, w_sum, logq, q_sum, sc, t, hist_W, hist_q, hist_t, n_rec)
    return -1


@numba.njit(cache=True)
def _record(W, w_sum, logq, q_sum, sc, t, hist_W, hist_q, hist_t, n_rec):
    """Append the averaged iterate (the model ``predict`` would use now) to the history."""
    n = n_rec[0]
    inv = 1.0 / sc[0] if sc[0] > 0.0 else 0.0
    for h in range(W.shape[0]):
        for j in range(W.shape[1]):
            hist_W[n, h, j] = w_sum[h, j] * inv if sc[0] > 0.0 else W[h, j]
    for i in range(logq.shape[0]):
        hist_q[n, i] = q_sum[i] * inv if sc[0] > 0.0 else math.exp(logq[i])
    hist_t[n] = t
    n_rec[0] = n + 1


# --------------------------------------------------------------------------- mirror-prox (Alg 4)
@numba.njit(cache=True)
def _mp_half(X, Y, pool_ptr, pool_idx, seq_pos, batch, p_w, Wg, qg, Wout, logq_out, eta_w, eta_q,
             fi, code, eps, inv_hb, inv_b, clip, g_loss, g_draws, dvec):
    """One half-step: gradients at (Wg, qg) from fresh mini-batches, applied to Wout / logq_out
    (``dvec`` is a (1, n_heads) work buffer).

    g_w = sum_i qg_i p_i mean_j grad l(Wg; z_ij),  [g_q]_i = p_i mean_j l(Wg; z_ij)  (eq. 37/40).
    """
    m = qg.shape[0]
    d = X.shape[1]
    for i in range(m):
        n_i = pool_ptr[i + 1] - pool_ptr[i]
        b = batch[i]
        acc = 0.0
        coef = eta_w * qg[i] * p_w[i] / b
        for _j in range(b):
            row = pool_idx[pool_ptr[i] + seq_pos[i] % n_i]
            seq_pos[i] += 1
            lv, _dp, _x2 = _loss_grad(X, Y, row, Wg, d, fi, code, eps, inv_hb, dvec, 0)
            if not math.isfinite(lv):
                return False
            g_loss[i] += lv
            g_draws[i] += 1
            ls = lv * inv_b
            if clip and ls > 1.0:
                ls = 1.0
            acc += ls
            _axpy(X, row, dvec, 0, coef, Wout, d, fi)
        logq_out[i] += eta_q * p_w[i] * acc / b
    return True


@numba.njit(cache=True)
def mirror_prox_pass(X, Y, pool_ptr, pool_idx, seq_pos, batch, p_w, n_rounds, t0, eta_w, eta_q, R,
                     fi, code, eps, inv_hb, inv_b, clip, W, w_sum, logq, q_sum, sc, g_loss,
                     g_draws, rec_every, hist_W, hist_q, hist_t, n_rec):
    """Stochastic mirror-prox with mini-batches (Alg. 4); ``W``/``logq`` hold (w'_t, q'_t).

    Each round: extrapolate (w_{t+1}, q_{t+1}) from (w'_t, q'_t) with gradients at (w'_t, q'_t);
    then update (w'_{t+1}, q'_{t+1}) from (w'_t, q'_t) with gradients at (w_{t+1}, q_{t+1}) on
    fresh batches. The output averages the extrapolated points w_2..w_{T+1} (uniformly).
    """
    m = logq.shape[0]
    H = W.shape[0]
    We = np.empty_like(W)
    le = np.empty(m)
    qp = np.empty(m)
    qe = np.empty(m)
    dvec = np.empty((1, H))
    for s in range(n_rounds):
        t = t0 + s + 1
        _fill_q(logq, qp)
        We[:, :] = W
        le[:] = logq
        if not _mp_half(X, Y, pool_ptr, pool_idx, seq_pos, batch, p_w, W, qp, We, le, eta_w, eta_q,
                        fi, code, eps, inv_hb, inv_b, clip, g_loss, g_draws, dvec):
            return s
        _project_ball(We, R)
        log_normalize(le)
        _fill_q(le, qe)
        for h in range(H):
            for j in range(W.shape[1]):
                w_sum[h, j] += We[h, j]
        for i in range(m):
            q_sum[i] += qe[i]
        sc[0] += 1.0
        if not _mp_half(X, Y, pool_ptr, pool_idx, seq_pos, batch, p_w, We, qe, W, logq, eta_w,
                        eta_q, fi, code, eps, inv_hb, inv_b, clip, g_loss, g_draws, dvec):
            return s
        sc[4] = _project_ball(W, R)
        log_normalize(logq)
        if rec_every > 0 and t % rec_every == 0 and n_rec[0] < hist_t.shape[0]:
            _record(W, w_sum, logq, q_sum, sc, t, hist_W, hist_q, hist_t, n_rec)
    return -1


# --------------------------------------------------------------------------- stream pass
@numba.njit(cache=True)
def _grow3(a, new_cap, head, length):
    m, cap, c = a.shape
    b = np.zeros((m, new_cap, c))
    for i in range(m):
        for s in range(length[i]):
            b[i, s] = a[i, (head[i] + s) % cap]
    return b


@numba.njit(cache=True)
def _grow1(a, new_cap, head, length):
    b = np.zeros(new_cap)
    cap = a.shape[0]
    for s in range(length):
        b[s] = a[(head + s) % cap]
    return b


@numba.njit(cache=True)
def stream_pass(alg, X, Y, G, Ur, max_buf, max_uq, u_need, lip_kind, lip, R, D, T, anytime,
                scale_w, scale_q, k, fi, average, code, eps, inv_b, clip,
                W, w_sum, logq, qbuf, q_sum, sc, order, g_loss, g_draws, stats,
                bX, bY, bstate, uq, ustate, pend, pstate, raw, loss_acc):
    """Rows arrive in order; each is predicted, buffered in its group's FIFO, then every round the
    buffers can serve is run.

    Per row: ``raw[i]`` = the decision value of the model ``predict`` would use now (averaged
    iterate unless ``average`` is False), its loss added to ``loss_acc``; the running maxima
    ``stats = [max ||x~||^2, max |y|]`` are updated (they give G); the row joins the buffer of its
    group (``bX``/``bY`` rings, ``bstate = [head(m), len(m)]``; a full buffer of ``max_buf`` rows
    drops its oldest) and its ``Ur[i]`` uniforms join the uniform queue ``uq`` (``ustate = [head,
    len]``, capacity ``max_uq``, oldest dropped). Then, repeatedly: if no round is pending and
    ``u_need`` uniforms are queued, the next round's groups are drawn from ``q_t`` (SMD: all
    groups; SMD(1): uniform; Online: i ~ q; DepRound: a k-set) into ``pend`` (``pstate = [pending?,
    how many]``); if every pending group has a buffered row, the oldest of each is used for one
    round. The pending draw is kept across calls: it is never redrawn because its group is absent.

    Returns ``(status, bX, bY, uq)``; the arrays are new when a buffer had to grow.
    """
    n, d = X.shape
    m = logq.shape[0]
    H = W.shape[0]
    kk = max(m, k)
    rows = np.empty(kk, dtype=np.int64)
    grp = np.empty(kk, dtype=np.int64)
    dbuf = np.empty((kk, H))
    lbuf = np.empty(kk)
    suffix = np.empty(m + 1)
    xw = np.empty(m)
    ubuf = np.empty(max(u_need, 1))
    c_row = Ur.shape[1]
    par = np.array([0.0, 0.0, R, eps, inv_b / H, inv_b])
    head = bstate[0]
    blen = bstate[1]
    Xf = bX.reshape(m * bX.shape[1], d)  # the buffers as (m * cap) rows; re-made after growth
    HW = Y.shape[1]  # the heads and, last, the sample weight
    Yf = bY.reshape(m * bY.shape[1], HW)
    for i in range(n):
        x = X[i]
        # prequential prediction with the current predictor
        use_avg = average and sc[0] > 0.0
        inv = 1.0 / sc[0] if use_avg else 1.0
        tot = 0.0
        for h in range(H):
            p = _dot(x, w_sum[h], d, fi) * inv if use_avg else _dot(x, W[h], d, fi)
            raw[i, h] = p
            tot += loss_value(code, Y[i, h], p, eps)
        if not math.isfinite(tot):
            return i, bX, bY, uq
        loss_acc[0] += Y[i, H] * tot / H
        nx = 1.0 if fi else 0.0
        for j in range(d):
            nx += x[j] * x[j]
        if nx > stats[0]:
            stats[0] = nx
        for h in range(H):
            ay = abs(Y[i, h])
            if ay > stats[1]:
                stats[1] = ay
        # buffer the row
        g = G[i]
        cap = bX.shape[1]
        if blen[g] == cap:
            if cap < max_buf:
                new_cap = min(2 * cap, max_buf)
                bX = _grow3(bX, new_cap, head, blen)
                bY = _grow3(bY, new_cap, head, blen)
                for a in range(m):
                    head[a] = 0
                cap = new_cap
            else:
                head[g] = (head[g] + 1) % cap
                blen[g] -= 1
        slot = (head[g] + blen[g]) % cap
        for j in range(d):
            bX[g, slot, j] = x[j]
        for h in range(HW):
            bY[g, slot, h] = Y[i, h]
        blen[g] += 1
        # queue the row's uniforms
        for c in range(c_row):
            qcap = uq.shape[0]
            if ustate[1] == qcap:
                if qcap < max_uq:
                    uq = _grow1(uq, min(2 * qcap, max_uq), ustate[0], ustate[1])
                    ustate[0] = 0
                    qcap = uq.shape[0]
                else:
                    ustate[0] = (ustate[0] + 1) % qcap
                    ustate[1] -= 1
            uq[(ustate[0] + ustate[1]) % qcap] = Ur[i, c]
            ustate[1] += 1
        # run every round the buffers can serve
        while True:
            if pstate[0] == 0:
                if ustate[1] < u_need:
                    break
                qcap = uq.shape[0]
                for c in range(u_need):
                    ubuf[c] = uq[ustate[0]]
                    ustate[0] = (ustate[0] + 1) % qcap
                    ustate[1] -= 1
                pstate[1] = _decide(alg, m, k, qbuf, ubuf, xw, pend)
                pstate[0] = 1
            r = pstate[1]
            ready = True
            for j in range(r):
                if blen[pend[j]] == 0:
                    ready = False
                    break
            if not ready:
                break
            cap = bX.shape[1]
            if Xf.shape[0] != m * cap:
                Xf = bX.reshape(m * cap, d)
                Yf = bY.reshape(m * cap, HW)
            for j in range(r):
                gj = pend[j]
                rows[j] = gj * cap + head[gj]
                grp[j] = gj
            Gl = lipschitz_bound(lip_kind, lip, math.sqrt(stats[0]), stats[1], R, H, inv_b)
            cw, cq = step_constants(alg, anytime, T, D, Gl, m, k)
            par[0] = cw * scale_w
            par[1] = cq * scale_q
            t = pstate[2] + 1
            if not _round(alg, Xf, Yf, rows, grp, r, t, anytime, k, fi, code, clip, par, W, w_sum,
                          logq, q_sum, sc, qbuf, dbuf, lbuf, order, suffix, g_loss, g_draws):
                return i, bX, bY, uq
            pstate[2] = t
            for j in range(r):
                gj = pend[j]
                head[gj] = (head[gj] + 1) % cap
                blen[gj] -= 1
            pstate[0] = 0
    return -1, bX, bY, uq


@numba.njit(cache=True)
def group_losses(X, Y, G, W, fi, code, eps, out_sum, out_n):
    """Per-group sums and counts of the head-averaged loss of ``W`` on the rows."""
    n, d = X.shape
    H = W.shape[0]
    for i in range(n):
        tot = 0.0
        for h in range(H):
            tot += loss_value(code, Y[i, h], _dot(X[i], W[h], d, fi), eps)
        out_sum[G[i]] += tot / H
        out_n[G[i]] += 1
