"""Matplotlib plots of online learners (optional dependency: ``pip install skonline[plot]``).

matplotlib is imported inside the functions only, never when skonline is imported.
"""

from ._experts import plot_cumulative_losses, plot_regret, plot_weights
from ._streams import plot_group_risks, plot_kernel_probabilities, plot_progressive_loss

__all__ = [
    "plot_weights",
    "plot_cumulative_losses",
    "plot_regret",
    "plot_progressive_loss",
    "plot_kernel_probabilities",
    "plot_group_risks",
]
