"""Progressive (prequential) validation built on ``partial_fit_predict``."""

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch

_RESPONSE_METHODS = {
    "predict": "partial_fit_predict",
    "decision_function": "partial_fit_decision_function",
    "predict_proba": "partial_fit_predict_proba",
}


def _sample_rows(X, sl):
    return X[sl]


def progressive_validation(
    estimator,
    X,
    y,
    *,
    metrics=None,
    response_method="predict",
    chunk_size=1000,
    n_points=50,
    clone_estimator=True,
    fit_params=None,
):
    """Evaluate an online learner prequentially: predict each row, then learn it.

    The stream is fed in chunks through ``partial_fit_predict`` (or its ``decision_function`` /
    ``predict_proba`` variant), so every prediction is made before its row is learned, inside the
    estimator's compiled pass. Metrics are evaluated on the growing prefix at ``n_points`` evenly
    spaced times.

    Parameters
    ----------
    estimator : online estimator
        Anything with ``partial_fit_predict`` (all skonline learners).
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The stream, in order.
    y : array-like of shape (n_samples,)
    metrics : dict of str to callable or str, default=None
        ``name -> metric(y_true, y_pred)`` with scikit-learn's metric signature (or the name of such
        a function in :mod:`sklearn.metrics`, e.g. ``'accuracy_score'`` or ``'accuracy'``), evaluated
        on the prequential predictions of the prefix. Default: accuracy for classifiers, mean absolute
        error for regressors.
    response_method : {'predict', 'decision_function', 'predict_proba'}, default='predict'
        Which prequential output to pass to the metrics (e.g. ``'predict_proba'`` for log-loss).
    chunk_size : int, default=1000
        Rows per ``partial_fit_predict`` call (the result does not depend on it for chunk-invariant
        estimators).
    n_points : int, default=50
        Number of prefix lengths at which the metrics are reported.
    clone_estimator : bool, default=True
        Learn on a clone (``False``: learn in place, continuing the estimator's stream).
    fit_params : dict, default=None
        Keywords for the first call (e.g. ``{'classes': [0, 1]}``; inferred from ``y`` for
        classifiers when omitted).

    Returns
    -------
    result : Bunch
        ``n_samples`` (prefix lengths), one array per metric (value on each prefix), ``final`` (dict
        of the metrics on the whole stream), ``predictions`` (the prequential outputs) and
        ``estimator`` (the learner after the pass).

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.metrics import accuracy_score
    >>> from skonline.evaluation import progressive_validation
    >>> from skonline.linear_model import ScaleInvariantClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> res = progressive_validation(ScaleInvariantClassifier(invariance="full"), X, y,
    ...                              metrics={"accuracy": accuracy_score}, n_points=5)
    >>> res.n_samples.tolist()
    [114, 228, 341, 455, 569]
    >>> res.final["accuracy"] > 0.9
    True
    """
    from sklearn.base import is_classifier
    from sklearn.metrics import accuracy_score, mean_absolute_error

    if response_method not in _RESPONSE_METHODS:
        raise ValueError(f"response_method must be one of {sorted(_RESPONSE_METHODS)}; got {response_method!r}.")
    est = clone(estimator) if clone_estimator else estimator
    method = getattr(est, _RESPONSE_METHODS[response_method], None)
    if method is None:
        raise ValueError(f"{type(est).__name__} has no {_RESPONSE_METHODS[response_method]}.")
    y = np.asarray(y)
    n = y.shape[0]
    if metrics is None:
        metrics = {"accuracy": accuracy_score} if is_classifier(est) else {"mae": mean_absolute_error}
    metrics = {name: _metric_function(m) for name, m in metrics.items()}
    fit_params = dict(fit_params or {})
    if is_classifier(est) and "classes" not in fit_params and not hasattr(est, "classes_"):
        fit_params["classes"] = np.unique(y)
    outs = []
    for k, start in enumerate(range(0, n, chunk_size)):
        sl = slice(start, min(n, start + chunk_size))
        outs.append(np.asarray(method(_sample_rows(X, sl), y[sl], **(fit_params if k == 0 else {}))))
    pred = np.concatenate(outs)
    points = np.unique(np.linspace(0, n, n_points + 1)[1:].round().astype(int))
    res = Bunch(n_samples=points, predictions=pred, estimator=est)
    for name, metric in metrics.items():
        res[name] = np.array([metric(y[:p], pred[:p]) for p in points])
    res["final"] = {name: float(res[name][-1]) for name in metrics}
    return res


def _metric_function(metric):
    """A metric callable, or the name of a function of :mod:`sklearn.metrics` ('accuracy_score')."""
    if callable(metric):
        return metric
    import sklearn.metrics

    if isinstance(metric, str):
        for name in (metric, f"{metric}_score"):
            func = getattr(sklearn.metrics, name, None)
            if callable(func) and not isinstance(func, type):
                return func
    raise ValueError(
        f"metrics values must be callables metric(y_true, y_pred) or names of functions in "
        f"sklearn.metrics; got {metric!r}."
    )
