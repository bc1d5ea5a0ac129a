"""KernelAWVRegressor: the exact kernel forecaster (Jézéquel et al. 2019, eq. 3, Propositions 1-2)."""

import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from skonline.kernel_ridge import AWVRegressor, KernelAWVRegressor

from _paper import paper


def _data(n=150, d=2, R=1.0, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-R, R, (n, d))
    y = np.clip(np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + 0.2 * rng.standard_normal(n), -1, 1)
    return X, y


@pytest.mark.parametrize("algorithm", ["awv", "ridge"])
@pytest.mark.parametrize("alpha, sigma", [(1.0, 1.0), (0.1, 0.5)])
def test_equals_the_closed_form_at_every_round(algorithm, alpha, sigma):
    """AWV: k_t' (K_t + l I)^{-1} (y_1..y_{t-1}, 0); ridge: k_{t-1}(x_t)' (K_{t-1} + l I)^{-1} y."""
    X, y = _data()
    pred = paper(KernelAWVRegressor, alpha=alpha, sigma=sigma, algorithm=algorithm).partial_fit_predict(X, y)
    K = rbf_kernel(X, gamma=1 / (2 * sigma**2))
    for t in range(X.shape[0]):
        if algorithm == "awv":
            Kt = K[: t + 1, : t + 1]
            ref = Kt[t] @ np.linalg.solve(Kt + alpha * np.eye(t + 1), np.r_[y[:t], 0.0])
        else:
            ref = K[t, :t] @ np.linalg.solve(K[:t, :t] + alpha * np.eye(t), y[:t]) if t else 0.0
        np.testing.assert_allclose(pred[t], ref, rtol=1e-9, atol=1e-11)


def test_linear_kernel_equals_awv_on_raw_features():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((120, 3))
    y = X @ [1.0, -1.0, 0.5] + 0.2 * rng.standard_normal(120)
    a = paper(KernelAWVRegressor, kernel="linear", alpha=0.7).partial_fit_predict(X, y)
    b = paper(AWVRegressor, alpha=0.7).partial_fit_predict(X, y)
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_regret_bound_of_proposition_1():
    """sum (y - yhat)^2 <= l y'(K + l I)^{-1} y + B^2 sum_j log(1 + l_j(K)/l); the first term is
    min_f [sum (y - f(x))^2 + l ||f||^2]. Spec's example: 23.78 <= 20.91 + 13.74 (n=400, R=0.5)."""
    rng = np.random.default_rng(2)
    n = 400
    g = rng.standard_normal((n, 2))
    X = g / np.linalg.norm(g, axis=1, keepdims=True) * 0.5 * np.sqrt(rng.uniform(0, 1, (n, 1)))
    y = np.clip(np.sin(3 * X[:, 0]) * np.cos(2 * X[:, 1]) + 0.2 * rng.standard_normal(n), -1, 1)
    reg = paper(KernelAWVRegressor).fit(X, y)
    K = rbf_kernel(X, gamma=0.5)
    best = y @ np.linalg.solve(K + np.eye(n), y)
    log_term = np.sum(np.log1p(np.clip(np.linalg.eigvalsh(K), 0, None)))
    assert reg.cumulative_loss_ <= best + 1.0 * log_term
    # the AWV shrinkage is what the bound needs: ridge is the same up to the shrink factor
    ridge = paper(KernelAWVRegressor, algorithm="ridge").fit(X, y)
    assert reg.cumulative_loss_ != ridge.cumulative_loss_


def test_predict_is_the_next_round_and_dual_coef_is_the_ridge_solution():
    X, y = _data(n=100)
    reg = paper(KernelAWVRegressor, alpha=0.3).fit(X[:80], y[:80])
    K = rbf_kernel(X[:80], gamma=0.5)
    np.testing.assert_allclose(reg.dual_coef_, np.linalg.solve(K + 0.3 * np.eye(80), y[:80]), rtol=1e-8)
    np.testing.assert_array_equal(reg.X_fit_, X[:80])
    p = reg.predict(X[80:])
    for i in range(80, 100):
        step = paper(KernelAWVRegressor, alpha=0.3).fit(X[:80], y[:80]).partial_fit_predict(X[i : i + 1], y[i : i + 1])
        np.testing.assert_allclose(p[i - 80], step[0], rtol=1e-10, atol=1e-13)


def test_chunking_across_buffer_growth_is_bitwise():
    """The shared checks use 60 rows; this crosses the 256-row first capacity twice."""
    X, y = _data(n=700)
    a = paper(KernelAWVRegressor)
    pa = a.partial_fit_predict(X, y)
    b = paper(KernelAWVRegressor)
    pb = np.concatenate([b.partial_fit_predict(X[s], y[s]) for s in (slice(0, 255), slice(255, 257),
                                                                      slice(257, 600), slice(600, 700))])
    np.testing.assert_array_equal(pa, pb)
    np.testing.assert_array_equal(a._chol_buf_, b._chol_buf_)
    assert a._chol_buf_.shape == (1024, 1024)
    assert a.cumulative_loss_ == b.cumulative_loss_


def test_per_round_cost_grows_with_t():
    """Complexity smoke test: O(t^2) per round, so 2x the rows costs clearly more than 2x."""
    import time

    X, y = _data(n=1600)
    paper(KernelAWVRegressor).fit(X[:50], y[:50])  # compile

    def best_time(n):
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            paper(KernelAWVRegressor).fit(X[:n], y[:n])
            times.append(time.perf_counter() - t0)
        return min(times)

    assert best_time(1600) > 3.0 * best_time(800)  # 8x in theory (sum of t^2)


# --------------------------------------------------------------------------- numerics at small alpha
def _direct_awv(X, y, alpha, sigma, rounds):
    """The reference: a direct solve of the kernel system at each of the given rounds (issue 11)."""
    from scipy.linalg import solve

    K = rbf_kernel(X, gamma=1 / (2 * sigma**2))
    out = np.zeros(len(rounds))
    for i, t in enumerate(rounds):
        Kt = K[: t + 1, : t + 1]
        out[i] = Kt[t] @ solve(Kt + alpha * np.eye(t + 1), np.r_[y[:t], 0.0], assume_a="pos")
    return out


@pytest.mark.parametrize("near_duplicates", [False, True])
@pytest.mark.parametrize("alpha", [1.0, 1e-2, 1e-4, 1e-6, 1e-8])
def test_small_alpha_matches_a_direct_solve(alpha, near_duplicates):
    """Issue 11: the inverse grown by Schur complements drifted by 1e-2 at alpha=1e-6 (and raised
    FloatingPointError at 1e-8); the Cholesky factor stays within 1e-6 of a direct solve."""
    rng = np.random.default_rng(3)
    n = 240
    X = rng.uniform(-1, 1, (n, 3))
    if near_duplicates:
        X[1::2] = X[::2] + 1e-6 * rng.standard_normal(X[1::2].shape)
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    pred = paper(KernelAWVRegressor, alpha=alpha).partial_fit_predict(X, y)
    assert np.all(np.isfinite(pred))
    rounds = np.r_[np.arange(0, n - 20, 3), np.arange(n - 20, n)]  # every third, then every round
    ref = _direct_awv(X, y, alpha, 1.0, rounds)
    assert np.max(np.abs(pred[rounds] - ref)) <= 1e-6 * np.max(np.abs(ref))


# --------------------------------------------------------------------------- budget and pickles
def _pivoted_dictionary(K, m, rel_tol=1e-10):
    """Greedy pivoted Cholesky of K (largest residual first, smallest index among equals)."""
    n = K.shape[0]
    G = np.zeros((n, m))
    r = np.diag(K).copy()
    top = r.max()
    piv = []
    for j in range(m):
        s = int(np.argmax(np.where(r > rel_tol * top, r, -np.inf)))
        if not r[s] > rel_tol * top:
            break
        G[:, j] = (K[:, s] - G[:, :j] @ G[s, :j]) / np.sqrt(r[s])
        r = r - G[:, j] ** 2
        r[s] = 0.0
        piv.append(s)
    return np.array(piv)


@pytest.mark.parametrize("algorithm", ["awv", "ridge"])
def test_budget_switches_to_pkawv_on_a_pivoted_dictionary_of_the_stored_rows(algorithm):
    """Past max_rows the forecaster is PKAWV with a fixed dictionary D (the greedy pivoted Cholesky
    of the stored rows' kernel matrix): with phi(x) = L^{-1} k_D(x), L L' = K_DD, it is linear AWV
    on phi over every row, the stored ones included: y_t = phi_t'(l I + sum_{s<=t} phi_s phi_s')^{-1}
    sum_{s<t} y_s phi_s (AWV). Solved directly here at every round after the switch."""
    X, y = _data(n=260, d=2, R=1.0, seed=4)
    B, m, lam, gamma = 120, 30, 0.5, 0.5
    reg = paper(KernelAWVRegressor, alpha=lam, max_rows=B, n_components=m, algorithm=algorithm)
    p = reg.partial_fit_predict(X, y)
    exact = paper(KernelAWVRegressor, alpha=lam, max_rows=None, algorithm=algorithm).partial_fit_predict(X[:B], y[:B])
    np.testing.assert_array_equal(p[:B], exact)  # before the budget: exact Kernel-AWV, bit for bit
    K = rbf_kernel(X, gamma=gamma)
    piv = _pivoted_dictionary(K[:B, :B], m)
    assert len(piv) == m == reg.n_components_ and reg.n_rows_stored_ == B and reg.n_rows_after_budget_ == 260 - B
    np.testing.assert_array_equal(reg.components_, X[piv])
    L = np.linalg.cholesky(K[np.ix_(piv, piv)])
    Phi = np.linalg.solve(L, K[:, piv].T).T
    for t in range(B, 260):
        A = lam * np.eye(m) + Phi[:t].T @ Phi[:t]
        if algorithm == "awv":
            A += np.outer(Phi[t], Phi[t])
        ref = Phi[t] @ np.linalg.solve(A, Phi[:t].T @ y[:t])
        np.testing.assert_allclose(p[t], ref, rtol=1e-8, atol=1e-10)
    A = lam * np.eye(m) + Phi.T @ Phi
    w = np.linalg.solve(A, Phi.T @ y)
    Xn = _data(n=20, d=2, seed=9)[0]
    Phin = np.linalg.solve(L, rbf_kernel(X[piv], Xn, gamma=gamma)).T
    ref = Phin @ w
    if algorithm == "awv":
        ref = ref / (1 + np.einsum("ij,ij->i", Phin @ np.linalg.inv(A), Phin))
    np.testing.assert_allclose(reg.predict(Xn), ref, rtol=1e-8, atol=1e-10)


def test_budget_with_the_linear_kernel_stays_exact():
    """The linear kernel's pivoted dictionary spans the row space (d = 3 pivots): past the budget
    the forecaster is still exact linear AWV on the raw features."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 3))
    y = X @ [1.0, -1.0, 0.5] + 0.2 * rng.standard_normal(300)
    reg = paper(KernelAWVRegressor, kernel="linear", alpha=0.7, max_rows=40)
    a = reg.partial_fit_predict(X, y)
    assert reg.n_components_ == 3
    b = paper(AWVRegressor, alpha=0.7).partial_fit_predict(X, y)
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11)


def test_budget_bounds_memory_and_releases_the_stored_rows():
    X, y = _data(n=3000)
    reg = paper(KernelAWVRegressor, max_rows=50, n_components=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the switch is the designed behaviour: no warning
        reg.partial_fit(X[:100], y[:100])
    shapes = {k: v.shape for k, v in vars(reg).items() if isinstance(v, np.ndarray)}
    assert reg._chol_buf_.shape == (0, 0) and reg._precision_.shape == (20, 20)
    held = sum(v.nbytes for v in vars(reg).values() if isinstance(v, np.ndarray))
    assert held < 8 * (3 * 20 * 20 + 20 * 2 + 100)
    for s in range(100, 3000, 500):
        reg.partial_fit(X[s : s + 500], y[s : s + 500])
        assert {k: v.shape for k, v in vars(reg).items() if isinstance(v, np.ndarray)} == shapes
    assert reg.n_rows_stored_ == 50 and reg.n_rows_after_budget_ == 2950 and reg.n_samples_seen_ == 3000
    with pytest.raises(AttributeError, match="released"):
        _ = reg.X_fit_
    # one call, or chunks across the switch: the same model bit for bit
    ref = paper(KernelAWVRegressor, max_rows=50, n_components=20)
    ref.fit(X, y)
    np.testing.assert_array_equal(ref.predict(X[:50]), reg.predict(X[:50]))
    np.testing.assert_array_equal(ref._precision_, reg._precision_)


def test_pickle_holds_only_the_used_rows():
    import pickle

    X, y = _data(n=300)
    reg = paper(KernelAWVRegressor).fit(X[:260], y[:260])  # capacity 512: the buffers are 4x the state
    assert reg._chol_buf_.shape == (512, 512)
    blob = pickle.dumps(reg)
    assert len(blob) < 8 * (260 * 260 + 260 * 3) + 20_000
    back = pickle.loads(blob)
    assert back._chol_buf_.shape == (512, 512)
    np.testing.assert_array_equal(back._chol_buf_, reg._chol_buf_)
    np.testing.assert_array_equal(back.partial_fit_predict(X[260:], y[260:]), reg.partial_fit_predict(X[260:], y[260:]))


def test_unbounded_state_warns_before_it_passes_a_gigabyte():
    from skonline.utils._growing import WARN_BYTES, warn_growth

    reg = paper(KernelAWVRegressor, max_rows=None).fit(*_data(n=10))
    # the buffers double from 8,192 to 16,384 rows at row 8,193: 0.5 GB -> 2.1 GB
    assert reg._state_bytes(8192) < WARN_BYTES <= reg._state_bytes(8193)
    kw = {"what": "the stored rows", "param": "max_rows", "budget": None, "nbytes": reg._state_bytes, "policy": ""}
    with pytest.warns(UserWarning, match="max_rows=None lets them grow"):
        warn_growth(reg, before=8000, after=8300, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_growth(reg, before=8300, after=9000, **kw)  # once, in the call that crosses


def _wide_csr(n=260, d=5000, seed=0):
    """CSR rows wider than the dense limit (4,096 features): 5-150 entries per row (the first rows
    the densest, so the sparse store grows its entries), targets the sum of the 50 most frequent
    columns."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for i in range(n):
        k = 400 if i < 60 else int(rng.integers(5, 30))
        c = np.unique(np.minimum((d * rng.random(k) ** 3).astype(np.int64), d - 1))
        rows += [i] * len(c)
        cols += list(c)
        vals += list(rng.uniform(-1, 1, len(c)))
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n, d))
    y = X[:, :50].toarray().sum(axis=1) + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("max_rows", [None, 120])
def test_wide_csr_rows_are_stored_sparse_and_match_the_dense_computation(kernel, max_rows, monkeypatch):
    """Beyond 4,096 features the rows learned are kept sparse (kernel values at O(nnz):
    ||x||^2 + ||c||^2 - 2 x'c) and the switch at max_rows builds its dictionary from them; the
    predictions equal those of the dense computation on the same rows (the dense limit raised so
    that the same estimator stores dense rows) to round-off, before and after the switch."""
    import scipy.sparse as sp

    from skonline.utils import _scaling

    X, y = _wide_csr()
    params = {"kernel": kernel, "sigma": 8.0, "alpha": 0.3, "max_rows": max_rows, "n_components": 30,
              "standardize": False}
    off = rbf_kernel(X[:120].toarray(), gamma=1 / 128)[np.triu_indices(120, 1)]
    assert np.mean((off > 0.05) & (off < 0.95)) > 0.5  # kernel values neither 0 nor 1: a real test
    sparse = KernelAWVRegressor(**params)
    p_sparse = sparse.partial_fit_predict(X[:200], y[:200])
    assert sparse._X_val_.shape[0] > 256 * 64 or max_rows is not None  # the entries' buffer grew
    p_sparse = np.concatenate([p_sparse, sparse.partial_fit_predict(X[200:].toarray(), y[200:])])
    fitted = sparse.X_fit_ if max_rows is None else sparse.components_
    assert sp.issparse(fitted) and not any(k in vars(sparse) for k in ("_X_buf_", "_dict_XT_"))
    monkeypatch.setattr(_scaling, "WIDE_FEATURES", 10**9)
    dense = KernelAWVRegressor(**params)
    p_dense = dense.partial_fit_predict(X, y)
    assert "_X_buf_" in vars(dense) or "_dict_XT_" in vars(dense)
    np.testing.assert_allclose(p_sparse, p_dense, rtol=1e-9, atol=1e-11)
    if max_rows is None:
        assert np.corrcoef(p_dense[120:], y[120:])[0, 1] > 0.5  # it learns
    np.testing.assert_allclose(fitted.toarray(), dense.X_fit_ if max_rows is None else dense.components_)
    Xn, _ = _wide_csr(n=30, seed=5)
    expect = dense.predict(Xn.toarray())
    monkeypatch.undo()
    np.testing.assert_allclose(sparse.predict(Xn), expect, rtol=1e-9, atol=1e-11)
    np.testing.assert_array_equal(sparse.predict(Xn), sparse.predict(Xn.toarray()))


def test_wide_csr_rows_chunking_and_pickling_are_bitwise():
    """The sparse store across its growths (rows and entries) and the switch: any chunking, and a
    pickle taken mid-stream, give the same model bit for bit."""
    import pickle

    X, y = _wide_csr()
    params = {"sigma": 8.0, "max_rows": 150, "n_components": 30}
    ref = KernelAWVRegressor(**params)
    p_ref = ref.partial_fit_predict(X, y)
    est = KernelAWVRegressor(**params)
    parts = []
    for a, b in ((0, 7), (7, 100), (100, 149), (149, 151), (151, 260)):
        parts.append(est.partial_fit_predict(X[a:b], y[a:b]))
        if b == 100:
            est = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(np.concatenate(parts), p_ref)
    np.testing.assert_array_equal(est.predict(X[:40]), ref.predict(X[:40]))
    np.testing.assert_array_equal(est._precision_, ref._precision_)
