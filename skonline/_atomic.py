"""All or nothing: the rollback half of the streaming contract (see :mod:`skonline.base`).

A call that changes an estimator (``fit``, ``partial_fit``, ``partial_fit_predict``, ...) learns on a
*working copy* of the estimator's learned state and the estimator takes the copy's attribute dict
in one step at the end; a call that raises (a rejected chunk, a non-finite state, a
``KeyboardInterrupt`` or a ``MemoryError`` at any line) leaves the estimator exactly as it was.

* :class:`AtomicCallMixin`: the call protocol: :meth:`~AtomicCallMixin._partial_fit` (attempt, then
  commit), :meth:`~AtomicCallMixin._attempt` (learn on a working copy, check the result),
  :meth:`~AtomicCallMixin._working_copy` / :meth:`~AtomicCallMixin._copy_state` (what a copy
  holds), the search for the row that makes the state non-finite, and the discovery of the
  learned state by its trailing underscore (:meth:`~AtomicCallMixin._state_keys`). The class
  using it provides ``_learn_call`` (the body of a call: :class:`skonline.base.OnlineMixin`).
* :func:`commit`: several objects take their new states in one step (the online pipeline).
* :func:`atomic`: the same for a ``fit`` outside the streaming contract (fixed feature maps).
* :func:`reads_state`: readers (``predict``, ``transform``, ...) see one committed state.
* :func:`nonfinite_state`, :func:`raise_if_nonfinite`, :func:`check_finite_output`: no silent NaN or
  inf, in the state or in what a method returns.
"""

import collections
import contextvars
import copy
import functools
import itertools
import numbers
import operator
import warnings

import numpy as np

from .utils import _recycle
from .utils._jit import njit

__all__ = [
    "AtomicCallMixin",
    "atomic",
    "check_finite_output",
    "commit",
    "nonfinite_state",
    "raise_if_nonfinite",
    "reads_state",
]


def raise_if_nonfinite(status, first_row=0, what="state"):
    """Raise if a compiled pass reported (``status >= 0``) the row at which it became non-finite."""
    if status >= 0:
        raise FloatingPointError(
            f"Row {first_row + int(status)} of this chunk would make the model's {what} non-finite "
            "(NaN or inf); the chunk was rejected and the estimator is unchanged. Check the scale "
            "of the features and targets."
        )


def check_finite_output(out, estimator, what="predictions"):
    """Raise a ValueError naming the first row of ``X`` whose output is NaN or inf.

    For ``predict`` / ``decision_function`` / ``transform``: a row so large that the algorithm's
    float64 arithmetic overflows is an error, never a silent NaN (a classifier would map it to a
    class). Returns ``out``.
    """
    a = np.asarray(out)
    if a.dtype.kind in "fc" and not np.isfinite(a).all():
        bad = ~np.isfinite(a)
        row = int(np.flatnonzero(bad.reshape(a.shape[0], -1).any(axis=1))[0]) if a.ndim else 0
        raise ValueError(
            f"Row {row} of X gives non-finite {what} in {type(estimator).__name__} (its values "
            "are too large for the float64 arithmetic of this algorithm). Scale the features."
        )
    return out


#: set while ``_first_nonfinite_row`` replays prefixes of a chunk (no nested search)
_LOCATING_ROW = contextvars.ContextVar("skonline_locating_nonfinite_row", default=False)


def nonfinite_state(estimator, raw=None):
    """Name of the first learned attribute (or ``'predictions'``) holding a NaN or an inf, or None.

    Checks every float ndarray and float scalar among the estimator's learned attributes (fitted
    ``*_`` and private state), the prequential outputs ``raw`` of the pass when given, and the
    arrays the estimator derives from its state (hook ``_derived_state()``, e.g. ``coef_`` of
    the scale-invariant learners). Attributes that use NaN or inf as markers by design are listed
    in the class attribute ``_nonfinite_state_ok``.

    After every call, so it is cheap: the small float64 arrays (most of a state: step sizes,
    counters, per-group records) are checked together, in one pass over their concatenation
    (each array on its own costs a NumPy call or two, which for an estimator with dozens of small
    arrays cost more than its compiled pass on a 100-row chunk); only when that finds a NaN or an
    inf are they checked one by one, to name the first.
    """
    allowed = estimator._nonfinite_state_ok
    layout = {}
    if estimator._buffer_layout is not None and estimator._is_initialized():
        layout = estimator._buffer_layout()  # growth buffers: only their used block is state
    fixed = estimator._fixed_state
    small = []  # (name, float64 array) checked together
    state = estimator.__dict__
    for k in estimator._state_keys():
        if k in allowed or k in fixed:
            continue
        v = state.get(k)
        bad = None
        if isinstance(v, np.ndarray):
            if k in layout:
                v = v[tuple(slice(0, s) for s in layout[k][0])]
            if v.dtype == np.float64 and v.size < SMALL_ARRAY:
                small.append((k, v))
            elif v.dtype.kind in "fc" and not _all_finite(v):
                bad = k
        elif isinstance(v, (float, np.floating)):
            if not np.isfinite(v):
                bad = k
        elif isinstance(v, AtomicCallMixin) and v._is_initialized():  # an ensemble's rule_
            inner = nonfinite_state(v)
            if inner is not None:
                bad = f"{k}.{inner}"
        if bad is not None:  # the small arrays before it come first
            return _first_nonfinite(small) or bad
    bad = _first_nonfinite(small)
    if bad is not None:
        return bad
    derived = estimator._derived_state
    if derived is not None:
        for k, v in derived():
            if not _all_finite(np.asarray(v, dtype=np.float64)):
                return k
    if raw is not None and isinstance(raw, np.ndarray) and raw.dtype.kind in "fc":
        if not _all_finite(raw):
            return "predictions"
    return None


#: a state's float64 arrays below this size are checked together, in one scan of their
#: concatenation (:func:`nonfinite_state`); larger ones each on their own
SMALL_ARRAY = 4096


def _first_nonfinite(named):
    """The name of the first ``(name, float64 array)`` of ``named`` holding a NaN or an inf, or
    None: one check over all of them, then (only if it fails) one by one."""
    if not named:
        return None
    if len(named) == 1:
        flat = named[0][1]
    else:
        flat = np.concatenate([a.reshape(-1) for _, a in named])
    if _all_finite(flat):
        return None
    for k, a in named:
        if not _all_finite(a):
            return k
    return None  # pragma: no cover - the concatenation held a NaN that no array holds


@njit(fastmath={"reassoc"})
def _all_finite_2d(a):
    """Whether every entry is finite: ``v - v`` is 0 for a finite ``v`` and NaN for NaN or +-inf,
    and a sum of them is NaN as soon as one is, in any order. The sum has no branch, so it
    vectorises (``reassoc``, this function only: without ``nnan`` and ``ninf`` the compiler may
    not fold ``v - v`` to 0): a 1,000 x 1,000 chunk in about 90 us, against about 420 us for a
    scan that stops at the first bad entry."""
    acc = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            v = a[i, j]
            acc += v - v
    return acc == 0.0


def _all_finite(a):
    """``np.isfinite(a).all()`` without a temporary array: a compiled scan of float64 arrays (a
    growth buffer's used block is a strided view of up to gigabytes). A contiguous array is
    scanned as one row: one long loop vectorises, where a chunk of 1,000 x 10 scanned row by row
    took 7.5 us instead of 2.4; a 100 x 10 chunk takes about 0.5 us, against 1.8 us for NumPy's
    two calls."""
    if a.dtype != np.float64 or a.ndim > 2:
        return bool(np.isfinite(a).all())
    if a.ndim < 2 or a.flags.c_contiguous:
        a = a.reshape(1, -1)
    return bool(_all_finite_2d(a))


def _row_kwargs(fit_params, n, stop):
    """Keywords of a chunk cut to its first ``stop`` rows (per-row arrays such as ``groups``)."""
    from sklearn.utils import _safe_indexing

    out = {}
    for k, v in fit_params.items():
        if k != "classes" and v is not None and hasattr(v, "__len__") and not isinstance(v, str) and len(v) == n:
            v = _safe_indexing(v, slice(0, stop))
        out[k] = v
    return out


def _interrupt_behind(exc):
    """The KeyboardInterrupt hidden behind a SystemError, or None.

    A Ctrl-C that lands while a numba-compiled function boxes its results (numba calls back into
    Python there, e.g. ``_numba_unpickle``) makes the dispatcher return a value with the
    KeyboardInterrupt set: Python reports ``SystemError: CPUDispatcher(...) returned a result
    with an exception set``, the interrupt as its cause. The user pressed Ctrl-C: give them the
    KeyboardInterrupt.
    """
    if not isinstance(exc, SystemError):
        return None
    seen = set()
    e = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


@functools.lru_cache(maxsize=100_000)
def _is_state(name):
    """Learned state: every attribute whose name ends with an underscore (``__dunder__`` aside).

    Asked for every attribute of every estimator on every call (an ensemble's call asks it a few
    hundred times), so the answers are kept by name (estimators have a fixed set of names)."""
    return name.endswith("_") and not name.startswith("__")


#: types of learned values that are never changed in place: a working copy shares them
_IMMUTABLE = frozenset({int, float, bool, str, bytes, type(None), tuple, np.float64, np.int64, np.bool_})


def _copied(value):
    """An independent copy of a piece of learned state (see :meth:`AtomicCallMixin._working_copy`)."""
    if isinstance(value, np.ndarray):
        # writeable, same layout: a model loaded with joblib.load(..., mmap_mode='r') holds read-only
        # memory maps, which its first call copies
        return value.copy(order="K")
    # immutable (the exact types first: this runs for every attribute of every call, and the
    # check against numbers.Number goes through its abstract base class)
    if type(value) in _IMMUTABLE or isinstance(value, (numbers.Number, str, bytes, type(None), tuple)):
        return value
    if isinstance(value, AtomicCallMixin):
        return value._working_copy()  # a nested skonline estimator (an ensemble's rule, an expert)
    if isinstance(value, np.random.Generator):
        return _copied_generator(value)
    return copy.deepcopy(value)  # another estimator, a list, ...


_SEED = np.random.SeedSequence(0)


def _copied_generator(rng):
    """An independent Generator in the state of ``rng`` (7 us; a deep copy pickles it: 30 us)."""
    bits = rng.bit_generator
    try:
        copy_bits = type(bits)(_SEED)
        copy_bits.state = bits.state
    except Exception:  # a bit generator that cannot be made from a seed sequence
        return copy.deepcopy(rng)
    return np.random.Generator(copy_bits)


def _nested_online(value):
    """The skonline estimators a piece of state holds (itself, or the items of a list)."""
    if isinstance(value, AtomicCallMixin):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, AtomicCallMixin)]
    return []


def _changed_meanwhile(obj):
    return RuntimeError(
        f"This {type(obj).__name__} was changed by another call (in another thread) while this one "
        "ran, so this call learned nothing. Calls that change one estimator (fit, partial_fit, ...) "
        "must not run at the same time: serialise them, e.g. with a threading.Lock."
    )


def commit(objects, states, expected):
    """Give each object of ``objects`` the attribute dict of the same position in ``states``, in one
    step that nothing can interrupt, if each still has the dict of ``expected`` (the one its working
    copy was made from).

    The assignments run in C (``map`` over ``object.__setattr__``, drained by a zero-length
    ``deque``): no Python line runs between two of them, so neither a ``KeyboardInterrupt`` (Python
    checks for signals between bytecodes only) nor another thread (which takes the GIL at the same
    points) can see some of the objects updated and the others not. If another call committed to one
    of the objects since its copy was made (two threads calling ``partial_fit`` on one estimator at
    once), this call's work would silently replace that call's: it raises instead, and nothing
    changes. (No lock: an interrupt landing where a ``with`` block calls ``__exit__`` would leave it
    held, and every later call would wait for ever.) A single estimator commits inline, with no
    point between the check and the assignment where Python switches threads:
    :meth:`AtomicCallMixin._partial_fit`.
    """
    if not all(map(operator.is_, map(_DICT_OF, objects), expected)):  # C only
        raise _changed_meanwhile(next(o for o, e in zip(objects, expected) if o.__dict__ is not e))
    collections.deque(map(object.__setattr__, objects, itertools.repeat("__dict__"), states), maxlen=0)


_DICT_OF = operator.attrgetter("__dict__")


def atomic(fit):
    """Decorator for the ``fit`` of an estimator outside the streaming contract (the fixed feature
    maps): it runs on a shallow working copy, committed in one step when it returns.

    Such a ``fit`` only assigns attributes (it never updates an array in place), so a shallow
    copy of the attribute dict is enough: an interruption at any line leaves the estimator as it
    was, and a ``transform`` in another thread sees the map before or after the call.
    """

    @functools.wraps(fit)
    def committed(self, *args, **kwargs):
        base = self.__dict__
        work = object.__new__(type(self))
        work.__dict__ = dict(base)
        out = fit(work, *args, **kwargs)
        if self.__dict__ is not base:
            raise _changed_meanwhile(self)
        self.__dict__ = work.__dict__  # the commit (see AtomicCallMixin._partial_fit)
        return self if out is work else out

    return committed


def reads_state(method):
    """Decorator for a public method that reads the learned state (``predict``, ``transform``, ...):
    it runs on the state as committed when the call starts.

    ``partial_fit`` never changes the state an estimator shows: it learns on a working copy and
    replaces the estimator's attribute dict by the copy's in one step (see
    :meth:`AtomicCallMixin._partial_fit`). A method running in another thread meanwhile could still
    read one attribute before that step and the next after it; this decorator makes the method
    read a view of the attribute dict taken once, at the start, so it sees the state before the
    concurrent call or after it, never a mix. The view shares the dict: caches a method sets
    (plain ``_name`` attributes) land in the estimator as before.
    """

    @functools.wraps(method)
    def pinned(self, *args, **kwargs):
        view = object.__new__(type(self))
        view.__dict__ = self.__dict__
        return method(view, *args, **kwargs)

    pinned.reads_committed_state = True
    return pinned


class AtomicCallMixin:
    """The all-or-nothing call protocol (see the module docstring); mixed into
    :class:`skonline.base.OnlineMixin`, which provides ``_learn_call``."""

    # hooks of the estimators (class attributes; the defaults here) ---------------------------
    #: learned attributes that hold NaN or inf by design (markers): not checked for finiteness
    _nonfinite_state_ok = ()
    #: learned arrays drawn once when they are allocated and never written in place afterwards
    #: (e.g. random frequencies): a working copy shares them instead of copying them, and they are
    #: not checked for finiteness after each call (a call may still assign a new array)
    _fixed_state = ()
    #: method ``() -> [(name, array)]``: arrays derived from the state that must be finite too
    #: (e.g. the scale-invariant learners' ``coef_``); None: none
    _derived_state = None
    #: method ``() -> {name: (used_shape, ...)}``: growth buffers whose used block only is state
    #: (:class:`~skonline.utils._growing.GrowingStateMixin`); None: no growth buffers
    _buffer_layout = None
    #: the end of the TypeError raised for a ``sample_weight`` the estimator does not support
    _no_sample_weight_reason = ""

    def _partial_fit(self, X, y, *, reset, from_fit, **fit_params):
        """Learn a chunk atomically: on a working copy, then committed in one step.

        The call runs on :meth:`_working_copy` (its own copies of the state; this estimator is not
        touched), and the estimator takes the copy's attribute dict with one assignment at the end:
        whatever interrupts the call before that line (a bad chunk, a non-finite state, a
        ``KeyboardInterrupt`` or a ``MemoryError`` at any Python line, numba's compiled pass
        included) leaves the estimator exactly as it was, and after that line the call is complete.
        Nothing needs to be restored, so there is no restore path that an interrupt could cut
        short. A ``predict`` in another thread meanwhile sees the state before the call (or, from
        the assignment on, after it): see :func:`reads_state`.
        """
        base = self.__dict__
        work, raw = self._attempt(X, y, reset=reset, from_fit=from_fit, state=base, **fit_params)
        if self.__dict__ is not base:  # another thread's call committed meanwhile: see commit()
            raise _changed_meanwhile(self)
        # The commit. Between the check above and this assignment CPython runs no call and no
        # backward jump, the only points where it handles a signal or switches threads.
        self.__dict__ = work.__dict__
        if self._recycled_state:
            _recycle.keep(self, base, work, self._recycled_state)
        return raw

    def _attempt(self, X, y, *, reset, from_fit, state=None, **fit_params):
        """Run a ``partial_fit`` (``fit`` with ``reset``) on a working copy (of ``state``, default the
        current one): ``(copy, raw outputs)``; raises, leaving this estimator unchanged, if the chunk
        is rejected."""
        sample_weight = fit_params.pop("sample_weight", None)
        if sample_weight is not None and not self._supports_sample_weight:
            raise TypeError(
                f"{type(self).__name__} does not support sample_weight"
                f"{self._no_sample_weight_reason}."
            )
        replay = fit_params if sample_weight is None else dict(fit_params, sample_weight=sample_weight)
        try:
            work = self._working_copy(reset, state)
            raw = work._learn_call(X, y, reset, from_fit, sample_weight, fit_params)
            what = nonfinite_state(work, raw)
            if what is not None:
                self._raise_nonfinite(what, X, y, reset, from_fit, replay)
        except (ZeroDivisionError, OverflowError) as exc:  # from a compiled pass: a non-finite state
            self._discard_attempt()
            self._raise_nonfinite(f"state ({type(exc).__name__}: {exc})", X, y, reset, from_fit, replay)
        except BaseException as exc:
            self._discard_attempt()
            interrupt = _interrupt_behind(exc)
            if interrupt is not None:
                raise interrupt.with_traceback(interrupt.__traceback__) from None
            raise
        return work, raw

    def _working_copy(self, reset=False, state=None):
        """A new estimator of the same class holding the parameters (and other plain attributes)
        of this one and its own copy of the learned state (none with ``reset``: ``fit`` starts
        afresh). A call learns on it and this estimator is untouched until the commit. The copy
        of each piece of state is :meth:`_copy_state`'s. ``state``: the attribute dict to copy (the
        current one by default)."""
        state = self.__dict__ if state is None else state
        context = self._copy_context(reset)
        work = object.__new__(type(self))
        copy_state = self._copy_state
        if reset:
            work.__dict__ = {k: v for k, v in state.items() if not _is_state(k)}
        else:
            work.__dict__ = {k: (copy_state(k, v, context) if _is_state(k) else v) for k, v in state.items()}
        return work

    #: names of state arrays that a call writes in a few columns only (last axis): their working
    #: copies are refreshed in those columns only (:mod:`skonline.utils._recycle`)
    _recycled_state = ()

    def _copy_context(self, reset):
        """What :meth:`_copy_state` needs to know about the whole state, computed once per copy."""
        if self._recycled_state:
            spares = _recycle.take(self)
            return None if reset else spares
        return None

    def _copy_state(self, name, value, context):
        """The working copy's ``name`` (hook: :class:`~skonline.utils._growing.GrowingStateMixin`
        shares the append-only buffers; the ensembles keep frozen experts by reference;
        ``_recycled_state`` is copied into the spare the previous call left)."""
        if name in self._fixed_state:
            return value
        if name in self._recycled_state and isinstance(value, np.ndarray):
            spare = _recycle.reuse(context, name, value) if context else None
            return _recycle.copied(_copied(value) if spare is None else spare)
        return _copied(value)

    def _discard_attempt(self):
        """Run when an attempt fails: nested estimators whose working copies share buffers with
        them discard too (:class:`~skonline.utils._growing.GrowingStateMixin` zeroes what the
        attempt wrote past the used block of the buffers it shares)."""
        for k, v in self.__dict__.items():
            if _is_state(k):
                for est in _nested_online(v):
                    est._discard_attempt()

    def _raise_nonfinite(self, what, X, y, reset, from_fit, fit_params):
        """Reject the chunk: a ``FloatingPointError`` naming the first row that makes the state, the
        derived state or the prequential outputs non-finite (see :func:`nonfinite_state`). The row
        is found by replaying prefixes of the chunk on working copies (bisection: only on this
        error path)."""
        if _LOCATING_ROW.get():
            raise FloatingPointError(what)
        row = self._first_nonfinite_row(X, y, reset, from_fit, fit_params)
        where = f"Row {row} of this chunk" if row is not None else "This chunk"
        raise FloatingPointError(
            f"{where} would make {type(self).__name__}'s {what} non-finite (NaN or inf: the "
            "values are beyond what float64 arithmetic of this algorithm can represent); the chunk "
            "was rejected and the estimator is unchanged. Check the scale of the features and "
            "targets."
        )

    def _first_nonfinite_row(self, X, y, reset, from_fit, fit_params):
        from sklearn.utils import _safe_indexing

        try:
            n = X.shape[0] if hasattr(X, "shape") else len(X)
        except TypeError:
            return None

        def bad(stop):
            Xs = _safe_indexing(X, slice(0, stop))
            ys = None if y is None else _safe_indexing(y, slice(0, stop))
            try:
                self._attempt(Xs, ys, reset=reset, from_fit=from_fit, **_row_kwargs(fit_params, n, stop))
            except (FloatingPointError, ArithmeticError):
                return True
            return False

        token = _LOCATING_ROW.set(True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lo, hi = 0, n  # the first lo rows are fine; the first hi rows are not
                while hi - lo > 1:
                    mid = (lo + hi) // 2
                    if bad(mid):
                        hi = mid
                    else:
                        lo = mid
        except Exception:  # the replay itself failed: report the chunk, not a row
            return None
        finally:
            _LOCATING_ROW.reset(token)
        return hi - 1

    def _state_keys(self):
        # the learned state: every attribute ending with an underscore (``_validated_params``,
        # a cache of the last validated parameters, is not state: never reset)
        return [k for k in vars(self) if _is_state(k)]

    def _reset(self):
        for k in self._state_keys():
            delattr(self, k)
