"""Clipped simplex and clipped spectraplex projections: exactness against a generic solver, KKT
structure, edge cases, and the compiled Jacobi eigensolver."""

import math

import numba
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
    clip_project(logp, K, gamma, math.log(gamma), out, logw, d, p, sb)
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
    for _ in range(100):
        logp = rng.normal(0, 5, K)
        g = rng.uniform(0, 1 / K)
        clip_project(logp, K, g, math.log(g), out, logw, d, p, sb)
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


@numba.njit
def _jacobi_eigh(A, K, V):
    # jacobi_eigh has no Python entry point (utils._jit.compiled_only): call it as the cores do
    return jacobi_eigh(A, K, V)


def test_jacobi_eigh_matches_lapack():
    rng = np.random.default_rng(4)
    for K in (1, 2, 3, 5, 8, 20):
        B = rng.standard_normal((K, K))
        A = (B + B.T) / 2
        A2 = A.copy()
        V = np.empty((K, K))
        _jacobi_eigh(A2, K, V)
        lam = np.diag(A2)
        np.testing.assert_allclose(np.sort(lam), np.linalg.eigvalsh(A), atol=1e-12)
        np.testing.assert_allclose((V * lam) @ V.T, A, atol=1e-12)
        np.testing.assert_allclose(V.T @ V, np.eye(K), atol=1e-12)
    # diagonal input: untouched, V = I
    D = np.diag([3.0, -1.0, 0.5])
    V = np.empty((3, 3))
    D2 = D.copy()
    _jacobi_eigh(D2, 3, V)
    np.testing.assert_array_equal(D2, D)
    np.testing.assert_array_equal(V, np.eye(3))


# ----------------------------------------------------------------------------- the rules' copies
def _fixed_point_passes(logp, gamma):
    """Passes the compiled fixed point needs on ``logp`` (the last one finds nothing to clip)."""
    p = np.exp(logp - np.max(logp))
    lam, clipped, n = 1.0 / p.sum(), np.zeros(p.shape[0], bool), 0
    while True:
        n += 1
        new = ~clipped & (p < 1.0) & (lam * p < gamma)
        if not new.any():
            return n
        clipped |= new
        lam = (1.0 - clipped.sum() * gamma) / p[~clipped].sum()


def _fallback_stream():
    """K = 130 experts, a floor close to 1/K (S = 199 segments in T = 200 rounds), each row a
    shuffled ramp of losses: the projections need more fixed-point passes than the budget."""
    from skonline.utils._projections import _MAX_FIXED_POINT_PASSES

    K, T, S = 130, 200, 199
    rng = np.random.default_rng(0)
    L = np.array([rng.permutation(np.linspace(0.0, 1.0, K)) for _ in range(12)])
    return L, dict(horizon=T, n_segments=S), S / (T * K), _MAX_FIXED_POINT_PASSES


@pytest.mark.parametrize("prod", [False, True], ids=["ClippedHedge", "PCS"])
def test_exponential_pass_sort_fallback_agrees_with_project_clipped_simplex(prod):
    """The projection written out in _rules_core.exponential_pass, where the fixed point runs out
    of passes and the exact sort takes over, equals project_clipped_simplex."""
    from skonline.experts import PCS, ClippedHedge

    L, kw, gamma, budget = _fallback_stream()
    eta = 0.3
    W = (PCS if prod else ClippedHedge)(eta=eta, **kw).partial_fit_predict(L)
    w, expected, passes = np.full(L.shape[1], 1.0 / L.shape[1]), [], []
    for row in L:
        expected.append(w)
        logp = np.log(w) - (-np.log1p(-eta * row) if prod else eta * row)
        passes.append(_fixed_point_passes(logp, gamma))
        w = project_clipped_simplex(logp, gamma)
    assert max(passes) > budget  # the fallback is reached
    np.testing.assert_allclose(W, np.array(expected), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("plus", [False, True], ids=["OCS", "OCSPlus"])
def test_optimistic_pass_sort_fallbacks_agree_with_project_clipped_simplex(plus):
    """Both projections written out in _rules_core.optimistic_pass (the optimistic play (17) and
    the update (18)) reach the sort fallback here and equal project_clipped_simplex."""
    from skonline.experts import OCS, OCSPlus

    L, kw, gamma, budget = _fallback_stream()
    K = L.shape[1]
    if plus:  # OCS+ (Algorithm 4) sets eta itself: sqrt(c), halved by its path-length test
        W = OCSPlus(**kw).partial_fit_predict(L)
        c = kw["n_segments"] * math.log(K * kw["horizon"] / kw["n_segments"])
        eta, P, prev, etas = math.sqrt(c), 0.0, np.zeros(K), []
        for row in L:
            etas.append(eta)
            P += np.max(np.abs(row - prev)) ** 2
            prev = row
            if P > 0 and eta > math.sqrt(c / P):
                eta, P = eta / 2, 0.0
    else:
        W = OCS(eta=0.3, **kw).partial_fit_predict(L)
        etas = [0.3] * len(L)
    wt, prev = np.full(L.shape[1], 1.0 / L.shape[1]), np.zeros(L.shape[1])
    expected, passes17, passes18 = [], [], []
    for row, eta_t in zip(L, etas):
        logp17 = np.log(wt) - eta_t * prev
        passes17.append(_fixed_point_passes(logp17, gamma))
        expected.append(project_clipped_simplex(logp17, gamma))
        logp18 = np.log(wt) - eta_t * row
        passes18.append(_fixed_point_passes(logp18, gamma))
        wt = project_clipped_simplex(logp18, gamma)
        prev = row
    assert max(passes17) > budget and max(passes18) > budget  # both fallbacks are reached
    np.testing.assert_allclose(W, np.array(expected), rtol=1e-12, atol=1e-15)
