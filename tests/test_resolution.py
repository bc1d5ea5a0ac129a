"""One resolution step per estimator (issue 24): every ``'auto'`` parameter is resolved once, on a
reset (hook ``_resolve_settings``), into a documented fitted attribute that holds the value in use.

For each estimator fitted at its defaults on its test stream, every constructor parameter whose
value is the string ``'auto'`` has a fitted attribute ``<param>_`` (or the alias of ``ALIASES``)
whose value is not ``'auto'`` and which the class documents in its *Attributes* section.
"""

import inspect
import re

import numpy as np
import pytest
from sklearn.base import clone

from skonline.utils import _test_instances as ti
from skonline.utils import all_estimators

ESTIMATORS = all_estimators()

pytestmark = pytest.mark.filterwarnings("ignore")

#: (class name, parameter) -> fitted attribute, where ``<param>_`` already means something else
#: or scikit-learn fixes the name; the reason beside each entry
ALIASES = {
    # scikit-learn's encoders name the categories in use ``categories_``
    ("OnlineOneHotEncoder", "categories"): "categories_",
    # the ensemble resolves 'auto' per expert: which experts learn online
    ("OnlineEnsembleClassifier", "update_experts"): "online_",
    ("OnlineEnsembleRegressor", "update_experts"): "online_",
    # loss_bound='auto' is a running scale that changes with the stream (state): the last round's
    ("OnlineEnsembleClassifier", "loss_bound"): "loss_scale_",
    ("OnlineEnsembleRegressor", "loss_bound"): "loss_scale_",
    # GroupDRO's ``n_epochs_`` is the epochs a pooled fit ran; the resolved budget is another name
    ("GroupDROClassifier", "n_epochs"): "epoch_budget_",
    ("GroupDRORegressor", "n_epochs"): "epoch_budget_",
}


def _auto_params(est):
    return [k for k, v in est.get_params(deep=False).items() if isinstance(v, str) and v == "auto"]


def _documented_attributes(cls):
    """Names listed in the class docstring's *Attributes* section."""
    doc = inspect.getdoc(cls) or ""
    m = re.search(r"^Attributes\n-+\n(.*?)(?=^\S[^\n]*\n-+\n|\Z)", doc, flags=re.S | re.M)
    if m is None:
        return set()
    return set(re.findall(r"^(\w+)\s*:", m.group(1), flags=re.M))


def _fitted(est):
    X, y, kw = ti.test_stream(est, np.random.default_rng(0), n_samples=60)
    est = clone(est)
    if hasattr(est, "partial_fit"):
        est.partial_fit(X, y, **kw)
    else:
        est.fit(X, y, **kw)
    return est


#: every parameter set the shared checks use (``ti.test_params``: the defaults unless a family
#: registers more), where some parameter is 'auto'
AUTO_INSTANCES = [(n, cls(**params)) for n, cls in ESTIMATORS for params in ti.test_params(cls)]
AUTO_INSTANCES = [(n, est) for n, est in AUTO_INSTANCES if _auto_params(est)]


@pytest.mark.parametrize("name, est", AUTO_INSTANCES, ids=[n for n, _ in AUTO_INSTANCES])
def test_auto_parameters_resolved_into_documented_attributes(name, est):
    est = _fitted(est)
    documented = _documented_attributes(type(est))
    problems = []
    for param in _auto_params(est):
        attr = ALIASES.get((name, param), param + "_")
        if not hasattr(est, attr):  # an attribute, or a property over the state (the last round's)
            problems.append(f"{param}: no fitted attribute {attr}")
            continue
        value = getattr(est, attr)
        if isinstance(value, str) and value == "auto":
            problems.append(f"{param}: {attr} is still 'auto'")
        if attr not in documented:
            problems.append(f"{param}: {attr} not in the Attributes section")
    assert not problems, f"{name}: " + "; ".join(problems)


def test_aliases_are_used():
    """Every alias names an estimator and an 'auto' parameter that exist (no stale entries)."""
    autos = {(n, p) for n, est in AUTO_INSTANCES for p in _auto_params(est)}
    for key in ALIASES:
        assert key in autos, key
