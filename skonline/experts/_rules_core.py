"""Compiled passes of the expert-aggregation rules (one per algorithm).

Every pass runs the prediction-with-expert-advice protocol over the rows of a loss matrix ``L``
(n_rounds, K), in order: play the current weights, observe the row, suffer the mixture's loss,
update. Common conventions:

* Losses arrive in the user's units and are mapped affinely to [0, 1] (``(l - lo) * inv_span``);
  the caller has checked the range, so the passes trust it.
* Sleeping experts: a NaN loss means the expert is asleep. The weights played that round are the
  current weights restricted to the awake experts and renormalised (uniform over the awake experts
  if they all have zero weight), and an asleep expert is charged the mixture's own loss
  ``l_hat`` (the classic reduction of sleeping experts to ordinary ones: its instantaneous regret is
  zero, and the learner's loss equals ``<w, l_imputed>``, so every bound of the rule holds for the
  imputed loss matrix). The caller rejects rows where every expert is asleep.
* Every pass takes the loss matrix, a :class:`RuleSettings` record (fixed for the chunk), the rule's
  state record (arrays updated in place; a scalar that changes is a 1-element array) and a
  :class:`RoundBuffers` record of scratch vectors. ``out[r]`` receives the weights played at row
  ``r``; ``state.cum_loss[0]`` accumulates the mixture's loss in the user's units and
  ``state.expert_cum_losses`` the experts' observed losses, row by row (chunking-invariant).
* Horizon: ``horizon_mode == FIXED`` is the paper's known T; ``SCHEDULE`` runs the doubling schedule
  ``T_k = S * 2^k`` (the smallest such T_k >= t at round t) without restarting: the learning rate,
  the floor and the sharing rate of round t are those of T_k. Lowering the floor keeps the current
  weights feasible, so the paper's per-segment analysis applies on each doubling period.
* The play step (:func:`_play`) and the clipped-simplex projection
  (``utils._projections.clip_project`` / ``clip_project_max``) are written once and inlined into
  every pass (``inline="always"``); the passes that build the log-weights in one loop take their
  maximum there and hand it to ``clip_project_max``, so the inlined projection does no extra pass.
  The hot passes (Hedge, ClippedHedge, PCS, Fixed Share, OCS, OCS+) are compiled with
  ``njit(borrowed=True)`` (no reference counting: they allocate nothing), without which every
  inlined helper's array arguments cost a few atomic counts per round (10-25 % of a round at K = 10).
  Its exact fallback ``sorted_lambda`` is reached by tests at K = 130 and checked against
  ``project_clipped_simplex``, itself checked against an independent sort-based reference
  (tests/experts/test_clipped_projections.py).
* Updates after round t use round t's parameters; the state keeps the tuning of the last round
  (``T``, ``eta``, ``gamma``, ``alpha``).
"""

import math
from typing import NamedTuple

import numpy as np

from ..utils._jit import compiled_only, njit
from ..utils._projections import clip_project, clip_project_max, shifted_exp, shifted_exp_max

# rule codes
HEDGE = 0
FIXED_SHARE = 1
CLIPPED_HEDGE = 2
PCS = 3
OCS = 4
OCS_PLUS = 5
ML_POLY = 6
BOA = 7
ADAHEDGE = 8

# how a tuned parameter is set (``RuleSettings.*_mode``); the number that goes with FIXED is
# passed beside the mode, never encoded in it
#: the parameter's number (``eta=0.1``; a bound: the given ``l2_bound``, ...)
FIXED = 0
#: the rule's tuning for the horizon of the round ('auto'; a bound: the worst case T)
TUNED = 1
#: a schedule over the rounds: AdaHedge's rate (``eta='adaptive'``) or ``alpha_t = 1 / (t + 1)``
#: (``alpha='decreasing'``)
SCHEDULE = 2


class RuleSettings(NamedTuple):
    """What a rule's pass reads and never changes, built once per chunk (``_BaseRule._settings``).

    rule : int
        The rule's code (``HEDGE``, ``FIXED_SHARE``, ``CLIPPED_HEDGE``, ``PCS``, ``OCS``, ``OCS_PLUS``,
        ``ML_POLY``, ``BOA``, ``ADAHEDGE``).
    lo : float
        Low end of ``loss_range``: a loss ``l`` enters the rule as ``(l - lo) * inv_span`` in [0, 1].
    inv_span : float
        ``1 / (high - low)`` (PCSP: ``1 / loss_bound``).
    t0 : int
        Rounds seen before the chunk: row ``r`` is round ``t = t0 + r + 1``.
    horizon_mode, horizon : int, float
        ``FIXED``: the paper's T (``horizon``); ``SCHEDULE`` (``horizon=None``): the doubling
        schedule ``T_k = S 2^k`` (``horizon`` is 0).
    S : float
        Number of segments S of the comparator (``n_segments``; 1 for the rules without one).
    eta_mode, eta : int, float
        The learning rate: ``FIXED`` (the number ``eta``), ``TUNED`` (the rule's tuning, 'auto') or
        ``SCHEDULE`` (AdaHedge's rate: Fixed Share's 'adaptive'); ``eta`` is 0 unless ``FIXED``.
    alpha_mode, alpha : int, float
        Fixed Share's sharing rate: ``FIXED`` (``alpha``), ``TUNED`` ('auto', S / T) or ``SCHEDULE``
        ('decreasing', 1 / (t + 1)).
    bound_mode, bound : int, float
        The bound the tuning of eta uses: PCS's ``l2_bound`` on L_2, OCS's ``path_length_bound`` on
        P_inf, PCSP's ``m2_bound`` on M_2: ``FIXED`` (``bound``) or ``TUNED`` (the worst case T).
    gamma_mode, gamma : int, float
        The floor of the clipped simplex (``min_weight``): ``FIXED`` (``gamma``) or ``TUNED``
        ('auto', S / (T K)).
    """

    rule: int
    lo: float
    inv_span: float
    t0: int
    horizon_mode: int
    horizon: float
    S: float
    eta_mode: int
    eta: float
    alpha_mode: int
    alpha: float
    bound_mode: int
    bound: float
    gamma_mode: int
    gamma: float


def tuning_settings(*, horizon, eta, alpha, bound, gamma):
    """The horizon's and the tuned parameters' fields of :class:`RuleSettings`: for each, a mode
    (``FIXED`` with its number; ``TUNED`` for 'auto', for None (a bound: the worst case T) or for a
    parameter the rule does not have; ``SCHEDULE`` for 'adaptive' / 'decreasing' and for
    ``horizon=None``, the doubling schedule) and the number (0 unless ``FIXED``). The values in
    use change with the horizon: the rules expose those of the last round (``horizon_``, ``eta_``,
    ``share_rate_``, ``min_weight_``)."""
    out = {"horizon_mode": SCHEDULE if horizon is None else FIXED,
           "horizon": 0.0 if horizon is None else float(horizon)}
    for name, value in (("eta", eta), ("alpha", alpha), ("bound", bound), ("gamma", gamma)):
        if isinstance(value, str):
            mode = SCHEDULE if value in ("adaptive", "decreasing") else TUNED
        else:
            mode = TUNED if value is None else FIXED
        out[name + "_mode"] = mode
        out[name] = float(value) if mode == FIXED else 0.0
    return out


class RoundBuffers(NamedTuple):
    """Scratch vectors of K entries, rewritten every round (no meaning between rounds).

    l_t : the round's losses scaled to [0, 1], an asleep expert charged the mixture's loss;
    lp : log-weights before normalisation or projection; d : ``lp - max(lp)``; p : ``exp(d)``;
    mark : the projection's marks of clipped coordinates, then the heap of its exact fallback;
    aux : OCS's second output of a projection (w_{t+1} of (18), log w_{t+1} of (17)).
    """

    l_t: np.ndarray
    lp: np.ndarray
    d: np.ndarray
    p: np.ndarray
    mark: np.ndarray
    aux: np.ndarray


def round_buffers(K):
    """Fresh :class:`RoundBuffers` for K experts."""
    return RoundBuffers(np.empty(K), np.empty(K), np.empty(K), np.empty(K), np.empty(K), np.empty(K))


class ExponentialState(NamedTuple):
    """State of Hedge, ClippedHedge and PCS (:func:`exponential_pass`), updated in place.

    w : (K,) the distribution played next (``weights_``); log_w : (K,) its logarithm, exact from the
    log-domain update; T : (1,) the horizon of the last round's tuning (T, or the doubling guess T_k;
    0 before the first round); eta : (1,) learning rate of the last round; gamma : (1,) floor of the
    last round (0 for Hedge); eta and gamma are NaN before the first round; cum_loss : (1,) the
    mixture's cumulative loss (user units); expert_cum_losses : (K,) each expert's observed loss.
    """

    w: np.ndarray
    log_w: np.ndarray
    T: np.ndarray
    eta: np.ndarray
    gamma: np.ndarray
    cum_loss: np.ndarray
    expert_cum_losses: np.ndarray


class FixedShareState(NamedTuple):
    """State of Fixed Share (:func:`fixed_share_pass`), updated in place.

    w, log_w, T, eta, cum_loss, expert_cum_losses : as in :class:`ExponentialState`;
    alpha : (1,) sharing rate of the last round (NaN before the first);
    gap : (1,) cumulative mixability gap Delta (eta='adaptive', AdaHedge's rate log K / Delta).
    """

    w: np.ndarray
    log_w: np.ndarray
    T: np.ndarray
    eta: np.ndarray
    alpha: np.ndarray
    gap: np.ndarray
    cum_loss: np.ndarray
    expert_cum_losses: np.ndarray


class OptimisticState(NamedTuple):
    """State of OCS and OCS+ (:func:`optimistic_pass`), updated in place.

    w : (K,) the distribution played next, ``w_{t+1} = proj(log w~_{t+1} - eta l_t)`` (eq. 17);
    log_aux_w : (K,) log of the auxiliary ``w~_{t+1}`` (eq. 18); hint : (K,) the last scaled loss
    vector ``l_t``, the optimistic guess of the next one (``l_0 = 0``); T, eta, gamma, cum_loss,
    expert_cum_losses : as in :class:`ExponentialState` (OCS+: eta of the current epoch);
    epoch : (1,) OCS+'s epoch m (from 1); path_length : (1,) its path length P_m so far.
    """

    w: np.ndarray
    log_aux_w: np.ndarray
    hint: np.ndarray
    T: np.ndarray
    eta: np.ndarray
    gamma: np.ndarray
    epoch: np.ndarray
    path_length: np.ndarray
    cum_loss: np.ndarray
    expert_cum_losses: np.ndarray


class MLPolyState(NamedTuple):
    """State of ML-Poly (:func:`mlpoly_pass`), updated in place.

    w : (K,) weights played next; R : (K,) cumulative regrets; inv_eta : (K,) ``1 / eta_i``;
    B : (1,) largest squared instantaneous regret so far; cum_loss, expert_cum_losses : as in
    :class:`ExponentialState`.
    """

    w: np.ndarray
    R: np.ndarray
    inv_eta: np.ndarray
    B: np.ndarray
    cum_loss: np.ndarray
    expert_cum_losses: np.ndarray


class BOAState(NamedTuple):
    """State of BOA (:func:`boa_pass`), updated in place.

    w : (K,) weights played next; log_prior : (K,) log pi; R : (K,) regularised cumulative regrets
    ``sum_s (r_s - eta r_s^2)``; V : (K,) ``sum_s r_s^2``; B : (K,) ``max_s |r_s|``; eta : (K,)
    current per-expert rates; cum_loss, expert_cum_losses : as in :class:`ExponentialState`.
    """

    w: np.ndarray
    log_prior: np.ndarray
    R: np.ndarray
    V: np.ndarray
    B: np.ndarray
    eta: np.ndarray
    cum_loss: np.ndarray
    expert_cum_losses: np.ndarray


class AdaHedgeState(NamedTuple):
    """State of AdaHedge (:func:`adahedge_pass`), updated in place.

    w : (K,) weights played next; L : (K,) cumulative scaled losses; Delta : (1,) cumulative
    mixability gap; cum_loss, expert_cum_losses : as in :class:`ExponentialState`.
    """

    w: np.ndarray
    L: np.ndarray
    Delta: np.ndarray
    cum_loss: np.ndarray
    expert_cum_losses: np.ndarray

#: learning rate used while the cumulative mixability gap is 0 (follow the leader)
ETA_MAX = 1e6


@njit(inline="always")
def _log_term(K, T, S):
    """c = S log(K T / S), the paper's common complexity term."""
    return S * math.log(K * T / S)


@compiled_only
def hedge_tuning(K, T, eta_mode, eta_fixed):
    """Hedge's eta for horizon ``T`` (``TUNED``: ``sqrt(8 log K / T)``, the minimax tuning)."""
    if eta_mode == TUNED:
        return math.sqrt(8.0 * math.log(K) / T) if K > 1 else 1.0
    return eta_fixed


@compiled_only
def fixed_share_tuning(K, T, S, eta_mode, eta_fixed, alpha_mode, alpha_fixed):
    """Fixed Share's (eta, alpha) for horizon ``T`` and S segments (modes as in
    :class:`RuleSettings`; a ``SCHEDULE`` value is set by the pass every round, not here).

    alpha = S / T (at most (K - 1) / K); eta = sqrt(8 C / T) with C the log of the inverse prior mass
    of a sequence with S - 1 switches.
    """
    alpha = 0.0
    eta = eta_fixed
    if K > 1:
        if alpha_mode == FIXED:
            alpha = alpha_fixed
        elif alpha_mode == TUNED:
            alpha = S / T
            if alpha > (K - 1.0) / K:  # at most (K - 1) / K
                alpha = (K - 1.0) / K
        if eta_mode == TUNED:
            # log of the inverse prior mass of a sequence with S - 1 switches
            cfs = math.log(K)
            if alpha_mode == SCHEDULE:
                # alpha='decreasing': alpha_t = 1 / (t + 1); staying put for T rounds has
                # prior 1 / (T + 1), and a switch at round t costs alpha_t / (K - 1) >= 1 / ((T + 1)(K - 1))
                cfs += math.log(T + 1.0) + (S - 1.0) * math.log((K - 1.0) * (T + 1.0))
            else:
                if S > 1:
                    cfs += (S - 1.0) * math.log((K - 1.0) / alpha)
                if T - S > 0 and alpha > 0.0:
                    cfs -= (T - S) * math.log1p(-alpha)
            eta = math.sqrt(8.0 * cfs / T)
    elif eta_mode == TUNED:
        eta = 1.0
    return eta, alpha


@compiled_only
def clipped_tuning(rule, settings, K, T, S):
    """(eta, floor) of the clipped-simplex rules (CLIPPED_HEDGE, PCS, OCS, OCS_PLUS) for horizon
    ``T`` (the modes and numbers of ``settings``, a :class:`RuleSettings`), with
    ``c = S log(K T / S)``: the tuned floor ``S / (T K)``; ClippedHedge ``sqrt(c / T)`` (Thm 1), PCS
    ``min(1/2, sqrt(c / L_2))`` (Thm 2), OCS ``sqrt(c / P_inf)`` (Thm 3), OCS+ ``sqrt(c)`` (Alg. 4),
    the bounds ``TUNED`` to T."""
    floor = settings.gamma if settings.gamma_mode == FIXED else S / (T * K)
    c = _log_term(K, T, S) if K > 1 else 0.0
    eta = settings.eta
    tuned = settings.eta_mode == TUNED
    bound = settings.bound if settings.bound_mode == FIXED else T
    if rule == CLIPPED_HEDGE:
        if tuned:
            eta = math.sqrt(c / T) if c > 0 else 1.0
    elif rule == PCS:
        if tuned:
            b = bound
            eta = min(0.5, math.sqrt(c / b)) if (c > 0 and b > 0) else 0.5
    elif rule == OCS:
        if tuned:
            b = bound
            eta = math.sqrt(c / b) if (c > 0 and b > 0) else 1.0
    elif rule == OCS_PLUS:
        eta = math.sqrt(c) if c > 0 else 1.0
    return eta, floor


@njit(inline="always")
def _horizon(t, settings, T_prev):
    """Horizon of round t: the fixed one, or the doubling guess (never decreasing)."""
    if settings.horizon_mode == FIXED:
        return settings.horizon
    S = settings.S
    T = T_prev if T_prev >= S else S
    while T < t:
        T *= 2.0
    return T


@njit(inline="always")
def _log_floor(floor):
    """log of the clipped simplex's floor gamma (-inf: no floor)."""
    return math.log(floor) if floor > 0.0 else -math.inf


@njit(inline="always")
def _retune(rule, settings, K, t, T, eta, floor, log_floor):
    """The horizon of round t and the tuning ``(eta, floor, log floor)`` for it, recomputed when the
    horizon changes or before the first round (``eta`` still NaN), else unchanged (Hedge: no floor).
    Returns ``(T, eta, floor, log_floor)``."""
    T_new = _horizon(t, settings, T)
    if T_new == T and eta == eta:
        return T, eta, floor, log_floor
    if rule == HEDGE:
        return T_new, hedge_tuning(K, T_new, settings.eta_mode, settings.eta), 0.0, -math.inf
    eta_new, floor_new = clipped_tuning(rule, settings, K, T_new, settings.S)
    return T_new, eta_new, floor_new, _log_floor(floor_new)


@njit(inline="always")
def _play_sleeping(L, r, K, w, out, lrow, ecum):
    """``_play`` when some experts sleep: renormalise over the awake ones, charge the asleep ones
    the mixture's loss."""
    s = 0.0
    n_awake = 0
    for i in range(K):
        if L[r, i] == L[r, i]:
            s += w[i]
            n_awake += 1
    lh = 0.0
    lh_raw = 0.0
    for i in range(K):
        x = L[r, i]
        if x == x:
            pi = w[i] / s if s > 0.0 else 1.0 / n_awake
            out[r, i] = pi
            lh += pi * lrow[i]
            lh_raw += pi * x
            ecum[i] += x
        else:
            out[r, i] = 0.0
    for i in range(K):
        if L[r, i] != L[r, i]:
            lrow[i] = lh
    return lh, lh_raw


@njit(inline="always")
def _play(L, r, K, lo, inv_span, w, out, lrow, ecum):
    """Play ``w`` restricted to the awake experts at row ``r`` (``out[r]``: the weights played); fill
    the imputed scaled losses ``lrow``. Indexes ``L`` and ``out`` in place (no per-row views).

    Returns (l_hat scaled to [0, 1], l_hat in the user's units).
    """
    lh = 0.0
    lh_raw = 0.0
    asleep = False
    for i in range(K):
        x = L[r, i]
        asleep |= x != x
        out[r, i] = w[i]
        li = (x - lo) * inv_span
        lrow[i] = li
        lh += w[i] * li
        lh_raw += w[i] * x
    if asleep:
        lh, lh_raw = _play_sleeping(L, r, K, w, out, lrow, ecum)
    else:
        for i in range(K):
            ecum[i] += L[r, i]
    return lh, lh_raw


# --------------------------------------------------------------------------- Hedge, clipped
@njit(borrowed=True)
def exponential_pass(L, settings, state, out, buf):
    """Hedge (``settings.rule`` HEDGE, floor 0), ClippedHedge (CLIPPED_HEDGE) and PCS (PCS) passes.

    Hedge: ``w_{t+1} ∝ w_t exp(-eta l_t)`` (Alg. 1, eq. 6). ClippedHedge: the same step followed by
    the KL projection onto the clipped simplex (eq. 12, Thm 1). PCS: the Prod step
    ``w_t (1 - eta l_t)`` followed by the projection (eq. 14, Alg. 2, Thm 2). All in the log domain.
    ``state``: :class:`ExponentialState`.
    """
    n, K = L.shape
    rule, lo, inv_span, t0 = settings.rule, settings.lo, settings.inv_span, settings.t0
    w, logw, acc, ecum = state.w, state.log_w, state.cum_loss, state.expert_cum_losses
    lrow, lp, d, p, sb = buf.l_t, buf.lp, buf.d, buf.p, buf.mark
    T, eta, floor = state.T[0], state.eta[0], state.gamma[0]
    log_floor = _log_floor(floor)
    for r in range(n):
        T, eta, floor, log_floor = _retune(rule, settings, K, t0 + r + 1, T, eta, floor, log_floor)
        lh, lh_raw = _play(L, r, K, lo, inv_span, w, out, lrow, ecum)
        acc[0] += lh_raw
        if K == 1:
            continue
        m = -math.inf
        if rule == PCS:
            for i in range(K):
                v = logw[i] + math.log1p(-eta * lrow[i])
                lp[i] = v
                m = v if v > m else m
        else:
            for i in range(K):
                v = logw[i] - eta * lrow[i]
                lp[i] = v
                m = v if v > m else m
        # KL projection of exp(lp) onto the clipped simplex (the maximum m is taken above)
        clip_project_max(lp, m, K, floor, log_floor, w, logw, d, p, sb)
    state.T[0] = T
    state.eta[0] = eta
    state.gamma[0] = floor


@njit(borrowed=True)
def fixed_share_pass(L, settings, state, out, buf):
    """Fixed Share (Herbster & Warmuth 1998): Hedge step, then each expert gives a fraction alpha of
    its weight to the K - 1 others in equal parts: ``w[i] = (1 - alpha) v[i] + alpha / (K - 1) (1 - v[i])``.
    ``state``: :class:`FixedShareState`.
    """
    n, K = L.shape
    lo, inv_span, t0, S = settings.lo, settings.inv_span, settings.t0, settings.S
    w, logw, acc, ecum = state.w, state.log_w, state.cum_loss, state.expert_cum_losses
    lrow, lp, d, p = buf.l_t, buf.lp, buf.d, buf.p
    T = state.T[0]
    eta = state.eta[0]
    alpha = state.alpha[0]
    adaptive = settings.eta_mode == SCHEDULE
    decreasing = settings.alpha_mode == SCHEDULE
    gap = state.gap[0]  # adaptive eta: cumulative mixability gap (AdaHedge)
    log_k = math.log(K)
    for r in range(n):
        t = t0 + r + 1
        T_new = _horizon(t, settings, T)
        if T_new != T or eta != eta:
            T = T_new
            eta, alpha = fixed_share_tuning(K, T, S, settings.eta_mode, settings.eta, settings.alpha_mode,
                                            settings.alpha)
        if adaptive:  # AdaHedge: eta_t = log K / Delta_{t-1} (follow the leader while Delta = 0)
            eta = log_k / gap if gap > log_k / ETA_MAX else ETA_MAX
        if decreasing:  # alpha_t = 1 / (t + 1): a switch prior that needs no horizon
            alpha = 1.0 / (t + 1.0)
            if alpha > (K - 1.0) / K:
                alpha = (K - 1.0) / K
        lh, lh_raw = _play(L, r, K, lo, inv_span, w, out, lrow, ecum)
        acc[0] += lh_raw
        if K == 1:
            continue
        # Hedge step, normalised in the log domain
        m = -math.inf
        for i in range(K):
            v = logw[i] - eta * lrow[i]
            lp[i] = v
            if v > m:
                m = v
        s = shifted_exp_max(lp, m, K, d, p)
        lam = 1.0 / s
        log_lam = -math.log(s)
        if adaptive:  # mixability gap: played loss minus mix loss -log(sum_i w_i e^{-eta l_i}) / eta
            delta = lh + (m + math.log(s)) / eta
            if delta > 0.0:
                gap += delta
        for i in range(K):
            w[i] = lam * p[i]
            logw[i] = log_lam + d[i]
        if alpha > 0.0:
            b = alpha / (K - 1.0)
            a = 1.0 - alpha - b
            for i in range(K):
                wi = a * w[i] + b
                w[i] = wi
                logw[i] = math.log(wi)
    state.T[0] = T
    state.eta[0] = eta
    state.alpha[0] = alpha
    state.gap[0] = gap


# --------------------------------------------------------------------------- OCS, OCS+
@njit(borrowed=True)
def optimistic_pass(L, settings, state, out, halved, buf):
    """OCS (Alg. 3, eqs. 17-18) and, for ``settings.rule == OCS_PLUS``, OCS+ (Alg. 4, the doubling
    trick on eta). ``state``: :class:`OptimisticState`. ``halved[r]`` is set to 1 when the halving
    test fires at row r (a new epoch starts at the next round).
    """
    n, K = L.shape
    plus = settings.rule == OCS_PLUS
    lo, inv_span, t0, S = settings.lo, settings.inv_span, settings.t0, settings.S
    w, logwt, hint = state.w, state.log_aux_w, state.hint
    acc, ecum = state.cum_loss, state.expert_cum_losses
    lrow, lp, d, p, sb, scratch = buf.l_t, buf.lp, buf.d, buf.p, buf.mark, buf.aux
    T = state.T[0]
    eta = state.eta[0]
    floor = state.gamma[0]
    log_floor = _log_floor(floor)
    c = _log_term(K, T, S) if (K > 1 and T > 0) else 0.0
    for r in range(n):
        t = t0 + r + 1
        T_new = _horizon(t, settings, T)
        if T_new != T or eta != eta:
            T = T_new
            eta, floor = clipped_tuning(settings.rule, settings, K, T, S)
            log_floor = _log_floor(floor)
            c = _log_term(K, T, S) if K > 1 else 0.0
            if plus:
                eta = eta / 2.0 ** (state.epoch[0] - 1.0)
        lh, lh_raw = _play(L, r, K, lo, inv_span, w, out, lrow, ecum)
        acc[0] += lh_raw
        halved[r] = 0
        if K == 1:
            continue
        # (18) w~_{t+1} = proj(log w~_t - eta l_t), with the eta of the current epoch
        for i in range(K):
            lp[i] = logwt[i] - eta * lrow[i]
        clip_project(lp, K, floor, log_floor, scratch, logwt, d, p, sb)
        # path length of the epoch, then OCS+'s halving test
        dmax = 0.0
        for i in range(K):
            x = abs(lrow[i] - hint[i])
            if x > dmax:
                dmax = x
            hint[i] = lrow[i]
        if plus:
            state.path_length[0] += dmax * dmax
            # Alg. 4, line 10, literally: eta_m > sqrt(c / P_m) (P_m > 0 avoids the division by 0;
            # eta_m^2 P_m > c would misfire on ties such as P_1 = 1 through rounding)
            P_m = state.path_length[0]
            if P_m > 0.0 and eta > math.sqrt(c / P_m):
                eta = eta / 2.0
                state.epoch[0] += 1.0
                state.path_length[0] = 0.0
                halved[r] = 1
        # (17) for the next round: w_{t+1} = proj(log w~_{t+1} - eta l_t)
        for i in range(K):
            lp[i] = logwt[i] - eta * lrow[i]
        clip_project(lp, K, floor, log_floor, w, scratch, d, p, sb)
    state.T[0] = T
    state.eta[0] = eta
    state.gamma[0] = floor


# --------------------------------------------------------------------------- ML-Poly, BOA
@njit
def mlpoly_pass(L, settings, state, out, buf):
    """ML-Poly (Gaillard, Stoltz & van Erven 2014), as implemented in opera's ``MLpol``.

    ``w ∝ eta_i (R_i)_+`` with the cumulative regrets ``R_i = sum_s (l_hat_s - l_s[i])`` and the
    per-expert rates ``1 / eta_i = sum_s r_{s,i}^2 + B`` (``B`` the largest squared regret seen);
    uniform while no regret is positive. As in opera, the weights played are uniform over the awake
    experts when none of them has a positive regret (``_play``'s fallback). ``state``:
    :class:`MLPolyState`.
    """
    n, K = L.shape
    lo, inv_span = settings.lo, settings.inv_span
    w, R, inv_eta, acc, ecum = state.w, state.R, state.inv_eta, state.cum_loss, state.expert_cum_losses
    lrow = buf.l_t
    B = state.B[0]
    for r in range(n):
        lh, lh_raw = _play(L, r, K, lo, inv_span, w, out, lrow, ecum)
        acc[0] += lh_raw
        newB = B
        for i in range(K):
            ri = lh - lrow[i]
            R[i] += ri
            if ri * ri > newB:
                newB = ri * ri
        for i in range(K):
            ri = lh - lrow[i]
            inv_eta[i] += ri * ri + newB - B
        B = newB
        s = 0.0
        for i in range(K):
            v = R[i] / inv_eta[i] if R[i] > 0.0 else 0.0
            w[i] = v
            s += v
        if s > 0.0:
            for i in range(K):
                w[i] /= s
        else:
            for i in range(K):
                w[i] = 1.0 / K
    state.B[0] = B


ETA_CAP = math.exp(350.0)


@njit
def boa_pass(L, settings, state, out, buf):
    """BOA, Bernstein Online Aggregation with one learning rate per expert (Wintenberger 2017), as
    implemented in opera's ``BOA``.

    ``w_i ∝ prior_i exp(eta_i sum_s (r_{s,i} - eta_i r_{s,i}^2))`` with the instantaneous regrets
    ``r_{s,i} = l_hat_s - l_s[i]`` and ``eta_i = min(1 / (2 B_i), sqrt(log K / V_i))``
    (``B_i = max |r_{s,i}|``, ``V_i = sum r_{s,i}^2``). The second-order term of a round uses the rate
    computed after that round. ``state``: :class:`BOAState`.
    """
    n, K = L.shape
    lo, inv_span = settings.lo, settings.inv_span
    w, log_prior, Rreg, V, B, eta = state.w, state.log_prior, state.R, state.V, state.B, state.eta
    acc, ecum = state.cum_loss, state.expert_cum_losses
    lrow, lp, d, p = buf.l_t, buf.lp, buf.d, buf.p
    logK = math.log(K)
    for r in range(n):
        lh, lh_raw = _play(L, r, K, lo, inv_span, w, out, lrow, ecum)
        acc[0] += lh_raw
        if K == 1:
            continue
        for i in range(K):
            ri = lh - lrow[i]
            a = abs(ri)
            if a > B[i]:
                B[i] = a
            V[i] += ri * ri
            e = ETA_CAP
            if B[i] > 0.0:
                e = min(1.0 / (2.0 * B[i]), math.sqrt(logK / V[i]))
                e = min(e, ETA_CAP)
            eta[i] = e
            Rreg[i] += ri - e * ri * ri
        for i in range(K):
            lp[i] = log_prior[i] + eta[i] * Rreg[i]
        s = shifted_exp(lp, K, d, p)
        for i in range(K):
            w[i] = p[i] / s


# --------------------------------------------------------------------------- AdaHedge
@njit
def adahedge_pass(L, settings, state, out, buf):
    """AdaHedge (de Rooij, van Erven, Grünwald & Koolen 2014): Hedge on the cumulative losses with
    ``eta_t = log K / Delta_{t-1}``, ``Delta`` the cumulative mixability gap (``eta = inf``: uniform
    weights on the current leaders). ``state``: :class:`AdaHedgeState`.
    """
    n, K = L.shape
    lo, inv_span = settings.lo, settings.inv_span
    w, Lcum, Delta, acc, ecum = state.w, state.L, state.Delta, state.cum_loss, state.expert_cum_losses
    lrow, lp, d, p = buf.l_t, buf.lp, buf.d, buf.p
    logK = math.log(K) if K > 1 else 0.0
    for r in range(n):
        lh, lh_raw = _play(L, r, K, lo, inv_span, w, out, lrow, ecum)
        acc[0] += lh_raw
        if K == 1:
            continue
        D = Delta[0]
        # mix loss m_t = -(1/eta) log sum_i w_i exp(-eta l_i); eta = inf: min over the support of w
        if D <= 0.0:
            mix = math.inf
            for i in range(K):
                if w[i] > 0.0 and lrow[i] < mix:
                    mix = lrow[i]
        else:
            eta = logK / D
            lmin = math.inf
            for i in range(K):
                if w[i] > 0.0 and lrow[i] < lmin:
                    lmin = lrow[i]
            s = 0.0
            for i in range(K):
                if w[i] > 0.0:
                    s += w[i] * math.exp(-eta * (lrow[i] - lmin))
            mix = lmin - math.log(s) / eta
        h = 0.0
        for i in range(K):
            h += w[i] * lrow[i]
        delta = h - mix
        if delta > 0.0:
            Delta[0] = D + delta
        for i in range(K):
            Lcum[i] += lrow[i]
        D = Delta[0]
        if D <= 0.0:
            lmin = math.inf
            for i in range(K):
                if Lcum[i] < lmin:
                    lmin = Lcum[i]
            cnt = 0
            for i in range(K):
                if Lcum[i] == lmin:
                    cnt += 1
            for i in range(K):
                w[i] = 1.0 / cnt if Lcum[i] == lmin else 0.0
        else:
            eta = logK / D
            for i in range(K):
                lp[i] = -eta * Lcum[i]
            s = shifted_exp(lp, K, d, p)
            for i in range(K):
                w[i] = p[i] / s
