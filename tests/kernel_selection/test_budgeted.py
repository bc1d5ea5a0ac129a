"""Kernel selection at defaults (issue 21): full feedback, the budgeted learner (exact expansions,
then random features), wide streams, and one model whatever the container of the rows."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import skonline.kernel_selection._kernel_selection as ks
from skonline.kernel_approximation._random_fourier import hash_columns
from skonline.kernel_selection import KernelSelectionClassifier, KernelSelectionRegressor


def _stream(seed=0, n=600, d=5, sparsity=0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-1, 1, d) + rng.uniform(-3, 3, d)
    if sparsity:
        X[rng.random(X.shape) < sparsity] = 0.0
    Z = (X - X.mean(0)) / X.std(0)
    f = np.sin(2 * Z[:, 0]) + Z[:, 1]
    return X, (f > 0).astype(int), 5.0 + f + 0.1 * rng.standard_normal(n)


# ------------------------------------------------------------------ full feedback
def _full_feedback_reference(Z, y, sigmas, U, lam_num, lam_den, b, learn_from):
    """OKS++ with full feedback, square loss (f - y)^2, one head, exact kernels, in numpy: every
    kernel predicts, every kernel steps with its own loss; q = softmax(-eta L)."""
    K = len(sigmas)
    coefs = [[] for _ in range(K)]
    sv = []
    norm2 = np.zeros(K)
    L, C, S = np.zeros(K), 0.0, 0.0
    q = np.full(K, 1.0 / K)
    preds = []
    for t, (x, yt) in enumerate(zip(Z, y)):
        f = np.array([sum(a * np.exp(-np.sum((x - s) ** 2) / (2 * sig**2)) for a, s in zip(coefs[k], sv))
                      for k, sig in enumerate(sigmas)])
        preds.append(q @ f)
        if t < learn_from:
            continue
        loss = (f - yt) ** 2
        g = 2 * (f - yt)
        C += loss.sum()
        S += np.sum(q * loss**2)
        L += loss
        lam = lam_num * max(b, 8 * C) ** (-1 / 6) / (lam_den * np.sqrt(1 + L))
        beta = -lam * g
        if np.any(beta != 0):
            sv.append(x.copy())
            for k in range(K):
                coefs[k].append(beta[k])
                nn = max(norm2[k] + 2 * beta[k] * f[k] + beta[k] ** 2, 0.0)
                if nn > U * U:
                    coefs[k] = [c * U / np.sqrt(nn) for c in coefs[k]]
                    nn = U * U
                norm2[k] = nn
        eta = np.sqrt(2 * np.log(K)) / np.sqrt(1 + S)
        w = np.exp(-eta * (L - L.min()))
        q = w / w.sum()
    return np.array(preds), q


def test_full_feedback_matches_a_numpy_reference():
    """The compiled full-feedback pass (exact kernels, shared support) against the algorithm
    written out in numpy: the reported mixture and the final q to 1e-10."""
    rng = np.random.default_rng(3)
    Z = rng.uniform(-1, 1, (80, 3))
    y = np.sin(3 * Z[:, 0]) * Z[:, 1]
    sigmas = (0.3, 1.0, 3.0)
    est = KernelSelectionRegressor(sigmas=sigmas, n_components=None, standardize=False, feedback="full",
                                   radius=1.0, linear=False, random_state=0)
    pred = est.partial_fit_predict(Z, y)
    c = est._constants()
    ref, q = _full_feedback_reference(Z, y, sigmas, 1.0, c["lam_num"], c["lam_den"], c["b"], 0)
    np.testing.assert_allclose(pred, ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(est.q_, q, rtol=1e-10)
    assert est.kernel_counts_.tolist() == [80, 80, 80]
    assert np.all(est.norms_ <= 1.0 + 1e-12)


def test_full_feedback_learning_is_deterministic():
    """No sampling in the learning: any random_state (None included) gives the same exact phase."""
    X, y, _ = _stream(1, 400)
    decs = [KernelSelectionClassifier(random_state=rs).partial_fit_decision_function(X, y, classes=[0, 1])
            for rs in (0, 1, None)]
    np.testing.assert_array_equal(decs[0], decs[1])
    np.testing.assert_array_equal(decs[0], decs[2])


def test_full_feedback_skips_the_standardiser_warm_up():
    # the first rows are standardised to zeros: no support row is stored for them
    X, y, _ = _stream(2, 30)
    est = KernelSelectionClassifier(random_state=0).partial_fit(X[:10], y[:10], classes=[0, 1])
    assert int(est._nstore_[0]) == 0 and est.kernel_counts_.sum() == 0
    est.partial_fit(X[10:], y[10:])
    assert int(est._nstore_[0]) > 0


def test_feedback_full_needs_oks_plus_plus():
    with pytest.raises(ValueError, match="feedback='full'"):
        KernelSelectionClassifier("ioks", feedback="full").fit(*_stream()[:2])


# ------------------------------------------------------------------ the budgeted learner
@pytest.mark.parametrize("cls", [KernelSelectionClassifier, KernelSelectionRegressor])
def test_switch_to_random_features_keeps_the_predictions(cls, monkeypatch):
    """At the end of the exact phase each hypothesis becomes w = sum_j a_j z(x_j): with many
    features its predictions are the exact ones up to the random-feature error."""
    monkeypatch.setattr(ks, "AUTO_N_COMPONENTS", 4096)
    X, yc, yr = _stream(4, 500)
    y = yc if cls is KernelSelectionClassifier else yr
    exact = cls(max_support=None, random_state=0).fit(X[:300], y[:300])  # exact throughout
    moved = cls(max_support=300, random_state=0).fit(X[:300], y[:300])  # switched at the end
    assert hasattr(exact, "n_support_") and not hasattr(moved, "n_support_")
    assert moved.coef_.shape[-1] == 2 * 4096
    f = "decision_function" if cls is KernelSelectionClassifier else "predict"
    a, b = getattr(exact, f)(X[300:]), getattr(moved, f)(X[300:])
    assert np.max(np.abs(a - b)) < 0.05 * np.max(np.abs(a - np.mean(a))), np.max(np.abs(a - b))
    np.testing.assert_allclose(moved.norms_, np.linalg.norm(moved.coef_, axis=-1), rtol=1e-12)
    assert np.all(moved.norms_ <= moved._constants()["radius"] * (1 + 1e-12))


def test_random_features_keep_learning_in_the_ball():
    X, y, _ = _stream(5, 900)
    est = KernelSelectionClassifier(max_support=100, random_state=0)
    coefs = []
    for a in range(0, 900, 200):
        est.partial_fit(X[a:a + 200], y[a:a + 200], classes=[0, 1])
        if a >= 200:
            coefs.append(est.coef_.copy())
            # the tracked norm is the weights' norm, and it stays in the ball
            np.testing.assert_allclose(est._rf_norm2_[0], np.sum(est.coef_**2, axis=-1), rtol=1e-9)
            assert np.all(est.norms_ <= 15.0 * (1 + 1e-12))
    assert all(not np.array_equal(u, v) for u, v in zip(coefs, coefs[1:]))  # not frozen


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_chunking_and_pickling_across_the_switch(feedback):
    X, y, _ = _stream(6, 500)
    ref = KernelSelectionClassifier(max_support=137, feedback=feedback, random_state=3)
    full = clone(ref).fit(X, y)
    pred_ref = clone(ref).partial_fit_decision_function(X, y, classes=[0, 1])
    est = clone(ref)
    preds = []
    for a, b in [(0, 100), (100, 137), (137, 138), (138, 300), (300, 500)]:
        preds.append(est.partial_fit_decision_function(X[a:b], y[a:b], **({"classes": [0, 1]} if a == 0 else {})))
        est = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(np.concatenate(preds), pred_ref)
    np.testing.assert_array_equal(est.coef_, full.coef_)
    # the move happens once max_support rows are learned, whatever comes next
    assert "coef_" in vars(clone(ref).fit(X[:137], y[:137])) and "coef_" not in vars(clone(ref).fit(X[:136], y[:136]))
    np.testing.assert_array_equal(est.decision_function(X), full.decision_function(X))


def test_exact_phase_length_from_the_shape():
    est = KernelSelectionClassifier()
    assert est._exact_rows(10) == ks.AUTO_EXACT_ROWS
    assert est._exact_rows(4000) == ks.AUTO_EXACT_BYTES // (8 * 4000)  # the store under 32 MB
    assert est._exact_rows(ks.WIDE_FEATURES + 1) == 0  # wide: random features from the start
    assert KernelSelectionClassifier(max_support=50)._exact_rows(10) == 50
    assert KernelSelectionClassifier(max_support=None)._exact_rows(10) is None
    assert KernelSelectionClassifier(n_components=None)._support_budget() == ks.EXACT_MAX_SUPPORT


def test_memory_stops_growing_after_the_exact_phase():
    X, y, _ = _stream(7, 1200)
    est = KernelSelectionClassifier(max_support=200, random_state=0).fit(X[:200], y[:200])
    n1 = len(pickle.dumps(est))
    est.partial_fit(X[200:], y[200:])
    n2 = len(pickle.dumps(est))
    assert "_store_" not in vars(est)
    assert abs(n2 - n1) < 0.01 * n1  # coef_ replaces the store: nothing grows with the rows


# ------------------------------------------------------------------ containers
@pytest.mark.parametrize("cls", [KernelSelectionClassifier, KernelSelectionRegressor])
@pytest.mark.parametrize("params", [{}, {"max_support": 150}, {"n_components": 32}, {"n_components": None}])
def test_csr_rows_give_the_dense_model(cls, params):
    """The repro of issue 21: trained on dense rows, the same rows given as CSR predict the same;
    a model trained on CSR rows is the dense one; a stream mixing both is the dense stream."""
    X, yc, yr = _stream(8, 300, 4, sparsity=0.3)
    y = yc if cls is KernelSelectionClassifier else yr
    kw = {"classes": [0, 1]} if cls is KernelSelectionClassifier else {}
    f = "decision_function" if cls is KernelSelectionClassifier else "predict"
    dense = cls(random_state=0, **params)
    pd = dense.partial_fit_predict(X, y, **kw)
    np.testing.assert_array_equal(getattr(dense, f)(sp.csr_matrix(X[:50])), getattr(dense, f)(X[:50]))
    csr = cls(random_state=0, **params)
    pc = csr.partial_fit_predict(sp.csr_matrix(X), y, **kw)
    np.testing.assert_array_equal(pc, pd)
    mixed = cls(random_state=0, **params)
    pm = np.concatenate([mixed.partial_fit_predict(X[a:a + 60] if a % 120 else sp.csr_matrix(X[a:a + 60]),
                                                   y[a:a + 60], **(kw if a == 0 else {}))
                         for a in range(0, 300, 60)])
    np.testing.assert_array_equal(pm, pd)
    np.testing.assert_array_equal(getattr(mixed, f)(X), getattr(dense, f)(X))


def test_wide_streams_stay_sparse_and_hash_their_columns(monkeypatch):
    monkeypatch.setattr(ks, "WIDE_FEATURES", 40)
    monkeypatch.setattr(ks, "HASH_BUCKETS", 16)
    X, y, _ = _stream(9, 400, 60, sparsity=0.9)
    est = KernelSelectionClassifier(random_state=0)
    pd = est.partial_fit_decision_function(X, y, classes=[0, 1])
    assert est._omega_.shape[1] == 16 and "_store_" not in vars(est)  # random features from the start
    csr = KernelSelectionClassifier(random_state=0)
    pc = csr.partial_fit_decision_function(sp.csr_matrix(X), y, classes=[0, 1])
    np.testing.assert_allclose(pc, pd, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(csr.decision_function(X), est.decision_function(sp.csr_matrix(X)),
                               rtol=1e-12, atol=1e-12)


def test_hashed_columns_keep_squared_distances_in_expectation():
    rng = np.random.default_rng(10)
    x = sp.csr_matrix(rng.standard_normal((1, 5000)) * (rng.random((1, 5000)) < 0.02))
    norms = [float(hash_columns(x, 256, seed).multiply(hash_columns(x, 256, seed)).sum()) for seed in range(400)]
    exact = float(x.multiply(x).sum())
    assert abs(np.mean(norms) / exact - 1) < 0.02
    a, b = hash_columns(x, 256, 7), hash_columns(x, 256, 7)
    np.testing.assert_array_equal(a.toarray(), b.toarray())  # a function of the seed
    assert a.shape == (1, 256)
