"""Working copies in O(written) for state that a call writes in a few places only.

Every call learns on a working copy of the state and commits it in one step
(:meth:`skonline.base.OnlineMixin._partial_fit`). For most estimators the copy costs less than the
call. Not for a wide sparse stream: Algorithm 1 of the scale-invariant learners keeps three arrays
of one entry per column (2^18 columns: 6 MB), and a 1,000-row chunk of 40 non-zeros per row writes
at most 41,000 of their entries, so copying them whole would cost more than the learning.

So the arrays the call replaced are kept as *spares* for the next call, with the columns in
which they are behind (the ones the call wrote). The next working copy reuses a spare and copies
only those columns into it from the committed arrays. A spare is reused only if nothing but the
spare list refers to it (``sys.getrefcount``: a ``predict`` in another thread still reading the
state it replaced, or a user holding one of its arrays, keeps it untouched) and only against the
very array it was kept beside (a weak reference). Spares are taken out of the list before they
are written, so an interrupted call leaves none behind: the next call copies in full. A spare
behind in many of its columns (more than 1 in ``FULL_COPY_SHARE``) is refreshed by one sequential
copy instead, which is then the cheaper: the saving is the allocation only.

An estimator opts in with ``_recycled_state`` (names of arrays whose last axis is the column),
and its passes report what they write with :func:`note_written` on the working copy (nothing
reported: every column counts as written).
"""

import sys
import weakref

import numpy as np

from ._math import copy_columns, distinct_columns

#: a spare behind in more than 1 / FULL_COPY_SHARE of its columns is refreshed by a full copy: a
#: column costs about 3 ns to copy alone and an entry about 0.2 ns in a sequential copy, so from
#: about 1 column in 25 the full copy is the cheaper (measured on 4,096 to 2^18 columns; a
#: 1,000-row chunk of the 2^18-column stream of benchmarks/scale.py writes about 1 in 9)
FULL_COPY_SHARE = 32

#: estimator -> {name: (spare array, columns behind or None for all, weakref to the array it mirrors)}
_SPARES = weakref.WeakKeyDictionary()
#: working copy -> list of the columns its passes wrote (arrays; None: all)
_WRITTEN = weakref.WeakKeyDictionary()


def _refs(a):
    return sys.getrefcount(a)


def _local_only():
    spare = np.empty(1)  # referenced by this local only, as in reuse()
    return _refs(spare)


#: the reference count of an array held by one local variable of the caller of _refs
_LOCAL_ONLY = _local_only()


def take(estimator):
    """The spares kept for ``estimator``'s next working copy (removed from the list)."""
    return _SPARES.pop(estimator, None) or {}


def reuse(spares, name, value):
    """A copy of the committed array ``value`` made in ``spares[name]`` (taken out of ``spares``),
    copying only the columns the spare is behind; None if there is no spare that may be reused."""
    entry = spares.pop(name, None)
    if entry is None:
        return None
    spare, behind, mirror = entry
    del entry
    if (
        mirror() is not value
        or spare.shape != value.shape
        or spare.dtype != value.dtype
        or not spare.flags.writeable
        or _refs(spare) > _LOCAL_ONLY  # someone else still reads it
    ):
        return None
    if behind is None or behind.shape[0] * FULL_COPY_SHARE > spare.shape[-1]:
        np.copyto(spare, value)  # sequential: cheaper than a scattered copy of that many columns
    elif behind.shape[0]:
        copy_columns(spare, value, behind)
    return spare


def note_written(work, columns):
    """Record that a pass on the working copy ``work`` wrote ``columns`` (an int64 array) of its
    recycled arrays (None: possibly every column)."""
    _WRITTEN.setdefault(work, []).append(columns)


def copied(array):
    """Mark ``array`` as a working copy's copy of a committed array (made by
    :meth:`~skonline.base.OnlineMixin._copy_state`): only then is it behind the array it replaces
    in the columns the passes wrote alone."""
    _COPIES[id(array)] = array
    return array


#: id -> the working copies' copies of committed arrays (weakly: they die with their state)
_COPIES = weakref.WeakValueDictionary()


def keep(estimator, old_state, work, names):
    """After ``estimator`` committed ``work``'s state: keep the arrays of ``old_state`` (the dict it
    replaced) that the commit replaced as spares, behind in the columns ``work``'s passes wrote (in
    every column if the new array was not copied from the old one: ``fit`` starts afresh)."""
    written = _WRITTEN.pop(work, None)
    if not written or any(c is None for c in written):
        written = None
    else:
        cols = np.concatenate(written) if len(written) > 1 else written[0]
        written = distinct_columns(cols, int(cols.max()) + 1) if cols.shape[0] else cols
    new_state = estimator.__dict__
    spares = {}
    for name in names:
        a, b = old_state.get(name), new_state.get(name)
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a is not b:
            behind = written if _COPIES.pop(id(b), None) is b else None
            spares[name] = (a, behind, weakref.ref(b))
    if spares:
        _SPARES[estimator] = spares
