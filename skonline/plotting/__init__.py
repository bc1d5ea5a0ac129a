"""Matplotlib plots of online learners (optional dependency: ``pip install skonline[plot]``).

matplotlib is imported inside the functions only, never when skonline is imported.
"""

from ._experts import plot_cumulative_losses, plot_regret, plot_weights

__all__ = ["plot_weights", "plot_cumulative_losses", "plot_regret"]
