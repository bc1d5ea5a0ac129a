"""Online imputation of missing values: each row filled with statistics of the rows before it."""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base import OnlineTransformerMixin
from . import _imputer_core as core
from ._columns import TableChunk, TableTransformerMixin, factorize, is_missing_marker, missing_mask, validate_table

__all__ = ["OnlineImputer"]


class OnlineImputer(TableTransformerMixin, OnlineTransformerMixin, TransformerMixin, BaseEstimator):
    """Impute missing values of a stream with statistics of the rows before, prequentially.

    The online counterpart of :class:`~sklearn.impute.SimpleImputer`. ``partial_fit_transform(X)``
    fills each missing entry of row ``t`` with a statistic of the values of its column in the rows
    **before** ``t``, then learns row ``t``: no row is filled with its own or later values, and the
    output does not depend on how the stream was chunked. ``transform(X)`` fills with the current
    statistics and changes nothing.

    ``NaN``, ``None`` and ``pd.NA`` are always missing; ``missing_values`` adds a marker of the
    data (such as ``'?'`` in the raw Adult table, or ``-1``).

    Strategies (per column):

    * ``'mean'``: running mean of the values seen (a running sum, exact whatever the chunking);
    * ``'median'``: the P² estimate of the running median (Jain and Chlamtac, 1985): five
      markers per column, O(1) memory and time per value, exact over the first 5 values; on
      smooth distributions within a few percent of the interquartile range of the exact running
      median, on integers an interpolation between neighbouring values (both checked in
      ``tests/test_encoders.py``);
    * ``'most_frequent'``: running mode, for numbers or strings, counted with ``max_categories``
      space-saving counters per column (Metwally et al., 2005): a value more frequent than
      ``1 / max_categories`` of the rows always has a counter, so the mode is exact whenever it is
      that frequent; the first value to reach the top count stays the mode until another
      exceeds it (scikit-learn takes the smallest of tied values);
    * ``'constant'``: ``fill_value``.

    Before a column has any value, its missing entries get ``fill_value`` if set, else 0 for
    numbers and ``'missing_value'`` for strings (a stream cannot drop a column that is empty so
    far, as ``SimpleImputer`` does).

    Memory: 2 numbers per column (mean), 11 (median), ``max_categories`` values and counts
    (most_frequent), whatever the length of the stream.

    Parameters
    ----------
    missing_values : int, float, str, np.nan, None or pandas.NA, default=np.nan
        The marker of a missing entry, in addition to NaN, None and pd.NA.
    strategy : {'mean', 'median', 'most_frequent', 'constant'}, default='mean'
        ``'mean'`` and ``'median'`` need numeric columns.
    fill_value : str or numerical value, default=None
        The value of ``'constant'`` and of any column without a value yet; ``None``: 0 for
        numeric columns, ``'missing_value'`` for strings.
    add_indicator : bool, default=False
        Append one column per input column: 1 where the entry was missing, else 0 (a fixed width
        for the stream; ``SimpleImputer`` only adds columns that had missing values in ``fit``).
    max_categories : int, default=64
        Space-saving counters per column for ``'most_frequent'`` (unused otherwise).
    verbose : int, default=0
        Print progress while learning, in the format every estimator uses (user guide,
        *Progress on long streams*); the result does not change.

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features_in_,)
        The value the next missing entry of each column would get (float, or object when a column
        holds strings).
    n_observed_ : ndarray of shape (n_features_in_,)
        Values (non-missing entries) seen per column.
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    OnlineOneHotEncoder : Encode categorical columns (a missing value is a category of its own).
    skonline.compose.OnlineColumnTransformer : Apply online transformers to columns of a table.

    References
    ----------
    R. Jain and I. Chlamtac. The P² algorithm for dynamic calculation of quantiles and histograms
    without storing observations. Communications of the ACM 28(10), 1985.

    A. Metwally, D. Agrawal and A. El Abbadi. Efficient computation of frequent and top-k
    elements in data streams. ICDT 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.preprocessing import OnlineImputer
    >>> X = np.array([[1.0], [np.nan], [3.0], [np.nan]])
    >>> OnlineImputer().partial_fit_transform(X).ravel()     # the mean of the rows before
    array([1., 1., 3., 2.])
    >>> X = np.array([["a"], ["?"], ["b"], ["b"], ["?"]], dtype=object)
    >>> OnlineImputer(missing_values="?", strategy="most_frequent").partial_fit_transform(X).ravel()
    array(['a', 'a', 'b', 'b', 'b'], dtype=object)
    """

    _parameter_constraints = {
        "missing_values": "no_validation",  # a number, a string, np.nan, None or pd.NA
        "strategy": [StrOptions({"mean", "median", "most_frequent", "constant"})],
        "fill_value": "no_validation",
        "add_indicator": ["boolean"],
        "max_categories": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(self, *, missing_values=np.nan, strategy="mean", fill_value=None, add_indicator=False,
                 max_categories=64, verbose=0):
        self.missing_values = missing_values
        self.strategy = strategy
        self.fill_value = fill_value
        self.add_indicator = add_indicator
        self.max_categories = max_categories
        self.verbose = verbose


    # ------------------------------------------------------------------ input
    _STATE_OF = {"mean": "_sum_", "median": "_p2_q_", "most_frequent": "_mf_values_", "constant": "_count_"}

    def _validate_chunk(self, X, y=None, *, reset, from_fit):
        if not reset and not hasattr(self, self._STATE_OF[self.strategy]):
            raise ValueError(
                f"strategy={self.strategy!r} was set after the stream started with another strategy; "
                "call fit (or clone the imputer) to start a new stream."
            )
        table = validate_table(self, X, reset=reset)
        cols, masks, numeric = [], [], []
        for j in range(table.n_columns):
            values = table.column(j)
            m = self._missing(values)
            values, is_num = self._as_numbers(values, m, j)
            cols.append(values)
            masks.append(m)
            numeric.append(is_num)
        return TableChunk(table.n_samples, columns=cols, missing=masks, numeric=numeric, float32=table.float32)

    def _missing(self, values):
        m = missing_mask(values)
        marker = self.missing_values
        if is_missing_marker(marker):
            return m
        if values.dtype.kind in "iuf":
            if isinstance(marker, str):
                return m
            return m | (values == marker)
        eq = np.zeros(values.shape[0], dtype=bool)
        keep = ~m
        eq[keep] = np.asarray(values[keep] == marker, dtype=bool)
        return m | eq

    def _as_numbers(self, values, missing, j):
        """(column, is numeric): numeric columns as float64; an object column as float64 for the
        mean and the median (an error if it holds something else than numbers), else as is."""
        if values.dtype.kind in "iuf":
            return values.astype(np.float64, copy=False), True
        if self.strategy not in ("mean", "median"):
            return values, False
        out = np.zeros(values.shape[0])
        try:
            out[~missing] = np.asarray(values[~missing], dtype=np.float64)
        except (TypeError, ValueError):
            bad = next(v for v in values[~missing] if not _is_number(v))
            raise ValueError(
                f"Cannot use the {self.strategy} strategy with non-numeric data: column {j} holds "
                f"{bad!r}. Use strategy='most_frequent' or 'constant'."
            ) from None
        return out, True

    def _fill(self, numeric):
        if self.fill_value is not None:
            return self.fill_value
        return 0.0 if numeric else "missing_value"

    def _check_params(self):
        if self.strategy in ("mean", "median") and self.fill_value is not None:
            try:
                float(self.fill_value)
            except (TypeError, ValueError):
                raise ValueError(
                    f"fill_value={self.fill_value!r} must be a number with strategy={self.strategy!r}."
                ) from None

    # ------------------------------------------------------------------ state
    def _allocate(self, chunk):
        d = len(chunk.columns)
        self._count_ = np.zeros(d, dtype=np.int64)
        self._numeric_ = np.ones(d, dtype=bool)  # every chunk so far had numbers in this column
        if self.strategy == "mean":
            self._sum_ = np.zeros(d)
        elif self.strategy == "median":
            self._p2_q_ = np.zeros((d, 5))
            self._p2_pos_ = np.zeros((d, 5))
            self._p2_count_ = np.zeros((d, 1))
        elif self.strategy == "most_frequent":
            k = int(self.max_categories)
            self._mf_values_ = np.full((d, k), None, dtype=object)
            self._mf_counts_ = np.zeros((d, k), dtype=np.int64)
            self._mf_used_ = np.zeros((d, 1), dtype=np.int64)
            self._mf_leader_ = np.full((d, 1), -1, dtype=np.int64)

    # ------------------------------------------------------------------ the pass
    def _learn(self, chunk):
        n = chunk.n_samples
        out = []
        for j, (values, m, numeric) in enumerate(zip(chunk.columns, chunk.missing, chunk.numeric)):
            out.append(self._impute_column(j, values, m, numeric, n))
            self._count_[j] += int(np.count_nonzero(~m))
            self._numeric_[j] &= numeric
        return self._stack(out, chunk)

    def _impute_column(self, j, values, m, numeric, n):
        fill = self._fill(numeric)
        if self.strategy == "constant":
            return _combine(m, np.full(n, fill, dtype=object), values, numeric and _is_number(fill))
        if self.strategy == "mean":
            x = np.where(m, 0.0, values)
            sums = np.add.accumulate(np.concatenate(([self._sum_[j]], x)))  # sequential: chunk-invariant
            counts = self._count_[j] + np.concatenate(([0], np.cumsum(~m)))
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(counts[:-1] > 0, sums[:-1] / np.maximum(counts[:-1], 1), float(fill))
            self._sum_[j] = sums[-1]
            return np.where(m, mean, values)
        if self.strategy == "median":
            out = np.empty(n)
            state = core.P2State(self._p2_q_[j], self._p2_pos_[j], self._p2_count_[j])
            core.p2_pass(np.ascontiguousarray(values, dtype=np.float64), m, state, float(fill), out)
            return out
        return self._mode_column(j, values, m, numeric, fill)

    def _mode_column(self, j, values, m, numeric, fill):
        codes, uniques = factorize(values, m)
        stored = self._mf_values_[j]
        used = int(self._mf_used_[j, 0])
        lookup = {stored[s]: s for s in range(used)}
        slot_of_id = np.fromiter((lookup.get(u, -1) for u in uniques), dtype=np.int64, count=uniques.shape[0])
        table_id = np.full(stored.shape[0], -1, dtype=np.int64)
        known = slot_of_id >= 0
        table_id[slot_of_id[known]] = np.flatnonzero(known)
        before = stored.copy()
        state = core.SpaceSaving(table_id, self._mf_counts_[j], self._mf_used_[j], self._mf_leader_[j], slot_of_id)
        out_code = np.full(values.shape[0], -1, dtype=np.int64)
        core.space_saving_pass(codes, state, out_code)
        held = table_id >= 0
        stored[held] = uniques[table_id[held]]
        pick = np.full(values.shape[0], fill, dtype=object)
        chunk_mode = out_code >= 0
        pick[chunk_mode] = uniques[out_code[chunk_mode]]
        old_mode = out_code <= -2
        pick[old_mode] = before[-out_code[old_mode] - 2]
        return _combine(m, pick, values, numeric and _is_number(fill))  # a numeric column's values are floats

    def _stack(self, cols, chunk):
        """The imputed columns side by side: float (float32 for float32 input) when they are all
        numbers, else object; then the missing indicators."""
        if all(c.dtype.kind == "f" for c in cols):
            out = np.column_stack(cols).astype(np.float32 if chunk.float32 else np.float64, copy=False)
        else:
            out = np.empty((chunk.n_samples, len(cols)), dtype=object)
            for j, c in enumerate(cols):
                out[:, j] = c
        if self.add_indicator:
            out = np.hstack([out, np.column_stack(chunk.missing).astype(out.dtype)])
        return out

    # ------------------------------------------------------------------ prediction
    def _current(self, j, numeric):
        """The value the next missing entry of column ``j`` gets."""
        fill = self._fill(numeric)
        if self.strategy == "constant":
            return fill
        if self.strategy == "mean":
            c = self._count_[j]
            return self._sum_[j] / c if c > 0 else fill
        if self.strategy == "median":
            return core.p2_estimate(self._p2_q_[j], self._p2_count_[j], float(fill))
        lead = int(self._mf_leader_[j, 0])
        return self._mf_values_[j, lead] if lead >= 0 else fill

    _fitted_attribute = "_count_"

    def _transform_input(self, X):
        return self._validate_chunk(X, reset=False, from_fit=False)

    def _transform(self, chunk):
        """Impute the chunk with the current statistics (no update): shape (n_samples,
        n_features_in_), or (n_samples, 2 * n_features_in_) with ``add_indicator``."""
        cols = []
        for j, (values, m, numeric) in enumerate(zip(chunk.columns, chunk.missing, chunk.numeric)):
            current = self._current(j, numeric)
            cols.append(_combine(m, np.full(chunk.n_samples, current, dtype=object), values,
                                 numeric and _is_number(current)))
        return self._stack(cols, chunk)

    @property
    def statistics_(self):
        check_is_fitted(self, "_count_")
        values = [self._current(j, bool(self._numeric_[j])) for j in range(self._count_.shape[0])]
        if all(_is_number(v) for v in values):
            return np.asarray(values, dtype=np.float64)
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out

    @property
    def n_observed_(self):
        check_is_fitted(self, "_count_")
        return self._count_.copy()

    def _feature_names_out(self, names_in):
        """The input names, then ``'missingindicator_<name>'`` for each with ``add_indicator``."""
        names = list(names_in)
        if self.add_indicator:
            names += [f"missingindicator_{name}" for name in names]
        return names



def _is_number(v):
    return isinstance(v, (int, float, np.number)) and not isinstance(v, (bool, np.bool_))


def _combine(mask, picked, values, as_float):
    """``values`` with ``picked`` (object array) where ``mask``: float64 if ``as_float`` (the
    column and every value it can be filled with are numbers), else object."""
    if as_float:
        out = np.array(values, dtype=np.float64, copy=True)
        out[mask] = picked[mask].astype(np.float64)
        return out
    out = np.array(values, dtype=object, copy=True)
    out[mask] = picked[mask]
    return out
