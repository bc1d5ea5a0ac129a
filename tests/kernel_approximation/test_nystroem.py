"""OnlineNystroem: Nyström features with a KORS dictionary (Calandriello et al. 2017; Jézéquel et al. 2019)."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from skonline.kernel_approximation import OnlineNystroem
from skonline.utils._online_kernel import kors_score


def _kors_tau_explicit(Kdd, w, kd, ktt, mu, eps):
    """The paper's code: (1+eps)/mu (k_tt - kbar' T^{-1} kbar) with T = SKS + mu I on D u {t}."""
    S = np.r_[w, 1.0]
    Kfull = np.block([[Kdd, kd[:, None]], [kd[None, :], np.array([[ktt]])]])
    T = S[:, None] * Kfull * S[None, :] + mu * np.eye(len(S))
    kbar = Kfull[:, -1] * S
    return (1 + eps) / mu * (ktt - kbar @ np.linalg.solve(T, kbar))


def test_kors_closed_form_equals_the_block_inverse_computation():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (9, 3))
    K = rbf_kernel(X, gamma=0.5)
    w = rng.uniform(1, 4, 8)
    for mu in (1.0, 0.1, 1e-3):
        G = w[:, None] * K[:8, :8] * w[None, :] + mu * np.eye(8)
        q = np.empty(8)
        tau, s2 = kors_score(np.linalg.inv(G), 8, w * K[:8, 8], 1.0, mu, 0.5, q)
        np.testing.assert_allclose(tau, _kors_tau_explicit(K[:8, :8], w, K[:8, 8], 1.0, mu, 0.5), rtol=1e-12)
        # with unit weights, tau / (1 + eps) is the mu-ridge leverage score of t in D u {t}
        G1 = K[:8, :8] + mu * np.eye(8)
        tau1, _ = kors_score(np.linalg.inv(G1), 8, K[:8, 8], 1.0, mu, 0.5, q)
        lev = (K @ np.linalg.inv(K + mu * np.eye(9)))[8, 8]
        np.testing.assert_allclose(tau1 / 1.5, lev, rtol=1e-12)


@pytest.mark.parametrize("weighting", ["inverse_p", "inverse_sqrt_p"])
def test_recorded_probabilities_are_the_kors_probabilities(weighting):
    """Every inserted point's p recomputed from scratch against the dictionary before it."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (400, 3))
    mu, beta, eps = 0.5, 2.0, 0.5
    nys = OnlineNystroem(mu=mu, beta=beta, eps=eps, kors_weighting=weighting, random_state=3).fit(X)
    idx, p, w = nys.component_indices_, nys.component_probabilities_, nys.component_weights_
    assert nys.n_components_ > 10
    assert np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(nys.components_, X[idx])
    np.testing.assert_allclose(w, 1 / p if weighting == "inverse_p" else 1 / np.sqrt(p), rtol=1e-15)
    K = rbf_kernel(X, gamma=0.5)
    for j, i in enumerate(idx):
        D = idx[:j]
        tau = _kors_tau_explicit(K[np.ix_(D, D)], w[:j], K[D, i], 1.0, mu, eps)
        np.testing.assert_allclose(p[j], min(beta * tau, 1.0), rtol=1e-9)


def test_first_point_probability_is_three_quarters():
    X = np.random.default_rng(2).uniform(-1, 1, (50, 2))
    for seed in range(20):
        nys = OnlineNystroem(random_state=seed).fit(X)
        if nys.component_indices_[0] == 0:
            assert nys.component_probabilities_[0] == pytest.approx(0.75, rel=1e-15)
            return
    pytest.fail("row 0 never entered the dictionary in 20 seeds (p = 0.75)")


def test_transform_is_the_nystrom_approximation_and_append_stable():
    rng = np.random.default_rng(4)
    X = rng.uniform(-1, 1, (600, 2))
    Q = rng.uniform(-1, 1, (50, 2))
    nys = OnlineNystroem(mu=1e-2, random_state=0).partial_fit(X[:200])
    Z1 = nys.transform(Q)
    m1 = nys.n_components_
    D = nys.components_
    Kqd = rbf_kernel(Q, D, gamma=0.5)
    ref = Kqd @ np.linalg.solve(rbf_kernel(D, gamma=0.5), Kqd.T)
    np.testing.assert_allclose(Z1 @ Z1.T, ref, atol=1e-8)
    nys.partial_fit(X[200:])
    Z2 = nys.transform(Q)
    assert Z2.shape[1] == nys.n_components_ > m1
    np.testing.assert_allclose(Z2[:, :m1], Z1, rtol=0, atol=1e-9)  # growing appends coordinates
    assert np.abs(Z2 @ Z2.T - rbf_kernel(Q, gamma=0.5)).max() < 1e-2


def test_every_point_in_the_dictionary_reproduces_the_kernel():
    X = np.random.default_rng(5).uniform(-1, 1, (80, 5))
    nys = OnlineNystroem(beta=1e12, random_state=0).fit(X)
    assert nys.n_components_ == 80 and nys.n_skipped_components_ == 0
    Z = nys.transform(X)
    np.testing.assert_allclose(Z @ Z.T, rbf_kernel(X, gamma=0.5), atol=1e-9)


def test_dictionary_size_ballpark_and_weighting():
    """Spec check 9: 5000 points in [-1,1]^2, sigma=1, mu=beta=1, eps=.5: tens of points
    (38 with 1/p, 93 with 1/sqrt(p) in the spec's run; d_eff(1) ~ 12); 1/sqrt(p) gives more."""
    X = np.random.default_rng(6).uniform(-1, 1, (5000, 2))
    m_p = OnlineNystroem(random_state=0).fit(X).n_components_
    m_sqrt = OnlineNystroem(kors_weighting="inverse_sqrt_p", random_state=0).fit(X).n_components_
    assert 15 <= m_p <= 80
    assert 40 <= m_sqrt <= 160
    assert m_sqrt > m_p


def test_chunking_across_buffer_growth_is_bitwise():
    X = np.random.default_rng(7).uniform(-1, 1, (500, 3))
    a = OnlineNystroem(mu=0.05, random_state=1).fit(X)
    assert a.n_components_ > 40  # crossed the first capacities (16, 32)
    b = OnlineNystroem(mu=0.05, random_state=1)
    for sl in (slice(0, 7), slice(7, 130), slice(130, 131), slice(131, 500)):
        b.partial_fit(X[sl])
    for name in ("components_", "component_weights_", "component_probabilities_", "component_indices_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(a.transform(X[:20]), b.transform(X[:20]))


def test_feature_names_follow_the_width():
    X = np.random.default_rng(8).uniform(-1, 1, (100, 2))
    nys = OnlineNystroem(random_state=0).fit(X)
    names = nys.get_feature_names_out()
    assert len(names) == nys.n_components_
    assert names[0] == "onlinenystroem0"


def test_budget_freezes_the_dictionary_and_memory():
    """Issue 11: a budget on the dictionary; memory flat after it; pickles hold the used block."""
    import pickle


    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (4000, 5))
    nys = OnlineNystroem(sigma=0.5, mu=1e-3, max_components=50, random_state=0)
    nys.partial_fit(X[:500])
    assert nys.n_components_ == 50
    shapes = {k: v.shape for k, v in vars(nys).items() if isinstance(v, np.ndarray)}
    for s in range(500, 4000, 700):
        nys.partial_fit(X[s : s + 700])
        assert {k: v.shape for k, v in vars(nys).items() if isinstance(v, np.ndarray)} == shapes
    assert nys.n_components_ == 50 and nys.n_rows_after_budget_ > 0
    assert nys.transform(X[:10]).shape == (10, 50)
    small = OnlineNystroem(sigma=0.5, mu=1e-2, max_components=None, random_state=0).fit(X[:300])
    assert small._chol_t_.shape[0] > small.n_components_  # a padded capacity ...
    blob = pickle.dumps(small)
    m = small.n_components_
    assert len(blob) < 8 * m * (2 * m + 5 + 3) + 20_000  # ... that the pickle does not hold
    back = pickle.loads(blob)
    np.testing.assert_array_equal(back.transform(X[:50]), small.transform(X[:50]))
    np.testing.assert_array_equal(back.partial_fit(X[300:600]).transform(X[:50]),
                                  small.partial_fit(X[300:600]).transform(X[:50]))
