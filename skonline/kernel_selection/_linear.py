"""The linear component of the kernel-selection estimators (``linear``; compiled, row by row).

A linear model ``b + w . x`` per head, learned online on its own loss by normalised gradient
steps (the step on row x is ``lr / (1 + ||x||^2)`` times the gradient, as in normalised LMS: the
change of the row's own prediction is lr times the loss derivative, whatever the number and scale
of the features). It does not depend on the kernels, so the estimator runs it over a chunk first;
its prequential prediction for each row (before the row is learned) is the offset the kernel
hypotheses add to (:class:`._core.Rounds`), so they learn what the linear model leaves. Row by row
in a fixed order: any chunking gives the same state.
"""


from ..losses import loss_and_derivative
from ..utils._jit import njit


@njit
def linear_pass_dense(X, y, weight, loss, lr, W, b, offset):
    """offset[r] = b + W x_r (before row r), then one normalised gradient step on row r's loss.

    ``loss`` is the loss's record (:meth:`skonline.losses.Loss.record`).
    """
    n, d = X.shape
    for r in range(n):
        norm2 = 1.0  # ||(1, x)||^2: the intercept's unit feature and the row's
        for j in range(d):
            norm2 += X[r, j] * X[r, j]
        for h in range(W.shape[0]):
            acc = b[h]
            for j in range(d):
                acc += W[h, j] * X[r, j]
            offset[r, h] = acc
            g = lr * weight[r] * loss_and_derivative(loss, y[r, h], acc)[1] / norm2
            if g != 0.0:
                for j in range(d):
                    W[h, j] -= g * X[r, j]
                b[h] -= g


@njit
def linear_pass_csr(data, indices, indptr, y, weight, loss, lr, W, b, offset):
    """:func:`linear_pass_dense` for CSR rows (entries in stored order)."""
    for r in range(indptr.shape[0] - 1):
        start, end = indptr[r], indptr[r + 1]
        norm2 = 1.0
        for jj in range(start, end):
            norm2 += data[jj] * data[jj]
        for h in range(W.shape[0]):
            acc = b[h]
            for jj in range(start, end):
                acc += W[h, indices[jj]] * data[jj]
            offset[r, h] = acc
            g = lr * weight[r] * loss_and_derivative(loss, y[r, h], acc)[1] / norm2
            if g != 0.0:
                for jj in range(start, end):
                    W[h, indices[jj]] -= g * data[jj]
                b[h] -= g
