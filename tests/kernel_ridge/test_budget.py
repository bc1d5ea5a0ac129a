"""Bounded PKAWV (issue 21): the history window, the frozen dictionary, CSR input, the sparse layout."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import rbf_kernel

from skonline.kernel_approximation import OnlineNystroem
from skonline.kernel_ridge import AWVRegressor, PKAWVClassifier, PKAWVRegressor
from skonline.utils import _online_kernel


def _curve(n=300, seed=0):
    """Points along a curve in the plane: KORS keeps inserting for the whole stream."""
    rng = np.random.default_rng(seed)
    s = np.sort(rng.uniform(0, 6, n))[rng.permutation(n)]
    X = np.c_[np.cos(s), np.sin(2 * s)] + 0.02 * rng.standard_normal((n, 2))
    y = np.sin(3 * s) + 0.1 * rng.standard_normal(n)
    return X, y


def _windowed_reference(X, y, idx, lam, gamma, H, awv=True):
    """PKAWV with the dictionary sequence ``idx`` (stream positions of the insertions) and the history
    window H, solved directly at every round: a past row s has coordinate j of the orthonormal
    embedding phi = L^{-1} k_D(x) when point j was inserted before it (tau_j <= s) or at most H rows
    after it (tau_j - s <= H); otherwise 0. Coordinate j does not depend on later points."""
    n = X.shape[0]
    K = rbf_kernel(X, X[idx], gamma=gamma)
    L = np.linalg.cholesky(rbf_kernel(X[idx], X[idx], gamma=gamma))
    Phi = np.linalg.solve(L, K.T).T  # (n, m), the final dictionary
    tau = np.asarray(idx)
    pred = np.zeros(n)
    for t in range(n):
        cols = np.flatnonzero(tau <= t)
        if not len(cols):
            continue
        V = Phi[:t][:, cols].copy()
        late = tau[cols][None, :] > np.arange(t)[:, None]  # inserted after row s
        V[late & (tau[cols][None, :] - np.arange(t)[:, None] > H)] = 0.0
        A = lam * np.eye(len(cols)) + V.T @ V
        v = Phi[t, cols]
        if awv:
            A += np.outer(v, v)
        pred[t] = v @ np.linalg.solve(A, V.T @ y[:t])
    return pred


@pytest.mark.parametrize("algorithm", ["awv", "ridge"])
def test_history_window_is_the_documented_truncated_reprojection(algorithm):
    X, y = _curve()
    H, lam, sigma = 25, 0.5, 0.3
    # beta=1: the paper's sampling, whose dictionary keeps inserting long after rows left the window
    reg = PKAWVRegressor(features="nystrom", alpha=lam, sigma=sigma, mu=1e-3, beta=1.0, max_components=None,
                         max_history=H, standardize=False, forgetting=1.0, algorithm=algorithm, random_state=0)
    p = reg.partial_fit_predict(X, y)
    idx = reg.component_indices_
    assert len(idx) > 40 and np.sum(idx > 4 * H) > 20  # insertions long after rows left the window
    ref = _windowed_reference(X, y, idx, lam, 1 / (2 * sigma**2), H, awv=algorithm == "awv")
    np.testing.assert_allclose(p, ref, rtol=1e-7, atol=1e-8)
    exact = PKAWVRegressor(features="nystrom", alpha=lam, sigma=sigma, mu=1e-3, beta=1.0, max_components=None,
                           max_history=None, standardize=False, forgetting=1.0, algorithm=algorithm, random_state=0)
    assert np.max(np.abs(exact.partial_fit_predict(X, y) - p)) > 1e-4  # the window is an approximation here


def test_history_window_longer_than_the_stream_is_the_exact_algorithm_bit_for_bit():
    X, y = _curve(n=400, seed=1)
    kw = dict(features="nystrom", sigma=0.3, mu=1e-3, max_components=None, random_state=2)
    a = PKAWVRegressor(max_history=400, **kw)
    b = PKAWVRegressor(max_history=None, **kw)
    np.testing.assert_array_equal(a.partial_fit_predict(X, y), b.partial_fit_predict(X, y))
    np.testing.assert_array_equal(a.precision_, b.precision_)


@pytest.mark.parametrize("forgetting", [1.0, 0.99])
def test_history_memory_is_bounded_then_released(forgetting):
    """The history buffers hold at most 2 max_history rows (then the last max_history are kept), and
    are released once the dictionary is frozen; nothing grows after that."""
    X, y = _curve(n=1500, seed=3)
    H = 40
    reg = PKAWVRegressor(features="nystrom", sigma=0.3, mu=1e-3, max_components=None, max_history=H,
                         forgetting=forgetting, random_state=0)
    for s in range(0, 1000, 100):
        reg.partial_fit(X[s : s + 100], y[s : s + 100])
        assert reg._Y_hist_.shape[0] <= 2 * H and reg._hist_XT_.shape[1] <= 2 * H
        assert H <= reg._n_history_[0] <= 2 * H or reg.n_samples_seen_ < 2 * H
    assert reg._hist_start_[0] > 0  # compacted
    m = reg.n_components_
    frozen = PKAWVRegressor(features="nystrom", sigma=0.3, mu=1e-3, max_components=m, max_history=H,
                            forgetting=forgetting, random_state=0)
    frozen.fit(X[:1000], y[:1000])
    assert frozen._Y_hist_.shape[0] == 0 and frozen._hist_XT_.shape[1] == 0  # released
    shapes = {k: v.shape for k, v in vars(frozen).items() if isinstance(v, np.ndarray)}
    frozen.partial_fit(X[1000:], y[1000:])
    assert {k: v.shape for k, v in vars(frozen).items() if isinstance(v, np.ndarray)} == shapes


def test_forgetting_keeps_the_inverse_exactly_symmetric():
    """With forgetting the time update multiplies P's antisymmetric part by 1/forgetting every row;
    the rounding of an insertion (Schur complement) used to seed it, and it grew without bound
    (x 7.4 per 2,000 rows at 0.999; non-finite predictions after ~1,100 rows at 0.95). 1,000 rows
    insert 929 components (the exact dictionary's cost grows with the square of the rows: 3,000
    rows took 10 minutes of the suite on a 2-core machine); a seeded antisymmetric part grows by
    1 / 0.95 per row, so it would be far from zero and P far above the bound by then."""
    rng = np.random.default_rng(5)
    n, d = 1000, 4
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
    reg = PKAWVRegressor(features="nystrom", mu=0.01, sigma=1.0, alpha=1.0, max_components=None, forgetting=0.95,
                         random_state=0)
    reg.fit(X, y)
    P = reg.precision_
    assert reg.n_components_ > 500
    np.testing.assert_array_equal(P, P.T)
    assert np.all(np.isfinite(P)) and np.abs(P).max() < 10


def test_frozen_dictionary_is_awv_on_the_fixed_embedding():
    """Past max_components the forecaster is linear AWV on phi(x) = L^{-1} k_D(x), the map of the
    frozen dictionary (computed here by scikit-learn's rbf_kernel and numpy), with the state the
    growth phase left."""
    X, y = _curve(n=600, seed=4)
    reg = PKAWVRegressor(features="nystrom", sigma=0.3, mu=1e-3, alpha=0.5, max_components=30, forgetting=0.99,
                         standardize=False, random_state=0)
    reg.partial_fit(X[:300], y[:300])
    assert reg.n_rows_after_budget_ > 0
    C = reg.components_
    L = np.linalg.cholesky(rbf_kernel(C, C, gamma=1 / (2 * 0.3**2)))
    Phi = np.linalg.solve(L, rbf_kernel(C, X[300:], gamma=1 / (2 * 0.3**2))).T
    awv = AWVRegressor(alpha=0.5, forgetting=0.99, standardize=False).fit(Phi[:1], y[300:301])
    awv._precision_, awv._b_, awv._refresh_ = reg.precision_, reg.b_[None, :].copy(), reg._refresh_.copy()
    awv.cumulative_loss_ = 0.0
    np.testing.assert_allclose(reg.partial_fit_predict(X[300:], y[300:]), awv.partial_fit_predict(Phi, y[300:]),
                               rtol=1e-9, atol=1e-10)


# --------------------------------------------------------------------------- CSR
def _sparse_stream(n, d, density, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr", data_rvs=rng.standard_normal) * 3
    Xd = X.toarray()
    f = Xd[:, :5].sum(1) + np.sin(Xd[:, 5 % d])
    return X, Xd, f + 0.1 * rng.standard_normal(n), (f > np.median(f)).astype(int)


@pytest.mark.parametrize("d, density", [(6, 0.5), (20, 0.3), (5000, 0.01)])  # Taylor, Nystrom, sparse layout
@pytest.mark.parametrize("Est", [PKAWVRegressor, PKAWVClassifier])
def test_csr_and_dense_rows_give_the_same_model(Est, d, density):
    X, Xd, yr, yc = _sparse_stream(700, d, density)
    y, kw = (yc, {"classes": [0, 1]}) if Est is PKAWVClassifier else (yr, {})
    a, b = Est(random_state=0), Est(random_state=0)
    pa = np.concatenate([a.partial_fit_predict(Xd[s : s + 200], y[s : s + 200], **(kw if s == 0 else {}))
                         for s in range(0, 700, 200)])
    pb = np.concatenate([b.partial_fit_predict(X[s : s + 150], y[s : s + 150], **(kw if s == 0 else {}))
                         for s in range(0, 700, 150)])
    np.testing.assert_array_equal(pa, pb)  # the compiled passes see the same rows
    assert a.features_ == ("taylor" if d == 6 else "nystrom")
    assert a._sparse_layout() == (d >= _online_kernel.SPARSE_LAYOUT_MIN_FEATURES)
    out = "decision_function" if Est is PKAWVClassifier else "predict"
    np.testing.assert_allclose(getattr(a, out)(X[:100]), getattr(a, out)(Xd[:100]), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(getattr(a, out)(Xd[:100]), getattr(b, out)(X[:100]), rtol=1e-10, atol=1e-12)


def test_sparse_layout_computes_the_dense_layout_model(monkeypatch):
    """Without standardisation both layouts learn the same forecaster (kernel values from the
    differences, or from the norms and the sparse dot products: equal to rounding)."""
    X, Xd, y, _ = _sparse_stream(500, 300, 0.05, seed=2)
    kw = dict(features="nystrom", sigma=3.0, mu=1e-2, max_components=60, max_history=100, standardize=False,
              random_state=1)
    dense = PKAWVRegressor(**kw)
    pd_ = dense.partial_fit_predict(X, y)
    monkeypatch.setattr("skonline.kernel_ridge._pkawv.SPARSE_LAYOUT_MIN_FEATURES", 100)
    sparse = PKAWVRegressor(**kw)
    ps = sparse.partial_fit_predict(X, y)
    assert sparse._sparse_layout() and not dense._sparse_layout()
    np.testing.assert_array_equal(sparse.component_indices_, dense.component_indices_)
    np.testing.assert_allclose(ps, pd_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(sparse.predict(Xd[:50]), dense.predict(Xd[:50]), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(sparse.components_.toarray(), dense.components_, rtol=0, atol=0)


@pytest.mark.parametrize("d, density", [(20, 0.3), (5000, 0.01)])
def test_online_nystroem_csr_and_dense_rows_give_the_same_map(d, density):
    X, Xd, _, _ = _sparse_stream(600, d, density, seed=3)
    a = OnlineNystroem(random_state=0)
    for s in range(0, 600, 200):
        a.partial_fit(X[s : s + 200])
    b = OnlineNystroem(random_state=0).fit(Xd)
    np.testing.assert_array_equal(a.component_indices_, b.component_indices_)
    np.testing.assert_allclose(a.transform(X[:50]), b.transform(Xd[:50]), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("max_components", [None, 25])
def test_sparse_layout_chunking_and_pickling_are_bitwise(max_components):
    """The shared checks run on narrow inputs; the sparse layout's buffers (entries grown by
    doubling, a history compacted, then released) keep the contract too."""
    import pickle

    from _helpers import assert_same_state

    X, _, y, _ = _sparse_stream(600, 5000, 0.01, seed=4)
    kw = dict(features="nystrom", max_components=max_components, max_history=60, random_state=0)
    ref = PKAWVRegressor(**kw).fit(X, y)
    assert ref._sparse_layout() and ref._hist_start_[0] > 0 or max_components
    est = PKAWVRegressor(**kw)
    for a, b in ((0, 1), (1, 130), (130, 131), (131, 400)):
        est.partial_fit(X[a:b], y[a:b])
    est = pickle.loads(pickle.dumps(est))
    est.partial_fit(X[400:], y[400:])
    assert_same_state(ref, est)
    np.testing.assert_array_equal(ref.predict(X[:30]), est.predict(X[:30]))
