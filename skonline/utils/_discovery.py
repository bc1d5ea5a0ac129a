"""Discovery of every public estimator in skonline (nothing is listed by hand)."""

import importlib
import inspect
import pkgutil
from operator import itemgetter

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, TransformerMixin

# subpackages that hold no estimators, or need optional dependencies
_SKIP = {"tests", "plotting", "datasets", "utils", "_build", "conftest"}

_TYPE_FILTERS = {
    "classifier": ClassifierMixin,
    "regressor": RegressorMixin,
    "transformer": TransformerMixin,
}


def all_estimators(type_filter=None):
    """Every public estimator class in skonline, discovered by walking the subpackages.

    Parameters
    ----------
    type_filter : {'classifier', 'regressor', 'transformer'} or list of those, default=None
        Keep only estimators of these kinds. ``None`` keeps all.

    Returns
    -------
    estimators : list of (name, class)
        Sorted by name.

    Examples
    --------
    >>> from skonline.utils import all_estimators
    >>> names = [name for name, _ in all_estimators(type_filter="classifier")]
    >>> "ScaleInvariantClassifier" in names
    True
    """
    import skonline

    found = {}
    for info in pkgutil.walk_packages(skonline.__path__, prefix="skonline."):
        parts = info.name.split(".")
        if any(p.startswith("_") or p in _SKIP for p in parts[1:]):
            continue
        module = importlib.import_module(info.name)
        public = getattr(module, "__all__", None)
        for name, obj in inspect.getmembers(module, inspect.isclass):
            if name.startswith("_") or (public is not None and name not in public):
                continue
            if not issubclass(obj, BaseEstimator) or inspect.isabstract(obj):
                continue
            if not obj.__module__.startswith("skonline."):
                continue
            found[name] = obj
    estimators = sorted(found.items(), key=itemgetter(0))
    if type_filter is None:
        return estimators
    filters = [type_filter] if isinstance(type_filter, str) else list(type_filter)
    unknown = [f for f in filters if f not in _TYPE_FILTERS]
    if unknown:
        raise ValueError(f"type_filter must be among {sorted(_TYPE_FILTERS)}; got {unknown}.")
    mixins = tuple(_TYPE_FILTERS[f] for f in filters)
    return [(n, c) for n, c in estimators if issubclass(c, mixins)]
