"""Group distributionally robust learning by stochastic approximation (Zhang et al.).

Linear models trained to minimise the worst group risk, a weighted worst risk for imbalanced
groups, or the average of the k largest group risks, with the paper's stochastic mirror descent,
bandit (Exp3-IX, DepRound) and mirror-prox methods; and a worst-group scorer for selecting them
(:func:`make_worst_group_scorer`).
"""

from ._gdro import GroupDROClassifier, GroupDRORegressor
from ._scoring import make_worst_group_scorer, worst_group_score

__all__ = ["GroupDROClassifier", "GroupDRORegressor", "make_worst_group_scorer", "worst_group_score"]
