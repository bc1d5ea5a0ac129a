"""Helpers shared by the ecosystem interoperability tests (dask, river, pandas, joblib).

The estimators under test are discovered with :func:`skonline.utils.all_estimators`, so the tests
cover every family that exists when they run. Each estimator supplies a small stream it accepts
through its ``_online_test_stream(rng, n_samples)`` hook (see tests/test_common.py); the
variants listed in a class's ``_test_params`` are all tested.
"""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier

from skonline.utils import all_estimators

RESPONSE_METHODS = ("predict", "decision_function", "predict_proba", "transform")


# --------------------------------------------------------------------------- discovery
def estimator_params(type_filter=None, *, require=("partial_fit",)):
    """``pytest.param(instance, id=...)`` for every variant of every matching estimator."""
    out = []
    for name, cls in all_estimators(type_filter=type_filter):
        for params in getattr(cls, "_test_params", [{}]):
            est = cls(**params)
            if not all(hasattr(est, m) for m in require):  # methods can depend on the parameters
                continue
            tag = ",".join(f"{k}={v}" for k, v in params.items())
            out.append(pytest.param(est, id=f"{name}({tag})" if tag else name))
    if not out:  # keep the parametrisation valid while no estimator of that kind exists yet
        out.append(pytest.param(None, id="none", marks=pytest.mark.skip(reason="no such estimator yet")))
    return out


def seeded(est):
    """A fresh clone, with ``random_state=0`` when the estimator has one."""
    est = clone(est)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


def is_supervised(est):
    return bool(est.__sklearn_tags__().target_tags.required)


def estimator_stream(est, n_samples=60, seed=0, *, only_classes=False):
    """``(X, y, first_call_kwargs)`` from the estimator's hook.

    Estimators without the hook (plain transformers) get a small standard normal ``X`` (scaled by
    0.5) and, if they are supervised, a linear target. With ``only_classes=True``, estimators whose
    first call needs inputs other than ``classes`` (loss matrices, groups) are skipped.
    """
    rng = np.random.default_rng(seed)
    hook = getattr(est, "_online_test_stream", None)
    try:
        if hook is None:
            raise NotImplementedError
        X, y, first = hook(rng, n_samples=n_samples)
    except NotImplementedError:
        X = 0.5 * rng.standard_normal((n_samples, 4))
        y, first = None, {}
        if is_supervised(est) or is_classifier(est):
            score = X @ rng.standard_normal(4)
            y = (score > 0).astype(np.int64) if is_classifier(est) else score
    extra = sorted(set(first) - {"classes"})
    if only_classes and extra:
        pytest.skip(f"{type(est).__name__}'s first call needs inputs besides classes: {extra}")
    return X, y, dict(first)


def sub(a, sl):
    return None if a is None else a[sl]


def dense_only(X):
    if sp.issparse(X):
        pytest.skip("this interoperability path takes dense arrays")
    return X


# --------------------------------------------------------------------------- state comparison
def learned_state(est):
    """Every learned attribute: fitted ``*_`` ones and the declared private state."""
    private = set(getattr(est, "_private_state", ()))
    return {
        k: v
        for k, v in vars(est).items()
        if (k.endswith("_") and not k.startswith("__")) or k in private
    }


def _assert_same(va, vb, where, depth=0, ignore=()):
    assert depth < 20, where
    if isinstance(va, np.random.Generator):
        assert isinstance(vb, np.random.Generator), where
        assert va.bit_generator.state == vb.bit_generator.state, where
    elif isinstance(va, np.ndarray):
        assert isinstance(vb, np.ndarray), where
        assert va.dtype == vb.dtype and va.shape == vb.shape, where
        np.testing.assert_array_equal(np.asarray(va), np.asarray(vb), err_msg=where)
    elif sp.issparse(va):
        assert sp.issparse(vb) and va.shape == vb.shape, where
        np.testing.assert_array_equal(va.toarray(), vb.toarray(), err_msg=where)
    elif isinstance(va, dict):
        assert isinstance(vb, dict) and va.keys() == vb.keys(), where
        for k in va:
            _assert_same(va[k], vb[k], f"{where}[{k!r}]", depth + 1, ignore)
    elif isinstance(va, (list, tuple)):
        assert type(va) is type(vb) and len(va) == len(vb), where
        for i, (a, b) in enumerate(zip(va, vb)):
            _assert_same(a, b, f"{where}[{i}]", depth + 1, ignore)
    elif hasattr(va, "get_params"):  # a nested estimator (ensembles, pipelines)
        assert type(va) is type(vb), where
        assert_same_state(va, vb, where, depth + 1, ignore=ignore)
    elif isinstance(va, (float, np.floating)):
        assert va == vb or (va != va and vb != vb), where
    elif hasattr(va, "__dict__") and not callable(va) and not isinstance(va, type):
        assert type(va) is type(vb), where  # a plain helper object: compare its attributes
        _assert_same(vars(va), vars(vb), where, depth + 1, ignore)
    elif type(va) is type(vb) and va == vb:
        pass
    else:  # e.g. a compiled loss object of a nested scikit-learn estimator: no __eq__
        assert type(va) is type(vb), where
        assert pickle.dumps(va) == pickle.dumps(vb), where


def assert_same_state(a, b, where=None, depth=0, *, ignore=()):
    """``a`` and ``b`` hold bit-identical learned state, public properties included.

    Attribute names in ``ignore`` are left out, here and in nested estimators (e.g.
    ``feature_names_in_``).
    """
    where = where or type(a).__name__
    sa, sb = learned_state(a), learned_state(b)
    for k in ignore:
        sa.pop(k, None)
        sb.pop(k, None)
    assert sa.keys() == sb.keys(), (where, sorted(set(sa) ^ set(sb)))
    for k in sa:
        _assert_same(sa[k], sb[k], f"{where}.{k}", depth, ignore)
    # fitted quantities exposed as properties (coef_, intercept_, ...) computed from the state
    for k in dir(type(a)):
        if k in ignore:
            continue
        if k.endswith("_") and not k.startswith("_") and isinstance(getattr(type(a), k), property):
            try:
                va = getattr(a, k)
            except (AttributeError, ValueError):  # not available for this configuration / state
                continue
            _assert_same(va, getattr(b, k), f"{where}.{k}", depth, ignore)


def responses(est, X):
    """What every pure prediction method returns on ``X``."""
    return {m: getattr(est, m)(X) for m in RESPONSE_METHODS if hasattr(est, m)}


def assert_same_responses(a, b, X_a, X_b=None):
    ra, rb = responses(a, X_a), responses(b, X_a if X_b is None else X_b)
    assert ra.keys() == rb.keys()
    for m in ra:
        va, vb = ra[m], rb[m]
        if sp.issparse(va):
            va, vb = va.toarray(), vb.toarray()
        np.testing.assert_array_equal(np.asarray(va), np.asarray(vb), err_msg=m)


def learn(est, X, y, **kw):
    """``partial_fit_predict`` where the estimator has it (the prequential outputs), else ``partial_fit``."""
    if hasattr(est, "partial_fit_predict"):
        return np.asarray(est.partial_fit_predict(X, y, **kw))
    est.partial_fit(X, y, **kw)
    return None
