"""GroupDRO's sparse stream pass (CSR rows of a wide stream) against the dense pass (issue 21)."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from skonline.dro import GroupDROClassifier, GroupDRORegressor
from skonline.dro import _gdro_core as core
from skonline.utils import _scaling

from _helpers import learned_state

CONFIGS = {
    "default": (GroupDROClassifier, {}),
    "average": (GroupDROClassifier, {"average": True}),
    # a small ball: the projection shrinks w on most rounds (the lazy scale moves)
    "projected": (GroupDROClassifier, {"radius": 0.05, "step_scale": 300.0, "average": True}),
    "last_iterate": (GroupDROClassifier, {"radius": 0.05, "step_scale": 300.0}),  # average_ False: w_t predicts
    "online": (GroupDROClassifier, {"algorithm": "online", "average": True, "radius": 0.05, "step_scale": 300.0}),
    "top_k": (GroupDROClassifier, {"objective": "top_k", "k": 2, "algorithm": "depround", "horizon": 400,
                                   "radius": 0.05, "step_scale": 300.0}),
    "multiclass": (GroupDROClassifier, {"radius": 0.05, "step_scale": 300.0, "average": True}),
    "regressor": (GroupDRORegressor, {"radius": 0.05, "step_scale": 300.0, "average": True, "fit_intercept": False}),
}


def _stream(width, multiclass, regressor, n=480, seed=0):
    """CSR-like rows (about 8 non-zeros each, whatever the width), three groups."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, width))
    for i in range(n):
        cols = rng.choice(width, size=min(8, width), replace=False)
        X[i, cols] = rng.standard_normal(cols.size) * 2.0
    score = X[:, : min(width, 5)].sum(axis=1)
    g = rng.integers(0, 3, n)
    if regressor:
        y = score + 0.1 * rng.standard_normal(n)
    elif multiclass:
        y = np.digitize(score, [-1.0, 1.0])
    else:
        y = (score > 0).astype(int)
    return X, y, g


def _run(est, X, y, g, chunks=(0, 130, 131, 300)):
    """partial_fit_predict over chunks; returns the prequential outputs."""
    out = []
    bounds = list(chunks) + [X.shape[0]]
    for k, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
        kw = {"groups": g[a:b]}
        if k == 0:
            kw["group_labels"] = [0, 1, 2]
            if hasattr(est, "classes") or not isinstance(est, GroupDRORegressor):
                kw["classes"] = np.unique(y)
        out.append(est.partial_fit_predict(X[a:b], y[a:b], **kw))
    return np.concatenate(out)


def _model(name, width, rows, monkeypatch, settle=None):
    """The estimator of config ``name`` after the stream as ``rows`` ('csr': the sparse pass;
    'dense': the dense pass on the same rows); its prequential outputs."""
    cls, kw = CONFIGS[name]
    X, y, g = _stream(width, name == "multiclass", cls is GroupDRORegressor)
    # the container rule decides the pass: CSR rows beyond WIDE_FEATURES columns, dense below
    monkeypatch.setattr(_scaling, "WIDE_FEATURES", 1 if rows == "csr" else 10**9)
    if settle is not None:
        monkeypatch.setattr(core, "settle_every", lambda d: settle)
    est = cls(standardize=False, random_state=3, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pre = _run(est, sp.csr_matrix(X) if rows == "csr" else X, y, g)
    return est, pre, X


@pytest.mark.parametrize("width", [6, 300, 5000])  # 5000: above WIDE_FEATURES (4096)
@pytest.mark.parametrize("name", list(CONFIGS))
def test_sparse_pass_learns_the_dense_model(name, width, monkeypatch):
    a, pa, X = _model(name, width, "dense", monkeypatch)
    b, pb, _ = _model(name, width, "csr", monkeypatch)
    assert b._avg_stamp_.shape[0] == X.shape[1] + int(b.fit_intercept)  # the sparse pass ran
    assert a._avg_stamp_.shape[0] == 0  # the dense pass ran
    scale = max(1.0, np.abs(a.coef_).max())
    np.testing.assert_allclose(pb, pa, rtol=1e-9, atol=1e-11 * scale)
    # the prequential losses (a classifier's labels do not see the scale of its decision values)
    np.testing.assert_allclose(b.cumulative_loss_, a.cumulative_loss_, rtol=1e-9)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9, atol=1e-11 * scale)
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-9, atol=1e-11 * scale)
    np.testing.assert_allclose(b.q_, a.q_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(b.group_draws_, a.group_draws_)
    assert b.n_iter_ == a.n_iter_
    np.testing.assert_allclose(b.predict(X) if name == "regressor" else b.decision_function(X),
                               a.predict(X) if name == "regressor" else a.decision_function(X),
                               rtol=1e-9, atol=1e-11 * scale)


@pytest.mark.parametrize("name", ["projected", "online", "regressor"])
def test_sparse_pass_settling_keeps_the_model(name, monkeypatch):
    """Settling the lazy form every 7 rounds (instead of every max(1024, width)) learns the same
    model, to round-off: what settling folds back is exactly the lazy form's model."""
    a, pa, _ = _model(name, 300, "dense", monkeypatch)
    b, pb, _ = _model(name, 300, "csr", monkeypatch, settle=7)
    scale = max(1.0, np.abs(a.coef_).max())
    np.testing.assert_allclose(pb, pa, rtol=1e-9, atol=1e-11 * scale)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-9, atol=1e-11 * scale)


@pytest.mark.parametrize("name", ["projected", "online", "top_k"])
def test_sparse_pass_chunking_and_pickling_bit_for_bit(name, monkeypatch):
    """With settlings inside and across chunks: any chunking, and a pickle mid-stream, give the
    same state bit for bit."""
    cls, kw = CONFIGS[name]
    X, y, g = _stream(5000, False, False)
    Xs = sp.csr_matrix(X)
    monkeypatch.setattr(core, "settle_every", lambda d: 5)
    states = []
    for chunks in [(0,), (0, 1, 2, 77, 200, 201), (0, 240)]:
        est = cls(standardize=False, random_state=3, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if len(chunks) == 2:  # pickled mid-stream
                _run(est, Xs[:240], y[:240], g[:240], chunks=(0,))
                est = pickle.loads(pickle.dumps(est))
                est.partial_fit(Xs[240:], y[240:], groups=g[240:])
            else:
                _run(est, Xs, y, g, chunks=chunks)
        states.append(learned_state(est))
    for other in states[1:]:
        assert other.keys() == states[0].keys()
        for k in states[0]:
            va, vb = states[0][k], other[k]
            if isinstance(va, np.ndarray):
                np.testing.assert_array_equal(va, vb, err_msg=k)
            elif not hasattr(va, "bit_generator"):
                assert va == vb or (va != va and vb != vb), k
