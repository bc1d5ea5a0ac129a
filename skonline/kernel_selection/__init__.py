"""Online kernel selection under bandit feedback (Li & Liao, ECML-PKDD 2022).

:class:`KernelSelectionClassifier` and :class:`KernelSelectionRegressor` run OKS, OKS++ or IOKS
(``algorithm=``) with exact Gaussian-kernel expansions or random Fourier features
(``n_components=``); :class:`OnlineKernelSelector` selects the bandwidth online and transforms
with the selected kernel's random features, in front of any estimator.
"""

from ._kernel_selection import KernelSelectionClassifier, KernelSelectionRegressor
from ._selector import OnlineKernelSelector

__all__ = ["KernelSelectionClassifier", "KernelSelectionRegressor", "OnlineKernelSelector"]
