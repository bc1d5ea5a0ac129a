"""The online standardisation an estimator applies to its features and its regression target.

Estimators with a ``standardize`` parameter (kernel selection, PKAWV, GroupDRO, ...) learn on
features standardised with running statistics: row ``t`` with the mean and variance of the rows
before it, clipped (:mod:`skonline.utils._scaling`), so the model is the same for any chunking;
regressors that standardise their target (``_standardizes_target``) predict in standardised units
and map back. The statistics are learned state of the estimator (``_x_mean_``, ``_x_m2_``,
``_y_mean_``, ``_y_m2_``), copied and committed with the rest of it (:mod:`skonline._atomic`).

:class:`OnlineStandardizationMixin` is mixed into :class:`skonline.base.OnlineMixin`; the driver
calls ``_init_standardization`` on a reset, ``_standardize_chunk`` on every validated chunk and
``_unstandardize_pass`` on the pass's outputs; prediction uses ``_predict_output``.
"""

import numpy as np

from .utils import _scaling
from .utils._math import running_sum
from .utils.validation import readonly

__all__ = ["OnlineStandardizationMixin"]


class OnlineStandardizationMixin:
    """Online standardisation of features and target (see the module docstring)."""

    #: clip of the internal standardisation, in running standard deviations (features, target)
    _standardize_clip = 5.0
    #: rows the internal standardisation needs before it scales a feature (before: 0)
    _standardize_min_count = _scaling.MIN_COUNT
    _standardize_target_clip = 10.0

    def _standardizes(self):
        """Whether this estimator standardises its features online (its ``standardize`` parameter)."""
        return bool(getattr(self, "standardize", False))

    def _standardizes_target(self):
        return False

    def _init_standardization(self, chunk):
        if self._standardizes():
            d = chunk.X.shape[1]
            self._x_mean_ = np.zeros(d)
            self._x_m2_ = np.zeros(d)
        if self._standardizes_target():
            self._y_mean_ = np.zeros(1)
            self._y_m2_ = np.zeros(1)

    def _standardize_chunk(self, chunk):
        """Standardise a validated chunk's features (and regression target) with running
        statistics, row ``t`` with those of rows ``< t`` (see :mod:`skonline.utils._scaling`).

        A batch chunk (``chunk.batch``: GroupDRO's pooled ``fit``) is standardised with the
        statistics of all its rows instead, which is what the fitted model is then used with.
        """
        if not (self._standardizes() or self._standardizes_target()):
            return chunk
        chunk = chunk.replace()
        if self._standardizes():
            X = chunk.X
            count = np.array([float(self.n_samples_seen_)])
            clip = float(self._standardize_clip)
            mc = float(self._standardize_min_count)
            Z = _scaling.learn_transform(X, count, self._x_mean_, self._x_m2_, clip, min_count=mc)
            if chunk.batch:
                Z = _scaling.frozen_transform(X, count, self._x_mean_, self._x_m2_, clip, min_count=mc)
            chunk.X = readonly(Z)
        if self._standardizes_target():
            y = chunk.y
            count = np.array([float(self.n_samples_seen_)])
            tclip = float(self._standardize_target_clip)
            z, shift, scale = _scaling.standardize_target(y, count, self._y_mean_, self._y_m2_, tclip)
            if chunk.batch:
                shift[:], scale[:] = self._target_stats(count[0])
                with np.errstate(divide="ignore", invalid="ignore"):
                    z = np.clip(np.where(scale > 0, (y - shift) / np.where(scale > 0, scale, 1.0), 0.0),
                                -tclip, tclip)
            chunk.y_raw = y
            chunk.y = z
            chunk.y_shift = shift
            chunk.y_scale = scale
            self._restandardize_targets(chunk)
        return chunk

    def _restandardize_targets(self, chunk):
        """Hook: refresh target-derived entries of a chunk after the target was standardised."""

    def _target_stats(self, count=None):
        """Current target mean and standard deviation (0 while there is no spread); ``count``:
        the number of targets in the statistics (default: the rows seen)."""
        c = float(self.n_samples_seen_ if count is None else count)
        mean = float(self._y_mean_[0])
        std = float(np.sqrt(self._y_m2_[0] / c)) if c >= _scaling.MIN_COUNT else 0.0
        return mean, std

    def _unstandardize_pass(self, chunk, raw, loss0):
        """Map a pass's standardised predictions back to target units; recount the prequential
        loss (which the pass accumulated in standardised units) in target units from ``loss0``."""
        shift, scale = chunk.y_shift, chunk.y_scale
        raw = np.asarray(raw)
        if raw.ndim == 2:
            raw = raw * scale[:, None] + shift[:, None]
            pred = raw[:, 0]
        else:
            raw = raw * scale + shift
            pred = raw
        if chunk.batch:  # a batch fit reports the loss of the fitted model
            loss0 = 0.0
        vals = self._prequential_loss(chunk.y_raw, pred)
        if chunk.sample_weight is not None:  # the passes weigh their losses
            vals = vals * chunk.sample_weight
        self.cumulative_loss_ = running_sum(loss0, vals)
        return raw

    def _predict_output(self, pred):
        """Map predictions made in standardised target units back to target units."""
        if self._standardizes_target() and hasattr(self, "_y_mean_"):
            mean, std = self._target_stats()
            return pred * std + mean
        return pred
