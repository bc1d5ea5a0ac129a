"""The papers' settings as defaults, for the tests that check an algorithm against its paper.

skonline's defaults are chosen for data as users have it (online standardisation, bandwidths
relative to the number of features, ...; see ``benchmarks/defaults.py``). The papers' algorithms
stay reachable through explicit parameter values, and the tests that check an algorithm against
its paper (golden values, exact references, theorems) run it with those values. Rather than repeat
``standardize=False, sigma=1.0, ...`` in every constructor call, such a test module declares

    pytestmark = pytest.mark.usefixtures("paper_settings")

and the ``paper_settings`` fixture (tests/conftest.py) makes these values the defaults for the
duration of each test. ``get_params``, ``clone`` and pickling see ordinary parameter values.
"""

import contextlib

#: estimator class name -> {parameter: the paper's value}
PAPER_SETTINGS = {
    "AWVRegressor": {"standardize": False, "forgetting": 1.0},
    "KernelAWVRegressor": {"standardize": False, "sigma": 1.0, "max_rows": None},
    "PKAWVRegressor": {"standardize": False, "sigma": 1.0, "features": "taylor", "forgetting": 1.0, "alpha": 1.0,
                       "max_components": None, "max_history": None},
    "PKAWVClassifier": {"standardize": False, "sigma": 1.0, "features": "taylor", "forgetting": 1.0, "alpha": 1.0,
                        "max_components": None, "max_history": None},
    "KernelSelectionClassifier": {"standardize": False, "sigmas": (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
                                  "predict_mode": "sampled", "n_components": None, "feedback": "bandit"},
    "KernelSelectionRegressor": {"standardize": False, "sigmas": (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),
                                 "predict_mode": "sampled", "n_components": None, "feedback": "bandit"},
    "ScaleInvariantClassifier": {"invariance": "coordinate"},
    "ScaleInvariantRegressor": {"invariance": "coordinate", "standardize": False},
    # tol=None: fit runs the paper's horizon (one epoch, or n_epochs / max_iter) with fixed steps
    "GroupDROClassifier": {"standardize": False, "average": True, "tol": None},
    "GroupDRORegressor": {"standardize": False, "average": True, "tol": None},
}


@contextlib.contextmanager
def paper_defaults():
    """Temporarily make the papers' settings the constructors' defaults."""
    from skonline.utils import all_estimators

    classes = dict(all_estimators())
    saved = []
    try:
        for name, values in PAPER_SETTINGS.items():
            init = classes[name].__init__
            saved.append((init, init.__defaults__, dict(init.__kwdefaults__ or {})))
            kw = dict(init.__kwdefaults__ or {})
            pos = list(init.__defaults__ or ())
            code = init.__code__
            n_pos = code.co_argcount
            pos_names = code.co_varnames[n_pos - len(pos):n_pos]
            for key, value in values.items():
                if key in kw:
                    kw[key] = value
                elif key in pos_names:
                    pos[pos_names.index(key)] = value
                else:  # pragma: no cover - a renamed parameter
                    raise KeyError(f"{name} has no parameter {key!r}")
            init.__kwdefaults__ = kw
            init.__defaults__ = tuple(pos)
        yield
    finally:
        for init, defaults, kwdefaults in saved:
            init.__defaults__ = defaults
            init.__kwdefaults__ = kwdefaults
