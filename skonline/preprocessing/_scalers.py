"""Online scalers: prequential standardisation and min-max scaling for streams."""

from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ..base import FeatureTransformerMixin, OnlineTransformerMixin
from ..utils import _scaling as core
from ..utils._deprecation import param, renamed_constraint
from ..utils.validation import validate_X_chunk
from ._columns import DtypeChunk

__all__ = ["OnlineStandardScaler", "OnlineMinMaxScaler"]


def _float32_in(X):
    """Whether the caller's rows are float32 (computed in float64, returned as float32)."""
    return getattr(X, "dtype", None) == np.float32


def _as_out(Z, float32):
    return Z.astype(np.float32) if float32 else Z


class _ScalerMixin(FeatureTransformerMixin):
    """What the scalers share: float32 in, float32 out (as scikit-learn's scalers), computed in
    float64; a chunk records whether its rows were float32; ``transform`` reads the rows in the
    stream's container (``_row_container``)."""

    _accept_sparse = True

    def _validate_chunk(self, X, y=None, *, reset, from_fit):
        f32 = _float32_in(X)
        X = validate_X_chunk(self, X, reset=reset, accept_sparse=True)
        return DtypeChunk(X.shape[0], X=X, float32=f32)

    def _output_dtype(self, X):
        return np.float32 if _float32_in(X) else np.float64

    def _transform_input(self, X):
        return self._predict_input(X, accept_sparse="csr", dtype=np.float64, order="C")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.requires_fit = True
        return tags


class OnlineStandardScaler(OneToOneFeatureMixin, _ScalerMixin, OnlineTransformerMixin, TransformerMixin, BaseEstimator):
    """Standardise a stream with running means and variances, prequentially.

    ``partial_fit_transform(X)`` transforms row ``t`` with the mean and standard deviation of the
    rows **before** ``t`` (Welford's updates, compiled), then learns it: the output of a stream
    does not depend on how it was chunked, and no row is scaled with statistics of itself or of
    the future, which is what an online learner downstream must see (see
    :func:`skonline.pipeline.make_online_pipeline`). ``transform(X)`` uses the current statistics
    and changes nothing.

    Robust to one wild row: values more than ``clip_std`` standard deviations from the running mean
    are clipped in the output and winsorised (to ``mean +- clip_std * std``) before they update the
    statistics, so a single row of 1e20 moves the scale by a factor of at most
    :math:`\\sqrt{1 + \\mathrm{clip\\_std}^2 / t}` instead of shrinking every later row to 0; a genuine
    change of scale is followed geometrically fast. Set ``clip_std=np.inf`` for plain running
    statistics (scikit-learn's ``StandardScaler.partial_fit`` up to the prequential order).

    Before 3 rows have been seen a column has no scale: it is output as 0. The warm-up is shorter
    than the 10 rows of the estimators' internal standardisation (``standardize=True``) because
    the scaler's output usually goes to such an estimator, whose statistics take every warm-up
    row as a row of exact zeros: after 10 of them its columns would look constant at 0 and the
    next rows would be output near ``+-clip_std`` (on wine, GroupDRO in the online pipeline scored
    clearly lower with a 10-row warm-up than with 3 rows, which came close to the raw stream).
    The first rows after the warm-up are scaled by a rough, clipped estimate. A column constant so
    far is output as 0 for that value and as ``+-clip_std`` for any other value.

    Parameters
    ----------
    with_mean : bool, default=True
        Centre the rows. The container is decided by the width of the stream, not by what the
        caller passes: up to 4,096 features rows are handled dense (CSR chunks densified, output
        dense), so the same rows give the same output in either container; wider streams are
        handled as CSR (dense chunks made sparse) and never centred: each column is scaled by its
        running root mean square, keeping the rows' structure (centring would fill them).
    clip_std : float, default=5.0
        Output clip and winsorising threshold, in standard deviations.
    verbose : int, default=0
        Print progress while learning, in the format every estimator uses (user guide,
        *Progress on long streams*); the result does not change.
    clip : float, default='deprecated'
        Deprecated alias of ``clip_std`` (renamed in 0.1; ``clip`` is removed in 0.2).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Running mean (winsorised) of each column. Zeros for a stream of more than 4,096 features
        (handled as CSR, see ``with_mean``).
    var_ : ndarray of shape (n_features,)
        Running (population) variance; for a stream of more than 4,096 features the mean of
        squares.
    scale_ : ndarray of shape (n_features,)
        ``sqrt(var_)``: the divisor for the next row (0 while there is no scale yet).
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    OnlineMinMaxScaler : Scale each column to a range with the running minimum and maximum.
    skonline.pipeline.make_online_pipeline : Chain online transformers and a learner on a stream.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.preprocessing import OnlineStandardScaler
    >>> X = np.arange(10.0).reshape(5, 2) * [1.0, 100.0]
    >>> Z = OnlineStandardScaler().partial_fit_transform(X)   # row t with the statistics of rows < t
    >>> float(Z[:3].max()), np.round(Z[3:], 3)    # no scale before 3 rows
    (0.0, array([[2.449, 2.449],
           [2.236, 2.236]]))
    """

    #: retired parameter names (one release): old -> new (skonline.utils._deprecation)
    _renamed_params = {"clip": "clip_std"}
    _parameter_constraints = {
        "with_mean": ["boolean"],
        "clip_std": [Interval(Real, 0, None, closed="right")],
        "clip": renamed_constraint([Interval(Real, 0, None, closed="right")]),
        "verbose": ["verbose"],
    }

    def __init__(self, *, with_mean=True, clip_std=5.0, verbose=0, clip="deprecated"):
        self.with_mean = with_mean
        self.clip_std = clip_std
        self.verbose = verbose
        self.clip = clip

    #: the container from the width of the stream (see ``OnlineMixin._row_container``)
    _row_container = "stream"
    _fitted_attribute = "_count_"

    def _allocate(self, chunk):
        d = chunk.X.shape[1]
        self._sparse_ = bool(sp.issparse(chunk.X))
        self._count_ = np.zeros(1)
        self._mean_ = np.zeros(d)
        self._m2_ = np.zeros(d)

    def _learn(self, chunk):
        X = chunk.X
        if bool(sp.issparse(X)) != self._sparse_:
            raise ValueError("OnlineStandardScaler cannot mix dense and sparse chunks in one stream.")
        Z = core.learn_transform(X, self._count_, self._mean_, self._m2_, float(param(self, "clip_std")),
                                 bool(self.with_mean), min_count=core.SCALER_MIN_COUNT)
        return _as_out(Z, chunk.float32)

    def _concat(self, raws):
        return sp.vstack(raws, format="csr") if sp.issparse(raws[0]) else np.concatenate(raws)

    def _transform(self, X):
        """Standardise ``X`` with the current statistics (no update)."""
        if sp.issparse(X) and not self._sparse_:
            X = X.toarray()
        elif not sp.issparse(X) and self._sparse_:
            return self._transform(sp.csr_matrix(X)).toarray()
        return core.frozen_transform(X, self._count_, self._mean_, self._m2_, float(param(self, "clip_std")),
                                     bool(self.with_mean), min_count=core.SCALER_MIN_COUNT)

    @property
    def mean_(self):
        check_is_fitted(self, "_mean_")
        return self._mean_.copy()

    @property
    def var_(self):
        check_is_fitted(self, "_m2_")
        c = self._count_[0]
        if c < core.SCALER_MIN_COUNT:
            return np.zeros_like(self._m2_)
        return self._m2_ / c

    @property
    def scale_(self):
        return np.sqrt(self.var_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class OnlineMinMaxScaler(OneToOneFeatureMixin, _ScalerMixin, OnlineTransformerMixin, TransformerMixin, BaseEstimator):
    """Scale a stream to a range with the running minimum and maximum, prequentially.

    ``partial_fit_transform(X)`` maps row ``t`` with the minimum and maximum of the rows
    **before** ``t``, then learns it (chunking-invariant); ``transform(X)`` uses the current range.
    Values outside the range seen so far are clipped to ``feature_range`` when ``clip=True``
    (the default, so a downstream learner that assumes bounded features, such as the papers'
    kernel methods, never sees a value outside it). Before any row has been seen, or while a
    column is constant, a column maps to the middle of ``feature_range``.

    Unlike :class:`OnlineStandardScaler`, one wild row stretches the range for good; prefer the
    standard scaler on data with outliers.

    Parameters
    ----------
    feature_range : tuple (min, max), default=(0, 1)
    clip : bool, default=True
        Clip transformed values to ``feature_range``.
    verbose : int, default=0
        Print progress while learning, in the format every estimator uses (user guide,
        *Progress on long streams*); the result does not change.

    Attributes
    ----------
    data_min_, data_max_ : ndarray of shape (n_features,)
        Running minimum and maximum.
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    OnlineStandardScaler : Standardise with running means and variances (robust to one wild row).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.preprocessing import OnlineMinMaxScaler
    >>> X = np.array([[1.0], [3.0], [2.0], [5.0]])
    >>> OnlineMinMaxScaler().partial_fit_transform(X).ravel()
    array([0.5, 0.5, 0.5, 1. ])
    """

    _parameter_constraints = {
        "feature_range": [tuple],
        "clip": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(self, feature_range=(0, 1), *, clip=True, verbose=0):
        self.feature_range = feature_range
        self.clip = clip
        self.verbose = verbose

    def _check_params(self):
        lo, hi = self.feature_range
        if not lo < hi:
            raise ValueError(f"feature_range must be (min, max) with min < max; got {self.feature_range}.")

    #: CSR rows accepted (the output is dense: a column's minimum maps zeros elsewhere): dense
    #: up to 4,096 features, dense blocks of CSR rows beyond (see ``OnlineMixin._row_container``)
    _row_container = "dense"
    _fitted_attribute = "_min_"

    #: the widest sparse rows taken (their output is dense: 512 KiB per row at this width)
    MAX_SPARSE_FEATURES = 2**16

    def _refuse_wide_sparse(self, X):
        """CSR rows wider than ``MAX_SPARSE_FEATURES`` are refused, before anything changes: the
        output is dense (a column's range moves its zeros), which on a wide sparse stream is a
        matrix of gigabytes per chunk. scikit-learn's ``MinMaxScaler`` refuses sparse input
        altogether."""
        if sp.issparse(X) and X.shape[1] > self.MAX_SPARSE_FEATURES:
            raise TypeError(
                f"OnlineMinMaxScaler does not take sparse rows of more than {self.MAX_SPARSE_FEATURES:,} "
                f"columns (got {X.shape[1]:,}): its output is dense ({8 * X.shape[1] / 2**20:,.1f} MiB per "
                "row here), since scaling a column to its range moves its zeros. Use OnlineStandardScaler, "
                "which scales sparse rows without centring them and keeps them sparse."
            )

    def _validate_chunk(self, X, y=None, *, reset, from_fit):
        self._refuse_wide_sparse(X)
        return super()._validate_chunk(X, y, reset=reset, from_fit=from_fit)

    def _transform_input(self, X):
        self._refuse_wide_sparse(X)
        return super()._transform_input(X)

    def _allocate(self, chunk):
        d = chunk.X.shape[1]
        self._min_ = np.full(d, np.inf)
        self._max_ = np.full(d, -np.inf)

    def _map(self, X, lo, hi):
        a, b = (float(v) for v in self.feature_range)
        span = hi - lo
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            Z = a + (X - lo) * ((b - a) / np.where(span > 0, span, 1.0))
        Z = np.where(np.isfinite(span) & (span > 0), Z, 0.5 * (a + b))
        if self.clip:
            Z = np.clip(Z, a, b)
        return Z

    def _learn(self, chunk):
        X = np.asarray(chunk.X)
        # running extremes of the rows before each row (sequential, so chunking-invariant)
        lo = np.minimum.accumulate(np.vstack([self._min_, X]), axis=0)
        hi = np.maximum.accumulate(np.vstack([self._max_, X]), axis=0)
        out = self._map(X, lo[:-1], hi[:-1])
        self._min_ = lo[-1].copy()
        self._max_ = hi[-1].copy()
        return _as_out(out, chunk.float32)

    def _transform(self, X):
        """Scale ``X`` with the current range (no update)."""
        return self._map(X, self._min_, self._max_)

    @property
    def data_min_(self):
        check_is_fitted(self, "_min_")
        return self._min_.copy()

    @property
    def data_max_(self):
        check_is_fitted(self, "_max_")
        return self._max_.copy()

