"""OnlineKernelSelector: online bandwidth selection as a supervised transformer."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge, SGDClassifier
from sklearn.pipeline import make_pipeline

from skonline.kernel_selection import (
    KernelSelectionClassifier,
    KernelSelectionRegressor,
    OnlineKernelSelector,
)

from _paper import paper


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    y = (np.sin(4 * X[:, 0]) > X[:, 1]).astype(int)
    return X, y


def _selector(cls=KernelSelectionClassifier, **kw):
    """The selector on the paper's OKS++ with 100 random features (the estimator it builds when
    none is given), at the paper's settings."""
    return OnlineKernelSelector(paper(cls, algorithm="oks++", n_components=100), **kw)


def test_transform_uses_the_selected_kernel_features():
    X, y = _data()
    default = OnlineKernelSelector(random_state=0).fit(X[:200], y[:200]).estimator_
    assert type(default) is KernelSelectionClassifier and default.algorithm == "oks++"
    assert default.n_components == 100
    sel = _selector(random_state=0).fit(X, y)
    est = sel.estimator_
    assert isinstance(est, KernelSelectionClassifier) and est.n_components == 100
    k = sel.selected_kernel_
    assert k == est.selected_kernel_ and sel.selected_sigma_ == est.sigmas[k]
    np.testing.assert_array_equal(sel.kernel_weights_, est.q_)
    np.testing.assert_allclose(sel.transform(X), est.random_features_.transform_kernel(X, k))
    assert list(sel.get_feature_names_out()[[0, 100]]) == ["rff_cos0", "rff_sin0"]


def test_partial_fit_streams_and_matches_fit():
    X, y = _data()
    a = _selector(random_state=0).fit(X, y)
    b = _selector(random_state=0)
    for s in range(0, 2000, 250):
        b.partial_fit(X[s : s + 250], y[s : s + 250], classes=[0, 1])
    np.testing.assert_array_equal(a.transform(X[:50]), b.transform(X[:50]))
    assert b.n_samples_seen_ == 2000


def test_regression_and_custom_estimator():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (1500, 3))
    y = 0.5 + 0.4 * np.sin(3 * X[:, 0])
    default = OnlineKernelSelector(random_state=0).fit(X[:200], y[:200]).estimator_
    assert type(default) is KernelSelectionRegressor and default.n_components == 100
    sel = _selector(KernelSelectionRegressor, random_state=0).fit(X, y)
    assert isinstance(sel.estimator_, KernelSelectionRegressor)
    assert sel.selected_sigma_ == 1.0 and sel.kernel_weights_.max() > 0.9
    pipe = make_pipeline(_selector(KernelSelectionRegressor, random_state=0), Ridge(alpha=1e-3))
    assert pipe.fit(X, y).score(X, y) > 0.95
    custom = OnlineKernelSelector(paper(KernelSelectionRegressor, "ioks", loss="absolute", n_components=20),
                                  random_state=0)
    assert custom.fit(X, y).transform(X).shape == (1500, 40)
    with pytest.raises(ValueError, match="n_components"):
        OnlineKernelSelector(paper(KernelSelectionRegressor)).fit(X, y)


def test_pipeline_in_front_of_a_linear_model():
    X, y = _data(3000)
    pipe = make_pipeline(_selector(random_state=0), SGDClassifier(random_state=0))
    assert pipe.fit(X, y).score(X, y) > 0.85
    linear = SGDClassifier(random_state=0).fit(X, y).score(X, y)
    assert pipe.score(X, y) > linear + 0.05
