"""State that grows with the stream: capacities, budgets, warnings, working copies and pickles.

Every estimator whose state grows with the stream (exact Kernel-AWV, PKAWV-Nyström, the online
Nyström map, exact kernel selection) keeps it in preallocated buffers whose leading block is used
(rows ``< t``, columns ``< m``) and the rest is zero. This module holds what they share:

* capacities: the buffers double when full (:func:`next_capacity`), never beyond the budget;
* budgets: a limit on what grows (rows, dictionary points, support vectors), with a warning when
  the budget is reached (:func:`warn_growth`) and, for an unbounded budget (``None``), a warning
  when the memory the state will need crosses :data:`WARN_BYTES`;
* :class:`GrowingStateMixin`: cheap working copies (a call copies only the used block of the
  buffers a pass rewrites, and shares the ones it only appends to) and pickles that hold only the
  used blocks (the capacity is restored on load, zero-padded, so continuing after a load equals
  never stopping).
"""

import numpy as np

from ..exceptions import StateGrowthWarning
from ._warnings import warn

#: an unbounded model warns when the memory its state needs crosses this many bytes
WARN_BYTES = 1 << 30


def grow(a, shape):
    """A zero-padded copy of ``a`` with the given (larger or equal) shape."""
    out = np.zeros(shape, dtype=a.dtype)
    out[tuple(slice(0, s) for s in a.shape)] = a
    return out


def first_capacity(cap, budget=None):
    """Initial capacity of a buffer: ``cap``, or the budget if smaller (at least 1)."""
    return max(1, cap if budget is None else min(cap, int(budget)))


def next_capacity(cap, budget=None):
    """Capacity after ``cap`` is exhausted: doubling, never beyond ``budget`` (None: unbounded)."""
    new = 2 * cap
    return new if budget is None else max(cap, min(new, int(budget)))


def _format_bytes(n):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.1f} TB"  # pragma: no cover


def warn_growth(est, *, what, param, before, after, budget, nbytes, policy, hint=None):
    """Warn when a call made the grown quantity reach its budget, or a large unbounded state.

    ``before``/``after``: the count (rows, dictionary points, support vectors) before and after the
    call; ``budget``: the limit (None: unbounded); ``nbytes(n)``: memory of the state holding ``n``;
    ``policy``: what the estimator does at the budget (one sentence); ``hint``: what bounds an
    unbounded growth (default: setting ``param``). The warning depends only on
    the stream, not on its chunking into calls (it fires in the call that crosses the threshold).
    """
    name = type(est).__name__
    if budget is not None:
        if before < budget <= after:
            warn(f"{name}: {what} reached the budget {param}={budget} "
                 f"(about {_format_bytes(nbytes(budget))} of state). {policy}", StateGrowthWarning)
        return
    if nbytes(before) < WARN_BYTES <= nbytes(after):
        warn(
            f"{name}: {what} ({after}) now take about {_format_bytes(nbytes(after))} of memory and "
            + (hint or f"{param}=None lets them grow without limit; set {param} to bound memory and time."),
            StateGrowthWarning,
        )


class GrowingStateMixin:
    """Cheap working copies and trimmed pickles for estimators whose state lives in growing buffers.

    The streaming contract runs every call on a working copy of the state and commits it at the end
    (:meth:`~skonline.base.OnlineMixin._partial_fit`). For the growing models a full copy would
    copy the whole history (gigabytes for a long PKAWV-Nyström stream) on every ``partial_fit``.
    Their buffers are used in a leading block (rows ``< t``, columns ``< m``) and are zero
    elsewhere, and a pass only writes (a) inside the used block of the "dense" buffers (inverses,
    sums) and (b) outside the used block of the "append-only" buffers (history rows, new columns),
    always writing a cell before it reads it there. So the working copy copies the used block of
    the dense buffers only, into zero-padded arrays of the same capacity, and shares the
    append-only buffers: what the call appends lies past the used block that this estimator (and a
    ``predict`` running meanwhile) reads. If the call fails, :meth:`_discard_attempt` zeroes what
    it wrote there (and if that is itself interrupted, the cells are written again before they
    are read by the next call).

    Pickles (``__getstate__``) hold only the used block of each buffer and its capacity;
    ``__setstate__`` zero-pads it back to the capacity, so a loaded estimator continues bit for bit
    as the original would.

    Subclasses define ``_buffer_layout() -> {name: (used_shape, dense)}`` (empty before the first
    call).
    """

    def _buffer_layout(self):  # pragma: no cover - per estimator
        return {}

    def _layout_if_fitted(self):
        return self._buffer_layout() if self._is_initialized() else {}

    def _copy_context(self, reset):
        return {} if reset else self._layout_if_fitted()

    def _copy_state(self, name, value, layout):
        if name not in layout or not isinstance(value, np.ndarray):
            return super()._copy_state(name, value, layout)
        shape, dense = layout[name]
        if not dense and value.flags.writeable:
            return value  # append-only: shared, the call writes past the used block
        out = np.zeros_like(value)  # zero pages until written: the tail costs nothing
        used = tuple(slice(0, s) for s in shape)
        out[used] = value[used]
        return out

    def _discard_attempt(self):
        for name, (shape, dense) in self._layout_if_fitted().items():
            arr = self.__dict__.get(name)
            if dense or not isinstance(arr, np.ndarray) or not arr.flags.writeable:
                continue
            for axis, s in enumerate(shape):  # zero the tails, axis by axis
                tail = [slice(None)] * arr.ndim
                tail[axis] = slice(s, None)
                arr[tuple(tail)] = 0
        super()._discard_attempt()

    # ------------------------------------------------------------------ pickles
    def __getstate__(self):
        state = super().__getstate__()
        layout = self._layout_if_fitted()
        if not layout:
            return state
        state = dict(state)
        capacity = []
        for name in list(state):  # the state's own key objects: equal states pickle equal
            if name in layout:
                arr = state[name]
                capacity.append((name, arr.shape))
                state[name] = np.ascontiguousarray(arr[tuple(slice(0, s) for s in layout[name][0])])
        state["_growth_capacity"] = tuple(capacity)
        return state

    def __setstate__(self, state):
        state = dict(state)
        capacity = state.pop("_growth_capacity", ())
        super().__setstate__(state)
        self._check_pickled_buffers(capacity)
        for name, shape in capacity:
            self.__dict__[name] = grow(self.__dict__[name], shape)

    def _check_pickled_buffers(self, capacity):
        """A pickle holds each buffer's used block, whose shape its state implies (row and point
        counts, non-zeros): a damaged or altered pickle whose arrays disagree with it (a row
        pointer short, a truncated history) is refused here with a ``ValueError``; compiled passes
        do not bounds-check and would read or write out of bounds. Subclasses check more
        (:meth:`_check_loaded_state`: the structure of sparse rows)."""
        if not self._is_initialized():
            return
        name = type(self).__name__

        def damaged(why):
            return ValueError(f"{name}: this pickle is damaged or altered ({why}); the estimator cannot be loaded "
                              "from it.")

        try:
            layout = self._buffer_layout()
        except (IndexError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise damaged(f"its state is inconsistent: {type(exc).__name__}: {exc}") from None
        for buf, shape in capacity:
            arr = self.__dict__.get(buf)
            if buf not in layout or not isinstance(arr, np.ndarray):
                raise damaged(f"unexpected buffer {buf}")
            used = tuple(layout[buf][0])
            if arr.shape != used or len(shape) != len(used) or any(c < u for c, u in zip(shape, used)):
                raise damaged(f"{buf} has shape {arr.shape}, where its state implies {used} within {tuple(shape)}")
        try:
            self._check_loaded_state()
        except ValueError as exc:
            raise damaged(str(exc)) from None

    def _check_loaded_state(self):
        """Hook: raise ``ValueError`` if the loaded (trimmed) buffers are not a valid state."""
