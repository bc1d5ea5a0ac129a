"""State and prediction shared by the AWV forecasters of this family."""

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..utils._growing import GrowingStateMixin as _GrowingStateMixin  # noqa: F401
from ..utils._growing import first_capacity, grow, next_capacity, warn_growth  # noqa: F401
from ..utils._online_kernel import CAP_COMPONENTS as _CAP_COMPONENTS  # noqa: F401
from ..utils._online_kernel import CAP_ROWS as _CAP_ROWS  # noqa: F401

_DOC_ALPHA = """
    alpha : float, default=1.0
        Ridge parameter :math:`\\lambda > 0` (the paper's lambda; scikit-learn's ``Ridge`` and
        ``KernelRidge`` call it ``alpha``): the forecaster minimises
        :math:`\\sum_{s<t} (y_s - f(x_s))^2 + \\lambda \\|f\\|^2 + f(x_t)^2`. The paper uses 1."""

_DOC_ALGORITHM = """
    algorithm : {'awv', 'ridge'}, default='awv'
        ``'awv'``: the Azoury-Warmuth-Vovk forecaster: the current input enters the covariance
        (with target 0) before predicting; this is what the paper's regret bounds are for.
        ``'ridge'``: online (kernel) ridge regression, predicting with the previous solution (the
        paper's "KRR" / "Projected-KRR" used on its real data sets). The AWV prediction is the
        ridge prediction shrunk by the factor :math:`1/(1 + v^\\top A_{t-1}^{-1} v) \\in (0, 1]`,
        so the two give identical signs (identical classifier decisions)."""

_DOC_CLIP = """
    clip : float or None, default=None
        If set to :math:`B`, predictions are clipped to :math:`[-B, B]` (the loss is counted on
        the clipped prediction). The paper's forecasters need no clipping and do not know
        :math:`B` (its bounds hold for unclipped predictions); clipping can only lower the square
        loss when :math:`|y_t| \\le B`."""


class _LinearAWVMixin:
    """Linear AWV state shared by every forecaster with an explicit feature map.

    State: ``_precision_[:m, :m] = A^{-1}`` with ``A = alpha I + sum_s v_s v_s'`` and
    ``_b_[:, :m] = sum_s y_s v_s'`` (one row per head), possibly padded (growing maps).
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "algorithm": [StrOptions({"awv", "ridge"})],
        "clip": [Interval(Real, 0, None, closed="neither"), None],
    }

    def _clip_value(self):
        return np.inf if self.clip is None else float(self.clip)

    def _n_active(self):
        """Number of active coordinates ``m`` of the feature map."""
        return self._precision_.shape[0]

    def _init_linear_state(self, m, n_heads):
        self._precision_ = np.eye(m) / float(self.alpha)
        self._b_ = np.zeros((n_heads, m))

    def _linear_predict(self, V):
        """Predictions (n, n_heads) for feature rows ``V`` (n, m), each as the next round."""
        m = V.shape[1]
        P = self._precision_[:m, :m]
        b = self._b_[:, :m]
        U = V @ P
        num = U @ b.T
        if self.algorithm == "awv":
            s = np.einsum("ij,ij->i", U, V)
            num = num / (1.0 + s)[:, None]
        c = self._clip_value()
        if np.isfinite(c):
            num = np.clip(num, -c, c)
        return num

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
