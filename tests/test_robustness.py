"""Regression tests for issue 11 ("Crashes and silent poisoning", other faults, input safety).

Each example of the issue is a test here: a hostile or extreme chunk must either be learned with a
finite state, or be rejected with a clear error that leaves the estimator exactly as it was.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from skonline.kernel_approximation import MultiBandwidthFourierFeatures, RandomFourierFeatures
from skonline.kernel_selection import KernelSelectionRegressor, OnlineKernelSelector
from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor
from skonline.utils.validation import canonical_csr, check_sparse_structure


def _data(n=20, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[X < 0] = 0.0
    return X, rng.standard_normal(n)


# --------------------------------------------------------------------------- malformed CSR
def _bad_int64_index(A):
    A.indices = A.indices.astype(np.int64)
    A.indices[5] = 10**9  # the example


def _negative_index(A):
    A.indices[5] = -1


def _indptr_decreasing(A):
    A.indptr[3] = A.indptr[5] + 1


def _indptr_short(A):
    A.indptr = A.indptr[:-1]


def _indptr_start(A):
    A.indptr = A.indptr + 1


def _nnz_mismatch(A):
    A.indptr[-1] = A.indptr[-1] - 1


def _float_indices(A):
    A.indices = A.indices.astype(np.float64)


def _data_too_long(A):
    A.data = np.concatenate([A.data, [1.0]])


MALFORMED = {
    "index_1e9_int64": (_bad_int64_index, "out of range"),
    "negative_index": (_negative_index, "out of range"),
    "indptr_decreasing": (_indptr_decreasing, "non-decreasing"),
    "indptr_short": (_indptr_short, "indptr has length"),
    "indptr_not_zero": (_indptr_start, r"indptr\[0\]"),
    "nnz_mismatch": (_nnz_mismatch, "must be equal"),
    "float_indices": (_float_indices, "integer dtype"),
    "data_too_long": (_data_too_long, "must be equal"),
}

SPARSE_ONLINE = [
    ScaleInvariantRegressor(),
    ScaleInvariantClassifier(),
    KernelSelectionRegressor(),
    KernelSelectionRegressor(n_components=8),
    OnlineKernelSelector(),
]


def _targets(est, y):
    return (y > 0).astype(int) if isinstance(est, ScaleInvariantClassifier) else y


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("est", SPARSE_ONLINE, ids=lambda e: repr(e))
def test_malformed_csr_rejected_before_any_state_change(est, case):
    X, y = _data()
    y = _targets(est, y)
    kw = {"classes": [0, 1]} if isinstance(est, ScaleInvariantClassifier) else {}
    est = est.__class__(**est.get_params()).partial_fit(X, y, **kw)
    before = pickle.dumps(est)
    A = sp.csr_matrix(X)
    corrupt, match = MALFORMED[case]
    corrupt(A)
    with pytest.raises(ValueError, match=match):
        est.partial_fit(A, y)
    assert pickle.dumps(est) == before
    method = est.predict if hasattr(est, "predict") else est.transform
    with pytest.raises(ValueError, match=match):
        method(A)
    assert pickle.dumps(est) == before


@pytest.mark.parametrize("case", list(MALFORMED))
@pytest.mark.parametrize("cls", [RandomFourierFeatures, MultiBandwidthFourierFeatures])
def test_malformed_csr_rejected_by_random_features(cls, case):
    X, _ = _data()
    A = sp.csr_matrix(X)
    corrupt, match = MALFORMED[case]
    corrupt(A)
    with pytest.raises(ValueError, match=match):
        cls(random_state=0).fit(A)
    tr = cls(random_state=0).fit(X)
    with pytest.raises(ValueError, match=match):
        tr.transform(A)


def test_malformed_coo_and_csc_rejected():
    X, y = _data()
    A = sp.coo_matrix(X)
    A.col[3] = 7
    with pytest.raises(ValueError, match="out of range"):
        ScaleInvariantRegressor().fit(A, y)
    C = sp.csc_matrix(X)
    C.indices[2] = 99
    with pytest.raises(ValueError, match="out of range for 20 rows"):
        ScaleInvariantRegressor().fit(C, y)


@pytest.mark.parametrize("est", [ScaleInvariantRegressor(), KernelSelectionRegressor(n_components=8, random_state=0)],
                         ids=repr)
def test_unsorted_and_duplicate_indices_mean_the_dense_matrix(est):
    """Unsorted or duplicate column indices are allowed: they mean what ``toarray()`` means."""
    X, y = _data()
    A = sp.csr_matrix(X)
    row0 = slice(A.indptr[0], A.indptr[1])
    A.indices[row0] = A.indices[row0][::-1].copy()
    A.data[row0] = A.data[row0][::-1].copy()
    # a duplicate: split the first entry of row 2 into two halves
    i = A.indptr[2]
    data = np.insert(A.data, i, A.data[i] / 2)
    data[i + 1] /= 2
    indices = np.insert(A.indices, i, A.indices[i])
    indptr = A.indptr.copy()
    indptr[3:] += 1
    B = sp.csr_matrix((data, indices, indptr), shape=A.shape)
    np.testing.assert_allclose(B.toarray(), X)
    snapshot = (B.data.copy(), B.indices.copy(), B.indptr.copy())
    a = est.__class__(**est.get_params()).fit(B, y)
    b = est.__class__(**est.get_params()).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-12, atol=1e-12)
    # the caller's matrix is not modified
    for u, v in zip(snapshot, (B.data, B.indices, B.indptr)):
        np.testing.assert_array_equal(u, v)


def test_canonical_csr_does_not_trust_stale_flags():
    X, _ = _data()
    A = sp.csr_matrix(X)
    assert A.has_canonical_format
    row0 = slice(A.indptr[0], A.indptr[1])
    A.indices[row0] = A.indices[row0][::-1].copy()
    A.data[row0] = A.data[row0][::-1].copy()
    B = canonical_csr(A)
    assert B is not A
    np.testing.assert_array_equal(B.toarray(), X)
    assert np.all(np.diff(B.indices[B.indptr[0]:B.indptr[1]]) > 0)
    check_sparse_structure(B)
