"""``groups`` through metadata routing: GridSearchCV / cross_validate with GroupKFold, Pipeline."""

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skonline.dro import GroupDROClassifier, GroupDRORegressor

from _paper import paper


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _data(n=900, m=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4)) * [1, 10, 0.1, 3]
    g = rng.integers(0, m, n)
    y = (X[:, 0] + 0.2 * g * X[:, 3] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y, np.array([f"g{i}" for i in g])


def test_requests_groups_by_default(routing):
    est = paper(GroupDROClassifier)
    routing_ = est.get_metadata_routing()
    assert routing_.fit.requests["groups"] is True
    assert routing_.partial_fit.requests["groups"] is True
    est.set_fit_request(groups=False)
    assert est.get_metadata_routing().fit.requests["groups"] is False


def test_gridsearch_with_groupkfold_routes_groups(routing):
    X, y, g = _data()
    gs = GridSearchCV(paper(GroupDROClassifier, random_state=0), {"eta_scale": [1.0, 30.0]},
                      cv=GroupKFold(3))
    gs.fit(X, y, groups=g)
    assert gs.best_estimator_.n_groups_ == 6
    # every fold's estimator learned the groups of its training fold, and the splitter kept
    # whole groups out
    res = cross_validate(paper(GroupDROClassifier, random_state=0), X, y, cv=GroupKFold(3),
                         params={"groups": g}, return_estimator=True, return_indices=True)
    for est, test_idx in zip(res["estimator"], res["indices"]["test"]):
        assert est.n_groups_ == 4
        assert not set(est.groups_) & set(g[test_idx])


def test_pipeline_routes_groups(routing):
    X, y, g = _data()
    pipe = make_pipeline(StandardScaler(), paper(GroupDROClassifier, random_state=0))
    pipe.fit(X, y, groups=g)
    assert pipe[-1].n_groups_ == 6
    gs = GridSearchCV(pipe, {"groupdroclassifier__radius": [1.0, 10.0]}, cv=GroupKFold(3))
    gs.fit(X, y, groups=g)
    assert gs.best_estimator_[-1].n_groups_ == 6
    reg = make_pipeline(StandardScaler(), paper(GroupDRORegressor, random_state=0)).fit(X, X[:, 0], groups=g)
    assert reg[-1].n_groups_ == 6


def test_opting_out_of_groups(routing):
    X, y, g = _data()
    est = paper(GroupDROClassifier, random_state=0).set_fit_request(groups=False)
    res = cross_validate(est, X, y, cv=GroupKFold(3), params={"groups": g}, return_estimator=True)
    assert all(e.n_groups_ == 1 for e in res["estimator"])


def test_without_routing():
    """Default config: GridSearchCV gives `groups` to the splitter only (documented trap); the
    Pipeline `<step>__groups` fit parameter is the workaround."""
    X, y, g = _data()
    gs = GridSearchCV(paper(GroupDROClassifier, random_state=0), {"radius": [1.0, 10.0]}, cv=GroupKFold(3))
    gs.fit(X, y, groups=g)
    assert gs.best_estimator_.n_groups_ == 1
    pipe = make_pipeline(StandardScaler(), paper(GroupDROClassifier, random_state=0))
    gs = GridSearchCV(pipe, {"groupdroclassifier__radius": [1.0, 10.0]}, cv=GroupKFold(3))
    gs.fit(X, y, groups=g, groupdroclassifier__groups=g)
    assert gs.best_estimator_[-1].n_groups_ == 6
    assert paper(GroupDROClassifier).fit(X, y, groups=g).n_groups_ == 6
