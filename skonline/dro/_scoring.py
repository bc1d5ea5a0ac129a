"""Worst-group scoring for model selection of group-robust learners."""

from functools import partial, update_wrapper

import numpy as np
from sklearn import config_context
from sklearn.metrics import accuracy_score, make_scorer

__all__ = ["worst_group_score", "make_worst_group_scorer"]


def worst_group_score(y_true, y_pred, *, groups=None, metric=accuracy_score, greater_is_better=True,
                      **metric_kwargs):
    """The value of ``metric`` on the worst group: the smallest score, or the largest loss.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Predictions (or probabilities, decision values: whatever ``metric`` takes).
    groups : array-like of shape (n_samples,)
        Group of each row. Required (a ``ValueError`` says how to route it when missing).
    metric : callable, default=accuracy_score
        ``metric(y_true, y_pred, **metric_kwargs)``, evaluated on each group's rows.
    greater_is_better : bool, default=True
        ``True``: ``metric`` is a score and the worst group has the smallest one; ``False``: a
        loss, and the worst group has the largest.
    **metric_kwargs : dict
        Passed to ``metric``.

    Returns
    -------
    score : float
        ``min`` (score) or ``max`` (loss) over the groups of ``metric`` on the group's rows.

    Examples
    --------
    >>> from skonline.dro import worst_group_score
    >>> worst_group_score([1, 1, 0, 0], [1, 1, 1, 0], groups=["a", "a", "b", "b"])
    0.5
    """
    if groups is None:
        raise ValueError(
            "worst_group_score needs groups. Through a scorer in GridSearchCV or cross_validate, "
            "enable metadata routing (sklearn.set_config(enable_metadata_routing=True)) and pass "
            "groups=... to fit, so that it reaches the scorer."
        )
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != y_true.shape[0] or y_pred.shape[0] != y_true.shape[0]:
        raise ValueError(
            f"groups must have one label per row: got {groups.shape} groups for {y_true.shape[0]} "
            f"targets and {y_pred.shape[0]} predictions."
        )
    if y_true.shape[0] == 0:
        raise ValueError("worst_group_score needs at least one row.")
    values = [
        float(metric(y_true[groups == g], y_pred[groups == g], **metric_kwargs))
        for g in np.unique(groups)
    ]
    return min(values) if greater_is_better else max(values)


def make_worst_group_scorer(metric=accuracy_score, *, greater_is_better=True, response_method="predict",
                            **metric_kwargs):
    """A scorer of the worst group, for ``GridSearchCV(..., scoring=...)`` and ``cross_validate``.

    Model selection by the average score (the default of the search tools) can pick a model that
    neglects a small group; this scorer selects by :func:`worst_group_score` instead. It requests
    ``groups`` through scikit-learn's metadata routing (as :class:`GroupDROClassifier` does for
    ``fit``): with ``sklearn.set_config(enable_metadata_routing=True)``, ``search.fit(X, y,
    groups=g)`` passes each test fold's groups to it.

    Parameters
    ----------
    metric : callable, default=accuracy_score
        ``metric(y_true, y_pred, **metric_kwargs)``, evaluated on each group's rows.
    greater_is_better : bool, default=True
        Whether ``metric`` is a score (the worst group has the smallest value) or a loss (the
        largest; the scorer then returns its negative, as :func:`~sklearn.metrics.make_scorer`
        does).
    response_method : str or list of str, default='predict'
        The estimator method giving ``y_pred`` (e.g. ``'predict_proba'`` for the log loss).
    **metric_kwargs : dict
        Passed to ``metric``.

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y, groups=...)``; ``groups`` is requested for routing
        (``scorer.set_score_request(groups=...)`` changes it).

    See Also
    --------
    worst_group_score : the metric.
    GroupDROClassifier : learns a model for the worst group.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.model_selection import GridSearchCV, KFold
    >>> from skonline.dro import GroupDROClassifier, make_worst_group_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((2000, 2))
    >>> groups = (rng.random(2000) < 0.2).astype(int)    # a minority group with another rule
    >>> y = np.where(groups == 1, X[:, 1] > 0, X[:, 0] > 0)
    >>> y = (y ^ ((groups == 1) & (rng.random(2000) < 0.1))).astype(int)   # and label noise
    >>> grid = {"eta_scale": [0.0, 30.0]}     # 0: group weights frozen (no DRO)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     by_average = GridSearchCV(GroupDROClassifier(random_state=0), grid, cv=KFold(5))
    ...     by_worst = GridSearchCV(GroupDROClassifier(random_state=0), grid, cv=KFold(5),
    ...                             scoring=make_worst_group_scorer())
    ...     by_average = by_average.fit(X, y, groups=groups)
    ...     by_worst = by_worst.fit(X, y, groups=groups)
    >>> by_average.best_params_, by_worst.best_params_
    ({'eta_scale': 0.0}, {'eta_scale': 30.0})
    """
    # make_scorer keeps its own greater_is_better for the sign: the metric's is bound here
    score_func = update_wrapper(partial(worst_group_score, greater_is_better=greater_is_better),
                                worst_group_score)  # a __name__ (scikit-learn 1.6 reprs the scorer with it)
    scorer = make_scorer(score_func, greater_is_better=greater_is_better, response_method=response_method,
                         metric=metric, **metric_kwargs)
    # request groups by default, whatever the routing setting at creation time
    with config_context(enable_metadata_routing=True):
        scorer.set_score_request(groups=True)
    return scorer
