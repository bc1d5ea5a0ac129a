"""Instances and data for the shared checks, kept out of the estimator classes.

The shared checks (``tests/test_common.py``, the fuzz, robustness and ecosystem tests) and the
benchmarks that run every estimator (``benchmarks/scale.py``, ``cold_start.py``, ``progress.py``)
need, for each estimator, the parameter sets to check, a small stream it accepts and what counts as
bad input for it. scikit-learn keeps the same for its own estimators in
``sklearn.utils._test_common.instance_generator``; skonline keeps them here, so an estimator's class
holds only what its users call.

Every table is keyed by class name and looked up along the class's MRO (a family's base class
holds what its estimators share):

* :func:`test_params` - the constructor parameter sets to check (``[{}]``: the defaults only);
* :func:`test_param_keys` - the parameters that name a parameter set in a test id;
* :func:`test_stream` - ``(X, y, first_call_kwargs)``, a small stream the estimator accepts;
* :func:`extra_bad_chunks` - family-specific chunks that must be rejected (beyond NaN/inf/shape);
* :func:`allows_nan` - NaN in ``X`` is data, not an error (an imputer, an encoder, a rule's
  sleeping expert);
* :func:`bounded_inputs` - the estimator is held to finite outputs only on bounded inputs (raw
  AWV, the rules and PCSP on loss matrices).
"""

import math

import numpy as np

__all__ = ["test_params", "test_param_keys", "test_stream", "test_stream_key", "extra_bad_chunks", "allows_nan",
           "bounded_inputs"]


def _lookup(table, cls, default):
    for klass in cls.__mro__:
        if klass.__name__ in table:
            return table[klass.__name__]
    return default


# --------------------------------------------------------------------------- parameter sets
def _ensemble_regressor_params():
    from sklearn.dummy import DummyRegressor
    from sklearn.frozen import FrozenEstimator

    from ..linear_model import ScaleInvariantRegressor

    zero = FrozenEstimator(DummyRegressor(strategy="constant", constant=0.0).fit([[0.0]], [0.0]))
    # the default experts (estimators=None) last: the checks that replay a call once per Python
    # line (tests/test_common.py, interruptions) and the cold-start benchmark take the first
    # configuration, and the default ensemble runs four to five learners' code per call
    return [{"estimators": [("si_abs", ScaleInvariantRegressor()), ("si_huber", ScaleInvariantRegressor(loss="huber")),
                            ("zero", zero)]}, {}]


def _ensemble_classifier_params():
    from sklearn.linear_model import SGDClassifier

    from ..linear_model import ScaleInvariantClassifier

    return [{"estimators": [("sgd", SGDClassifier(loss="log_loss", random_state=0)),
                            ("si", ScaleInvariantClassifier())]}, {}]


def _column_transformer_params():
    from ..preprocessing import OnlineHashingEncoder, OnlineOneHotEncoder, OnlineStandardScaler

    return [
        {"transformers": [("scale", OnlineStandardScaler(), slice(0, 2)),
                          ("onehot", OnlineOneHotEncoder(max_categories=4), slice(2, None))]},
        {"transformers": [("hash", OnlineHashingEncoder(n_features=8), slice(2, None))],
         "remainder": OnlineStandardScaler()},
    ]


def _pipeline_params():
    from ..kernel_ridge import AWVRegressor
    from ..linear_model import ScaleInvariantClassifier
    from ..preprocessing import OnlineStandardScaler

    return [
        {"steps": [("scale", OnlineStandardScaler()), ("clf", ScaleInvariantClassifier())]},
        {"steps": [("scale", OnlineStandardScaler()), ("reg", AWVRegressor(standardize=False))]},
    ]


#: class name -> parameter sets (a list, or a function building it: estimators built fresh)
_PARAMS = {
    "_KernelSelectionBase": [
        {},
        {"algorithm": "oks"},
        {"algorithm": "ioks"},
        {"n_components": 8},
        {"algorithm": "ioks", "n_components": 8},
        {"algorithm": "oks", "n_components": 8},
        {"max_support": 20},  # n_components='auto' moves to random features at row 20
        {"feedback": "bandit", "max_support": 20},
        {"n_components": None},
    ],
    "GroupDROClassifier": [
        {},
        {"sampling": "stream"},
        {"sampling": "stream", "algorithm": "online"},
        {"algorithm": "smd_uniform", "sampling": "stream"},
        {"objective": "top_k", "algorithm": "depround", "horizon": 400, "sampling": "stream"},
        {"objective": "top_k", "algorithm": "online", "sampling": "stream"},
        {"objective": "weighted", "algorithm": "mirror_prox"},
    ],
    "GroupDRORegressor": [
        {},
        {"sampling": "stream", "horizon": 200},
        {"sampling": "stream", "algorithm": "online", "horizon": 200},
        {"objective": "top_k", "algorithm": "depround", "horizon": 200, "sampling": "stream"},
        {"objective": "weighted"},
    ],
    "OnlineImputer": [{}, {"strategy": "median", "add_indicator": True},
                      {"strategy": "most_frequent", "max_categories": 4}],
    "OnlineOneHotEncoder": [{}, {"max_categories": 3}, {"max_categories": 2, "handle_unknown": "ignore"}],
    # the shared checks run with a declared range that covers scikit-learn's test data
    "_BaseRule": [{"loss_bound": (-1000.0, 1000.0)}],
    "FixedShare": [{"loss_bound": (-1000.0, 1000.0)},
                   {"eta": "adaptive", "share_rate": "decreasing", "loss_bound": (-1000.0, 1000.0)}],
    "PCSP": [{"loss_bound": 4.0}],
    "OnlineEnsembleRegressor": _ensemble_regressor_params,
    "OnlineEnsembleClassifier": _ensemble_classifier_params,
    "OnlineColumnTransformer": _column_transformer_params,
    "OnlinePipeline": _pipeline_params,
    # the third: a dictionary frozen early and a history compacted, within the shared checks' streams
    "PKAWVRegressor": [{}, {"features": "nystrom"}, {"features": "nystrom", "max_components": 6, "max_history": 10},
                       {"algorithm": "ridge", "degree": 3}],
    "PKAWVClassifier": [{}, {"features": "nystrom"}, {"features": "nystrom", "max_components": 6, "max_history": 10}],
    # the second: past its budget within the shared checks' streams (the switch to the projection)
    "KernelAWVRegressor": [{}, {"max_rows": 20, "n_components": 8}],
    # the shared checks run on both algorithms
    "_ScaleInvariantBase": [{}, {"invariance": "full"}, {"invariance": "full", "predict_mode": "online"}],
}

#: class name -> the parameters that name a parameter set in a test id
_PARAM_KEYS = {
    "_KernelSelectionBase": ("algorithm", "n_components", "max_support", "feedback"),
    "_BaseGroupDRO": ("objective", "algorithm", "sampling"),
    "OnlineImputer": ("strategy",),
    "OnlineOneHotEncoder": ("max_categories", "handle_unknown"),
    "FixedShare": ("eta", "share_rate"),
    "OnlineEnsembleRegressor": (),
    "OnlineEnsembleClassifier": (),
    "PKAWVRegressor": ("features", "algorithm", "max_components"),
    "PKAWVClassifier": ("features", "max_components"),
    "KernelAWVRegressor": ("max_rows",),
    "_ScaleInvariantBase": ("invariance", "predict_mode"),
}


def test_params(cls):
    """The constructor parameter sets of ``cls`` the shared checks run (``[{}]``: its defaults)."""
    params = _lookup(_PARAMS, cls, [{}])
    return params() if callable(params) else [dict(p) for p in params]


def test_param_keys(cls):
    """The parameters whose values name a parameter set of ``cls`` in a test id."""
    return _lookup(_PARAM_KEYS, cls, ())


# --------------------------------------------------------------------------- streams
def _classifier_stream(est, rng, n_samples, n_features, n_classes=2):
    X = rng.standard_normal((n_samples, n_features))
    w = rng.standard_normal((n_features, n_classes))
    y = np.argmax(X @ w + 0.3 * rng.standard_normal((n_samples, n_classes)), axis=1)
    y[:n_classes] = np.arange(n_classes)
    return X, y, {"classes": np.arange(n_classes)}


def _regressor_stream(est, rng, n_samples, n_features):
    X = rng.standard_normal((n_samples, n_features))
    y = X @ rng.standard_normal(n_features) + 0.1 * rng.standard_normal(n_samples)
    return X, y, {}


def _selector_stream(est, rng, n_samples, n_features):
    X = rng.uniform(-1, 1, size=(n_samples, n_features))
    y = (X[:, 0] + 0.3 * rng.standard_normal(n_samples) > 0).astype(int)
    y[:2] = [0, 1]
    return X, y, {"classes": np.array([0, 1])}


def _column_transformer_stream(est, rng, n_samples, n_features):
    """Two numeric columns in their own units, then small integer categories."""
    X = np.empty((n_samples, n_features))
    X[:, :2] = rng.standard_normal((n_samples, 2)) * [1.0, 1e3] + [0.0, 5e3]
    X[:, 2:] = rng.integers(0, 5, size=(n_samples, n_features - 2))
    return X, None, {}


def _pipeline_stream(est, rng, n_samples, n_features, **kw):
    return test_stream(est._final_estimator, rng, n_samples=n_samples, n_features=n_features, **kw)


def _gaussian_stream(est, rng, n_samples, n_features):
    return rng.standard_normal((n_samples, n_features)), None, {}


def _standard_scaler_stream(est, rng, n_samples, n_features):
    return rng.standard_normal((n_samples, n_features)) * [1.0, 10.0, 1e3, 0.01][:n_features], None, {}


def _min_max_scaler_stream(est, rng, n_samples, n_features):
    return rng.standard_normal((n_samples, n_features)) * 100.0 + 7.0, None, {}


def _imputer_stream(est, rng, n_samples, n_features):
    """Rounded Gaussian columns (repeated values, for the mode) with about 15 % missing."""
    X = np.round(rng.standard_normal((n_samples, n_features)) * [1.0, 10.0, 1e3, 0.01][:n_features], 1)
    X[rng.random(X.shape) < 0.15] = np.nan
    X[:2] = np.where(np.isnan(X[:2]), 1.0, X[:2])  # a value in every column from the first rows
    X[0, 0] = np.nan  # but one missing entry before any value
    return X, None, {}


def _encoder_stream(est, rng, n_samples, n_features):
    """Small integer categories, as floats (the shared checks scale and cast them)."""
    return rng.integers(0, 6, size=(n_samples, n_features)).astype(np.float64), None, {}


def _rule_stream(est, rng, n_samples, n_features):
    from ..experts._rules import _validate_loss_range

    lo, hi = _validate_loss_range(est.loss_bound)
    L = rng.uniform(0.0, 1.0, size=(n_samples, n_features))
    return lo + (hi - lo) * L, None, {}


def _pcsp_stream(est, rng, n_samples, n_features):
    K = 3
    B = rng.standard_normal((n_samples, K, K))
    Z = (B + B.transpose(0, 2, 1)) / 2
    Z /= np.abs(np.linalg.eigvalsh(Z)).max(axis=1)[:, None, None]
    return Z.reshape(n_samples, K * K) * 0.5 * est.loss_bound, None, {}


#: class name -> stream function ``(est, rng, n_samples, n_features[, n_classes]) -> (X, y, kwargs)``
_STREAMS = {
    "OnlineClassifierMixin": _classifier_stream,
    "OnlineRegressorMixin": _regressor_stream,
    "OnlineKernelSelector": _selector_stream,
    "OnlineColumnTransformer": _column_transformer_stream,
    "OnlinePipeline": _pipeline_stream,
    "OnlineNystroem": _gaussian_stream,
    "OnlineStandardScaler": _standard_scaler_stream,
    "OnlineMinMaxScaler": _min_max_scaler_stream,
    "OnlineImputer": _imputer_stream,
    "_TableEncoderMixin": _encoder_stream,
    "_BaseRule": _rule_stream,
    "PCSP": _pcsp_stream,
}


def test_stream(est, rng, n_samples=60, n_features=4, **kw):
    """A small stream ``est`` accepts: ``(X, y, first_call_kwargs)`` (classifiers take
    ``n_classes``); None for an estimator without one (the fixed feature maps)."""
    make = _lookup(_STREAMS, type(est), None)
    return None if make is None else make(est, rng, n_samples, n_features, **kw)


def test_stream_key(est):
    """Which stream :func:`test_stream` builds for ``est`` (estimators with the same key get the
    same rows from the same generator)."""
    make = _lookup(_STREAMS, type(est), None)
    if make is _pipeline_stream:
        return test_stream_key(est._final_estimator)
    return None if make is None else make.__name__


# --------------------------------------------------------------------------- bad input, NaN
def _group_dro_bad_chunks(est, X, y):
    n = X.shape[0]
    return [
        ("groups of wrong length", X, y, {"groups": np.zeros(n - 1, dtype=np.int64)}),
        ("unknown group label", X, y, {"groups": np.full(n, 7)}),
        ("group_labels differ", X, y, {"groups": np.zeros(n, dtype=np.int64), "group_labels": [0, 1]}),
    ]


def _rule_bad_chunks(est, X, y):
    from ..experts._rules import _validate_loss_range

    lo, hi = _validate_loss_range(est.loss_bound)
    above = X.copy()
    above[4, 2] = hi + 0.5 * (hi - lo)
    below = X.copy()
    below[1, 0] = lo - 1e-9 * (hi - lo) - 1e-12
    all_asleep = X.copy()
    all_asleep[3, :] = np.nan
    return [
        ("loss above the range", above, y, {}),
        ("loss below the range", below, y, {}),
        ("all experts asleep", all_asleep, y, {}),
        ("1-D input", X[0], y, {}),
    ]


def _pcsp_bad_chunks(est, X, y):
    n, d = X.shape
    K = int(round(math.sqrt(d)))
    Z = X.reshape(n, K, K).copy()
    Z[2] *= 2.5  # spectral norm 1.25 * loss_bound
    asym = X.reshape(n, K, K).copy()
    asym[1, 0, 1] += 0.1
    return [
        ("spectral norm above loss_bound", Z.reshape(n, d), y, {}),
        ("non-symmetric matrix", asym.reshape(n, d), y, {}),
    ]


_BAD_CHUNKS = {"_BaseGroupDRO": _group_dro_bad_chunks, "_BaseRule": _rule_bad_chunks, "PCSP": _pcsp_bad_chunks}


def extra_bad_chunks(est, X, y):
    """Family-specific chunks ``(what, X, y, kwargs)`` that ``est`` must reject, built from a good
    chunk ``(X, y)`` of its stream."""
    make = _lookup(_BAD_CHUNKS, type(est), None)
    return [] if make is None else make(est, X, y)


def _column_transformer_allows_nan(est):
    """NaN in X is not an error when some transformer takes it (an encoder: a missing category);
    the transformers' own checks cover the rest."""
    steps = [t for _, t, _ in est.transformers] + [est.remainder]
    return any(allows_nan(t) or (hasattr(t, "fit") and t.__sklearn_tags__().input_tags.allow_nan)
               for t in steps if hasattr(t, "fit"))


#: class name -> whether NaN in X is data (or a function of the instance deciding it)
_ALLOWS_NAN = {"OnlineImputer": True, "_TableEncoderMixin": True, "_BaseRule": True, "PCSP": False,
               "OnlineColumnTransformer": _column_transformer_allows_nan}


def allows_nan(est):
    """Whether NaN in ``X`` is data for ``est`` (an imputer, an encoder, a rule's sleeping expert)."""
    v = _lookup(_ALLOWS_NAN, type(est), False)
    return bool(v(est)) if callable(v) else v


#: held to finite outputs only on bounded inputs (raw AWV, the rules and PCSP on loss matrices)
_BOUNDED_INPUTS = {"_BaseRule": True, "PCSP": True, "AWVRegressor": True}


def bounded_inputs(est):
    """Whether ``est`` is held to finite outputs only on bounded inputs."""
    return _lookup(_BOUNDED_INPUTS, type(est), False)
