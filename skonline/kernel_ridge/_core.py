"""Compiled prequential passes of the AWV forecasters (Jézéquel, Gaillard & Rudi 2019).

Every pass runs the protocol row by row for ``K`` heads that share the covariance (one-vs-rest
classification shares the inverse, only ``b`` has one row per head):

    receive x_t ; v = phi(x_t) ; u = P v ; s = v' u ; P <- P - u u' / (1 + s)    (Sherman-Morrison)
    predict  y_t = u' b / (1 + s)   (AWV: x_t enters the covariance before predicting)
         or  y_t = u' b             (online ridge regression, the paper's "Projected-KRR")
    receive y_t ; b <- b + y_t v

``P`` is ``A^{-1}`` with ``A = alpha I + sum_s v_s v_s'``. With a forgetting factor ``gamma < 1``
(:class:`AWVSettings`), each row ends with a time update (:func:`_forget`): ``A <- gamma A + c sum_j
e_k(j) e_k(j)'`` (the data discounted, the regulariser refreshed on ``q`` coordinates in turn, so that
it stays near ``alpha I``) and ``b <- gamma b``; ``gamma = 1`` skips it (the paper's algorithm, the
same operations as before the parameter existed). Predictions are clipped to
``[-clip, clip]`` (``clip = inf`` for none). The square loss ``(y_t - y_hat_t)^2`` of every
prediction is added to ``state.cum_loss[0]`` in row order.

Every pass takes the chunk (inputs ``X`` or features ``V``, targets ``Y`` with one column per
head, sample weights ``sw``), the forecaster's :class:`AWVSettings`, the settings of its feature map
or kernel where it has one, its state record (arrays updated in place; a counter is a 1-element
array) and ``out``, the prequential predictions (n, n_heads).

Passes return a status: ``-1`` when the chunk is done, else the index of a row whose prediction is
non-finite (the caller discards its working copy and raises). Passes with growing state (exact kernel
AWV, Nyström) instead return ``(rows_done, status)`` and stop early when a buffer is full; the
caller doubles it and resumes at ``rows_done``.
"""

import math
from typing import NamedTuple

import numpy as np

from ..utils._jit import compiled_only, njit
from ..utils._online_kernel import (
    inverse_append,
    kors_nystrom_decide,
    kors_nystrom_insert,
    linear_row,
    lower_solve,
    rbf_row,
    sherman_morrison,
    sym_matvec,
    taylor_row,
)


class AWVSettings(NamedTuple):
    """How the forecaster predicts, fixed for the chunk.

    alpha : float
        The ridge parameter lambda (``alpha``): ``A = alpha I + sum_s w_s v_s v_s'``.
    awv : bool
        ``algorithm='awv'``: the row enters the covariance (target 0) before its prediction;
        ``False``: online ridge regression, predicting with the previous solution.
    clip : float
        Predictions are clipped to ``[-clip, clip]`` (``inf``: no clipping).
    forgetting : float
        The forgetting factor ``gamma`` in (0, 1] of the time update that ends each row (see
        :func:`_forget`); ``1.0``: none (the paper's forecaster, the time update is skipped).
    """

    alpha: float
    awv: bool
    clip: float
    forgetting: float


class LinearState(NamedTuple):
    """State of linear AWV on an explicit feature map, updated in place.

    P : (m, m) ``A^{-1}``; b : (n_heads, m) ``sum_s w_s y_s v_s'``, one row per head;
    cum_loss : (1,) the weighted square loss of the prequential predictions; refresh : (1,) int64,
    the next coordinate whose regulariser the time update refreshes (forgetting < 1; unused at 1).
    """

    P: np.ndarray
    b: np.ndarray
    cum_loss: np.ndarray
    refresh: np.ndarray


class TaylorMap(NamedTuple):
    """The Taylor feature map of the Gaussian kernel (``utils._online_kernel.taylor_row``).

    center : (d,) the expansion point (zeros); inv_sigma : float ``1 / sigma``; parent, var,
    inv_sqrt : (r,) the tables of ``taylor_tables`` (parent feature, variable multiplied in, and
    ``1 / sqrt`` of the multinomial factor of each of the r features).
    """

    center: np.ndarray
    inv_sigma: float
    parent: np.ndarray
    var: np.ndarray
    inv_sqrt: np.ndarray


class KernelSettings(NamedTuple):
    """The kernel of exact Kernel-AWV and its budget.

    kernel : int, 0 Gaussian ``exp(-gamma ||x - x'||^2)``, 1 linear; gamma : float; max_rows : int,
    the number of rows stored (learned) at most.
    """

    kernel: int
    gamma: float
    max_rows: int


class KernelAWVState(NamedTuple):
    """State of exact Kernel-AWV, updated in place (capacity c rows, ``t = n_stored[0]`` used).

    X_hist : (c, d) the rows learned; L : (c, c) lower Cholesky factor of ``K_t + alpha W_t^{-1}``;
    W : (c, n_heads) ``L^{-1} y_{1:t}``; n_stored : (1,) int64, rows learned; n_dropped : (1,)
    int64, rows predicted but not learned once the budget was reached; cum_loss : (1,) as in
    :class:`LinearState`.
    """

    X_hist: np.ndarray
    L: np.ndarray
    W: np.ndarray
    n_stored: np.ndarray
    n_dropped: np.ndarray
    cum_loss: np.ndarray


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
    """

    gamma: float
    mu: float
    eps: float
    beta: float
    sqrt_weight: bool
    rho_tol: float
    max_m: int


class NystromState(NamedTuple):
    """State of PKAWV-Nyström, updated in place (capacities: ``c_t`` history rows, ``c_m``
    components; ``t = n_history[0]`` and ``m = n_dict[0]`` in use).

    X_hist : (c_t, d), Y_hist : (c_t, n_heads), W_hist : (c_t,) the rows of the history, their
    targets and sample weights (kept to re-project the past on an insertion); Phi : (c_t, c_m) their
    embeddings ``phi(x_s)``; X_dict : (c_m, d) the dictionary points; L : (c_m, c_m) lower Cholesky
    factor of ``K_DD``; kors_inv : (c_m, c_m) ``(W K_DD W + mu I)^{-1}``; kors_w, kors_p : (c_m,) the
    points' KORS weights and inclusion probabilities; dict_idx : (c_m,) int64, their stream
    positions; P : (c_m, c_m) ``A^{-1}``, b : (n_heads, c_m) as in :class:`LinearState`; n_history,
    n_dict, n_skipped, n_after_budget : (1,) int64, the rows of history, the dictionary size, the
    insertions skipped (``rho_tol``) and the rows seen once the dictionary was frozen (``max_m``);
    cum_loss, refresh : (1,) as in :class:`LinearState`.
    """

    X_hist: np.ndarray
    Y_hist: np.ndarray
    W_hist: np.ndarray
    Phi: np.ndarray
    X_dict: np.ndarray
    L: np.ndarray
    kors_inv: np.ndarray
    kors_w: np.ndarray
    kors_p: np.ndarray
    dict_idx: np.ndarray
    P: np.ndarray
    b: np.ndarray
    n_history: np.ndarray
    n_dict: np.ndarray
    n_skipped: np.ndarray
    n_after_budget: np.ndarray
    cum_loss: np.ndarray
    refresh: np.ndarray


@njit(inline="always")
def _weighted_sherman_morrison(P, m, v, w, u, g):
    """``A <- A + w v v'`` on ``P = A^{-1}``; returns ``s = v' P_old v`` (``u = P_old v``).

    ``w = 1`` is exactly ``utils._online_kernel.sherman_morrison`` (the same operations, ``g = u /
    sqrt(1 + s)``, written once here so that the passes compile a single copy of the update);
    ``w = 0`` leaves ``P`` unchanged.
    """
    sym_matvec(P, m, v, u)
    s = 0.0
    for k in range(m):
        s += v[k] * u[k]
    if w == 0.0:
        return s
    c = 1.0 / math.sqrt(1.0 + s) if w == 1.0 else math.sqrt(w / (1.0 + w * s))
    for k in range(m):
        g[k] = u[k] * c
    for i in range(m):
        gi = g[i]
        if gi != 0.0:
            Pi = P[i]
            for k in range(m):
                Pi[k] -= gi * g[k]
    return s


@njit(inline="always")
def _awv_heads(P, m, v, w, u, g, Yrow, b, awv, clip, out_row, loss_acc):
    """Rank-one update with ``v`` (weight ``w``) then predict and learn every head; False if
    non-finite. Weighted least squares: ``A += w v v'``, ``b += w y v``, loss ``w (y - p)^2``."""
    s = _weighted_sherman_morrison(P, m, v, w, u, g)
    shrink = 1.0 / (1.0 + w * s) if awv else 1.0
    for k in range(b.shape[0]):
        bk = b[k]
        num = 0.0
        for j in range(m):
            num += u[j] * bk[j]
        p = num * shrink
        if p > clip:
            p = clip
        elif p < -clip:
            p = -clip
        out_row[k] = p
        if not math.isfinite(p):
            return False
        y = Yrow[k]
        loss_acc[0] += w * ((y - p) * (y - p))
        wy = w * y
        for j in range(m):
            bk[j] += wy * v[j]
    return True


@compiled_only
def _forget(P, m, b, gamma, alpha, refresh, g):
    """Time update of forgetting factor ``gamma < 1``: ``A <- gamma A + c sum_j e_k e_k'`` on ``P =
    A^{-1}`` and ``b <- gamma b``, in O(q m^2).

    Discounting ``A`` alone (``A <- gamma A``, plain exponential forgetting) would also discount the
    regulariser, ``gamma^t alpha I``: ``A^{-1}`` blows up in the directions the data stop exciting
    (covariance windup). Restoring it exactly, ``A <- gamma A + (1 - gamma) alpha I``, is a
    full-rank update (O(m^3) on ``P``). Instead the same mass, ``(1 - gamma) alpha m`` per row, is
    added on ``q = ceil(m (1 - gamma))`` coordinates in turn (``k = refresh[0], refresh[0] + 1, ...``
    modulo m), each a Sherman-Morrison update of weight ``c = (1 - gamma) alpha m / q``: every
    coordinate is refreshed every ``p = m / q <= 1 / (1 - gamma)`` rows, so its regulariser
    settles between ``alpha x / (e^x - 1)`` and ``alpha x / (1 - e^{-x})`` (``x = p (1 - gamma)
    <= 1``: within [0.58, 1.58] alpha) instead of vanishing, and the data's weight is bounded by
    ``max ||v||^2 / (1 - gamma)``: ``P`` stays bounded on any stream. All updates add to ``A``
    (no downdate). The first refresh also applies ``P <- P / gamma`` (one pass over ``P``; ``P``
    stays exactly symmetric). ``g`` is scratch (m,).
    """
    if m == 0:
        return
    q = int(math.ceil(m * (1.0 - gamma)))
    if q < 1:
        q = 1
    elif q > m:
        q = m
    c = (1.0 - gamma) * alpha * m / q
    inv_gamma = 1.0 / gamma
    k = refresh[0] % m
    for j in range(q):
        scale = inv_gamma if j == 0 else 1.0
        Pk = P[k]
        s = Pk[k] * scale
        f = math.sqrt(c / (1.0 + c * s)) * scale
        for i in range(m):
            g[i] = Pk[i] * f
        for i in range(m):
            Pi = P[i]
            gi = g[i]
            for l in range(m):
                Pi[l] = Pi[l] * scale - gi * g[l]
        k += 1
        if k == m:
            k = 0
    refresh[0] = k
    for h in range(b.shape[0]):
        bh = b[h]
        for j in range(m):
            bh[j] *= gamma


@njit
def awv_pass_features(V, Y, sw, settings, state, out):
    """AWV / online ridge on precomputed features ``V`` (n x m); ``state``: :class:`LinearState`."""
    m = V.shape[1]
    P, b, loss_acc = state.P, state.b, state.cum_loss
    awv, clip, gamma, alpha = settings.awv, settings.clip, settings.forgetting, settings.alpha
    u = np.empty(m)
    g = np.empty(m)
    for i in range(V.shape[0]):
        if not _awv_heads(P, m, V[i], sw[i], u, g, Y[i], b, awv, clip, out[i], loss_acc):
            return i
        if gamma != 1.0:
            _forget(P, m, b, gamma, alpha, state.refresh, g)
    return -1


@njit
def awv_pass_taylor(X, Y, sw, taylor, settings, state, out):
    """PKAWV-Taylor: Taylor features (:class:`TaylorMap`) computed row by row inside the pass (O(r)
    per row); ``state``: :class:`LinearState`."""
    r = taylor.parent.shape[0]
    P, b, loss_acc = state.P, state.b, state.cum_loss
    awv, clip, gamma, alpha = settings.awv, settings.clip, settings.forgetting, settings.alpha
    v = np.empty(r)
    u = np.empty(r)
    g = np.empty(r)
    z = np.empty(X.shape[1] + r)
    for i in range(X.shape[0]):
        taylor_row(X[i], taylor.center, taylor.inv_sigma, taylor.parent, taylor.var, taylor.inv_sqrt, z, v)
        if not _awv_heads(P, r, v, sw[i], u, g, Y[i], b, awv, clip, out[i], loss_acc):
            return i
        if gamma != 1.0:
            _forget(P, r, b, gamma, alpha, state.refresh, g)
    return -1


@njit
def rank_one_loop(V, Y, P, b):
    """The bare compiled Sherman-Morrison loop (AWV, one head, features given): speed reference."""
    m = V.shape[1]
    u = np.empty(m)
    g = np.empty(m)
    acc = 0.0
    for i in range(V.shape[0]):
        v = V[i]
        s = sherman_morrison(P, m, v, u, g)
        num = 0.0
        for j in range(m):
            num += u[j] * b[j]
        acc += num / (1.0 + s)
        y = Y[i]
        for j in range(m):
            b[j] += y * v[j]
    return acc


# --------------------------------------------------------------------------- exact kernel AWV
@njit(inline="always")
def _kernel_column(Xh, t, x, kernel, gamma, kv, e):
    """``kv[:t] = k(Xh[:t], x)``; returns ``k(x, x)``."""
    if kernel == 0:
        rbf_row(Xh, t, x, gamma, e, kv)
        return 1.0
    linear_row(Xh, t, x, kv)
    kxx = 0.0
    for j in range(x.shape[0]):
        kxx += x[j] * x[j]
    return kxx


@njit
def kernel_awv_pass(X, Y, sw, start, kernel_settings, settings, state, out):
    """Exact Kernel-AWV / online kernel ridge regression, O(t^2) per row, on a Cholesky factor.

    State (:class:`KernelAWVState`): ``Xh[:t]`` past inputs, ``L[:t, :t]`` the lower Cholesky factor
    of ``K_t + alpha W_t^{-1}`` (``W_t`` the diagonal of the rows' weights; ``alpha I`` unweighted),
    ``W[:t] = L^{-1} y_{1:t}`` (one column per head), ``t = n_stored[0]``. With ``l = L^{-1} k_t(x)``
    (forward substitution) the ridge prediction is ``l' W`` and the squared residual of
    ``k(x, .)`` is ``s2 = k(x, x) - l' l`` (floored at 0); the AWV prediction of a row of weight
    w is the ridge one divided by ``1 + w s2 / alpha`` (Sherman-Morrison). Learning appends the
    row ``(l', r)`` to ``L`` with ``r = sqrt(s2 + alpha / w) >= sqrt(alpha / w)`` (the Schur
    complement, which is ``>= alpha / w`` in exact arithmetic and kept so) and ``(y - l' W) / r``
    to ``W``: no inverse is formed, so the error stays at the level of a direct Cholesky solve for
    small ``alpha``. A row of weight 0 is predicted but not stored. ``kernel``: 0 Gaussian
    (``exp(-gamma d^2)``), 1 linear.

    Budget: once ``t == max_rows`` the rows are predicted with the stored ones and not learned
    (``n_dropped`` counts them). Returns ``(rows_done, status)``; stops early when the buffer is
    full and below the budget (the caller grows it and resumes).
    """
    kernel, gamma, max_rows = kernel_settings.kernel, kernel_settings.gamma, kernel_settings.max_rows
    alpha, awv, clip = settings.alpha, settings.awv, settings.clip
    Xh, L, W, loss_acc = state.X_hist, state.L, state.W, state.cum_loss
    cap = Xh.shape[0]
    n_heads = W.shape[1]
    kv = np.empty(cap)
    lv = np.empty(cap)
    e = np.empty(cap)
    pk = np.empty(n_heads)
    for i in range(start, X.shape[0]):
        t = state.n_stored[0]
        wi = sw[i]
        learn = t < max_rows and wi > 0.0
        if learn and t == cap:
            return i, -1
        x = X[i]
        kxx = _kernel_column(Xh, t, x, kernel, gamma, kv, e)
        lower_solve(L, t, kv, lv)
        s2 = kxx
        for j in range(t):
            s2 -= lv[j] * lv[j]
        if s2 < 0.0:
            s2 = 0.0
        shrink = 1.0 / (1.0 + wi * s2 / alpha) if awv else 1.0
        for k in range(n_heads):
            num = 0.0
            for j in range(t):
                num += lv[j] * W[j, k]
            pk[k] = num
            p = num * shrink
            if p > clip:
                p = clip
            elif p < -clip:
                p = -clip
            out[i, k] = p
            if not math.isfinite(p):
                return i, i
            y = Y[i, k]
            loss_acc[0] += wi * ((y - p) * (y - p))
        if not learn:
            if wi > 0.0:  # past the budget (a row of weight 0 has nothing to learn)
                state.n_dropped[0] += 1
            continue
        # learn: append the row (l', r) to the factor and (y - l'W) / r to W
        r = math.sqrt(s2 + alpha / wi)
        Lt = L[t]
        for j in range(t):
            Lt[j] = lv[j]
        Lt[t] = r
        for k in range(n_heads):
            W[t, k] = (Y[i, k] - pk[k]) / r
        for j in range(x.shape[0]):
            Xh[t, j] = x[j]
        state.n_stored[0] = t + 1
    return X.shape[0], -1


@njit
def kernel_predict(X, kernel_settings, settings, state, out):
    """Stateless predictions of the exact forecaster for the rows of ``X`` (as the next round)."""
    kernel, gamma = kernel_settings.kernel, kernel_settings.gamma
    alpha, awv, clip = settings.alpha, settings.awv, settings.clip
    Xh, L, W = state.X_hist, state.L, state.W
    t = state.n_stored[0]
    n1 = max(t, 1)
    kv = np.empty(n1)
    lv = np.empty(n1)
    e = np.empty(n1)
    for i in range(X.shape[0]):
        x = X[i]
        kxx = _kernel_column(Xh, t, x, kernel, gamma, kv, e)
        lower_solve(L, t, kv, lv)
        s2 = kxx
        for j in range(t):
            s2 -= lv[j] * lv[j]
        if s2 < 0.0:
            s2 = 0.0
        shrink = 1.0 / (1.0 + s2 / alpha) if awv else 1.0
        for k in range(W.shape[1]):
            num = 0.0
            for j in range(t):
                num += lv[j] * W[j, k]
            p = num * shrink
            out[i, k] = min(max(p, -clip), clip)


# --------------------------------------------------------------------------- PKAWV-Nyström
@njit
def nystrom_awv_pass(X, Y, sw, draws, start, kors, settings, state, out):
    """PKAWV with Nyström projections on a KORS dictionary, as a growing orthonormal embedding.

    With ``L L' = K_DD`` (Cholesky), ``phi(x) = L^{-1} k_D(x)`` are the coordinates of the
    projection of ``k(x, .)`` on span{k(x_j, .), j in D} in an orthonormal basis; adding a
    dictionary point appends one coordinate and leaves the others unchanged. PKAWV (the paper's
    eq. 4, with the past re-projected on the grown span) is then linear AWV on ``phi``: on an
    insertion at round t, every past point gets its new coordinate
    ``e_s = (k(x_s, x_t) - phi(x_s)' phi(x_t)) / rho`` and ``A = alpha I + Phi' Phi``, ``b = Phi' Y``
    grow by one row/column (``P = A^{-1}`` by the Schur complement).

    ``draws[i]`` is row i's uniform draw for KORS's Bernoulli; ``kors``: :class:`KORSSettings`;
    ``state``: :class:`NystromState`, with ``t = n_history[0]`` rows in the history and
    ``m = n_dict[0]`` dictionary points. An insertion whose residual ``rho^2 = 1 - ||phi(x_t)||^2``
    is below ``rho_tol`` (numerically already in the span) is skipped and counted (``n_skipped``).
    Budget: once ``m == max_m`` the dictionary is frozen (rows are no longer offered to KORS;
    counted in ``n_after_budget``) and the history, needed only to re-project the past on an
    insertion, stops growing: the pass is then linear AWV on a fixed ``m``-dimensional map.

    Forgetting (``forget = settings.forgetting < 1``): every row ends with the time update of
    :func:`_forget` on the current ``m`` coordinates; on an insertion the past rows enter the new
    coordinate with their discounted weights ``w_s forget^(t - s)`` (row s of the history, t rows
    stored) and the new coordinate's regulariser is ``alpha`` (a fresh one).
    """
    gamma, mu, eps, beta, sqrt_weight = kors.gamma, kors.mu, kors.eps, kors.beta, kors.sqrt_weight
    rho_tol, max_m = kors.rho_tol, kors.max_m
    alpha, awv, clip, forget = settings.alpha, settings.awv, settings.clip, settings.forgetting
    Xh, Yh, Wh, Phi = state.X_hist, state.Y_hist, state.W_hist, state.Phi
    Xd, L, Ginv, w, probs, didx = state.X_dict, state.L, state.kors_inv, state.kors_w, state.kors_p, state.dict_idx
    P, b, loss_acc = state.P, state.b, state.cum_loss
    cap_t = Xh.shape[0]
    cap_m = Xd.shape[0]
    n_heads = b.shape[0]
    d = X.shape[1]
    ln = max(cap_t, cap_m) + 1
    kD = np.empty(ln)
    phi = np.empty(ln)
    wk = np.empty(ln)
    q = np.empty(ln)
    e = np.empty(ln)
    u = np.empty(ln)
    g = np.empty(ln)
    ecol = np.empty(ln)
    cvec = np.empty(ln)
    w_aged = np.empty(cap_t if forget != 1.0 else 0)
    for i in range(start, X.shape[0]):
        t = state.n_history[0]
        m = state.n_dict[0]
        frozen = m >= max_m
        if t == cap_t and not frozen:
            return i, -1
        x = X[i]
        if frozen:  # no KORS decision: the embedding phi = L^{-1} k_D(x) only
            rbf_row(Xd, m, x, gamma, e, kD)
            lower_solve(L, m, kD, phi)
            state.n_after_budget[0] += 1
            z, p, rho2 = False, 0.0, 0.0
        else:
            z, p, rho2 = kors_nystrom_decide(
                Xd, m, x, gamma, L, Ginv, w, mu, eps, beta, draws[i], kD, phi, wk, q, e
            )
        if z:
            if rho2 > rho_tol:
                if m == cap_m:
                    return i, -1
                rho = math.sqrt(rho2)
                # new coordinate of every past point
                rbf_row(Xh, t, x, gamma, e, ecol)
                for s in range(t):
                    Ps = Phi[s]
                    acc = ecol[s]
                    for k in range(m):
                        acc -= Ps[k] * phi[k]
                    ecol[s] = acc / rho
                # c = Phi' e ; corner = alpha + e' e ; grow P = A^{-1}
                if forget != 1.0:  # past rows count with their discounted weights
                    for s in range(t):
                        w_aged[s] = Wh[s] * math.pow(forget, t - s)
                    Wr = w_aged
                else:
                    Wr = Wh
                for k in range(m):
                    cvec[k] = 0.0
                corner = alpha
                for s in range(t):
                    es = ecol[s]
                    wes = Wr[s] * es  # weighted least squares: past rows count with their weight
                    corner += wes * es
                    if wes != 0.0:
                        Ps = Phi[s]
                        for k in range(m):
                            cvec[k] += wes * Ps[k]
                inverse_append(P, m, cvec, corner, q)
                for k in range(n_heads):
                    acc = 0.0
                    for s in range(t):
                        acc += (Wr[s] * ecol[s]) * Yh[s, k]
                    b[k, m] = acc
                for s in range(t):
                    Phi[s, m] = ecol[s]
                kors_nystrom_insert(Xd, m, x, L, Ginv, w, probs, mu, p, sqrt_weight, phi, rho, wk, q)
                didx[m] = t
                m += 1
                state.n_dict[0] = m
            else:
                state.n_skipped[0] += 1
        # AWV step on phi (m may be 0: prediction 0)
        if not _awv_heads(P, m, phi, sw[i], u, g, Y[i], b, awv, clip, out[i], loss_acc):
            return i, i
        if forget != 1.0:
            _forget(P, m, b, forget, alpha, state.refresh, g)
        if m >= max_m:  # frozen dictionary: no insertion will need this row again
            continue
        for k in range(m):
            Phi[t, k] = phi[k]
        for j in range(d):
            Xh[t, j] = x[j]
        for k in range(n_heads):
            Yh[t, k] = Y[i, k]
        Wh[t] = sw[i]
        state.n_history[0] = t + 1
    return X.shape[0], -1
