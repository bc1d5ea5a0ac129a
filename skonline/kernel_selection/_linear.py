"""The linear component of the kernel-selection estimators (``linear``; compiled, row by row).

A linear model ``b + w . x`` per head, learned online on its own loss by normalised gradient
steps (the step on row x is ``lr / (1 + ||x||^2)`` times the gradient, as in normalised LMS: the
change of the row's own prediction is lr times the loss derivative, whatever the number and scale
of the features). It does not depend on the kernels, so the
estimator runs it over a chunk first; its prequential prediction for each row (before the row is
learned) is the offset the kernel hypotheses add to (:class:`._core.Rounds`), so they learn what
the linear model leaves. Row by row in a fixed order: any chunking gives the same state.
"""

import numba
import numpy as np

from ..losses import loss_derivative


@numba.njit(cache=True)
def _linear_row(vals, cols, r, y, weight, loss, mult, lr, W, b, offset):
    norm2 = 1.0  # ||(1, x)||^2: the intercept's unit feature and the row's
    for jj in range(vals.shape[0]):
        norm2 += vals[jj] * vals[jj]
    for h in range(W.shape[0]):
        acc = b[h]
        for jj in range(vals.shape[0]):
            acc += W[h, cols[jj]] * vals[jj]
        offset[r, h] = acc
        g = lr * mult * weight * loss_derivative(loss, y[r, h], acc, 0.0) / norm2
        if g != 0.0:
            for jj in range(vals.shape[0]):
                W[h, cols[jj]] -= g * vals[jj]
            b[h] -= g


@numba.njit(cache=True)
def linear_pass_dense(X, y, weight, loss, mult, lr, W, b, offset):
    """offset[r] = b + W x_r (before row r), then one normalised gradient step on row r's loss."""
    cols = np.arange(X.shape[1])
    for r in range(X.shape[0]):
        _linear_row(X[r], cols, r, y, weight[r], loss, mult, lr, W, b, offset)


@numba.njit(cache=True)
def linear_pass_csr(data, indices, indptr, y, weight, loss, mult, lr, W, b, offset):
    """:func:`linear_pass_dense` for CSR rows (entries in stored order)."""
    for r in range(indptr.shape[0] - 1):
        a, e = indptr[r], indptr[r + 1]
        _linear_row(data[a:e], indices[a:e], r, y, weight[r], loss, mult, lr, W, b, offset)
