"""Input validation shared by the online estimators (fast on the streaming hot path)."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import assert_all_finite
from sklearn.utils.validation import validate_data

from .._atomic import _all_finite
from ._jit import njit


def readonly(A):
    """A read-only view of a dense array (no copy); other inputs are returned unchanged.

    numba compiles a separate specialisation of a function for read-only arrays (memory-mapped
    chunks, joblib's memmapped inputs). Every validated input is handed to the compiled code as a
    read-only view, so each pass is compiled once, whatever the caller passes.
    """
    if isinstance(A, np.ndarray) and A.flags.writeable:
        A = A.view()
        A.flags.writeable = False
    return A


def output_dtype(X):
    """The dtype a transformer returns for the input ``X``: float32 for float32 input (a dense or
    sparse array, or a DataFrame whose columns are all float32), float64 otherwise.

    As scikit-learn's :class:`~sklearn.kernel_approximation.RBFSampler`, the transformers compute
    in float64 and hand back float32 for float32 input (``preserves_dtype`` tag).
    """
    dtype = getattr(X, "dtype", None)
    if dtype is None:
        dtypes = getattr(X, "dtypes", None)
        if dtypes is None:
            return np.float64
        try:
            kinds = {np.dtype(d) for d in dtypes}
        except TypeError:  # dtypes numpy does not know (e.g. polars)
            return np.float64
        return np.float32 if kinds == {np.dtype(np.float32)} else np.float64
    try:
        return np.float32 if np.dtype(dtype) == np.float32 else np.float64
    except TypeError:
        return np.float64


def validate_X_predict(estimator, X, **kwargs):
    """``validate_data(estimator, X, reset=False, **kwargs)``, returned as a read-only view.

    Sparse input is checked by :func:`check_sparse_structure` before ``validate_data`` sees it
    and returned in canonical CSR form (see :func:`canonical_csr`).
    """
    check_sparse_structure(X)
    return readonly(_canonical_if_sparse(validate_data(estimator, X, reset=False, **kwargs)))


def validate_X_fit(estimator, X, **kwargs):
    """``validate_data(estimator, X, **kwargs)`` with the sparse checks of :func:`validate_X_predict`.

    For estimators whose ``fit`` does not go through :func:`validate_X_chunk` (transformers).
    """
    check_sparse_structure(X)
    return _canonical_if_sparse(validate_data(estimator, X, **kwargs))


_INDEX_KINDS = "iu"  # signed or unsigned integers


def _check_index_array(name, a, fmt):
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"Malformed sparse input ({fmt}): {name} must be 1-D; got shape {a.shape}.")
    if a.dtype.kind not in _INDEX_KINDS:
        raise ValueError(
            f"Malformed sparse input ({fmt}): {name} must have an integer dtype; got {a.dtype}."
        )
    return a


def _check_compressed(X, n_major, n_minor, major, minor, fmt):
    """indptr / indices of a CSR or CSC (or BSR, in blocks) matrix: lengths, monotonicity, bounds."""
    indptr = _check_index_array("indptr", X.indptr, fmt)
    indices = _check_index_array("indices", X.indices, fmt)
    data = np.asarray(X.data)
    if indptr.shape[0] != n_major + 1:
        raise ValueError(
            f"Malformed sparse input ({fmt}): indptr has length {indptr.shape[0]}, expected "
            f"{n_major + 1} (the number of {major} + 1)."
        )
    if indptr[0] != 0:
        raise ValueError(f"Malformed sparse input ({fmt}): indptr[0] is {int(indptr[0])}, expected 0.")
    if n_major and np.any(indptr[1:] < indptr[:-1]):
        bad = int(np.flatnonzero(indptr[1:] < indptr[:-1])[0])
        raise ValueError(
            f"Malformed sparse input ({fmt}): indptr must be non-decreasing; indptr[{bad + 1}] = "
            f"{int(indptr[bad + 1])} < indptr[{bad}] = {int(indptr[bad])}."
        )
    nnz = int(indptr[-1])
    if nnz != indices.shape[0] or data.shape[0] != indices.shape[0]:
        raise ValueError(
            f"Malformed sparse input ({fmt}): indptr[-1] = {nnz}, len(indices) = {indices.shape[0]} "
            f"and len(data) = {data.shape[0]} must be equal."
        )
    if nnz:
        lo, hi = indices.min(), indices.max()
        if lo < 0 or hi >= n_minor:
            bad = int(np.flatnonzero((indices < 0) | (indices >= n_minor))[0])
            raise ValueError(
                f"Malformed sparse input ({fmt}): indices[{bad}] = {int(indices[bad])} is out of "
                f"range for {n_minor} {minor} (0 <= index < {n_minor})."
            )


def check_csr_arrays(data, indices, indptr, shape):
    """Check the parts of a CSR matrix (as stored in a file) before building it.

    The same checks as :func:`check_sparse_structure` on a CSR matrix, without building one
    (scipy's constructor trusts its inputs, and allocates ``indptr`` from the claimed shape).
    """
    from types import SimpleNamespace

    n_rows, n_cols = (int(s) for s in shape)
    parts = SimpleNamespace(data=np.asarray(data), indices=indices, indptr=indptr)
    _check_compressed(parts, n_rows, n_cols, "rows", "columns", "csr")


def check_sparse_structure(X):
    """Check the structure of a scipy sparse matrix or array before any code reads it unchecked.

    Compiled code (numba cores, scipy's sparsetools) does not bounds-check: a bad ``indptr`` or an
    out-of-range column index would read or write out of bounds. This checks, in O(nnz) numpy:
    integer index dtypes; for CSR/CSC/BSR, ``len(indptr) == n_major + 1``, ``indptr[0] == 0``,
    ``indptr`` non-decreasing, ``indptr[-1] == len(indices) == len(data)`` and
    ``0 <= indices < n_minor``; for COO, row and column indices in range and equal lengths.
    Dense input and other formats (built by scipy's own checked code) pass through.

    Raises
    ------
    ValueError
        Naming what is wrong.
    """
    if not sp.issparse(X):
        return
    fmt = X.format
    shape = X.shape
    if len(shape) != 2 or min(shape) < 0:
        raise ValueError(f"Malformed sparse input ({fmt}): expected a 2-D shape; got {shape}.")
    n_rows, n_cols = (int(s) for s in shape)
    if fmt == "csr":
        _check_compressed(X, n_rows, n_cols, "rows", "columns", fmt)
    elif fmt == "csc":
        _check_compressed(X, n_cols, n_rows, "columns", "rows", fmt)
    elif fmt == "bsr":
        r, c = X.blocksize
        if r <= 0 or c <= 0 or n_rows % r or n_cols % c:
            raise ValueError(f"Malformed sparse input (bsr): blocksize {X.blocksize} does not divide {shape}.")
        data = np.asarray(X.data)
        if data.ndim != 3 or data.shape[1:] != (r, c):
            raise ValueError(f"Malformed sparse input (bsr): data has shape {data.shape}.")
        _check_compressed(X, n_rows // r, n_cols // c, "block rows", "block columns", fmt)
    elif fmt == "coo":
        coords = getattr(X, "coords", None) or (X.row, X.col)
        row = _check_index_array("row", coords[0], fmt)
        col = _check_index_array("col", coords[1], fmt)
        n = np.asarray(X.data).shape[0]
        if row.shape[0] != n or col.shape[0] != n:
            raise ValueError(
                f"Malformed sparse input (coo): len(row) = {row.shape[0]}, len(col) = {col.shape[0]} "
                f"and len(data) = {n} must be equal."
            )
        for name, a, m in (("row", row, n_rows), ("col", col, n_cols)):
            if n and (a.min() < 0 or a.max() >= m):
                bad = int(np.flatnonzero((a < 0) | (a >= m))[0])
                raise ValueError(
                    f"Malformed sparse input (coo): {name}[{bad}] = {int(a[bad])} is out of range "
                    f"(0 <= {name} < {m})."
                )


def canonical_csr(X):
    """A structurally valid CSR matrix in canonical form: sorted column indices, no duplicates.

    Duplicate entries of a row are summed (the matrix's value, as ``toarray()`` sees it) and the
    indices are sorted, on a copy: the caller's matrix is never modified. Both index arrays get
    one integer dtype (scipy's choice), so the compiled passes, which take ``int64`` copies, are
    compiled once. scipy's cached ``has_canonical_format`` flag is not trusted (it is stale when
    the caller edits ``indices`` in place): sortedness is recomputed.
    """
    indptr, indices = np.asarray(X.indptr), np.asarray(X.indices)
    canonical = indptr.dtype == indices.dtype and indices.dtype in (np.int32, np.int64)
    if canonical and indices.shape[0] > 1:
        step = np.diff(indices.astype(np.int64, copy=False))
        starts = indptr[1:-1]
        starts = starts[(starts > 0) & (starts < indices.shape[0])] - 1  # last entry before a new row
        step[starts] = 1
        canonical = bool(np.all(step > 0))
    if canonical:
        return X
    cls = type(X)
    out = cls(
        (np.array(X.data, copy=True), indices.astype(np.int64), indptr.astype(np.int64)), shape=X.shape
    )
    out.has_canonical_format = False  # fresh object: make scipy recompute, then sort and sum
    out.sum_duplicates()
    out.sort_indices()
    return out


def _canonical_if_sparse(X):
    return canonical_csr(X) if sp.issparse(X) and X.format == "csr" else X


def is_stream_chunk(estimator, X, *, reset):
    """Whether ``X`` is a chunk after the first that needs only its shape and values checked: a
    C-contiguous float64 2-D ndarray, for an estimator fitted without feature names (the fast
    path of :func:`validate_X_chunk`)."""
    return (
        not reset
        and type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.flags.c_contiguous
        and not hasattr(estimator, "feature_names_in_")
        and hasattr(estimator, "n_features_in_")
    )


def _is_csr_stream_chunk(estimator, X, *, reset):
    """Whether ``X`` is a chunk after the first that is a 2-D float64 CSR matrix or array (scipy's
    own classes), for an estimator fitted without feature names: the CSR fast path of
    :func:`validate_X_chunk` (its structure, shape and values are checked, then it is made
    canonical, as on the general path)."""
    return (
        not reset
        and type(X) in (sp.csr_matrix, sp.csr_array)
        and X.ndim == 2
        and X.dtype == np.float64
        and not hasattr(estimator, "feature_names_in_")
        and hasattr(estimator, "n_features_in_")
    )


def validate_X_chunk(estimator, X, *, reset, accept_sparse=False, y=None, y_numeric=False):
    """Validate one chunk of a stream, as ``validate_data`` does, with a fast path for the stream.

    A chunk after the first that is already a C-contiguous float64 ndarray, or a float64 CSR
    matrix or array (and the estimator was fitted without feature names), only needs its shape and
    finiteness checked (and, for CSR, its structure, then its canonical form); that is what is
    done, with scikit-learn's own finiteness check and messages. Everything else goes through
    ``sklearn.utils.validation.validate_data``.

    Returns ``X`` (as a read-only view, see :func:`readonly`) or ``(X, y)`` (``y`` as a 1-D
    ndarray) like ``validate_data``.
    """
    fast = is_stream_chunk(estimator, X, reset=reset) or (
        accept_sparse and _is_csr_stream_chunk(estimator, X, reset=reset)
    )
    y_shape = _shape_of(y)
    if y_shape is not None and len(y_shape) == 2 and y_shape[1] > 1:
        name = type(estimator).__name__
        wrapper = "MultiOutputRegressor" if y_numeric else "MultiOutputClassifier"
        raise ValueError(
            f"{name} learns one target per row; y has {y_shape[1]} columns. For several targets, "
            f"wrap it: sklearn.multioutput.{wrapper}({name}()), whose partial_fit learns each column "
            "with a copy of its own."
        )
    if y is not None and _is_complex(y):
        raise ValueError(
            "Complex data not supported: y has a complex dtype (the imaginary part would be lost)."
        )
    if not fast:
        check_sparse_structure(X)
        kw = dict(reset=reset, accept_sparse="csr" if accept_sparse else False, dtype=np.float64, order="C")
        if y is None:
            X = validate_data(estimator, X, **kw)
            return readonly(_as_csr(X))
        X, y = validate_data(estimator, X, y, y_numeric=y_numeric, **kw)
        return readonly(_as_csr(X)), y
    if sp.issparse(X):
        check_sparse_structure(X)
    n, d = X.shape
    if d != estimator.n_features_in_:
        raise ValueError(
            f"X has {d} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    if n == 0:
        raise ValueError(
            f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required by "
            f"{type(estimator).__name__}."
        )
    if sp.issparse(X):
        _assert_finite(X.data, "X", estimator)
        X = _as_csr(X)
    else:
        _assert_finite(X, "X", estimator)
    X = readonly(X)
    if y is None:
        return X
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    if y.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {y.shape[0]}]"
        )
    if y_numeric:
        y = np.asarray(y, dtype=np.float64)
        _assert_finite(y, "y", estimator)
    return X, y


def _assert_finite(a, input_name, estimator):
    """scikit-learn's ``assert_all_finite`` (its errors, its ``assume_finite`` setting) on a chunk
    of the stream fast path, with the common case checked first: a float64 array without NaN or
    inf returns after one scan (:func:`skonline._atomic._all_finite`: about 0.5 us for a 100 x 10
    chunk; scikit-learn's function costs about 8 us a call in namespace and configuration
    lookups, on every call of every estimator)."""
    if a.dtype == np.float64 and _all_finite(a):
        return
    assert_all_finite(a, input_name=input_name, estimator_name=type(estimator).__name__)


def _shape_of(y):
    """The shape of a target as given (array, list, pandas or an array-like that only converts)."""
    if y is None:
        return None
    shape = getattr(y, "shape", None)
    if shape is not None:
        return tuple(shape)
    try:
        return np.asarray(y).shape  # lists, and objects that only define __array__
    except (TypeError, ValueError):
        return None  # ragged: validate_data reports it


def _is_complex(a):
    if hasattr(a, "dtype") and not hasattr(a, "dtypes"):
        return np.dtype(a.dtype).kind == "c" if a.dtype is not None else False
    if hasattr(a, "dtypes"):  # pandas
        try:
            return any(np.dtype(t).kind == "c" for t in np.atleast_1d(a.dtypes))
        except TypeError:
            return False
    try:
        return np.iscomplexobj(np.asarray(a))
    except (TypeError, ValueError):
        return False


def _as_csr(X):
    if sp.issparse(X):
        return canonical_csr(X if X.format == "csr" else X.tocsr())
    return X


def rows_for(estimator, X):
    """The validated rows ``X`` in a container ``estimator`` takes: CSR rows as they are if its tags
    accept sparse input (``input_tags.sparse``), else as dense rows (the same values)."""
    if not sp.issparse(X):
        return X
    from sklearn.utils import get_tags

    try:
        sparse_ok = bool(get_tags(estimator).input_tags.sparse)
    except Exception:  # an estimator without scikit-learn tags
        sparse_ok = False
    return X if sparse_ok else readonly(np.ascontiguousarray(X.toarray(), dtype=np.float64))


@njit
def _sorted_positions(labels, values, idx):
    """``idx[i]``: the position of ``values[i]`` in the sorted ``labels`` (a binary search, as
    ``np.searchsorted``); returns the first ``i`` whose value is not in ``labels``, or -1."""
    C = labels.shape[0]
    for i in range(values.shape[0]):
        v = values[i]
        lo = 0
        hi = C
        while lo < hi:
            mid = (lo + hi) // 2
            if labels[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        if lo == C or labels[lo] != v:
            return i
        idx[i] = lo
    return -1


#: label dtypes looked up by the compiled search (:func:`label_positions`); others by NumPy
_COMPILED_LABELS = (np.dtype(np.int64), np.dtype(np.float64))


def label_positions(labels, values):
    """Where each of ``values`` sits in ``labels`` (sorted and unique: ``classes_``, the group
    labels of GroupDRO).

    Returns ``(idx, missing)``: ``idx`` (int64) the positions, and ``missing`` None when every value
    is one of ``labels``, else the boolean mask of those that are not (their position is then
    some valid position, never used as such). The usual case, numeric labels of the dtype of
    ``labels``, is one compiled pass (about 1 us for 1,000 labels, against about 12 us for the
    searchsorted, clip and comparison it replaces); labels of another type than ``labels``
    (strings against numbers) are all missing.
    """
    values = np.asarray(values)
    n = values.shape[0] if values.ndim else 0
    if values.ndim == 1 and values.dtype == labels.dtype and values.dtype in _COMPILED_LABELS:
        idx = np.empty(n, dtype=np.int64)
        if _sorted_positions(labels, values, idx) < 0:
            return idx, None
    try:
        idx = np.searchsorted(labels, values)
    except TypeError:  # labels of another type
        return np.zeros(n, dtype=np.int64), np.ones(n, dtype=bool)
    idx = np.minimum(idx, labels.shape[0] - 1)  # (searchsorted gives >= 0; np.clip costs 6x)
    with np.errstate(invalid="ignore"):
        bad = labels[idx] != values
    bad = np.asarray(bad, dtype=bool)
    if bad.ndim == 0:  # a comparison numpy could not make elementwise
        bad = np.full(n, bool(bad))
    return idx.astype(np.int64, copy=False), (bad if bad.any() else None)
