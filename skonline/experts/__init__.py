"""Expert aggregation and tracking the best expert.

Aggregation rules fed loss matrices (one row per round, one column per expert): the classic rules
(:class:`Hedge`, :class:`FixedShare`), the adaptive clipped-simplex rules of Lu & Zhang
(:class:`ClippedHedge`, :class:`PCS`, :class:`OCS`, :class:`OCSPlus`), the parameter-free rules
(:class:`MLPoly`, :class:`BOA`, :class:`AdaHedge`), online matrix prediction (:class:`PCSP`), and
meta-estimators that aggregate scikit-learn models online (:class:`OnlineEnsembleRegressor`,
:class:`OnlineEnsembleClassifier`).
"""

from ._ensemble import OnlineEnsembleClassifier, OnlineEnsembleRegressor, default_estimators
from ._matrix import PCSP
from ._rules import (
    BOA,
    OCS,
    PCS,
    AdaHedge,
    ClippedHedge,
    FixedShare,
    Hedge,
    MLPoly,
    OCSPlus,
)

__all__ = [
    "Hedge",
    "FixedShare",
    "ClippedHedge",
    "PCS",
    "OCS",
    "OCSPlus",
    "MLPoly",
    "BOA",
    "AdaHedge",
    "PCSP",
    "OnlineEnsembleRegressor",
    "OnlineEnsembleClassifier",
    "default_estimators",
]
