"""The Azoury-Warmuth-Vovk forecaster on raw features or on any fixed feature map."""

import copy

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import check_is_fitted

from ..base import OnlineRegressorMixin, SampleWeightMixin, check_finite_output, raise_if_nonfinite
from . import _core as core
from ._base import (
    STANDARDIZE_SAMPLE_WEIGHT_XFAIL,
    _LinearAWVMixin,
)

__all__ = ["AWVRegressor"]


class AWVRegressor(_LinearAWVMixin, SampleWeightMixin, OnlineRegressorMixin, BaseEstimator):
    r"""Online ridge regression with the Azoury-Warmuth-Vovk forecaster, O(m^2) per row.

    At round :math:`t`, with :math:`v_t = \phi(x_t) \in \mathbb{R}^m` (raw features when no
    ``transformer`` is given), the forecaster predicts

    .. math::
        \hat y_t = v_t^\top A_t^{-1} b_{t-1}, \qquad
        A_t = \lambda I + \sum_{s \le t} v_s v_s^\top, \quad b_{t-1} = \sum_{s < t} y_s v_s,

    i.e. the ridge regression fitted on the past rows **and the current row with target 0**
    (Vovk 2001; Azoury & Warmuth 2001). Its regret against every linear predictor :math:`w`
    is at most :math:`\lambda\|w\|^2 + B^2 \sum_j \log(1 + \lambda_j/\lambda)` for
    :math:`|y_t| \le B`. :math:`A_t^{-1}` is kept up to date by the Sherman-Morrison formula,
    compiled (the paper's Algorithm 1): O(m^2) time and memory per row, independent of t.

    With ``transformer=TaylorFeatures(degree, sigma)`` this is the paper's PKAWV-Taylor (see
    also :class:`PKAWVRegressor`, which computes the features inside the compiled pass).

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge parameter :math:`\lambda > 0` (the paper's lambda; scikit-learn's ``Ridge`` and
        ``KernelRidge`` call it ``alpha``): the forecaster minimises
        :math:`\sum_{s<t} (y_s - f(x_s))^2 + \lambda \|f\|^2 + f(x_t)^2`. The paper uses 1.
    transformer : transformer or None, default=None
        A fixed feature map :math:`\phi` applied to each chunk before the forecaster (e.g.
        :class:`~skonline.kernel_approximation.TaylorFeatures`,
        :class:`sklearn.kernel_approximation.RBFSampler`). A fitted transformer is used as is (a
        copy); an unfitted one is cloned and fitted on the first chunk, which then fixes the map.
        ``None``: the (standardised, see ``standardize``) features. The transformer is applied
        after the standardisation. The inverse is updated in float64, so the condition number of
        :math:`A_t`, at most :math:`1 + t \max_s\|v_s\|^2/\lambda`, must stay far below 1e16.
    algorithm : {'awv', 'ridge'}, default='awv'
        ``'awv'``: the Azoury-Warmuth-Vovk forecaster: the current input enters the covariance
        (with target 0) before predicting; this is what the paper's regret bounds are for.
        ``'ridge'``: online (kernel) ridge regression, predicting with the previous solution (the
        paper's "KRR" / "Projected-KRR" used on its real data sets). The AWV prediction is the
        ridge prediction shrunk by the factor :math:`1/(1 + v^\top A_{t-1}^{-1} v) \in (0, 1]`,
        so the two give identical signs (identical classifier decisions).
    prediction_bound : float or None, default=None
        If set to :math:`B`, predictions are clipped to :math:`[-B, B]` (the loss is counted on
        the clipped prediction). The paper's forecasters need no clipping and do not know
        :math:`B` (its bounds hold for unclipped predictions); clipping can only lower the square
        loss when :math:`|y_t| \le B`.
    standardize : bool, default=True
        Standardise the features and the target online, prequentially: row :math:`t` is
        centred and scaled with the running mean and standard deviation of the rows before it
        (values beyond 5 standard deviations clipped; see
        :class:`~skonline.preprocessing.OnlineStandardScaler`), the forecaster learns the
        standardised target, and each prediction is mapped back to target units with the
        statistics of the rows before it. This gives the forecaster the scale its ridge
        parameter and bandwidth assume, on data as it comes (raw features, targets with an
        offset), and keeps the chunking invariance. ``False``: the paper's forecaster on the raw
        features and targets (what the paper reproductions use; scale the data beforehand).
        ``coef_``, ``b_`` and ``precision_`` then describe the standardised problem. Every row
        enters the running statistics once, whatever its ``sample_weight``.
    forgetting : float in (0, 1], default=0.999
        Forgetting factor :math:`\gamma`, for streams whose target drifts. After each row the
        past is discounted: the forecaster minimises
        :math:`\sum_{s<t} \gamma^{t-s} w_s (y_s - f(x_s))^2 + f^\top R_t f + f(x_t)^2`, a
        ridge regression over an effective window of about :math:`1/(1-\gamma)` rows (1,000 at
        the default), with a regulariser :math:`R_t` that stays near :math:`\lambda I`: the
        mass :math:`(1-\gamma)\lambda m` that discounting removes from it each row is put back
        on :math:`\lceil m(1-\gamma) \rceil` coordinates in turn, so that each coordinate's
        regulariser stays within about :math:`[0.58\lambda, 1.58\lambda]` (plain exponential
        forgetting would let it decay as :math:`\gamma^t \lambda`, and :math:`A_t^{-1}` blow up
        in the directions the data stop exciting). Cost: while :math:`m (1-\gamma) \le 1` the
        discount and the refresh are folded into the row's single pass over :math:`A_t^{-1}`
        (one more multiply-add per entry); beyond, O(:math:`\lceil m(1-\gamma)\rceil` m^2).
        ``forgetting=1.0`` is the paper's forecaster exactly (no discount; what its regret bounds
        and the paper reproductions use). The default was chosen on the development suite of ``benchmarks/defaults.py``
        (data as it comes, chunks of 100 rows predicted before they are learned): with 1.0 the
        forecaster, a ridge regression over the whole history, cannot follow the drifting
        synthetic streams there (gradual weight drift, a turning hyperplane, abrupt concept
        switches), while the default follows them and keeps the stationary streams within the
        benchmark's acceptance margin. Every row is discounted, whatever its
        ``sample_weight``.
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metrics (average online loss). The result does not change.
    clip : float or None, default='deprecated'
        Deprecated alias of ``prediction_bound`` (renamed in 0.1; ``clip`` is removed in 0.2).

    Attributes
    ----------
    transformer_ : transformer or None
        The feature map in use.
    n_components_ : int
        Dimension :math:`m` of the features.
    precision_ : ndarray of shape (m, m)
        :math:`A_t^{-1}`.
    b_ : ndarray of shape (m,)
        :math:`b_t`.
    coef_ : ndarray of shape (m,)
        Ridge weights :math:`A_t^{-1} b_t`.
    n_samples_seen_ : int
    cumulative_loss_ : float
        :math:`\sum_t (y_t - \hat y_t)^2` of the prequential predictions.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    PKAWVRegressor : the same forecaster on Taylor or online Nyström features of the Gaussian kernel.
    KernelAWVRegressor : the exact kernel forecaster (O(t^2) per row).

    Notes
    -----
    ``sample_weight`` (``fit`` / ``partial_fit``) gives weighted least squares: a row of weight
    w enters the covariance as ``w v v'`` (a weighted rank-one update), the targets as ``w y v``
    and the loss as ``w (y - f)^2`` (``cumulative_loss_`` is weighted). An integer weight k gives
    the same final solution as k copies of the row (up to rounding), though not the same
    prequential predictions (the copies would be predicted one after the other). Weights are per
    row: any chunking gives the same state. With ``forgetting < 1`` the integer-weight and
    zero-weight equivalences hold up to the discount: every row, whatever its weight, is a time step
    that discounts the past. Without forgetting a row of weight 0 changes nothing in the model.

    References
    ----------
    V. Vovk. Competitive on-line statistics. International Statistical Review, 2001.
    K. Azoury, M. Warmuth. Relative loss bounds for on-line density estimation with the exponential
    family of distributions. Machine Learning, 2001.
    R. Jézéquel, P. Gaillard, A. Rudi. Efficient online learning with kernels for adversarial large
    scale problems. NeurIPS 2019 (Appendix H.1, Algorithm 1).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.kernel_ridge import AWVRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 3)) * [1.0, 1e3, 1e-3]     # features in any units
    >>> y = X @ [1.0, -2e-3, 500.0] + 100.0 + 0.1 * rng.standard_normal(500)   # and an offset
    >>> reg = AWVRegressor()
    >>> y_online = reg.partial_fit_predict(X, y)   # predict each row, then learn it
    >>> round(float(np.mean((y_online[100:] - y[100:]) ** 2)), 2)
    0.03
    """

    _parameter_constraints = {
        **_LinearAWVMixin._parameter_constraints,
        "transformer": [None, HasMethods(["transform"])],
    }

    #: CSR rows accepted: dense up to 4,096 features, dense blocks of CSR rows beyond (see
    #: ``OnlineMixin._row_container``): the same rows give the same model in either container
    _accept_sparse = True
    _row_container = "dense"

    #: the shared edge-input check feeds raw features of size 1e150; A then has condition number
    #: ~1e300, which no float64 inverse (nor ridge solver) survives. Scale raw features.

    def __init__(self, alpha=1.0, *, transformer=None, algorithm="awv", prediction_bound=None,
                 standardize=True, forgetting=0.999, verbose=0, clip="deprecated"):
        self.alpha = alpha
        self.forgetting = forgetting
        self.transformer = transformer
        self.algorithm = algorithm
        self.prediction_bound = prediction_bound
        self.clip = clip
        self.standardize = standardize
        self.verbose = verbose

    def _expected_failed_checks(self):
        return dict(STANDARDIZE_SAMPLE_WEIGHT_XFAIL) if self.standardize else {}

    def _features(self, X):
        if self.transformer_ is None:
            return X
        V = self.transformer_.transform(X)
        if hasattr(V, "toarray"):
            V = V.toarray()
        return np.ascontiguousarray(V, dtype=np.float64)

    def _allocate(self, chunk):
        t = self.transformer
        if t is None:
            self.transformer_ = None
        else:
            try:
                check_is_fitted(t)
                self.transformer_ = copy.deepcopy(t)
            except NotFittedError:
                self.transformer_ = clone(t).fit(chunk.X)
        m = self._features(chunk.X[:1]).shape[1]
        self.n_components_ = m
        self._init_linear_state(m, 1)

    def _learn(self, chunk):
        V = self._features(chunk.X)
        if V.shape[1] != self.n_components_:
            raise ValueError(
                f"The transformer returned {V.shape[1]} features; the forecaster was set up for "
                f"{self.n_components_}."
            )
        if not np.all(np.isfinite(V)):
            raise ValueError("The transformer returned non-finite features.")
        out = np.zeros((V.shape[0], 1))
        cum_loss = np.array([self.cumulative_loss_])
        status = core.awv_pass_features(
            V, chunk.y.reshape(-1, 1), chunk.sample_weight, self._awv_settings(), self._linear_state(cum_loss),
            out,
        )
        raise_if_nonfinite(status, what="predictions")
        self.cumulative_loss_ = float(cum_loss[0])
        return out

    def _predict_targets(self, X):
        """Predict each row as the next round of the stream, without learning it.

        AWV: :math:`\\hat y(x) = v^\\top A_t^{-1} b_t / (1 + v^\\top A_t^{-1} v)` with
        :math:`v = \\phi(x)`; ridge: :math:`v^\\top A_t^{-1} b_t`.
        """
        check_is_fitted(self, "_precision_")
        X = self._predict_input(X, dtype=np.float64, order="C")
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._linear_predict(self._features(X))[:, 0]
        return check_finite_output(out, self, "predictions")
