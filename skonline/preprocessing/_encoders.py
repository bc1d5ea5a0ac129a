"""Online encoders for categorical columns: one-hot with categories learned as they come, and hashing."""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from ..base import OnlineTransformerMixin
from ._columns import (
    TableChunk,
    TableTransformerMixin,
    factorize,
    first_rows,
    is_missing_marker,
    missing_mask,
    validate_table,
)

__all__ = ["OnlineOneHotEncoder", "OnlineHashingEncoder"]


def _output_dtype(dtype, float32_in):
    if dtype is not None:
        return np.dtype(dtype)
    return np.dtype(np.float32) if float32_in else np.dtype(np.float64)


def _assemble(cols, offsets, width, dtype, sparse, values=None):
    """Output rows from per-column output indices ``cols`` (n, d), ``-1`` for none, as a dense
    array or a CSR matrix of ``width`` columns; ``values`` (n, d) are the entries (default 1).

    Entries falling on the same output column of a row are summed (the hashing encoder's
    collisions)."""
    n = cols.shape[0]
    mask = cols >= 0
    rows = np.broadcast_to(np.arange(n)[:, None], cols.shape)[mask]
    idx = (cols + offsets[None, :])[mask]
    vals = np.ones(idx.shape[0], dtype=dtype) if values is None else values[mask].astype(dtype)
    if sparse:
        out = sp.csr_matrix((vals, (rows, idx)), shape=(n, width), dtype=dtype)
        out.sum_duplicates()
        out.sort_indices()
        return out
    if values is None:  # one entry per input column, each in its own output range: no collision
        out = np.zeros((n, width), dtype=dtype)
        out[rows, idx] = 1
        return out
    flat = np.bincount(rows * width + idx, weights=vals.astype(np.float64), minlength=n * width)
    return flat.reshape(n, width).astype(dtype, copy=False)


class _TableEncoderMixin(TableTransformerMixin):
    """What the encoders share: the table validated once per chunk and per ``transform``."""

    def _transform_input(self, X):
        return validate_table(self, X, reset=False)

    def _validate_chunk(self, X, y=None, *, reset, from_fit):
        table = validate_table(self, X, reset=reset)
        return TableChunk(table.n_samples, table=table)

    def _concat(self, raws):
        return sp.vstack(raws, format="csr") if sp.issparse(raws[0]) else np.concatenate(raws)

class OnlineOneHotEncoder(_TableEncoderMixin, OnlineTransformerMixin, TransformerMixin, BaseEstimator):
    """Encode categorical columns as one-hot, learning the categories as they come.

    The online counterpart of :class:`~sklearn.preprocessing.OneHotEncoder` for a stream whose
    categories are not known up front. ``partial_fit_transform(X)`` encodes row ``t`` with the
    categories of the rows **before** ``t``, then learns it: a category first seen at row ``t`` is
    all zeros at row ``t`` (as an unknown category is with ``handle_unknown='ignore'``) and has its
    own column from row ``t + 1`` on. The output does not depend on how the stream is chunked.
    ``transform(X)`` uses the categories learned so far and never raises on a category it has not
    seen. Missing values (``NaN``, ``None``, ``pd.NA``) are one more category, as in
    scikit-learn; a marker such as ``'?'`` is a category like any other (use
    :class:`OnlineImputer` in front to impute it instead).

    **The output width is fixed from the first row.** A learner downstream has a fixed number of
    features, so each input column gets ``max_categories`` output columns (*slots*) up front. The
    first categories of a column take its slots in the order they first appear, and a slot
    stays with its category for good (a downstream weight always means the same category); the
    slots not yet taken are all zeros. This was preferred to an output that widens as categories
    appear, which no fixed-width learner can follow, and to reassigning slots to the most frequent
    categories, which would change the meaning of a learned weight. Once a column's slots are
    taken, its later categories share the last slot, *infrequent* (with
    ``handle_unknown='infrequent_if_exist'``, the default; from the row after the first of them)
    or are all zeros (``'ignore'``). For a column with many categories (identifiers, zip codes),
    use :class:`OnlineHashingEncoder` instead: a fixed width shared by all its values, no state.

    Memory: at most ``max_categories`` categories are stored per column, so the state is
    ``n_features_in_ * max_categories`` references to category values (plus the values
    themselves) whatever the length of the stream; the output has ``n_features_in_ *
    max_categories`` columns (with ``categories`` given: ``len(categories[j])``, plus one for the
    infrequent slot, for column ``j``).

    Parameters
    ----------
    categories : 'auto' or list of array-like, default='auto'
        ``'auto'``: learn each column's categories from the stream. A list (one array-like per
        column): the categories of each column, fixed; their slots are in that order, and any other
        category is unknown.
    max_categories : int, default=16
        Output columns per input column learned as it comes (with ``'infrequent_if_exist'``,
        the infrequent slot included, as in scikit-learn). The default was measured on the raw
        Adult stream (``benchmarks/encoders.py``).
    handle_unknown : {'infrequent_if_exist', 'ignore'}, default='infrequent_if_exist'
        A category without a slot: ``'infrequent_if_exist'`` puts it in the column's last slot
        (*infrequent*) once the column has overflowed (a category arrived after its other slots
        were taken), all zeros before; ``'ignore'``: all zeros, and all ``max_categories`` slots
        hold categories.
    sparse_output : bool, default=False
        Return a CSR matrix instead of a dense array. The default is dense, unlike scikit-learn's:
        the width is small, and :class:`~skonline.linear_model.ScaleInvariantClassifier` runs its
        fully invariant algorithm on dense input only, which is several accuracy points better on
        the raw Adult stream (``benchmarks/results/encoders.md``, section *Sparse output*).
    dtype : numpy dtype, default=None
        Output dtype; ``None``: float32 for float32 input, float64 otherwise.
    verbose : int, default=0
        Print progress while learning, in the format every estimator uses (user guide,
        *Progress on long streams*); the result does not change.

    Attributes
    ----------
    categories_ : list of ndarray
        ``categories_[j][k]`` is the category held by slot ``k`` of column ``j`` (object arrays, in
        the order of first appearance; ``None`` is the missing category, named ``'nan'`` in
        :meth:`get_category_names_out` as in scikit-learn).
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    OnlineHashingEncoder : Hash categories into a fixed number of columns (no state).
    OnlineImputer : Impute missing values (or a marker such as ``'?'``) from the rows before.
    skonline.compose.OnlineColumnTransformer : Apply online transformers to columns of a table.

    Notes
    -----
    Output column names (:meth:`get_feature_names_out`) must not change during a stream (a
    learner downstream checks them on every chunk), so a learned slot is named
    ``'<feature>_slot<k>'``; :meth:`get_category_names_out` gives the names of the categories the
    slots hold now (``'<feature>_<category>'``, as scikit-learn's). Columns with ``categories``
    given are named after their categories. scikit-learn's ``min_frequency`` and ``drop`` are not
    offered: the first would count every category of the stream (unbounded state), the second
    has no meaning for categories that come later.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.preprocessing import OnlineOneHotEncoder
    >>> X = np.array([["red"], ["blue"], ["red"], [None], ["blue"]], dtype=object)
    >>> enc = OnlineOneHotEncoder(max_categories=4)
    >>> enc.partial_fit_transform(X)          # a category is known from the row after its first
    array([[0., 0., 0., 0.],
           [0., 0., 0., 0.],
           [1., 0., 0., 0.],
           [0., 0., 0., 0.],
           [0., 1., 0., 0.]])
    >>> enc.categories_
    [array(['red', 'blue', None], dtype=object)]
    >>> enc.transform(np.array([["green"], [np.nan]], dtype=object))   # unknown: all zeros
    array([[0., 0., 0., 0.],
           [0., 0., 1., 0.]])
    >>> enc.get_category_names_out()
    array(['x0_red', 'x0_blue', 'x0_nan', 'x0_infrequent_sklearn'], dtype=object)
    """

    _parameter_constraints = {
        "categories": [StrOptions({"auto"}), list],
        "max_categories": [Interval(Integral, 1, None, closed="left")],
        "handle_unknown": [StrOptions({"infrequent_if_exist", "ignore"})],
        "sparse_output": ["boolean"],
        "dtype": "no_validation",  # a numpy dtype or None (checked when used)
        "verbose": ["verbose"],
    }

    def __init__(self, *, categories="auto", max_categories=16, handle_unknown="infrequent_if_exist",
                 sparse_output=False, dtype=None, verbose=0):
        self.categories = categories
        self.max_categories = max_categories
        self.handle_unknown = handle_unknown
        self.sparse_output = sparse_output
        self.dtype = dtype
        self.verbose = verbose


    # ------------------------------------------------------------------ state
    def _allocate(self, chunk):
        d = chunk.table.n_columns
        infrequent = self.handle_unknown == "infrequent_if_exist"
        if self.categories == "auto":
            self.categories_ = [np.empty(0, dtype=object) for _ in range(d)]
            fixed = np.zeros(d, dtype=bool)
            n_slots = np.full(d, int(self.max_categories), dtype=np.int64)
        else:
            if len(self.categories) != d:
                raise ValueError(
                    f"Shape mismatch: if categories is an array, it has to be of shape (n_features,) "
                    f"= ({d},); got {len(self.categories)} entries."
                )
            self.categories_ = [self._given_categories(c, j) for j, c in enumerate(self.categories)]
            fixed = np.ones(d, dtype=bool)
            n_slots = np.array([c.shape[0] + int(infrequent) for c in self.categories_], dtype=np.int64)
        self._fixed_ = fixed
        self._n_slots_ = n_slots
        self._infrequent_ = np.array(infrequent)  # the layout of the stream, whatever set_params does later
        self._overflowed_ = np.zeros(d, dtype=bool)

    @staticmethod
    def _given_categories(values, j):
        arr = np.empty(len(values), dtype=object)
        arr[:] = [None if is_missing_marker(v) else v for v in values]
        if arr.shape[0] == 0:
            raise ValueError(f"categories[{j}] is empty.")
        codes, uniques = factorize(arr, missing_mask(arr))
        if uniques.shape[0] + int(missing_mask(arr).sum() > 0) != arr.shape[0]:
            raise ValueError(f"categories[{j}] holds a category more than once: {list(values)!r}.")
        return arr

    @property
    def _infrequent_enabled(self):
        return bool(self._infrequent_)

    def _category_slots(self, j):
        """Slots that hold categories in column ``j`` (the last one is infrequent, if enabled)."""
        return int(self._n_slots_[j]) - int(self._infrequent_enabled)

    # ------------------------------------------------------------------ the pass
    def _column_slots(self, j, table, learn):
        """Output slot of each row of column ``j`` (-1: all zeros), learning the column if ``learn``.

        Vectorised over the rows: only the distinct values of the chunk are looked at in Python.
        Row ``i`` sees the categories of the rows before ``i``: a category that takes a slot in
        this chunk is active from the row after its first; the infrequent slot is active from the
        row after the column's first overflowing category.
        """
        n = table.n_samples
        codes, uniques, missing = table.factorized(j)
        n_values = uniques.shape[0]
        cats = self.categories_[j]
        lookup = {}
        missing_slot = -1
        for k, c in enumerate(cats):
            if is_missing_marker(c):
                missing_slot = k
            else:
                lookup[c] = k
        slot = np.fromiter((lookup.get(u, -1) for u in uniques), dtype=np.int64, count=n_values)
        if missing.any():
            codes = np.where(missing, n_values, codes)
            slot = np.append(slot, missing_slot)
            uniques = np.append(uniques, np.array([None], dtype=object))
        born = np.full(slot.shape[0], -1, dtype=np.int64)
        overflow_from = -1 if self._overflowed_[j] else n  # infrequent from the rows after this one
        if learn:
            first = first_rows(codes, slot.shape[0])
            new = np.flatnonzero(slot < 0)
            new = new[np.argsort(first[new], kind="stable")]
            free = 0 if self._fixed_[j] else max(self._category_slots(j) - cats.shape[0], 0)
            take, over = new[:free], new[free:]
            if take.shape[0]:
                slot[take] = cats.shape[0] + np.arange(take.shape[0])
                born[take] = first[take]
                self.categories_[j] = np.concatenate([cats, uniques[take]])
            if over.shape[0] and not self._overflowed_[j]:
                self._overflowed_[j] = True
                overflow_from = int(first[over].min())
        rows = np.arange(n)
        s = slot[codes]
        active = (s >= 0) & (rows > born[codes])
        out = np.where(active, s, -1)
        if self._infrequent_enabled:
            out = np.where(~active & (rows > overflow_from), self._n_slots_[j] - 1, out)
        return out

    def _encode(self, table, learn):
        d = table.n_columns
        cols = np.empty((table.n_samples, d), dtype=np.int64)
        for j in range(d):
            cols[:, j] = self._column_slots(j, table, learn)
        offsets = np.concatenate(([0], np.cumsum(self._n_slots_)[:-1]))
        width = int(self._n_slots_.sum())
        return _assemble(cols, offsets, width, _output_dtype(self.dtype, table.float32), self.sparse_output)

    def _learn(self, chunk):
        return self._encode(chunk.table, learn=True)

    _fitted_attribute = "categories_"

    def _transform(self, table):
        """One-hot encode the table with the categories learned so far (no update): a category
        never seen is all zeros (or, once the column overflowed, the infrequent slot with
        ``handle_unknown='infrequent_if_exist'``); it never raises."""
        return self._encode(table, learn=False)

    # ------------------------------------------------------------------ names
    def _slot_names(self, names, learned_names):
        out = []
        for j, name in enumerate(names):
            cats = self.categories_[j]
            for k in range(self._category_slots(j)):
                if (learned_names or self._fixed_[j]) and k < cats.shape[0]:
                    out.append(f"{name}_{'nan' if cats[k] is None else cats[k]}")
                else:
                    out.append(f"{name}_slot{k}")
            if self._infrequent_enabled:
                out.append(f"{name}_infrequent_sklearn")
        return np.asarray(out, dtype=object)

    def _feature_names_out(self, names_in):
        """Output column names, fixed for the whole stream: ``'<feature>_slot<k>'`` for a learned
        slot, ``'<feature>_<category>'`` for given categories, ``'<feature>_infrequent_sklearn'``."""
        return self._slot_names(names_in, learned_names=False)

    def get_category_names_out(self, input_features=None):
        """The output columns named after the category each slot holds now (``'<feature>_<category>'``,
        as :meth:`sklearn.preprocessing.OneHotEncoder.get_feature_names_out`; ``'<feature>_slot<k>'``
        while slot ``k`` is free). For inspection (e.g. of a linear model's weights): these names
        change as categories arrive, so they are not the output's column names.

        Parameters
        ----------
        input_features : array-like of str or None, default=None

        Returns
        -------
        names : ndarray of str objects
        """
        check_is_fitted(self, "categories_")
        return self._slot_names(_check_feature_names_in(self, input_features), learned_names=True)


class OnlineHashingEncoder(_TableEncoderMixin, OnlineTransformerMixin, TransformerMixin, BaseEstimator):
    """Encode categorical columns by hashing ``'x<column>=<value>'`` into a fixed number of columns.

    For columns with many categories (identifiers, zip codes, words): the output width is
    ``n_features`` whatever the number of categories, and nothing is learned, so the state does
    not grow with the stream and a category never seen before is encoded like any other (no
    cold start). The price is collisions: two categories that hash to the same column share it
    (with ``alternate_sign=True`` they have opposite signs half of the time, which keeps inner
    products unbiased). Each row has one non-zero entry per input column, at
    ``abs(h) % n_features``, where ``h`` is the signed 32-bit MurmurHash3 of the string
    ``'x<j>=<value>'`` for column ``j`` (its position: a DataFrame and the same values as an array
    give the same output): the same feature indices and signs as
    :class:`sklearn.feature_extraction.FeatureHasher` on the dicts ``{'x<j>': str(value)}``.
    A missing value (``NaN``, ``None``, ``pd.NA``) is hashed as the value ``'nan'``.

    Memory: none beyond the parameters; the output has ``n_features`` columns.

    Parameters
    ----------
    n_features : int, default=128
        Output columns (scikit-learn's ``FeatureHasher`` parameter of the same name). The default
        was measured on the raw Adult stream (``benchmarks/results/encoders.md``): with the 6
        numeric columns it keeps the input of :class:`~skonline.linear_model.ScaleInvariantClassifier`
        under the 200 dense columns of its fully invariant algorithm.
    alternate_sign : bool, default=True
        Give each category the sign of its hash.
    sparse_output : bool, default=False
        Return a CSR matrix instead of a dense array.
    dtype : numpy dtype, default=None
        Output dtype; ``None``: float32 for float32 input, float64 otherwise.
    verbose : int, default=0
        Print progress while learning, in the format every estimator uses (user guide,
        *Progress on long streams*); the result does not change.

    Attributes
    ----------
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    OnlineOneHotEncoder : One column per category, learned as categories come.
    sklearn.feature_extraction.FeatureHasher : The same hashing, for dicts and strings.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.preprocessing import OnlineHashingEncoder
    >>> X = np.array([["a", "x"], ["b", "x"], ["a", None]], dtype=object)
    >>> Z = OnlineHashingEncoder(n_features=8).fit_transform(X)
    >>> Z.shape, np.abs(Z).sum(axis=1).tolist()    # one entry per column, or 0 on a collision
    ((3, 8), [2.0, 2.0, 2.0])
    """

    _parameter_constraints = {
        "n_features": [Interval(Integral, 1, np.iinfo(np.int32).max, closed="both")],
        "alternate_sign": ["boolean"],
        "sparse_output": ["boolean"],
        "dtype": "no_validation",  # a numpy dtype or None (checked when used)
        "verbose": ["verbose"],
    }

    def __init__(self, *, n_features=128, alternate_sign=True, sparse_output=False, dtype=None, verbose=0):
        self.n_features = n_features
        self.alternate_sign = alternate_sign
        self.sparse_output = sparse_output
        self.dtype = dtype
        self.verbose = verbose

    def _allocate(self, chunk):
        pass  # no state: n_features_in_ and feature_names_in_ are recorded by the validation

    def _hash_column(self, name, table, j):
        """(output index, sign) of each row of one column: hashes of its distinct values only."""
        from sklearn.utils import murmurhash3_32

        codes, uniques, missing = table.factorized(j)
        keys = [f"{name}={u}" for u in uniques]
        if missing.any():
            codes = np.where(missing, len(keys), codes)
            keys.append(f"{name}=nan")
        h = np.fromiter((murmurhash3_32(k, seed=0, positive=False) for k in keys), dtype=np.int64,
                        count=len(keys))
        index = np.abs(h) % int(self.n_features)
        sign = np.where(h >= 0, 1.0, -1.0) if self.alternate_sign else np.ones(len(keys))
        return index[codes], sign[codes]

    def _encode(self, table):
        d = table.n_columns
        cols = np.empty((table.n_samples, d), dtype=np.int64)
        vals = np.empty((table.n_samples, d))
        for j in range(d):
            cols[:, j], vals[:, j] = self._hash_column(f"x{j}", table, j)
        dtype = _output_dtype(self.dtype, table.float32)
        return _assemble(cols, np.zeros(d, dtype=np.int64), int(self.n_features), dtype, self.sparse_output, vals)

    def _learn(self, chunk):
        return self._encode(chunk.table)

    def _transform(self, table):
        """Hash the table (the same map as during the stream: nothing is learned)."""
        return self._encode(table)

    def _feature_names_out(self, names_in):
        """``['onlinehashingencoder0', ..., 'onlinehashingencoder<n_features - 1>']`` (the input
        names are only checked)."""
        prefix = type(self).__name__.lower()
        return [f"{prefix}{k}" for k in range(int(self.n_features))]
