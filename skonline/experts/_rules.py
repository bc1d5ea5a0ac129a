"""Expert-aggregation rules as online estimators fed loss matrices.

Each rule is an estimator whose "samples" are rounds and whose "features" are the K experts:
``partial_fit(L)`` takes a loss matrix ``L`` of shape (n_rounds, K) (row t = the losses of the K
experts at round t) and runs the prediction-with-expert-advice protocol over its rows in one
compiled pass: play ``weights_``, observe the row, suffer ``<weights_, row>``, update.
``partial_fit_predict(L)`` returns the weights played at each round. ``predict(P)`` aggregates
expert *predictions* ``P`` (n, K) with the current weights.
"""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import Chunk, OnlineMixin, reads_state, state_scalar
from ..exceptions import HorizonExceededWarning, RenamedParameterWarning, TheoremConditionWarning
from ..utils._deprecation import param, renamed_constraint
from ..utils._warnings import warn
from ..utils.validation import is_stream_chunk, readonly, validate_X_predict
from . import _rules_core as core


def _validate_loss_range(loss_bound, name="loss_bound"):
    """The interval ``(low, high)`` of the losses: a bound ``B`` (losses in [0, B]) or a pair."""
    if isinstance(loss_bound, Real) and not isinstance(loss_bound, bool):
        lo, hi = 0.0, float(loss_bound)
    else:
        try:
            lo, hi = (float(v) for v in loss_bound)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must be a bound B > 0 or a pair (low, high) of numbers; got {loss_bound!r}."
            ) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"{name} must be finite with low < high (B > 0); got {loss_bound!r}.")
    return lo, hi


def _check_loss_matrix(est, X, reset, allow_nan=True):
    """Validate a chunk of rounds; return a C-contiguous float64 (n, K) array. No state change."""
    if is_stream_chunk(est, X, reset=reset):
        if X.shape[1] != est.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(est).__name__} is expecting "
                f"{est.n_features_in_} features as input (one loss per expert; K is fixed at the "
                "first call)."
            )
        if X.shape[0] == 0:
            raise ValueError(
                f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required by "
                f"{type(est).__name__}."
            )
        L = X
    else:
        L = validate_data(
            est, X, reset=reset, dtype=np.float64, order="C",
            ensure_all_finite="allow-nan" if allow_nan else True,
        )
    if np.isinf(L).any():
        row = int(np.flatnonzero(np.isinf(L).any(axis=1))[0])
        raise ValueError(f"Row {row} of the loss matrix contains an infinite loss.")
    return readonly(L)


def _check_range(est, L, lo, hi):
    with np.errstate(invalid="ignore"):
        bad = (L < lo) | (L > hi)
    if bad.any():
        row, col = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"Loss {L[row, col]!r} of expert {col} at row {row} is outside the declared range "
            f"({lo:g}, {hi:g}). {type(est).__name__} needs losses in the declared range (set loss_bound to the "
            "true bounds of the losses); the chunk was rejected and the estimator is unchanged."
        )
    asleep = np.isnan(L)
    if asleep.any():
        all_asleep = asleep.all(axis=1)
        if all_asleep.any():
            row = int(np.flatnonzero(all_asleep)[0])
            raise ValueError(
                f"Row {row}: every expert is asleep (all losses are NaN); at least one expert must "
                "be awake in each round."
            )


class _BaseRule(OnlineMixin, BaseEstimator):
    """Shared machinery: validation of loss matrices, sleeping experts, ``predict(P)``."""


    #: retired parameter names (one release): old -> new (skonline.utils._deprecation)
    _renamed_params = {"loss_range": "loss_bound"}
    _parameter_constraints = {
        "loss_bound": [Interval(Real, 0, None, closed="neither"), tuple, list],
        "loss_range": renamed_constraint([tuple, list]),
        "verbose": ["verbose"],
    }

    def _check_params(self):
        _validate_loss_range(param(self, "loss_bound"))
        horizon = getattr(self, "horizon", None)
        S = getattr(self, "n_segments", 1)
        if horizon is not None and S > horizon:
            raise ValueError(
                f"n_segments={S} exceeds horizon={horizon}: the clipped simplex needs S <= T."
            )

    # ------------------------------------------------------------ contract hooks
    def _validate_chunk(self, X, y, *, reset, from_fit):
        L = _check_loss_matrix(self, X, reset, allow_nan=True)
        lo, hi = _validate_loss_range(param(self, "loss_bound"))
        _check_range(self, L, lo, hi)
        return Chunk(L.shape[0], X=L)  # a row: the losses of the experts

    def _scaling(self):
        lo, hi = _validate_loss_range(param(self, "loss_bound"))
        return lo, 1.0 / (hi - lo)

    def _allocate(self, chunk):
        K = chunk.X.shape[1]
        self.weights_ = np.full(K, 1.0 / K)
        self.expert_cumulative_losses_ = np.zeros(K)
        self._allocate_rule(K)

    def _allocate_rule(self, K):  # pragma: no cover - per rule
        raise NotImplementedError

    def _learn(self, chunk):
        L = chunk.X
        horizon = getattr(self, "horizon", None)
        if horizon is not None and self.n_samples_seen_ + L.shape[0] > horizon:
            warn(
                f"{type(self).__name__}: more rounds than horizon={horizon}; the rule keeps running "
                "with the parameters tuned for the horizon, and its guarantee covers only the first "
                "horizon rounds.",
                HorizonExceededWarning,
            )
        out = np.empty(L.shape)
        cum_loss = np.array([self.cumulative_loss_])
        self._run(L, out, cum_loss)
        self.cumulative_loss_ = float(cum_loss[0])
        return out

    def _run(self, L, out, cum_loss):  # pragma: no cover - per rule
        """Run the rule's compiled pass over ``L`` (its records from ``_settings`` and ``_state``)."""
        raise NotImplementedError

    def _state(self, cum_loss):  # pragma: no cover - per rule
        """The rule's state record (``_rules_core.*State``) over its state attributes, which the pass
        updates in place; ``cum_loss``: a 1-element array holding ``cumulative_loss_``."""
        raise NotImplementedError

    #: code of the rule in the compiled passes (``_rules_core``)
    _rule_code = None
    #: the parameter bounding the second-order quantity the tuning of eta uses (PCS, OCS)
    _bound_param = None

    def _settings(self):
        """The :class:`~skonline.experts._rules_core.RuleSettings` of the next chunk."""
        lo, inv_span = self._scaling()
        return core.RuleSettings(
            rule=self._rule_code,
            lo=lo,
            inv_span=inv_span,
            t0=int(self.n_samples_seen_),
            S=float(getattr(self, "n_segments", 1)),
            **core.tuning_settings(
                horizon=getattr(self, "horizon", None), eta=getattr(self, "eta", None),
                alpha=param(self, "share_rate") if hasattr(self, "share_rate") else None,
                bound=getattr(self, self._bound_param, None) if self._bound_param else None,
                gamma=getattr(self, "min_weight", None),
            ),
        )

    def _learn_trusted(self, L):
        """Learn a loss matrix built by a trusted internal caller (the online ensembles): losses in
        ``loss_bound`` or NaN, C-contiguous float64, at least one awake expert per row. Skips the
        validation (the caller runs on a working copy of the rule, discarded on error)."""
        self._validate_params_once()
        chunk = Chunk(L.shape[0], X=L)  # a row: the losses of the experts
        if not self._is_initialized():
            self.n_features_in_ = L.shape[1]
            self.n_samples_seen_ = 0
            self.cumulative_loss_ = 0.0
            self._resolve_settings(chunk)
            self._allocate(chunk)
        out = self._learn(chunk)
        self.n_samples_seen_ += L.shape[0]
        return out

    def _response(self, raw, method):
        if method == "predict":
            return raw
        raise ValueError(method)

    # ------------------------------------------------------------ public API
    def partial_fit_predict(self, X, y=None):
        """Learn the rounds of ``X`` and return the weights played at each of them.

        Parameters
        ----------
        X : array-like of shape (n_rounds, K)
            Loss matrix (NaN: asleep expert).
        y : None
            Ignored.

        Returns
        -------
        weights : ndarray of shape (n_rounds, K)
            Row t is the distribution played at round t, before its losses were revealed (zero for
            the experts asleep that round).
        """
        return self._partial_fit_response(X, y, "predict")

    @reads_state
    def predict(self, X):
        """Aggregate expert predictions with the current weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, K)
            Predictions of the K experts (NaN: the expert abstains; the weights are renormalised over
            the others).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``sum_i w_i X[:, i] / sum_i w_i`` over the non-NaN entries of each row.
        """
        check_is_fitted(self, "weights_")
        P = validate_X_predict(self, X, dtype=np.float64, ensure_all_finite="allow-nan")
        if np.isinf(P).any():
            raise ValueError("Expert predictions must not be infinite.")
        awake = ~np.isnan(P)
        W = np.where(awake, self.weights_[None, :], 0.0)
        s = W.sum(axis=1)
        n_awake = awake.sum(axis=1)
        if np.any(n_awake == 0):
            raise ValueError("Every row needs at least one non-NaN expert prediction.")
        W = np.where(s[:, None] > 0, W / np.where(s > 0, s, 1.0)[:, None], awake / n_awake[:, None])
        return np.sum(np.where(awake, P, 0.0) * W, axis=1)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.target_tags.required = False
        return tags

class _TunedRule(_BaseRule):
    """Rules whose tuning depends on (T, S, K). The tuning of the last round is state, 1-element
    arrays the pass updates: ``_horizon_`` (T, or the doubling guess T_k) and the rule's parameters
    (``_eta_`` and the floor ``_min_weight_``; Fixed Share: ``_eta_`` and ``_alpha_``)."""

    #: the tuned parameters, NaN until the first round sets them (so the check of the state for
    #: non-finite values skips them)
    _nonfinite_state_ok = ("_eta_", "_min_weight_")

    def _allocate_rule(self, K):
        self._log_weights_ = np.full(K, -math.log(K))
        self._horizon_ = np.zeros(1)
        for name in self._nonfinite_state_ok:
            setattr(self, name, np.full(1, math.nan))
        floor = getattr(self, "min_weight", "auto")
        if floor != "auto" and K * floor > 1.0 + 1e-12:
            raise ValueError(
                f"min_weight={floor} is infeasible for K={K} experts: K * min_weight must be <= 1."
            )

    def _state(self, cum_loss):
        return core.ExponentialState(
            w=self.weights_, log_w=self._log_weights_, T=self._horizon_, eta=self._eta_,
            gamma=self._min_weight_, cum_loss=cum_loss, expert_cum_losses=self.expert_cumulative_losses_,
        )

    def _run(self, L, out, cum_loss):
        core.exponential_pass(L, self._settings(), self._state(cum_loss), out, core.round_buffers(L.shape[1]))

    eta_ = state_scalar("_eta_", float, "Learning rate of the last round (the tuned value when ``eta='auto'``).")

    horizon_ = state_scalar(
        "_horizon_", float, "Horizon used by the tuning at the last round (T, or the current doubling guess)."
    )


class Hedge(_TunedRule):
    """Exponentially weighted average forecaster (Hedge, multiplicative weights).

    ``w_{t+1}[i] ∝ w_t[i] exp(-eta l_t[i])`` from uniform weights: the paper's Algorithm 1 (online
    mirror descent with the negative entropy on the simplex, eq. 6). Static regret
    ``<= log K / eta + eta T / 8`` for losses in [0, 1]; no tracking guarantee (an expert whose weight
    collapsed recovers slowly). Equals river's ``EWARegressor`` update on the same losses.

    Input: a loss matrix ``L`` of shape (n_rounds, K), one row per round, one column per expert, in
    ``loss_bound`` (mapped affinely to [0, 1] internally). A NaN loss means the expert is *asleep*
    that round: the weights played are renormalised over the awake experts and an asleep expert is
    charged the mixture's loss (its regret that round is zero), as in opera. ``fit(L)`` restarts;
    ``partial_fit(L)`` continues the stream; both give the same result for any chunking.

    Parameters
    ----------
    eta : float or 'auto', default='auto'
        Learning rate. ``'auto'``: ``sqrt(8 log K / T)``, the minimax tuning
        (regret ``<= sqrt(T log K / 2)``).
    horizon : int or None, default=None
        The number of rounds T, used by the prescribed tuning. ``None``: horizon-free doubling
        schedule (at round t the tuning uses ``T_k = S 2^k``, the smallest such value >= t, and the
        state carries over when T_k doubles; this costs a log T factor in the bounds). With an int,
        the paper's algorithm exactly; beyond ``horizon`` rounds it keeps running with the same
        parameters and warns.
    loss_bound : float or tuple (low, high), default=1.0
        The declared range of the losses: a bound B (losses in [0, B]) or a pair (low, high).
        Losses outside it are rejected with a ``ValueError`` before any state change.
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.
    loss_range : tuple (low, high), default='deprecated'
        Deprecated alias of ``loss_bound`` (renamed in 0.1; ``loss_range`` is removed in 0.2).

    Attributes
    ----------
    weights_ : ndarray of shape (K,)
        The distribution to be played at the next round (all experts awake).
    cumulative_loss_ : float
        Loss of the mixture, sum over rounds of ``<w_t, l_t>`` (awake experts; user units).
    expert_cumulative_losses_ : ndarray of shape (K,)
        Each expert's observed cumulative loss (rounds where it was awake).
    n_samples_seen_ : int
        Rounds processed (the paper's t).
    n_features_in_ : int
        Number of experts K.
    eta_ : float
        Learning rate of the last round.
    horizon_ : float
        Horizon T the tuning used at the last round (``horizon``, or the current doubling guess).

    References
    ----------
    Freund & Schapire (1997), JCSS 55(1); Lu & Zhang, "Adaptive and Efficient Algorithms for
    Tracking the Best Expert", arXiv 2019, Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import Hedge
    >>> L = np.tile([0.9, 0.1, 0.5], (200, 1))
    >>> rule = Hedge().fit(L)
    >>> int(np.argmax(rule.weights_))
    1
    >>> W = Hedge().partial_fit_predict(L[:3])   # weights played at each round
    >>> W[0].tolist()
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    """

    _rule_code = core.HEDGE
    _parameter_constraints = {
        **_BaseRule._parameter_constraints,
        "eta": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "horizon": [None, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, eta="auto", *, horizon=None, loss_bound=1.0, verbose=0, loss_range="deprecated"):
        self.eta = eta
        self.horizon = horizon
        self.loss_bound = loss_bound
        self.loss_range = loss_range
        self.verbose = verbose


class FixedShare(_TunedRule):
    """Fixed Share: Hedge with weight sharing, for tracking the best expert.

    After the Hedge step ``v ∝ w_t exp(-eta l_t)`` every expert gives a fraction ``alpha`` of its
    weight to the K - 1 others in equal parts (Herbster & Warmuth 1998; the parametrisation used by
    the paper, Sec. 2.2): ``w_{t+1}[i] = (1 - alpha) v[i] + alpha (1 - v[i]) / (K - 1)``. It is the
    Bayesian mixture over switching sequences with a switch probability ``alpha``, so against any
    sequence with m switches the tracking regret is at most
    ``(log K + m log((K - 1) / alpha) + (T - 1 - m) log(1 / (1 - alpha))) / eta + eta T / 8``.

    Input: a loss matrix ``L`` of shape (n_rounds, K), one row per round, one column per expert, in
    ``loss_bound`` (mapped affinely to [0, 1] internally). A NaN loss means the expert is *asleep*
    that round: the weights played are renormalised over the awake experts and an asleep expert is
    charged the mixture's loss (its regret that round is zero), as in opera. ``fit(L)`` restarts;
    ``partial_fit(L)`` continues the stream; both give the same result for any chunking.

    Parameters
    ----------
    eta : float, 'auto' or 'adaptive', default='auto'
        Learning rate. ``'auto'`` minimises the bound above for S - 1 switches:
        ``sqrt(8 C / T)`` with C the bracket at m = S - 1 (a worst-case tuning that shrinks with
        the horizon). ``'adaptive'``: AdaHedge's rate ``eta_t = log K / Delta_{t-1}``, with
        ``Delta`` the cumulative mixability gap (played loss minus mix loss; de Rooij, van Erven,
        Grünwald & Koolen 2014): it adapts to the observed losses, stays large while the experts'
        losses are well separated (the regime where tracking pays), needs no horizon, and follows
        the leader while ``Delta = 0``.
    share_rate : float in [0, (K-1)/K], 'auto' or 'decreasing', default='auto'
        Sharing rate alpha. ``'auto'``: ``S / T`` (at most (K-1)/K), the same reserved mass as the
        clipped simplex of :class:`ClippedHedge`; it keeps tracking when ``n_segments=1``.
        ``'decreasing'``: ``1 / (t + 1)`` at round t, a switch prior that needs no horizon
        (tracking regret of order (m + 1) log K + m log T for m switches without knowing T;
        Koolen & de Rooij 2013).
        ``FixedShare(eta='adaptive', share_rate='decreasing')`` is the online ensembles' default rule.
    n_segments : int, default=1
        The number S of segments of the comparator (S - 1 switches).
    horizon : int or None, default=None
        The number of rounds T, used by the prescribed tuning. ``None``: horizon-free doubling
        schedule (at round t the tuning uses ``T_k = S 2^k``, the smallest such value >= t, and the
        state carries over when T_k doubles; this costs a log T factor in the bounds). With an int,
        the paper's algorithm exactly; beyond ``horizon`` rounds it keeps running with the same
        parameters and warns.
    loss_bound : float or tuple (low, high), default=1.0
        The declared range of the losses: a bound B (losses in [0, B]) or a pair (low, high).
        Losses outside it are rejected with a ``ValueError`` before any state change.
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.
    alpha : float, 'auto' or 'decreasing', default='deprecated'
        Deprecated alias of ``share_rate`` (renamed in 0.1; ``alpha`` is removed in 0.2).
    loss_range : tuple (low, high), default='deprecated'
        Deprecated alias of ``loss_bound`` (renamed in 0.1; ``loss_range`` is removed in 0.2).

    Attributes
    ----------
    weights_ : ndarray of shape (K,)
        The distribution to be played at the next round (all experts awake).
    cumulative_loss_ : float
        Loss of the mixture, sum over rounds of ``<w_t, l_t>`` (awake experts; user units).
    expert_cumulative_losses_ : ndarray of shape (K,)
        Each expert's observed cumulative loss (rounds where it was awake).
    n_samples_seen_ : int
        Rounds processed (the paper's t).
    n_features_in_ : int
        Number of experts K.
    eta_ : float
        Learning rate of the last round.
    horizon_ : float
        Horizon T the tuning used at the last round (``horizon``, or the current doubling guess).
    share_rate_ : float
        Sharing rate of the last round (``alpha_`` before 0.1, still readable until 0.2).

    References
    ----------
    Herbster & Warmuth, "Tracking the best expert", Machine Learning 32 (1998);
    Cesa-Bianchi & Lugosi, Prediction, Learning, and Games (2006), Sec. 5.2.
    de Rooij, van Erven, Grünwald & Koolen, "Follow the leader if you can, hedge if you must", JMLR 15
    (2014) (AdaHedge); Koolen & de Rooij, "Universal codes from switching strategies", IEEE Trans.
    Inf. Theory 59 (2013).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import FixedShare
    >>> L = np.vstack([np.tile([0.1, 0.9], (300, 1)), np.tile([0.9, 0.1], (300, 1))])
    >>> rule = FixedShare(n_segments=2).fit(L)
    >>> int(np.argmax(rule.weights_))   # follows the switch
    1
    """


    _rule_code = core.FIXED_SHARE
    _nonfinite_state_ok = ("_eta_", "_alpha_")  # no floor; the sharing rate
    _parameter_constraints = {
        **_BaseRule._parameter_constraints,
        "eta": [StrOptions({"auto", "adaptive"}), Interval(Real, 0, None, closed="neither")],
        "share_rate": [StrOptions({"auto", "decreasing"}), Interval(Real, 0, 1, closed="left")],
        "alpha": renamed_constraint([StrOptions({"auto", "decreasing"}), Interval(Real, 0, 1, closed="left")]),
        "n_segments": [Interval(Integral, 1, None, closed="left")],
        "horizon": [None, Interval(Integral, 1, None, closed="left")],
    }

    #: retired parameter names (one release): old -> new (skonline.utils._deprecation)
    _renamed_params = {"alpha": "share_rate", "loss_range": "loss_bound"}

    def __init__(self, eta="auto", *, share_rate="auto", n_segments=1, horizon=None, loss_bound=1.0, verbose=0,
                 alpha="deprecated", loss_range="deprecated"):
        self.eta = eta
        self.share_rate = share_rate
        self.alpha = alpha
        self.n_segments = n_segments
        self.horizon = horizon
        self.loss_bound = loss_bound
        self.loss_range = loss_range
        self.verbose = verbose

    def _allocate_rule(self, K):
        super()._allocate_rule(K)
        self._mixability_gap_ = np.zeros(1)  # eta='adaptive': Delta of AdaHedge's rate
        share_rate = param(self, "share_rate")
        if not isinstance(share_rate, str) and K > 1 and share_rate > (K - 1.0) / K + 1e-12:
            raise ValueError(f"share_rate={share_rate} exceeds (K-1)/K = {(K - 1) / K:g} for K={K} experts.")

    share_rate_ = state_scalar("_alpha_", float, "Sharing rate of the last round.")

    @property
    def alpha_(self):
        """Retired name of :attr:`share_rate_` (renamed with the parameter; removed in 0.2)."""
        warn("`alpha_` was renamed `share_rate_` in 0.1 and will be removed in 0.2.", RenamedParameterWarning)
        return self.share_rate_

    def _state(self, cum_loss):
        return core.FixedShareState(
            w=self.weights_, log_w=self._log_weights_, T=self._horizon_, eta=self._eta_, alpha=self._alpha_,
            gap=self._mixability_gap_, cum_loss=cum_loss, expert_cum_losses=self.expert_cumulative_losses_,
        )

    def _run(self, L, out, cum_loss):
        core.fixed_share_pass(L, self._settings(), self._state(cum_loss), out, core.round_buffers(L.shape[1]))


class _ClippedRule(_TunedRule):
    _parameter_constraints = {
        **_BaseRule._parameter_constraints,
        "n_segments": [Interval(Integral, 1, None, closed="left")],
        "horizon": [None, Interval(Integral, 1, None, closed="left")],
        "min_weight": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="both")],
    }

    min_weight_ = state_scalar("_min_weight_", float, "Floor gamma of the clipped simplex at the last round.")


class ClippedHedge(_ClippedRule):
    """Hedge on the clipped simplex (projection update) for tracking the best expert.

    The Hedge step followed by the KL projection onto the clipped simplex
    ``{w in simplex : w[i] >= gamma}``, ``gamma = S / (T K)``: Algorithm 1 with step 5 replaced by
    eq. (12) of Lu & Zhang. By their Proposition 1 it is Herbster & Warmuth's projection update.
    Theorem 1: against every sequence of experts with at most S - 1 switches,
    ``TR(T, S) <= eta T + S log(K T / S) / eta + S``. The projection is exact, O(K log K).

    Input: a loss matrix ``L`` of shape (n_rounds, K), one row per round, one column per expert, in
    ``loss_bound`` (mapped affinely to [0, 1] internally). A NaN loss means the expert is *asleep*
    that round: the weights played are renormalised over the awake experts and an asleep expert is
    charged the mixture's loss (its regret that round is zero), as in opera. ``fit(L)`` restarts;
    ``partial_fit(L)`` continues the stream; both give the same result for any chunking.

    Parameters
    ----------
    eta : float or 'auto', default='auto'
        Learning rate. ``'auto'``: ``sqrt(S log(K T / S) / T)`` (Theorem 1), giving
        ``TR <= 2 sqrt(S T log(K T / S)) + S``.
    n_segments : int, default=1
        The number S of segments of the comparator (S - 1 switches). It sets the floor
        ``gamma = S / (T K)`` and the tuning constant ``c = S log(K T / S)``. ``n_segments=1`` still
        tracks: the per-interval bounds hold with ``log(K T)`` in place of ``log(K T / S)``.
    min_weight : float or 'auto', default='auto'
        The floor gamma of the clipped simplex ``{w in simplex : w[i] >= gamma}`` (eq. 11);
        ``'auto'``: ``S / (T K)``. Needs ``K * gamma <= 1``.
    horizon : int or None, default=None
        The number of rounds T, used by the prescribed tuning. ``None``: horizon-free doubling
        schedule (at round t the tuning uses ``T_k = S 2^k``, the smallest such value >= t, and the
        state carries over when T_k doubles; this costs a log T factor in the bounds). With an int,
        the paper's algorithm exactly; beyond ``horizon`` rounds it keeps running with the same
        parameters and warns.
    loss_bound : float or tuple (low, high), default=1.0
        The declared range of the losses: a bound B (losses in [0, B]) or a pair (low, high).
        Losses outside it are rejected with a ``ValueError`` before any state change.
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.
    loss_range : tuple (low, high), default='deprecated'
        Deprecated alias of ``loss_bound`` (renamed in 0.1; ``loss_range`` is removed in 0.2).

    Attributes
    ----------
    weights_ : ndarray of shape (K,)
        The distribution to be played at the next round (all experts awake).
    cumulative_loss_ : float
        Loss of the mixture, sum over rounds of ``<w_t, l_t>`` (awake experts; user units).
    expert_cumulative_losses_ : ndarray of shape (K,)
        Each expert's observed cumulative loss (rounds where it was awake).
    n_samples_seen_ : int
        Rounds processed (the paper's t).
    n_features_in_ : int
        Number of experts K.
    eta_ : float
        Learning rate of the last round.
    horizon_ : float
        Horizon T the tuning used at the last round (``horizon``, or the current doubling guess).
    min_weight_ : float
        Floor of the last round.

    References
    ----------
    Lu & Zhang, "Adaptive and Efficient Algorithms for Tracking the Best Expert", arXiv 2019,
    Theorem 1 and Proposition 1; Herbster & Warmuth, "Tracking the best linear
    predictor", JMLR 1 (2001).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import ClippedHedge
    >>> L = np.vstack([np.tile([0.1, 0.9], (300, 1)), np.tile([0.9, 0.1], (300, 1))])
    >>> rule = ClippedHedge(n_segments=2, horizon=600).fit(L)
    >>> int(np.argmax(rule.weights_)), bool(rule.weights_.min() >= rule.min_weight_)
    (1, True)
    """

    _rule_code = core.CLIPPED_HEDGE
    _parameter_constraints = {
        **_ClippedRule._parameter_constraints,
        "eta": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, eta="auto", *, n_segments=1, horizon=None, min_weight="auto", loss_bound=1.0, verbose=0,
                 loss_range="deprecated"):
        self.eta = eta
        self.n_segments = n_segments
        self.horizon = horizon
        self.min_weight = min_weight
        self.loss_bound = loss_bound
        self.loss_range = loss_range
        self.verbose = verbose


class PCS(_ClippedRule):
    """Prod on the clipped simplex (PCS): second-order bound for tracking the best expert.

    The Prod step ``w_t[i] (1 - eta l_t[i])`` followed by the KL projection onto the clipped simplex
    (Lu & Zhang, Algorithm 2, eq. 14). Theorem 2: for ``eta <= 1/2``, against every sequence of
    experts ``E_1..E_T`` with at most S - 1 switches,
    ``TR(T, S) <= eta L_2 + S log(K T / S) / eta + 3 S / 2`` with ``L_2 = sum_t l_t[E_t]^2``: small
    when the tracked experts have small losses.

    Input: a loss matrix ``L`` of shape (n_rounds, K), one row per round, one column per expert, in
    ``loss_bound`` (mapped affinely to [0, 1] internally). A NaN loss means the expert is *asleep*
    that round: the weights played are renormalised over the awake experts and an asleep expert is
    charged the mixture's loss (its regret that round is zero), as in opera. ``fit(L)`` restarts;
    ``partial_fit(L)`` continues the stream; both give the same result for any chunking.

    Parameters
    ----------
    eta : float in (0, 1) or 'auto', default='auto'
        Learning rate. ``'auto'``: ``min(1/2, sqrt(S log(K T / S) / l2_bound))``, the paper's tuning
        with ``l2_bound`` for ``L_2``. Values above 1/2 are allowed with a warning (Theorem 2 needs
        ``eta <= 1/2``); ``eta >= 1`` would make ``1 - eta l`` vanish and is rejected.
    l2_bound : float or None, default=None
        An upper bound on ``L_2`` used by ``eta='auto'``; ``None``: the worst case ``L_2 <= T``. A
        parameter-free second-order tracking bound is an open problem (paper, Sec. 3.3).
    n_segments : int, default=1
        The number S of segments of the comparator (S - 1 switches). It sets the floor
        ``gamma = S / (T K)`` and the tuning constant ``c = S log(K T / S)``. ``n_segments=1`` still
        tracks: the per-interval bounds hold with ``log(K T)`` in place of ``log(K T / S)``.
    min_weight : float or 'auto', default='auto'
        The floor gamma of the clipped simplex ``{w in simplex : w[i] >= gamma}`` (eq. 11);
        ``'auto'``: ``S / (T K)``. Needs ``K * gamma <= 1``.
    horizon : int or None, default=None
        The number of rounds T, used by the prescribed tuning. ``None``: horizon-free doubling
        schedule (at round t the tuning uses ``T_k = S 2^k``, the smallest such value >= t, and the
        state carries over when T_k doubles; this costs a log T factor in the bounds). With an int,
        the paper's algorithm exactly; beyond ``horizon`` rounds it keeps running with the same
        parameters and warns.
    loss_bound : float or tuple (low, high), default=1.0
        The declared range of the losses: a bound B (losses in [0, B]) or a pair (low, high).
        Losses outside it are rejected with a ``ValueError`` before any state change.
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.
    loss_range : tuple (low, high), default='deprecated'
        Deprecated alias of ``loss_bound`` (renamed in 0.1; ``loss_range`` is removed in 0.2).

    Attributes
    ----------
    weights_ : ndarray of shape (K,)
        The distribution to be played at the next round (all experts awake).
    cumulative_loss_ : float
        Loss of the mixture, sum over rounds of ``<w_t, l_t>`` (awake experts; user units).
    expert_cumulative_losses_ : ndarray of shape (K,)
        Each expert's observed cumulative loss (rounds where it was awake).
    n_samples_seen_ : int
        Rounds processed (the paper's t).
    n_features_in_ : int
        Number of experts K.
    eta_ : float
        Learning rate of the last round.
    horizon_ : float
        Horizon T the tuning used at the last round (``horizon``, or the current doubling guess).
    min_weight_ : float
        Floor of the last round.

    References
    ----------
    Lu & Zhang, "Adaptive and Efficient Algorithms for Tracking the Best Expert", arXiv 2019,
    Algorithm 2 and Theorem 2; Cesa-Bianchi, Mansour & Stoltz, "Improved second-order
    bounds for prediction with expert advice", COLT 2005 (Prod).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import PCS
    >>> rng = np.random.default_rng(0)
    >>> L = rng.uniform(0.4, 0.6, size=(1000, 4))
    >>> L[:500, 0] = 0.0                          # expert 0 perfect, then expert 3
    >>> L[500:, 3] = 0.0
    >>> rule = PCS(eta=0.5, n_segments=2, horizon=1000).fit(L)
    >>> int(np.argmax(rule.weights_))
    3
    """

    _rule_code = core.PCS
    _bound_param = "l2_bound"
    _parameter_constraints = {
        **_ClippedRule._parameter_constraints,
        "eta": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="neither")],
        "l2_bound": [None, Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, eta="auto", *, l2_bound=None, n_segments=1, horizon=None, min_weight="auto",
                 loss_bound=1.0, verbose=0, loss_range="deprecated"):
        self.eta = eta
        self.l2_bound = l2_bound
        self.n_segments = n_segments
        self.horizon = horizon
        self.min_weight = min_weight
        self.loss_bound = loss_bound
        self.loss_range = loss_range
        self.verbose = verbose

    def _check_params(self):
        super()._check_params()
        if self.eta != "auto" and self.eta > 0.5:
            warn(
                f"PCS with eta={self.eta} > 1/2: Theorem 2 needs eta <= 1/2, so its bound does not "
                "apply (the algorithm still runs: 1 - eta * loss > 0).",
                TheoremConditionWarning,
            )


class _OptimisticRule(_ClippedRule):
    _rule_code = core.OCS

    def _allocate_rule(self, K):
        super()._allocate_rule(K)
        self._hint_ = np.zeros(K)  # l_0 = 0
        self._epoch_ = np.ones(1)  # OCS+: epoch m, from 1
        self._path_length_ = np.zeros(1)  # OCS+: path length P_m of the epoch so far
        del self._log_weights_
        self._log_aux_weights_ = np.full(K, -math.log(K))

    def _state(self, cum_loss):
        return core.OptimisticState(
            w=self.weights_, log_aux_w=self._log_aux_weights_, hint=self._hint_, T=self._horizon_, eta=self._eta_,
            gamma=self._min_weight_, epoch=self._epoch_, path_length=self._path_length_, cum_loss=cum_loss,
            expert_cum_losses=self.expert_cumulative_losses_,
        )

    def _run(self, L, out, cum_loss):
        halved = np.zeros(L.shape[0], dtype=np.int8)
        core.optimistic_pass(
            L, self._settings(), self._state(cum_loss), out, halved, core.round_buffers(L.shape[1])
        )
        return halved


class OCS(_OptimisticRule):
    """Optimistic mirror descent on the clipped simplex (OCS): path-length tracking bound.

    OCS keeps an auxiliary sequence ``w~`` and uses the last loss vector as an optimistic guess of
    the next one (optimistic mirror descent, Chiang et al. 2012; Rakhlin & Sridharan 2013), both steps
    on the clipped simplex (Lu & Zhang, Algorithm 3):

    * ``w_t = argmin_{w in clipped simplex} <w, eta l_{t-1}> + KL(w || w~_t)``  (eq. 17)
    * ``w~_{t+1} = argmin_{w in clipped simplex} <w, eta l_t> + KL(w || w~_t)``  (eq. 18)

    with ``l_0 = 0``. Theorem 3: ``TR(T, S) <= eta P_inf + S log(K T / S) / eta + S`` for every
    ``eta > 0``, with the path length ``P_inf = sum_t ||l_t - l_{t-1}||_inf^2``: small when the losses
    move slowly, however often the best expert changes.

    Input: a loss matrix ``L`` of shape (n_rounds, K), one row per round, one column per expert, in
    ``loss_bound`` (mapped affinely to [0, 1] internally). A NaN loss means the expert is *asleep*
    that round: the weights played are renormalised over the awake experts and an asleep expert is
    charged the mixture's loss (its regret that round is zero), as in opera. ``fit(L)`` restarts;
    ``partial_fit(L)`` continues the stream; both give the same result for any chunking.

    Parameters
    ----------
    eta : float or 'auto', default='auto'
        Learning rate (any ``eta > 0``). ``'auto'``: ``sqrt(S log(K T / S) / path_length_bound)``
        (Theorem 3). Without a bound on the path length use :class:`OCSPlus`.
    path_length_bound : float or None, default=None
        Upper bound on ``P_inf`` for ``eta='auto'``; ``None``: the worst case ``P_inf <= T``.
    n_segments : int, default=1
        The number S of segments of the comparator (S - 1 switches). It sets the floor
        ``gamma = S / (T K)`` and the tuning constant ``c = S log(K T / S)``. ``n_segments=1`` still
        tracks: the per-interval bounds hold with ``log(K T)`` in place of ``log(K T / S)``.
    min_weight : float or 'auto', default='auto'
        The floor gamma of the clipped simplex ``{w in simplex : w[i] >= gamma}`` (eq. 11);
        ``'auto'``: ``S / (T K)``. Needs ``K * gamma <= 1``.
    horizon : int or None, default=None
        The number of rounds T, used by the prescribed tuning. ``None``: horizon-free doubling
        schedule (at round t the tuning uses ``T_k = S 2^k``, the smallest such value >= t, and the
        state carries over when T_k doubles; this costs a log T factor in the bounds). With an int,
        the paper's algorithm exactly; beyond ``horizon`` rounds it keeps running with the same
        parameters and warns.
    loss_bound : float or tuple (low, high), default=1.0
        The declared range of the losses: a bound B (losses in [0, B]) or a pair (low, high).
        Losses outside it are rejected with a ``ValueError`` before any state change.
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.
    loss_range : tuple (low, high), default='deprecated'
        Deprecated alias of ``loss_bound`` (renamed in 0.1; ``loss_range`` is removed in 0.2).

    Attributes
    ----------
    weights_ : ndarray of shape (K,)
        The distribution to be played at the next round (all experts awake).
    cumulative_loss_ : float
        Loss of the mixture, sum over rounds of ``<w_t, l_t>`` (awake experts; user units).
    expert_cumulative_losses_ : ndarray of shape (K,)
        Each expert's observed cumulative loss (rounds where it was awake).
    n_samples_seen_ : int
        Rounds processed (the paper's t).
    n_features_in_ : int
        Number of experts K.
    eta_ : float
        Learning rate of the last round.
    horizon_ : float
        Horizon T the tuning used at the last round (``horizon``, or the current doubling guess).
    min_weight_ : float
        Floor of the last round.

    References
    ----------
    Lu & Zhang, "Adaptive and Efficient Algorithms for Tracking the Best Expert", arXiv 2019, Algorithm 3 and Theorem 3.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import OCS
    >>> t = np.arange(2000)[:, None]
    >>> L = 0.5 + 0.4 * np.sin(2 * np.pi * t / 1000 + np.array([0.0, 2.1, 4.2]))  # slow drift
    >>> rule = OCS(eta=5.0, horizon=2000).fit(L)
    >>> float(rule.cumulative_loss_) < float(np.min(L.sum(axis=0)))   # beats every single expert
    True
    """

    _bound_param = "path_length_bound"
    _parameter_constraints = {
        **_ClippedRule._parameter_constraints,
        "eta": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "path_length_bound": [None, Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, eta="auto", *, path_length_bound=None, n_segments=1, horizon=None,
                 min_weight="auto", loss_bound=1.0, verbose=0, loss_range="deprecated"):
        self.eta = eta
        self.path_length_bound = path_length_bound
        self.n_segments = n_segments
        self.horizon = horizon
        self.min_weight = min_weight
        self.loss_bound = loss_bound
        self.loss_range = loss_range
        self.verbose = verbose


class OCSPlus(_OptimisticRule):
    """OCS with the doubling trick on the learning rate (OCS+): no learning rate to tune.

    OCS keeps an auxiliary sequence ``w~`` and uses the last loss vector as an optimistic guess of
    the next one (optimistic mirror descent, Chiang et al. 2012; Rakhlin & Sridharan 2013), both steps
    on the clipped simplex (Lu & Zhang, Algorithm 3):

    * ``w_t = argmin_{w in clipped simplex} <w, eta l_{t-1}> + KL(w || w~_t)``  (eq. 17)
    * ``w~_{t+1} = argmin_{w in clipped simplex} <w, eta l_t> + KL(w || w~_t)``  (eq. 18)

    with ``l_0 = 0``. Theorem 3: ``TR(T, S) <= eta P_inf + S log(K T / S) / eta + S`` for every
    ``eta > 0``, with the path length ``P_inf = sum_t ||l_t - l_{t-1}||_inf^2``: small when the losses
    move slowly, however often the best expert changes.

    OCS+ (Algorithm 4) runs OCS in epochs: it starts with ``eta_1 = sqrt(c)``, ``c = S log(K T / S)``,
    accumulates the path length ``P_m`` of the current epoch and halves eta (a new epoch starts at the
    next round) as soon as ``eta_m^2 P_m > c``; the weights and the last loss carry over.
    Theorem 4: ``TR(T, S) = O(sqrt(S (P_inf + 1) log(K T / S)) + S)``; from its proof,
    ``TR <= 2^(m* + 1) sqrt(c) + S`` with m* the number of epochs.

    Input: a loss matrix ``L`` of shape (n_rounds, K), one row per round, one column per expert, in
    ``loss_bound`` (mapped affinely to [0, 1] internally). A NaN loss means the expert is *asleep*
    that round: the weights played are renormalised over the awake experts and an asleep expert is
    charged the mixture's loss (its regret that round is zero), as in opera. ``fit(L)`` restarts;
    ``partial_fit(L)`` continues the stream; both give the same result for any chunking.

    Parameters
    ----------
    n_segments : int, default=1
        The number S of segments of the comparator (S - 1 switches). It sets the floor
        ``gamma = S / (T K)`` and the tuning constant ``c = S log(K T / S)``. ``n_segments=1`` still
        tracks: the per-interval bounds hold with ``log(K T)`` in place of ``log(K T / S)``.
    min_weight : float or 'auto', default='auto'
        The floor gamma of the clipped simplex ``{w in simplex : w[i] >= gamma}`` (eq. 11);
        ``'auto'``: ``S / (T K)``. Needs ``K * gamma <= 1``.
    horizon : int or None, default=None
        The number of rounds T, used by the prescribed tuning. ``None``: horizon-free doubling
        schedule (at round t the tuning uses ``T_k = S 2^k``, the smallest such value >= t, and the
        state carries over when T_k doubles; this costs a log T factor in the bounds). With an int,
        the paper's algorithm exactly; beyond ``horizon`` rounds it keeps running with the same
        parameters and warns.
    loss_bound : float or tuple (low, high), default=1.0
        The declared range of the losses: a bound B (losses in [0, B]) or a pair (low, high).
        Losses outside it are rejected with a ``ValueError`` before any state change.
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.
    loss_range : tuple (low, high), default='deprecated'
        Deprecated alias of ``loss_bound`` (renamed in 0.1; ``loss_range`` is removed in 0.2).

    Attributes
    ----------
    weights_ : ndarray of shape (K,)
        The distribution to be played at the next round (all experts awake).
    cumulative_loss_ : float
        Loss of the mixture, sum over rounds of ``<w_t, l_t>`` (awake experts; user units).
    expert_cumulative_losses_ : ndarray of shape (K,)
        Each expert's observed cumulative loss (rounds where it was awake).
    n_samples_seen_ : int
        Rounds processed (the paper's t).
    n_features_in_ : int
        Number of experts K.
    eta_ : float
        Learning rate of the current epoch.
    horizon_ : float
        Horizon T the tuning used at the last round (``horizon``, or the current doubling guess).
    epoch_ : int
        Current epoch m (from 1).
    epoch_starts_ : ndarray of int
        First round (1-based) of each epoch.
    path_length_epoch_ : float
        Path length of the current epoch so far, ``P_m`` (losses scaled to [0, 1]).
    min_weight_ : float
        Floor of the last round.

    References
    ----------
    Lu & Zhang, "Adaptive and Efficient Algorithms for Tracking the Best Expert", arXiv 2019,
    Algorithm 4 and Theorem 4; Wei & Luo, COLT 2018 (the doubling trick).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import OCSPlus
    >>> t = np.arange(2000)[:, None]
    >>> L = 0.5 + 0.4 * np.sin(2 * np.pi * t / 1000 + np.array([0.0, 2.1, 4.2]))
    >>> rule = OCSPlus(horizon=2000).fit(L)
    >>> rule.epoch_starts_.tolist()[:1]
    [1]
    >>> float(rule.cumulative_loss_) < float(np.min(L.sum(axis=0)))
    True
    """

    _rule_code = core.OCS_PLUS
    _parameter_constraints = {**_ClippedRule._parameter_constraints}

    def __init__(self, *, n_segments=1, horizon=None, min_weight="auto", loss_bound=1.0, verbose=0,
                 loss_range="deprecated"):
        self.n_segments = n_segments
        self.horizon = horizon
        self.min_weight = min_weight
        self.loss_bound = loss_bound
        self.loss_range = loss_range
        self.verbose = verbose

    def _allocate_rule(self, K):
        super()._allocate_rule(K)
        self.epoch_starts_ = np.array([1], dtype=np.int64)

    def _run(self, L, out, cum_loss):
        halved = super()._run(L, out, cum_loss)
        if halved.any():
            starts = self.n_samples_seen_ + np.flatnonzero(halved) + 2
            self.epoch_starts_ = np.concatenate([self.epoch_starts_, starts.astype(np.int64)])

    epoch_ = state_scalar("_epoch_", int, "Current epoch m (from 1).")

    path_length_epoch_ = state_scalar(
        "_path_length_", float, "Path length of the current epoch so far (losses scaled to [0, 1])."
    )


class MLPoly(_BaseRule):
    """ML-Poly: polynomially weighted average with one adaptive learning rate per expert.

    Parameter-free. ``w_t[i] ∝ eta_i (R_{t-1, i})_+`` with the cumulative regrets
    ``R_i = sum_s (l_hat_s - l_s[i])`` and ``1 / eta_i = sum_s r_{s,i}^2 + B`` (``B`` the largest
    squared instantaneous regret so far), uniform while no regret is positive. This is opera's
    ``MLpol`` update, line for line. Static regret
    ``O(sqrt(K log K sum_t r_{t,i}^2))`` against every expert i (Gaillard, Stoltz & van Erven 2014,
    second-order bound with excess losses); no tracking guarantee.

    Input: a loss matrix ``L`` of shape (n_rounds, K), one row per round, one column per expert, in
    ``loss_bound`` (mapped affinely to [0, 1] internally). A NaN loss means the expert is *asleep*
    that round: the weights played are renormalised over the awake experts and an asleep expert is
    charged the mixture's loss (its regret that round is zero), as in opera. ``fit(L)`` restarts;
    ``partial_fit(L)`` continues the stream; both give the same result for any chunking.

    Parameters
    ----------
    loss_bound : float or tuple (low, high), default=1.0
        The declared range of the losses: a bound B (losses in [0, B]) or a pair (low, high) (the
        rule itself is scale-free).
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.
    loss_range : tuple (low, high), default='deprecated'
        Deprecated alias of ``loss_bound`` (renamed in 0.1; ``loss_range`` is removed in 0.2).

    Attributes
    ----------
    weights_ : ndarray of shape (K,)
        The distribution to be played at the next round (all experts awake).
    cumulative_loss_ : float
        Loss of the mixture, sum over rounds of ``<w_t, l_t>`` (awake experts; user units).
    expert_cumulative_losses_ : ndarray of shape (K,)
        Each expert's observed cumulative loss (rounds where it was awake).
    n_samples_seen_ : int
        Rounds processed (the paper's t).
    n_features_in_ : int
        Number of experts K.
    regrets_ : ndarray of shape (K,)
        Cumulative regrets ``R_i`` (losses scaled to [0, 1]).
    learning_rates_ : ndarray of shape (K,)
        Current ``eta_i``.

    References
    ----------
    Gaillard, Stoltz & van Erven, "A second-order bound with excess losses", COLT 2014;
    Gaillard & Goude, opera: Online Prediction by Expert Aggregation (R package), ``MLpol``.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import MLPoly
    >>> L = np.tile([0.6, 0.2, 0.4], (100, 1))
    >>> int(np.argmax(MLPoly().fit(L).weights_))
    1
    """

    _rule_code = core.ML_POLY

    def __init__(self, *, loss_bound=1.0, verbose=0, loss_range="deprecated"):
        self.loss_bound = loss_bound
        self.loss_range = loss_range
        self.verbose = verbose

    def _allocate_rule(self, K):
        self.regrets_ = np.zeros(K)
        self._inv_eta_ = np.zeros(K)
        self._B_ = np.zeros(1)

    @property
    def learning_rates_(self):
        """Current per-expert learning rates ``eta_i`` (inf while an expert has no regret)."""
        check_is_fitted(self, "_inv_eta_")
        with np.errstate(divide="ignore"):
            return 1.0 / self._inv_eta_

    def _state(self, cum_loss):
        return core.MLPolyState(
            w=self.weights_, R=self.regrets_, inv_eta=self._inv_eta_, B=self._B_, cum_loss=cum_loss,
            expert_cum_losses=self.expert_cumulative_losses_,
        )

    def _run(self, L, out, cum_loss):
        core.mlpoly_pass(L, self._settings(), self._state(cum_loss), out, core.round_buffers(L.shape[1]))


class BOA(_BaseRule):
    """BOA: Bernstein Online Aggregation with one adaptive learning rate per expert.

    Parameter-free. ``w_t[i] ∝ pi_i exp(eta_i sum_s (r_{s,i} - eta_i r_{s,i}^2))`` with the
    instantaneous regrets ``r_{s,i} = l_hat_s - l_s[i]``, ``eta_i = min(1 / (2 B_i), sqrt(log K / V_i))``,
    ``B_i = max_s |r_{s,i}|`` and ``V_i = sum_s r_{s,i}^2``: the second-order (Bernstein) correction
    gives excess-loss bounds and fast rates under stochastic conditions (Wintenberger 2017). This is
    opera's ``BOA`` update, except that opera drops every expert's second-order term while any expert
    has had zero regret so far; here each expert's term is kept (it is zero for that expert anyway).

    Input: a loss matrix ``L`` of shape (n_rounds, K), one row per round, one column per expert, in
    ``loss_bound`` (mapped affinely to [0, 1] internally). A NaN loss means the expert is *asleep*
    that round: the weights played are renormalised over the awake experts and an asleep expert is
    charged the mixture's loss (its regret that round is zero), as in opera. ``fit(L)`` restarts;
    ``partial_fit(L)`` continues the stream; both give the same result for any chunking.

    Parameters
    ----------
    prior : array-like of shape (K,) or None, default=None
        Prior weights pi (normalised); ``None``: uniform.
    loss_bound : float or tuple (low, high), default=1.0
        The declared range of the losses: a bound B (losses in [0, B]) or a pair (low, high).
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.
    loss_range : tuple (low, high), default='deprecated'
        Deprecated alias of ``loss_bound`` (renamed in 0.1; ``loss_range`` is removed in 0.2).

    Attributes
    ----------
    weights_ : ndarray of shape (K,)
        The distribution to be played at the next round (all experts awake).
    cumulative_loss_ : float
        Loss of the mixture, sum over rounds of ``<w_t, l_t>`` (awake experts; user units).
    expert_cumulative_losses_ : ndarray of shape (K,)
        Each expert's observed cumulative loss (rounds where it was awake).
    n_samples_seen_ : int
        Rounds processed (the paper's t).
    n_features_in_ : int
        Number of experts K.
    learning_rates_ : ndarray of shape (K,)
        Current ``eta_i`` (capped at exp(350) while an expert has had no regret).

    References
    ----------
    Wintenberger, "Optimal learning with Bernstein online aggregation", Machine Learning 106 (2017);
    Gaillard & Goude, opera (R package), ``BOA``.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import BOA
    >>> rng = np.random.default_rng(0)
    >>> L = rng.uniform(size=(500, 3)) * [1.0, 0.5, 1.0]
    >>> int(np.argmax(BOA().fit(L).weights_))
    1
    """

    _parameter_constraints = {
        **_BaseRule._parameter_constraints,
        "prior": [None, "array-like"],
    }

    _rule_code = core.BOA

    def __init__(self, *, prior=None, loss_bound=1.0, verbose=0, loss_range="deprecated"):
        self.prior = prior
        self.loss_bound = loss_bound
        self.loss_range = loss_range
        self.verbose = verbose

    def _allocate_rule(self, K):
        if self.prior is None:
            prior = np.full(K, 1.0 / K)
        else:
            prior = np.asarray(self.prior, dtype=np.float64).ravel()
            if prior.shape != (K,) or not np.all(np.isfinite(prior)) or np.any(prior <= 0):
                raise ValueError(f"prior must hold K={K} positive finite weights; got {self.prior!r}.")
            prior = prior / prior.sum()
        self.weights_ = prior.copy()
        self._log_prior_ = np.log(prior)
        self._reg_regrets_ = np.zeros(K)
        self._V_ = np.zeros(K)
        self._B_ = np.zeros(K)
        self.learning_rates_ = np.full(K, core.ETA_CAP)

    def _state(self, cum_loss):
        return core.BOAState(
            w=self.weights_, log_prior=self._log_prior_, R=self._reg_regrets_, V=self._V_, B=self._B_,
            eta=self.learning_rates_, cum_loss=cum_loss, expert_cum_losses=self.expert_cumulative_losses_,
        )

    def _run(self, L, out, cum_loss):
        core.boa_pass(L, self._settings(), self._state(cum_loss), out, core.round_buffers(L.shape[1]))


class AdaHedge(_BaseRule):
    """AdaHedge: Hedge with the learning rate tuned online from the mixability gap.

    Parameter-free. ``w_t ∝ exp(-eta_t L_{t-1})`` on the cumulative losses with
    ``eta_t = log K / Delta_{t-1}``, where ``Delta`` sums the mixability gaps
    ``<w_t, l_t> + log(sum_i w_t[i] exp(-eta_t l_t[i])) / eta_t`` (``Delta = 0``: follow the leaders).
    Static regret ``<= 2 sqrt(L* (T - L*) log K / T) + O(log K)`` for losses in [0, 1] (de Rooij et
    al. 2014, Thm. 8), ``L*`` the best expert's loss; no tracking guarantee.

    Input: a loss matrix ``L`` of shape (n_rounds, K), one row per round, one column per expert, in
    ``loss_bound`` (mapped affinely to [0, 1] internally). A NaN loss means the expert is *asleep*
    that round: the weights played are renormalised over the awake experts and an asleep expert is
    charged the mixture's loss (its regret that round is zero), as in opera. ``fit(L)`` restarts;
    ``partial_fit(L)`` continues the stream; both give the same result for any chunking.

    Parameters
    ----------
    loss_bound : float or tuple (low, high), default=1.0
        The declared range of the losses: a bound B (losses in [0, B]) or a pair (low, high).
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.
    loss_range : tuple (low, high), default='deprecated'
        Deprecated alias of ``loss_bound`` (renamed in 0.1; ``loss_range`` is removed in 0.2).

    Attributes
    ----------
    weights_ : ndarray of shape (K,)
        The distribution to be played at the next round (all experts awake).
    cumulative_loss_ : float
        Loss of the mixture, sum over rounds of ``<w_t, l_t>`` (awake experts; user units).
    expert_cumulative_losses_ : ndarray of shape (K,)
        Each expert's observed cumulative loss (rounds where it was awake).
    n_samples_seen_ : int
        Rounds processed (the paper's t).
    n_features_in_ : int
        Number of experts K.
    mixability_gap_ : float
        ``Delta`` (losses scaled to [0, 1]).

    References
    ----------
    de Rooij, van Erven, Grünwald & Koolen, "Follow the leader if you can, hedge if you must",
    JMLR 15 (2014).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import AdaHedge
    >>> rng = np.random.default_rng(0)
    >>> L = rng.uniform(size=(1000, 3)) * [1.0, 0.8, 1.0]
    >>> int(np.argmax(AdaHedge().fit(L).weights_))
    1
    """

    _rule_code = core.ADAHEDGE

    def __init__(self, *, loss_bound=1.0, verbose=0, loss_range="deprecated"):
        self.loss_bound = loss_bound
        self.loss_range = loss_range
        self.verbose = verbose

    def _allocate_rule(self, K):
        self._cum_scaled_ = np.zeros(K)
        self._delta_ = np.zeros(1)

    mixability_gap_ = state_scalar("_delta_", float, "Cumulative mixability gap ``Delta`` (losses scaled to [0, 1]).")

    def _state(self, cum_loss):
        return core.AdaHedgeState(
            w=self.weights_, L=self._cum_scaled_, Delta=self._delta_, cum_loss=cum_loss,
            expert_cum_losses=self.expert_cumulative_losses_,
        )

    def _run(self, L, out, cum_loss):
        core.adahedge_pass(L, self._settings(), self._state(cum_loss), out, core.round_buffers(L.shape[1]))
