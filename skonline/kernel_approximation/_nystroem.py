"""Nyström features of the Gaussian kernel with a dictionary grown online by KORS."""

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.linalg import solve_triangular
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import Chunk, FeatureTransformerMixin, IgnoresTargetMixin, OnlineMixin
from ..utils._growing import GrowingStateMixin, first_capacity, grow, next_capacity, warn_growth
from ..utils._jit import njit
from ..utils._online_kernel import (
    CAP_COMPONENTS,
    CAP_NNZ,
    SPARSE_LAYOUT_MIN_FEATURES,
    DenseStore,
    KORSDictionaryMixin,
    KORSSettings,
    SparseStore,
    kors_decide,
    kors_insert,
    n_rows,
    new_work,
    rbf_matrix_sparse,
    rbf_matrix_t,
    sparse_rows,
    store_add_dict,
    store_dict_fits,
    store_dict_kernel,
    store_row_begin,
    store_row_end,
)
from ..utils.validation import canonical_csr, check_csr_arrays, readonly, validate_X_chunk

__all__ = ["OnlineNystroem"]

_RHO_TOL = 1e-10
#: CSR chunks are densified this many rows at a time (dense layout)
_BLOCK_ROWS = 1024


@njit
def nystrom_fit_pass(X, draws, start, kors, store, U, Ginv, w, probs, didx, counts):
    """KORS over the rows of ``X`` (the :class:`OnlineNystroem` transformer): grows the dictionary
    kept in ``store`` (:class:`~skonline.utils._online_kernel.DenseStore` with dense rows,
    :class:`~skonline.utils._online_kernel.SparseStore` with CSR rows), ``U = L'`` with
    ``L L' = K_DD``; ``kors``: :class:`~skonline.utils._online_kernel.KORSSettings`.

    ``counts = [t, m, n_skipped, n_after_budget]``; once ``m == kors.max_m`` (the budget) the rows
    are no longer offered to KORS (O(1) per row) and are counted in ``n_after_budget``. Returns
    ``rows_done`` (early when the dictionary's buffers are full).
    """
    gamma = kors.gamma
    cap_m = U.shape[0]
    ln = cap_m + 1
    kD = np.empty(ln)
    phi = np.empty(ln)
    wk = np.empty(ln)
    q = np.empty(ln)
    e = np.empty(ln)
    n = n_rows(X)
    work = new_work(X)
    for i in range(start, n):
        t = counts[0]
        m = counts[1]
        if m >= kors.max_m:  # frozen dictionary: the rows are not offered to KORS (draws unused)
            counts[3] += n - i
            counts[0] = t + n - i
            return n
        if not store_dict_fits(store, X, i, m):
            return i
        xsq = store_row_begin(store, X, i, work)
        store_dict_kernel(store, 0, X, i, m, gamma, xsq, work, e, kD)
        z, p, rho2 = kors_decide(kD, m, U, Ginv, w, kors.mu, kors.eps, kors.beta, draws[i], phi, wk, q)
        if z:
            if rho2 > kors.rho_tol:
                if m == cap_m:
                    store_row_end(store, X, i, work)
                    return i
                kors_insert(m, U, Ginv, w, probs, kors.mu, p, kors.sqrt_weight, phi, math.sqrt(rho2), wk, q)
                store_add_dict(store, X, i, m, xsq)
                didx[m] = t
                counts[1] = m + 1
            else:
                counts[2] += 1
        store_row_end(store, X, i, work)
        counts[0] = t + 1
    return n


class OnlineNystroem(KORSDictionaryMixin, ClassNamePrefixFeaturesOutMixin, FeatureTransformerMixin, TransformerMixin,
                     GrowingStateMixin, IgnoresTargetMixin, OnlineMixin, BaseEstimator):
    r"""Nyström features of the Gaussian kernel; the dictionary grows online by KORS.

    Each row of the stream is offered to KORS (Kernel Online Row Sampling, Calandriello et al.
    2017), which estimates its :math:`\mu`-ridge leverage score against the current weighted
    dictionary :math:`D` and adds it with probability

    .. math::
        p_t = \min\big(\beta \tilde\tau_t, 1\big), \qquad
        \tilde\tau_t = (1 + \varepsilon) \frac{s_t^2}{s_t^2 + \mu}, \qquad
        s_t^2 = k(x_t, x_t) - \bar k_t^\top (W K_{DD} W + \mu I)^{-1} \bar k_t,

    with :math:`\bar k_t = W k_D(x_t)` and :math:`W` the diagonal of KORS weights. Points are never
    removed. :meth:`transform` maps :math:`x` to :math:`\phi(x) = L^{-1} k_D(x)` with
    :math:`L L^\top = K_{DD}` (Cholesky): the coordinates of the projection of
    :math:`k(x, \cdot)` onto :math:`\mathrm{span}\{k(x_j, \cdot), j \in D\}` in an orthonormal
    basis, so :math:`\phi(x)^\top \phi(x')` is the Nyström approximation
    :math:`k_D(x)^\top K_{DD}^{-1} k_D(x')` (the same Gram as scikit-learn's
    :class:`~sklearn.kernel_approximation.Nystroem` on the same points). Growing the dictionary
    appends coordinates and leaves the existing ones unchanged.

    Input: dense or CSR rows; the same rows as CSR or dense give the same dictionary and the same
    features (CSR rows are densified a block at a time below 4,096 features; above, the points are
    kept as sparse rows and kernel values come from sparse dot products).

    **The output width grows with** :meth:`partial_fit`: ``transform`` uses the dictionary as it
    is now (``n_components_`` columns). This is the map of the paper's PKAWV-Nyström
    (:class:`~skonline.kernel_ridge.PKAWVRegressor` with ``features='nystrom'`` re-projects its
    past on the grown span; a fixed-width model downstream of this transformer would not).

    Parameters
    ----------
    sigma : float, default=1.0
        Bandwidth of the Gaussian kernel :math:`\exp(-\|x-x'\|^2/(2\sigma^2))`
        (``gamma = 1 / (2 sigma**2)`` in scikit-learn's ``rbf_kernel``).
    mu : float, default=1.0
        Ridge level :math:`\mu` of the leverage scores (the paper's experiments: 1).
    beta : float, default=1.0
        Oversampling factor :math:`\beta` (theory :math:`12\log(n/\delta)`; experiments 1).
    eps : float, default=0.5
        Accuracy :math:`\varepsilon` of the leverage-score estimates.
    kors_weighting : {'inverse_p', 'inverse_sqrt_p'}, default='inverse_p'
        Weight a point added with probability :math:`p` receives in :math:`W`: :math:`1/p` as in the
        paper's code (Jézéquel et al. 2019, Appendix H.2) or :math:`1/\sqrt p`, the unbiased
        sampling-matrix convention. ``'inverse_p'`` gives smaller dictionaries.
    max_components : int or None, default=192
        Budget on the dictionary size :math:`m` (the paper has none). Until it is reached
        :meth:`partial_fit` costs O(m d + m^2) per row; then the dictionary freezes: later rows
        are not offered to KORS (counted in ``n_rows_after_budget_``; :meth:`partial_fit` then
        costs O(1) per row) and the map stops changing. :meth:`transform` costs
        :math:`O(n m (d + m))`. KORS's accuracy guarantee (Calandriello et al., Jézéquel et al.
        Proposition 5) then covers the rows seen before the budget only; later rows may be
        approximated less well. **Memory** (bytes): :math:`8 (2c^2 + c(d + 3))` for a buffer
        capacity :math:`c` (the first power-of-two multiple of 16 holding the dictionary, at most
        ``max_components``); from 4,096 features on the points are kept as sparse rows and
        :math:`d` is replaced by :math:`1.5 z`, :math:`z` the non-zeros of a stored row. The
        default is :class:`~skonline.kernel_ridge.PKAWVRegressor`'s. ``None``: no budget (a
        ``StateGrowthWarning`` when the state passes 1 GiB).
    random_state : int, RandomState instance, Generator or None, default=None
        Source of the Bernoulli draws (one uniform per row, so any chunking gives the same
        dictionary).
    verbose : int, default=0
        Print progress while learning, in the format every estimator uses (user guide,
        *Progress on long streams*); the result does not change.

    Attributes
    ----------
    n_components_ : int
        Dictionary size (output width of :meth:`transform`).
    components_ : ndarray or CSR matrix of shape (n_components_, n_features_in_)
        Dictionary points (a CSR matrix from 4,096 features on).
    component_indices_ : ndarray of shape (n_components_,)
        Their positions in the stream (0-based).
    component_weights_, component_probabilities_ : ndarray of shape (n_components_,)
        KORS weights and inclusion probabilities.
    n_skipped_components_ : int
        Sampled points not added because already in the span to 1e-10 (squared residual).
    n_rows_after_budget_ : int
        Rows seen after the dictionary reached ``max_components`` (not offered to KORS).
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    TaylorFeatures : data-independent features of the same kernel.
    sklearn.kernel_approximation.Nystroem : batch Nyström with uniformly sampled components.

    References
    ----------
    D. Calandriello, A. Lazaric, M. Valko. Efficient second-order online kernel learning with
    adaptive embedding. NeurIPS 2017 (KORS).
    R. Jézéquel, P. Gaillard, A. Rudi. Efficient online learning with kernels for adversarial large
    scale problems. NeurIPS 2019 (Section 3.2, Proposition 5).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from skonline.kernel_approximation import OnlineNystroem
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(2000, 2))
    >>> nys = OnlineNystroem(sigma=1.0, mu=1e-3, random_state=0)
    >>> for chunk in np.array_split(X, 10):
    ...     nys = nys.partial_fit(chunk)
    >>> Z = nys.transform(X[:200])
    >>> Z.shape[1] == nys.n_components_
    True
    >>> bool(np.abs(Z @ Z.T - rbf_kernel(X[:200], gamma=0.5)).max() < 0.01)
    True
    """

    _no_sample_weight_reason = " (KORS samples the dictionary by ridge leverage scores: no loss to weigh)"

    _parameter_constraints = {
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "mu": [Interval(Real, 0, None, closed="neither")],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "eps": [Interval(Real, 0, None, closed="left")],
        "kors_weighting": [StrOptions({"inverse_p", "inverse_sqrt_p"})],
        "max_components": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator],
        "verbose": ["verbose"],
    }

    def __init__(self, sigma=1.0, *, mu=1.0, beta=1.0, eps=0.5, kors_weighting="inverse_p", max_components=192,
                 random_state=None, verbose=0):
        self.sigma = sigma
        self.mu = mu
        self.beta = beta
        self.eps = eps
        self.kors_weighting = kors_weighting
        self.max_components = max_components
        self.random_state = random_state
        self.verbose = verbose

    def _gamma(self):
        return 1.0 / (2.0 * float(self.sigma) ** 2)

    # ------------------------------------------------------------------ streaming hooks
    _accept_sparse = True

    def _validate_chunk(self, X, y=None, *, reset, from_fit):
        X = validate_X_chunk(self, X, reset=reset, accept_sparse=True)
        return Chunk(X.shape[0], X=X)

    def _sparse_layout(self):
        return bool(getattr(self, "_sparse_", False))

    def _rows(self, X):
        """The rows in the layout's form: ``(a, b, rows)`` blocks (dense: CSR rows densified 1,024
        at a time; sparse layout: one :class:`~skonline.utils._online_kernel.SparseRows`)."""
        n = X.shape[0]
        if self._sparse_layout():
            Z = canonical_csr(X if sp.issparse(X) else sp.csr_matrix(X))
            yield 0, n, sparse_rows(Z), Z
            return
        step = _BLOCK_ROWS if sp.issparse(X) else max(n, 1)
        for a in range(0, n, step):
            b = min(n, a + step)
            Z = readonly(np.ascontiguousarray(X[a:b].toarray() if sp.issparse(X) else X[a:b], dtype=np.float64))
            yield a, b, Z, Z

    def _allocate(self, chunk):
        del self.cumulative_loss_  # set by the streaming contract; a transformer has no loss
        d, cm = chunk.X.shape[1], first_capacity(CAP_COMPONENTS, self.max_components)
        self._sparse_ = d >= SPARSE_LAYOUT_MIN_FEATURES  # the layout: from the shape only
        if self._sparse_layout():
            self._dict_val_, self._dict_ind_ = np.zeros(cm * CAP_NNZ), np.zeros(cm * CAP_NNZ, dtype=np.int64)
            self._dict_ptr_, self._dict_sq_ = np.zeros(cm + 1, dtype=np.int64), np.zeros(cm)
        else:
            self._dict_XT_ = np.zeros((d, cm))  # the dictionary points, as columns
        self._chol_t_ = np.zeros((cm, cm))  # L' (upper triangular), L L' = K_DD
        self._kors_inv_ = np.zeros((cm, cm))
        self._kors_w_ = np.zeros(cm)
        self._kors_p_ = np.zeros(cm)
        self._dict_idx_ = np.zeros(cm, dtype=np.int64)
        self._counts_ = np.zeros(4, dtype=np.int64)  # rows seen, components, skipped, dropped (budget)

    def _check_loaded_state(self):
        """The sparse dictionary rows of a loaded pickle are a valid CSR structure."""
        if self._sparse_layout():
            check_csr_arrays(self._dict_val_, self._dict_ind_, self._dict_ptr_,
                             (int(self._counts_[1]), self.n_features_in_))

    def _buffer_layout(self):
        m = int(self._counts_[1])
        layout = {
            "_chol_t_": ((m, m), False),
            "_kors_w_": ((m,), False),
            "_kors_p_": ((m,), False),
            "_dict_idx_": ((m,), False),
            "_kors_inv_": ((m, m), True),
        }
        if self._sparse_layout():
            nd = int(self._dict_ptr_[m])
            layout.update({"_dict_val_": ((nd,), False), "_dict_ind_": ((nd,), False),
                           "_dict_ptr_": ((m + 1,), False), "_dict_sq_": ((m,), False)})
        else:
            layout["_dict_XT_"] = ((self._dict_XT_.shape[0], m), False)
        return layout

    def _store(self):
        if self._sparse_layout():
            e, z = np.zeros(0), np.zeros(0, dtype=np.int64)
            return SparseStore(D_val=self._dict_val_, D_idx=self._dict_ind_, D_ptr=self._dict_ptr_,
                               D_sq=self._dict_sq_, H_val=e, H_idx=z, H_ptr=z, H_sq=e)
        return DenseStore(XdT=self._dict_XT_, XhT=np.zeros((self._dict_XT_.shape[0], 0)))

    def _grow(self, rows, row):
        """The pass stopped before ``row``: double the entries (sparse layout) or the points."""
        m = int(self._counts_[1])
        if self._sparse_layout():
            nnz = int(rows.indptr[row + 1] - rows.indptr[row])
            if self._dict_ptr_[m] + nnz > self._dict_val_.shape[0]:
                n = 2 * self._dict_val_.shape[0]
                self._dict_val_, self._dict_ind_ = grow(self._dict_val_, (n,)), grow(self._dict_ind_, (n,))
                return
        cm0 = self._chol_t_.shape[0]
        cm = next_capacity(cm0, self.max_components)
        if self._sparse_layout():
            self._dict_ptr_ = grow(self._dict_ptr_, (cm + 1,))  # zeros past the points in use
            self._dict_sq_ = grow(self._dict_sq_, (cm,))
        else:
            self._dict_XT_ = grow(self._dict_XT_, (self._dict_XT_.shape[0], cm))
        self._chol_t_ = grow(self._chol_t_, (cm, cm))
        self._kors_inv_ = grow(self._kors_inv_, (cm, cm))
        for name in ("_kors_w_", "_kors_p_", "_dict_idx_"):
            setattr(self, name, grow(getattr(self, name), (cm,)))

    def _state_bytes(self, m):
        """Bytes of the dictionary state holding ``m`` points (at the capacity it would have; the
        sparse layout counts 12 bytes per stored entry at the current density)."""
        cap = first_capacity(CAP_COMPONENTS, self.max_components)
        while cap < m and next_capacity(cap, self.max_components) > cap:
            cap = next_capacity(cap, self.max_components)
        if self._sparse_layout():
            mc = int(self._counts_[1])
            d = 1.5 * (self._dict_ptr_[mc] / mc if mc else CAP_NNZ)
        else:
            d = self._dict_XT_.shape[0]
        return int(8 * (2 * cap * cap + cap * (d + 3)))

    def _kors_settings(self):
        big = np.iinfo(np.int64).max
        return KORSSettings(
            gamma=self._gamma(), mu=float(self.mu), eps=float(self.eps), beta=float(self.beta),
            sqrt_weight=self.kors_weighting == "inverse_sqrt_p", rho_tol=_RHO_TOL,
            max_m=big if self.max_components is None else int(self.max_components), max_hist=big, kernel=0,
        )

    def _learn(self, chunk):
        X = chunk.X
        draws = self._rng_.random(X.shape[0])
        before = int(self._counts_[1])
        kors = self._kors_settings()
        for a, b, rows, _ in self._rows(X):
            start = 0
            while True:
                start = nystrom_fit_pass(rows, draws[a:b], start, kors, self._store(), self._chol_t_,
                                         self._kors_inv_, self._kors_w_, self._kors_p_, self._dict_idx_,
                                         self._counts_)
                if start == b - a:
                    break
                self._grow(rows, start)
        if self.max_components is None:  # reaching the budget is the designed steady state: no warning
            warn_growth(self, what="the dictionary", param="max_components", before=before,
                        after=int(self._counts_[1]), budget=None, nbytes=self._state_bytes, policy="")

    _fitted_attribute = "_counts_"
    _transform_order = "C"

    def _transform(self, X):
        """Nyström features with the current dictionary: :math:`L^{-1} k_D(x)`."""
        m = self.n_components_
        out = np.empty((X.shape[0], m))
        if m == 0:
            return out
        for a, b, _, Z in self._rows(X):
            if self._sparse_layout():
                K = rbf_matrix_sparse(Z, self._dictionary_csr(), self._dict_sq_[:m], self._gamma())
            else:
                K = rbf_matrix_t(Z, self._dict_XT_, m, self._gamma())
            out[a:b] = solve_triangular(self._chol_t_[:m, :m], K.T, trans="T", lower=False, check_finite=False).T
        return out

    def _dictionary_csr(self):
        """The dictionary points (sparse layout) as a CSR matrix (n_components_, n_features_in_)."""
        m = self.n_components_
        nnz = int(self._dict_ptr_[m])
        return sp.csr_matrix((self._dict_val_[:nnz], self._dict_ind_[:nnz], self._dict_ptr_[: m + 1]),
                             shape=(m, self.n_features_in_))

    @property
    def components_(self):
        """Dictionary points, shape ``(n_components_, n_features_in_)`` (a CSR matrix in the sparse
        layout, from ``SPARSE_LAYOUT_MIN_FEATURES`` features on)."""
        if self._sparse_layout():
            return self._dictionary_csr()
        return super().components_

    # ------------------------------------------------------------------ views
    @property
    def n_components_(self):
        check_is_fitted(self, "_counts_")
        return int(self._counts_[1])

    @property
    def _n_features_out(self):
        return self.n_components_

    def _dictionary_size(self):  # components_ and the other views (KORSDictionaryMixin)
        return self.n_components_

    @property
    def n_skipped_components_(self):
        check_is_fitted(self, "_counts_")
        return int(self._counts_[2])

    @property
    def n_rows_after_budget_(self):
        check_is_fitted(self, "_counts_")
        return int(self._counts_[3])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]  # computed in float64
        return tags
