"""Compiled pieces of the online ensembles' aggregation step (losses, scaling, mixing).

Row by row, in order, so that the running loss scale and the accumulated losses do not depend on
how the stream is chunked. A NaN prediction (asleep expert) gives a NaN loss. The passes take a
:class:`LossSettings` record (fixed for the chunk) and a :class:`LossState` record (updated in
place).
"""

import math
from typing import NamedTuple

import numpy as np

from ..utils._jit import njit

SQUARED = 0
ABSOLUTE = 1
PINBALL = 2
LOG_LOSS = 3
ZERO_ONE = 4
BRIER = 5

EPS_PROBA = 1e-15


#: a target beyond the range of the targets seen by more than this many times the range widens it
#: only that far (robust loss scale and prediction clipping; see regression_losses)
RANGE_GROWTH = 10.0
#: targets seen before that rule applies (the range of the first few targets says little)
RANGE_WARMUP = 10.0


class LossSettings(NamedTuple):
    """How the experts' losses are computed and mapped to [0, 1], fixed for the chunk.

    loss : int
        The loss code (``SQUARED``, ``ABSOLUTE``, ``PINBALL``; ``LOG_LOSS``, ``ZERO_ONE``, ``BRIER``).
    quantile : float
        Level q of the pinball loss.
    auto : bool
        ``loss_bound='auto'``: each row's scale comes from the targets (or losses) seen so far.
    inv_bound : float
        ``1 / loss_bound`` otherwise.
    clip : bool
        Regression: clip each prediction to the range of the targets seen before its row.
    """

    loss: int
    quantile: float
    auto: bool
    inv_bound: float
    clip: bool


class LossState(NamedTuple):
    """The running loss scale, updated in place row by row.

    scale : (1,) the scale B of the last row (``loss_scale_``); y_min, y_max : (1,) the range of the
    targets seen (regression; +inf and -inf before the first); n_wild : (1,) rows whose target lay
    more than RANGE_GROWTH times the range outside it (after RANGE_WARMUP targets); n_targets : (1,)
    targets seen (regression); expert_cum_losses : (K,) each expert's cumulative raw loss.
    """

    scale: np.ndarray
    y_min: np.ndarray
    y_max: np.ndarray
    n_wild: np.ndarray
    n_targets: np.ndarray
    expert_cum_losses: np.ndarray


@njit
def regression_losses(P, y, settings, state, LR, Ls):
    """Raw losses ``LR`` (n, K) of the predictions ``P`` and their scaled version ``Ls``.

    ``settings.auto``: the scale of row t is the loss of a prediction off by the range of the
    targets seen so far (row t included): ``range^2`` (squared), ``range`` (absolute),
    ``max(q, 1 - q) range`` (pinball). Losses above the scale are clipped to 1, so one diverging
    expert cannot squash the others' losses to 0. Until the range is positive the scale is the
    largest loss seen. With ``settings.clip``, the predictions of row t are first clipped (in
    place) to the range of the targets *before* row t. Returns the number of rows where every
    expert is asleep.
    """
    n, K = P.shape
    code, q, auto, inv_bound, clip = settings.loss, settings.quantile, settings.auto, settings.inv_bound, settings.clip
    ecum = state.expert_cum_losses
    scale = state.scale[0]
    ylo = state.y_min[0]
    yhi = state.y_max[0]
    qq = q if q > 1.0 - q else 1.0 - q
    n_none = 0
    for r in range(n):
        yt = y[r]
        if clip and ylo <= yhi:
            for i in range(K):
                f = P[r, i]
                if f < ylo:
                    P[r, i] = ylo
                elif f > yhi:
                    P[r, i] = yhi
        # the range grows with each target, but by at most RANGE_GROWTH times itself per row: one
        # absurd target cannot stretch it (and squash every later loss to 0) for good, while a
        # genuine change of scale is followed geometrically; such a row is counted in n_wild
        yr = yt
        state.n_targets[0] += 1.0
        if ylo < yhi and state.n_targets[0] > RANGE_WARMUP:
            span = RANGE_GROWTH * (yhi - ylo)
            if yr > yhi + span:
                yr = yhi + span
                state.n_wild[0] += 1.0
            elif yr < ylo - span:
                yr = ylo - span
                state.n_wild[0] += 1.0
        if yr < ylo:
            ylo = yr
        if yr > yhi:
            yhi = yr
        awake = 0
        for i in range(K):
            f = P[r, i]
            if f != f:
                LR[r, i] = math.nan
                continue
            awake += 1
            d = f - yt
            if code == SQUARED:
                v = d * d
            elif code == ABSOLUTE:
                v = abs(d)
            else:  # pinball on the residual y - f
                e = -d
                v = q * e if e >= 0.0 else (q - 1.0) * e
            LR[r, i] = v
            ecum[i] += v
        n_none += awake == 0
        # scale the row into [0, 1] (written out: helpers taking arrays are slow in this loop)
        if auto:
            rng = yhi - ylo
            if rng > 0.0:
                scale = rng * rng if code == SQUARED else (rng if code == ABSOLUTE else qq * rng)
            else:
                for i in range(K):
                    x = LR[r, i]
                    if x == x and x > scale:
                        scale = x
            inv = 1.0 / scale if scale > 0.0 else 1.0
        else:
            inv = inv_bound
        for i in range(K):
            v = LR[r, i] * inv
            Ls[r, i] = 1.0 if v > 1.0 else v  # NaN stays NaN
    state.scale[0] = scale
    state.y_min[0] = ylo
    state.y_max[0] = yhi
    return n_none


@njit
def classification_losses(P, yi, settings, state, LR, Ls):
    """Raw and scaled losses of the experts' class probabilities ``P`` (n, K, C); see above (the
    targets' range is not used)."""
    n, K, C = P.shape
    code, auto, inv_bound = settings.loss, settings.auto, settings.inv_bound
    ecum = state.expert_cum_losses
    scale = state.scale[0]
    n_none = 0
    for r in range(n):
        c = yi[r]
        awake = 0
        for i in range(K):
            py = P[r, i, c]
            if py != py:
                LR[r, i] = math.nan
                continue
            awake += 1
            if code == LOG_LOSS:
                v = -math.log(py if py > EPS_PROBA else EPS_PROBA)
            elif code == ZERO_ONE:
                best = 0
                for j in range(1, C):
                    if P[r, i, j] > P[r, i, best]:
                        best = j
                v = 0.0 if best == c else 1.0
            else:
                v = 0.0
                for j in range(C):
                    e = P[r, i, j] - (1.0 if j == c else 0.0)
                    v += e * e
            LR[r, i] = v
            ecum[i] += v
        n_none += awake == 0
        # scale the row into [0, 1] (written out: helpers taking arrays are slow in this loop)
        if auto:
            if code == ZERO_ONE:
                scale = 1.0
            elif code == BRIER:
                scale = 2.0
            else:  # log loss: the largest loss seen (at most log(1e15))
                for i in range(K):
                    x = LR[r, i]
                    if x == x and x > scale:
                        scale = x
            inv = 1.0 / scale if scale > 0.0 else 1.0
        else:
            inv = inv_bound
        for i in range(K):
            v = LR[r, i] * inv
            Ls[r, i] = 1.0 if v > 1.0 else v  # NaN stays NaN
    state.scale[0] = scale
    return n_none


@njit
def mix_regression(P, W, out):
    """``out[r] = sum_i W[r, i] P[r, i]`` over the experts with a prediction."""
    n, K = P.shape
    for r in range(n):
        s = 0.0
        for i in range(K):
            f = P[r, i]
            if f == f:
                s += W[r, i] * f
        out[r] = s


@njit
def mix_classification(P, W, out):
    """``out[r] = sum_i W[r, i] P[r, i, :]`` over the experts with probabilities."""
    n, K, C = P.shape
    for r in range(n):
        for j in range(C):
            out[r, j] = 0.0
        for i in range(K):
            if P[r, i, 0] == P[r, i, 0]:
                wi = W[r, i]
                for j in range(C):
                    out[r, j] += wi * P[r, i, j]
