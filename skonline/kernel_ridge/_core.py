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
from numba import types
from numba.extending import overload

from ..utils._jit import OVERLOAD_OPTIONS, compiled_only, njit
from ..utils._online_kernel import (  # noqa: F401 (records the estimators build through this module)
    DenseStore,
    KORSSettings,
    SparseRows,
    SparseStore,
    _sparse_append,
    inverse_append,
    kors_decide,
    kors_insert,
    linear_cols,
    lower_solve_t,
    n_rows,
    new_work,
    rank_one_downdate,
    rbf_cols,
    rbf_sparse_rows,
    residual,
    row_width,
    sherman_morrison,
    sm_factor,
    sparse_kernel_rows,
    store_add_dict,
    store_add_hist,
    store_dict_fits,
    store_dict_kernel,
    store_hist_fits,
    store_hist_kernel,
    store_row_begin,
    store_row_end,
    sym_matvec,
    taylor_row,
    unit_update,
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
    The rows learned are in the store record (:class:`DenseStore` or :class:`SparseStore`, its
    dictionary slot; see :func:`kernel_awv_pass`).

    L : (c, c) the lower Cholesky factor of ``K_t + alpha W_t^{-1}``, stored transposed (upper
    triangular ``L'``); W : (c, n_heads) ``L^{-1} y_{1:t}``; Y : (c, n_heads), sw : (c,) the rows'
    targets and weights; n_stored : (1,) int64, rows learned; cum_loss : (1,) as in
    :class:`LinearState`; work : scratch, zeros of the rows' width (sparse layout; empty for
    dense rows), a row is scattered into it for its kernel values.
    """

    L: np.ndarray
    W: np.ndarray
    Y: np.ndarray
    sw: np.ndarray
    n_stored: np.ndarray
    cum_loss: np.ndarray
    work: np.ndarray


class NystromState(NamedTuple):
    """State of PKAWV-Nyström, updated in place (capacities: ``c_t`` history rows, ``c_m``
    components; ``t = n_history[0]`` and ``m = n_dict[0]`` in use). The points themselves (the
    dictionary and the rows of history) are in the store record (:class:`DenseStore`).

    Y_hist : (c_t, n_heads), W_hist : (c_t,) the targets and sample weights of the rows of history
    (kept to re-project the past on an insertion); Phi : (c_t, c_m) their embeddings
    ``phi(x_s)``; L : (c_m, c_m) the lower Cholesky factor of ``K_DD`` stored transposed (upper
    triangular ``L'``); kors_inv : (c_m, c_m) ``(W K_DD W + mu I)^{-1}``; kors_w, kors_p : (c_m,)
    the points' KORS weights and inclusion probabilities; dict_idx : (c_m,) int64, their stream
    positions; P : (c_m, c_m) ``A^{-1}``, b : (n_heads, c_m) as in :class:`LinearState`;
    n_history, hist_start, n_dict, n_skipped, n_after_budget : (1,) int64, the rows in the history
    buffers, the stream position of the first of them, the dictionary size, the insertions skipped
    (``rho_tol``) and the rows seen once the dictionary was frozen (``max_m``); cum_loss,
    refresh : (1,) as in :class:`LinearState`.
    """

    Y_hist: np.ndarray
    W_hist: np.ndarray
    Phi: np.ndarray
    L: np.ndarray
    kors_inv: np.ndarray
    kors_w: np.ndarray
    kors_p: np.ndarray
    dict_idx: np.ndarray
    P: np.ndarray
    b: np.ndarray
    n_history: np.ndarray
    hist_start: np.ndarray
    n_dict: np.ndarray
    n_skipped: np.ndarray
    n_after_budget: np.ndarray
    cum_loss: np.ndarray
    refresh: np.ndarray


@compiled_only(borrowed=True)  # allocates nothing: its inlined helpers count no references
def _awv_row(P, m, v, u, w, g, h, Yrow, b, settings, refresh, out_row, loss_acc, vn, un, has_next):
    """One row of the forecaster on features ``v``, given ``u = P v``; False if a prediction is
    non-finite.

    Predict every head (AWV: ``u' b / (1 + w s)``, ``s = v' u``; ridge: ``u' b``), learn the row
    (weighted least squares: ``A += w v v'``, ``b += w y v``, loss ``w (y - p)^2``) and, with
    forgetting (``settings.forgetting = gamma < 1``), apply the time update. When ``has_next``, the
    next row's ``un = P vn`` is accumulated in the same pass over ``P`` (row by row, as each row of
    ``P`` is final; the next row's features do not depend on the state): one pass over ``P`` per
    row instead of two. Every entry receives the same operations, in the same order, as a
    separate matrix-vector product would give it.

    The update: ``P <- P - g g'``, ``g = u sqrt(w / (1 + w s))`` (Sherman-Morrison; ``w = 0``
    leaves ``P`` unchanged). The time update ``A <- gamma A + c e_k e_k'`` and
    ``b <- gamma (b + w y v)``: on ``P``, with ``P1 = P - g g'``,
    ``P <- P1 / gamma - h h'``, ``h = P1 e_k sqrt(c' / (1 + c' P1_kk)) / gamma`` and
    ``c' = c / gamma``: row ``k`` of ``P1`` is read before the pass, and the same pass applies both
    rank-one terms and the scaling (each entry gets the operations of the Sherman-Morrison update
    followed by a separate refresh pass).

    The regulariser of the time update: discounting ``A`` alone (plain exponential forgetting)
    would also discount ``alpha I`` as ``gamma^t alpha I``, and ``A^{-1}`` would blow up in the
    directions the data stop exciting (covariance windup); restoring it exactly,
    ``A <- gamma A + (1 - gamma) alpha I``, is a full-rank update. Instead the same mass,
    ``(1 - gamma) alpha m`` per row, is added on ``q = ceil(m (1 - gamma))`` coordinates in turn
    (``k = refresh[0], refresh[0] + 1, ...`` modulo m), each with weight
    ``c = (1 - gamma) alpha m / q``: every coordinate is refreshed every
    ``p = m / q <= 1 / (1 - gamma)`` rows, so its regulariser settles between
    ``alpha x / (e^x - 1)`` and ``alpha x / (1 - e^{-x})`` (``x = p (1 - gamma) <= 1``: within
    [0.58, 1.58] alpha) instead of vanishing, and the data's weight is bounded by
    ``max ||v||^2 / (1 - gamma)``: ``P`` stays bounded on any stream. Every update adds to ``A``
    (no downdate); ``P`` stays exactly symmetric. The first refresh is folded into the row's pass;
    the ``q - 1`` others (only when ``m (1 - gamma) > 1``) are passes of their own.
    ``g``, ``h``: scratch (m,).
    """
    gamma = settings.forgetting
    forget = gamma != 1.0
    s = 0.0
    for k in range(m):
        s += v[k] * u[k]
    shrink = 1.0 / (1.0 + w * s) if settings.awv else 1.0
    clip = settings.clip
    for hd in range(b.shape[0]):
        bk = b[hd]
        num = 0.0
        for j in range(m):
            num += u[j] * bk[j]
        p = num * shrink
        if p > clip:
            p = clip
        elif p < -clip:
            p = -clip
        out_row[hd] = p
        if not math.isfinite(p):
            return False
        y = Yrow[hd]
        loss_acc[0] += w * ((y - p) * (y - p))
        wy = w * y
        if forget:
            for j in range(m):
                bk[j] = (bk[j] + wy * v[j]) * gamma
        else:
            for j in range(m):
                bk[j] += wy * v[j]
    if has_next:
        for k in range(m):
            un[k] = 0.0
    if m == 0:
        return True
    sm_factor(u, m, s, w, g)
    if not forget:
        if not has_next:
            rank_one_downdate(P, m, g)
            return True
        for i in range(m):  # one loop: the row of P is read once (a zero gi or vi changes no bit)
            Pi = P[i]
            gi = g[i]
            vi = vn[i]
            for k in range(m):
                pk = Pi[k] - gi * g[k]
                Pi[k] = pk
                un[k] += vi * pk
        return True
    q = int(math.ceil(m * (1.0 - gamma)))
    if q < 1:
        q = 1
    elif q > m:
        q = m
    cr = (1.0 - gamma) * settings.alpha * m / q
    inv_gamma = 1.0 / gamma
    k = refresh[0] % m
    Pk = P[k]
    gk = g[k]
    s1 = (Pk[k] - gk * gk) * inv_gamma
    f = math.sqrt(cr / (1.0 + cr * s1)) * inv_gamma
    for i in range(m):
        h[i] = (Pk[i] - gk * g[i]) * f
    k += 1
    if k == m:
        k = 0
    if q == 1:
        fused = has_next
        for i in range(m):
            Pi = P[i]
            gi = g[i]
            hi = h[i]
            vi = vn[i] if fused else 0.0  # one loop: the row of P is read once
            for l in range(m):
                pl = (Pi[l] - gi * g[l]) * inv_gamma - hi * h[l]
                Pi[l] = pl
                un[l] += vi * pl
    else:
        # the second refresh in the same pass (m (1 - gamma) in (1, 2], e.g. 1,000 features at
        # gamma = 0.999): its vector is row k of the matrix after the first refresh, whose entries
        # are computed here exactly as the pass computes them, so every entry gets the same
        # operations, in the same order, as two passes would give it; u (P v, no longer needed)
        # holds it
        fused = has_next and q == 2
        h2 = u
        Pk = P[k]
        gk = g[k]
        hk = h[k]
        for i in range(m):
            h2[i] = (Pk[i] - gk * g[i]) * inv_gamma - hk * h[i]
        f2 = math.sqrt(cr / (1.0 + cr * h2[k]))
        for i in range(m):
            h2[i] = h2[i] * f2
        for i in range(m):
            Pi = P[i]
            gi = g[i]
            hi = h[i]
            h2i = h2[i]
            if fused:
                vi = vn[i]
                for l in range(m):
                    pl = (Pi[l] - gi * g[l]) * inv_gamma - hi * h[l] - h2i * h2[l]
                    Pi[l] = pl
                    un[l] += vi * pl
            else:  # un may be u itself (a single step): not written
                for l in range(m):
                    Pi[l] = (Pi[l] - gi * g[l]) * inv_gamma - hi * h[l] - h2i * h2[l]
        k += 1
        if k == m:
            k = 0
        q -= 1
    for _ in range(q - 1):
        unit_update(P, m, k, cr, h)
        k += 1
        if k == m:
            k = 0
    refresh[0] = k
    if has_next and not fused:
        sym_matvec(P, m, vn, un)
    return True


@njit(inline="always")
def _awv_step(P, m, v, w, u, g, h, Yrow, b, settings, refresh, out_row, loss_acc):
    """One row on features ``v`` (``u = P v`` computed here): :func:`_awv_row`. False if a
    prediction is non-finite."""
    sym_matvec(P, m, v, u)
    no_next = m < 0  # False, typed as a run-time bool: the same compiled _awv_row as the other passes
    return _awv_row(P, m, v, u, w, g, h, Yrow, b, settings, refresh, out_row, loss_acc, v, u, no_next)


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
# The rows learned are kept in a store record (its dictionary slot): DenseStore with dense rows X,
# SparseStore with SparseRows. Three operations per layout, chosen from the record's type
# (overloads of the stubs; fewer, larger operations than the generic store_* of a Nyström map:
# each overload is one more function to compile in a first fit):
#   _rows_kernel(store, X, i, t, kernel, gamma, work, e, out) -> ||X[i]||^2
#   _rows_fit(store, X, i, t) -> bool        room for row i as row t
#   _rows_append(store, X, i, t, xsq)        row i becomes row t
def _rows_kernel(store, X, i, t, kernel, gamma, work, e, out):
    """``out[:t] = k(x_s, X[i])`` over the first ``t`` rows learned (0 Gaussian, 1 linear);
    returns ``||X[i]||^2``."""


def _rows_fit(store, X, i, t):
    """Whether row i fits in the store as row t (sparse layout: its entries)."""


def _rows_append(store, X, i, t, xsq):
    """Row i (squared norm ``xsq``) becomes row t of the store."""


def _dense_rows_kernel(store, X, i, t, kernel, gamma, work, e, out):
    x = X[i]
    if kernel == 0:
        rbf_cols(store.XdT, t, x, gamma, e, out)
    else:
        linear_cols(store.XdT, t, x, out)
    xsq = 0.0
    for j in range(x.shape[0]):
        xsq += x[j] * x[j]
    return xsq


def _dense_rows_fit(store, X, i, t):
    return True


def _dense_rows_append(store, X, i, t, xsq):
    x = X[i]
    for j in range(x.shape[0]):
        store.XdT[j, t] = x[j]


def _sparse_rows_kernel(store, X, i, t, kernel, gamma, work, e, out):
    xsq = 0.0
    for p in range(X.indptr[i], X.indptr[i + 1]):
        v = X.data[p]
        work[X.indices[p]] = v
        xsq += v * v
    sparse_kernel_rows(kernel, store.D_val, store.D_idx, store.D_ptr, store.D_sq, t, work, xsq, gamma, e, out)
    for p in range(X.indptr[i], X.indptr[i + 1]):
        work[X.indices[p]] = 0.0
    return xsq


def _sparse_rows_fit(store, X, i, t):
    return store.D_ptr[t] + (X.indptr[i + 1] - X.indptr[i]) <= store.D_val.shape[0]


def _sparse_rows_append(store, X, i, t, xsq):
    _sparse_append(store.D_val, store.D_idx, store.D_ptr, store.D_sq, t, X, i, xsq)


def _rows_impl(store, k):
    for record, impls in ((DenseStore, (_dense_rows_kernel, _dense_rows_fit, _dense_rows_append)),
                          (SparseStore, (_sparse_rows_kernel, _sparse_rows_fit, _sparse_rows_append))):
        if isinstance(store, types.BaseNamedTuple) and store.instance_class is record:
            return impls[k]
    return None


@overload(_rows_kernel, jit_options=OVERLOAD_OPTIONS)
def _rows_kernel_impl(store, X, i, t, kernel, gamma, work, e, out):
    return _rows_impl(store, 0)


@overload(_rows_fit, jit_options=OVERLOAD_OPTIONS)
def _rows_fit_impl(store, X, i, t):
    return _rows_impl(store, 1)


@overload(_rows_append, jit_options=OVERLOAD_OPTIONS)
def _rows_append_impl(store, X, i, t, xsq):
    return _rows_impl(store, 2)


@njit(inline="always")
def _posterior_var(store, X, i, t, kernel, gamma, work, kv, e, U, lv):
    """``s2 = k(x, x) - l' l`` (clamped at 0) for ``x = X[i]``, with ``l = L^{-1} k_t(x)`` written
    to ``lv`` and the kernel column ``k_t(x)`` against the ``t`` rows learned to ``kv`` (``work``,
    ``e``: scratch): the posterior variance of ``x`` that the exact forecaster predicts and learns
    with. Returns ``(s2, ||x||^2)``."""
    xsq = _rows_kernel(store, X, i, t, kernel, gamma, work, e, kv)
    kxx = 1.0 if kernel == 0 else xsq
    lower_solve_t(U, t, kv, lv)
    return residual(kxx, lv, lv, t), xsq


@njit
def kernel_awv_pass(X, Y, sw, start, kernel_settings, settings, store, state, out):
    """Exact Kernel-AWV / online kernel ridge regression, O(t^2) per row, on a Cholesky factor.

    Rows: dense ``X`` with a :class:`DenseStore` (the rows learned are the columns of its
    ``XdT``; ``XhT`` unused), or :class:`SparseRows` with a :class:`SparseStore` (the rows learned
    are its dictionary points ``D_*``, with their squared norms; ``H_*`` unused): a kernel value
    then costs O(nnz) (``||x||^2 + ||c||^2 - 2 x'c``, the row scattered in a dense work vector).
    State (:class:`KernelAWVState`): ``L`` the lower
    Cholesky factor of ``K_t + alpha W_t^{-1}`` stored transposed (``U = L'``; ``W_t`` the diagonal
    of the rows' weights; ``alpha I`` unweighted), ``W[:t] = L^{-1} y_{1:t}`` (one column per
    head), ``t = n_stored[0]``. With ``l = L^{-1} k_t(x)`` (forward substitution) the ridge
    prediction is ``l' W`` and the squared residual of ``k(x, .)`` is ``s2 = k(x, x) - l' l``
    (floored at 0); the AWV prediction of a row of weight w is the ridge one divided by
    ``1 + w s2 / alpha`` (Sherman-Morrison). Learning appends the row ``(l', r)`` to ``L`` with
    ``r = sqrt(s2 + alpha / w) >= sqrt(alpha / w)`` (the Schur complement, which is
    ``>= alpha / w`` in exact arithmetic and kept so) and ``(y - l' W) / r`` to ``W``: no inverse
    is formed, so the error stays at the level of a direct Cholesky solve for small ``alpha``. The
    row's targets and weight are kept (``Y``, ``sw``) for the switch to a projection at the budget.
    A row of weight 0 is predicted but not stored. ``kernel``: 0 Gaussian (``exp(-gamma d^2)``),
    1 linear.

    Returns ``(rows_done, status)``; stops early when a buffer is full (rows, or the sparse
    store's entries) or when a row would be learned with ``t == max_rows`` stored already (the
    caller grows the buffers, or switches to the projected forecaster, and resumes).
    """
    kernel, gamma, max_rows = kernel_settings.kernel, kernel_settings.gamma, kernel_settings.max_rows
    alpha, awv, clip = settings.alpha, settings.awv, settings.clip
    U, W, loss_acc = state.L, state.W, state.cum_loss
    cap = U.shape[0]
    n_heads = W.shape[1]
    kv = np.empty(cap)
    lv = np.empty(cap)
    e = np.empty(cap)
    pk = np.empty(n_heads)
    work = state.work
    n = Y.shape[0]
    for i in range(start, n):
        t = state.n_stored[0]
        wi = sw[i]
        learn = wi > 0.0
        if learn and (t == cap or t == max_rows or not _rows_fit(store, X, i, t)):
            return i, -1
        s2, xsq = _posterior_var(store, X, i, t, kernel, gamma, work, kv, e, U, lv)
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
            continue
        # learn: append the row (l', r) to the factor (a column of U) and (y - l'W) / r to W
        r = math.sqrt(s2 + alpha / wi)
        for j in range(t):
            U[j, t] = lv[j]
        U[t, t] = r
        for k in range(n_heads):
            W[t, k] = (Y[i, k] - pk[k]) / r
            state.Y[t, k] = Y[i, k]
        state.sw[t] = wi
        _rows_append(store, X, i, t, xsq)
        state.n_stored[0] = t + 1
    return n, -1


@njit
def kernel_predict(X, kernel_settings, settings, store, state, out):
    """Stateless predictions of the exact forecaster for the rows of ``X`` (as the next round;
    ``X`` and ``store`` as in :func:`kernel_awv_pass`)."""
    kernel, gamma = kernel_settings.kernel, kernel_settings.gamma
    alpha, awv, clip = settings.alpha, settings.awv, settings.clip
    U, W = state.L, state.W
    t = state.n_stored[0]
    n1 = max(t, 1)
    kv = np.empty(n1)
    lv = np.empty(n1)
    e = np.empty(n1)
    work = state.work
    for i in range(out.shape[0]):
        s2, _ = _posterior_var(store, X, i, t, kernel, gamma, work, kv, e, U, lv)
        shrink = 1.0 / (1.0 + s2 / alpha) if awv else 1.0
        for k in range(W.shape[1]):
            num = 0.0
            for j in range(t):
                num += lv[j] * W[j, k]
            p = num * shrink
            out[i, k] = min(max(p, -clip), clip)


@njit
def pivoted_projection(X, store, Y, sw, t, kernel, gamma, alpha, max_m, rel_tol, work, U, P, b, piv):
    """Switch of exact Kernel-AWV to PKAWV on a fixed Nyström dictionary of its stored rows.

    Greedy pivoted (incomplete) Cholesky of the kernel matrix of the ``t`` stored points (the
    store's dictionary slot, as in :func:`kernel_awv_pass`; ``X``: the same points as rows, dense
    (t, d) or :class:`SparseRows`; ``work``: as :class:`KernelAWVState`'s): at each step the point of largest residual
    ``k(x, x) - ||phi(x)||^2`` (smallest index among equals) joins the dictionary, until ``max_m``
    points or until every residual is below ``rel_tol`` times the largest diagonal entry.
    ``G[s] = phi(x_s)`` are the coordinates of the stored points in the orthonormal basis of the
    dictionary's span, and the rows of ``G`` at the pivots are the Cholesky factor of ``K_DD``.
    Writes ``U = L'``, ``P = (alpha I + sum_s w_s phi_s phi_s')^{-1}`` (grown by Schur
    complements) and ``b = sum_s w_s y_s phi_s'`` (the projected forecaster that has learned the
    stored rows), and the pivots' row indices ``piv`` (the dictionary points are the stored rows
    ``piv[:m]``). Returns the dictionary size m. O(t m (d + m) + m^3) (sparse: nnz for d).
    """
    G = np.zeros((t, max_m))
    r = np.empty(t)
    kcol = np.empty(t)
    e = np.empty(t)
    top = 0.0
    for s in range(t):
        if kernel == 0:
            r[s] = 1.0
        else:  # ||x_s||^2 (no kernel value against 0 rows)
            r[s] = _rows_kernel(store, X, s, 0, kernel, gamma, work, e, kcol)
        if r[s] > top:
            top = r[s]
    m = 0
    while m < max_m:
        best = -1
        rb = rel_tol * top
        for s in range(t):
            if r[s] > rb:
                rb = r[s]
                best = s
        if best < 0:
            break
        _rows_kernel(store, X, best, t, kernel, gamma, work, e, kcol)
        piv_val = math.sqrt(r[best])
        for s in range(t):
            acc = kcol[s]
            Gs = G[s]
            Gb = G[best]
            for k in range(m):
                acc -= Gs[k] * Gb[k]
            G[s, m] = acc / piv_val
        G[best, m] = piv_val
        for s in range(t):
            r[s] -= G[s, m] * G[s, m]
        r[best] = 0.0
        piv[m] = best
        m += 1
    # U = L' with L[i] = G[piv[i], :i+1] (lower triangular in pivot order)
    for i in range(m):
        Gi = G[piv[i]]
        for k in range(i):
            U[k, i] = Gi[k]
            U[i, k] = 0.0
        U[i, i] = Gi[i]
    # A = alpha I + sum_s w_s G_s G_s', b = sum_s w_s y_s G_s
    A = np.zeros((m, m))
    for i in range(m):
        A[i, i] = alpha
    for s in range(t):
        ws = sw[s]
        Gs = G[s]
        for i in range(m):
            a = ws * Gs[i]
            if a != 0.0:
                Ai = A[i]
                for k in range(m):
                    Ai[k] += a * Gs[k]
        for h in range(b.shape[0]):
            wy = ws * Y[s, h]
            for k in range(m):
                b[h, k] += wy * Gs[k]
    # P = A^{-1}, grown one row/column at a time by the Schur complement (A >= alpha I)
    q = np.empty(m)
    for k in range(m):
        inverse_append(P, k, A[k], A[k, k], q)
    return m


# --------------------------------------------------------------------------- PKAWV-Nyström
class DenseMap(NamedTuple):
    """The fixed Nyström map of a frozen dictionary, dense layout: ``phi(x) = L^{-1} k_D(x)`` with
    the ``m`` points the columns of ``XdT`` and ``U = L'``; ``kernel`` 0 Gaussian
    ``exp(-gamma ||x - x'||^2)``, 1 linear (exact Kernel-AWV's linear kernel past its budget)."""

    XdT: np.ndarray
    U: np.ndarray
    m: int
    gamma: float
    kernel: int


class SparseMap(NamedTuple):
    """The fixed Nyström map of a frozen dictionary, sparse layout (:class:`SparseStore`'s
    dictionary arrays, ``U = L'``, ``m`` points; ``work``: zeros of the inputs' width, scratch;
    ``kernel`` as in :class:`DenseMap`)."""

    D_val: np.ndarray
    D_idx: np.ndarray
    D_ptr: np.ndarray
    D_sq: np.ndarray
    U: np.ndarray
    m: int
    gamma: float
    work: np.ndarray
    kernel: int


class FeatureRows(NamedTuple):
    """A fixed feature map that is the identity: the rows are the features (``V``, (n, m))."""

    V: np.ndarray


def _features(fmap, X, i, v, kv, e):
    """``v = phi(X[i])`` under the fixed feature map ``fmap`` (``kv``, ``e``: scratch)."""


def _features_rows(fmap, X, i, v, kv, e):
    V = fmap.V[i]
    for k in range(V.shape[0]):
        v[k] = V[k]


def _features_taylor(fmap, X, i, v, kv, e):
    taylor_row(X[i], fmap.center, fmap.inv_sigma, fmap.parent, fmap.var, fmap.inv_sqrt, e, v)


def _features_dense_map(fmap, X, i, v, kv, e):
    if fmap.kernel == 0:
        rbf_cols(fmap.XdT, fmap.m, X[i], fmap.gamma, e, kv)
    else:
        linear_cols(fmap.XdT, fmap.m, X[i], kv)
    lower_solve_t(fmap.U, fmap.m, kv, v)


def _features_sparse_map(fmap, X, i, v, kv, e):
    work = fmap.work
    xsq = 0.0
    for p in range(X.indptr[i], X.indptr[i + 1]):
        xv = X.data[p]
        work[X.indices[p]] = xv
        xsq += xv * xv
    sparse_kernel_rows(fmap.kernel, fmap.D_val, fmap.D_idx, fmap.D_ptr, fmap.D_sq, fmap.m, work, xsq, fmap.gamma, e,
                       kv)
    for p in range(X.indptr[i], X.indptr[i + 1]):
        work[X.indices[p]] = 0.0
    lower_solve_t(fmap.U, fmap.m, kv, v)


@overload(_features, jit_options=OVERLOAD_OPTIONS)
def _features_impl(fmap, X, i, v, kv, e):
    for record, impl in ((FeatureRows, _features_rows), (TaylorMap, _features_taylor),
                         (DenseMap, _features_dense_map), (SparseMap, _features_sparse_map)):
        if isinstance(fmap, types.BaseNamedTuple) and fmap.instance_class is record:
            return impl
    return None


@njit(inline="always")
def _awv_rows(fmap, m, X, Y, sw, lo, hi, settings, P, b, refresh, out, loss_acc):
    """Rows ``lo:hi`` of the forecaster on the fixed feature map ``fmap`` (``m`` features): each
    row's ``P v`` is accumulated in the previous row's pass over ``P`` (:func:`_awv_row`).
    Returns -1, or the index of a row whose prediction is non-finite."""
    if lo >= hi:
        return -1
    ln = max(m, 1)
    v = np.empty(ln)
    vn = np.empty(ln)
    u = np.empty(ln)
    un = np.empty(ln)
    g = np.empty(ln)
    h = np.empty(ln)
    kv = np.empty(ln)
    e = np.empty(ln + row_width(X))
    _features(fmap, X, lo, v, kv, e)
    sym_matvec(P, m, v, u)
    for i in range(lo, hi):
        has_next = i + 1 < hi
        if has_next:
            _features(fmap, X, i + 1, vn, kv, e)
        if not _awv_row(P, m, v, u, sw[i], g, h, Y[i], b, settings, refresh, out[i], loss_acc, vn, un, has_next):
            return i
        v, vn = vn, v
        u, un = un, u
    return -1


@njit
def awv_pass_features(V, Y, sw, settings, state, out):
    """AWV / online ridge on precomputed features ``V`` (n x m); ``state``: :class:`LinearState`."""
    return _awv_rows(FeatureRows(V), V.shape[1], V, Y, sw, 0, V.shape[0], settings, state.P, state.b, state.refresh,
                     out, state.cum_loss)


@njit
def awv_pass_frozen(X, Y, sw, start, fmap, settings, state, out):
    """PKAWV on a frozen Nyström dictionary (:class:`DenseMap` or :class:`SparseMap`, ``X`` the
    matching rows), from row ``start`` on: linear AWV on the fixed map ``phi = L^{-1} k_D(x)``,
    O(m d + m^2) per row; ``state``: :class:`LinearState`. Returns -1 or a row index (status)."""
    return _awv_rows(fmap, fmap.m, X, Y, sw, start, n_rows(X), settings, state.P, state.b, state.refresh, out,
                     state.cum_loss)


@njit
def awv_pass_taylor(X, Y, sw, taylor, settings, state, out):
    """PKAWV-Taylor: Taylor features (:class:`TaylorMap`) computed row by row inside the pass (O(r)
    per row); ``state``: :class:`LinearState`."""
    return _awv_rows(taylor, taylor.parent.shape[0], X, Y, sw, 0, X.shape[0], settings, state.P, state.b,
                     state.refresh, out, state.cum_loss)


@njit
def nystrom_awv_pass(X, Y, sw, draws, start, kors, settings, store, state, out):
    """PKAWV with Nyström projections on a KORS dictionary, as a growing orthonormal embedding.

    With ``L L' = K_DD`` (Cholesky; kept transposed, ``U = L'``), ``phi(x) = L^{-1} k_D(x)`` are
    the coordinates of the projection of ``k(x, .)`` on span{k(x_j, .), j in D} in an
    orthonormal basis; adding a dictionary point appends one coordinate and leaves the others
    unchanged. PKAWV (the paper's eq. 4, with the past re-projected on the grown span) is then
    linear AWV on ``phi``: on an insertion at round t, every past point kept in the history gets
    its new coordinate ``e_s = (k(x_s, x_t) - phi(x_s)' phi(x_t)) / rho`` and
    ``A = alpha I + Phi' Phi``, ``b = Phi' Y`` grow by one row/column (``P = A^{-1}`` by the Schur
    complement).

    History: the rows of history are positions ``[0, n_history)`` of the history buffers (row
    ``hist_start + s`` of the stream at position s). An insertion re-projects the last
    ``max_hist`` of them (all of them with ``max_hist`` unbounded: the paper's algorithm); older
    rows keep a zero new coordinate (their features are their projection on the dictionary as it
    was ``max_hist`` rows after them). The caller compacts the buffers (keeps the last
    ``max_hist`` rows) when they are full.

    ``draws[i]`` is row i's uniform draw for KORS's Bernoulli; ``kors``: :class:`KORSSettings`;
    ``store``: where the points are kept (:class:`DenseStore` with dense rows ``X``,
    :class:`SparseStore` with :class:`SparseRows`); ``state``: :class:`NystromState` with
    ``t = n_history[0]`` rows in the history buffers and ``m = n_dict[0]`` dictionary points. An
    insertion whose residual ``rho^2 = 1 - ||phi(x_t)||^2`` is below ``rho_tol`` (numerically
    already in the span) is skipped and counted (``n_skipped``). Budget: once ``m == max_m`` the
    dictionary is frozen: the pass returns, and the caller learns the rest of the chunk with
    :func:`awv_pass_frozen` (linear AWV on the fixed ``m``-dimensional map, O(m d + m^2) per
    row; the rows are no longer offered to KORS and the history is no longer written).

    Forgetting (``forget = settings.forgetting < 1``): every row ends with the time update of
    :func:`_awv_heads_forget`; on an insertion the past rows enter the new coordinate with their
    discounted weights ``w_s forget^(t - s)`` (position s of the history, t rows stored) and the
    new coordinate's regulariser is ``alpha`` (a fresh one).

    Returns ``(rows_done, status)``; stops early when a buffer is full (the caller grows or
    compacts it and resumes at ``rows_done``) or when the dictionary is frozen.
    """
    gamma, mu, eps, beta, sqrt_weight = kors.gamma, kors.mu, kors.eps, kors.beta, kors.sqrt_weight
    rho_tol, max_m, max_hist, kernel = kors.rho_tol, kors.max_m, kors.max_hist, kors.kernel
    alpha, forget = settings.alpha, settings.forgetting
    Yh, Wh, Phi = state.Y_hist, state.W_hist, state.Phi
    U, Ginv, w, probs, didx = state.L, state.kors_inv, state.kors_w, state.kors_p, state.dict_idx
    P, b, loss_acc = state.P, state.b, state.cum_loss
    cap_t = Phi.shape[0]
    cap_m = U.shape[0]
    n_heads = b.shape[0]
    ln = max(cap_t, cap_m) + 1
    kD = np.empty(ln)
    phi = np.empty(ln)
    wk = np.empty(ln)
    q = np.empty(ln)
    e = np.empty(ln)
    u = np.empty(ln)
    g = np.empty(ln)
    h = np.empty(ln)
    ecol = np.empty(ln)
    cvec = np.empty(ln)
    w_aged = np.empty(cap_t if forget != 1.0 else 0)
    n = n_rows(X)
    work = new_work(X)
    for i in range(start, n):
        t = state.n_history[0]
        m = state.n_dict[0]
        if m >= max_m or t == cap_t or not (store_dict_fits(store, X, i, m) and store_hist_fits(store, X, i, t)):
            return i, -1
        xsq = store_row_begin(store, X, i, work)
        store_dict_kernel(store, kernel, X, i, m, gamma, xsq, work, e, kD)
        z, p, rho2 = kors_decide(kD, m, U, Ginv, w, mu, eps, beta, draws[i], phi, wk, q)
        if z:
            if rho2 > rho_tol:
                if m == cap_m:
                    store_row_end(store, X, i, work)
                    return i, -1
                rho = math.sqrt(rho2)
                lo = t - max_hist if t > max_hist else 0
                # new coordinate of every past point kept
                store_hist_kernel(store, X, i, t, gamma, xsq, work, e, ecol)  # (rows < lo unused)
                for s in range(lo, t):
                    Ps = Phi[s]
                    acc = ecol[s]
                    for k in range(m):
                        acc -= Ps[k] * phi[k]
                    ecol[s] = acc / rho
                # c = Phi' e ; corner = alpha + e' e ; grow P = A^{-1}
                if forget != 1.0:  # past rows count with their discounted weights
                    for s in range(lo, t):
                        w_aged[s] = Wh[s] * math.pow(forget, t - s)
                    Wr = w_aged
                else:
                    Wr = Wh
                for k in range(m):
                    cvec[k] = 0.0
                corner = alpha
                for s in range(lo, t):
                    es = ecol[s]
                    wes = Wr[s] * es  # weighted least squares: past rows count with their weight
                    corner += wes * es
                    if wes != 0.0:
                        Ps = Phi[s]
                        for k in range(m):
                            cvec[k] += wes * Ps[k]
                inverse_append(P, m, cvec, corner, q)
                if forget != 1.0:
                    # the time update multiplies the antisymmetric part of P by 1/forget every
                    # row (its terms are symmetric; the scaling is not damped): the rounding of
                    # the Schur complement would grow like forget^-t. Make P exactly symmetric.
                    for r in range(m + 1):
                        Pr = P[r]
                        for k in range(r):
                            a = 0.5 * (Pr[k] + P[k, r])
                            Pr[k] = a
                            P[k, r] = a
                for k in range(n_heads):
                    acc = 0.0
                    for s in range(lo, t):
                        acc += (Wr[s] * ecol[s]) * Yh[s, k]
                    b[k, m] = acc
                for s in range(lo, t):
                    Phi[s, m] = ecol[s]
                kors_insert(m, U, Ginv, w, probs, mu, p, sqrt_weight, phi, rho, wk, q)
                store_add_dict(store, X, i, m, xsq)
                didx[m] = state.hist_start[0] + t
                m += 1
                state.n_dict[0] = m
            else:
                state.n_skipped[0] += 1
        # AWV step on phi (m may be 0: prediction 0)
        if not _awv_step(P, m, phi, sw[i], u, g, h, Y[i], b, settings, state.refresh, out[i], loss_acc):
            store_row_end(store, X, i, work)
            return i, i
        if m < max_m:  # (a frozen dictionary: no insertion will need this row again)
            for k in range(m):
                Phi[t, k] = phi[k]
            store_add_hist(store, X, i, t, xsq)
            for k in range(n_heads):
                Yh[t, k] = Y[i, k]
            Wh[t] = sw[i]
            state.n_history[0] = t + 1
        store_row_end(store, X, i, work)
    return n, -1
