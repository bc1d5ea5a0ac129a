"""Regret of an aggregation rule against the best expert, the best switching sequence, every interval.

All functions take the loss matrix ``L`` (n_rounds, K) and the weights ``W`` (n_rounds, K) played at
each round (what the rules' ``partial_fit_predict`` returns); the learner's loss at round t is
``<W[t], L[t]>``. Sleeping experts: a NaN loss means the expert was asleep; the learner's loss sums
over the awake experts, and an asleep expert is charged the learner's loss that round (the standard
sleeping-experts regret: a comparator gains or loses nothing on the rounds its expert sleeps).
"""

import math

import numpy as np

from ..utils._jit import njit


def _as_losses(L, allow_nan=True):
    L = np.asarray(L, dtype=np.float64)
    if L.ndim != 2 or L.shape[0] == 0 or L.shape[1] == 0:
        raise ValueError(f"L must be a non-empty 2-D array (n_rounds, n_experts); got shape {L.shape}.")
    if np.isinf(L).any() or (not allow_nan and np.isnan(L).any()):
        raise ValueError("L must be finite" + ("" if allow_nan else " (no NaN)") + ".")
    return np.ascontiguousarray(L)


def learner_losses(L, W):
    """Loss of the mixture at each round, ``sum_i W[t, i] L[t, i]`` over the awake experts.

    Parameters
    ----------
    L : array-like of shape (n_rounds, K)
        Losses (NaN: asleep).
    W : array-like of shape (n_rounds, K)
        Weights played at each round.

    Returns
    -------
    losses : ndarray of shape (n_rounds,)

    Examples
    --------
    >>> from skonline.evaluation import learner_losses
    >>> learner_losses([[0.0, 1.0], [1.0, 0.0]], [[0.5, 0.5], [1.0, 0.0]]).tolist()
    [0.5, 1.0]
    """
    L = _as_losses(L)
    W = np.asarray(W, dtype=np.float64)
    if W.shape != L.shape:
        raise ValueError(f"W must have the shape of L {L.shape}; got {W.shape}.")
    return np.sum(np.where(np.isnan(L), 0.0, L * W), axis=1)


def _imputed(L, W):
    """(learner losses, L with asleep entries replaced by the learner's loss)."""
    L = _as_losses(L)
    if not np.isnan(L).any():
        return (None if W is None else learner_losses(L, W)), L
    if W is None:
        raise ValueError("L has NaN (asleep experts): pass the played weights W to charge them the learner's loss.")
    lh = learner_losses(L, W)
    return lh, np.where(np.isnan(L), lh[:, None], L)


def static_regret(L, W):
    """Regret against the best single expert in hindsight.

    ``sum_t <W[t], L[t]> - min_i sum_t L[t, i]``.

    Parameters
    ----------
    L : array-like of shape (n_rounds, K)
    W : array-like of shape (n_rounds, K)

    Returns
    -------
    regret : float

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.evaluation import static_regret
    >>> L = np.array([[0.0, 1.0], [0.0, 1.0]])
    >>> static_regret(L, np.full((2, 2), 0.5))
    1.0
    """
    lh, Li = _imputed(L, W)
    return float(lh.sum() - Li.sum(axis=0).min())


@njit
def _switching_dp(L, S, arg, switched):
    """Exact DP over (switches used, current expert); O(T S K) time, O(S K) live memory.

    ``arg[t, s]`` = argmin_j D_t[s, j]; ``switched[t, s, i]`` = whether the best way to be at
    (t, s, i) switched at t. Returns the final table D_T (S, K).
    """
    T, K = L.shape
    D = np.full((S, K), np.inf)
    new = np.empty((S, K))
    mins = np.empty(S)
    for i in range(K):
        D[0, i] = L[0, i]
    for s in range(S):
        best = 0
        for i in range(K):
            switched[0, s, i] = False
            if D[s, i] < D[s, best]:
                best = i
        arg[0, s] = best
        mins[s] = D[s, best]
    for t in range(1, T):
        for s in range(S):
            for i in range(K):
                stay = D[s, i]
                if s > 0 and mins[s - 1] < stay:
                    new[s, i] = mins[s - 1] + L[t, i]
                    switched[t, s, i] = True
                else:
                    new[s, i] = stay + L[t, i]
                    switched[t, s, i] = False
        for s in range(S):
            best = 0
            for i in range(K):
                D[s, i] = new[s, i]
                if new[s, i] < new[s, best]:
                    best = i
            arg[t, s] = best
            mins[s] = D[s, best]
    return D


def best_switching_sequence(L, n_segments, W=None):
    """The best sequence of experts with at most ``n_segments - 1`` switches (exact DP).

    Minimises ``sum_t L[t, E_t]`` over ``(E_1, ..., E_T)`` with at most S - 1 switches
    (Lu & Zhang, eq. 3), by dynamic programming over (switches used, current expert) in
    O(T S K) time.

    Parameters
    ----------
    L : array-like of shape (n_rounds, K)
        Losses. With NaN (asleep experts) pass ``W``: an asleep expert is charged the learner's loss.
    n_segments : int
        S >= 1.
    W : array-like of shape (n_rounds, K), default=None
        Played weights (needed only when ``L`` has NaN).

    Returns
    -------
    loss : float
        The comparator's cumulative loss.
    path : ndarray of int of shape (n_rounds,)
        The comparator ``E_t`` (0-based expert indices).

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.evaluation import best_switching_sequence
    >>> L = np.array([[0, 1], [0, 1], [1, 0], [1, 0]], dtype=float)
    >>> loss, path = best_switching_sequence(L, n_segments=2)
    >>> loss, path.tolist()
    (0.0, [0, 0, 1, 1])
    >>> best_switching_sequence(L, n_segments=1)[0]
    2.0
    """
    _, Li = _imputed(L, W)
    S = int(n_segments)
    if S < 1:
        raise ValueError(f"n_segments must be >= 1; got {n_segments!r}.")
    T, K = Li.shape
    S = min(S, T)
    arg = np.empty((T, S), dtype=np.int64)
    switched = np.empty((T, S, K), dtype=np.bool_)
    D = _switching_dp(Li, S, arg, switched)
    flat = int(np.argmin(D))
    s, i = divmod(flat, K)
    loss = float(D[s, i])
    path = np.empty(T, dtype=np.int64)
    for t in range(T - 1, -1, -1):
        path[t] = i
        if t > 0 and switched[t, s, i]:
            s -= 1
            i = int(arg[t - 1, s])
    return loss, path


def tracking_regret(L, W, n_segments, *, return_path=False):
    """Tracking regret against the best sequence of experts with at most S - 1 switches.

    ``TR(T, S) = sum_t <W[t], L[t]> - min over sequences with <= S - 1 switches of sum_t L[t, E_t]``
    (Lu & Zhang, eq. 1), the minimum computed exactly by :func:`best_switching_sequence`.
    ``n_segments=1`` is the static regret.

    Parameters
    ----------
    L : array-like of shape (n_rounds, K)
    W : array-like of shape (n_rounds, K)
    n_segments : int
    return_path : bool, default=False
        Also return the optimal comparator sequence.

    Returns
    -------
    regret : float
    path : ndarray of int, only if ``return_path``

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.evaluation import tracking_regret
    >>> L = np.array([[0, 1], [0, 1], [1, 0], [1, 0]], dtype=float)
    >>> tracking_regret(L, np.full((4, 2), 0.5), n_segments=2)
    2.0
    """
    lh, _ = _imputed(L, W)
    loss, path = best_switching_sequence(L, n_segments, W)
    regret = float(lh.sum() - loss)
    return (regret, path) if return_path else regret


@njit
def _max_window_sum(r, max_len):
    """Max over windows [p, q] with q - p + 1 <= max_len of sum r[p..q] (monotone deque)."""
    T = r.shape[0]
    C = np.empty(T + 1)
    C[0] = 0.0
    for t in range(T):
        C[t + 1] = C[t] + r[t]
    dq = np.empty(T + 1, dtype=np.int64)
    head = 0
    tail = 0
    best = -np.inf
    bp = 0
    bq = 0
    for q in range(1, T + 1):
        # candidate start prefix index q - 1
        j = q - 1
        while tail > head and C[dq[tail - 1]] >= C[j]:
            tail -= 1
        dq[tail] = j
        tail += 1
        while dq[head] < q - max_len:
            head += 1
        v = C[q] - C[dq[head]]
        if v > best:
            best = v
            bp = dq[head]
            bq = q
    return best, bp, bq


def interval_regret(L, W, *, max_length=None, return_interval=False):
    """Worst regret over every interval of rounds (adaptive regret).

    ``max over intervals I = [p, q] with |I| <= max_length and experts i of
    sum_{t in I} (<W[t], L[t]> - L[t, i])`` (Hazan & Seshadhri 2007), computed exactly in O(T K)
    with prefix sums and a sliding-window minimum.

    Parameters
    ----------
    L : array-like of shape (n_rounds, K)
    W : array-like of shape (n_rounds, K)
    max_length : int, default=None
        Longest interval considered (``None``: every interval).
    return_interval : bool, default=False
        Also return ``(start, stop, expert)``: the worst interval as a slice ``start:stop`` of rounds
        (0-based) and the expert it is measured against.

    Returns
    -------
    regret : float
    interval : tuple, only if ``return_interval``

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.evaluation import interval_regret
    >>> L = np.array([[0, 1], [0, 1], [1, 0], [1, 0]], dtype=float)
    >>> W = np.tile([1.0, 0.0], (4, 1))          # always follows expert 0
    >>> interval_regret(L, W, return_interval=True)
    (2.0, (2, 4, 1))
    """
    lh, Li = _imputed(L, W)
    T, K = Li.shape
    m = T if max_length is None else int(max_length)
    if m < 1:
        raise ValueError(f"max_length must be >= 1; got {max_length!r}.")
    best = (-math.inf, 0, 0, 0)
    for i in range(K):
        r = np.ascontiguousarray(lh - Li[:, i])
        v, p, q = _max_window_sum(r, m)
        if v > best[0]:
            best = (float(v), int(p), int(q), i)
    return (best[0], best[1:]) if return_interval else best[0]


def path_length(L):
    """Path length ``P_inf = sum_t ||L[t] - L[t-1]||_inf^2`` with ``L[-1] = 0`` (Lu & Zhang, eq. 5).

    Parameters
    ----------
    L : array-like of shape (n_rounds, K)
        Losses (no NaN).

    Returns
    -------
    p : float

    Examples
    --------
    >>> from skonline.evaluation import path_length
    >>> path_length([[0.5, 0.5], [0.5, 0.0]])
    0.5
    """
    L = _as_losses(L, allow_nan=False)
    D = np.diff(np.vstack([np.zeros((1, L.shape[1])), L]), axis=0)
    return float(np.sum(np.max(np.abs(D), axis=1) ** 2))
