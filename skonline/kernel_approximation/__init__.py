"""Explicit feature maps of kernels: random Fourier, Taylor and online Nyström features."""

__all__ = []
