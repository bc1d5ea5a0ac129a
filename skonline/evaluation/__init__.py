"""Online evaluation: progressive (prequential) validation, regret comparators."""

from ._progressive import prequential_predictions, progressive_validation
from ._regret import (
    best_switching_sequence,
    interval_regret,
    learner_losses,
    path_length,
    static_regret,
    tracking_regret,
)

__all__ = [
    "progressive_validation",
    "prequential_predictions",
    "learner_losses",
    "static_regret",
    "best_switching_sequence",
    "tracking_regret",
    "interval_regret",
    "path_length",
]
