"""Helpers shared by the ecosystem interoperability tests (dask, river, pandas, joblib).

The estimators under test are discovered with :func:`skonline.utils.all_estimators`, so the tests
cover every family that exists when they run. Each estimator supplies a small stream it accepts
through ``skonline.utils._test_instances.test_stream`` (see tests/test_common.py); the
parameter sets registered there (``test_params``) are all tested.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone, is_classifier

from skonline.utils import _test_instances as ti
from skonline.utils import all_estimators

from _helpers import assert_same_state, learned_state  # noqa: F401  (re-exported)

RESPONSE_METHODS = ("predict", "decision_function", "predict_proba", "transform")


# --------------------------------------------------------------------------- discovery
def estimator_params(type_filter=None, *, require=("partial_fit",)):
    """``pytest.param(instance, id=...)`` for every variant of every matching estimator."""
    out = []
    for name, cls in all_estimators(type_filter=type_filter):
        for params in ti.test_params(cls):
            est = cls(**params)
            if not all(hasattr(est, m) for m in require):  # methods can depend on the parameters
                continue
            tag = ",".join(f"{k}={v}" for k, v in params.items())
            out.append(pytest.param(est, id=f"{name}({tag})" if tag else name))
    if not out:  # a test that silently covers nothing is a broken test: fail collection
        raise LookupError(
            f"all_estimators(type_filter={type_filter!r}) found no estimator with {list(require)}: "
            "the discovery or the filter is broken"
        )
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

    Estimators without a registered stream (the fixed feature maps) get a small standard normal ``X`` (scaled by
    0.5) and, if they are supervised, a linear target. With ``only_classes=True``, estimators whose
    first call needs inputs other than ``classes`` (loss matrices, groups) are skipped.
    """
    rng = np.random.default_rng(seed)
    stream = ti.test_stream(est, rng, n_samples=n_samples)
    if stream is not None:
        X, y, first = stream
    else:
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
# (tests/_helpers.py, shared with tests/test_common.py)


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
