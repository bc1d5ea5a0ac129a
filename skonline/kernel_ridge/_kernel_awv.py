"""Exact Kernel-AWV (and online kernel ridge regression), O(t^2) per row."""

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import OnlineRegressorMixin, raise_if_nonfinite
from ..utils.validation import validate_X_predict
from . import _core as core
from ._base import _CAP_ROWS, _DOC_ALGORITHM, _DOC_ALPHA, _DOC_CLIP, _GrowingStateMixin, grow, next_capacity

__all__ = ["KernelAWVRegressor"]

_KERNELS = {"rbf": 0, "linear": 1}


class KernelAWVRegressor(_GrowingStateMixin, OnlineRegressorMixin, BaseEstimator):
    __doc__ = (
        r"""Exact online kernel regression with the Kernel-AWV forecaster, O(t^2) per row.

    At round :math:`t` the forecaster predicts :math:`\hat f_t(x_t)` with

    .. math::
        \hat f_t \in \operatorname{argmin}_{f \in \mathcal H}
        \sum_{s<t} (y_s - f(x_s))^2 + \lambda \|f\|_{\mathcal H}^2 + f(x_t)^2,

    in closed form :math:`\hat y_t = k_t^\top (K_t + \lambda I)^{-1} (y_1, \dots, y_{t-1}, 0)`
    (paper's eq. 3). Its regret against every :math:`f` of the RKHS is at most
    :math:`\lambda\|f\|^2 + B^2 \sum_j \log(1 + \lambda_j(K_{nn})/\lambda)` (Proposition 1),
    optimal up to logarithms, with no clipping and no knowledge of :math:`B`.

    This is the reference the projected forecasters (:class:`PKAWVRegressor`) approximate. It
    stores every input and :math:`(K_t + \lambda I)^{-1}`, grown by one row and column per round
    (Schur complement): O(t^2) time and memory at round t, so it is for streams of a few thousand
    rows. Implementation: with :math:`q = (K_{t-1}+\lambda I)^{-1} k_{t-1}(x_t)` and
    :math:`s_t^2 = k(x_t, x_t) - k_{t-1}(x_t)^\top q`, the ridge prediction is
    :math:`k_{t-1}(x_t)^\top \alpha_{t-1}` and the AWV prediction is that divided by
    :math:`1 + s_t^2/\lambda`.

    Parameters
    ----------"""
        + _DOC_ALPHA
        + r"""
    kernel : {'rbf', 'linear'}, default='rbf'
        ``'rbf'``: the Gaussian kernel :math:`\exp(-\|x - x'\|^2 / (2\sigma^2))`; ``'linear'``:
        :math:`x^\top x'` (then this equals :class:`AWVRegressor` on raw features).
    sigma : float, default=1.0
        Bandwidth of the Gaussian kernel (``gamma = 1 / (2 sigma**2)`` in scikit-learn's
        ``rbf_kernel``). The paper uses 1.
"""
        + _DOC_ALGORITHM
        + _DOC_CLIP
        + r"""

    Attributes
    ----------
    X_fit_ : ndarray of shape (n_samples_seen_, n_features)
        The inputs seen so far.
    dual_coef_ : ndarray of shape (n_samples_seen_,)
        :math:`(K_t + \lambda I)^{-1} y_{1:t}`: the ridge solution is
        :math:`\sum_s \mathrm{dual\_coef}_s\, k(x_s, \cdot)`.
    n_samples_seen_ : int
    cumulative_loss_ : float
        :math:`\sum_t (y_t - \hat y_t)^2` of the prequential predictions.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    PKAWVRegressor : the same forecaster projected on Taylor or Nyström features, O(m^2) per row.
    sklearn.kernel_ridge.KernelRidge : the batch kernel ridge regression.

    References
    ----------
    R. Jézéquel, P. Gaillard, A. Rudi. Efficient online learning with kernels for adversarial large
    scale problems. NeurIPS 2019 (eq. 3, Propositions 1 and 2).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.kernel_ridge import KernelAWVRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(300, 2))
    >>> y = np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1])
    >>> reg = KernelAWVRegressor(alpha=0.1, sigma=0.5)
    >>> y_online = reg.partial_fit_predict(X, y)
    >>> bool(np.mean((y_online[200:] - y[200:]) ** 2) < 0.01)
    True
    """
    )

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions(set(_KERNELS))],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "algorithm": [StrOptions({"awv", "ridge"})],
        "clip": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, alpha=1.0, *, kernel="rbf", sigma=1.0, algorithm="awv", clip=None):
        self.alpha = alpha
        self.kernel = kernel
        self.sigma = sigma
        self.algorithm = algorithm
        self.clip = clip

    def _clip_value(self):
        return np.inf if self.clip is None else float(self.clip)

    def _gamma(self):
        return 1.0 / (2.0 * float(self.sigma) ** 2)

    def _allocate(self, chunk):
        d = chunk["X"].shape[1]
        cap = _CAP_ROWS
        self._X_buf_ = np.zeros((cap, d))
        self._K_inv_buf_ = np.zeros((cap, cap))
        self._coef_buf_ = np.zeros((cap, 1))
        self._n_buf_ = np.zeros(1, dtype=np.int64)

    def _buffer_layout(self):
        t, d = int(self._n_buf_[0]), self._X_buf_.shape[1]
        return {
            "_X_buf_": ((t, d), False),
            "_K_inv_buf_": ((t, t), True),
            "_coef_buf_": ((t, self._coef_buf_.shape[1]), True),
        }

    def _grow(self):
        cap = next_capacity(self._X_buf_.shape[0])
        self._X_buf_ = grow(self._X_buf_, (cap, self._X_buf_.shape[1]))
        self._K_inv_buf_ = grow(self._K_inv_buf_, (cap, cap))
        self._coef_buf_ = grow(self._coef_buf_, (cap, self._coef_buf_.shape[1]))

    def _learn(self, chunk):
        X = chunk["X"]
        Y = chunk["y"].reshape(-1, 1)
        out = np.zeros((X.shape[0], 1))
        loss = np.array([self.cumulative_loss_])
        start = 0
        while True:
            start, status = core.kernel_awv_pass(
                X, Y, start, _KERNELS[self.kernel], self._gamma(), float(self.alpha),
                self.algorithm == "awv", self._clip_value(), self._X_buf_, self._K_inv_buf_,
                self._coef_buf_, self._n_buf_, out, loss,
            )
            raise_if_nonfinite(status, what="predictions")
            if start == X.shape[0]:
                break
            self._grow()
        self.cumulative_loss_ = float(loss[0])
        return out

    @property
    def X_fit_(self):
        check_is_fitted(self, "_X_buf_")
        return self._X_buf_[: self._n_buf_[0]].copy()

    @property
    def dual_coef_(self):
        check_is_fitted(self, "_coef_buf_")
        return self._coef_buf_[: self._n_buf_[0], 0].copy()

    def _predict_targets(self, X):
        """Predict each row as the next round of the stream, without learning it."""
        check_is_fitted(self, "_X_buf_")
        X = validate_X_predict(self, X, dtype=np.float64, order="C")
        out = np.zeros((X.shape[0], 1))
        core.kernel_predict(
            X, _KERNELS[self.kernel], self._gamma(), float(self.alpha), self.algorithm == "awv",
            self._clip_value(), self._X_buf_, int(self._n_buf_[0]), self._K_inv_buf_, self._coef_buf_,
            out,
        )
        return out[:, 0]
