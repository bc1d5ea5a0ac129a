"""Group distributionally robust learning by stochastic approximation (Zhang et al.).

Linear models trained to minimise the worst group risk, a weighted worst risk for imbalanced
groups, or the average of the k largest group risks, with the paper's stochastic mirror descent,
bandit (Exp3-IX, DepRound) and mirror-prox methods.
"""

from ._gdro import GroupDROClassifier, GroupDRORegressor

__all__ = ["GroupDROClassifier", "GroupDRORegressor"]
