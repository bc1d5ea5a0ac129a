"""The ensembles hand their experts one container, decided by the width of the stream (issue 21).

Up to 4,096 features every expert gets dense rows, whatever the caller passed; beyond, CSR rows
go to the experts whose scikit-learn tags accept sparse input and dense rows to the others. The
same rows as CSR or dense then give the same ensemble, even with experts whose own CSR and dense
paths differ (``SGDClassifier`` decays its intercept differently on sparse input) or that refuse
CSR (``GaussianNB``).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import SGDClassifier
from sklearn.naive_bayes import GaussianNB

from skonline.experts import OnlineEnsembleClassifier
from skonline.utils import _scaling


def _stream(n=80, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.5)
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    return X, y


def _ensemble():
    return OnlineEnsembleClassifier(
        estimators=[("sgd", SGDClassifier(loss="log_loss", random_state=0)), ("nb", GaussianNB())]
    )


@pytest.mark.parametrize("wide", [False, True])
def test_experts_get_one_container_whatever_the_caller_passes(wide, monkeypatch):
    if wide:  # the width rule lowered: these 5 features are a wide stream
        monkeypatch.setattr(_scaling, "WIDE_FEATURES", 2)
    X, y = _stream()
    Xs = sp.csr_matrix(X)
    a, b, c = _ensemble(), _ensemble(), _ensemble()
    pa = a.partial_fit_predict_proba(X, y, classes=[0, 1])
    pb = b.partial_fit_predict_proba(Xs, y, classes=[0, 1])
    np.testing.assert_allclose(pa, pb, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(Xs), rtol=1e-12, atol=1e-12)
    # a stream that mixes the two containers learns what the dense stream in the same chunks learns
    # (these experts learn a chunk after predicting it: the ensemble depends on the chunking)
    d = _ensemble()
    c.partial_fit(X[:30], y[:30], classes=[0, 1])
    c.partial_fit(Xs[30:], y[30:])
    d.partial_fit(X[:30], y[:30], classes=[0, 1])
    d.partial_fit(X[30:], y[30:])
    np.testing.assert_allclose(c.predict_proba(Xs), d.predict_proba(X), rtol=1e-12, atol=1e-12)
