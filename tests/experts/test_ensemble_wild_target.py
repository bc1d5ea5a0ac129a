"""One absurd target must not freeze an ensemble's weights (its loss scale is the target range)."""

import warnings

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.frozen import FrozenEstimator

from skonline.experts import OnlineEnsembleRegressor


def _frozen(c):
    return FrozenEstimator(DummyRegressor(strategy="constant", constant=c).fit([[0.0]], [c]))


def test_one_wild_target_does_not_freeze_the_weights():
    rng = np.random.default_rng(0)
    n = 4000
    X = rng.standard_normal((n, 2))
    y = np.where(np.arange(n) < 2000, 1.0, -1.0) + 0.1 * rng.standard_normal(n)  # best expert switches
    y[1000] = 1e154
    ens = OnlineEnsembleRegressor([("plus", _frozen(1.0)), ("minus", _frozen(-1.0))])
    with pytest.warns(UserWarning, match="times the range"):
        ens.partial_fit(X[:1500], y[:1500])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no other wild target
        ens.partial_fit(X[1500:], y[1500:])
    assert ens.loss_scale_ < 1e4          # the range grew at most 10-fold per side, not to 1e154
    assert ens.weights_[1] > 0.95          # and the weights still followed the switch

