"""Fixed Share with an adaptive learning rate (AdaHedge) and a decreasing sharing rate: the
online ensembles' default rule."""

import numpy as np
import pytest

from skonline.experts import FixedShare, OnlineEnsembleRegressor
from skonline.experts._ensemble import default_rule

import _experts_reference as ref


@pytest.mark.parametrize("alpha", ["decreasing", 0.01])
def test_adaptive_fixed_share_equals_its_definition(alpha):
    rng = np.random.default_rng(3)
    L = rng.random((400, 4))
    L[200:, 2] *= 0.3  # a better expert after a switch
    W = FixedShare(eta="adaptive", share_rate=alpha).partial_fit_predict(L)
    np.testing.assert_allclose(W, ref.fixed_share_adaptive(L, None if alpha == "decreasing" else alpha),
                               atol=1e-12, rtol=0)


def test_learning_rate_adapts_to_the_scale_of_the_loss_differences():
    """AdaHedge's rate is invariant to a common shift of the losses and scales as 1 / (loss scale)."""
    rng = np.random.default_rng(0)
    L = 0.1 * rng.random((300, 3))
    a = FixedShare(eta="adaptive", share_rate="decreasing").fit(L)
    b = FixedShare(eta="adaptive", share_rate="decreasing").fit(0.5 + L)
    c = FixedShare(eta="adaptive", share_rate="decreasing", loss_bound=(0.0, 0.1)).fit(L)
    # exact in exact arithmetic; the mixability gap is a difference of close numbers
    np.testing.assert_allclose(a.weights_, b.weights_, rtol=1e-6)
    assert a.eta_ == pytest.approx(b.eta_, rel=1e-6)
    assert c.eta_ == pytest.approx(0.1 * a.eta_, rel=1e-6)


def test_tracks_an_abrupt_switch_where_the_worst_case_tuning_does_not():
    L = np.vstack([np.tile([0.1, 0.9], (3000, 1)), np.tile([0.9, 0.1], (3000, 1))])
    adaptive = FixedShare(eta="adaptive", share_rate="decreasing").partial_fit_predict(L)
    worst_case = FixedShare().partial_fit_predict(L)
    # weight on the new best expert 50 and 100 rows after the switch
    assert adaptive[3050, 1] > 0.9 and adaptive[3100, 1] > 0.99
    assert worst_case[3050, 1] < 0.2 and worst_case[3100, 1] < 0.6
    # the mixture's loss after the switch
    after = slice(3000, 5000)
    assert np.mean(np.sum(adaptive[after] * L[after], axis=1)) < 0.12


def test_ensemble_default_rule():
    assert OnlineEnsembleRegressor([("a", None)]).rule is None
    rule = default_rule()
    assert isinstance(rule, FixedShare)
    assert rule.get_params()["eta"] == "adaptive" and rule.get_params()["share_rate"] == 0.001


@pytest.mark.parametrize("n_segments", [1, 3])
def test_decreasing_share_with_the_horizon_tuned_rate(n_segments):
    # eta='auto' with share_rate='decreasing' took the log of the internal code of 'decreasing' (-1)
    # as a sharing rate: NaN for n_segments > 1. The rate now uses the prior of the decreasing
    # switch rate: -log prior <= log K + log(T + 1) + (S - 1) log((K - 1)(T + 1)).
    K, T = 4, 200
    L = np.random.default_rng(0).uniform(size=(T, K))
    rule = FixedShare(share_rate="decreasing", n_segments=n_segments, horizon=T).fit(L)
    c = np.log(K) + np.log(T + 1) + (n_segments - 1) * np.log((K - 1) * (T + 1))
    assert rule.eta_ == pytest.approx(np.sqrt(8 * c / T), rel=1e-12)
    assert np.all(np.isfinite(rule.weights_))
