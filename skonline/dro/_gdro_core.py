"""Compiled passes of the stochastic-approximation GDRO algorithms (Zhang et al.).

Every algorithm plays the same game ``min_{w in W} max_{q} sum_i q_i R_i(w)``: the w-player runs
projected SGD on the Euclidean ball ``W = {||w||_2 <= R}`` (``w`` holds every head's coefficients and
intercept), the q-player a mirror step in log space on the simplex or the capped simplex. One round
takes the samples the algorithm drew, computes their losses and gradients at ``w_t``, and updates
both players simultaneously (``_begin_round``, the losses, ``_w_step``, ``_q_step``):

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
``stream_pass_for``). Neither calls a random generator.

Records: the passes read their inputs from named tuples (numba compiles one type per record):
:class:`Settings` (fixed for a call), :class:`State` (the learned state, updated in place; the
estimator keeps each field as an array attribute), :class:`StreamBuffers` (the stream pass's
queues), :class:`Pools` (the pool pass's rows per group), :class:`History` (recorded iterates)
and :class:`Scratch` (work buffers). The estimator builds them right before a call.

Compilation: a fresh process compiles what its configuration uses, and nothing else. Each pass
is built for one configuration by :func:`pool_pass_for`, :func:`stream_pass_for` and
:func:`mirror_prox_pass_for` (cached per process; numba caches each variant on disk): the
algorithm code ``alg``, ``capped`` (``k > 1``: the KL projection onto the capped simplex) and,
for the pool passes, ``record`` are compile-time constants of the variant, so numba removes the
branches they rule out; the loss is compiled from the type of its record (``Settings.loss``), so
a pass holds that loss's formulas only. ``Settings`` holds what may vary without recompiling.

Status: passes return -1, or the index (row or round) at which a loss became non-finite.
"""

import functools
import math
from typing import NamedTuple

import numpy as np

from ..losses import loss_and_derivative
from ..utils._bandit import sample_index
from ..utils._capped_simplex import depround_select, log_normalize, project_capped_log_lin
from ..utils._jit import compiled_only, njit

SMD = 0
SMD_UNIFORM = 1
ONLINE = 2
DEPROUND = 3
SMD_WEIGHTED = 4
MIRROR_PROX = 5

RESYNC = 1024  # rounds between exact recomputations of ||w||^2 and of q's normalisation

LIP_CONST = 0  # Lipschitz loss: |dl/dp| <= lip
LIP_SQUARED = 1  # squared error: |dl/dp| <= R ||x|| + |y|

# --------------------------------------------------------------------------- records
class Settings(NamedTuple):
    """What a pass needs to know besides the state; fixed for one call (m groups, H heads).

    k : int -- the top-k parameter: q lives in the capped simplex ``{q_i <= 1/k}`` (1: simplex).
    fit_intercept : bool -- the last column of ``w`` is an intercept (a constant feature 1).
    loss : the loss's record (:meth:`skonline.losses.Loss.record`); its type selects the formulas.
    inv_b : float -- ``1 / B`` (the loss bound ``B``; 1 without one); ``inv_hb = inv_b / H``.
    clip : bool -- the q-player sees ``min(l / B, 1)`` (a loss bound is given).
    radius : float -- R, the radius of the ball W.
    anytime : bool -- step sizes and averaging weights ``~ 1 / sqrt(t)``.
    Stream pass only (the pool pass gets its fixed step constants as arguments):
    D : float -- ``R / sqrt(2)``; T : int -- the horizon of fixed steps (0: none).
    average : bool -- the prequential prediction uses the averaged iterate.
    step_scale, eta_scale : float -- multipliers of the prescribed step sizes (of w and of q).
    lip_kind : int -- LIP_CONST or LIP_SQUARED (how G follows the data); lip : float -- the
        loss's Lipschitz constant (LIP_CONST).
    max_buffer : int -- rows kept per group; max_uniforms : int -- uniforms kept in the queue.
    uniforms_per_decision : int -- uniforms one random decision reads.
    """

    k: int
    fit_intercept: bool
    loss: tuple
    inv_b: float
    inv_hb: float
    clip: bool
    radius: float
    anytime: bool
    D: float
    T: int
    average: bool
    step_scale: float
    eta_scale: float
    lip_kind: int
    lip: float
    max_buffer: int
    max_uniforms: int
    uniforms_per_decision: int


class State(NamedTuple):
    """The learned state of both players (updated in place; one-element arrays hold scalars).

    w : (H, n_features + fit_intercept) -- the current iterate ``w_t`` (a row per head); in the
        sparse pass's lazy form, V with ``w_t = scale V`` (:class:`Lazy`).
    w_sum : like ``w`` -- ``sum_s a_s w_s`` (the averaged iterate is ``w_sum / a_sum``); in the
        lazy form, without the pending sums of :class:`Lazy`.
    log_q : (m,) -- ``log q_t``.
    q : (m,) -- ``q_t`` in linear space, kept equal to ``exp(log_q)`` (to rounding; exactly every
        RESYNC rounds).
    q_sum : (m,) -- ``sum_s a_s q_s``.
    a_sum : (1,) -- ``sum_s a_s``, the sum of the averaging weights.
    w_norm2 : (1,) -- ``||w_t||^2`` (kept incrementally between exact recomputations).
    eta_w, eta_q, gamma : (1,) each -- the step sizes and IX coefficient of the last round.
    order : (m,) int64 -- a permutation sorting ``log q`` in decreasing order (the capped
        projection re-sorts it in place, in linear time when nearly sorted).
    group_loss : (m,) -- sum of the losses each group's samples had in their round.
    group_draws : (m,) int64 -- samples of each group used by the rounds.
    x_norm2_max : (1,) -- ``max ||[x, 1]||^2`` over the rows seen (G follows it).
    y_abs_max : (1,) -- ``max |y|`` over the rows seen (G of the squared loss).
    t : (1,) int64 -- rounds completed.
    """

    w: np.ndarray
    w_sum: np.ndarray
    log_q: np.ndarray
    q: np.ndarray
    q_sum: np.ndarray
    a_sum: np.ndarray
    w_norm2: np.ndarray
    eta_w: np.ndarray
    eta_q: np.ndarray
    gamma: np.ndarray
    order: np.ndarray
    group_loss: np.ndarray
    group_draws: np.ndarray
    x_norm2_max: np.ndarray
    y_abs_max: np.ndarray
    t: np.ndarray


class StreamBuffers(NamedTuple):
    """The stream pass's queues: rows waiting for a round, uniforms waiting for a decision.

    X : (m, capacity, n_features) -- per-group FIFO rings of rows (grown up to ``max_buffer``);
        (m, 1, 0) for a CSR stream, whose rows are kept in XI, XV, XN instead:
    XI, XV : (m, capacity, nnz_capacity) -- a CSR stream's rows: columns and values (grown as X,
        and to the most non-zeros of a row); XN : (m, capacity) int64 -- their non-zeros
        ((m, 1, 0) and (m, 1) for a dense stream).
    Y : (m, capacity, H + 1) -- their targets and, last, their sample weights.
    head, length : (m,) int64 -- each ring's oldest slot and number of rows.
    uniforms : (capacity,) -- a FIFO ring of uniforms (grown up to ``max_uniforms``).
    u_head, u_length : (1,) int64 -- its oldest slot and number of uniforms.
    pending : (max(m, k),) int64 -- the groups the next round needs (drawn, waiting for rows).
    n_pending : (1,) int64 -- how many (0: no draw pending).
    """

    X: np.ndarray
    XI: np.ndarray
    XV: np.ndarray
    XN: np.ndarray
    Y: np.ndarray
    head: np.ndarray
    length: np.ndarray
    uniforms: np.ndarray
    u_head: np.ndarray
    u_length: np.ndarray
    pending: np.ndarray
    n_pending: np.ndarray


class Pools(NamedTuple):
    """The rows of each group for the pool pass (``fit``): group i's rows are
    ``rows[ptr[i]:ptr[i + 1]]``.

    ptr : (m + 1,) int64; rows : (ptr[m],) int64 -- row indices into X.
    position : (m,) int64 -- next position read in order (SMD_WEIGHTED, mirror-prox: the pools
        are then a few concatenated permutations, read without replacement and wrapping around).
    p : (m,) -- SMD_WEIGHTED: the inclusion probabilities ``p_i``; mirror-prox: the weights
        ``p_i`` of the objective; ones otherwise.
    """

    ptr: np.ndarray
    rows: np.ndarray
    position: np.ndarray
    p: np.ndarray


class History(NamedTuple):
    """Averaged iterates recorded every ``every`` rounds, up to ``t.shape[0]`` records (passes
    compiled with ``record=False`` leave it alone).

    W : (n_records, H, n_features + fit_intercept); q : (n_records, m); t : (n_records,) int64 the
    round of each record; n : (1,) int64 records written.
    """

    every: int
    W: np.ndarray
    q: np.ndarray
    t: np.ndarray
    n: np.ndarray


class Scratch(NamedTuple):
    """Work buffers of one call (contents irrelevant between rounds); r = max(m, k).

    rows, groups : (r,) int64 -- the rows of a round's samples (into the X it reads) and their
    groups; dloss : (r, H) -- ``dl_h/dp / (H B)`` of each sample; loss : (r,) -- each sample's
    loss; suffix : (m + 1,) -- the capped projection's; x : (m,) -- DepRound's; u : (n_u,) -- the
    uniforms of one decision (the pool pass: of one round).
    """

    rows: np.ndarray
    groups: np.ndarray
    dloss: np.ndarray
    loss: np.ndarray
    suffix: np.ndarray
    x: np.ndarray
    u: np.ndarray


def make_scratch(m, k, n_heads, n_uniforms):
    """The work buffers of a pass (see :class:`Scratch`)."""
    r = max(m, k)
    return Scratch(np.empty(r, dtype=np.int64), np.empty(r, dtype=np.int64), np.empty((r, n_heads)),
                   np.empty(r), np.empty(m + 1), np.empty(m), np.empty(max(n_uniforms, 1)))


# --------------------------------------------------------------------------- step sizes
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

    Plain Python (the estimator computes the pool pass's constants); the stream pass, where G
    grows with the data, calls the compiled copy ``_step_constants`` every round.
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


def lipschitz_bound(lip_kind, lip, x_norm, y_max, R, n_heads, inv_b):
    """G: bound on the Frobenius norm of the gradient of the (scaled, head-averaged) loss.

    Plain Python; the stream pass calls the compiled copy ``_lipschitz_bound``.
    """
    if lip_kind == LIP_SQUARED:
        lp = R * x_norm + y_max
    else:
        lp = lip
    return lp * x_norm * inv_b / math.sqrt(n_heads)


_step_constants = compiled_only(step_constants)
_lipschitz_bound = compiled_only(lipschitz_bound)


# --------------------------------------------------------------------------- row kernels
@njit(inline="always")
def _dot(X, i, W, h, fi):
    """``W[h] . [X[i], 1]`` (no intercept term unless ``fi``)."""
    d = X.shape[1]
    s = 0.0
    for j in range(d):
        s += W[h, j] * X[i, j]
    if fi:
        s += W[h, d]
    return s


@njit(inline="always")
def _loss_grad(s, X, Y, row, W, dloss, jj):
    """Head-averaged loss of row ``row`` at W (raw scale); dloss[jj, h] = dl_h/dp / (H B).

    ``Y`` has one column per head plus, last, the row's sample weight, which multiplies the loss
    and its derivative (weighted per-sample loss; 1 without weights). Also returns
    ``sum_h dloss[jj, h] p_h`` and ``||[x, 1]||^2`` (for the incremental norm of W).
    Indexes the 2-D arrays directly: a row view per sample costs reference counting.
    """
    H = W.shape[0]
    d = X.shape[1]
    fi = s.fit_intercept
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
        lv, g = loss_and_derivative(s.loss, Y[row, h], p)
        tot += lv
        dloss[jj, h] = g * s.inv_hb * wr
        dp += dloss[jj, h] * p
    return wr * tot / H, dp, x2


@njit(inline="always")
def _axpy(X, row, dloss, jj, coef, W, fi):
    """W[h] -= coef * dloss[jj, h] * [X[row], 1]."""
    d = X.shape[1]
    for h in range(W.shape[0]):
        c = coef * dloss[jj, h]
        if c != 0.0:
            for j in range(d):
                W[h, j] -= c * X[row, j]
            if fi:
                W[h, d] -= c


@compiled_only
def _sq_norm(W):
    """``||W||_F^2``."""
    s = 0.0
    for h in range(W.shape[0]):
        for j in range(W.shape[1]):
            s += W[h, j] * W[h, j]
    return s


@compiled_only
def _shrink_to_ball(W, R, n2):
    """Project W, of squared norm ``n2``, onto the Frobenius ball of radius R; returns
    ``||W||^2`` after."""
    if n2 > R * R:
        c = R / math.sqrt(n2)
        for h in range(W.shape[0]):
            for j in range(W.shape[1]):
                W[h, j] *= c
        return R * R
    return n2


@compiled_only
def _fill_q(log_q, q):
    for i in range(log_q.shape[0]):
        q[i] = math.exp(log_q[i])


@njit(inline="always")
def _decide(alg, q, u, groups):
    """Groups needed by the next round, into ``groups``; returns how many (DepRound apart).

    SMD: every group; SMD(1): a uniform group; otherwise one group drawn from q (Online(1), and
    the k = 1 cases). DepRound with ``k > 1`` draws with :func:`_depround` instead.
    """
    m = q.shape[0]
    if alg == SMD:
        for i in range(m):
            groups[i] = i
        return m
    if alg == SMD_UNIFORM:
        g = int(u[0] * m)
        groups[0] = g if g < m else m - 1
        return 1
    groups[0] = sample_index(q, u[0])
    return 1


@compiled_only
def _project_capped(log_q, k, order, suffix, q):
    """KL projection onto the capped simplex (Alg. 8), in place: ``log_q`` and ``q = exp(log_q)``."""
    project_capped_log_lin(log_q, k, order, suffix, log_q, q)


@compiled_only
def _depround(q, k, u, x, groups):
    """DepRound (Alg. 9): k distinct groups with ``P(i drawn) = k q_i``; returns k."""
    depround_select(q, k, u, x, groups)
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


# --------------------------------------------------------------------------- one round
# A round of the passes (:func:`_round`, the one copy): ``_begin_round``; the samples' losses and
# gradients at ``w_t`` (``_loss_grad`` each); ``_w_step``; ``_q_step``; then the round's steps are
# kept. Everything is inlined (numba IR) into the two passes, where ``alg`` and ``capped`` (k > 1:
# q lives in the capped simplex) are compile-time constants: numba compiles only the branches of
# the configuration (the capped projection only where it is used). Both passes are compiled
# ``borrowed`` (no reference counting: they allocate nothing; the stream pass has its caller grow
# its rings), without which binding the records in an inlined call counts a reference to each of
# their arrays every round. A call that is not inlined costs, per round, up to 30 % of a
# low-dimensional stream (measured in fresh processes: GroupDROClassifier, d = 10, m = 6).
@njit(inline="always")
def _begin_round(anytime, t, W, w_sum, q, q_sum, a_sum, c_w, c_q):
    """Round t: add ``a_t w_t`` and ``a_t q_t`` to the running sums (before the update) and
    return ``(eta_w, eta_q, gamma)``, the steps ``c a_t`` of the round."""
    a = 1.0 / math.sqrt(t) if anytime else 1.0
    for h in range(W.shape[0]):
        for j in range(W.shape[1]):
            w_sum[h, j] += a * W[h, j]
    for i in range(q.shape[0]):
        q_sum[i] += a * q[i]
    a_sum[0] += a
    eta_q = c_q * a
    return c_w * a, eta_q, 0.5 * eta_q


@njit(inline="always")
def _sample_coef(alg, s, q, g):
    """The w-player's weight ``c_j`` of a sample of group ``g`` (by algorithm, module docstring)."""
    if alg == SMD or alg == SMD_WEIGHTED:
        return q[g]
    if alg == SMD_UNIFORM:
        return q.shape[0] * q[g]
    if alg == ONLINE:
        return 1.0
    return 1.0 / s.k


@njit(inline="always")
def _w_step(alg, s, X, W, w_norm2, q, rows, groups, r, dloss, eta_w, t, dp, x2):
    """The w-player: ``w -= eta_w sum_j c_j grad l_j`` (c_j by algorithm, module docstring), then
    the projection onto the ball of radius R (``w_norm2`` keeps ``||w||^2``)."""
    R = s.radius
    c = 0.0
    for j in range(r):
        c = _sample_coef(alg, s, q, groups[j])
        _axpy(X, rows[j], dloss, j, eta_w * c, W, s.fit_intercept)
    if r == 1 and t % RESYNC != 0:
        # one sample: ||W - s dvec x~'||^2 = ||W||^2 - 2 s dvec.p + s^2 ||dvec||^2 ||x~||^2,
        # no pass over W (exact recomputation every RESYNC rounds)
        st_ = eta_w * c
        dd = 0.0
        for h in range(W.shape[0]):
            dd += dloss[0, h] * dloss[0, h]
        n2 = w_norm2[0] - 2.0 * st_ * dp + st_ * st_ * dd * x2
        if n2 < 0.0:
            n2 = 0.0
    else:
        n2 = _sq_norm(W)
    w_norm2[0] = _shrink_to_ball(W, R, n2)


@njit(inline="always")
def _q_step(alg, capped, s, log_q, q, order, groups, r, losses, suffix, eta_q, gamma, t):
    """The q-player: a mirror step in log space on the sampled groups' coordinates (by algorithm,
    module docstring), then back onto the simplex or (``capped``) the capped simplex."""
    if not eta_q > 0.0:
        return
    m = q.shape[0]
    k = s.k
    if alg == SMD:  # Hedge on every coordinate: exact normalisation
        for j in range(r):
            lv = losses[j] * s.inv_b
            if s.clip and lv > 1.0:
                lv = 1.0
            log_q[groups[j]] += eta_q * lv
        if capped:
            _project_capped(log_q, k, order, suffix, q)
        else:
            log_normalize(log_q)
            _fill_q(log_q, q)
        return
    # a few coordinates (simplex): renormalise in O(m) multiplications from
    # Z = sum_i q_i exp(delta_i) = sum_i q_i + sum_{updated} q_i (exp(delta_i) - 1) (the actual
    # sum, so rounding errors do not compound); exactly (m exponentials) every RESYNC rounds, for a
    # k > 1 projection, or if Z is small (cancellation)
    sparse = k == 1 and t % RESYNC != 0
    z = 0.0
    if sparse:
        for i in range(m):
            z += q[i]
    for j in range(r):
        lv = losses[j] * s.inv_b
        if s.clip and lv > 1.0:
            lv = 1.0
        g = groups[j]
        if alg == SMD_WEIGHTED:
            delta = eta_q * lv
        elif alg == SMD_UNIFORM:
            delta = eta_q * m * lv
        elif alg == ONLINE:
            delta = -eta_q * (1.0 - lv) / (q[g] + gamma)
        else:
            delta = -eta_q * (1.0 - lv) / (k * q[g] + gamma)
        log_q[g] += delta
        if sparse:
            e = math.exp(delta)
            losses[j] = e
            z += q[g] * (e - 1.0)
    if sparse and z > 0.25 and z < 1e300:
        lz = math.log(z)
        iz = 1.0 / z
        for i in range(m):
            log_q[i] -= lz
            q[i] *= iz
        for j in range(r):
            q[groups[j]] *= losses[j]
    elif capped:
        _project_capped(log_q, k, order, suffix, q)
    else:
        log_normalize(log_q)
        _fill_q(log_q, q)


@njit(inline="always")
def _round(alg, capped, s, st, X, Y, work, r, c_w, c_q):
    """One round on the ``r`` samples ``work.rows[:r]`` (of the groups ``work.groups[:r]``) of ``X``,
    ``Y``, with the step constants ``c_w``, ``c_q``: ``_begin_round``, the losses and gradients at
    ``w_t``, ``_w_step``, ``_q_step``; the round's steps and ``t`` are kept in ``st``. Returns
    False, with the round not counted, if a sample's loss is non-finite. The one copy of the round:
    the pool pass and the stream pass inline it (both compiled ``borrowed``, so binding the records
    counts no references)."""
    W = st.w
    q = st.q
    rows = work.rows
    groups = work.groups
    dloss = work.dloss
    losses = work.loss
    t = st.t[0] + 1
    eta_w, eta_q, gamma = _begin_round(s.anytime, t, W, st.w_sum, q, st.q_sum, st.a_sum, c_w, c_q)
    dp = 0.0
    x2 = 0.0
    for j in range(r):  # losses and gradients at w_t
        lv, dp, x2 = _loss_grad(s, X, Y, rows[j], W, dloss, j)
        if not math.isfinite(lv):
            return False
        losses[j] = lv
        st.group_loss[groups[j]] += lv
        st.group_draws[groups[j]] += 1
    _w_step(alg, s, X, W, st.w_norm2, q, rows, groups, r, dloss, eta_w, t, dp, x2)
    _q_step(alg, capped, s, st.log_q, q, st.order, groups, r, losses, work.suffix, eta_q, gamma, t)
    st.eta_w[0], st.eta_q[0], st.gamma[0], st.t[0] = eta_w, eta_q, gamma, t
    return True



@compiled_only
def _record(t, W, w_sum, log_q, q_sum, a_sum, hist_W, hist_q, hist_t, n_rec):
    """Append the averaged iterate of round t (the model ``predict`` would use then) to the
    history (a :class:`History`'s arrays; ``n_rec[0]`` counts the records)."""
    n = n_rec[0]
    inv = 1.0 / a_sum if a_sum > 0.0 else 0.0
    for h in range(W.shape[0]):
        for j in range(W.shape[1]):
            hist_W[n, h, j] = w_sum[h, j] * inv if a_sum > 0.0 else W[h, j]
    for i in range(log_q.shape[0]):
        hist_q[n, i] = q_sum[i] * inv if a_sum > 0.0 else math.exp(log_q[i])
    hist_t[n] = t
    n_rec[0] = n + 1


# --------------------------------------------------------------------------- pool pass (fit)
@functools.cache
def pool_pass_for(alg, capped, record):
    """The pool pass compiled for algorithm ``alg``, the simplex or (``capped``) the capped simplex,
    recording the iterates (``record``) or not.

    ``pool_pass(s, st, X, Y, pools, U, c_w, c_q, hist, work)`` runs ``U.shape[0]`` rounds drawing
    from the per-group pools, round t reading the uniforms ``U[t]``: SMD, SMD_UNIFORM, ONLINE,
    DEPROUND draw uniformly with replacement from the pools (the group(s) as the algorithm
    prescribes); SMD_WEIGHTED includes group i with probability ``pools.p[i]`` and reads its pool
    in order from ``pools.position[i]``. Records the averaged iterate in ``hist`` every
    ``hist.every`` rounds. Returns -1, or the round whose loss was non-finite.
    """

    depround = alg == DEPROUND and capped

    @njit(borrowed=True)
    def pool_pass(s, st, X, Y, pools, U, c_w, c_q, hist, work):
        log_q = st.log_q
        q = st.q
        rows = work.rows
        groups = work.groups
        u = work.u
        m = log_q.shape[0]
        ptr = pools.ptr
        for n in range(U.shape[0]):
            for c in range(U.shape[1]):
                u[c] = U[n, c]
            r = 0
            if alg == SMD:
                for i in range(m):
                    n_i = ptr[i + 1] - ptr[i]
                    o = int(u[i] * n_i)
                    rows[i] = pools.rows[ptr[i] + (o if o < n_i else n_i - 1)]
                    groups[i] = i
                r = m
            elif alg == SMD_WEIGHTED:
                for i in range(m):
                    if u[i] < pools.p[i]:
                        n_i = ptr[i + 1] - ptr[i]
                        rows[r] = pools.rows[ptr[i] + pools.position[i] % n_i]
                        pools.position[i] += 1
                        groups[r] = i
                        r += 1
            else:
                if depround:
                    r = _depround(q, s.k, u, work.x, groups)
                    off = m - 1
                else:
                    r = _decide(alg, q, u, groups)
                    off = 1
                for j in range(r):
                    i = groups[j]
                    n_i = ptr[i + 1] - ptr[i]
                    o = int(u[off + j] * n_i)
                    rows[j] = pools.rows[ptr[i] + (o if o < n_i else n_i - 1)]
            if not _round(alg, capped, s, st, X, Y, work, r, c_w, c_q):
                return n
            t = st.t[0]
            if record and t % hist.every == 0 and hist.n[0] < hist.t.shape[0]:
                _record(t, st.w, st.w_sum, log_q, st.q_sum, st.a_sum[0], hist.W, hist.q, hist.t, hist.n)
        return -1

    return pool_pass


# --------------------------------------------------------------------------- mirror-prox (Alg 4)
@compiled_only
def _mp_half(s, X, Y, ptr, pool_rows, position, p_w, batch, Wg, qg, Wout, log_q_out, eta_w,
             eta_q, dvec, group_loss, group_draws):
    """One half-step: gradients at (Wg, qg) from fresh mini-batches (group i's ``batch[i]`` next
    rows of its pool, :class:`Pools`), applied to Wout / log_q_out (``dvec`` is a (1, n_heads)
    work buffer).

    g_w = sum_i qg_i p_i mean_j grad l(Wg; z_ij),  [g_q]_i = p_i mean_j l(Wg; z_ij)  (eq. 37/40).
    """
    m = qg.shape[0]
    for i in range(m):
        n_i = ptr[i + 1] - ptr[i]
        b = batch[i]
        acc = 0.0
        coef = eta_w * qg[i] * p_w[i] / b
        for _j in range(b):
            row = pool_rows[ptr[i] + position[i] % n_i]
            position[i] += 1
            lv, _dp, _x2 = _loss_grad(s, X, Y, row, Wg, dvec, 0)
            if not math.isfinite(lv):
                return False
            group_loss[i] += lv
            group_draws[i] += 1
            ls = lv * s.inv_b
            if s.clip and ls > 1.0:
                ls = 1.0
            acc += ls
            _axpy(X, row, dvec, 0, coef, Wout, s.fit_intercept)
        log_q_out[i] += eta_q * p_w[i] * acc / b
    return True


@functools.cache
def mirror_prox_pass_for(record):
    """Stochastic mirror-prox with mini-batches (Alg. 4) compiled recording the iterates or not:
    ``mirror_prox_pass(s, st, X, Y, pools, batch, n_rounds, eta_w, eta_q, hist)``, where
    ``st.w``/``st.log_q`` hold (w'_t, q'_t).

    Each round: extrapolate (w_{t+1}, q_{t+1}) from (w'_t, q'_t) with gradients at (w'_t, q'_t);
    then update (w'_{t+1}, q'_{t+1}) from (w'_t, q'_t) with gradients at (w_{t+1}, q_{t+1}) on
    fresh batches of ``batch[i]`` rows of each group. The output averages the extrapolated points
    w_2..w_{T+1} (uniformly). Returns -1, or the round whose loss was non-finite.
    """

    @njit
    def mirror_prox_pass(s, st, X, Y, pools, batch, n_rounds, eta_w, eta_q, hist):
        W = st.w
        w_sum = st.w_sum
        log_q = st.log_q
        q_sum = st.q_sum
        ptr = pools.ptr
        pool_rows = pools.rows
        position = pools.position
        p_w = pools.p
        group_loss = st.group_loss
        group_draws = st.group_draws
        m = log_q.shape[0]
        H = W.shape[0]
        R = s.radius
        We = np.empty_like(W)
        le = np.empty(m)
        qp = np.empty(m)
        qe = np.empty(m)
        dvec = np.empty((1, H))
        for n in range(n_rounds):
            t = st.t[0] + 1
            _fill_q(log_q, qp)
            for h in range(H):  # element by element: a slice assignment compiles shape checks
                for j in range(W.shape[1]):
                    We[h, j] = W[h, j]
            for i in range(m):
                le[i] = log_q[i]
            if not _mp_half(s, X, Y, ptr, pool_rows, position, p_w, batch, W, qp, We, le,
                            eta_w, eta_q, dvec, group_loss, group_draws):
                return n
            _shrink_to_ball(We, R, _sq_norm(We))
            log_normalize(le)
            _fill_q(le, qe)
            for h in range(H):
                for j in range(W.shape[1]):
                    w_sum[h, j] += We[h, j]
            for i in range(m):
                q_sum[i] += qe[i]
            st.a_sum[0] += 1.0
            if not _mp_half(s, X, Y, ptr, pool_rows, position, p_w, batch, We, qe, W, log_q,
                            eta_w, eta_q, dvec, group_loss, group_draws):
                return n
            st.w_norm2[0] = _shrink_to_ball(W, R, _sq_norm(W))
            log_normalize(log_q)
            st.t[0] = t
            if record and t % hist.every == 0 and hist.n[0] < hist.t.shape[0]:
                _record(t, W, w_sum, log_q, q_sum, st.a_sum[0], hist.W, hist.q, hist.t, hist.n)
        return -1

    return mirror_prox_pass


# --------------------------------------------------------------------------- sparse rows (CSR)
# Wide CSR streams (more columns than ``utils._scaling.WIDE_FEATURES``) run the stream pass on the
# rows' non-zeros: a round costs O(H nnz + m), whatever the number of columns. Three quantities
# the dense round touches in full are kept lazily (:class:`Lazy`):
#
# * the iterate is ``w = scale * V`` (``State.w`` holds V): the projection onto the ball
#   multiplies ``scale``; a gradient step writes ``V`` on the row's columns only;
# * the running sum ``sum_s a_s w_s`` is ``State.w_sum[:, j] + V[:, j] (clock - stamp[j])`` for
#   every column j, where ``clock = sum_s a_s scale_s`` (rounds since the last settling) and
#   ``stamp[j]`` the clock when column j's pending sum was last added to ``w_sum`` (before V[:, j]
#   changes: "averaging via accumulated sums with time stamps");
# * ``||w||^2`` (``State.w_norm2``) follows each sample's step exactly in real arithmetic
#   (``||w - c g x'||^2 = ||w||^2 - 2 c g.(w x) + c^2 ||g||^2 ||x||^2``).
#
# Every ``Lazy.every`` rounds, and when ``scale`` falls below ``SETTLE_SCALE``, :func:`_settle`
# folds them back (``w = scale V``, pending sums added, ``||w||^2`` recomputed: O(H D), amortised
# O(H) per round with ``every >= D``). The scale bound keeps the clock exact to round-off: once
# ``scale`` is far below its value when the clock started, the clock's increments ``a_t scale_t``
# vanish against it (a ball that shrinks w on every round would otherwise lose the later iterates
# from the average). The state then is what the dense pass keeps; between settlings the same
# model to round-off. Settling is a function of the round count only, so chunking and pickling
# change nothing (bit for bit).
SETTLE_SCALE = 0.25  # a scale below this is folded into V (the clock then starts again at 0)


class Lazy(NamedTuple):
    """The lazy form of the sparse pass (see above); arrays are state, updated in place.

    scale : (1,) -- w = scale * State.w; clock : (1,) -- ``sum a_s scale_s`` since the last
    settling; stamp : (D,) -- the clock when column j's pending sum last reached ``w_sum``;
    every : int -- rounds between settlings.
    """

    scale: np.ndarray
    clock: np.ndarray
    stamp: np.ndarray
    every: int


class CSRRows(NamedTuple):
    """CSR rows of a chunk (canonical: sorted, no duplicates): row i's columns are
    ``indices[indptr[i]:indptr[i + 1]]``, its values ``data[...]``."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray


def settle_every(n_columns):
    """Rounds between two settlings of the lazy form: at least RESYNC, at least the width."""
    return max(RESYNC, int(n_columns))


def settled(W, w_sum, scale, clock, stamp):
    """``(w, sum_s a_s w_s)`` from the lazy form, in numpy (the public attributes read this)."""
    return scale * W, w_sum + W * (clock - stamp)


@compiled_only
def _settle(W, w_sum, lz):
    """Fold the lazy form back into ``W`` (= w) and ``w_sum``; returns ``||w||^2``."""
    c = lz.clock[0]
    sc = lz.scale[0]
    stamp = lz.stamp
    n2 = 0.0
    for j in range(W.shape[1]):
        dc = c - stamp[j]
        for h in range(W.shape[0]):
            w_sum[h, j] += W[h, j] * dc
            v = W[h, j] * sc
            W[h, j] = v
            n2 += v * v
        stamp[j] = 0.0
    lz.clock[0] = 0.0
    lz.scale[0] = 1.0
    return n2


@njit(inline="always")
def _flush_col(W, w_sum, stamp, clock, j):
    """Add column j's pending sum to ``w_sum`` (before ``W[:, j]`` changes)."""
    dc = clock - stamp[j]
    if dc != 0.0:
        for h in range(W.shape[0]):
            w_sum[h, j] += W[h, j] * dc
        stamp[j] = clock


@njit(inline="always")
def _sparse_dot(XI, XV, XN, row, W, h, fi, d):
    """``V[h] . [x, 1]`` for sparse row ``row`` (no intercept term unless ``fi``)."""
    p = 0.0
    for e in range(XN[row]):
        p += W[h, XI[row, e]] * XV[row, e]
    if fi:
        p += W[h, d]
    return p


@njit(inline="always")
def _sparse_round(alg, capped, s, st, lz, XI, XV, XN, Y, work, r, c_w, c_q):
    """:func:`_round` on sparse rows ``XI``/``XV``/``XN`` (buffer rows: columns, values, counts)
    in the lazy form (:class:`Lazy`): the same steps, O(H nnz + m) per sample."""
    W = st.w
    w_sum = st.w_sum
    q = st.q
    rows = work.rows
    groups = work.groups
    dloss = work.dloss
    losses = work.loss
    H = W.shape[0]
    d = W.shape[1] - 1 if s.fit_intercept else W.shape[1]
    fi = s.fit_intercept
    t = st.t[0] + 1
    sc = lz.scale[0]
    a = 1.0 / math.sqrt(t) if s.anytime else 1.0
    clock = lz.clock[0] + a * sc  # w_sum += a_t w_t, lazily
    for i in range(q.shape[0]):
        st.q_sum[i] += a * q[i]
    st.a_sum[0] += a
    eta_w = c_w * a
    eta_q = c_q * a
    gamma = 0.5 * eta_q
    for j in range(r):  # losses and gradients at w_t
        row = rows[j]
        wr = Y[row, H]
        tot = 0.0
        for h in range(H):
            p = sc * _sparse_dot(XI, XV, XN, row, W, h, fi, d)
            lv, g = loss_and_derivative(s.loss, Y[row, h], p)
            tot += lv
            dloss[j, h] = g * s.inv_hb * wr
        lv = wr * tot / H
        if not math.isfinite(lv):
            return False
        losses[j] = lv
        st.group_loss[groups[j]] += lv
        st.group_draws[groups[j]] += 1
    # the w-player: each sample's step on its columns, ||w||^2 followed exactly
    n2 = st.w_norm2[0]
    for j in range(r):
        st_ = eta_w * _sample_coef(alg, s, q, groups[j])
        row = rows[j]
        dp = 0.0
        dd = 0.0
        for h in range(H):
            dp += dloss[j, h] * sc * _sparse_dot(XI, XV, XN, row, W, h, fi, d)
            dd += dloss[j, h] * dloss[j, h]
        x2 = 1.0 if fi else 0.0
        for e in range(XN[row]):
            x2 += XV[row, e] * XV[row, e]
        n2 = n2 - 2.0 * st_ * dp + st_ * st_ * dd * x2
        if n2 < 0.0:
            n2 = 0.0
        cs = st_ / sc
        for e in range(XN[row]):
            col = XI[row, e]
            _flush_col(W, w_sum, lz.stamp, clock, col)
            xv = XV[row, e]
            for h in range(H):
                W[h, col] -= cs * dloss[j, h] * xv
        if fi:
            _flush_col(W, w_sum, lz.stamp, clock, d)
            for h in range(H):
                W[h, d] -= cs * dloss[j, h]
    if n2 > s.radius * s.radius:  # the projection onto the ball: a multiplier
        sc *= s.radius / math.sqrt(n2)
        n2 = s.radius * s.radius
    lz.scale[0] = sc
    lz.clock[0] = clock
    if t % lz.every == 0 or sc < SETTLE_SCALE:
        n2 = _settle(W, w_sum, lz)
    st.w_norm2[0] = n2
    _q_step(alg, capped, s, st.log_q, q, st.order, groups, r, losses, work.suffix, eta_q, gamma, t)
    st.eta_w[0], st.eta_q[0], st.gamma[0], st.t[0] = eta_w, eta_q, gamma, t
    return True


# --------------------------------------------------------------------------- stream pass
STREAM_DONE = 0
STREAM_NONFINITE = 1
STREAM_GROW = 2


def _grown(a, new_cap, head, length):
    """The rings ``a[i]`` (capacity ``a.shape[1]``, oldest at ``head[i]``, ``length[i]`` entries)
    copied into zeroed rings of capacity ``new_cap``, oldest first."""
    cap = a.shape[1]
    b = np.zeros((a.shape[0], new_cap) + a.shape[2:], dtype=a.dtype)
    for i in range(a.shape[0]):
        b[i, : length[i]] = a[i, (head[i] + np.arange(length[i])) % cap]
    return b


def grow_stream_buffers(s, b, g, c_row, nnz=0):
    """Grow the stream pass's rings as it asks before buffering a row of group ``g`` with ``c_row``
    uniforms and (a CSR stream) ``nnz`` non-zeros (``STREAM_GROW``): the row rings to
    ``min(2 capacity, s.max_buffer)`` if group g's is full (every ring then starts at slot 0), the
    uniform queue by doubling (up to ``s.max_uniforms``) until the row's uniforms fit, a CSR
    stream's slots to ``max(nnz, 2 nnz_capacity)`` non-zeros if the row has more than they hold.
    Returns the buffers record with the new arrays (``head``, ``u_head`` are updated in place)."""
    X, Y, uq = b.X, b.Y, b.uniforms
    XI, XV, XN = b.XI, b.XV, b.XN
    cap = Y.shape[1]
    if b.length[g] == cap and cap < s.max_buffer:
        new_cap = min(2 * cap, s.max_buffer)
        X = _grown(X, new_cap, b.head, b.length)
        XI = _grown(XI, new_cap, b.head, b.length)
        XV = _grown(XV, new_cap, b.head, b.length)
        XN = _grown(XN, new_cap, b.head, b.length)
        Y = _grown(Y, new_cap, b.head, b.length)
        b.head[:] = 0
    if nnz > XI.shape[2]:
        ncap = max(int(nnz), 2 * XI.shape[2])
        pad = ((0, 0), (0, 0), (0, ncap - XI.shape[2]))
        XI, XV = np.pad(XI, pad), np.pad(XV, pad)
    while b.u_length[0] + c_row > uq.shape[0] and uq.shape[0] < s.max_uniforms:
        uq = _grown(uq[None], min(2 * uq.shape[0], s.max_uniforms), b.u_head, b.u_length)[0]
        b.u_head[0] = 0
    return b._replace(X=X, XI=XI, XV=XV, XN=XN, Y=Y, uniforms=uq)


@functools.cache
def stream_pass_for(alg, capped, sparse=False):
    """The stream pass compiled for algorithm ``alg``, the simplex or (``capped``) the capped
    simplex, on dense rows or (``sparse``) on CSR rows.

    ``stream_pass(s, st, lz, b, X, Y, G, Ur, raw, loss_acc, work, start)``: rows arrive in order;
    each is predicted, buffered in its group's FIFO, then every round the buffers can serve is run.
    ``X`` is an (n, d) array, or (``sparse``) a :class:`CSRRows`: the pass then keeps the model
    in the lazy form ``lz`` (:class:`Lazy`, see "sparse rows" above) and its rounds cost
    O(H nnz + m) whatever d; dense, ``lz`` is not read.

    Per row: ``raw[i]`` = the decision value of the model ``predict`` would use now (averaged
    iterate unless ``s.average`` is False), its loss added to ``loss_acc[0]``; the running maxima
    ``st.x_norm2_max``, ``st.y_abs_max`` are updated (they give G); the row joins the ring of its
    group in ``b`` (a full ring of ``s.max_buffer`` rows drops its oldest) and its uniforms
    ``Ur[i]`` join the uniform queue (capacity ``s.max_uniforms``, oldest dropped). Then,
    repeatedly: if no round is pending and a decision's uniforms are queued, the next round's
    groups are drawn from ``q_t`` (SMD: all groups; SMD(1): uniform; Online: i ~ q; DepRound: a
    k-set) into ``b.pending``; if every pending group has a buffered row, the oldest of each is
    used for one round. The pending draw is kept across calls: it is never redrawn because its
    group is absent.

    Starts at row ``start``. Returns ``(status, i)``: ``STREAM_DONE``; ``STREAM_NONFINITE``, a loss
    of row ``i`` was non-finite; ``STREAM_GROW``, row ``i`` needs a ring to grow first (the row's
    group's ring is full below ``s.max_buffer`` rows, its uniforms would fill the uniform queue
    below ``s.max_uniforms``, or its non-zeros do not fit a CSR slot): nothing of row ``i`` is
    done; the caller grows the rings (:func:`grow_stream_buffers`) and calls again from ``i``.
    The pass allocates nothing (it is compiled without reference counting).
    """

    depround = alg == DEPROUND and capped

    @njit(borrowed=True)
    def stream_pass(s, st, lz, b, X, Y, G, Ur, raw, loss_acc, work, start):
        W = st.w
        w_sum = st.w_sum
        log_q = st.log_q
        q = st.q
        rows = work.rows
        groups = work.groups
        u = work.u
        m = log_q.shape[0]
        H = W.shape[0]
        fi = s.fit_intercept
        d = W.shape[1] - 1 if fi else W.shape[1]
        u_need = s.uniforms_per_decision
        c_row = Ur.shape[1]
        head = b.head
        blen = b.length
        pend = b.pending
        bY = b.Y
        uq = b.uniforms
        cap0 = bY.shape[1]
        HW = Y.shape[1]  # the heads and, last, the sample weight
        Yf = bY.reshape(m * cap0, HW)  # the buffers as (m * cap) rows
        if sparse:
            n = X.indptr.shape[0] - 1
            bI = b.XI
            bV = b.XV
            ncap = bI.shape[2]
            XIf = bI.reshape(m * cap0, ncap)
            XVf = bV.reshape(m * cap0, ncap)
            XNf = b.XN.reshape(m * cap0)
        else:
            n = X.shape[0]
            bX = b.X
            Xf = bX.reshape(m * cap0, d)
        for i in range(start, n):
            g = G[i]
            grow = (blen[g] == cap0 and cap0 < s.max_buffer) or (
                b.u_length[0] + c_row > uq.shape[0] and uq.shape[0] < s.max_uniforms)
            if sparse:
                a0 = X.indptr[i]
                a1 = X.indptr[i + 1]
                if a1 - a0 > ncap:
                    grow = True
            if grow:
                return STREAM_GROW, i
            # prequential prediction with the current predictor
            a_sum = st.a_sum[0]
            use_avg = s.average and a_sum > 0.0
            inv = 1.0 / a_sum if use_avg else 1.0
            tot = 0.0
            for h in range(H):
                if sparse:
                    p = 0.0
                    if use_avg:  # sum_s a_s w_s . x~, from the lazy form
                        ck = lz.clock[0]
                        for e in range(a0, a1):
                            c = X.indices[e]
                            p += (w_sum[h, c] + W[h, c] * (ck - lz.stamp[c])) * X.data[e]
                        if fi:
                            p += w_sum[h, d] + W[h, d] * (ck - lz.stamp[d])
                        p *= inv
                    else:
                        for e in range(a0, a1):
                            p += W[h, X.indices[e]] * X.data[e]
                        if fi:
                            p += W[h, d]
                        p *= lz.scale[0]
                else:
                    p = _dot(X, i, w_sum, h, fi) * inv if use_avg else _dot(X, i, W, h, fi)
                raw[i, h] = p
                tot += loss_and_derivative(s.loss, Y[i, h], p)[0]
            if not math.isfinite(tot):
                return STREAM_NONFINITE, i
            loss_acc[0] += Y[i, H] * tot / H
            nx = 1.0 if fi else 0.0
            if sparse:
                for e in range(a0, a1):
                    nx += X.data[e] * X.data[e]
            else:
                for j in range(d):
                    nx += X[i, j] * X[i, j]
            if nx > st.x_norm2_max[0]:
                st.x_norm2_max[0] = nx
            for h in range(H):
                ay = abs(Y[i, h])
                if ay > st.y_abs_max[0]:
                    st.y_abs_max[0] = ay
            # buffer the row (a full ring has max_buffer rows here: it drops its oldest)
            if blen[g] == cap0:
                head[g] = (head[g] + 1) % cap0
                blen[g] -= 1
            slot = (head[g] + blen[g]) % cap0
            if sparse:
                for e in range(a0, a1):
                    bI[g, slot, e - a0] = X.indices[e]
                    bV[g, slot, e - a0] = X.data[e]
                b.XN[g, slot] = a1 - a0
            else:
                for j in range(d):
                    bX[g, slot, j] = X[i, j]
            for h in range(HW):
                bY[g, slot, h] = Y[i, h]
            blen[g] += 1
            # queue the row's uniforms
            qcap = uq.shape[0]
            for c in range(c_row):
                if b.u_length[0] == qcap:  # max_uniforms here: the oldest is dropped
                    b.u_head[0] = (b.u_head[0] + 1) % qcap
                    b.u_length[0] -= 1
                uq[(b.u_head[0] + b.u_length[0]) % qcap] = Ur[i, c]
                b.u_length[0] += 1
            # run every round the buffers can serve
            while True:
                if b.n_pending[0] == 0:
                    if b.u_length[0] < u_need:
                        break
                    qcap = uq.shape[0]
                    for c in range(u_need):
                        u[c] = uq[b.u_head[0]]
                        b.u_head[0] = (b.u_head[0] + 1) % qcap
                        b.u_length[0] -= 1
                    if depround:
                        b.n_pending[0] = _depround(q, s.k, u, work.x, pend)
                    else:
                        b.n_pending[0] = _decide(alg, q, u, pend)
                r = b.n_pending[0]
                ready = True
                for j in range(r):
                    if blen[pend[j]] == 0:
                        ready = False
                        break
                if not ready:
                    break
                for j in range(r):
                    gj = pend[j]
                    rows[j] = gj * cap0 + head[gj]
                    groups[j] = gj
                Gl = _lipschitz_bound(s.lip_kind, s.lip, math.sqrt(st.x_norm2_max[0]), st.y_abs_max[0],
                                      s.radius, H, s.inv_b)
                cw, cq = _step_constants(alg, s.anytime, s.T, s.D, Gl, m, s.k)
                c_w = cw * s.step_scale
                c_q = cq * s.eta_scale
                if sparse:
                    ok = _sparse_round(alg, capped, s, st, lz, XIf, XVf, XNf, Yf, work, r, c_w, c_q)
                else:
                    ok = _round(alg, capped, s, st, Xf, Yf, work, r, c_w, c_q)
                if not ok:
                    return STREAM_NONFINITE, i
                for j in range(r):
                    gj = pend[j]
                    head[gj] = (head[gj] + 1) % cap0
                    blen[gj] -= 1
                b.n_pending[0] = 0
        return STREAM_DONE, n

    return stream_pass
