"""Compiled primitives: sampling, exponential weights, uniform mixing, the Tsallis OMD step."""

import numpy as np
import pytest

from skonline.utils import exp_weights, mix_uniform, sample_index, tsallis_omd_step


def test_sample_index_inverse_cdf():
    p = np.array([0.2, 0.0, 0.5, 0.3])
    assert [sample_index(p, u) for u in (0.0, 0.1999, 0.2, 0.69, 0.7, 0.9999)] == [0, 0, 2, 2, 3, 3]
    # rounding above the total picks the last arm with positive probability
    assert sample_index(np.array([0.5, 0.5, 0.0]), 1.0) == 1
    rng = np.random.default_rng(0)
    draws = np.array([sample_index(p, u) for u in rng.random(200_000)])
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / draws.size, p, atol=0.004)


@pytest.mark.parametrize("scale", [1.0, 1e4, 1e8])
def test_exp_weights_log_domain(scale):
    L = np.array([0.0, 1.0, 2.5, 7.0]) * scale + 3e7
    out = np.empty(4)
    exp_weights(L, 0.3, out)
    assert np.all(np.isfinite(out)) and abs(out.sum() - 1.0) < 1e-15
    ref = np.exp(-0.3 * (L - L.min()))
    np.testing.assert_allclose(out, ref / ref.sum(), rtol=1e-14, atol=1e-300)
    exp_weights(L, 0.0, out)  # K = 1 or ln K = 0 gives eta = 0: uniform
    np.testing.assert_allclose(out, 0.25)


def test_mix_uniform():
    q = np.array([1.0, 0.0, 0.0])
    out = np.empty(3)
    mix_uniform(q, 0.3, out)
    np.testing.assert_allclose(out, [0.8, 0.1, 0.1], rtol=1e-15)
    assert out.min() >= 0.3 / 3 - 1e-15


def _kkt(q, q_new, eta, ct, alpha):
    a = 1.0 - 1.0 / alpha
    return (q_new ** (-a) - q ** (-a)) / eta - ct  # = -mu* for every arm


@pytest.mark.parametrize("alpha", [8.0, 2.0, 3.5])
def test_tsallis_step_properties(alpha):
    rng = np.random.default_rng(1)
    for _trial in range(300):
        K = rng.integers(2, 9)
        q = rng.dirichlet(np.full(K, 0.3)) + 1e-12
        q /= q.sum()
        eta = rng.uniform(0.01, 20.0, K)
        I = rng.integers(K)
        ct = np.zeros(K)
        ct[I] = rng.choice([rng.uniform(0, 1), rng.uniform(1, 50), 10.0 ** rng.uniform(-8, 3)])
        out = np.empty(K)
        mu = tsallis_omd_step(q, eta, ct, alpha, out)
        assert np.all(np.isfinite(out)) and np.all(out > 0) and np.isfinite(mu)
        assert abs(out.sum() - 1.0) < 1e-12
        assert out[I] <= q[I] * (1 + 1e-12)
        others = np.arange(K) != I
        assert np.all(out[others] >= q[others] * (1 - 1e-12))
        assert 0.0 <= mu <= ct[I] * (1 + 1e-12)
        g = _kkt(q, out, eta, ct, alpha)
        # the KKT condition holds up to the final renormalisation (relative 1e-12 on q)
        np.testing.assert_allclose(g, -mu, rtol=1e-7, atol=1e-9 * max(1.0, np.abs(q ** (-1 + 1 / alpha) / eta).max()))


def test_tsallis_step_zero_loss_is_identity():
    q = np.array([0.1, 0.6, 0.3])
    out = np.empty(3)
    assert tsallis_omd_step(q, np.array([1.0, 2.0, 3.0]), np.zeros(3), 8.0, out) == 0.0
    np.testing.assert_array_equal(out, q)


def test_tsallis_step_loss_above_range_no_nan():
    """c = 5 > l_max with q_i ~ 1 for i != I: the paper's bracket [0, c] would leave the domain."""
    q = np.array([1e-9, 1 - 2e-9, 1e-9])
    eta = np.array([4.0, 4.0, 4.0])
    for c in (5.0, 50.0, 1e6):
        ct = np.array([c / 1e-3, 0.0, 0.0])
        out = np.empty(3)
        mu = tsallis_omd_step(q, eta, ct, 8.0, out)
        assert np.all(np.isfinite(out)) and np.isfinite(mu) and abs(out.sum() - 1) < 1e-12
        ct = np.array([0.0, c, 0.0])  # the heavy arm is the sampled one
        mu = tsallis_omd_step(q, eta, ct, 8.0, out)
        assert np.all(np.isfinite(out)) and abs(out.sum() - 1) < 1e-12 and out[1] <= q[1]
        base = q ** (-7 / 8) + eta * (ct - mu)
        assert np.all(base > 0)


def test_tsallis_matches_generic_root_finder():
    from scipy.optimize import brentq

    q = np.array([0.05, 0.25, 0.7])
    eta = np.array([0.7, 1.3, 2.1])
    ct = np.array([0.0, 0.0, 2.0])  # bases stay positive on [0, 2]
    a = 7 / 8

    def F(mu):
        return np.sum((q ** (-a) + eta * (ct - mu)) ** (-1 / a)) - 1

    mu_ref = brentq(F, 0.0, 2.0, xtol=1e-16, rtol=1e-15)
    out = np.empty(3)
    mu = tsallis_omd_step(q, eta, ct, 8.0, out)
    assert abs(mu - mu_ref) < 1e-13
