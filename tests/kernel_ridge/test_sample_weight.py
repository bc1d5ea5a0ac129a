"""sample_weight in the AWV family: weighted least squares (issue 12).

Weighted least squares is the paper forecasters' property: the estimators are built with the
paper's settings (``tests/_paper.py``; with ``standardize=True`` the check is an expected failure,
see ``kernel_ridge._base.STANDARDIZE_SAMPLE_WEIGHT_XFAIL``).
"""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from skonline.kernel_ridge import AWVRegressor, KernelAWVRegressor, PKAWVClassifier, PKAWVRegressor

from _paper import paper


def _data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    y = np.sin(2 * X[:, 0]) + X[:, 1] + 0.1 * rng.standard_normal(n)
    k = rng.integers(0, 4, n)  # integer weights, zeros included
    k[0] = 1
    return X, y, k


MODELS = [
    lambda alg: paper(AWVRegressor, alpha=0.5, algorithm=alg),
    lambda alg: paper(KernelAWVRegressor, alpha=0.5, sigma=0.7, algorithm=alg),
    lambda alg: paper(PKAWVRegressor, alpha=0.5, sigma=1.0, degree=3, algorithm=alg),
]


@pytest.mark.parametrize("make", MODELS, ids=["AWV", "KernelAWV", "PKAWV-taylor"])
@pytest.mark.parametrize("algorithm", ["awv", "ridge"])
def test_integer_weights_equal_repeated_rows(make, algorithm):
    """The final solution with integer weights is the one of the repeated rows (weighted least
    squares); a row of weight 0 is the row left out."""
    X, y, k = _data()
    weighted = make(algorithm).fit(X, y, sample_weight=k)
    repeated = make(algorithm).fit(np.repeat(X, k, axis=0), np.repeat(y, k))
    Xq = np.random.default_rng(1).uniform(-1, 1, size=(20, 3))
    np.testing.assert_allclose(weighted.predict(Xq), repeated.predict(Xq), rtol=1e-9, atol=1e-10)
    # the weighted loss: sum of w (y - f)^2 of the prequential predictions
    p = make(algorithm).partial_fit_predict(X, y, sample_weight=k)
    assert weighted.cumulative_loss_ == pytest.approx(np.sum(k * (y - p) ** 2), rel=1e-12)


def test_awv_ridge_matches_weighted_ridge():
    X, y, _ = _data()
    w = np.random.default_rng(2).uniform(0, 3, X.shape[0])
    reg = paper(AWVRegressor, alpha=0.5, algorithm="ridge").fit(X, y, sample_weight=w)
    ref = Ridge(alpha=0.5, fit_intercept=False).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-10)


@pytest.mark.parametrize(
    "est",
    [AWVRegressor(alpha=0.5, standardize=False, forgetting=1.0), KernelAWVRegressor(alpha=0.5, standardize=False),
     PKAWVRegressor(degree=2, standardize=False, forgetting=1.0),
     PKAWVClassifier(degree=2, standardize=False, forgetting=1.0)],
    ids=["AWV", "KernelAWV", "PKAWV", "PKAWVClassifier"],
)
def test_weight_zero_changes_nothing(est):
    """Without forgetting (built at import time, so the paper settings are explicit here); with
    ``forgetting < 1`` a row of weight 0 still discounts the past (test_forgetting.py)."""
    X, y, _ = _data()
    if isinstance(est, PKAWVClassifier):
        y = (y > 0).astype(int)
    a = est.fit(X[:30], y[:30])
    state = {k: np.copy(v) for k, v in vars(a).items() if k.endswith("_") and isinstance(v, np.ndarray)}
    loss = a.cumulative_loss_
    a.partial_fit(X[30:], y[30:], sample_weight=np.zeros(30))
    for k, v in state.items():
        np.testing.assert_array_equal(getattr(a, k), v, err_msg=k)
    assert a.cumulative_loss_ == loss and a.n_samples_seen_ == 60
