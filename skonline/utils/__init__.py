"""Shared utilities: estimator discovery, numerics shared across families."""

from ._discovery import all_estimators
from ._projections import project_clipped_simplex, project_clipped_spectraplex

__all__ = ["all_estimators", "project_clipped_simplex", "project_clipped_spectraplex"]

from ._bandit import exp_weights, mix_uniform, sample_index, tsallis_omd_step  # noqa: E402
from ._trig import sincos_buffer  # noqa: E402

__all__ += ["exp_weights", "mix_uniform", "sample_index", "sincos_buffer", "tsallis_omd_step"]

from ._capped_simplex import depround, kl_project_capped_simplex  # noqa: E402

__all__ += ["depround", "kl_project_capped_simplex"]
