"""Tables as they come: one chunk of raw columns (strings, categories, numbers, missing values).

Shared by the online encoders and the online imputer. A chunk (a pandas DataFrame, a numpy array of
any dtype, or a list of rows) is validated once, then handed over column by column as 1-D numpy
arrays: numbers as ``int64`` or ``float64``, anything else as ``object``, with a boolean mask of
the missing entries (``NaN``, ``None``, ``pd.NA``, ``pd.NaT``). Categories are found per chunk by
:func:`factorize` (pandas' hash table when pandas is installed, a sort otherwise), which returns
them in the order of their first row: the encoders and the imputer then work on the few distinct
values of a chunk instead of looping over its rows in Python.
"""

import dataclasses
import sys

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from ..base import Chunk, FeatureTransformerMixin

__all__ = ["TableTransformerMixin", "DtypeChunk", "TableChunk", "Table", "validate_table", "missing_mask", "factorize",
           "first_rows",
           "is_missing_marker"]


class TableTransformerMixin(FeatureTransformerMixin):
    """Transformers of raw tables (the encoders, the imputer): strings, categories and missing
    values (NaN, None, pd.NA) in, float32 kept; the output dtype is the map's own."""

    def _output_dtype(self, X):
        return None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.input_tags.sparse = False
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.requires_fit = True
        return tags


@dataclasses.dataclass(eq=False)
class DtypeChunk(Chunk):
    """A transformer's chunk that remembers the input's precision (float32 in, float32 out)."""

    float32: bool = False


@dataclasses.dataclass(eq=False)
class TableChunk(DtypeChunk):
    """A chunk of a table (the encoders, the imputer): the validated :class:`Table`, or its columns."""

    #: the validated table (the encoders)
    table: object = None
    #: the imputer: each column's values, missing mask and whether it is numeric
    columns: list = None
    missing: list = None
    numeric: list = None

    def rows(self, a, b):
        cut = super().rows(a, b)
        if self.table is not None:
            cut.table = self.table.rows(a, b)
        if self.columns is not None:
            cut.columns = [c[a:b] for c in self.columns]
            cut.missing = [m[a:b] for m in self.missing]
        return cut


def _pandas():
    """pandas if it is installed (imported on demand: it is an optional dependency)."""
    pd = sys.modules.get("pandas")
    if pd is not None:
        return pd
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is in the test extras
        return None
    return pd


def _is_dataframe(X):
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(X, pd.DataFrame)


def is_missing_marker(value):
    """Whether ``value`` is one of the markers every table tool reads as missing (NaN, None, pd.NA)."""
    if value is None:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(np.isnan(value))
    pd = sys.modules.get("pandas")
    return pd is not None and value is pd.NA


class Table:
    """One validated chunk of ``n_samples`` rows: ``column(j)`` is column ``j`` as a 1-D array
    (int64, float64 or object), ``factorized(j)`` its distinct values.

    ``float32`` is whether every column of the caller's chunk was float32 (the transformers then
    return float32, as scikit-learn's do). The non-numeric columns of a DataFrame are converted
    only when asked for: ``factorized`` hashes pandas' own (e.g. Arrow-backed string) arrays.
    """

    def __init__(self, columns, n_samples, float32, frame=None):
        self._columns = columns  # list of arrays, None for a DataFrame column not converted yet
        self._frame = frame
        self.n_samples = n_samples
        self.float32 = float32

    def column(self, j):
        if self._columns[j] is None:
            self._columns[j] = _series_to_array(self._frame.iloc[:, j])
        return self._columns[j]

    def factorized(self, j):
        """``(codes, uniques, missing)`` of column ``j``: see :func:`factorize`."""
        if self._columns[j] is None:
            pd = sys.modules["pandas"]
            codes, uniques = pd.factorize(self._frame.iloc[:, j], use_na_sentinel=True)
            codes = np.asarray(codes, dtype=np.int64)
            return codes, _normalize(np.asarray(uniques, dtype=object)), codes < 0
        values = self.column(j)
        missing = missing_mask(values)
        codes, uniques = factorize(values, missing)
        return codes, uniques, missing

    @property
    def n_columns(self):
        return len(self._columns)

    def rows(self, a, b):
        """Rows ``a:b`` as a :class:`Table` (a verbose pass learns a chunk in blocks of rows)."""
        columns = [None if c is None else c[a:b] for c in self._columns]
        frame = None if self._frame is None else self._frame.iloc[a:b]
        return Table(columns, b - a, self.float32, frame)


def _series_to_array(s):
    """A pandas column as int64, float64 (missing as NaN) or object (missing kept as given)."""
    pd = sys.modules["pandas"]
    dtype = s.dtype
    if pd.api.types.is_bool_dtype(dtype) or not pd.api.types.is_numeric_dtype(dtype):
        return s.to_numpy(dtype=object)
    if pd.api.types.is_integer_dtype(dtype):
        if s.hasnans:
            return s.to_numpy(dtype=np.float64, na_value=np.nan)
        return s.to_numpy(dtype=np.int64)
    if pd.api.types.is_complex_dtype(dtype):
        raise ValueError("Complex data not supported.")
    return s.to_numpy(dtype=np.float64, na_value=np.nan)


def _array_column(a):
    kind = a.dtype.kind
    if kind == "c":
        raise ValueError("Complex data not supported.")
    if kind in "iu":
        return a.astype(np.int64, copy=False)
    if kind == "f":
        return a.astype(np.float64, copy=False)
    return a.astype(object, copy=False)


def _check_finite(estimator, a, j):
    if a.dtype.kind == "f":
        bad = np.isinf(a)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"Input X contains infinity: row {row}, column {j} of this chunk "
                f"({type(estimator).__name__} takes NaN as a missing value, not infinity)."
            )


def validate_table(estimator, X, *, reset):
    """Validate one chunk of a raw table and return it as a :class:`Table`.

    Records ``n_features_in_`` / ``feature_names_in_`` on ``reset`` and checks them otherwise
    (scikit-learn's messages); rejects sparse input, complex numbers, infinity, 1-D input and empty
    chunks with a ``ValueError`` (``TypeError`` for sparse input) before anything is learned.
    """
    name = type(estimator).__name__
    if sp.issparse(X):
        raise TypeError(
            f"Sparse data was passed to {name}, but dense data is required (a table of raw columns). "
            "Use X.toarray() to convert to a dense numpy array."
        )
    if not (_is_dataframe(X) or hasattr(X, "columns")):  # other dataframes keep their names
        X = np.asarray(X, dtype=object) if _ragged_or_mixed(X) else np.asarray(X)
    if not (_is_dataframe(X) or hasattr(X, "columns")) and X.ndim != 2:
        raise ValueError(
            f"Expected 2D array, got {'scalar' if X.ndim == 0 else f'{X.ndim}D'} array instead: "
            f"array={X!r}.\nReshape your data either using array.reshape(-1, 1) if your data has a "
            "single feature or array.reshape(1, -1) if it contains a single sample."
        )
    validate_data(estimator, X, reset=reset, skip_check_array=True)  # names and width (no copy)
    if not _is_dataframe(X):
        X = np.asarray(X)
    n, d = X.shape
    if n == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required by {name}.")
    if d == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required by {name}.")
    frame = None
    if _is_dataframe(X):
        pd = sys.modules["pandas"]
        frame = X
        columns = [_series_to_array(X.iloc[:, j]) if _numeric_dtype(pd, t) else None
                   for j, t in enumerate(X.dtypes)]
        float32 = all(isinstance(t, np.dtype) and t == np.float32 for t in X.dtypes)
    else:
        float32 = X.dtype == np.float32
        columns = [_array_column(X[:, j]) for j in range(d)]
    for j, a in enumerate(columns):
        if a is not None:
            _check_finite(estimator, a, j)
    return Table(columns, n, bool(float32), frame)


def _numeric_dtype(pd, dtype):
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _ragged_or_mixed(X):
    """Whether ``np.asarray(X)`` would be ragged or turn numbers into strings (a list of mixed
    rows): such input is taken as an object array instead."""
    if isinstance(X, np.ndarray):
        return X.dtype.kind in "US"
    try:
        a = np.asarray(X)
    except (ValueError, TypeError):
        return True
    return a.dtype.kind in "US"


def missing_mask(values):
    """Boolean mask of the missing entries (NaN, None, pd.NA, pd.NaT) of a 1-D column."""
    kind = values.dtype.kind
    if kind == "f":
        return np.isnan(values)
    if kind in "iub":
        return np.zeros(values.shape[0], dtype=bool)
    pd = sys.modules.get("pandas")
    if pd is not None:
        return np.asarray(pd.isna(values), dtype=bool)
    out = np.fromiter((is_missing_marker(v) for v in values), dtype=bool, count=values.shape[0])
    return out


def factorize(values, missing):
    """``(codes, uniques)`` of a 1-D column: ``uniques`` (object array) in the order of their first
    row, ``codes[i]`` the index of row ``i``'s value in ``uniques``, ``-1`` where ``missing``.

    With pandas, its hash table (``pd.factorize``); without, a sort (``np.unique``), which needs
    values of one comparable kind (all numbers or all strings). Both give the same result.
    """
    n = values.shape[0]
    keep = ~missing
    pd = _pandas()
    if pd is not None:
        codes = np.full(n, -1, dtype=np.int64)
        if keep.any():
            c, uniques = pd.factorize(values[keep], use_na_sentinel=True)
            codes[keep] = c
            uniques = _normalize(np.asarray(uniques, dtype=object))
        else:
            uniques = np.empty(0, dtype=object)
        return codes, uniques
    return _factorize_numpy(values, keep)  # pragma: no cover - tested with pandas hidden


def _factorize_numpy(values, keep):
    n = values.shape[0]
    codes = np.full(n, -1, dtype=np.int64)
    kept = values[keep]
    if kept.shape[0] == 0:
        return codes, np.empty(0, dtype=object)
    try:
        sorted_uniques, first, inverse = np.unique(kept, return_index=True, return_inverse=True)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in kept})
        raise TypeError(
            f"Encoders require their input to be uniformly strings or numbers (install pandas to "
            f"mix them); got {kinds}."
        ) from None
    order = np.argsort(first, kind="stable")  # sorted position -> rank of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    codes[keep] = rank[inverse.ravel()]
    uniques = np.empty(order.shape[0], dtype=object)
    uniques[:] = list(sorted_uniques[order])
    return codes, _normalize(uniques)


def _normalize(uniques):
    """Distinct values as Python objects, a whole float as an int (3.0 -> 3): an integer column
    with missing values comes as floats in the chunks that have one (pandas), as ints in the
    others, and a category must not depend on how the stream was chunked."""
    for k, u in enumerate(uniques):
        if isinstance(u, (float, np.floating)) and abs(u) < 2.0**53 and float(u).is_integer():
            uniques[k] = int(u)
        elif isinstance(u, np.generic):
            uniques[k] = u.item()
    return uniques


def first_rows(codes, n_uniques):
    """Row of the first occurrence of each code ``0 .. n_uniques - 1`` (``codes`` may hold -1)."""
    first = np.full(n_uniques, codes.shape[0], dtype=np.int64)
    valid = codes >= 0
    np.minimum.at(first, codes[valid], np.flatnonzero(valid))
    return first


def feature_names(estimator):
    """The input feature names (``feature_names_in_``, else ``x0, x1, ...``) as an object array."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        names = np.array([f"x{j}" for j in range(estimator.n_features_in_)], dtype=object)
    return np.asarray(names, dtype=object)
