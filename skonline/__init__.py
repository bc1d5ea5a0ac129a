"""skonline: online learning algorithms from the research literature, as scikit-learn estimators.

Families live in subpackages and are imported from there::

    from skonline.linear_model import ScaleInvariantClassifier

Nothing heavy (and nothing optional) is imported at package import time: the subpackages listed in
``__all__`` are imported on first access (``skonline.experts`` works after ``import skonline``).
"""

import importlib

__version__ = "0.1.0.dev0"

__all__ = [
    "compose",
    "datasets",
    "dro",
    "evaluation",
    "exceptions",
    "experts",
    "kernel_approximation",
    "kernel_ridge",
    "kernel_selection",
    "linear_model",
    "losses",
    "pipeline",
    "plotting",
    "preprocessing",
    "utils",
]


def __getattr__(name):
    # lazy subpackages (PEP 562): imported on first access, then cached in the module's globals
    if name in __all__:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
