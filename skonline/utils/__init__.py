"""Shared utilities: estimator discovery, numerics shared across families."""

from ._discovery import all_estimators
from ._projections import project_clipped_simplex, project_clipped_spectraplex

__all__ = ["all_estimators", "project_clipped_simplex", "project_clipped_spectraplex"]
