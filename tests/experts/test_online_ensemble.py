"""Online ensembles: the chunk protocol, exact equality with a row-by-row reference, frozen experts
are chunk-invariant, prequential honesty, losses, grid search over the rule and the experts."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.dummy import DummyRegressor
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import LinearRegression, Perceptron, Ridge, SGDClassifier, SGDRegressor
from sklearn.model_selection import GridSearchCV, KFold

from skonline.experts import (
    PCS,
    FixedShare,
    Hedge,
    OCSPlus,
    OnlineEnsembleClassifier,
    OnlineEnsembleRegressor,
)


def _drift_regression(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = np.where(np.arange(n) < n // 2, X @ [1.0, 0.5, 0.0], X @ [-1.0, 0.0, 0.5]) + 0.1 * rng.standard_normal(n)
    return X, y


def _frozen_experts(X, y):
    n = X.shape[0]
    return [
        ("first", FrozenEstimator(Ridge().fit(X[: n // 2], y[: n // 2]))),
        ("second", FrozenEstimator(Ridge().fit(X[n // 2 :], y[n // 2 :]))),
        ("zero", FrozenEstimator(DummyRegressor(strategy="constant", constant=0.0).fit(X, y))),
    ]


def test_frozen_experts_are_chunk_invariant_and_match_the_rule():
    X, y = _drift_regression()
    experts = _frozen_experts(X, y)
    ens = OnlineEnsembleRegressor(experts, rule=PCS(eta=0.3, n_segments=2), loss="absolute", loss_bound=5.0,
                                  clip_predictions=False)
    assert not ens._chunk_dependent
    pred = ens.partial_fit_predict(X, y)
    e2 = clone(ens)
    chunks = [pred[:0]]
    for sl in (slice(0, 1), slice(1, 50), slice(50, 51), slice(51, 600)):
        chunks.append(e2.partial_fit_predict(X[sl], y[sl]))
    # equal up to the experts' own rounding differences between batch sizes (BLAS)
    np.testing.assert_allclose(np.concatenate(chunks), pred, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(e2.weights_, ens.weights_, rtol=1e-12)
    # the same as the rule run on the scaled loss matrix of the experts' predictions
    P = np.column_stack([est.predict(X) for _, est in experts])
    W = PCS(eta=0.3, n_segments=2).partial_fit_predict(np.minimum(np.abs(P - y[:, None]) / 5.0, 1.0))
    np.testing.assert_allclose(pred, np.sum(W * P, axis=1), rtol=1e-12, atol=1e-12)
    assert ens.cumulative_loss_ == pytest.approx(np.abs(pred - y).sum(), rel=1e-12)
    np.testing.assert_allclose(ens.expert_cumulative_losses_, np.abs(P - y[:, None]).sum(axis=0), rtol=1e-12)
    # it tracks: the weights move to the second regime's expert
    assert np.argmax(ens.weights_) == 1


def test_one_row_chunks_are_the_exact_online_protocol():
    """A row-by-row reference: experts predict, the rule updates, the experts learn."""
    X, y = _drift_regression(n=120)
    experts = [("sgd", SGDRegressor(random_state=0, eta0=0.05)), ("sgd2", SGDRegressor(random_state=1, alpha=0.1))]
    ens = OnlineEnsembleRegressor(experts, rule=Hedge(eta=2.0), loss="squared", loss_bound=10.0,
                                  clip_predictions=False)
    assert ens._chunk_dependent
    preds = np.array([ens.partial_fit_predict(X[t : t + 1], y[t : t + 1])[0] for t in range(len(y))])
    # reference
    models = [clone(e) for _, e in experts]
    rule = Hedge(eta=2.0)
    ref = []
    fitted = False
    for t in range(len(y)):
        x, yt = X[t : t + 1], y[t : t + 1]
        if not fitted:
            ref.append(0.0)  # every expert asleep: running mean of the (no) past targets
        else:
            p = np.array([m.predict(x)[0] for m in models])
            w = rule.partial_fit_predict(np.minimum((p - yt) ** 2 / 10.0, 1.0)[None, :])[0]
            ref.append(w @ p)
        for m in models:
            m.partial_fit(x, yt)
        fitted = True
    np.testing.assert_allclose(preds, ref, rtol=1e-12, atol=1e-12)


def test_predictions_depend_only_on_the_past():
    X, y = _drift_regression(n=200)
    experts = [("sgd", SGDRegressor(random_state=0)), ("ridge", FrozenEstimator(LinearRegression().fit(X, y)))]
    ens = OnlineEnsembleRegressor(experts, rule=OCSPlus())
    p = ens.partial_fit_predict(X, y)
    for t in (0, 57, 199):
        y2 = y.copy()
        y2[t] += 100.0
        for chunks in ([200], [1] * 200):
            e = clone(ens)
            out, i = [], 0
            for c in chunks:
                out.append(e.partial_fit_predict(X[i : i + c], y2[i : i + c]))
                i += c
            q = np.concatenate(out)
            if chunks == [200]:
                np.testing.assert_array_equal(q[: t + 1], p[: t + 1])


def test_unfitted_online_experts_sleep_and_fallback():
    X, y = _drift_regression(n=40)
    ens = OnlineEnsembleRegressor([("sgd", SGDRegressor(random_state=0))])
    p = ens.partial_fit_predict(X[:10], y[:10])
    # first chunk: the only expert has not learned anything yet -> running mean of past targets
    expected = np.concatenate([[0.0], np.cumsum(y[:9]) / np.arange(1, 10)])
    np.testing.assert_allclose(p, expected, rtol=1e-12)
    assert not hasattr(ens.rule_, "weights_")
    ens.partial_fit(X[10:], y[10:])
    assert ens.rule_.n_samples_seen_ == 30


def test_regression_losses():
    X, y = _drift_regression(n=50)
    experts = _frozen_experts(X, y)
    P = np.column_stack([e.predict(X) for _, e in experts])
    r = y[:, None] - P
    for loss, q, expected in (
        ("squared", 0.5, r**2),
        ("absolute", 0.5, np.abs(r)),
        ("pinball", 0.9, np.maximum(0.9 * r, (0.9 - 1) * r)),
    ):
        ens = OnlineEnsembleRegressor(experts, loss=loss, quantile=q, clip_predictions=False).fit(X, y)
        np.testing.assert_allclose(ens.expert_cumulative_losses_, expected.sum(axis=0), rtol=1e-12)


def test_classifier_mixes_probabilities():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 4))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(400) > 0, "b", "a")
    y[200:] = np.where(X[200:, 1] > 0, "c", y[200:])
    experts = [
        ("sgd", SGDClassifier(loss="log_loss", random_state=0)),
        ("perceptron", Perceptron(random_state=0)),  # no predict_proba: one-hot of predict
    ]
    for loss in ("log_loss", "zero_one", "brier"):
        ens = OnlineEnsembleClassifier(experts, rule=FixedShare(), loss=loss)
        proba = ens.partial_fit_predict_proba(X, y, classes=["a", "b", "c"])
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        assert ens.classes_.tolist() == ["a", "b", "c"]
        P = ens.predict_proba(X)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        assert set(ens.predict(X)) <= {"a", "b", "c"}
        assert ens.n_mistakes_ == np.sum(ens.classes_[np.argmax(proba, axis=1)] != y)
    # a single frozen one-hot expert: the mixture is its one-hot vector
    frozen = FrozenEstimator(Perceptron(random_state=0).fit(X, y))
    ens = OnlineEnsembleClassifier([("p", frozen)], loss="zero_one").fit(X, y)
    onehot = (ens.classes_[None, :] == frozen.predict(X)[:, None]).astype(float)
    np.testing.assert_array_equal(ens.predict_proba(X), onehot)


def test_grid_search_reaches_the_rule_and_the_experts():
    X, y = _drift_regression(n=300)
    ens = OnlineEnsembleRegressor([("sgd", SGDRegressor(random_state=0)), ("sgd2", SGDRegressor(random_state=1))],
                                  rule=PCS())
    params = ens.get_params()
    assert "rule__eta" in params and "sgd__alpha" in params
    gs = GridSearchCV(ens, {"rule__eta": [0.1, 0.5], "sgd__alpha": [1e-4, 1e-2]}, cv=KFold(3))
    gs.fit(X, y)
    assert set(gs.best_params_) == {"rule__eta", "sgd__alpha"}
    assert gs.best_estimator_.rule_.eta == gs.best_params_["rule__eta"]
    assert gs.best_estimator_.named_estimators_["sgd"].alpha == gs.best_params_["sgd__alpha"]


def test_rule_params_on_the_default_rule():
    """``rule__<param>`` works with the default ``rule=None`` (issue 12), clone stays correct and the
    default is never shared between estimators."""
    X, y = _drift_regression(n=300)
    experts = [("sgd", SGDRegressor(random_state=0)), ("sgd2", SGDRegressor(random_state=1))]
    ens = OnlineEnsembleRegressor(experts)
    assert ens.get_params()["rule"] is None
    ens.set_params(rule__eta=0.5)
    assert isinstance(ens.rule, FixedShare) and ens.rule.eta == 0.5
    assert ens.get_params()["rule__eta"] == 0.5
    other = OnlineEnsembleRegressor(experts).set_params(rule__eta=0.25)
    assert other.rule is not ens.rule and ens.rule.eta == 0.5
    assert OnlineEnsembleRegressor(experts).rule is None  # the default is untouched
    c = clone(ens)
    assert c.rule is not ens.rule and c.rule.eta == 0.5
    ens.fit(X, y)
    assert ens.rule_.eta == 0.5
    # rule=None together with rule__<param> in one call
    assert OnlineEnsembleRegressor(experts, rule=PCS()).set_params(rule=None, rule__eta=0.3).rule.eta == 0.3
    # the grid search of the docs, on the default rule
    gs = GridSearchCV(OnlineEnsembleRegressor(experts), {"rule__eta": [0.1, 0.5]}, cv=KFold(3)).fit(X, y)
    assert gs.best_estimator_.rule_.eta == gs.best_params_["rule__eta"]
    clf = OnlineEnsembleClassifier([("p", Perceptron(random_state=0))]).set_params(rule__eta=0.5)
    assert clf.rule.eta == 0.5


def test_configuration_errors():
    X, y = _drift_regression(n=20)
    with pytest.raises(ValueError, match="not fitted"):
        OnlineEnsembleRegressor([("lr", LinearRegression())]).fit(X, y)
    with pytest.raises(ValueError, match="no partial_fit"):
        OnlineEnsembleRegressor([("lr", FrozenEstimator(LinearRegression().fit(X, y)))], update_experts=True).fit(X, y)
    with pytest.raises(ValueError, match="rule must be"):
        OnlineEnsembleRegressor([("s", SGDRegressor())], rule=Ridge()).fit(X, y)
    with pytest.raises(ValueError, match="non-empty"):
        OnlineEnsembleRegressor([]).fit(X, y)


def test_auto_loss_scale_and_clipping_resist_a_diverging_expert():
    """The predictions of row t are clipped to the range of the targets before t; 'auto' scales by
    the squared range of the targets up to t: an expert predicting 1e6 cannot ruin the mixture."""
    X, y = _drift_regression(n=400)
    good = FrozenEstimator(LinearRegression().fit(X, y))
    crazy = FrozenEstimator(DummyRegressor(strategy="constant", constant=1e6).fit(X, y))
    mean = FrozenEstimator(DummyRegressor().fit(X, y))
    experts = [("good", good), ("crazy", crazy), ("mean", mean)]
    ens = OnlineEnsembleRegressor(experts, rule=PCS(eta=0.5))
    pred = ens.partial_fit_predict(X, y)
    assert ens.loss_scale_ == pytest.approx((y.max() - y.min()) ** 2)
    # reference: clip, square, scale, run the rule, mix
    P = np.column_stack([e.predict(X) for _, e in experts])
    lo = np.concatenate([[np.inf], np.minimum.accumulate(y)[:-1]])
    hi = np.concatenate([[-np.inf], np.maximum.accumulate(y)[:-1]])
    Pc = np.where((lo <= hi)[:, None], np.minimum(np.maximum(P, lo[:, None]), hi[:, None]), P)
    LR = (Pc - y[:, None]) ** 2
    rng = np.maximum.accumulate(y) - np.minimum.accumulate(y)
    scale = np.where(rng > 0, rng**2, np.maximum.accumulate(LR.max(axis=1)))
    Ls = np.minimum(LR / scale[:, None], 1.0)
    W = PCS(eta=0.5).partial_fit_predict(Ls)
    np.testing.assert_allclose(pred, np.sum(W * Pc, axis=1), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ens.expert_cumulative_losses_, LR.sum(axis=0), rtol=1e-10)
    # from the second row on (nothing to clip to before), the crazy expert is clipped and the
    # mixture does about as well as the best expert
    assert np.mean((pred[1:] - y[1:]) ** 2) < 1.5 * np.mean((good.predict(X) - y) ** 2)
    assert np.all(np.abs(ens.predict(X)) <= np.abs(y).max() + 1e-12)
    # without clipping, the mixture keeps some weight on 1e6 and pays for it
    raw = OnlineEnsembleRegressor(experts, rule=PCS(eta=0.5), clip_predictions=False).partial_fit_predict(X, y)
    assert np.mean((raw[1:] - y[1:]) ** 2) > 100 * np.mean((pred[1:] - y[1:]) ** 2)


def test_loss_names_are_scikit_learns_with_old_aliases():
    X, y = _drift_regression(n=200)
    experts = [("sgd", SGDRegressor(random_state=0)), ("ridge", FrozenEstimator(Ridge().fit(X, y)))]
    assert OnlineEnsembleRegressor(experts).loss == "squared_error"
    for new, old in [("squared_error", "squared"), ("absolute_error", "absolute"), ("quantile", "pinball")]:
        a = OnlineEnsembleRegressor(experts, loss=new, quantile=0.3)
        b = OnlineEnsembleRegressor(experts, loss=old, quantile=0.3)
        np.testing.assert_array_equal(a.partial_fit_predict(X, y), b.partial_fit_predict(X, y))
        assert a.cumulative_loss_ == b.cumulative_loss_


def test_verbose_learns_a_chunk_dependent_ensemble_in_one_block(capsys, monkeypatch):
    """Experts that follow the chunk protocol (scikit-learn's SGD) learn each call as one chunk:
    verbose prints one line per call instead of splitting it into blocks, which would change
    what they learn."""
    from skonline.utils import _progress

    monkeypatch.setattr(_progress, "BLOCK_ROWS", (25, 7))
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.standard_normal(60)
    experts = [("sgd", SGDRegressor(random_state=0)), ("sgd2", SGDRegressor(random_state=1, alpha=0.1))]
    quiet = OnlineEnsembleRegressor(experts, random_state=0)
    assert quiet._chunk_dependent
    loud = clone(quiet).set_params(verbose=2)
    np.testing.assert_array_equal(loud.partial_fit_predict(X, y), quiet.partial_fit_predict(X, y))
    np.testing.assert_array_equal(loud.weights_, quiet.weights_)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("[OnlineEnsembleRegressor] rows 60 | ")
    assert "(last 60 rows) | online loss " in lines[0]


def test_expert_with_other_classes_gives_only_the_ensembles_columns():
    """A frozen expert fitted on other classes than the ensemble's: each of its probability
    columns lands on the ensemble's column of the same class, and a class the ensemble does not
    have is left out (not added to a neighbour's column)."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3))
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])  # classes 0, 1, 2
    expert = FrozenEstimator(LogisticRegression().fit(X, y3))
    keep = y3 != 2
    ens = OnlineEnsembleClassifier([("lr", expert)], loss="zero_one").fit(X[keep], y3[keep])
    assert ens.classes_.tolist() == [0, 1]
    p = expert.predict_proba(X[:20])
    expected = p[:, [0, 1]] / p[:, [0, 1]].sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ens.predict_proba(X[:20]), expected, rtol=1e-12)
