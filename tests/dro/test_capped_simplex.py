"""KL projection onto the capped simplex (Alg. 8, log space) and DepRound (Alg. 9)."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize

from skonline.utils import depround, kl_project_capped_simplex
from skonline.utils._capped_simplex import (
    depround_select,
    project_capped_log,
    project_capped_log_lin,
)


def _slsqp_projection(p, k, g=None, eta=0.0):
    """Generic solver: argmin_q <-eta g, q> + sum q log(q/p) - q + p over the capped simplex."""
    m = p.shape[0]
    g = np.zeros(m) if g is None else g
    p = p / p.sum()  # same minimiser on sum q = 1 (the objective shifts by a constant)

    def f(q):
        q = np.maximum(q, 1e-300)
        return -eta * g @ q + np.sum(q * np.log(q / p) - q + p)

    def jac(q):
        return -eta * g + np.log(np.maximum(q, 1e-300) / p)

    res = minimize(
        f, np.full(m, 1.0 / m), jac=jac, method="SLSQP", bounds=[(1e-14, 1.0 / k)] * m,
        constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1.0, "jac": lambda q: np.ones(m)}],
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    # (SLSQP may stop with "positive directional derivative" once at its precision limit; the
    # comparison below is what checks the answer)
    return res.x


def _kkt_projection(p, k):
    """The KKT form q = min(1/k, c p) with c found by bracketing (independent scalar solve)."""
    p = p / p.max()
    if k == p.shape[0]:
        return np.full(k, 1.0 / k)
    c = brentq(lambda c: np.minimum(1.0 / k, c * p).sum() - 1.0, 1e-300, 1e300, xtol=1e-300,
               rtol=4 * np.finfo(float).eps, maxiter=2000)
    return np.minimum(1.0 / k, c * p)


def test_projection_matches_generic_solver():
    rng = np.random.default_rng(0)
    worst_slsqp = worst_kkt = 0.0
    for trial in range(120):
        m = int(rng.integers(2, 31))
        k = int(rng.integers(1, m + 1))
        logp = rng.normal(0.0, 1.5, m) + rng.normal(0.0, 3.0)  # unnormalised
        q = np.exp(kl_project_capped_simplex(logp, k))
        p = np.exp(logp)
        if trial < 30:  # the generic solver is slow; the exact scalar solve covers every trial
            worst_slsqp = max(worst_slsqp, np.abs(q - _slsqp_projection(p, k)).max())
        worst_kkt = max(worst_kkt, np.abs(q - _kkt_projection(p, k)).max())
        assert abs(q.sum() - 1.0) <= 1e-12
        assert q.max() <= (1.0 / k) * (1 + 1e-12)
        free = q < 1.0 / k * (1 - 1e-9)
        if free.any():  # q = min(1/k, c p) for a single c
            c = q[free] / p[free]
            np.testing.assert_allclose(c, c[0], rtol=1e-10)
            assert np.all(c[0] * p[~free] >= 1.0 / k * (1 - 1e-9))
    assert worst_slsqp < 1e-6
    assert worst_kkt < 1e-12


@pytest.mark.parametrize("k", [1, 3, 7])
def test_mirror_step_on_capped_simplex_is_multiplicative_update_then_projection(k):
    """Lemma 11: argmin_q {-eta <g, q> + KL(q, q0)} over S_{m,k} = project(q0 exp(eta g))."""
    rng = np.random.default_rng(k)
    m = 9
    for _ in range(10):
        q0 = np.exp(kl_project_capped_simplex(rng.normal(size=m), k))
        g = rng.random(m)
        eta = 2.0
        q = np.exp(kl_project_capped_simplex(np.log(q0) + eta * g, k))
        np.testing.assert_allclose(q, _slsqp_projection(q0, k, g, eta), atol=1e-6)


def test_projection_numerics_extreme_weights():
    # log-weights spanning 1e3: no NaN, feasible (linear space would underflow to (1/3, 0, 0, ...))
    logq = kl_project_capped_simplex([0.0, -800.0, -900.0, -1000.0, -1100.0], 3)
    q = np.exp(logq)
    assert np.all(np.isfinite(logq))
    assert abs(q.sum() - 1.0) <= 1e-12 and q.max() <= 1 / 3 * (1 + 1e-12)
    np.testing.assert_allclose(q[:3], 1 / 3, rtol=1e-12)
    # nearly everything capped (catches the cancellation in ||p||_1 - sum of the capped)
    logp = np.r_[np.full(30, 50.0), -50.0]
    q = np.exp(kl_project_capped_simplex(logp, 30))
    assert abs(q.sum() - 1.0) <= 1e-12
    rng = np.random.default_rng(1)
    for _ in range(50):
        m = int(rng.integers(2, 40))
        logp = rng.uniform(-1000, 1000, m)
        k = int(rng.integers(1, m + 1))
        q = np.exp(kl_project_capped_simplex(logp, k))
        assert np.all(np.isfinite(q)) and abs(q.sum() - 1) <= 1e-12 and q.max() <= (1 + 1e-12) / k


def test_projection_edge_cases():
    logp = np.log([0.1, 0.5, 0.4])
    np.testing.assert_allclose(np.exp(kl_project_capped_simplex(logp, 3)), 1 / 3, rtol=1e-15)
    np.testing.assert_allclose(np.exp(kl_project_capped_simplex(logp + 5.0, 1)), [0.1, 0.5, 0.4],
                               rtol=1e-14)
    # already feasible and normalised: unchanged
    np.testing.assert_allclose(np.exp(kl_project_capped_simplex(logp, 2)), [0.1, 0.5, 0.4],
                               rtol=1e-14)
    # in place, with a reused (stale) order buffer
    m = 6
    order = np.arange(m, dtype=np.int64)[::-1].copy()
    a = np.log(np.array([5.0, 1, 1, 1, 1, 1]))
    project_capped_log(a, 2, order, np.empty(m + 1), a)
    np.testing.assert_allclose(np.exp(a), [0.5, 0.1, 0.1, 0.1, 0.1, 0.1], rtol=1e-14)
    with pytest.raises(ValueError, match="k must satisfy"):
        kl_project_capped_simplex([0.0, 1.0], 3)
    with pytest.raises(ValueError, match="finite"):
        kl_project_capped_simplex([0.0, -np.inf], 1)


@pytest.mark.parametrize("m,k", [(10, 3), (7, 1), (6, 5), (12, 6)])
def test_depround_marginals_and_size(m, k):
    rng = np.random.default_rng(m * 10 + k)
    p = np.exp(kl_project_capped_simplex(rng.normal(0, 1.5, m), k))
    N = 100_000
    draws = depround(p, k, random_state=0, size=N)
    assert draws.shape == (N, k)
    assert np.all(np.diff(draws, axis=1) > 0)  # sorted, distinct: |I| = k exactly
    freq = np.bincount(draws.ravel(), minlength=m) / N
    x = k * p
    tol = 5 * np.sqrt(np.maximum(x * (1 - x), 1e-12) / N) + 1e-12
    assert np.all(np.abs(freq - x) <= tol), (freq - x, tol)


def test_depround_deterministic_entries_and_coins():
    # k p_i = 1 always included, k p_i = 0 never included
    p = np.array([0.25, 0.25, 0.0, 0.125, 0.125, 0.25, 0.0])
    draws = depround(p, 4, random_state=3, size=5000)
    freq = np.bincount(draws.ravel(), minlength=7) / 5000
    assert freq[0] == freq[1] == freq[5] == 1.0
    assert freq[2] == freq[6] == 0.0
    # at most m - 1 coins, and the draw is a function of the coins
    m = 8
    p = np.full(m, 1.0 / m)
    out = np.empty(3, dtype=np.int64)
    u = np.random.default_rng(0).random(m - 1)
    used = depround_select(p, 3, u, np.empty(m), out)
    assert used <= m - 1
    out2 = np.empty(3, dtype=np.int64)
    depround_select(p, 3, u.copy(), np.empty(m), out2)
    np.testing.assert_array_equal(out, out2)
    # k = m takes everything without a coin
    assert depround_select(p, m, u, np.empty(m), np.empty(m, dtype=np.int64)) == 0


def test_depround_errors():
    with pytest.raises(ValueError, match="capped simplex"):
        depround([0.9, 0.1], 2)
    with pytest.raises(ValueError, match="k must satisfy"):
        depround([0.5, 0.5], 0)
    with pytest.raises(ValueError, match="non-negative"):
        depround([0.5, -0.5, 1.0], 1)
    # reproducible from random_state
    np.testing.assert_array_equal(depround(np.full(5, 0.2), 2, random_state=4, size=50),
                                  depround(np.full(5, 0.2), 2, random_state=4, size=50))
    assert math.isclose(sum(depround(np.full(5, 0.2), 5)), 10)


def test_linear_space_variant_agrees_with_log_space():
    """The compiled variant the learners use (linear-space sums, one exp per entry)."""
    rng = np.random.default_rng(7)
    cases = [(np.array([0.0, 0.0, -800.0, -900.0, -1000.0]), 3)]  # uncapped mass underflows
    for _ in range(300):
        m = int(rng.integers(2, 25))
        cases.append((rng.normal(0, rng.choice([0.5, 5.0, 200.0]), m), int(rng.integers(1, m + 1))))
    for logp, k in cases:
        m = logp.shape[0]
        ref = np.empty(m)
        project_capped_log(logp, k, np.arange(m, dtype=np.int64), np.empty(m + 1), ref)
        out, q = np.empty(m), np.empty(m)
        project_capped_log_lin(logp, k, np.arange(m, dtype=np.int64), np.empty(m + 1), out, q)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
        big = ref > -500  # below, linear space may underflow (log q stays exact)
        np.testing.assert_allclose(q[big], np.exp(ref[big]), rtol=1e-12)
        assert np.all(q[~big] < 1e-200)
        assert abs(q.sum() - 1.0) <= 1e-12 and q.max() <= (1 + 1e-12) / k
