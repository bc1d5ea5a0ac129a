"""AWVRegressor: the Azoury-Warmuth-Vovk forecaster (Jézéquel et al. 2019, Algorithm 1)."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.preprocessing import StandardScaler

from skonline.kernel_approximation import TaylorFeatures
from skonline.kernel_ridge import AWVRegressor, PKAWVRegressor

from _paper import paper


def _data(n=80, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("alpha", [1.0, 0.05, 7.0])
def test_awv_is_ridge_with_the_current_point_at_target_zero(alpha):
    X, y = _data()
    pred = paper(AWVRegressor, alpha=alpha).partial_fit_predict(X, y)
    for t in range(X.shape[0]):
        ridge = Ridge(alpha=alpha, fit_intercept=False, solver="cholesky")
        ridge.fit(X[: t + 1], np.r_[y[:t], 0.0])
        np.testing.assert_allclose(pred[t], ridge.predict(X[t : t + 1])[0], rtol=1e-10, atol=1e-12)


def test_ridge_mode_is_ridge_on_the_past():
    X, y = _data()
    pred = paper(AWVRegressor, alpha=0.5, algorithm="ridge").partial_fit_predict(X, y)
    assert pred[0] == 0.0
    for t in range(1, X.shape[0]):
        ridge = Ridge(alpha=0.5, fit_intercept=False, solver="cholesky").fit(X[:t], y[:t])
        np.testing.assert_allclose(pred[t], ridge.predict(X[t : t + 1])[0], rtol=1e-10, atol=1e-12)


def test_awv_is_ridge_shrunk_by_the_leverage_factor():
    """y_awv = y_ridge / (1 + v' A_{t-1}^{-1} v)."""
    X, y = _data()
    awv = paper(AWVRegressor, alpha=2.0).partial_fit_predict(X, y)
    ridge = paper(AWVRegressor, alpha=2.0, algorithm="ridge").partial_fit_predict(X, y)
    for t in range(X.shape[0]):
        A = 2.0 * np.eye(4) + X[:t].T @ X[:t]
        lev = X[t] @ np.linalg.solve(A, X[t])
        np.testing.assert_allclose(awv[t], ridge[t] / (1 + lev), rtol=1e-12, atol=1e-14)


def test_state_is_the_direct_solve_and_predict_is_the_next_round():
    X, y = _data()
    reg = paper(AWVRegressor, alpha=1.5).fit(X[:60], y[:60])
    A = 1.5 * np.eye(4) + X[:60].T @ X[:60]
    np.testing.assert_allclose(reg.precision_, np.linalg.inv(A), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(reg.b_, X[:60].T @ y[:60], rtol=1e-12)
    np.testing.assert_allclose(reg.coef_, np.linalg.solve(A, X[:60].T @ y[:60]), rtol=1e-10)
    nxt = reg.predict(X[60:])
    for i in range(60, 80):
        step = paper(AWVRegressor, alpha=1.5).fit(X[:60], y[:60]).partial_fit_predict(X[i : i + 1], y[i : i + 1])
        np.testing.assert_allclose(nxt[i - 60], step[0], rtol=1e-10, atol=1e-14)


def test_cumulative_loss_and_clip():
    X, y = _data()
    reg = paper(AWVRegressor)
    pred = reg.partial_fit_predict(X, y)
    assert reg.cumulative_loss_ == pytest.approx(np.sum((y - pred) ** 2), rel=1e-12)
    c = paper(AWVRegressor, prediction_bound=0.5)
    pc = c.partial_fit_predict(X, y)
    np.testing.assert_array_equal(pc, np.clip(pred, -0.5, 0.5))  # clipping does not touch the state
    assert np.abs(c.predict(X)).max() <= 0.5
    assert c.cumulative_loss_ == pytest.approx(np.sum((y - pc) ** 2), rel=1e-12)


def test_awv_regret_bound():
    """Sum of losses <= min_w [sum (y - w'x)^2 + lambda ||w||^2] + B^2 sum_j log(1 + l_j / lambda)."""
    X, y = _data(n=300, d=5, seed=3)
    y = np.clip(y, -2, 2)
    lam, B = 1.0, 2.0
    reg = paper(AWVRegressor, alpha=lam).fit(X, y)
    best = y @ y - y @ X @ np.linalg.solve(lam * np.eye(5) + X.T @ X, X.T @ y)
    ev = np.linalg.eigvalsh(X.T @ X)
    bound = best + B**2 * np.sum(np.log1p(ev / lam))
    assert reg.cumulative_loss_ <= bound


def test_with_taylor_transformer_equals_pkawv_taylor():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (150, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]
    a = paper(AWVRegressor, transformer=TaylorFeatures(degree=3, sigma=0.9)).partial_fit_predict(X, y)
    b = paper(PKAWVRegressor, degree=3, sigma=0.9).partial_fit_predict(X, y)
    np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_transformer_fitted_is_used_as_is_unfitted_is_fitted_on_the_first_chunk():
    X, y = _data()
    sc = StandardScaler().fit(X * 3 + 1)
    reg = paper(AWVRegressor, transformer=sc).fit(X, y)
    assert reg.transformer_ is not sc
    np.testing.assert_array_equal(reg.transformer_.mean_, sc.mean_)
    reg2 = paper(AWVRegressor, transformer=StandardScaler()).partial_fit(X[:20], y[:20])
    np.testing.assert_allclose(reg2.transformer_.mean_, X[:20].mean(0))
    reg2.partial_fit(X[20:], y[20:])
    np.testing.assert_allclose(reg2.transformer_.mean_, X[:20].mean(0))  # frozen after the first chunk


def test_conditioning_stays_sane_over_1e5_rows():
    """Sherman-Morrison on A^{-1} over 10^5 rows (m = 56 Taylor features): A^{-1} stays exactly
    symmetric, positive definite, and equal to the direct inverse; the last predictions too."""
    rng = np.random.default_rng(5)
    n = 100_000
    X = rng.uniform(-1, 1, (n, 5))
    y = np.clip(np.sin(3 * X[:, 0]) * X[:, 1] + 0.1 * rng.standard_normal(n), -1, 1)
    reg = paper(PKAWVRegressor, degree=3, sigma=1.0).fit(X, y)
    P = reg.precision_
    np.testing.assert_array_equal(P, P.T)
    V = TaylorFeatures(degree=3).fit_transform(X)
    A = np.eye(V.shape[1]) + V.T @ V
    ev = np.linalg.eigvalsh(P)
    assert ev.min() > 0 and ev.max() <= 1.0 + 1e-12
    Pd = np.linalg.inv(A)
    assert np.abs(P - Pd).max() / np.abs(Pd).max() < 1e-8
    Xq = rng.uniform(-1, 1, (200, 5))
    Vq = TaylorFeatures(degree=3).fit_transform(Xq)
    w = np.linalg.solve(A, V.T @ y)
    ref = Vq @ w / (1 + np.einsum("ij,ij->i", Vq @ Pd, Vq))
    np.testing.assert_allclose(reg.predict(Xq), ref, rtol=1e-7, atol=1e-9)


def test_too_many_features_gives_a_clear_memory_error(monkeypatch):
    """AWV keeps an m x m matrix: where it cannot be allocated (2^18 CSR columns: 512 GiB), the
    MemoryError says why and what to use instead, and the estimator is unchanged."""
    from skonline.kernel_ridge import _base

    def no_memory(m, *a, **k):
        raise MemoryError(f"Unable to allocate {8 * m * m} bytes")

    monkeypatch.setattr(_base.np, "eye", no_memory)
    est = paper(AWVRegressor)
    with pytest.raises(MemoryError, match=r"m = 50 features .* linear in\s+the features"):
        est.fit(np.ones((4, 50)), np.arange(4.0))
    assert not hasattr(est, "n_samples_seen_")
