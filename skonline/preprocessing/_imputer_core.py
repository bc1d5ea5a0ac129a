"""Compiled passes of the online imputer: the P² running median and space-saving running mode.

Both are sequential by nature (each row updates the statistic the next row is imputed with), so
they run as one compiled loop over the rows of one column; the mean needs no loop (a running sum,
``np.add.accumulate``). Row ``i`` is imputed with the statistic of the rows before ``i``.
"""

from typing import NamedTuple

import numpy as np

from ..utils._jit import njit

__all__ = ["P2State", "SpaceSaving", "p2_pass", "p2_estimate", "space_saving_pass"]


class P2State(NamedTuple):
    """State of the P² median estimate of one column (Jain and Chlamtac, 1985).

    ``q``: (5,) marker heights (the first observations, sorted, while fewer than 5);
    ``pos``: (5,) marker positions (1-based ranks among the observations);
    ``count``: (1,) observations so far (float64).
    """

    q: np.ndarray
    pos: np.ndarray
    count: np.ndarray


class SpaceSaving(NamedTuple):
    """Space-saving counters of one column (Metwally, Agrawal and El Abbadi, 2005) over one chunk.

    ``table_id``: (k,) index into the chunk's distinct values of the value each counter holds, -1 for
    a value from before the chunk (or a free counter); ``counts``: (k,) int64 counts; ``used``: (1,)
    counters in use; ``leader``: (1,) counter of the running mode (-1 before any value);
    ``slot_of_id``: (n_distinct,) counter holding each distinct value of the chunk, -1 if none.
    """

    table_id: np.ndarray
    counts: np.ndarray
    used: np.ndarray
    leader: np.ndarray
    slot_of_id: np.ndarray


@njit(inline="always")
def _p2_median(q, count):
    c = int(count)
    if c >= 5:
        return q[2]
    return 0.5 * (q[(c - 1) // 2] + q[c // 2])


@njit
def p2_estimate(q, count, fill):
    """The current median estimate (``fill`` before any observation)."""
    if count[0] < 1.0:
        return fill
    return _p2_median(q, count[0])


@njit
def p2_pass(values, missing, state, fill, out):
    """Impute one column with the P² median of the values before each row, then learn the row.

    ``out[i]`` is ``values[i]``, or the estimate before row ``i`` where ``missing[i]``. Fewer than
    5 values: their exact median. From 5 on, the P² markers (p = 1/2): five heights adjusted by
    piecewise-parabolic interpolation as the ranks of the observations move.
    """
    q, pos, count = state.q, state.pos, state.count
    for i in range(values.shape[0]):
        if missing[i]:
            out[i] = fill if count[0] < 1.0 else _p2_median(q, count[0])
            continue
        x = values[i]
        out[i] = x
        c = int(count[0])
        if c < 5:  # insertion into the sorted first observations
            k = c
            while k > 0 and q[k - 1] > x:
                q[k] = q[k - 1]
                k -= 1
            q[k] = x
            count[0] += 1.0
            if c + 1 == 5:
                for m in range(5):
                    pos[m] = m + 1.0
            continue
        if x < q[0]:
            q[0] = x
            cell = 0
        elif x >= q[4]:
            q[4] = max(q[4], x)
            cell = 3
        else:
            cell = 0
            while x >= q[cell + 1]:
                cell += 1
        for m in range(cell + 1, 5):
            pos[m] += 1.0
        count[0] += 1.0
        n = count[0]
        for m in range(1, 4):
            desired = 1.0 + (n - 1.0) * 0.25 * m
            delta = desired - pos[m]
            if (delta >= 1.0 and pos[m + 1] - pos[m] > 1.0) or (delta <= -1.0 and pos[m - 1] - pos[m] < -1.0):
                s = 1.0 if delta > 0 else -1.0
                a = pos[m] - pos[m - 1]
                b = pos[m + 1] - pos[m]
                qp = q[m] + s / (pos[m + 1] - pos[m - 1]) * (
                    (a + s) * (q[m + 1] - q[m]) / b + (b - s) * (q[m] - q[m - 1]) / a
                )
                if q[m - 1] < qp < q[m + 1]:
                    q[m] = qp
                else:  # linear step towards the neighbour
                    j = m + int(s)
                    q[m] = q[m] + s * (q[j] - q[m]) / (pos[j] - pos[m])
                pos[m] += s


@njit
def space_saving_pass(ids, state, out_code):
    """Impute one column with its running mode, then learn the row (space-saving counters).

    ``ids[i]``: index of row ``i``'s value among the chunk's distinct values, -1 if missing. For a
    missing row, ``out_code[i]`` is the mode of the rows before: ``u >= 0`` (distinct value
    ``u`` of the chunk), ``-(s + 2)`` (the value counter ``s`` held before the chunk) or -1 (no
    value yet). A value without a counter takes a free one, or else the counter of smallest count
    (the first such), whose count it continues (space-saving: any value more frequent than
    ``1 / k`` of the rows keeps a counter). The mode is the counter that first reached the
    largest count; it changes only when another counter strictly exceeds it.
    """
    table_id, counts, used, leader, slot_of_id = (
        state.table_id, state.counts, state.used, state.leader, state.slot_of_id)
    k = counts.shape[0]
    for i in range(ids.shape[0]):
        u = ids[i]
        if u < 0:
            lead = leader[0]
            if lead < 0:
                out_code[i] = -1
            elif table_id[lead] >= 0:
                out_code[i] = table_id[lead]
            else:
                out_code[i] = -(lead + 2)
            continue
        s = slot_of_id[u]
        if s < 0:
            if used[0] < k:
                s = used[0]
                used[0] += 1
                counts[s] = 0
            else:
                s = 0
                for m in range(1, k):
                    if counts[m] < counts[s]:
                        s = m
                old = table_id[s]
                if old >= 0:
                    slot_of_id[old] = -1
            table_id[s] = u
            slot_of_id[u] = s
        counts[s] += 1
        lead = leader[0]
        if lead < 0 or (s != lead and counts[s] > counts[lead]):
            leader[0] = s
