"""The papers' settings, for the tests that check an algorithm against its paper.

skonline's defaults are chosen for data as users have it (online standardisation, bandwidths
relative to the number of features, ...; see ``benchmarks/defaults.py``). The papers' algorithms
stay reachable through explicit parameter values, and the tests that check an algorithm against
its paper (golden values, exact references, theorems) construct their estimators with those
values through :func:`paper`::

    from _paper import paper

    reg = paper(PKAWVRegressor, degree=3)   # PKAWVRegressor(degree=3, standardize=False, sigma=1.0, ...)

A plain ``PKAWVRegressor()`` in a test means skonline's defaults.
"""

import inspect

#: estimator class name -> {parameter: the paper's value}
PAPER_SETTINGS = {
    "AWVRegressor": {"standardize": False, "forgetting": 1.0},
    "KernelAWVRegressor": {"standardize": False, "sigma": 1.0, "max_rows": None},
    "PKAWVRegressor": {"standardize": False, "sigma": 1.0, "features": "taylor", "forgetting": 1.0, "alpha": 1.0,
                       "max_components": None, "max_history": None, "beta": 1.0},
    "PKAWVClassifier": {"standardize": False, "sigma": 1.0, "features": "taylor", "forgetting": 1.0, "alpha": 1.0,
                        "max_components": None, "max_history": None, "beta": 1.0},
    "KernelSelectionClassifier": {"standardize": False, "sigmas": (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
                                  "aggregation": "sampled", "n_components": None, "feedback": "bandit"},
    "KernelSelectionRegressor": {"standardize": False, "sigmas": (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
                                 "aggregation": "sampled", "n_components": None, "feedback": "bandit"},
    "ScaleInvariantClassifier": {"invariance": "coordinate"},
    "ScaleInvariantRegressor": {"invariance": "coordinate", "standardize": False},
    # tol=None: fit runs the paper's horizon (one epoch, or n_epochs / horizon) with fixed steps
    "GroupDROClassifier": {"standardize": False, "average": True, "tol": None},
    "GroupDRORegressor": {"standardize": False, "average": True, "tol": None},
}


def paper_settings(cls):
    """The paper's parameter values for ``cls`` (or the nearest base class listed above)."""
    for klass in cls.__mro__:
        if klass.__name__ in PAPER_SETTINGS:
            return dict(PAPER_SETTINGS[klass.__name__])
    raise KeyError(f"no paper settings for {cls.__name__}")


def paper(cls, *args, **kwargs):
    """``cls(*args, **kwargs)`` with the paper's values for every parameter not given."""
    bound = inspect.signature(cls).bind_partial(*args, **kwargs)
    settings = paper_settings(cls)
    missing = set(settings) - set(inspect.signature(cls).parameters)
    if missing:  # pragma: no cover - a renamed parameter
        raise KeyError(f"{cls.__name__} has no parameter {sorted(missing)}")
    for name, value in settings.items():
        bound.arguments.setdefault(name, value)
    return cls(*bound.args, **bound.kwargs)
