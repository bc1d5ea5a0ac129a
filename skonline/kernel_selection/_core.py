"""Compiled passes of online kernel selection under bandit feedback (Li & Liao, ECML-PKDD 2022).

Each algorithm is written once, as the paper's round (sample I ~ p, predict with f_I, observe the
loss, step f_I, update q and p): :func:`oks_pass`, :func:`okspp_pass`, :func:`ioks_pass`; and
:func:`okspp_full_pass`, OKS++ with full feedback (every kernel's hypothesis predicts and steps on
every row, nothing is sampled). Its hypotheses are one of three backends, each a record plus three
operations (``begin_row``, ``value``, ``step``):

* :class:`ExactExpansion` (``n_components=None``): f_{h,k} = scale[h,k] * sum_j alpha[h,k,j]
  kappa_k(store[idx[h,k,j]], .), the support rows in one shared store (a row is stored once even
  when several heads add it), the RKHS norm tracked exactly (||f + b kappa(x,.)||^2 = ||f||^2 +
  2 b f(x) + b^2) and the projection onto the U-ball done lazily through ``scale``;
* :class:`RandomFeatures`: f_{h,k}(x) = W[h,k] . z_k(x), z_k(x) = [cos(W_k x), sin(W_k x)] /
  sqrt(D) with W_k = omega_b / sigma_k, projection = coordinate clipping at ``thr``. With one
  shared base the projections x . omega of the rows do not depend on the state; the estimator
  computes them for the chunk beforehand (:class:`ProjectedRows`) and the pass only evaluates the
  sampled kernel's cos/sin (otherwise the rows are :class:`DenseRows` or :class:`SparseRows`);
* :class:`SharedExpansion` (full feedback, exact): every hypothesis's support is every stored row,
  and the distances of a row to the store are computed once for all of them.

The compiled entry points are the four passes above (:data:`PASSES` maps an algorithm to its
bandit pass), all called as ``pass_(rows, rounds, settings, state, model, out, loss_sum)`` with
the named records below; each compiles one specialisation per backend and row format, selected by
the types of its records, so a configuration compiles its own algorithm, backend and row format
and nothing else.

State arrays are updated in place; all randomness is in the uniforms ``rounds.u`` (one per row and
head) drawn by the estimator. A pass returns -1, or the first row at which a prediction or the
state would become non-finite (the estimator then discards its working copy and raises).
"""

import math
from typing import NamedTuple

import numpy as np
from numba.core import types
from numba.extending import overload

from ..losses import loss_and_derivative
from ..utils._bandit import exp_weights, mix_uniform, sample_index, tsallis_omd_step
from ..utils._jit import OVERLOAD_OPTIONS, compiled_only, njit
from ..utils._math import EXP_MIN, exp_buffer, fast_dot
from ..utils._trig import sincos_buffer

_FM = {"reassoc", "contract"}  # reductions only: the order is fixed by the compiled code
_SCALE_MIN = 1e-100

#: what the pass reports as the prediction of a row (``settings.report``; the learning is the same):
#: the sampled kernel's value (the paper's round), that of the kernel of largest q, or the q-mixture
REPORT_SAMPLED, REPORT_BEST, REPORT_MIXTURE = 0, 1, 2


# ----------------------------------------------------------------------------------- records
class DenseRows(NamedTuple):
    """The chunk's rows as a dense matrix.

    X : ndarray of shape (n, d), float64, C order.
    """

    X: np.ndarray


class SparseRows(NamedTuple):
    """The chunk's rows in CSR form (random features only; validated before the pass).

    data : ndarray of shape (nnz,), float64; indices : ndarray of shape (nnz,), int64, the column
    of each entry; indptr : ndarray of shape (n + 1,), int64, row r is ``data[indptr[r]:indptr[r + 1]]``.
    """

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray


class ProjectedRows(NamedTuple):
    """Random features with one shared base: the rows' projections, computed by the estimator.

    P : ndarray of shape (n, D), float64, ``P[r] = x_r . omega[0]``.
    """

    P: np.ndarray


class Rounds(NamedTuple):
    """What the chunk's rounds observe besides the rows (H heads: one-vs-rest classes, else 1).

    y : ndarray of shape (n, H), float64
        Targets (labels -1/+1 per head for classification).
    weight : ndarray of shape (n,), float64
        Sample weights: each multiplies its row's loss and derivative.
    u : ndarray of shape (n, H), float64
        Uniforms in [0, 1) of the kernel draws I_t ~ p_t.
    forced : ndarray of shape (n, H) or (0, H), int64
        Kernel choices imposed on the pass (a test hook; -1 or an empty array: sample).
    t0 : int
        Rounds learned before the chunk (the first row is round t0 + 1).
    offset : ndarray of shape (n, H) or (0, H), float64
        A fixed term added to every hypothesis's value in the row's loss and reported prediction
        (the estimator's linear component; an empty array: none). The hypotheses' own values
        still drive their norms.
    t_learn : int
        Full feedback: rounds t < t_learn (0-based) are predicted and counted, but make no kernel
        round (no statistics, no step).
    """

    y: np.ndarray
    weight: np.ndarray
    u: np.ndarray
    forced: np.ndarray
    t0: int
    offset: np.ndarray
    t_learn: int = 0


class BanditState(NamedTuple):
    """State of the kernel distribution, per head h and kernel k (the paper's symbols).

    q, p : ndarray of shape (H, K)
        Exploitation and sampling distributions, p = (1 - delta) q + delta / K.
    L : ndarray of shape (H, K)
        Importance-weighted cumulative loss estimates L~_{t,k}.
    C : ndarray of shape (H,)
        Their sum C~_t (OKS, OKS++: sum of l / p; IOKS: sum of the clipped estimates c~).
    S : ndarray of shape (H,)
        OKS++: S_t = sum of q_{I} c~^2 (sets eta_t).
    counts : ndarray of shape (H, K), int64
        Rounds in which each kernel was sampled.
    lam : ndarray of shape (H, K)
        Last step size lambda applied to each hypothesis.
    delta : ndarray of shape (H,)
        Exploration rate of the current p.
    eta : ndarray of shape (H, K)
        Learning rate of the distribution (one value repeated for OKS and OKS++; per kernel for IOKS).
    rho : ndarray of shape (H, K)
        IOKS: thresholds 2 / p of the learning-rate increases.
    Gamma : ndarray of shape (H, K)
        IOKS: sums of squared gradient-estimate norms (AdaGrad steps, eq. (6)).
    T : ndarray of shape (1,)
        OKS, IOKS: the horizon of the constants (doubled when a round passes it).
    """

    q: np.ndarray
    p: np.ndarray
    L: np.ndarray
    C: np.ndarray
    S: np.ndarray
    counts: np.ndarray
    lam: np.ndarray
    delta: np.ndarray
    eta: np.ndarray
    rho: np.ndarray
    Gamma: np.ndarray
    T: np.ndarray


class OKSSettings(NamedTuple):
    """OKS (Remark 1): loss record and multiplier, radius U of the ball the hypotheses are projected
    onto (``math.inf`` for the estimator's ``radius=None``: no projection), l_max, G, step scale."""

    loss: tuple
    loss_mult: float
    radius: float
    loss_bound: float
    G: float
    step_scale: float
    report: int = REPORT_SAMPLED


class OKSPPSettings(NamedTuple):
    """OKS++ (Theorem 3.1): loss record and multiplier, radius U, a, b = a^3 and lambda = lam_num *
    max(b, 8 C~)^(-1/6) / (lam_den sqrt(1 + L~_I))."""

    loss: tuple
    loss_mult: float
    radius: float
    a: float
    b: float
    lam_num: float
    lam_den: float
    report: int = REPORT_SAMPLED


class IOKSSettings(NamedTuple):
    """IOKS (Algorithm 2): loss record and multiplier, radius U, l_max, G1, c_eta, Tsallis alpha."""

    loss: tuple
    loss_mult: float
    radius: float
    loss_bound: float
    G1: float
    eta_scale: float
    alpha: float
    report: int = REPORT_SAMPLED


class ExactExpansion(NamedTuple):
    """Exact Gaussian-kernel expansions of the H x K hypotheses, and their work buffers.

    inv2s2 : ndarray of shape (K,)
        1 / (2 sigma_k^2).
    store : ndarray of shape (capacity, d)
        Support rows (shared by every head and kernel); ``n_store[0]`` are used.
    n_store : ndarray of shape (1,), int64
    idx, alpha : ndarray of shape (H, K, capacity), int64 and float64
        Store row and coefficient of each support vector; ``n_support[h, k]`` are used.
    n_support : ndarray of shape (H, K), int64
    scale : ndarray of shape (H, K)
        Lazy multiplier of the coefficients (projections onto the ball).
    norm2 : ndarray of shape (H, K)
        Tracked squared RKHS norms.
    n_dropped : ndarray of shape (1,), int64
        Steps skipped because the store was full.
    cur : ndarray of shape (1,), int64
        Work: store row of the current round's x (-1: not stored yet).
    ebuf, vbuf : ndarray of shape (capacity,)
        Work: exponents and kernel values.
    """

    inv2s2: np.ndarray
    store: np.ndarray
    n_store: np.ndarray
    idx: np.ndarray
    alpha: np.ndarray
    n_support: np.ndarray
    scale: np.ndarray
    norm2: np.ndarray
    n_dropped: np.ndarray
    cur: np.ndarray
    ebuf: np.ndarray
    vbuf: np.ndarray


class RandomFeatures(NamedTuple):
    """Random Fourier features of the K kernels, the H x K weight vectors, and work buffers.

    sigmas : ndarray of shape (K,)
        Bandwidths.
    omega : ndarray of shape (B, d, D)
        Gaussian bases (B = 1: shared by the kernels; B = K: one per kernel).
    W : ndarray of shape (H, K, 2 D)
        Weights of the hypotheses.
    thr : float
        Clipping threshold of the projection (U / sqrt(D) or U / sqrt(2 D); inf: none).
    proj : ndarray of shape (B, D)
        Work: x . omega_b of the current row.
    z : ndarray of shape (K, 2 D)
        Work: sqrt(D) z_k(x) of the current row.
    proj_done : ndarray of shape (B,), bool; z_done : ndarray of shape (K,), bool
        Work: which of ``proj`` and ``z`` hold the current row.
    norm2 : ndarray of shape (H, K)
        ``ball``: the tracked ``||W[h, k]||^2`` (``||z_k(x)|| = 1``: a step changes it by
        ``2 b f(x) + b^2``, as the exact expansion's RKHS norm); otherwise unused (shape (0, 0)).
    ball : bool
        Projection onto the ball ``||w||_2 <= U`` (the exact expansion's ball, which the budgeted
        learner of ``n_components='auto'`` continues) instead of the paper's clipping at ``thr``.
    """

    sigmas: np.ndarray
    omega: np.ndarray
    W: np.ndarray
    thr: float
    proj: np.ndarray
    z: np.ndarray
    proj_done: np.ndarray
    z_done: np.ndarray
    norm2: np.ndarray
    ball: bool


class SharedExpansion(NamedTuple):
    """Exact Gaussian-kernel expansions whose support is every stored row (full feedback: every
    hypothesis steps on every row), sharing the distances of a row to the store.

    f_{h,k}(x) = scale[h,k] sum_{j < n_store} alpha[h,k,j] exp(-||x - store[j]||^2 / (2 sigma_k^2)).

    inv2s2 : ndarray of shape (K,)
        1 / (2 sigma_k^2).
    store : ndarray of shape (capacity, d)
        Support rows; ``n_store[0]`` are used.
    n_store : ndarray of shape (1,), int64
    alpha : ndarray of shape (H, K, capacity)
        Coefficients (0 where a hypothesis made no step on that row).
    scale : ndarray of shape (H, K)
        Lazy multiplier of the coefficients (projections onto the ball).
    norm2 : ndarray of shape (H, K)
        Tracked squared RKHS norms.
    n_dropped : ndarray of shape (1,), int64
        Rows not stored (and not learned by the hypotheses) because the store was full.
    cur : ndarray of shape (1,), int64
        Work: store row of the current round's x (-1: not stored yet; -2: the store is full).
    n_row : ndarray of shape (1,), int64
        Work: rows stored before the current one (what its kernel values cover).
    dist : ndarray of shape (capacity,)
        Work: squared distances of the current row to the store.
    kv : ndarray of shape (K, capacity)
        Work: the kernel values of the current row, per kernel.
    """

    inv2s2: np.ndarray
    store: np.ndarray
    n_store: np.ndarray
    alpha: np.ndarray
    scale: np.ndarray
    norm2: np.ndarray
    n_dropped: np.ndarray
    cur: np.ndarray
    n_row: np.ndarray
    dist: np.ndarray
    kv: np.ndarray


def _is(typ, record):
    """Whether the numba type ``typ`` is that of the named tuple class ``record``."""
    return isinstance(typ, types.BaseNamedTuple) and typ.instance_class is record


# ----------------------------------------------------------------------------------- kernels
# The fastmath reductions stay functions of their own (inlined, they would take their caller's
# flags); the rest of the exact backend is inlined into the passes (fewer functions to compile).
@compiled_only(fastmath=_FM)
def _sq_dist(x, store, j):
    acc = 0.0
    for k in range(x.shape[0]):
        r = x[k] - store[j, k]
        acc += r * r
    return acc


_dot = fast_dot  # utils._math: the same reassociated dot as the other families


@njit(inline="always")
def expansion_value(x, store, idx, coef, n, inv2s2, ebuf, vbuf):
    """sum_{j<n} coef[j] exp(-||x - store[idx[j]]||^2 * inv2s2) (the Gaussian expansion at x)."""
    for j in range(n):
        e = -_sq_dist(x, store, idx[j]) * inv2s2
        ebuf[j] = e if e > EXP_MIN else EXP_MIN
    exp_buffer(ebuf, vbuf, n)
    return _dot(coef, vbuf, n)


# ----------------------------------------------------------------------------------- backends
# Each backend has three operations, chosen from the type of the model record (overloads of the
# stubs below), so a pass compiles its backend's code and only that:
#   _begin_row(model, rows, row)             forget the previous row's cached features / store slot
#                                            (the shared expansion: the row's kernel values)
#   _value(model, rows, row, h, k)           f_{h,k}(x_row)
#   _step(model, rows, row, h, k, step, pred, radius)
#                                            f_{h,k} <- Proj(f_{h,k} - step phi_k(x_row)) (onto the
#                                            ball of the radius; inf: no projection); False if the
#                                            state became non-finite
# ``value`` and ``step`` are compiled functions of their own for both backends (numba copies an
# inlined function's IR, nested inlines included, into each caller: inlining them cost more
# compile time than the calls cost at run time); so is ``begin_row`` (a typed inline of an
# overload compiles it anyway, then copies it).
def _begin_row(model, rows, row):
    """Forget the previous row's cached features / store slot (or compute the row's kernel values)."""


def _value(model, rows, row, h, k):
    """f_{h,k}(x_row)."""


def _step(model, rows, row, h, k, step, pred, radius):
    """f_{h,k} <- Proj(f_{h,k} - step phi_k(x_row)); False if the state became non-finite."""


@njit(inline="always")
def _store_row(model, rows, row):
    """Copy the row into the store's next slot: the slot, or -1 if the store is full (the store is
    allocated at its budget)."""
    s = model.n_store[0]
    store = model.store
    if s == store.shape[0]:
        return -1
    X = rows.X
    for c in range(X.shape[1]):
        store[s, c] = X[row, c]
    model.n_store[0] = s + 1
    return s


@njit(inline="always")
def _ball_step(model, h, k, beta, pred, radius, n_coef):
    """After a step of size beta on f_{h,k} (value ``pred`` before it, kappa(x, x) = 1): the exact
    RKHS norm ||f + beta kappa(x, .)||^2 = ||f||^2 + 2 beta f(x) + beta^2, and the projection onto
    the ball of radius U through the lazy scale (folded into the first ``n_coef`` coefficients
    when it becomes tiny). False if the norm is not finite."""
    scale, alpha = model.scale, model.alpha
    nn = model.norm2[h, k] + 2.0 * beta * pred + beta * beta
    if nn < 0.0:
        nn = 0.0
    if not nn < math.inf:
        return False
    if nn > radius * radius:
        scale[h, k] *= radius / math.sqrt(nn)
        nn = radius * radius
        if scale[h, k] < _SCALE_MIN:
            sc = scale[h, k]
            for j in range(n_coef):
                alpha[h, k, j] *= sc
            scale[h, k] = 1.0
    model.norm2[h, k] = nn
    return True


def _exact_begin_row(model, rows, row):
    model.cur[0] = -1  # the current row is not in the store yet


def _exact_value(model, rows, row, h, k):
    n = model.n_support[h, k]
    if n == 0:
        return 0.0
    return model.scale[h, k] * expansion_value(
        rows.X[row], model.store, model.idx[h, k], model.alpha[h, k], n, model.inv2s2[k],
        model.ebuf, model.vbuf,
    )


def _exact_step(model, rows, row, h, k, step, pred, radius):
    if step == 0.0:
        return True
    cur = model.cur
    beta = -step
    if cur[0] < 0:  # the first step of this row: store it
        s = _store_row(model, rows, row)
        if s < 0:  # budget reached: no step
            model.n_dropped[0] += 1
            return True
        cur[0] = s
    n = model.n_support[h, k]
    model.idx[h, k, n] = cur[0]
    model.alpha[h, k, n] = beta / model.scale[h, k]
    model.n_support[h, k] = n + 1
    return _ball_step(model, h, k, beta, pred, radius, n + 1)


def _rf_begin_row(model, rows, row):
    for b in range(model.proj_done.shape[0]):
        model.proj_done[b] = False
    for k in range(model.z_done.shape[0]):
        model.z_done[k] = False


def _rf_value(model, rows, row, h, k):
    D = model.proj.shape[1]
    z = model.z[k]
    if not model.z_done[k]:  # sqrt(D) z_k(x) = [cos, sin](x . omega_b / sigma_k), once per row and kernel
        sincos_buffer(_projection(rows, row, model, k), 1.0 / model.sigmas[k], z[:D], z[D:], D)
        model.z_done[k] = True
    W = model.W
    return _dot(W[h, k], z, W.shape[2]) * (1.0 / math.sqrt(W.shape[2] // 2))


def _rf_step(model, rows, row, h, k, step, pred, radius):
    z = model.z[k]
    w = model.W[h, k]
    thr = model.thr
    if model.ball:
        return _rf_ball_step(w, z, h, k, step, pred, radius, model.norm2)
    step = step * (1.0 / math.sqrt(w.shape[0] // 2))  # z_k(x) = z[k] / sqrt(D)
    ok = True
    if radius < math.inf:
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


@njit(inline="always")
def _rf_ball_step(w, z, h, k, step, pred, radius, norm2):
    """w <- w - step z_k(x), then onto the ball ||w|| <= U; ``pred`` = w . z_k(x) before the step."""
    if step == 0.0:
        return True
    beta = -step
    nn = norm2[h, k] + 2.0 * beta * pred + beta * beta  # ||z_k(x)|| = 1
    if nn < 0.0:
        nn = 0.0
    if not nn < math.inf:
        return False
    b = beta * (1.0 / math.sqrt(w.shape[0] // 2))  # z_k(x) = z[k] / sqrt(D)
    for j in range(w.shape[0]):
        w[j] += b * z[j]
    if nn > radius * radius:
        f = radius / math.sqrt(nn)
        for j in range(w.shape[0]):
            w[j] *= f
        nn = radius * radius
    norm2[h, k] = nn
    return True


def _shared_begin_row(model, rows, row):
    """Distances of the row to the store and its kernel values, once for every head and kernel."""
    model.cur[0] = -1
    n = model.n_store[0]
    model.n_row[0] = n  # the heads evaluate the rows stored before this one
    x = rows.X[row]
    store, dist, kv = model.store, model.dist, model.kv
    for j in range(n):
        dist[j] = _sq_dist(x, store, j)
    for k in range(kv.shape[0]):
        c = model.inv2s2[k]
        ek = kv[k]
        for j in range(n):
            v = -dist[j] * c
            ek[j] = v if v > EXP_MIN else EXP_MIN
        exp_buffer(ek, ek, n)


def _shared_value(model, rows, row, h, k):
    n = model.n_row[0]
    if n == 0:
        return 0.0
    return model.scale[h, k] * _dot(model.alpha[h, k], model.kv[k], n)


def _shared_step(model, rows, row, h, k, step, pred, radius):
    if step == 0.0:
        return True
    cur = model.cur
    if cur[0] == -2:  # stored nowhere: the store is full
        return True
    if cur[0] < 0:  # the row's first step: store it (a row no hypothesis moves on is not stored)
        s = _store_row(model, rows, row)
        if s < 0:  # budget reached: no step, for any hypothesis
            model.n_dropped[0] += 1
            cur[0] = -2
            return True
        cur[0] = s
    s = cur[0]
    beta = -step
    model.alpha[h, k, s] = beta / model.scale[h, k]
    return _ball_step(model, h, k, beta, pred, radius, s + 1)


#: each backend's operations (begin_row, value, step), by the type of its model record
_BACKEND_OPS = (
    (ExactExpansion, (_exact_begin_row, _exact_value, _exact_step)),
    (RandomFeatures, (_rf_begin_row, _rf_value, _rf_step)),
    (SharedExpansion, (_shared_begin_row, _shared_value, _shared_step)),
)


def _backend_op(model, i):
    """Operation ``i`` (0: begin_row, 1: value, 2: step) of the backend of ``model``'s record type."""
    for record, ops in _BACKEND_OPS:
        if _is(model, record):
            return ops[i]
    return None


@overload(_begin_row, jit_options=OVERLOAD_OPTIONS)
def _begin_row_impl(model, rows, row):
    return _backend_op(model, 0)


@overload(_value, jit_options=OVERLOAD_OPTIONS)
def _value_impl(model, rows, row, h, k):
    return _backend_op(model, 1)


@overload(_step, jit_options=OVERLOAD_OPTIONS)
def _step_impl(model, rows, row, h, k, step, pred, radius):
    return _backend_op(model, 2)


# Random features read the rows through x_row . omega_b, chosen from the type of the rows record.
def _projection(rows, row, model, k):
    """x_row . omega_b of kernel k's base b: precomputed, or computed once per row and base."""


def _precomputed_projection(rows, row, model, k):
    return rows.P[row]


def _dense_projection(rows, row, model, k):
    b = k if model.omega.shape[0] > 1 else 0
    proj = model.proj[b]
    if not model.proj_done[b]:  # fixed summation order over the features
        X = rows.X
        base = model.omega[b]
        D = proj.shape[0]
        for j in range(D):
            proj[j] = 0.0
        for c in range(X.shape[1]):
            v = X[row, c]
            for j in range(D):
                proj[j] += v * base[c, j]
        model.proj_done[b] = True
    return proj


def _sparse_projection(rows, row, model, k):
    b = k if model.omega.shape[0] > 1 else 0
    proj = model.proj[b]
    if not model.proj_done[b]:  # the row's entries in stored order
        base = model.omega[b]
        D = proj.shape[0]
        for j in range(D):
            proj[j] = 0.0
        for jj in range(rows.indptr[row], rows.indptr[row + 1]):
            v = rows.data[jj]
            col = rows.indices[jj]
            for j in range(D):
                proj[j] += v * base[col, j]
        model.proj_done[b] = True
    return proj


@overload(_projection, jit_options=OVERLOAD_OPTIONS)
def _projection_impl(rows, row, model, k):
    if _is(rows, ProjectedRows):
        return _precomputed_projection
    if _is(rows, DenseRows):
        return _dense_projection
    if _is(rows, SparseRows):
        return _sparse_projection


# ----------------------------------------------------------------------------------- one round
@njit(inline="always")
def _play(rows, rounds, settings, q, p, model, r, h, out, loss_sum):
    """Sample I ~ p_h, predict f_{h,I}(x_r), observe the weighted loss and derivative.

    ``out`` gets the reported prediction (``settings.report``) and ``loss_sum`` its loss; the
    round learns from the sampled kernel's. The reported prediction is f_{h,k*}(x_r) with
    k* = argmax q (first on ties), or sum_k q_k f_{h,k}(x_r), with q before this round's update;
    reading the other kernels' values changes no state (only work buffers), so the round learns
    exactly as the paper's. With ``rounds.offset`` (a linear component), the loss, its derivative
    and the reported prediction are those of offset + value. ``q`` and ``p`` are head h's rows of
    the bandit state (passed alone: a record of arrays costs compile time per array at each call).
    Inlined into the pass, which calls it at one place: compiled on its own, it and the backend
    below it would also be optimised and compiled to machine code by LLVM alone, then again
    inside the pass (0.3 s of a cold first fit).
    Returns (I, value of I, loss, derivative, ok); ``ok`` is False if a prediction, the loss sum or
    the derivative is not finite (the row is then rejected before any state changes).
    """
    forced = rounds.forced
    if forced.shape[0] > 0 and forced[r, h] >= 0:
        I = forced[r, h]
    else:
        I = sample_index(p, rounds.u[r, h])
    report = settings.report
    K = q.shape[0]
    best = 0
    if report == REPORT_BEST:
        for k in range(1, K):
            if q[k] > q[best]:
                best = k
    pred = 0.0
    rep = 0.0
    for k in range(K):  # one call site of the backend's evaluation
        if k != I and report != REPORT_MIXTURE and not (report == REPORT_BEST and k == best):
            continue
        v = _value(model, rows, r, h, k)
        if k == I:
            pred = v
        if report == REPORT_MIXTURE:
            rep += q[k] * v
        elif report == REPORT_BEST and k == best:
            rep += v
    full = pred
    if rounds.offset.shape[0] > 0:  # the linear component's prediction
        full = rounds.offset[r, h] + pred
        rep += rounds.offset[r, h]
    out[r, h] = full
    if not abs(full) < math.inf:
        return I, pred, 0.0, 0.0, False
    lv, g = loss_and_derivative(settings.loss, rounds.y[r, h], full)
    wm = settings.loss_mult * rounds.weight[r]  # the row's weight multiplies its loss and derivative
    lv *= wm
    g *= wm
    if report == REPORT_SAMPLED:
        loss_sum[0] += lv
    else:
        out[r, h] = rep
        if not abs(rep) < math.inf:
            return I, pred, 0.0, 0.0, False
        loss_sum[0] += loss_and_derivative(settings.loss, rounds.y[r, h], rep)[0] * wm
    ok = abs(loss_sum[0]) < math.inf and abs(g) < math.inf  # else the loss overflows
    return I, pred, lv, g, ok


# ----------------------------------------------------------------------------------- horizons
@njit
def oks_constants(T, K, loss_bound, G, step_scale):
    """delta, eta, lambda of OKS (Remark 1 of the paper; step_scale multiplies lambda)."""
    delta = (G / loss_bound) ** (2.0 / 3.0) * (K / T) ** (1.0 / 3.0)
    if delta > 1.0:
        delta = 1.0
    eta = math.sqrt(2.0 * (1.0 - delta) * math.log(K)) / math.sqrt(K * T * loss_bound * loss_bound)
    lam = step_scale * math.sqrt(delta / (K * T * G * G))
    return delta, eta, lam


@njit
def ioks_constants(T, K, U, G1, loss_bound, eta_scale):
    """delta = T^(-3/4), eta = c * l_max K^(3/8) / (U G1 sqrt(T ln T)), upsilon = e^(2/(3 ln T))."""
    Te = T if T > 3.0 else 3.0
    delta = Te ** (-0.75)
    eta = eta_scale * loss_bound * K**0.375 / (U * G1 * math.sqrt(Te * math.log(Te)))
    ups = math.exp(2.0 / (3.0 * math.log(Te)))
    return delta, eta, ups


# ----------------------------------------------------------------------------------- algorithms
# One body per algorithm, over any backend (begin_row, value, step): numba compiles one
# specialisation per backend record type.
@njit
def oks_pass(rows, rounds, settings, state, model, out, loss_sum):
    """OKS (Yang et al. 2012; Algorithm 1 of the paper with the constants of Remark 1)."""
    q, p, L, C, T = state.q, state.p, state.L, state.C, state.T
    n = rounds.y.shape[0]
    H = rounds.y.shape[1]
    K = q.shape[1]
    s = settings
    d_, e_, l_ = oks_constants(T[0], K, s.loss_bound, s.G, s.step_scale)
    for r in range(n):
        t = rounds.t0 + r + 1
        if t > T[0]:
            while t > T[0]:
                T[0] *= 2.0
            d_, e_, l_ = oks_constants(T[0], K, s.loss_bound, s.G, s.step_scale)
        _begin_row(model, rows, r)
        for h in range(H):
            I, pred, lv, g, ok = _play(rows, rounds, s, state.q[h], state.p[h], model, r, h, out, loss_sum)
            if not ok:
                return r
            pI = p[h, I]
            L[h, I] += lv / pI
            C[h] += lv / pI
            state.counts[h, I] += 1
            state.lam[h, I] = l_
            if not _step(model, rows, r, h, I, l_ * g / pI, pred, s.radius):
                return r
            exp_weights(L[h], e_, q[h])
            mix_uniform(q[h], d_, p[h])
            state.delta[h] = d_
            state.eta[h, :] = e_
    return -1


@njit
def okspp_pass(rows, rounds, settings, state, model, out, loss_sum):
    """OKS++ (Theorem 3.1; Algorithm 3 for random features), FTRL form of the weights."""
    q, p, L, C, S = state.q, state.p, state.L, state.C, state.S
    n = rounds.y.shape[0]
    H = rounds.y.shape[1]
    K = q.shape[1]
    s = settings
    two_ln_k = 2.0 * math.log(K)
    for r in range(n):
        _begin_row(model, rows, r)
        for h in range(H):
            I, pred, lv, g, ok = _play(rows, rounds, s, state.q[h], state.p[h], model, r, h, out, loss_sum)
            if not ok:
                return r
            pI = p[h, I]
            ct = lv / pI
            C[h] += ct
            S[h] += q[h, I] * ct * ct
            L[h, I] += ct
            state.counts[h, I] += 1
            m = 8.0 * C[h]
            if s.b > m:
                m = s.b
            lam_t = s.lam_num * m ** (-1.0 / 6.0) / (s.lam_den * math.sqrt(1.0 + L[h, I]))
            state.lam[h, I] = lam_t
            if not _step(model, rows, r, h, I, lam_t * g / pI, pred, s.radius):
                return r
            c3 = 2.0 * C[h] ** (1.0 / 3.0)
            d_ = s.a / (2.0 * (s.a if s.a > c3 else c3))
            e_ = math.sqrt(two_ln_k) / math.sqrt(1.0 + S[h])
            exp_weights(L[h], e_, q[h])
            mix_uniform(q[h], d_, p[h])
            state.delta[h] = d_
            state.eta[h, :] = e_
    return -1


@njit
def ioks_pass(rows, rounds, settings, state, model, out, loss_sum):
    """IOKS (Algorithm 2; Algorithm 4 for random features)."""
    q, p, L, C, T, eta, rho = state.q, state.p, state.L, state.C, state.T, state.eta, state.rho
    n = rounds.y.shape[0]
    H = rounds.y.shape[1]
    K = q.shape[1]
    s = settings
    cvec = np.zeros(K)
    qnew = np.zeros(K)
    d_, e0, ups = ioks_constants(T[0], K, s.radius, s.G1, s.loss_bound, s.eta_scale)
    for r in range(n):
        t = rounds.t0 + r + 1
        if t > T[0]:
            while t > T[0]:
                T[0] *= 2.0
            d_, e1, ups = ioks_constants(T[0], K, s.radius, s.G1, s.loss_bound, s.eta_scale)
            for h in range(H):
                for i in range(K):
                    eta[h, i] *= e1 / e0  # keep the increases already applied
            e0 = e1
        _begin_row(model, rows, r)
        for h in range(H):
            I, pred, lv, g, ok = _play(rows, rounds, s, state.q[h], state.p[h], model, r, h, out, loss_sum)
            if not ok:
                return r
            pI = p[h, I]
            gp = g / pI
            state.Gamma[h, I] += gp * gp
            state.counts[h, I] += 1
            lam_t = s.radius / (math.sqrt(2.0) * math.sqrt(1.0 + state.Gamma[h, I]))
            state.lam[h, I] = lam_t
            if not _step(model, rows, r, h, I, lam_t * gp, pred, s.radius):
                return r
            c = lv / s.loss_bound
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
            tsallis_omd_step(q[h], eta[h], cvec, s.alpha, qnew)
            for i in range(K):
                q[h, i] = qnew[i]
            mix_uniform(q[h], d_, p[h])
            state.delta[h] = d_
            for i in range(K):
                if 1.0 / p[h, i] > rho[h, i]:
                    rho[h, i] = 2.0 / p[h, i]
                    eta[h, i] *= ups
    return -1


@njit
def okspp_full_pass(rows, rounds, settings, state, model, out, loss_sum):
    """OKS++ with full feedback: every kernel's hypothesis predicts and steps on every row.

    The bandit round's expectation: each hypothesis takes the step OKS++ gives it
    (lambda_{t,k} = lam_num max(b, 8 C_t)^(-1/6) / (lam_den sqrt(1 + L_{t,k}))) with its own loss
    (importance weight 1), C_t sums the losses of every kernel, S_t sums q_{t,k} l_{t,k}^2, and
    q_{t+1} = softmax(-eta_t L_t) with eta_t = sqrt(2 ln K / (1 + S_t)); nothing is sampled, so
    there is no exploration (delta = 0, p = q) and the learning is deterministic. The report:
    the q-mixture, the kernel of largest q, or (``REPORT_SAMPLED``) the kernel drawn from q with
    the row's uniform.
    """
    q, p, L, C, S = state.q, state.p, state.L, state.C, state.S
    n = rounds.y.shape[0]
    H = rounds.y.shape[1]
    K = q.shape[1]
    s = settings
    two_ln_k = 2.0 * math.log(K)
    vals = np.zeros(K)
    losses = np.zeros(K)
    grads = np.zeros(K)
    offsets = rounds.offset.shape[0] > 0
    for r in range(n):
        _begin_row(model, rows, r)
        wm = s.loss_mult * rounds.weight[r]
        for h in range(H):
            for k in range(K):  # one call site of the backend's evaluation
                vals[k] = _value(model, rows, r, h, k)
            off = rounds.offset[r, h] if offsets else 0.0
            y = rounds.y[r, h]
            best = 0
            if s.report == REPORT_SAMPLED:  # the kernel drawn from q (= p) reports its value
                best = sample_index(p[h], rounds.u[r, h])
            else:
                for k in range(1, K):
                    if q[h, k] > q[h, best]:
                        best = k
            rep = 0.0
            for k in range(K):
                full = off + vals[k]
                if not abs(full) < math.inf:
                    out[r, h] = full
                    return r
                lv, g = loss_and_derivative(s.loss, y, full)
                losses[k] = lv * wm
                grads[k] = g * wm
                if s.report == REPORT_MIXTURE:
                    rep += q[h, k] * full
                elif k == best:
                    rep = full
            out[r, h] = rep
            if not abs(rep) < math.inf:
                return r
            loss_sum[0] += loss_and_derivative(s.loss, y, rep)[0] * wm
            if not abs(loss_sum[0]) < math.inf:
                return r
            if rounds.t0 + r < rounds.t_learn:
                continue
            for k in range(K):
                lk = losses[k]
                C[h] += lk
                S[h] += q[h, k] * lk * lk
                L[h, k] += lk
                state.counts[h, k] += 1
            m = 8.0 * C[h]
            if s.b > m:
                m = s.b
            lam0 = s.lam_num * m ** (-1.0 / 6.0) / s.lam_den
            for k in range(K):  # one call site of the backend's step
                lam_t = lam0 / math.sqrt(1.0 + L[h, k])
                state.lam[h, k] = lam_t
                if not _step(model, rows, r, h, k, lam_t * grads[k], vals[k], s.radius):
                    return r
            e_ = math.sqrt(two_ln_k) / math.sqrt(1.0 + S[h])
            exp_weights(L[h], e_, q[h])
            for k in range(K):
                p[h, k] = q[h, k]
            state.delta[h] = 0.0
            state.eta[h, :] = e_
    return -1


@njit
def shared_expansion_decision(X, weights, inv2s2, store, n_store, alpha, scale, out):
    """out[r, h] = sum_k weights[h, k] f_{h,k}(X[r]) for :class:`SharedExpansion` (no state change)."""
    n = n_store[0]
    H, K = weights.shape
    kv = np.empty(max(n, 1))
    dist = np.empty(max(n, 1))
    for r in range(X.shape[0]):
        for j in range(n):
            dist[j] = _sq_dist(X[r], store, j)
        for h in range(H):
            out[r, h] = 0.0
        for k in range(K):
            c = inv2s2[k]
            for j in range(n):
                v = -dist[j] * c
                kv[j] = v if v > EXP_MIN else EXP_MIN
            exp_buffer(kv, kv, n)
            for h in range(H):
                if weights[h, k] != 0.0 and n > 0:
                    out[r, h] += weights[h, k] * scale[h, k] * _dot(alpha[h, k], kv, n)


#: the compiled bandit pass of each algorithm (every backend: a pass compiles one specialisation
#: per backend, selected by the type of its model record)
PASSES = {"oks": oks_pass, "oks++": okspp_pass, "ioks": ioks_pass}


# ----------------------------------------------------------------------------------- predict
@njit
def expansion_decision(X, weights, inv2s2, store, idx, coef, nsv, scale, out):
    """out[r, h] = sum_k weights[h, k] f_{h,k}(X[r]) for the exact backend (no state change)."""
    cap = store.shape[0]
    ebuf = np.empty(cap)
    vbuf = np.empty(cap)
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
                    X[r], store, idx[h, k], coef[h, k], n, inv2s2[k], ebuf, vbuf
                )
            out[r, h] = acc
