"""Clipped simplex and clipped spectraplex projections: exactness against a generic solver, KKT
structure, edge cases, and the compiled Jacobi eigensolver."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from skonline.utils import project_clipped_simplex, project_clipped_spectraplex
from skonline.utils._projections import clip_project, jacobi_eigh


def _reference_sort(logp, gamma):
    """Sort-based projection, written independently (spec App. A.1)."""
    K = logp.shape[0]
    p = np.exp(logp - np.max(logp))
    q = np.sort(p)[::-1]
    S = np.cumsum(q)
    k = np.arange(1, K + 1)
    valid = q * (1.0 - (K - k) * gamma) >= gamma * S
    kstar = np.flatnonzero(valid)[-1] + 1
    lam = (1.0 - (K - kstar) * gamma) / S[kstar - 1]
    return np.maximum(gamma, lam * p)


def _slsqp(p, gamma):
    K = p.shape[0]
    pb = p / p.sum()
    res = minimize(
        lambda x: np.sum(x * np.log(np.maximum(x, 1e-300) / pb)),
        np.full(K, 1.0 / K),
        jac=lambda x: np.log(np.maximum(x, 1e-300) / pb) + 1.0,
        method="SLSQP",
        bounds=[(gamma, 1.0)] * K,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0, "jac": lambda x: np.ones(K)}],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    return res.x


def test_agrees_with_generic_solver():
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(60):
        K = int(rng.integers(2, 13))
        logp = rng.normal(0.0, 3.0, K)  # log-normal p, spread sigma = 3
        gamma = rng.uniform(0.0, 1.0 / K)
        w = project_clipped_simplex(logp, gamma)
        ref = _slsqp(np.exp(logp), gamma)
        worst = max(worst, np.abs(w - ref).max())
    assert worst < 1e-6


def test_kkt_structure_and_invariants():
    rng = np.random.default_rng(1)
    for _ in range(300):
        K = int(rng.integers(1, 40))
        logp = rng.normal(0.0, rng.uniform(0.1, 20.0), K)
        gamma = rng.uniform(0.0, 1.0 / K)
        w = project_clipped_simplex(logp, gamma)
        p = np.exp(logp - logp.max())
        assert abs(w.sum() - 1.0) <= 1e-12
        assert w.min() >= gamma - 1e-15
        # one lambda: free coordinates are lam * p, clipped ones satisfy lam * p <= gamma
        free = w > gamma
        lam = w[free] / p[free]
        assert np.ptp(lam) <= 1e-12 * lam.max()
        assert np.all(lam[0] * p[~free] <= gamma * (1 + 1e-12))
        # same as the independent sort-based reference
        np.testing.assert_allclose(w, _reference_sort(logp, gamma), rtol=1e-12, atol=1e-15)
        # scale invariance and idempotence on the clipped simplex
        np.testing.assert_allclose(project_clipped_simplex(logp + 123.4, gamma), w, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(project_clipped_simplex(np.log(w), gamma), w, rtol=1e-12, atol=1e-15)


def test_zero_floor_is_normalisation_and_zero_weights_hit_the_floor():
    logp = np.log([3.0, 1.0, 0.5])
    np.testing.assert_allclose(project_clipped_simplex(logp, 0.0), [3 / 4.5, 1 / 4.5, 0.5 / 4.5], rtol=1e-15)
    w = project_clipped_simplex(np.array([0.0, -np.inf, 1.0, -np.inf]), 0.05)
    assert w[1] == 0.05 and w[3] == 0.05
    assert abs(w.sum() - 1.0) <= 1e-15
    # floor = 1/K: the single point uniform
    np.testing.assert_allclose(
        project_clipped_simplex(np.array([5.0, 0.0, -3.0]), 1.0 / 3.0), np.full(3, 1.0 / 3.0), rtol=1e-15
    )


def test_bad_inputs():
    with pytest.raises(ValueError, match="Infeasible floor"):
        project_clipped_simplex(np.zeros(4), 0.3)
    with pytest.raises(ValueError, match="NaN"):
        project_clipped_simplex(np.array([0.0, np.nan]), 0.1)
    with pytest.raises(ValueError, match="finite entry"):
        project_clipped_simplex(np.array([-np.inf, -np.inf]), 0.1)


def test_sort_fallback_path_is_exact():
    """A geometric p needs many fixed-point passes: the O(K log K) sort takes over, same answer."""
    K = 300
    logp = -0.01 * np.arange(K)
    gamma = 0.99 / K
    out = np.empty(K)
    logw = np.empty(K)
    d, p, sb = np.empty(K), np.empty(K), np.empty(K)
    kb = np.empty(K, dtype=np.int64)
    clip_project(logp, K, gamma, math.log(gamma), out, logw, d, p, kb, sb)
    np.testing.assert_allclose(out, _reference_sort(logp, gamma), rtol=1e-12)
    np.testing.assert_allclose(np.exp(logw), out, rtol=1e-12)
    # the iteration count really exceeds the fixed-point budget here
    lam = 1.0 / np.exp(logp).sum()
    passes, clipped = 0, np.zeros(K, bool)
    while True:
        passes += 1
        new = (~clipped) & (lam * np.exp(logp) < gamma)
        if not new.any():
            break
        clipped |= new
        lam = (1 - clipped.sum() * gamma) / np.exp(logp)[~clipped].sum()
    assert passes > 4


def test_log_weights_output_matches_weights():
    rng = np.random.default_rng(2)
    K = 12
    out, logw = np.empty(K), np.empty(K)
    d, p, sb = np.empty(K), np.empty(K), np.empty(K)
    kb = np.empty(K, dtype=np.int64)
    for _ in range(100):
        logp = rng.normal(0, 5, K)
        g = rng.uniform(0, 1 / K)
        clip_project(logp, K, g, math.log(g), out, logw, d, p, kb, sb)
        np.testing.assert_allclose(np.exp(logw), out, rtol=1e-13)


# ----------------------------------------------------------------------------- spectraplex
def _random_feasible(rng, K, gamma):
    A = rng.standard_normal((K, K))
    V, _ = np.linalg.qr(A)
    lam = rng.dirichlet(np.ones(K)) * (1 - K * gamma) + gamma
    return (V * lam) @ V.T


def _logm(W):
    w, V = np.linalg.eigh(W)
    return (V * np.log(w)) @ V.T


def test_spectraplex_projection_variational_inequality():
    rng = np.random.default_rng(3)
    for _ in range(40):
        K = int(rng.integers(1, 7))
        gamma = rng.uniform(0, 1.0 / K)
        B = rng.standard_normal((K, K)) * 2
        Q = (B + B.T) / 2
        w, V = project_clipped_spectraplex(Q, gamma)
        W = (V * w) @ V.T
        assert abs(np.trace(W) - 1) < 1e-12
        assert np.linalg.eigvalsh(W).min() >= gamma - 1e-12
        # first-order optimality of min Tr(W log W) - Tr(W Q): Tr((U - W)(log W + I - Q)) >= 0
        G = _logm(W) - Q
        obj = np.trace(W @ _logm(W)) - np.trace(W @ Q)
        for _ in range(30):
            U = _random_feasible(rng, K, gamma)
            assert np.trace((U - W) @ G) >= -1e-10
            assert np.trace(U @ _logm(U)) - np.trace(U @ Q) >= obj - 1e-10


def test_spectraplex_on_diagonal_is_the_simplex_projection():
    q = np.array([0.3, -2.0, 1.0, -9.0])
    w, V = project_clipped_spectraplex(np.diag(q), 0.05)
    W = (V * w) @ V.T
    np.testing.assert_allclose(np.diag(W), project_clipped_simplex(q, 0.05), atol=1e-14)
    np.testing.assert_allclose(W - np.diag(np.diag(W)), 0, atol=1e-14)


def test_jacobi_eigh_matches_lapack():
    rng = np.random.default_rng(4)
    for K in (1, 2, 3, 5, 8, 20):
        B = rng.standard_normal((K, K))
        A = (B + B.T) / 2
        A2 = A.copy()
        V = np.empty((K, K))
        jacobi_eigh(A2, K, V)
        lam = np.diag(A2)
        np.testing.assert_allclose(np.sort(lam), np.linalg.eigvalsh(A), atol=1e-12)
        np.testing.assert_allclose((V * lam) @ V.T, A, atol=1e-12)
        np.testing.assert_allclose(V.T @ V, np.eye(K), atol=1e-12)
    # diagonal input: untouched, V = I
    D = np.diag([3.0, -1.0, 0.5])
    V = np.empty((3, 3))
    D2 = D.copy()
    jacobi_eigh(D2, 3, V)
    np.testing.assert_array_equal(D2, D)
    np.testing.assert_array_equal(V, np.eye(3))
