"""PCSP: equals PCS on diagonal inputs, stays in the clipped spectraplex, Theorem 5's bound against
every comparator sequence of density matrices with at most S - 1 switches."""

import math
import pickle

import numpy as np
import pytest

from skonline.experts import PCS, PCSP


def _random_losses(rng, T, K, scale=1.0):
    B = rng.standard_normal((T, K, K))
    Z = (B + B.transpose(0, 2, 1)) / 2
    Z /= np.abs(np.linalg.eigvalsh(Z)).max(axis=1)[:, None, None]
    return Z * scale


def _best_partition(Z, eta, S):
    """min over comparators (U_t) with <= S segments of sum_t Tr(U_t (Z_t + eta Z_t^2)):
    a DP over breakpoints; a segment's best density matrix is the projector on the bottom eigenvector
    of the segment's summed matrix, with cost lambda_min."""
    T = Z.shape[0]
    M = Z + eta * np.einsum("tij,tjk->tik", Z, Z)
    C = np.concatenate([np.zeros((1,) + M.shape[1:]), np.cumsum(M, axis=0)])
    cost = np.full((T + 1, T + 1), np.inf)
    for p in range(T):
        for q in range(p + 1, T + 1):
            cost[p, q] = np.linalg.eigvalsh(C[q] - C[p])[0]
    best = np.full((S + 1, T + 1), np.inf)
    best[0, 0] = 0.0
    for s in range(1, S + 1):
        for q in range(1, T + 1):
            best[s, q] = np.min(best[s - 1, :q] + cost[:q, q])
    return best[1:, T].min()


def test_diagonal_inputs_reproduce_pcs_exactly():
    rng = np.random.default_rng(0)
    L = rng.uniform(size=(200, 5))
    for params in ({"eta": 0.3, "n_segments": 2, "horizon": 200}, {}):
        Wm = PCSP(**params).partial_fit_predict(np.stack([np.diag(l) for l in L]))
        W = PCS(**params).partial_fit_predict(L)
        np.testing.assert_allclose(np.diagonal(Wm, axis1=1, axis2=2), W, atol=1e-15)
        off = Wm - np.einsum("tii->ti", Wm)[:, :, None] * np.eye(5)
        assert np.abs(off).max() == 0.0


def test_stays_in_the_clipped_spectraplex():
    rng = np.random.default_rng(1)
    T, K, S = 150, 4, 3
    Z = _random_losses(rng, T, K)
    m = PCSP(eta=0.5, n_segments=S, horizon=T)
    W = m.partial_fit_predict(Z)
    lam = np.linalg.eigvalsh(W)
    assert np.all(np.abs(np.trace(W, axis1=1, axis2=2) - 1) < 1e-12)
    assert lam.min() >= S / (T * K) - 1e-13
    np.testing.assert_allclose(W, W.transpose(0, 2, 1), atol=0)
    assert m.eigenvalues_.min() >= m.min_weight_ - 1e-15
    assert m.cumulative_loss_ == pytest.approx(np.einsum("tij,tji->", W, Z), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_theorem5_bound(seed):
    rng = np.random.default_rng(seed)
    T, K = 50, 3
    cases = {
        "random": _random_losses(rng, T, K),
        # a drifting low-loss direction: the best density matrix moves
        "switching": np.stack(
            [0.5 * np.eye(K) - np.outer(u, u) for u in
             [np.linalg.qr(rng.standard_normal((K, K)))[0][:, 0 if t < 25 else 1] for t in range(T)]]
        ),
    }
    ratios = []
    for name, Z in cases.items():
        for S in (1, 2, 3):
            c = S * math.log(K * T / S)
            for eta in (0.05, 0.2, 0.5):
                W = PCSP(eta=eta, n_segments=S, horizon=T).partial_fit_predict(Z)
                learner = np.einsum("tij,tji->", W, Z)
                worst = learner - _best_partition(Z, eta, S)
                bound = c / eta + 2.5 * S
                assert worst <= bound + 1e-9, (name, S, eta, worst, bound)
                ratios.append(worst / bound)
    assert max(ratios) > 0.1


def test_bad_input_changes_nothing():
    rng = np.random.default_rng(3)
    Z = _random_losses(rng, 40, 3)
    m = PCSP().partial_fit(Z[:20])
    before = pickle.dumps(m)
    big = Z[20:].copy()
    big[3] *= 1.5
    with pytest.raises(ValueError, match="spectral norm"):
        m.partial_fit(big)
    asym = Z[20:].copy()
    asym[0, 0, 1] += 0.2
    with pytest.raises(ValueError, match="not symmetric"):
        m.partial_fit(asym)
    with pytest.raises(ValueError, match="expecting 9 features"):
        m.partial_fit(np.zeros((2, 4)))
    assert pickle.dumps(m) == before
    with pytest.raises(ValueError, match="perfect square"):
        PCSP().fit(np.zeros((3, 5)))


def test_k_equals_one():
    Z = np.random.default_rng(0).uniform(-1, 1, size=(20, 1, 1))
    m = PCSP()
    np.testing.assert_array_equal(m.partial_fit_predict(Z), 1.0)
    assert m.cumulative_loss_ == pytest.approx(Z.sum())
