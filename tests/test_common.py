"""Shared checks run on every public estimator found by ``skonline.utils.all_estimators()``.

* scikit-learn's ``parametrize_with_checks``;
* the five invariants of the streaming contract (ARCHITECTURE.md): chunking invariance bit for bit,
  pickling mid-stream, atomic rejection of a bad chunk, pure predict, reproducibility;
* a bad-input battery that must raise a clear error and leave the estimator exactly as it was;
* edge inputs that must simply work.

An estimator takes part through its private hook ``_online_test_stream(rng, n_samples)`` that returns
``(X, y, first_call_kwargs)``: a small stream it accepts. Families whose inputs are not (X, y)
(loss matrices, groups) override the hook. Per-estimator instances used for the checks come from
``_test_instances`` below (default construction unless a family registers more).
"""

import pickle

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from skonline.utils import all_estimators

from _helpers import assert_same_state, learned_state

ESTIMATORS = all_estimators()


def _test_instances():
    """Instances to check: the default one, plus every variant an estimator declares.

    An estimator class may define ``_test_params`` (a list of dicts of constructor parameters) to
    run the shared checks on several configurations (e.g. both invariance modes).
    """
    out = []
    for _, cls in ESTIMATORS:
        for params in getattr(cls, "_test_params", [{}]):
            out.append(cls(**params))
    return out


INSTANCES = _test_instances()
ONLINE = [e for e in INSTANCES if hasattr(e, "partial_fit")]


def _id(est):
    params = {k: v for k, v in est.get_params(deep=False).items() if k in getattr(type(est), "_test_param_keys", ())}
    return type(est).__name__ + ("(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")" if params else "")


def _expected_failed_checks(est):
    return getattr(est, "_expected_failed_checks", lambda: {})()


@parametrize_with_checks(INSTANCES, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------- helpers
def _stream(est, seed=0, n=60):
    rng = np.random.default_rng(seed)
    return est._online_test_stream(rng, n_samples=n)


def _responses(est, X):
    out = {}
    for m in ("predict", "decision_function", "predict_proba", "transform"):
        if hasattr(est, m):
            out[m] = getattr(est, m)(X)
    return out


def _chunks(n, sizes):
    i = 0
    for s in sizes:
        if i >= n:
            break
        yield slice(i, min(n, i + s))
        i += s
    if i < n:
        yield slice(i, n)


def _sub(a, sl):
    return None if a is None else a[sl]


def _pfp(est, X, y, **kw):
    """partial_fit_predict where the estimator predicts; otherwise partial_fit (returns None)."""
    if hasattr(est, "partial_fit_predict"):
        return np.asarray(est.partial_fit_predict(X, y, **kw))
    est.partial_fit(X, y, **kw)
    return None


# --------------------------------------------------------------------------- invariants
@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_chunking_invariance(est):
    """Invariant 1: fit equals partial_fit over any chunking, bit for bit."""
    if getattr(est, "_chunk_dependent", False):
        pytest.skip("documented exception: chunk protocol of online experts")
    X, y, first = _stream(est)
    ref = clone(est).set_params(**_rs(est))
    pred_ref = _pfp(ref, X, y, **first)
    full = clone(ref).fit(X, y, **first)
    assert_same_state(ref, full)
    for sizes in ([1] * 7 + [13, 2], [30, 30], [59, 1]):
        e = clone(ref)
        preds = []
        for k, sl in enumerate(_chunks(X.shape[0], sizes)):
            preds.append(_pfp(e, X[sl], _sub(y, sl), **(first if k == 0 else {})))
        if pred_ref is not None:
            np.testing.assert_array_equal(np.concatenate(preds), pred_ref)
        assert_same_state(e, ref)


def _rs(est):
    return {"random_state": 0} if "random_state" in est.get_params() else {}


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_pickle_mid_stream(est):
    """Invariant 2: pickling mid-stream and continuing equals never stopping."""
    X, y, first = _stream(est)
    a = clone(est).set_params(**_rs(est))
    a.partial_fit(X[:25], _sub(y, slice(0, 25)), **first)
    b = pickle.loads(pickle.dumps(a))
    pa = _pfp(a, X[25:], _sub(y, slice(25, None)))
    pb = _pfp(b, X[25:], _sub(y, slice(25, None)))
    np.testing.assert_array_equal(pa, pb)
    assert_same_state(a, b)


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_pure_prediction_and_reproducibility(est):
    """Invariants 4 and 5: predicting changes nothing; same random_state, same result."""
    X, y, first = _stream(est)
    a = clone(est).set_params(**_rs(est)).fit(X, y, **first)
    before = pickle.dumps(learned_state(a))
    r1 = _responses(a, X)
    r2 = _responses(a, X)
    assert pickle.dumps(learned_state(a)) == before
    for k in r1:
        np.testing.assert_array_equal(r1[k], r2[k])
    b = clone(est).set_params(**_rs(est)).fit(X, y, **first)
    assert_same_state(a, b)


def _bad_chunks(est, X, y):
    """(description, X, y, kwargs) chunks that must be rejected after a good first chunk."""
    Xn = X.copy()
    Xn[3, 0] = np.nan
    Xi = X.copy()
    Xi[5, -1] = np.inf
    bad = [] if getattr(est, "_allows_nan", False) else [("nan in X", Xn, y, {})]
    bad += [
        ("inf in X", Xi, y, {}),
        ("wrong n_features", X[:, :-1], y, {}),
        ("empty chunk", X[:0], _sub(y, slice(0, 0)), {}),
    ]
    if y is not None:
        bad.append(("X and y lengths differ", X, y[:-1], {}))
        if is_classifier(est):
            yb = y.copy()
            yb[7] = 999
            bad.append(("label outside classes", X, yb, {}))
        elif np.issubdtype(np.asarray(y).dtype, np.floating):
            yn = y.copy()
            yn[2] = np.nan
            bad.append(("nan in y", X, yn, {}))
    return bad + list(getattr(est, "_extra_bad_chunks", lambda X, y: [])(X, y))


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_bad_input_changes_nothing(est):
    """Invariant 3 and the bad-input battery: clear error, estimator exactly as it was."""
    X, y, first = _stream(est)
    e = clone(est).set_params(**_rs(est))
    e.partial_fit(X[:30], _sub(y, slice(0, 30)), **first)
    before = pickle.dumps(e)
    ref = pickle.loads(before)
    for what, Xb, yb, kw in _bad_chunks(e, X[30:], _sub(y, slice(30, None))):
        with pytest.raises((ValueError, TypeError, FloatingPointError)) as info:
            e.partial_fit(Xb, yb, **kw)
        assert str(info.value), what
        assert_same_state(e, ref)
        assert pickle.dumps(e) == before, what
    # and a rejected first chunk leaves an unfitted estimator unfitted
    fresh = clone(est)
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError):
        fresh.partial_fit(Xn, y, **first)
    assert learned_state(fresh) == {}
    # learning continues exactly as if the bad chunks never came
    np.testing.assert_array_equal(
        _pfp(e, X[30:], _sub(y, slice(30, None))), _pfp(ref, X[30:], _sub(y, slice(30, None)))
    )
    assert_same_state(e, ref)


@pytest.mark.parametrize("est", ONLINE, ids=_id)
def test_edge_inputs(est):
    """A single row, constant and all-zero features, and values near 1e-150 and 1e150 just work."""
    X, y, first = _stream(est)
    e = clone(est).set_params(**_rs(est))
    e.partial_fit(X[:1], _sub(y, slice(0, 1)), **first)
    e.partial_fit(X[1:2], _sub(y, slice(1, 2)))
    for Xe in (np.zeros_like(X), np.ones_like(X), X * 1e-150, X * 1e150):
        if getattr(est, "_bounded_inputs", False) and np.abs(Xe).max() > 1e6:
            continue
        e2 = clone(est).set_params(**_rs(est))
        p = _pfp(e2, Xe, y, **first)
        if p is not None:
            assert np.all(np.isfinite(np.asarray(p, dtype=float)))
        for r in _responses(e2, Xe).values():
            assert np.all(np.isfinite(np.asarray(r, dtype=float)))
