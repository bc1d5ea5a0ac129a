"""Renamed parameters keep their old name for one release (skonline.utils._deprecation).

The old name gives a ``RenamedParameterWarning`` (a ``FutureWarning``) and the same model, bit for
bit, as the new name; setting both raises; ``get_params``, ``clone`` and ``GridSearchCV`` see both
names. The renames are listed in CONTRIBUTING.md ("Retired names"; tests/test_glossary.py).
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold

from skonline.dro import GroupDROClassifier, GroupDRORegressor
from skonline.exceptions import RenamedParameterWarning
from skonline.experts import AdaHedge, FixedShare, Hedge, OnlineEnsembleRegressor
from skonline.kernel_ridge import AWVRegressor, KernelAWVRegressor, PKAWVClassifier, PKAWVRegressor
from skonline.kernel_selection import KernelSelectionClassifier, KernelSelectionRegressor
from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor
from skonline.preprocessing import OnlineStandardScaler

from _helpers import assert_same_state

RNG = np.random.default_rng(0)
X = RNG.standard_normal((120, 3))
Y_REG = 3.0 * X[:, 0] - X[:, 1] + 0.1 * RNG.standard_normal(120)
Y_CLF = (X[:, 0] - X[:, 1] > 0).astype(int)
GROUPS = np.repeat(np.arange(3), 40)
LOSSES = 2.0 * RNG.uniform(size=(60, 4))  # in [0, 2]

#: (class, old name, new name, a value other than the default, constructor parameters)
CASES = [
    (ScaleInvariantClassifier, "alpha", "potential_alpha", 2.0, {}),
    (ScaleInvariantRegressor, "alpha", "potential_alpha", 2.0, {}),
    (FixedShare, "alpha", "share_rate", 0.05, {"loss_bound": 2.0}),
    (FixedShare, "loss_range", "loss_bound", (0.0, 2.0), {}),
    (Hedge, "loss_range", "loss_bound", (-1.0, 3.0), {}),
    (AdaHedge, "loss_range", "loss_bound", (0.0, 2.0), {}),
    (AWVRegressor, "clip", "prediction_bound", 0.5, {}),
    (KernelAWVRegressor, "clip", "prediction_bound", 0.5, {}),
    (PKAWVRegressor, "clip", "prediction_bound", 0.5, {"random_state": 0}),
    (PKAWVClassifier, "clip", "prediction_bound", 0.5, {"random_state": 0}),
    (OnlineStandardScaler, "clip", "clip_std", 1.0, {}),
    (KernelSelectionClassifier, "predict_mode", "aggregation", "best", {"random_state": 0}),
    (KernelSelectionRegressor, "predict_mode", "aggregation", "sampled", {"random_state": 0}),
    (GroupDROClassifier, "max_iter", "horizon", 50, {"random_state": 0}),
    (GroupDRORegressor, "eta_w_scale", "step_scale", 2.0, {"random_state": 0}),
    (GroupDROClassifier, "eta_q_scale", "eta_scale", 3.0, {"random_state": 0}),
]
IDS = [f"{cls.__name__}-{old}" for cls, old, *_ in CASES]


def _fit(est):
    """Fit ``est`` on a stream of its kind; return what the pass reported for each row."""
    if isinstance(est, (Hedge, FixedShare, AdaHedge)):
        return est.partial_fit_predict(LOSSES)
    if isinstance(est, OnlineStandardScaler):
        return est.partial_fit_transform(X)
    y = Y_CLF if hasattr(est, "predict_proba") or "Classifier" in type(est).__name__ else Y_REG
    kw = {"groups": GROUPS} if isinstance(est, (GroupDROClassifier, GroupDRORegressor)) else {}
    if isinstance(est, (GroupDROClassifier, GroupDRORegressor)):
        est.fit(X, y, **kw)
        return est.coef_
    return est.partial_fit_predict(X, y, **({"classes": [0, 1]} if y is Y_CLF else {}))


@pytest.mark.parametrize("cls, old, new, value, params", CASES, ids=IDS)
def test_the_old_name_warns_and_gives_the_same_model(cls, old, new, value, params):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RenamedParameterWarning)
        by_new = cls(**params, **{new: value})
        out_new = _fit(by_new)
    by_old = cls(**params, **{old: value})
    with pytest.warns(RenamedParameterWarning, match=f"`{old}` was renamed `{new}` in .* removed in ") as record:
        out_old = _fit(by_old)
    assert len([w for w in record if issubclass(w.category, RenamedParameterWarning)]) == 1
    assert issubclass(RenamedParameterWarning, FutureWarning)
    assert record[0].filename == __file__  # the user's line (skonline.utils._warnings.warn)
    np.testing.assert_array_equal(out_old, out_new)
    assert_same_state(by_old, by_new)
    # the old value is what the model used, and the value differs from the default (the case tests
    # something): the model at the default differs
    default = cls(**params)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _fit(default)
    except ValueError as exc:  # loss_range: the default range rejects the losses
        assert "outside the declared range" in str(exc)
    else:
        with pytest.raises(AssertionError):
            assert_same_state(default, by_old)
    # the warning is given once per change of the parameters, not on every call
    with warnings.catch_warnings():
        warnings.simplefilter("error", RenamedParameterWarning)
        if isinstance(by_old, (Hedge, FixedShare, AdaHedge)):
            by_old.partial_fit(LOSSES[:5])
        elif isinstance(by_old, OnlineStandardScaler):
            by_old.partial_fit(X[:5])


@pytest.mark.parametrize("cls, old, new, value, params", CASES, ids=IDS)
def test_both_names_set_raises(cls, old, new, value, params):
    est = cls(**params, **{old: value, new: value})
    with pytest.raises(ValueError, match=f"both `{old}` and `{new}` are set"):
        _fit(est)
    assert not hasattr(est, "n_samples_seen_")  # rejected before learning anything


@pytest.mark.parametrize("cls, old, new, value, params", CASES, ids=IDS)
def test_get_params_and_clone_see_both_names(cls, old, new, value, params):
    est = cls(**params, **{old: value})
    p = est.get_params()
    assert p[old] == value and new in p
    c = clone(est)
    assert c.get_params()[old] == value
    assert cls().get_params()[old] == "deprecated"
    est.set_params(**{old: "deprecated", new: value})  # the old name can be unset
    with warnings.catch_warnings():
        warnings.simplefilter("error", RenamedParameterWarning)
        _fit(est)


def test_grid_search_over_an_old_name():
    grid = {"alpha": [1.5, 3.0]}
    with pytest.warns(RenamedParameterWarning):
        old = GridSearchCV(ScaleInvariantRegressor(), grid, cv=KFold(3)).fit(X, Y_REG)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RenamedParameterWarning)
        new = GridSearchCV(ScaleInvariantRegressor(), {"potential_alpha": [1.5, 3.0]}, cv=KFold(3)).fit(X, Y_REG)
    np.testing.assert_array_equal(old.cv_results_["mean_test_score"], new.cv_results_["mean_test_score"])
    assert old.best_params_["alpha"] == new.best_params_["potential_alpha"]


def test_a_bound_is_the_interval_from_zero():
    a = Hedge(loss_bound=2.0).partial_fit_predict(LOSSES)
    b = Hedge(loss_bound=(0.0, 2.0)).partial_fit_predict(LOSSES)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="outside the declared range"):
        Hedge().fit(LOSSES)  # the default bound 1 rejects losses up to 2


def test_the_ensemble_sets_its_rule_to_the_unit_range():
    """The online ensembles feed their rule losses in [0, 1]: a rule's retired loss_range is reset
    with its loss_bound (it would otherwise win over loss_bound=1)."""
    from sklearn.linear_model import SGDRegressor

    ens = OnlineEnsembleRegressor([("a", SGDRegressor(random_state=0)), ("b", ScaleInvariantRegressor())],
                                  rule=Hedge(loss_range=(0.0, 5.0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RenamedParameterWarning)
        ens.fit(X, Y_REG)
    assert ens.rule_.loss_bound == 1.0 and ens.rule_.loss_range == "deprecated"


def test_fixed_share_attribute_keeps_its_old_name():
    """``alpha_`` (the sharing rate in use) follows its parameter's rename: ``share_rate_``; the old
    attribute still reads the same value, with the warning."""
    fs = FixedShare(share_rate=0.05, loss_bound=2.0).fit(LOSSES)
    assert fs.share_rate_ == pytest.approx(0.05)
    with pytest.warns(RenamedParameterWarning, match="share_rate_"):
        assert fs.alpha_ == fs.share_rate_
