"""The worst-group scorer: the metric, and model selection with groups routed to the scorer."""

import pickle

import numpy as np
import pytest
import sklearn
from sklearn.metrics import accuracy_score, log_loss
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, cross_validate

from skonline.dro import GroupDROClassifier, make_worst_group_scorer, worst_group_score


def _data(n=2000, seed=0):
    """A minority group (20%) with another rule and 10% label noise: ERM favours the majority."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    g = (rng.random(n) < 0.2).astype(int)
    y = np.where(g == 1, X[:, 1] > 0, X[:, 0] > 0)
    y = (y ^ ((g == 1) & (rng.random(n) < 0.1))).astype(int)
    return X, y, g


def test_worst_group_score():
    y = np.array([1, 1, 0, 0, 1])
    p = np.array([1, 1, 1, 0, 0])
    g = np.array(["a", "a", "b", "b", "c"])
    assert worst_group_score(y, p, groups=g) == 0.0
    assert worst_group_score(y[:4], p[:4], groups=g[:4]) == 0.5
    # a loss: the worst group has the largest value
    proba = np.array([0.9, 0.8, 0.6, 0.2, 0.3])
    expected = max(log_loss(y[g == k], proba[g == k], labels=[0, 1]) for k in "abc")
    assert worst_group_score(y, proba, groups=g, metric=log_loss, greater_is_better=False,
                             labels=[0, 1]) == pytest.approx(expected)
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        worst_group_score(y, p)
    with pytest.raises(ValueError, match="one label per row"):
        worst_group_score(y, p, groups=g[:3])


def test_scorer_call_and_request():
    X, y, g = _data(600)
    est = GroupDROClassifier(random_state=0).fit(X, y, groups=g)
    scorer = make_worst_group_scorer()  # requests groups whatever the routing setting
    pred = est.predict(X)
    with sklearn.config_context(enable_metadata_routing=True):  # passing groups needs routing
        assert scorer(est, X, y, groups=g) == worst_group_score(y, pred, groups=g)
        assert scorer(est, X, y, groups=g) <= accuracy_score(y, pred)
        assert scorer.get_metadata_routing().score.requests["groups"] is True
        loss = make_worst_group_scorer(log_loss, greater_is_better=False, response_method="predict_proba")
        worst = max(log_loss(y[g == k], est.predict_proba(X[g == k])) for k in (0, 1))
        assert loss(est, X, y, groups=g) == pytest.approx(-worst)
        scorer.set_score_request(groups="my_groups")  # the usual scorer API
        assert scorer.get_metadata_routing().score.requests["groups"] == "my_groups"
    pickle.loads(pickle.dumps(loss))


@pytest.mark.parametrize("cv", [KFold(5), GroupKFold(2)], ids=["KFold", "GroupKFold"])
def test_grid_search_selects_by_the_worst_group(cv):
    X, y, g = _data()
    grid = {"eta_scale": [0.0, 30.0]}
    scoring = {"average": "accuracy", "worst": make_worst_group_scorer()}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(GroupDROClassifier(random_state=0), grid, cv=cv, scoring=scoring,
                              refit="worst").fit(X, y, groups=g)
    res = search.cv_results_
    # the scorer saw each test fold's groups: its value is the worst group's accuracy, below average
    assert np.all(res["mean_test_worst"] <= res["mean_test_average"])
    if isinstance(cv, KFold):  # both groups in every test fold: the two criteria disagree
        assert grid["eta_scale"][int(np.argmax(res["mean_test_average"]))] == 0.0
        assert search.best_params_ == {"eta_scale": 30.0}


def test_without_routing_the_error_says_how():
    X, y, g = _data(300)
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        cross_validate(GroupDROClassifier(random_state=0), X, y, cv=KFold(3),
                       scoring=make_worst_group_scorer(), error_score="raise")
