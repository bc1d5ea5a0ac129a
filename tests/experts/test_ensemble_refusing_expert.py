"""One absurd row refused by one expert must not make the ensemble refuse the chunk.

A skonline expert refuses a row its float64 arithmetic cannot take (``FloatingPointError``, e.g.
a feature of 1e12 for the full-matrix scale-invariant learner) and is then unchanged. Inside an
ensemble that expert *sleeps* on the row (it neither predicts nor learns it) while the other
experts predict and learn it, and it learns the rest of the chunk: what row-by-row learning gives,
whatever the chunking.
"""

import numpy as np
import pytest

from skonline.exceptions import DataAdviceWarning
from skonline.experts import OnlineEnsembleClassifier, OnlineEnsembleRegressor
from skonline.kernel_ridge import AWVRegressor
from skonline.linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor

ABSURD = 57


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = X @ np.array([3.0, -1.0, 2.0, 0.5]) + 0.1 * rng.standard_normal(n)
    X[ABSURD, 0] = 1e12  # the full-invariance pseudo-inverse update refuses this row
    return X, y


def _feed(est, X, y, size, **kw):
    out = []
    for a in range(0, X.shape[0], size):
        out.append(est.partial_fit_predict(X[a:a + size], y[a:a + size], **kw))
    return np.concatenate(out)


def _regressor():
    return OnlineEnsembleRegressor([("si", ScaleInvariantRegressor(invariance="full")), ("awv", AWVRegressor())])


def test_the_expert_alone_refuses_the_row():
    X, y = _data()
    with pytest.raises(FloatingPointError, match=f"Row {ABSURD}"):
        ScaleInvariantRegressor(invariance="full").partial_fit(X, y)


@pytest.mark.parametrize("size", [120, 13, 1])
def test_regressor_expert_sleeps_on_the_refused_row(size):
    X, y = _data()
    ens = _regressor()
    with pytest.warns(DataAdviceWarning, match="expert 'si' refused 1 row"):
        pred = _feed(ens, X, y, size)
    assert np.all(np.isfinite(pred))
    # the refusing expert learned every row but the absurd one, exactly as if it had never seen it
    keep = np.arange(X.shape[0]) != ABSURD
    alone = ScaleInvariantRegressor(invariance="full").fit(X[keep], y[keep])
    np.testing.assert_allclose(ens.named_estimators_["si"].coef_, alone.coef_, rtol=1e-12, atol=1e-12)
    # the other expert learned the absurd row too
    assert ens.named_estimators_["awv"].n_samples_seen_ == X.shape[0]
    assert ens.named_estimators_["si"].n_samples_seen_ == X.shape[0] - 1
    # at the absurd row the ensemble plays the other expert alone (as an ensemble of it alone does)
    only_awv = OnlineEnsembleRegressor([("awv", AWVRegressor())]).partial_fit_predict(X, y)
    assert pred[ABSURD] == pytest.approx(only_awv[ABSURD], rel=1e-9)
    assert pred[ABSURD + 1] != pytest.approx(only_awv[ABSURD + 1], rel=1e-3)


def test_regressor_same_predictions_under_any_chunking():
    X, y = _data()
    with pytest.warns(DataAdviceWarning):
        one = _feed(_regressor(), X, y, 120)
    with pytest.warns(DataAdviceWarning):
        many = _feed(_regressor(), X, y, 7)
    np.testing.assert_allclose(many, one, rtol=1e-10, atol=1e-10)


def test_classifier_expert_sleeps_on_the_refused_row():
    X, y = _data()
    labels = (y > 0).astype(int)
    ens = OnlineEnsembleClassifier([("si", ScaleInvariantClassifier(invariance="full")),
                                    ("si2", ScaleInvariantClassifier(invariance="coordinate"))])
    with pytest.warns(DataAdviceWarning, match="expert 'si' refused 1 row"):
        proba = ens.partial_fit_predict_proba(X, labels, classes=[0, 1])
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert ens.named_estimators_["si"].n_samples_seen_ == X.shape[0] - 1
    assert ens.named_estimators_["si2"].n_samples_seen_ == X.shape[0]


def test_every_expert_refusing_every_row_of_a_first_chunk():
    """An expert that refused all of its first chunk is still unfitted: the ensemble predicts
    with the others and the expert learns the next chunk from scratch."""
    X, y = _data()
    X0 = np.full((1, 4), 1.0)
    ens = _regressor()
    ens.partial_fit(X0, [1.0])  # the ensemble's first row: every expert learns it
    Xa = np.zeros((1, 4))
    Xa[0, 0] = 1e12
    with pytest.warns(DataAdviceWarning, match="refused 1 row"):
        ens.partial_fit(Xa, [2.0])
    assert np.isfinite(ens.predict(X[:5])).all()
