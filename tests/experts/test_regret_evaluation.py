"""skonline.evaluation regret functions against brute force."""

import itertools

import numpy as np
import pytest

from skonline.evaluation import (
    best_switching_sequence,
    interval_regret,
    learner_losses,
    path_length,
    static_regret,
    tracking_regret,
)


def _brute_interval(lh, L, m):
    T, K = L.shape
    best = -np.inf
    for p in range(T):
        for q in range(p + 1, min(T, p + m) + 1):
            best = max(best, (lh[p:q, None] - L[p:q]).sum(axis=0).max())
    return best


def test_interval_regret_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(20):
        T, K = int(rng.integers(1, 40)), int(rng.integers(1, 5))
        L = rng.uniform(size=(T, K))
        W = rng.dirichlet(np.ones(K), size=T)
        lh = np.sum(W * L, axis=1)
        for m in (None, 1, 3, 10):
            mm = T if m is None else m
            v, (p, q, i) = interval_regret(L, W, max_length=m, return_interval=True)
            assert v == pytest.approx(_brute_interval(lh, L, mm), abs=1e-12)
            assert q - p <= mm
            assert v == pytest.approx(lh[p:q].sum() - L[p:q, i].sum(), abs=1e-12)


def test_tracking_and_static_regret():
    rng = np.random.default_rng(1)
    T, K = 7, 3
    L = rng.uniform(size=(T, K))
    W = rng.dirichlet(np.ones(K), size=T)
    lh = np.sum(W * L, axis=1).sum()
    assert static_regret(L, W) == pytest.approx(lh - L.sum(axis=0).min())
    assert tracking_regret(L, W, 1) == pytest.approx(static_regret(L, W))
    for S in (1, 2, 3, 7):
        best = min(
            sum(L[t, s[t]] for t in range(T))
            for s in itertools.product(range(K), repeat=T)
            if sum(s[t] != s[t - 1] for t in range(1, T)) <= S - 1
        )
        r, path = tracking_regret(L, W, S, return_path=True)
        assert r == pytest.approx(lh - best, abs=1e-12)
        assert L[np.arange(T), path].sum() == pytest.approx(best, abs=1e-12)
    # more segments than rounds is capped
    assert tracking_regret(L, W, 50) == pytest.approx(lh - L.min(axis=1).sum())


def test_sleeping_experts_are_charged_the_learner_loss():
    L = np.array([[0.2, np.nan], [0.9, 0.1], [np.nan, 0.0]])
    W = np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]])
    lh = learner_losses(L, W)
    np.testing.assert_allclose(lh, [0.2, 0.5, 0.0])
    # expert 0 charged 0.0 at round 2 (learner's loss), expert 1 charged 0.2 at round 0
    assert static_regret(L, W) == pytest.approx(0.7 - min(0.2 + 0.9 + 0.0, 0.2 + 0.1 + 0.0))
    with pytest.raises(ValueError, match="asleep"):
        best_switching_sequence(L, 2)


def test_path_length():
    L = np.array([[0.5, 0.2], [0.5, 0.9], [0.0, 0.9]])
    assert path_length(L) == pytest.approx(0.25 + 0.49 + 0.25)
    with pytest.raises(ValueError):
        path_length(np.array([[np.nan, 0.0]]))
