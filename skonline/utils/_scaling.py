"""Compiled prequential passes of the online scalers.

Each pass walks the rows in order and, for row ``t``, first writes the row transformed with the
statistics of rows ``< t``, then (if ``learn``) updates the statistics with row ``t``. Chunking a
stream therefore gives the same output bit for bit.

Standardisation keeps, per column, the running mean and the running sum of squared deviations
(Welford). A value more than ``clip`` standard deviations from the running mean is *winsorised*
before it updates the statistics (it enters as ``mean +- clip * std``): one wild row moves the
variance by at most a factor ``1 + clip**2 / count`` instead of freezing every later row near 0,
while a genuine change of scale is still followed, geometrically fast. The transformed output is
clipped to ``[-clip, clip]`` as well. Before ``MIN_COUNT`` (10) rows have been seen a column has
no reliable scale and is output as 0 (a learner downstream would otherwise learn, for good, from
rows scaled by a two-row estimate); a column constant so far outputs 0 for the same value and
``+-clip`` for another. Targets follow the same rule: until 10 targets are seen the forecast is
their running mean. An estimator's internal standardisation can take a shorter feature warm-up
(``min_count``; the estimator's ``_standardize_min_count``: 5 for GroupDRO).

:class:`~skonline.preprocessing.OnlineStandardScaler` warms up for ``SCALER_MIN_COUNT`` (3) rows
only. Its output usually goes to an estimator that standardises again: every warm-up row reaches
that estimator's statistics as a row of exact zeros, so after 10 warm-up rows each column there
is "constant so far" at 0, the first real row is output as ``+-clip`` in every column, and the
next rows are scaled by a spread estimated mostly from zeros (on wine, with GroupDRO: every column
of row 10 clipped, and many values of the rows after it). Three zero
rows leave the downstream statistics almost intact; a 3-row scale is rough, but clipped, and the
downstream learner or standardiser sees it for a few rows only.
"""

import math

import numpy as np
import scipy.sparse as sp

from ._jit import njit

#: rows a column's statistics need before they scale anything (before: output 0)
MIN_COUNT = 10.0
#: the same for OnlineStandardScaler, whose warm-up zeros enter a downstream standardiser
SCALER_MIN_COUNT = 3.0

_NO_ROWS = np.empty(0)  # standardize_dense's shift and scale for feature columns


@njit
def standardize_dense(X, count, mean, m2, clip, with_mean, learn, out, shift, scale, min_count):
    """Prequential standardisation of dense rows ``X`` (n, d) into ``out`` (n, d).

    ``count`` is a length-1 float64 array (rows seen), ``mean`` and ``m2`` are (d,) arrays, all
    updated in place when ``learn``. With ``with_mean=False`` the output is ``x / s`` (the mean is
    still tracked for the scale). A target column (d = 1) also records, when ``shift`` and
    ``scale`` have n entries, the running mean and standard deviation before each row, and is
    output as 0 while it has no spread (:func:`standardize_target`); otherwise they are empty.
    One compiled pass serves features and targets (a regressor compiles it once). A column is
    output as 0 before ``min_count`` rows (the warm-up). Returns nothing.

    Per value: ``z = (x - mean) / s`` with ``s = sqrt(m2 / count)`` (``x / s`` without centring),
    clipped to ``[-clip, clip]``; a column without spread gives 0 for its constant (for 0 without
    centring) and ``+-clip`` otherwise. Then, when ``learn``, ``x`` (winsorised to ``mean +- clip
    s`` when ``s > 0``) enters the column's Welford statistics, unless they would overflow. (One
    flat loop: each helper numba inlines costs compile time of its own.)
    """
    n, d = X.shape
    target = shift.shape[0] > 0
    centre = target or with_mean
    c = count[0]
    for i in range(n):
        for j in range(d):
            x = X[i, j]
            mu = mean[j]
            m2j = m2[j]
            s = 0.0
            z = 0.0
            if c >= min_count:
                s = math.sqrt(m2j / c)
                ref = mu if centre else 0.0
                if s > 0.0:
                    z = (x - mu) / s if centre else x / s
                elif x == ref:
                    z = 0.0
                elif x > ref:
                    z = clip
                else:
                    z = -clip
                if z > clip:
                    z = clip
                elif z < -clip:
                    z = -clip
            if target:
                shift[i] = mu
                if s > 0.0:
                    scale[i] = s
                else:
                    scale[i] = 0.0
                    z = 0.0
            out[i, j] = z
            if learn:
                if s > 0.0:
                    lo = mu - clip * s
                    hi = mu + clip * s
                    if x < lo:
                        x = lo
                    elif x > hi:
                        x = hi
                delta = x - mu
                new_mu = mu + delta / (c + 1.0)
                new_m2 = m2j + delta * (x - new_mu)
                if math.isfinite(new_mu) and math.isfinite(new_m2):
                    mean[j] = new_mu
                    m2[j] = new_m2
                # else: the value would overflow the statistics; it enters as the mean (no change)
        if learn:
            c += 1.0
    count[0] = c


@njit
def scale_csr(indptr, indices, data, count, sumsq, clip, learn, out_data, min_count):
    """Prequential scaling of CSR rows without centring: ``x / sqrt(mean of squares)``.

    ``sumsq`` (d,) holds the running sum of squares (implicit zeros add nothing); ``count`` the
    rows seen. The structure of the rows is kept: only ``out_data`` (same length as ``data``) is
    written. Values beyond ``clip`` root-mean-squares are winsorised before they update ``sumsq``.
    """
    n = indptr.shape[0] - 1
    c = count[0]
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            x = data[p]
            if c >= min_count and sumsq[j] > 0.0:
                s = math.sqrt(sumsq[j] / c)
                z = x / s
                if z > clip:
                    z = clip
                elif z < -clip:
                    z = -clip
            else:
                s = 0.0
                z = 0.0
            out_data[p] = z
            if learn:
                xw = x
                if s > 0.0:
                    if xw > clip * s:
                        xw = clip * s
                    elif xw < -clip * s:
                        xw = -clip * s
                new = sumsq[j] + xw * xw
                if math.isfinite(new):
                    sumsq[j] = new
        if learn:
            c += 1.0
    count[0] = c


#: a stream with more features than this is wide (see :func:`as_stream_container`)
WIDE_FEATURES = 4096


def as_stream_container(X, wide_features=None):
    """The rows of a validated chunk in the container their width calls for, whatever the caller
    passed: dense (CSR densified) up to ``wide_features`` features, CSR (dense rows made sparse)
    beyond.

    :func:`learn_transform` and :func:`frozen_transform` centre and scale dense rows but only
    scale CSR rows (centring would fill them), so a standardising estimator that decided from
    the container would learn another model from the same rows given as CSR, and a stream mixing
    both would be standardised two ways. Normalising every chunk (and every ``predict`` input)
    with this function first makes the choice depend on the number of features only: narrow
    rows are centred and scaled, wide ones (where a dense row would be costly and mostly zeros)
    only scaled; the same rows then give the same model in either container, bit for bit.
    ``wide_features``: default ``WIDE_FEATURES``.
    """
    if X.shape[1] > (WIDE_FEATURES if wide_features is None else wide_features):
        return X if sp.issparse(X) else sp.csr_matrix(X)
    return _readonly_c(X.toarray()) if sp.issparse(X) else X


#: a block of CSR rows densified for a dense algorithm holds at most this many bytes
DENSIFY_BYTES = 1 << 22


def dense_block_rows(n_features, max_bytes=None):
    """Rows of ``n_features`` float64 values that fit in ``max_bytes`` (default ``DENSIFY_BYTES``;
    at least 1)."""
    max_bytes = DENSIFY_BYTES if max_bytes is None else max_bytes
    return max(1, int(max_bytes) // (8 * max(int(n_features), 1)))


def dense_rows(X):
    """Validated rows as a read-only C-ordered float64 array (CSR densified: the same values as
    the dense rows, bit for bit)."""
    return _readonly_c(X.toarray() if sp.issparse(X) else X)


def dense_row_blocks(X, max_bytes=None):
    """``(a, b, rows a:b of X as dense rows)`` over ``X``: one block for dense ``X``; blocks of at
    most ``max_bytes`` for CSR ``X`` (for a dense computation that is row by row)."""
    n = X.shape[0]
    step = dense_block_rows(X.shape[1], max_bytes) if sp.issparse(X) else max(n, 1)
    for a in range(0, n, step):
        b = min(n, a + step)
        yield a, b, dense_rows(X if b - a == n else X[a:b])


def _readonly_c(X):
    """``X`` as a read-only C-ordered float64 view (a copy only if the layout or dtype differs):
    features, targets and frozen transforms then share one compiled specialisation."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.flags.writeable:
        X = X.view()
        X.flags.writeable = False
    return X


def standardize_target(y, count, mean, m2, clip):
    """Prequential standardisation of a target column.

    Returns ``(z, shift, scale)`` with ``z[t] = (y[t] - shift[t]) / scale[t]`` clipped to
    ``[-clip, clip]``, where ``shift[t]`` and ``scale[t]`` are the running mean and standard
    deviation of the targets before row ``t``. A prediction ``p`` made in standardised units maps
    back as ``p * scale[t] + shift[t]``. While the targets have no spread yet (fewer than two, or
    all equal) ``scale[t]`` is 0 and ``z[t]`` is 0: the forecast is the running mean (0 before
    the first target).
    """
    n = y.shape[0]
    z = np.empty(n)
    shift = np.empty(n)
    scale = np.empty(n)
    standardize_dense(_readonly_c(y.reshape(n, 1)), count, mean, m2, clip, True, True, z.reshape(n, 1), shift, scale,
                      MIN_COUNT)
    return z, shift, scale


def learn_transform(X, count, mean, m2, clip, with_mean=True, min_count=MIN_COUNT):
    """Prequential transform of a validated chunk (dense: standardised, or only scaled with
    ``with_mean=False``; CSR: scaled, same structure, on copies of ``indices`` and ``indptr``).

    Row ``t`` is transformed with the statistics of rows ``< t``; ``count`` (length-1 array),
    ``mean`` and ``m2`` are updated in place (for CSR ``m2`` holds sums of squares). Columns are
    output as 0 before ``min_count`` rows (the warm-up).
    """
    if sp.issparse(X):
        out = np.empty_like(X.data)
        scale_csr(X.indptr, X.indices, X.data, count, m2, clip, True, out, float(min_count))
        return sp.csr_matrix((out, X.indices.copy(), X.indptr.copy()), shape=X.shape)
    out = np.empty(X.shape)
    standardize_dense(_readonly_c(X), count, mean, m2, clip, with_mean, True, out, _NO_ROWS, _NO_ROWS,
                      float(min_count))
    return out


def frozen_transform(X, count, mean, m2, clip, with_mean=True, min_count=MIN_COUNT):
    """Every row with the current statistics; nothing is updated."""
    if sp.issparse(X):
        out = np.empty_like(X.data)
        scale_csr(X.indptr, X.indices, X.data, count.copy(), m2.copy(), clip, False, out, float(min_count))
        return sp.csr_matrix((out, X.indices.copy(), X.indptr.copy()), shape=X.shape)
    out = np.empty(X.shape)
    # copies of the statistics: the pass writes them back (unchanged when not learning), and a model
    # loaded from a read-only memory map has read-only state
    standardize_dense(_readonly_c(X), count.copy(), mean.copy(), m2.copy(), clip, with_mean, False, out,
                      _NO_ROWS, _NO_ROWS, float(min_count))
    return out
