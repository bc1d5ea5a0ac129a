"""Shared utilities: estimator discovery, numerics shared across families."""

from ._discovery import all_estimators

__all__ = ["all_estimators"]
