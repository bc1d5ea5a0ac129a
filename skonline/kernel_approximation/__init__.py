"""Explicit feature maps of kernels: random Fourier, Taylor and online Nyström features."""

__all__ = []

from ._nystroem import OnlineNystroem  # noqa: E402
from ._taylor import TaylorFeatures  # noqa: E402

__all__ += ["OnlineNystroem", "TaylorFeatures"]

from ._random_fourier import MultiBandwidthFourierFeatures, RandomFourierFeatures  # noqa: E402

__all__ += ["MultiBandwidthFourierFeatures", "RandomFourierFeatures"]
