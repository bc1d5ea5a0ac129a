"""Online kernel ridge regression: the AWV forecaster, exact Kernel-AWV and projected PKAWV.

Jézéquel, Gaillard & Rudi, "Efficient online learning with kernels for adversarial large scale
problems", NeurIPS 2019.
"""

from ._awv import AWVRegressor
from ._kernel_awv import KernelAWVRegressor
from ._pkawv import PKAWVClassifier, PKAWVRegressor

__all__ = ["AWVRegressor", "KernelAWVRegressor", "PKAWVClassifier", "PKAWVRegressor"]
