"""Scale-invariant unconstrained online linear learners (Kotłowski, ALT 2017)."""

from ._scale_invariant import ScaleInvariantClassifier, ScaleInvariantRegressor

__all__ = ["ScaleInvariantClassifier", "ScaleInvariantRegressor"]
