"""Exact Kernel-AWV (and online kernel ridge regression), O(t^2) per row."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import OnlineRegressorMixin, SampleWeightMixin, raise_if_nonfinite, state_scalar
from ..utils import _scaling
from ..utils._deprecation import renamed_constraint
from ..utils._online_kernel import CAP_NNZ, SPARSE_LAYOUT_MIN_FEATURES, rbf_matrix_sparse, rbf_matrix_t, sparse_rows
from ..utils.validation import check_csr_arrays
from . import _core as core
from ._base import (
    _CAP_ROWS,
    STANDARDIZE_SAMPLE_WEIGHT_XFAIL,
    _GrowingStateMixin,
    awv_settings,
    clip_bound,
    first_capacity,
    grow,
    linear_predict,
    next_capacity,
    resolve_sigma,
    warn_growth,
    warn_wide_sparse,
)

__all__ = ["KernelAWVRegressor"]

_KERNELS = {"rbf": 0, "linear": 1}
#: the switch's pivoted Cholesky stops once every residual k(x, x) - ||phi(x)||^2 is below this
#: fraction of the largest diagonal entry (the stored rows are then in the dictionary's span)
_PIVOT_TOL = 1e-10


class KernelAWVRegressor(_GrowingStateMixin, SampleWeightMixin, OnlineRegressorMixin, BaseEstimator):
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
    stores every input and the Cholesky factor :math:`L_t` of :math:`K_t + \lambda I`, grown by
    one row per round: O(t^2) time and memory at round t. Implementation: with
    :math:`l = L_{t-1}^{-1} k_{t-1}(x_t)` (forward substitution), :math:`w = L_{t-1}^{-1} y_{1:t-1}`
    and :math:`s_t^2 = k(x_t, x_t) - l^\top l`, the ridge prediction is :math:`l^\top w` and the AWV
    prediction is that divided by :math:`1 + s_t^2/\lambda`; the new row of the factor is
    :math:`(l^\top, \sqrt{s_t^2 + \lambda})` (the Schur complement, :math:`\ge \lambda` in exact
    arithmetic, is floored there). No inverse is formed, so predictions stay within about 1e-6
    (relative) of a direct solve of the kernel system down to :math:`\lambda = 10^{-8}`.

    **Budget** (``max_rows``): after ``max_rows`` learned rows the forecaster switches to PKAWV on
    a fixed Nyström dictionary of ``n_components`` of the stored rows, chosen by a greedy pivoted
    Cholesky of their kernel matrix (the point of largest residual
    :math:`k(x, x) - \|\phi(x)\|^2` first). The projected forecaster starts from the stored rows
    learned on that map (:math:`A = \lambda I + \sum_s w_s \phi_s\phi_s^\top`,
    :math:`b = \sum_s w_s y_s \phi_s`), the stored rows are released, and every later row is
    learned at O(m d + m^2) (:math:`m` = ``n_components``), whatever the length of the stream.
    The regret bound of Proposition 1 covers the exact rounds; after them Theorem 3 applies with
    the dictionary's projection. **Memory** (bytes): :math:`8\,(c^2 + c\,(d + 3))` for a buffer
    capacity :math:`c` (the first power-of-two multiple of 256 holding the rows stored, at most
    ``max_rows``) until the switch, then :math:`8\,(2m^2 + m\,(d + 2))`.

    **Wide rows** (more than 4,096 features): every chunk reaches the forecaster as CSR rows (dense
    rows are made sparse; standardised by scaling only), and the rows learned are stored sparse
    (entries, column indices, row pointers, squared norms): a kernel value costs O(nnz), as
    :math:`\|x\|^2 + \|x'\|^2 - 2 x^\top x'` (round-off apart, the same values as the dense
    computation), the dictionary of the switch is taken from the sparse rows and each later row
    costs O(m nnz + m^2). Memory: :math:`d` above is then replaced by about 12 bytes per stored
    entry (1.5 words), plus 2 words per row, and a scratch vector of :math:`d` floats. The defaults were
    chosen by measurement on the streams of ``benchmarks/defaults.py`` (accuracy on their first
    10,000 rows against budgets of 2,048 and 4,096 exact rows, and the time of the exact phase);
    the cost per row and the memory measured at the defaults are in
    ``benchmarks/results/kernel_ridge_budget.md``. ``max_rows=None``: the paper's exact
    forecaster on the whole stream.

    Parameters
    ----------
    alpha : float, default=1.0
        Ridge parameter :math:`\lambda > 0` (the paper's lambda; scikit-learn's ``Ridge`` and
        ``KernelRidge`` call it ``alpha``): the forecaster minimises
        :math:`\sum_{s<t} (y_s - f(x_s))^2 + \lambda \|f\|^2 + f(x_t)^2`. The paper uses 1.
    kernel : {'rbf', 'linear'}, default='rbf'
        ``'rbf'``: the Gaussian kernel :math:`\exp(-\|x - x'\|^2 / (2\sigma^2))`; ``'linear'``:
        :math:`x^\top x'` (then this equals :class:`AWVRegressor` on raw features).
    max_rows : int or None, default=1024
        Budget: the rows learned exactly (the paper has none); past it the forecaster switches to
        a Nyström projection (see above). ``None``: no budget, O(t^2) time and memory at round t
        (a ``StateGrowthWarning`` when the state passes 1 GiB: at row 8,193 the buffers double to
        16,384 rows, 2.1 GB).
    n_components : int, default=192
        Size of the Nyström dictionary the forecaster switches to at ``max_rows`` (at most the
        rows stored, and the rank of their kernel matrix: with the linear kernel the projection
        keeps the exact forecaster).
    sigma : float or 'auto', default='auto'
        Bandwidth of the Gaussian kernel :math:`\exp(-\|x - x'\|^2 / (2\sigma^2))`
        (``gamma = 1 / (2 sigma**2)`` in scikit-learn's ``rbf_kernel``). ``'auto'``:
        :math:`\sqrt{d}` for :math:`d` features, so that two typical standardised rows
        (squared distance about :math:`2d`, see ``standardize``) have kernel value about
        :math:`e^{-1}`, in the spirit of scikit-learn's ``gamma='scale'``. The paper uses 1 on
        features scaled to [-1, 1]. On wide sparse rows (more than 4,096 features, scaled but
        not centred) two rows are much closer than that (their squared distance is about twice
        the number of non-zeros times the squared scaled values, not :math:`2d`), so
        :math:`\sqrt{d}` gives kernel values near 1 (a nearly constant kernel, which learns
        little beyond the mean): set ``sigma`` from the rows' typical distance there.
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
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metrics (average online loss). The result does not change.
    clip : float or None, default='deprecated'
        Deprecated alias of ``prediction_bound`` (renamed in 0.1; ``clip`` is removed in 0.2).

    Attributes
    ----------
    X_fit_ : ndarray or CSR matrix of shape (n_rows_stored_, n_features)
        The inputs learned so far (while the forecaster is exact); a CSR matrix for wide rows
        (more than 4,096 features).
    dual_coef_ : ndarray of shape (n_rows_stored_,)
        :math:`(K_t + \lambda I)^{-1} y_{1:t}`: the ridge solution is
        :math:`\sum_s \mathrm{dual\_coef}_s\, k(x_s, \cdot)` (while the forecaster is exact).
    sigma_ : float
        The kernel bandwidth in use (``sigma``; ``'auto'``: ``sqrt(n_features_in_)``).
    n_samples_seen_ : int
    n_rows_stored_ : int
        Rows learned exactly (at most ``max_rows``).
    n_rows_after_budget_ : int
        Rows learned by the projected forecaster, past ``max_rows``.
    n_components_ : int
        Dictionary size of the projected forecaster (0 while the forecaster is exact).
    components_ : ndarray or CSR matrix of shape (n_components_, n_features_in_)
        Its dictionary points (standardised, as the forecaster saw them); a CSR matrix for wide
        rows.
    cumulative_loss_ : float
        :math:`\sum_t (y_t - \hat y_t)^2` of the prequential predictions.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    PKAWVRegressor : the same forecaster projected on Taylor or Nyström features, O(m^2) per row.
    sklearn.kernel_ridge.KernelRidge : the batch kernel ridge regression.

    Notes
    -----
    ``sample_weight`` (``fit`` / ``partial_fit``) gives weighted least squares: a row of weight
    w enters the covariance as ``w v v'`` (a weighted rank-one update), the targets as ``w y v``
    and the loss as ``w (y - f)^2`` (``cumulative_loss_`` is weighted). An integer weight k gives
    the same final solution as k copies of the row (up to rounding), though not the same
    prequential predictions (the copies would be predicted one after the other). Weights are per
    row: any chunking gives the same state. A row of weight 0 is predicted but not stored (it is
    not in ``X_fit_``) and changes nothing in the model.

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
    >>> reg = KernelAWVRegressor(alpha=0.1, sigma=0.5, standardize=False)   # features in [-1, 1]
    >>> y_online = reg.partial_fit_predict(X, y)
    >>> bool(np.mean((y_online[200:] - y[200:]) ** 2) < 0.01)
    True
    """

    #: retired parameter names (one release): old -> new (skonline.utils._deprecation)
    _renamed_params = {"clip": "prediction_bound"}
    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions(set(_KERNELS))],
        "sigma": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "max_rows": [Interval(Integral, 1, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "algorithm": [StrOptions({"awv", "ridge"})],
        "prediction_bound": [Interval(Real, 0, None, closed="neither"), None],
        "clip": renamed_constraint([Interval(Real, 0, None, closed="neither"), None]),
        "standardize": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(self, alpha=1.0, *, kernel="rbf", sigma="auto", max_rows=1024, n_components=192, algorithm="awv",
                 prediction_bound=None, standardize=True, verbose=0, clip="deprecated"):
        self.alpha = alpha
        self.kernel = kernel
        self.sigma = sigma
        self.max_rows = max_rows
        self.n_components = n_components
        self.algorithm = algorithm
        self.prediction_bound = prediction_bound
        self.clip = clip
        self.standardize = standardize
        self.verbose = verbose

    #: CSR rows accepted: dense rows up to 4,096 features, CSR rows beyond, whatever the caller
    #: passed (see ``OnlineMixin._row_container``): the same rows give the same model in either
    #: container. Wide rows are stored sparse (a kernel value costs O(nnz), not O(d))
    _accept_sparse = True
    _row_container = "stream"

    def _sparse_layout(self):
        """Whether the rows are kept sparse: more than ``_scaling.WIDE_FEATURES`` features, the
        width at which every chunk reaches the pass as CSR rows (from the shape only)."""
        return self.n_features_in_ > _scaling.WIDE_FEATURES

    def _expected_failed_checks(self):
        return dict(STANDARDIZE_SAMPLE_WEIGHT_XFAIL) if self.standardize else {}

    def _resolve_settings(self, chunk):
        """``sigma_``: the bandwidth in use (``'auto'`` resolved); advice on wide rows."""
        d = chunk.X.shape[1]
        self.sigma_ = resolve_sigma(self.sigma, d)
        if self.kernel == "rbf" and d >= SPARSE_LAYOUT_MIN_FEATURES and self.max_rows is not None:
            warn_wide_sparse(self, d, f"max_rows={self.max_rows} exact rows, then n_components={self.n_components} "
                                      "Nystrom components,")

    def _gamma(self):
        return 1.0 / (2.0 * self.sigma_ ** 2)

    def _allocate(self, chunk):
        d = chunk.X.shape[1]
        cap = first_capacity(_CAP_ROWS, self.max_rows)
        if self._sparse_layout():  # the rows learned, sparse: row s in _X_ptr_[s]:_X_ptr_[s + 1]
            self._X_val_, self._X_ind_ = np.zeros(cap * CAP_NNZ), np.zeros(cap * CAP_NNZ, dtype=np.int64)
            self._X_ptr_, self._X_sq_ = np.zeros(cap + 1, dtype=np.int64), np.zeros(cap)
        else:
            self._X_buf_ = np.zeros((d, cap))  # the rows learned, as columns
        self._chol_buf_ = np.zeros((cap, cap))  # L' (upper triangular)
        self._w_buf_ = np.zeros((cap, 1))
        self._y_buf_ = np.zeros((cap, 1))
        self._sw_buf_ = np.zeros(cap)
        self._n_stored_ = np.zeros(1, dtype=np.int64)  # rows learned and stored
        self._n_after_budget_ = np.zeros(1, dtype=np.int64)  # rows learned by the projected forecaster

    def _is_projected(self):
        return hasattr(self, "_precision_")

    def _records(self, cum_loss):
        """The kernel's and the forecaster's settings, the store of the rows learned
        (:class:`~skonline.kernel_ridge._core.DenseStore` or
        :class:`~skonline.kernel_ridge._core.SparseStore`, its dictionary slot) and the
        :class:`~skonline.kernel_ridge._core.KernelAWVState` over the state attributes."""
        kernel = core.KernelSettings(
            kernel=_KERNELS[self.kernel], gamma=self._gamma(),
            max_rows=np.iinfo(np.int64).max if self.max_rows is None else int(self.max_rows),
        )
        state = core.KernelAWVState(
            L=self._chol_buf_, W=self._w_buf_, Y=self._y_buf_, sw=self._sw_buf_,
            n_stored=self._n_stored_, cum_loss=cum_loss, work=self._work(),
        )
        return kernel, awv_settings(self), self._store(), state

    def _store(self):
        if self._sparse_layout():
            none = np.zeros(0)
            return core.SparseStore(D_val=self._X_val_, D_idx=self._X_ind_, D_ptr=self._X_ptr_, D_sq=self._X_sq_,
                                    H_val=none, H_idx=np.zeros(0, dtype=np.int64),
                                    H_ptr=np.zeros(1, dtype=np.int64), H_sq=none)
        return core.DenseStore(XdT=self._X_buf_, XhT=np.zeros((0, 0)))

    def _work(self):
        """Scratch of the passes: zeros of the rows' width (sparse layout), else empty."""
        return np.zeros(self.n_features_in_ if self._sparse_layout() else 0)

    def _rows(self, X):
        """The validated (standardised) rows as the passes take them: dense rows, or
        :class:`~skonline.kernel_ridge._core.SparseRows` in the sparse layout."""
        if not self._sparse_layout():
            return X
        return sparse_rows(X)

    def _stored_csr(self):
        """The rows learned (sparse layout), as a CSR matrix (n_rows_stored_, n_features_in_)."""
        t = int(self._n_stored_[0])
        nnz = int(self._X_ptr_[t])
        return sp.csr_matrix((self._X_val_[:nnz], self._X_ind_[:nnz], self._X_ptr_[: t + 1]),
                             shape=(t, self.n_features_in_))

    def _check_loaded_state(self):
        """The sparse rows of a loaded pickle (stored rows, or the dictionary once projected) are a
        valid CSR structure (compiled passes index with them unchecked)."""
        if not self._sparse_layout():
            return
        d = self.n_features_in_
        if self._is_projected():
            check_csr_arrays(self._dict_val_, self._dict_ind_, self._dict_ptr_, (self._precision_.shape[0], d))
        else:
            check_csr_arrays(self._X_val_, self._X_ind_, self._X_ptr_, (int(self._n_stored_[0]), d))

    def _buffer_layout(self):
        if self._is_projected():
            return {}
        t = int(self._n_stored_[0])
        if self._sparse_layout():
            nnz = int(self._X_ptr_[t])
            rows = {"_X_val_": ((nnz,), False), "_X_ind_": ((nnz,), False), "_X_ptr_": ((t + 1,), False),
                    "_X_sq_": ((t,), False)}
        else:
            rows = {"_X_buf_": ((self._X_buf_.shape[0], t), False)}
        return {
            **rows,
            "_chol_buf_": ((t, t), False),
            "_w_buf_": ((t, 1), False),
            "_y_buf_": ((t, 1), False),
            "_sw_buf_": ((t,), False),
        }

    def _grow(self):
        cap = next_capacity(self._chol_buf_.shape[0], self.max_rows)
        if self._sparse_layout():
            self._X_ptr_ = grow(self._X_ptr_, (cap + 1,))  # zeros past the rows in use
            self._X_sq_ = grow(self._X_sq_, (cap,))
        else:
            self._X_buf_ = grow(self._X_buf_, (self._X_buf_.shape[0], cap))
        self._chol_buf_ = grow(self._chol_buf_, (cap, cap))
        self._w_buf_ = grow(self._w_buf_, (cap, 1))
        self._y_buf_ = grow(self._y_buf_, (cap, 1))
        self._sw_buf_ = grow(self._sw_buf_, (cap,))

    def _grow_nnz(self, nnz):
        """Sparse layout: double the entry capacity until a row of ``nnz`` entries fits."""
        need = int(self._X_ptr_[self._n_stored_[0]]) + nnz
        n = max(self._X_val_.shape[0], 1)
        while n < need:
            n *= 2
        self._X_val_ = grow(self._X_val_, (n,))
        self._X_ind_ = grow(self._X_ind_, (n,))

    def _state_bytes(self, n):
        """Bytes of the state holding ``n`` rows (at the capacity the buffers would have); the
        sparse layout counts a row as 12 bytes per entry at the current density, plus 16."""
        cap = first_capacity(_CAP_ROWS, self.max_rows)
        while cap < n and next_capacity(cap, self.max_rows) > cap:
            cap = next_capacity(cap, self.max_rows)
        if self._sparse_layout():
            t = int(self._n_stored_[0])
            d = 1.5 * (self._X_ptr_[t] / t if t else CAP_NNZ) + 2  # 8-byte words per stored row
        else:
            d = self._X_buf_.shape[0]
        return int(8 * (cap * cap + cap * (d + 3)))

    def _project(self):
        """The budget is reached: switch to PKAWV on a Nyström dictionary of the stored rows."""
        t, d = int(self._n_stored_[0]), self.n_features_in_
        m = min(int(self.n_components), t)
        U, P = np.zeros((m, m)), np.zeros((m, m))
        b, piv = np.zeros((1, m)), np.zeros(m, dtype=np.int64)
        sparse = self._sparse_layout()
        if sparse:
            rows = core.SparseRows(data=self._X_val_, indices=self._X_ind_, indptr=self._X_ptr_[: t + 1],
                                   n_features=d)
        else:
            rows = np.ascontiguousarray(self._X_buf_[:, :t].T)
        m = core.pivoted_projection(rows, self._store(), self._y_buf_, self._sw_buf_, t, _KERNELS[self.kernel],
                                    self._gamma(), float(self.alpha), m, _PIVOT_TOL, self._work(), U, P, b, piv)
        piv = piv[:m].copy()
        if sparse:  # the dictionary: the stored rows at the pivots
            C = self._stored_csr()[piv]
            self._dict_val_ = np.ascontiguousarray(C.data, dtype=np.float64)
            self._dict_ind_ = C.indices.astype(np.int64)
            self._dict_ptr_ = C.indptr.astype(np.int64)
            self._dict_sq_ = self._X_sq_[piv].copy()
        else:
            self._dict_XT_ = np.ascontiguousarray(self._X_buf_[:, piv])
        self._chol_t_ = np.ascontiguousarray(U[:m, :m])
        self._precision_ = np.ascontiguousarray(P[:m, :m])
        self._b_ = np.ascontiguousarray(b[:, :m])
        self._dict_idx_ = piv
        self._refresh_ = np.zeros(1, dtype=np.int64)
        # the stored rows are released
        if sparse:
            self._X_val_, self._X_ind_ = np.zeros(0), np.zeros(0, dtype=np.int64)
            self._X_ptr_, self._X_sq_ = np.zeros(1, dtype=np.int64), np.zeros(0)
        else:
            self._X_buf_ = np.zeros((d, 0))
        self._chol_buf_ = np.zeros((0, 0))
        self._w_buf_, self._y_buf_, self._sw_buf_ = np.zeros((0, 1)), np.zeros((0, 1)), np.zeros(0)

    def _frozen_map(self):
        """The fixed map of the dictionary: :class:`~skonline.kernel_ridge._core.DenseMap` or
        :class:`~skonline.kernel_ridge._core.SparseMap`."""
        m, kernel = self._precision_.shape[0], _KERNELS[self.kernel]
        if self._sparse_layout():
            return core.SparseMap(D_val=self._dict_val_, D_idx=self._dict_ind_, D_ptr=self._dict_ptr_,
                                  D_sq=self._dict_sq_, U=self._chol_t_, m=m, gamma=self._gamma(),
                                  work=np.zeros(self.n_features_in_), kernel=kernel)
        return core.DenseMap(XdT=self._dict_XT_, U=self._chol_t_, m=m, gamma=self._gamma(), kernel=kernel)

    def _dictionary_csr(self):
        m = self._precision_.shape[0]
        return sp.csr_matrix((self._dict_val_, self._dict_ind_, self._dict_ptr_), shape=(m, self.n_features_in_))

    def _learn(self, chunk):
        X = self._rows(chunk.X)
        Y = chunk.y.reshape(-1, 1)
        sw = chunk.sample_weight
        n = chunk.n_samples
        out = np.zeros((n, 1))
        cum_loss = np.array([self.cumulative_loss_])
        before = int(self._n_stored_[0])
        settings = awv_settings(self)
        start = 0
        while start < n:
            if self._is_projected():
                state = core.LinearState(P=self._precision_, b=self._b_, cum_loss=cum_loss, refresh=self._refresh_)
                self._n_after_budget_[0] += n - start
                status = core.awv_pass_frozen(X, Y, sw, start, self._frozen_map(), settings, state, out)
                raise_if_nonfinite(status, what="predictions")
                break
            kernel, settings, store, state = self._records(cum_loss)  # again after a growth: new buffers
            start, status = core.kernel_awv_pass(X, Y, sw, start, kernel, settings, store, state, out)
            raise_if_nonfinite(status, what="predictions")
            if start == n:
                break
            t = int(self._n_stored_[0])
            if self.max_rows is not None and t == int(self.max_rows):
                self._project()
            elif t == self._chol_buf_.shape[0]:
                self._grow()
            else:  # sparse layout: the row's entries do not fit
                self._grow_nnz(int(X.indptr[start + 1] - X.indptr[start]))
        self.cumulative_loss_ = float(cum_loss[0])
        if self.max_rows is None:  # reaching the budget is the designed switch: no warning
            warn_growth(self, what="the stored rows", param="max_rows", before=before,
                        after=int(self._n_stored_[0]), budget=None, nbytes=self._state_bytes, policy="")
        return out

    n_rows_stored_ = state_scalar("_n_stored_", int, "Rows learned exactly (at most ``max_rows``).")
    n_rows_after_budget_ = state_scalar(
        "_n_after_budget_", int, "Rows learned by the projected forecaster once ``max_rows`` was reached."
    )

    @property
    def n_components_(self):
        """Dictionary size of the projected forecaster (0 while the forecaster is exact)."""
        check_is_fitted(self, "_n_stored_")
        return self._precision_.shape[0] if self._is_projected() else 0

    @property
    def components_(self):
        """Dictionary points of the projected forecaster, shape ``(n_components_, n_features_in_)``
        (standardised, as the forecaster saw them); empty while the forecaster is exact."""
        check_is_fitted(self, "_n_stored_")
        sparse = self._sparse_layout()
        if not self._is_projected():
            return sp.csr_matrix((0, self.n_features_in_)) if sparse else np.zeros((0, self.n_features_in_))
        if sparse:
            return self._dictionary_csr().copy()
        return self._dict_XT_.T.copy()

    def _exact_only(self, name):
        check_is_fitted(self, "_n_stored_")
        if self._is_projected():
            raise AttributeError(
                f"{name} is not available: max_rows={self.max_rows} rows were reached and the forecaster "
                "switched to a Nyström projection of them (components_); the stored rows were released."
            )

    @property
    def X_fit_(self):
        self._exact_only("X_fit_")
        if self._sparse_layout():
            return self._stored_csr().copy()
        return self._X_buf_[:, : self._n_stored_[0]].T.copy()

    @property
    def dual_coef_(self):
        self._exact_only("dual_coef_")
        t = int(self._n_stored_[0])
        return solve_triangular(self._chol_buf_[:t, :t], self._w_buf_[:t, 0], lower=False, check_finite=False)

    def _predict_targets(self, X):
        """Predict each row as the next round of the stream, without learning it."""
        check_is_fitted(self, "_n_stored_")
        X = self._predict_input(X, dtype=np.float64, order="C")
        if self._is_projected():
            m = self._precision_.shape[0]
            if self._sparse_layout():
                if self.kernel == "rbf":
                    K = rbf_matrix_sparse(X, self._dictionary_csr(), self._dict_sq_, self._gamma())
                else:
                    K = (X @ self._dictionary_csr().T).toarray()
            elif self.kernel == "rbf":
                K = rbf_matrix_t(X, self._dict_XT_, m, self._gamma())
            else:
                K = X @ self._dict_XT_
            V = solve_triangular(self._chol_t_, K.T, trans="T", lower=False, check_finite=False).T
            return linear_predict(V, self._precision_, self._b_, self.algorithm == "awv", clip_bound(self))[:, 0]
        out = np.zeros((X.shape[0], 1))
        kernel, settings, store, state = self._records(np.zeros(1))
        core.kernel_predict(self._rows(X), kernel, settings, store, state, out)
        return out[:, 0]
