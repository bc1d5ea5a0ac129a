"""Online calibration of decision values into class probabilities (temperature scaling, learned
prequentially).

A classifier whose loss gives no probabilities (PKAWV's square loss on +-1 targets, a hinge loss)
still ranks the classes by its decision values ``d``. Its probabilities are

* binary (one head): ``p(classes_[1]) = sigmoid(a d / s)``;
* one-vs-rest heads: ``p(k) = softmax_k(a d_k / s)``;

with ``s`` the root mean square of the decision values of the rows seen (so that ``a`` does not
depend on the scale of the decisions) and ``a > 0`` a temperature fitted online to the log loss
by a Newton step per row with the accumulated curvature (``a <- a - g / (1 + H)``, ``H`` the
sum of the rows' curvatures, discounted by ``FORGET`` per row; a row of sample weight ``w``
counts ``w`` times, so a row of weight 0 changes nothing). A positive temperature is a
strictly increasing map of each decision, so the most probable class is always the predicted one
(``argmax(predict_proba) == predict``) and binary probabilities rank rows as the decisions do.

Row ``t`` is calibrated with the state after rows ``< t`` and then updates it, in one compiled
pass over the rows in order: the prequential probabilities (``partial_fit_predict_proba``) are
honest and do not depend on how the stream is chunked.
"""

import math
from typing import NamedTuple

import numpy as np

from ._jit import compiled_only, njit

#: the temperature before any row (on decisions scaled to unit root mean square)
A_INIT = 1.0
#: the temperature stays in [A_MIN, A_MAX]: positive (order-preserving), and at most a logit of
#: A_MAX times the decision's root mean square
A_MIN = 1e-2
A_MAX = 10.0
#: discount of the accumulated curvature per row (an effective memory of about 1,000 rows, so that
#: the temperature follows a model that keeps learning)
FORGET = 0.999
#: prior curvature (the step of the first rows is at most the gradient)
PRIOR = 1.0


class CalibrationState(NamedTuple):
    """The calibrator's state, updated in place row by row (each field of shape (1,)).

    temperature : the temperature ``a``; curvature : the discounted sum of the rows' curvatures of
    the log loss in ``a``; score_sq : the sum of the squared decision values seen (mean over
    heads per row); count : the rows seen. Each row counts with its sample weight (a row of weight
    0 changes nothing, one of weight 2 counts as two).
    """

    temperature: np.ndarray
    curvature: np.ndarray
    score_sq: np.ndarray
    count: np.ndarray


def _record(values):
    """The :class:`CalibrationState` over the estimator's state array (views: updated in place)."""
    return CalibrationState(values[0:1], values[1:2], values[2:3], values[3:4])


def learn(est, dec, chunk):
    """Calibrate a chunk's prequential decision values ``dec`` (n, H) of a classifier and learn from
    its labels (``chunk.y_index``, weighted by ``chunk.sample_weight`` when present); return
    the decisions and the prequential probabilities side by side, (n, H + C).

    The calibrator's state is the estimator's private ``_calibration_`` (a float64 array of 4:
    the fields of :class:`CalibrationState`), created at the first chunk after a reset.
    """
    if not hasattr(est, "_calibration_"):
        est._calibration_ = np.array([A_INIT, 0.0, 0.0, 0.0])
    D = as_decisions(dec)
    n = D.shape[0]
    w = chunk.sample_weight
    w = np.ones(n) if w is None else np.ascontiguousarray(w, dtype=np.float64)
    out = np.empty((n, n_outputs(D.shape[1])))
    calibrate_pass(D, np.ascontiguousarray(chunk.y_index, dtype=np.int64), w, _record(est._calibration_), out)
    return np.hstack([D, out])


def predict(est, dec):
    """Probabilities of the decision values ``dec`` with the estimator's current calibrator (pure)."""
    D = as_decisions(dec)
    out = np.empty((D.shape[0], n_outputs(D.shape[1])))
    state = getattr(est, "_calibration_", None)
    values = np.array([A_INIT, 0.0, 0.0, 0.0]) if state is None else state.copy()
    calibrated(D, _record(values), out)
    return out


@compiled_only
def _probabilities(D, r, a, s, out):
    """Probabilities of row ``r`` of the decisions ``D`` into ``out[r]``: (scaled score z_k)."""
    H = D.shape[1]
    if H == 1:
        u = a * D[r, 0] / s
        # the logistic function without overflow
        p1 = 0.5 * (1.0 + math.tanh(0.5 * u))
        out[r, 0] = 1.0 - p1
        out[r, 1] = p1
        return
    m = -math.inf
    for k in range(H):
        u = a * D[r, k] / s
        if u > m:
            m = u
    tot = 0.0
    for k in range(H):
        e = math.exp(a * D[r, k] / s - m)
        out[r, k] = e
        tot += e
    for k in range(H):
        out[r, k] /= tot


@njit
def calibrate_pass(D, yi, sample_weight, state, out):
    """Prequential probabilities ``out`` (n, C) of the decisions ``D`` (n, H), learning the
    temperature from the labels ``yi`` (n,) (class indices) row by row."""
    n, H = D.shape
    a = state.temperature[0]
    curv = state.curvature[0]
    sq = state.score_sq[0]
    cnt = state.count[0]
    for r in range(n):
        s = math.sqrt(sq / cnt) if cnt > 0.0 and sq > 0.0 else 1.0
        _probabilities(D, r, a, s, out)
        w = sample_weight[r]
        if H == 1:
            z = D[r, 0] / s
            p1 = out[r, 1]
            g = (p1 - (1.0 if yi[r] == 1 else 0.0)) * z
            h = p1 * (1.0 - p1) * z * z
        else:
            mean = 0.0
            second = 0.0
            g = 0.0
            for k in range(H):
                z = D[r, k] / s
                pk = out[r, k]
                mean += pk * z
                second += pk * z * z
                g += (pk - (1.0 if yi[r] == k else 0.0)) * z
            h = second - mean * mean
            if h < 0.0:
                h = 0.0
        curv = (FORGET if w == 1.0 else FORGET ** w) * curv + w * h
        a -= w * g / (PRIOR + curv)
        if a < A_MIN:
            a = A_MIN
        elif a > A_MAX:
            a = A_MAX
        row_sq = 0.0
        for k in range(H):
            row_sq += D[r, k] * D[r, k]
        sq += w * row_sq / H
        cnt += w
    state.temperature[0] = a
    state.curvature[0] = curv
    state.score_sq[0] = sq
    state.count[0] = cnt


@njit
def calibrated(D, state, out):
    """Probabilities ``out`` (n, C) of the decisions ``D`` (n, H) with the current state (pure)."""
    cnt = state.count[0]
    sq = state.score_sq[0]
    s = math.sqrt(sq / cnt) if cnt > 0.0 and sq > 0.0 else 1.0
    a = state.temperature[0]
    for r in range(D.shape[0]):
        _probabilities(D, r, a, s, out)


def n_outputs(n_heads):
    """Number of probability columns for ``n_heads`` decision columns."""
    return 2 if n_heads == 1 else n_heads


def as_decisions(dec):
    """Decision values as a C-contiguous float64 (n, H) array."""
    dec = np.asarray(dec, dtype=np.float64)
    if dec.ndim == 1:
        dec = dec[:, None]
    return np.ascontiguousarray(dec)
