"""Input validation shared by the online estimators (fast on the streaming hot path)."""

import numpy as np
import scipy.sparse as sp
from sklearn.utils import assert_all_finite
from sklearn.utils.validation import validate_data


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


def validate_X_predict(estimator, X, **kwargs):
    """``validate_data(estimator, X, reset=False, **kwargs)``, returned as a read-only view."""
    return readonly(validate_data(estimator, X, reset=False, **kwargs))


def validate_X_chunk(estimator, X, *, reset, accept_sparse=False, y=None, y_numeric=False):
    """Validate one chunk of a stream, as ``validate_data`` does, with a fast path for the stream.

    A chunk after the first that is already a C-contiguous float64 ndarray (and the estimator was
    fitted without feature names) only needs its shape and finiteness checked; that is what is
    done, with scikit-learn's own finiteness check and messages. Everything else goes through
    ``sklearn.utils.validation.validate_data``.

    Returns ``X`` (as a read-only view, see :func:`readonly`) or ``(X, y)`` (``y`` as a 1-D
    ndarray) like ``validate_data``.
    """
    fast = (
        not reset
        and type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.flags.c_contiguous
        and not hasattr(estimator, "feature_names_in_")
        and hasattr(estimator, "n_features_in_")
    )
    if not fast:
        kw = dict(reset=reset, accept_sparse="csr" if accept_sparse else False, dtype=np.float64, order="C")
        if y is None:
            X = validate_data(estimator, X, **kw)
            return readonly(_as_csr(X))
        X, y = validate_data(estimator, X, y, y_numeric=y_numeric, **kw)
        return readonly(_as_csr(X)), y
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
    assert_all_finite(X, input_name="X", estimator_name=type(estimator).__name__)
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
        assert_all_finite(y, input_name="y", estimator_name=type(estimator).__name__)
    return X, y


def _as_csr(X):
    if sp.issparse(X) and X.format != "csr":
        return X.tocsr()
    return X
