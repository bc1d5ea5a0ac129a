"""State and prediction shared by the AWV forecasters of this family."""

import math
from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..exceptions import DataAdviceWarning
from ..utils._deprecation import param, renamed_constraint
from ..utils._growing import GrowingStateMixin as _GrowingStateMixin  # noqa: F401
from ..utils._growing import first_capacity, grow, next_capacity, warn_growth  # noqa: F401
from ..utils._online_kernel import CAP_COMPONENTS as _CAP_COMPONENTS  # noqa: F401
from ..utils._online_kernel import CAP_ROWS as _CAP_ROWS  # noqa: F401
from ..utils._warnings import warn
from . import _core as core

#: with standardize=True a row of weight 2 is not two rows: the online statistics count each row
#: once, and a repeated row is standardised with statistics that include its first copy
STANDARDIZE_SAMPLE_WEIGHT_XFAIL = {
    "check_sample_weight_equivalence_on_dense_data": (
        "with standardize=True, sample_weight is not equivalent to repeating rows: the online "
        "standardisation counts each row once in its running statistics, and a repeated row is "
        "standardised with statistics that include its first copy. With standardize=False the "
        "final solution is exactly weighted least squares and the check passes "
        "(tests/kernel_ridge/test_sample_weight.py)."
    ),
}
#: the same rows as CSR are the same rows (densified before the pass): the same reason
STANDARDIZE_SAMPLE_WEIGHT_XFAIL["check_sample_weight_equivalence_on_sparse_data"] = (
    STANDARDIZE_SAMPLE_WEIGHT_XFAIL["check_sample_weight_equivalence_on_dense_data"])


def clip_bound(est):
    """The bound predictions are clipped to: ``prediction_bound`` (in effect), ``inf`` for None."""
    bound = param(est, "prediction_bound")
    return np.inf if bound is None else float(bound)


def awv_settings(est):
    """The :class:`~skonline.kernel_ridge._core.AWVSettings` of a forecaster of this family (its
    ``alpha``, ``algorithm``, ``prediction_bound`` and ``forgetting`` parameters; an estimator without
    ``forgetting``, exact Kernel-AWV, runs without forgetting)."""
    clip = clip_bound(est)
    alpha = est._resolved_alpha() if hasattr(est, "_resolved_alpha") else float(est.alpha)
    return core.AWVSettings(alpha=alpha, awv=est.algorithm == "awv", clip=clip,
                            forgetting=float(getattr(est, "forgetting", 1.0)))


def linear_predict(V, P, b, awv, clip):
    """Predictions (n, n_heads) of the linear forecaster ``P = A^{-1}``, ``b`` for feature rows
    ``V`` (n, m), each as the next round: ``v' P b'``, divided by ``1 + v' P v`` for AWV, clipped
    to ``[-clip, clip]``."""
    U = V @ P
    num = U @ b.T
    if awv:
        s = np.einsum("ij,ij->i", U, V)
        num = num / (1.0 + s)[:, None]
    if np.isfinite(clip):
        num = np.clip(num, -clip, clip)
    return num


def resolve_sigma(sigma, n_features):
    """The bandwidth in use: ``sqrt(n_features)`` for ``'auto'``, else ``float(sigma)``."""
    if isinstance(sigma, str):
        return math.sqrt(max(int(n_features), 1))
    return float(sigma)


class _LinearAWVMixin:
    """Linear AWV state shared by every forecaster with an explicit feature map.

    State: ``_precision_[:m, :m] = A^{-1}`` with ``A = alpha I + sum_s v_s v_s'`` and
    ``_b_[:, :m] = sum_s y_s v_s'`` (one row per head), possibly padded (growing maps); with
    ``forgetting < 1`` the discounted sums of ``_core._forget`` and ``_refresh_``, the next
    coordinate whose regulariser is refreshed.
    """

    #: retired parameter names (one release): old -> new (skonline.utils._deprecation)
    _renamed_params = {"clip": "prediction_bound"}
    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "algorithm": [StrOptions({"awv", "ridge"})],
        "prediction_bound": [Interval(Real, 0, None, closed="neither"), None],
        "clip": renamed_constraint([Interval(Real, 0, None, closed="neither"), None]),
        "standardize": ["boolean"],
        "forgetting": [Interval(Real, 0, 1, closed="right")],
        "verbose": ["verbose"],
    }

    def _resolved_alpha(self):
        """The ridge parameter in use (``alpha``; PKAWV resolves ``'auto'``)."""
        return float(self.alpha)

    def _awv_settings(self):
        return awv_settings(self)

    def _linear_state(self, cum_loss):
        """:class:`~skonline.kernel_ridge._core.LinearState` over ``_precision_`` and ``_b_``
        (``cum_loss``: a 1-element array holding ``cumulative_loss_``)."""
        return core.LinearState(P=self._precision_, b=self._b_, cum_loss=cum_loss, refresh=self._refresh_)

    def _n_active(self):
        """Number of active coordinates ``m`` of the feature map."""
        return self._precision_.shape[0]

    def _init_linear_state(self, m, n_heads):
        try:
            self._precision_ = np.eye(m) / self._resolved_alpha()
        except MemoryError:
            raise MemoryError(
                f"{type(self).__name__} keeps an m x m matrix for its m = {m:,} features "
                f"({8 * m * m / 2**30:,.0f} GiB): too large for this machine. Reduce the features "
                "first (a transformer, e.g. random features), or use a learner whose cost is linear in "
                "the features (ScaleInvariantRegressor, GroupDRORegressor)."
            ) from None
        self._b_ = np.zeros((n_heads, m))
        self._refresh_ = np.zeros(1, dtype=np.int64)  # forgetting: next coordinate to refresh

    def _linear_predict(self, V):
        """Predictions (n, n_heads) for feature rows ``V`` (n, m), each as the next round."""
        m = V.shape[1]
        return linear_predict(V, self._precision_[:m, :m], self._b_[:, :m], self.algorithm == "awv",
                              clip_bound(self))

    # public views of the state -------------------------------------------------
    @property
    def precision_(self):
        """:math:`A_t^{-1} = (\\lambda I + \\sum_{s \\le t} v_s v_s^\\top)^{-1}`, shape (m, m)."""
        check_is_fitted(self, "_precision_")
        m = self._n_active()
        return self._precision_[:m, :m].copy()

    @property
    def b_(self):
        """:math:`b_t = \\sum_{s \\le t} y_s v_s`, shape (m,) (regressors) or (n_heads, m)."""
        check_is_fitted(self, "_b_")
        m = self._n_active()
        b = self._b_[:, :m].copy()
        return b[0] if self._is_single_head() else b

    @property
    def coef_(self):
        """Ridge weights :math:`w_t = A_t^{-1} b_t` in feature coordinates.

        ``algorithm='ridge'`` predicts :math:`\\phi(x)^\\top w_t`; AWV divides that by
        :math:`1 + \\phi(x)^\\top A_t^{-1} \\phi(x)`.
        """
        check_is_fitted(self, "_b_")
        m = self._n_active()
        w = self._b_[:, :m] @ self._precision_[:m, :m]
        return w[0] if self._is_single_head() else w

    def _is_single_head(self):
        return not hasattr(self, "classes_")


def warn_wide_sparse(est, n_features, capacity):
    """Advice for a Gaussian kernel learner on wide rows (``n_features`` columns, the sparse layout):
    a kernel approximated with ``capacity`` (what spans it, e.g. ``"at most max_components=192
    Nystrom components"``) spans only that many rows, usually far too few to learn on wide sparse
    rows (hashed text, one-hot identifiers); names what to use instead."""
    warn(
        f"{type(est).__name__}: {n_features:,} features: a Gaussian kernel approximated by {capacity} "
        "spans only that many rows, which on wide sparse rows (hashed text, one-hot identifiers) is "
        "usually far too few to learn from; prefer a linear learner (skonline.linear_model), kernel "
        "selection (it includes a linear kernel) or the default online ensemble.",
        DataAdviceWarning,
    )
