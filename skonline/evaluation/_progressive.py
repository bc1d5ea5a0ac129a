"""Progressive (prequential) evaluation: each row is predicted before it is learned."""

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


def prequential_predictions(
    estimator,
    X,
    y,
    *,
    response_method="predict",
    chunk_size=1000,
    clone_estimator=True,
    fit_params=None,
):
    """The prediction made for each row before that row is learned, over one pass of a stream.

    Two protocols, chosen from what the estimator offers:

    * skonline learners (``partial_fit_predict`` and its ``decision_function`` /
      ``predict_proba`` variants): every row is predicted before it is learned, inside the
      estimator's compiled pass; the chunk size only sets how many rows each call takes (the
      result does not depend on it for chunk-invariant estimators).
    * any other estimator with ``partial_fit`` (``SGDClassifier``, ``MultinomialNB``, ...): the
      chunked protocol. Each chunk is predicted with the model learned on the previous chunks,
      then learned. The first chunk gets the prediction of a model that has seen nothing:
      the first class (``predict`` of a classifier), 0 (``predict`` of a regressor,
      ``decision_function``) or uniform probabilities (``predict_proba``).

    Parameters
    ----------
    estimator : estimator with ``partial_fit``
        The learner; skonline learners use their prequential ``partial_fit_<method>``.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The stream, in order.
    y : array-like of shape (n_samples,)
    response_method : {'predict', 'decision_function', 'predict_proba'}, default='predict'
        Which output to return.
    chunk_size : int, default=1000
        Rows per call.
    clone_estimator : bool, default=True
        Learn on a clone (``False``: learn in place, continuing the estimator's stream).
    fit_params : dict, default=None
        Keywords for the first call (e.g. ``{'classes': [0, 1]}``; inferred from ``y`` for
        classifiers when omitted).

    Returns
    -------
    predictions : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        The prequential outputs, row by row.
    estimator : estimator
        The learner after the pass.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import SGDClassifier
    >>> from skonline.evaluation import prequential_predictions
    >>> from skonline.linear_model import ScaleInvariantClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 3))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> ours, _ = prequential_predictions(ScaleInvariantClassifier(), X, y, chunk_size=100)
    >>> sgd, _ = prequential_predictions(SGDClassifier(random_state=0), X, y, chunk_size=100)
    >>> bool(np.mean(ours == y) > 0.9), bool(np.mean(sgd[100:] == y[100:]) > 0.9)
    (True, True)
    """
    from sklearn.base import is_classifier

    if response_method not in _RESPONSE_METHODS:
        raise ValueError(f"response_method must be one of {sorted(_RESPONSE_METHODS)}; got {response_method!r}.")
    if not (isinstance(chunk_size, (int, np.integer)) and chunk_size >= 1):
        raise ValueError(f"chunk_size must be a positive integer; got {chunk_size!r}.")
    est = clone(estimator) if clone_estimator else estimator
    y = np.asarray(y)
    n = y.shape[0]
    fit_params = dict(fit_params or {})
    if is_classifier(est) and "classes" not in fit_params and not hasattr(est, "classes_"):
        fit_params["classes"] = np.unique(y)
    prequential = getattr(est, _RESPONSE_METHODS[response_method], None)
    if prequential is None:
        if not hasattr(est, "partial_fit") or not hasattr(est, response_method):
            raise ValueError(
                f"{type(est).__name__} has neither {_RESPONSE_METHODS[response_method]} nor "
                f"partial_fit and {response_method}."
            )
    outs = []
    for k, start in enumerate(range(0, n, chunk_size)):
        sl = slice(start, min(n, start + chunk_size))
        kw = fit_params if k == 0 else {}
        Xc = _sample_rows(X, sl)
        if prequential is not None:
            outs.append(np.asarray(prequential(Xc, y[sl], **kw)))
            continue
        if k == 0 and not hasattr(est, "classes_") and not hasattr(est, "n_features_in_"):
            outs.append(_unfitted_output(est, response_method, sl.stop - sl.start, y, fit_params))
        else:
            outs.append(np.asarray(getattr(est, response_method)(Xc)))
        est.partial_fit(Xc, y[sl], **kw)
    return np.concatenate(outs), est


def _unfitted_output(est, response_method, n, y, fit_params):
    """What a model that has seen nothing predicts (the first chunk of the chunked protocol)."""
    from sklearn.base import is_classifier

    classes = np.asarray(fit_params.get("classes", [])) if is_classifier(est) else None
    if response_method == "predict_proba":
        return np.full((n, len(classes)), 1.0 / len(classes))
    if response_method == "decision_function":
        return np.zeros(n) if classes is None or len(classes) <= 2 else np.zeros((n, len(classes)))
    if classes is not None:
        out = np.empty(n, dtype=classes.dtype)
        out[:] = classes[0]
        return out
    return np.zeros(n)


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
    estimator's compiled pass. Estimators with ``partial_fit`` only (scikit-learn's) follow the
    chunked protocol of :func:`prequential_predictions`. Metrics are evaluated on the growing
    prefix at ``n_points`` evenly spaced times.

    Parameters
    ----------
    estimator : online estimator
        Anything with ``partial_fit_predict`` (all skonline learners), or with ``partial_fit``.
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
        Number of prefix lengths at which the metrics are reported (at most one per row: a
        stream shorter than ``n_points`` rows is reported after every row).
    clone_estimator : bool, default=True
        As in :func:`prequential_predictions`.
    fit_params : dict, default=None
        As in :func:`prequential_predictions`.

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

    if metrics is None:
        metrics = {"accuracy": accuracy_score} if is_classifier(estimator) else {"mae": mean_absolute_error}
    metrics = {name: _metric_function(m) for name, m in metrics.items()}
    if np.asarray(y).shape[0] == 0:
        raise ValueError("progressive_validation needs a stream of at least one row; got 0 rows.")
    pred, est = prequential_predictions(
        estimator, X, y, response_method=response_method, chunk_size=chunk_size,
        clone_estimator=clone_estimator, fit_params=fit_params,
    )
    y = np.asarray(y)
    n = y.shape[0]
    points = np.unique(np.linspace(0, n, n_points + 1)[1:].round().astype(int))
    points = points[points >= 1]  # short streams: no empty prefix (every row is a point)
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
