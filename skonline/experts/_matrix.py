"""Online matrix prediction with a tracking guarantee: PCSP (Lu & Zhang, Algorithm 5)."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import Chunk, OnlineMixin, reads_state, state_scalar
from ..exceptions import HorizonExceededWarning, TheoremConditionWarning
from ..utils._warnings import warn
from ..utils.validation import readonly
from . import _matrix_core as core
from . import _rules_core as rules_core

__all__ = ["PCSP"]


class PCSP(OnlineMixin, BaseEstimator):
    """Prod on the clipped spectraplex (PCSP): online matrix prediction, tracking bound.

    Each round the learner plays a density matrix ``W_t`` (symmetric PSD, trace one), the adversary
    reveals a symmetric loss matrix ``Z_t`` with spectral norm at most ``loss_bound`` and the learner
    suffers ``Tr(W_t Z_t)`` (Steinhardt & Liang's setting). PCSP (Lu & Zhang, Algorithm 5) is the
    matrix Prod step ``log W_t + log(I - eta Z_t)`` followed by the von Neumann projection onto the
    clipped spectraplex ``{W : Tr W = 1, lambda_min(W) >= gamma}``, ``gamma = S / (T K)``, computed
    exactly by projecting the eigenvalues (two K x K eigen-decompositions per round, O(K^3)).
    Theorem 5: for ``eta <= 1/2`` and every comparator sequence of density matrices ``U_t`` with at
    most S - 1 switches, ``TR(T, S) <= eta M_2 + S log(K T / S) / eta + 5 S / 2`` with
    ``M_2 = sum_t Tr(U_t Z_t^2)``. With diagonal matrices it is exactly :class:`PCS`.

    Input: a stream of symmetric K x K matrices, as an array of shape (n_rounds, K, K) or flattened
    to (n_rounds, K * K). Symmetry is checked (relative tolerance 1e-10) and the matrices are
    symmetrised; a spectral norm above ``loss_bound`` is rejected before any state change.

    Parameters
    ----------
    eta : float in (0, 1) or 'auto', default='auto'
        Learning rate. ``'auto'``: ``min(1/2, sqrt(S log(K T / S) / m2_bound))`` (Theorem 5).
    m2_bound : float or None, default=None
        Upper bound on ``M_2`` for ``eta='auto'``; ``None``: the worst case ``M_2 <= T``.
    n_segments : int, default=1
        The number S of segments of the comparator.
    horizon : int or None, default=None
        The number of rounds T; ``None``: the doubling schedule ``T_k = S 2^k`` (see
        :class:`PCS`).
    min_weight : float or 'auto', default='auto'
        The floor gamma on the eigenvalues; ``'auto'``: ``S / (T K)``.
    loss_bound : float, default=1.0
        Bound on the spectral norm of the loss matrices (they are divided by it internally).
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metric (average online loss). The result does not change.

    Attributes
    ----------
    weights_ : ndarray of shape (K, K)
        The density matrix to be played at the next round.
    eigenvalues_ : ndarray of shape (K,)
        Its eigenvalues (each >= ``min_weight_``, summing to one).
    eigenvectors_ : ndarray of shape (K, K)
        Its eigenvectors (columns).
    cumulative_loss_ : float
        ``sum_t Tr(W_t Z_t)``.
    eta_ : float
        Learning rate of the last round.
    min_weight_ : float
        Eigenvalue floor gamma of the last round.
    n_samples_seen_ : int
        Rounds processed.
    n_features_in_ : int
        K * K.

    References
    ----------
    Lu & Zhang, "Adaptive and Efficient Algorithms for Tracking the Best Expert", arXiv 2019,
    Algorithm 5 and Theorem 5; Steinhardt & Liang, "Adaptivity and optimism: an
    improved exponentiated gradient algorithm", ICML 2014.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.experts import PCSP
    >>> rng = np.random.default_rng(0)
    >>> u = np.array([0.6, 0.8])                         # the direction with negative loss
    >>> Z = np.stack([0.5 * np.eye(2) - np.outer(u, u) + 0.1 * np.diag(rng.uniform(size=2))
    ...               for _ in range(300)])
    >>> model = PCSP(eta=0.5).fit(Z)
    >>> w, V = model.eigenvalues_, model.eigenvectors_
    >>> bool(abs(V[:, np.argmax(w)] @ u) > 0.99)           # W concentrates on u
    True
    """

    #: the tuning holds NaN until the first round sets it (checked state excludes it)
    _nonfinite_state_ok = ("_eta_", "_min_weight_")

    _parameter_constraints = {
        "eta": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="neither")],
        "m2_bound": [None, Interval(Real, 0, None, closed="neither")],
        "n_segments": [Interval(Integral, 1, None, closed="left")],
        "horizon": [None, Interval(Integral, 1, None, closed="left")],
        "min_weight": [StrOptions({"auto"}), Interval(Real, 0, 1, closed="both")],
        "loss_bound": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
    }

    def __init__(self, eta="auto", *, m2_bound=None, n_segments=1, horizon=None, min_weight="auto",
                 loss_bound=1.0, verbose=0):
        self.eta = eta
        self.m2_bound = m2_bound
        self.n_segments = n_segments
        self.horizon = horizon
        self.min_weight = min_weight
        self.loss_bound = loss_bound
        self.verbose = verbose

    def _check_params(self):
        if self.horizon is not None and self.n_segments > self.horizon:
            raise ValueError(f"n_segments={self.n_segments} exceeds horizon={self.horizon}.")
        if not math.isfinite(self.loss_bound):
            raise ValueError("loss_bound must be finite.")
        if self.eta != "auto" and self.eta > 0.5:
            warn(f"PCSP with eta={self.eta} > 1/2: Theorem 5 needs eta <= 1/2.", TheoremConditionWarning)

    # ------------------------------------------------------------------ validation
    def _as_matrices(self, X, reset):
        X3 = X
        if not hasattr(X, "ndim") or getattr(X, "ndim", 2) == 3:
            arr = np.asarray(X) if not hasattr(X, "ndim") else X
            if arr.ndim == 3:
                X3 = np.asarray(arr).reshape(arr.shape[0], -1)
        M = readonly(validate_data(self, X3, reset=reset, dtype=np.float64, order="C"))
        d = M.shape[1]
        K = int(round(math.sqrt(d)))
        if K * K != d:
            raise ValueError(
                f"PCSP takes K x K matrices, flattened to K * K features; got {d} features, not a "
                "perfect square."
            )
        Z = M.reshape(M.shape[0], K, K)
        scale = np.maximum(np.abs(Z).max(axis=(1, 2)), 1e-300)
        asym = np.abs(Z - Z.transpose(0, 2, 1)).max(axis=(1, 2))
        if np.any(asym > 1e-10 * scale):
            row = int(np.flatnonzero(asym > 1e-10 * scale)[0])
            raise ValueError(f"Loss matrix {row} is not symmetric (max |Z - Z'| = {asym[row]:.3g}).")
        return np.ascontiguousarray((Z + Z.transpose(0, 2, 1)) / 2.0)

    def _validate_chunk(self, X, y, *, reset, from_fit):
        Z = self._as_matrices(X, reset)
        norms = np.abs(np.linalg.eigvalsh(Z)).max(axis=1)
        bad = norms > self.loss_bound * (1.0 + 1e-12)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"Loss matrix {row} has spectral norm {norms[row]:.6g} > loss_bound={self.loss_bound:g}; "
                "the chunk was rejected and the estimator is unchanged."
            )
        return Chunk(Z.shape[0], X=Z)

    # ------------------------------------------------------------------ state and pass
    def _allocate(self, chunk):
        K = chunk.X.shape[1]
        if self.min_weight != "auto" and K * self.min_weight > 1 + 1e-12:
            raise ValueError(f"min_weight={self.min_weight} is infeasible for K={K}: K * min_weight must be <= 1.")
        self.eigenvalues_ = np.full(K, 1.0 / K)
        self._log_eigenvalues_ = np.full(K, -math.log(K))
        self.eigenvectors_ = np.eye(K)
        # the tuning of the last round: horizon T (or the doubling guess), eta, eigenvalue floor
        self._horizon_ = np.zeros(1)
        self._eta_ = np.full(1, math.nan)
        self._min_weight_ = np.full(1, math.nan)

    def _records(self, cum_loss):
        """The pass's settings (the rules' ``RuleSettings``) and :class:`PCSPState` over the state."""
        settings = rules_core.RuleSettings(
            rule=rules_core.PCS, lo=0.0, inv_span=1.0 / float(self.loss_bound), t0=int(self.n_samples_seen_),
            S=float(self.n_segments),
            **rules_core.tuning_settings(horizon=self.horizon, eta=self.eta, alpha=None, bound=self.m2_bound,
                                         gamma=self.min_weight),
        )
        state = core.PCSPState(
            w=self.eigenvalues_, log_w=self._log_eigenvalues_, V=self.eigenvectors_, T=self._horizon_,
            eta=self._eta_, gamma=self._min_weight_, cum_loss=cum_loss,
        )
        return settings, state

    def _learn(self, chunk):
        Z = chunk.X
        n, K, _ = Z.shape
        if self.horizon is not None and self.n_samples_seen_ + n > self.horizon:
            warn(
                f"PCSP: more rounds than horizon={self.horizon}; it keeps running with the same parameters.",
                HorizonExceededWarning,
            )
        out = np.empty((n, K, K))
        cum_loss = np.array([self.cumulative_loss_])
        settings, state = self._records(cum_loss)
        core.pcsp_pass(Z, settings, state, out, core.matrix_buffers(K))
        self.cumulative_loss_ = float(cum_loss[0])
        return out

    def _response(self, raw, method):
        if method == "predict":
            return raw
        raise ValueError(method)

    # ------------------------------------------------------------------ public API
    @property
    def weights_(self):
        """The density matrix played next, ``V diag(w) V'``."""
        check_is_fitted(self, "eigenvalues_")
        V = self.eigenvectors_
        W = (V * self.eigenvalues_) @ V.T
        return (W + W.T) / 2.0

    eta_ = state_scalar("_eta_", float, "Learning rate of the last round.")

    min_weight_ = state_scalar("_min_weight_", float, "Eigenvalue floor of the last round.")

    def partial_fit_predict(self, X, y=None):
        """Learn the rounds and return the density matrices played at each of them.

        Parameters
        ----------
        X : array-like of shape (n_rounds, K, K) or (n_rounds, K * K)
            Symmetric loss matrices.
        y : None
            Ignored.

        Returns
        -------
        W : ndarray of shape (n_rounds, K, K)
        """
        return self._partial_fit_response(X, y, "predict")

    @reads_state
    def predict(self, X):
        """Loss ``Tr(W Z)`` of the current density matrix on each matrix of ``X`` (no learning).

        Parameters
        ----------
        X : array-like of shape (n, K, K) or (n, K * K)

        Returns
        -------
        losses : ndarray of shape (n,)
        """
        check_is_fitted(self, "eigenvalues_")
        Z = self._as_matrices(X, reset=False)
        return np.einsum("ij,nji->n", self.weights_, Z)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        return tags

    def _expected_failed_checks(self):
        reason = (
            "PCSP's samples are symmetric K x K matrices flattened to K * K features; scikit-learn's "
            "generic test data (non-square feature counts, non-symmetric rows, spectral norms above "
            "loss_bound) is rejected by design."
        )
        return {name: reason for name in _PCSP_XFAIL}

_PCSP_XFAIL = (
    "check_estimators_dtypes",
    "check_dtype_object",
    "check_fit_score_takes_y",
    "check_estimators_fit_returns_self",
    "check_readonly_memmap_input",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_n_features_in",
    "check_fit2d_predict1d",
    "check_methods_subset_invariance",
    "check_methods_sample_order_invariance",
    "check_estimators_overwrite_params",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1sample",
    "check_estimators_nan_inf",
    "check_pipeline_consistency",
)
