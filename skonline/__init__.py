"""skonline: online learning algorithms from the research literature, as scikit-learn estimators.

Families live in subpackages and are imported from there::

    from skonline.linear_model import ScaleInvariantClassifier

Nothing heavy (and nothing optional) is imported at package import time.
"""

__version__ = "0.1.0.dev0"

__all__ = [
    "datasets",
    "evaluation",
    "linear_model",
    "losses",
    "utils",
]
