"""Online ensembles of scikit-learn models aggregated by an expert rule.

Chunk protocol (``partial_fit(X, y)``, one chunk of the stream):

1. every expert predicts the chunk: a frozen expert with its state; an online expert with
   ``partial_fit_predict`` (every skonline learner) learns the chunk in its own pass and gives each
   row's prediction made *before* that row (prequential, so it is exact online learning whatever
   the chunk size); any other online expert predicts with its state and learns in step 3 (before
   its first chunk it is *asleep*, as is an expert whose prediction is not finite, and a skonline
   expert on a row it refuses for its numerics: see ``_prequential_call``);
2. the experts' losses on the chunk form a loss matrix (n, K), scaled to [0, 1]; the rule runs over
   it row by row in its compiled pass, giving the weights played at each row, and the ensemble's
   prediction for each row mixes the experts' predictions with that row's weights;
3. the online experts without ``partial_fit_predict`` learn the chunk (their own ``partial_fit``).

A chunk of one row is the exact online protocol (predict, reveal, update, learn). Larger chunks
keep the experts without ``partial_fit_predict`` frozen within the chunk, so with such online
experts the result depends on the chunking (by design); with frozen and skonline experts only,
every chunking gives the same result (up to the experts' own rounding differences between batch
sizes, e.g. BLAS kernels in ``predict``).
"""

import functools
import inspect
import numbers
import pickle
import struct
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import NotFittedError
from sklearn.frozen import FrozenEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._atomic import _LOCATING_ROW
from ..base import (
    OnlineClassifierMixin,
    OnlineMixin,
    OnlineRegressorMixin,
    _copied,
    make_generator,
    reads_state,
    running_sum,
    state_scalar,
)
from ..exceptions import DataAdviceWarning
from ..utils import _progress
from ..utils._deprecation import DEPRECATED
from ..utils._threads import effective_n_threads, run_tasks
from ..utils._warnings import warn
from ..utils.validation import label_positions, rows_for
from . import _ensemble_core as core
from ._rules import FixedShare, _BaseRule

__all__ = ["OnlineEnsembleRegressor", "OnlineEnsembleClassifier"]


#: the default rule's sharing rate: Fixed Share's prior probability of a switch at each row
DEFAULT_SHARE = 0.001


def default_rule():
    """The ensembles' rule when ``rule=None``: Fixed Share with AdaHedge's adaptive learning rate
    and a sharing rate of ``DEFAULT_SHARE``."""
    return FixedShare(eta="adaptive", share_rate=DEFAULT_SHARE)


#: the default experts whose cost per row grows with the number of columns, not with the
#: non-zeros of a row, and the widest stream each joins: the linear AWV keeps a d x d matrix
#: (O(d^2) memory and time per row: the width where ScaleInvariant*'s invariance='auto' leaves
#: its O(d^2) full invariance); GroupDRO computes on dense rows (O(d) per row on a CSR stream, the
#: width where skonline passes rows as CSR). Beyond, the scale-invariant learner covers the
#: linear family at O(non-zeros) per row.
WIDTH_LIMITS = {"awv": 200, "dro": 4_096}


def default_estimators(task, random_state=None, n_features=None):
    """The experts of ``OnlineEnsembleClassifier()`` / ``OnlineEnsembleRegressor()``
    (``estimators=None``): skonline's own learners, one per family.

    * ``'linear'``: :class:`~skonline.linear_model.ScaleInvariantClassifier` /
      :class:`~skonline.linear_model.ScaleInvariantRegressor` (scale-invariant linear model);
    * ``'dro'``: :class:`~skonline.dro.GroupDROClassifier` / :class:`~skonline.dro.GroupDRORegressor`
      (standardised linear model by averaged stochastic mirror descent; one group);
    * ``'awv'`` (regression only): :class:`~skonline.kernel_ridge.AWVRegressor` (online ridge
      with forgetting);
    * ``'kernel_selection'``: :class:`~skonline.kernel_selection.KernelSelectionClassifier` /
      :class:`~skonline.kernel_selection.KernelSelectionRegressor` (Gaussian kernels of several
      bandwidths, selected online);
    * ``'pkawv'``: :class:`~skonline.kernel_ridge.PKAWVClassifier` /
      :class:`~skonline.kernel_ridge.PKAWVRegressor` (kernel ridge on degree-2 Taylor features up to
      30 columns, on Nystrom features of at most its default ``max_components`` beyond).

    Each at its defaults. On a stream wider than
    ``WIDTH_LIMITS`` (200 columns for ``'awv'``, where the scale-invariant learner's ``'auto'``
    also leaves its O(d^2) full invariance; 4,096 for ``'dro'``) those experts are left out: their
    cost per row grows with the columns, not the non-zeros. Chosen by measurement on the
    development streams of ``benchmarks/defaults.py`` (``benchmarks/ensemble.py`` reports the
    ensemble against each of them). Every one is prequential (``partial_fit_predict``), so the
    ensemble is exactly online and chunk-invariant.

    Parameters
    ----------
    task : {'classifier', 'regressor'}
    random_state : None, int, RandomState or Generator
        Seeds the experts that draw random numbers (one integer each, as scikit-learn's bagging
        does); ``None`` leaves them unseeded.
    n_features : int or None, default=None
        The stream's number of columns: the experts of ``WIDTH_LIMITS`` join only up to their
        width. ``None``: every expert.

    Returns
    -------
    estimators : list of (str, estimator)
    """
    from ..dro import GroupDROClassifier, GroupDRORegressor
    from ..kernel_ridge import AWVRegressor, PKAWVClassifier, PKAWVRegressor
    from ..kernel_selection import KernelSelectionClassifier, KernelSelectionRegressor
    from ..linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor

    if task == "classifier":
        pairs = [("linear", ScaleInvariantClassifier()), ("dro", GroupDROClassifier()),
                 ("kernel_selection", KernelSelectionClassifier()),
                 ("pkawv", PKAWVClassifier())]
    else:
        pairs = [("linear", ScaleInvariantRegressor()), ("dro", GroupDRORegressor()), ("awv", AWVRegressor()),
                 ("kernel_selection", KernelSelectionRegressor()),
                 ("pkawv", PKAWVRegressor())]
    if random_state is not None:
        rng = make_generator(random_state)
        for _, est in pairs:
            if "random_state" in est.get_params(deep=False):
                est.set_params(random_state=int(rng.integers(np.iinfo(np.int32).max)))
    if n_features is not None:  # after the seeds: each expert's seed does not depend on the width
        pairs = [(name, est) for name, est in pairs if n_features <= WIDTH_LIMITS.get(name, n_features)]
    return pairs

_EPS_PROBA = 1e-15
#: The experts learn a chunk in threads, or one after another, whichever is faster per row on the
#: stream: threads pay only where the experts' compiled passes outweigh each call's Python work
#: (validation, working copy), which waits for the GIL in threads. Measured with the default
#: classifier on 100-row chunks (2 CPUs), threads over one after another: magic04 and cod-rna (8-10
#: features) 0.84 / 0.82, ijcnn1 1.16, phishing 1.19, adult 1.31; scale.py's 10 features by chunk
#: size 100 / 300 / 1,000: 0.59 / 0.81 / 1.09, 100 features: 1.01 / 1.22 / 1.21. So the ensemble
#: times both: each way runs ``THREADS_PROBE_CHUNKS`` chunks in a row when it is timed, and a way's
#: time is the least seconds per row of its last ``THREADS_PROBE_CHUNKS`` chunks (one chunk's time is
#: noisy, and the first chunk in threads after a pause is slow). The way not in use is timed again
#: after ``THREADS_PROBE_MIN`` chunks, then twice as many each time it loses, at most
#: ``THREADS_PROBE_MAX`` (a losing timing then costs about 1 % of the time). The timings are not
#: state (not pickled); either way gives the same bits.
THREADS_PROBE_CHUNKS = 3
THREADS_PROBE_MIN = 8
THREADS_PROBE_MAX = 128
#: chunks whose experts took at least this long together on the previous chunk run in threads
#: without timing (on 100 dense features, chunks of 300 / 1,000 rows, about 10 / 27 ms: threads
#: 1.22 / 1.21x faster): the timings' own cost (chunks run the slower way to time it) buys nothing
THREADS_MIN_SECONDS = 0.008
#: ``n_jobs`` of both ensembles: None, a positive count, or -1, -2, ... (all CPUs, all but one, ...)
_N_JOBS_CONSTRAINT = [None, Interval(numbers.Integral, None, -1, closed="right"),
                      Interval(numbers.Integral, 1, None, closed="left")]
#: the default experts' notes about their own settings, which are the ensemble's choice
#: (default_estimators) and which a user of the ensemble does not set: a growing state reaching
#: its budget (skonline.utils._growing.warn_growth), kernel selection's advice for short
#: multiclass streams, PKAWV's size of the Taylor map, the scale-invariant learner's advice on
#: collinear columns
_DEFAULT_EXPERT_NOTES = (
    r"\w+: .* reached the budget \w+=",
    r"KernelSelectionClassifier: a short multiclass stream",
    r"PKAWV\w+: degree=\d+ on \d+ features gives",
    r"\w+: [\d,]+ features: a Gaussian kernel approximated",
    r"ScaleInvariant\w+ \(invariance='full'\): nearly collinear features",
)
#: the notes as one pattern: one filter per call instead of one per note (each filter costs a few
#: microseconds to add and to remove, on every chunk)
_DEFAULT_EXPERT_NOTE = "(?:" + "|".join(_DEFAULT_EXPERT_NOTES) + ")"


def _threads_chosen(timing):
    """Whether the timed choice (:func:`_next_threads_timing`) runs the next chunk in threads."""
    return timing is not None and timing["threads"]


def _next_threads_timing(timing, in_threads, seconds, n_rows):
    """The record of the two ways of running the experts (threads or one after another) after a
    chunk that ran ``in_threads`` in ``seconds``; its ``'threads'`` is the way of the next chunk.

    ``timing`` (None before the first chunk, whose time is not kept: it compiles the experts'
    passes) holds the seconds per row of each way's last ``THREADS_PROBE_CHUNKS`` chunks, the way
    in use, whether it is being timed against the other (a *probe*), the chunks run in it, and the
    gap before the next probe. The first chunks run one after another, then the same number in
    threads; from then on the way with the least seconds per row over its last chunks is kept,
    and the other is probed after ``gap`` chunks (``THREADS_PROBE_MIN``, doubled each time it
    loses, at most ``THREADS_PROBE_MAX``), or at once if the way in use becomes slower than the
    other was.
    """
    k = THREADS_PROBE_CHUNKS
    if timing is None:
        return {"times": {False: (), True: ()}, "threads": False, "probe": False, "run": 0,
                "gap": THREADS_PROBE_MIN}
    times = dict(timing["times"])
    times[in_threads] = (*times[in_threads], seconds / max(n_rows, 1))[-k:]
    t = dict(timing, times=times, run=timing["run"] + 1)
    if len(times[False]) < k:  # the first timings, one after another
        return t
    if not times[True]:  # then the first timing of threads
        return dict(t, threads=True, probe=True, run=0)
    mine, theirs = min(times[in_threads]), min(times[not in_threads])
    if t["probe"]:
        if t["run"] < k:
            return t
        if mine < theirs:  # the way timed is faster: kept; the other probed again soon
            return dict(t, threads=in_threads, probe=False, run=0, gap=THREADS_PROBE_MIN)
        return dict(t, threads=not in_threads, probe=False, run=0, gap=min(2 * t["gap"], THREADS_PROBE_MAX))
    if t["run"] >= t["gap"] or (t["run"] >= k and mine > theirs):
        return dict(t, threads=not in_threads, probe=True, run=0)
    return t


class _ExpertList(list):
    """The fitted experts, pickled canonically: estimators are flattened attribute by attribute and
    each leaf value is pickled on its own (no pickle memo shared across values), so that equal states
    give equal pickles whatever objects (such as interned strings) the experts share in memory."""

    def __reduce__(self):
        return (_experts_from_bytes, (b"".join(_encode(e) for e in self), len(self)))


def _blob(b):
    return struct.pack("<Q", len(b)) + b


def _encode(obj):
    state = obj.__getstate__() if isinstance(obj, BaseEstimator) else None
    if not isinstance(state, dict):
        return b"P" + _blob(pickle.dumps(obj, protocol=4))
    out = [b"E", _blob(pickle.dumps(type(obj), protocol=4)), struct.pack("<Q", len(state))]
    for k, v in state.items():
        out.append(_blob(k.encode("utf-8")))
        out.append(_encode(v))
    return b"".join(out)


def _read_blob(buf, i):
    (n,) = struct.unpack_from("<Q", buf, i)
    i += 8
    return buf[i:i + n], i + n


def _decode(buf, i):
    tag = buf[i:i + 1]
    i += 1
    if tag == b"P":
        b, i = _read_blob(buf, i)
        return pickle.loads(b), i
    b, i = _read_blob(buf, i)
    cls = pickle.loads(b)
    (n,) = struct.unpack_from("<Q", buf, i)
    i += 8
    state = {}
    for _ in range(n):
        k, i = _read_blob(buf, i)
        state[k.decode("utf-8")], i = _decode(buf, i)
    obj = cls.__new__(cls)
    obj.__setstate__(state)
    return obj, i


def _experts_from_bytes(buf, n):
    out = _ExpertList()
    i = 0
    for _ in range(n):
        obj, i = _decode(buf, i)
        out.append(obj)
    return out


@functools.cache
def _takes_groups(cls):
    """Whether the ``partial_fit`` of estimators of class ``cls`` takes ``groups``."""
    fit = getattr(cls, "partial_fit", None)
    return fit is not None and "groups" in inspect.signature(fit).parameters


def _is_fitted(est):
    try:
        check_is_fitted(est)
        return True
    except NotFittedError:
        return False
    except (TypeError, ValueError):
        return False


class _OnlineEnsembleBase:
    """Shared machinery of the two ensembles."""

    #: the running target range is +-inf before the first row
    _nonfinite_state_ok = ("_y_min_", "_y_max_")

    #: the generator every estimator with a ``random_state`` gets at its first call: an ensemble
    #: never draws from it (its default experts are seeded from ``random_state`` itself,
    #: :func:`default_estimators`), so a call's working copy shares it instead of copying it
    _fixed_state = ("_rng_",)

    #: CSR rows accepted, in one container decided by the width of the stream (see
    #: ``OnlineMixin._row_container``): dense up to 4,096 features; beyond, CSR rows for the
    #: experts whose tags accept sparse input and dense rows for the others (``rows_for``)
    _accept_sparse = True
    _row_container = "stream"

    #: timings, not state (never pickled): the seconds each expert took on the previous chunk
    #: (``_expert_seconds``: in threads the costliest start first) and the record of the two ways
    #: of running them (``_threads_timing``: :func:`_next_threads_timing`)
    _not_pickled = (*OnlineMixin._not_pickled, "_expert_seconds", "_threads_timing")

    # ------------------------------------------------------------------ params
    def get_params(self, deep=True):
        """Parameters, including ``<name>__<param>`` of the experts and ``rule__<param>``.

        Parameters
        ----------
        deep : bool, default=True

        Returns
        -------
        params : dict
        """
        out = super().get_params(deep=deep)
        if not deep or self.estimators is None:  # the default experts are resolved when fitting
            return out
        try:
            out.update(self.estimators)
        except (TypeError, ValueError):
            # estimators is not (yet) a list of (name, estimator) pairs: set_params calls
            # get_params before the check in fit can say so.
            return out
        for name, estimator in self.estimators:
            if hasattr(estimator, "get_params"):
                for key, value in estimator.get_params(deep=True).items():
                    out[f"{name}__{key}"] = value
        return out

    def set_params(self, **params):
        """Set parameters, including the experts' (``<name>__<param>``) and the rule's.

        With the default ``rule=None``, setting a ``rule__<param>`` first puts a fresh default
        rule (:func:`default_rule`, the rule ``None`` stands for) in ``rule``, then sets the
        parameter on it, so
        ``GridSearchCV(ens, {"rule__eta": [...]})`` works on the default rule. The new instance is
        the estimator's own (never shared with other estimators or with the default).

        Parameters
        ----------
        **params : dict

        Returns
        -------
        self : object
        """
        if params.get("rule", self.rule) is None and any(k.startswith("rule__") for k in params):
            params["rule"] = self._default_rule()
        # 1. the whole list, 2. experts replaced by name, 3. the experts' and our own parameters.
        if "estimators" in params:
            self.estimators = params.pop("estimators")
        items = self.estimators
        if isinstance(items, list) and items and all(isinstance(i, tuple) and len(i) == 2 for i in items):
            names = [name for name, _ in items]
            for key in list(params):
                if "__" not in key and key in names:
                    value = params.pop(key)
                    self.estimators = [(n, value if n == key else e) for n, e in self.estimators]
        super().set_params(**params)
        return self

    @staticmethod
    def _default_rule():
        """The rule ``rule=None`` stands for (a new instance each time)."""
        return default_rule()

    def _check_params(self):
        self._check_rule_and_bound()
        if self.estimators is None:
            return
        if not isinstance(self.estimators, (list, tuple)) or len(self.estimators) == 0:
            raise ValueError("estimators must be None or a non-empty list of (name, estimator) pairs.")
        names = []
        for item in self.estimators:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
                raise ValueError(f"estimators must be (name, estimator) pairs; got {item!r}.")
            names.append(item[0])
        if len(set(names)) != len(names):
            raise ValueError(f"Names provided are not unique: {names!r}")
        clash = sorted(set(names).intersection(self.get_params(deep=False)))
        if clash:
            raise ValueError(f"Estimator names conflict with constructor arguments: {clash!r}")
        if any("__" in name for name in names):
            raise ValueError(f"Estimator names must not contain __: got {[n for n in names if '__' in n]!r}")
        for name, est in self.estimators:
            online = self._learns_online(est)
            if online and not hasattr(est, "partial_fit"):
                raise ValueError(f"Expert {name!r} has no partial_fit: it cannot learn online (update_experts=True).")
            if not online and not _is_fitted(est):
                raise ValueError(
                    f"Expert {name!r} has no partial_fit and is not fitted: fit it first (and wrap it in "
                    "sklearn.frozen.FrozenEstimator so that clone keeps it fitted), or use an online model."
                )

    def _check_rule_and_bound(self):
        if self.rule is not None and not isinstance(self.rule, _BaseRule):
            raise ValueError(
                f"rule must be an expert-aggregation rule of skonline.experts (e.g. PCS()); got {self.rule!r}."
            )
        if self.loss_bound != "auto" and not (
            isinstance(self.loss_bound, numbers.Real) and 0 < self.loss_bound < np.inf
        ):
            raise ValueError(f"loss_bound must be 'auto' or a positive finite number; got {self.loss_bound!r}.")

    def _learns_online(self, est):
        if self.update_experts == "auto":
            # FrozenEstimator forwards partial_fit to the model it wraps, which would then learn
            return hasattr(est, "partial_fit") and not isinstance(est, FrozenEstimator)
        return bool(self.update_experts)

    def _copy_state(self, name, value, context):
        # frozen experts never change, and skonline's prequential experts are never changed in
        # place (each call learns on the expert's own working copy, which replaces it in the
        # ensemble's working copy: _prequential_call): the working copy keeps references to both;
        # other online experts (and the rule) are copied
        if name == "estimators_" and value is not None:
            return _ExpertList(_copied(e) if self.online_[k] and not self._replaced_by_call(e) else e
                               for k, e in enumerate(value))
        return super()._copy_state(name, value, context)

    def _replaced_by_call(self, est):
        """A skonline learner used prequentially: learns through :meth:`_prequential_call`."""
        return isinstance(est, OnlineMixin) and self._is_prequential(est)

    def _prequential_call(self, k, method, X, y, **kw):
        """Expert ``k`` learns the chunk; return its prequential ``method`` outputs
        (``partial_fit_<method>``) and the mask of the rows it sleeps on (``None``: none).

        An expert that refuses the chunk for its numerics (a ``FloatingPointError``: a row its
        float64 arithmetic cannot take, e.g. a feature of 1e12 for a full-matrix learner; the
        expert is then unchanged) does not make the ensemble refuse it: the expert learns the
        chunk in parts (bisection) and *sleeps* on each row it refuses alone, which the other
        experts predict and learn. A refusal depends only on the expert's state and the row, so
        this is what row-by-row learning gives, whatever the chunking."""
        try:
            return self._prequential_part(k, method, X, y, kw), None
        except FloatingPointError as exc:
            first = exc
        n = X.shape[0]
        parts, asleep = [], np.zeros(n, dtype=bool)

        def learn(a, b, refused=False):  # rows [a, b); refused: already tried as a whole
            if not refused:
                try:
                    parts.append((a, self._prequential_part(k, method, X[a:b], y[a:b], kw)))
                    return
                except FloatingPointError:
                    pass
            if b - a == 1:
                asleep[a] = True
                return
            m = (a + b) // 2
            learn(a, m)
            learn(m, b)

        learn(0, n, refused=True)
        reason = str(first).split("; the chunk was rejected")[0]
        warn(
            f"{type(self).__name__}: expert {self.expert_names_[k]!r} refused {int(asleep.sum())} row(s) of "
            f"this chunk ({reason}); it sleeps on them (it neither predicts nor learns them) and the other "
            "experts predict and learn them.",
            DataAdviceWarning,
        )
        if not parts:
            return None, asleep
        out0 = parts[0][1]
        out = np.empty((n,) + out0.shape[1:], dtype=out0.dtype)
        out[asleep] = np.nan if out.dtype.kind in "fc" else out0[0]
        for a, o in parts:
            out[a:a + o.shape[0]] = o
        return out, asleep

    def _prequential_calls(self, jobs, X, y):
        """``{k: (outputs, asleep)}``: :meth:`_prequential_call` of each ``(k, method, kw)`` of
        ``jobs``. skonline's own experts learn in threads (``n_jobs``; their compiled passes release
        the GIL), the costliest first: always when the experts took at least ``THREADS_MIN_SECONDS``
        together on the previous chunk, and below when that is the faster way per row on this
        stream as timed (:func:`_next_threads_timing`). Each learns on its own working copy, so the outputs are
        the same bits whatever the number of threads. An expert that refuses rows for its numerics
        is run again here, alone (:meth:`_prequential_call`: bisection and sleeping, which never
        run in a thread)."""
        if not jobs:  # predict: nothing learns, nothing is timed (a reader never writes)
            return {}
        threaded = [job for job in jobs if isinstance(self.estimators_[job[0]], OnlineMixin)]
        n_threads = effective_n_threads(self.n_jobs, len(threaded))
        cost = getattr(self, "_expert_seconds", {})
        timing = getattr(self, "_threads_timing", None)
        # costly chunks: threads (they always paid there); cheaper ones: the faster way as timed
        timed = sum(cost.get(job[0], 0.0) for job in threaded) < THREADS_MIN_SECONDS
        in_threads = n_threads > 1 and (not timed or _threads_chosen(timing))
        begin = time.perf_counter()
        if not in_threads:
            out, seconds = {}, {}
            for k, m, kw in jobs:
                start = time.perf_counter()
                out[k] = self._prequential_call(k, m, X, y, **kw)
                seconds[k] = time.perf_counter() - start
            self._expert_seconds = seconds
        else:
            threaded.sort(key=lambda job: -cost.get(job[0], 0.0))

            def task(job):
                k, method, kw = job

                def run():
                    token = _LOCATING_ROW.set(True)  # a refusal is only reported: located below, alone
                    start = time.perf_counter()
                    try:
                        return self._prequential_part(k, method, X, y, kw), time.perf_counter() - start
                    except FloatingPointError:
                        return None, 0.0
                    finally:
                        _LOCATING_ROW.reset(token)

                return run

            results = run_tasks([task(job) for job in threaded], n_threads)
            self._expert_seconds = {job[0]: seconds for job, (_, seconds) in zip(threaded, results)}
            done = {job[0]: out for job, (out, _) in zip(threaded, results) if out is not None}
            out = {k: (done[k], None) if k in done else self._prequential_call(k, m, X, y, **kw)
                   for k, m, kw in jobs}
        if n_threads > 1 and timed:
            self._threads_timing = _next_threads_timing(timing, in_threads, time.perf_counter() - begin,
                                                        X.shape[0])
        return out

    def _prequential_part(self, k, method, X, y, kw):
        """One learning call of expert ``k`` on rows ``X``: its prequential ``method`` outputs. A
        skonline learner learns on its own working copy (:meth:`~skonline.base.OnlineMixin._attempt`),
        which replaces it in ``estimators_``: the expert the committed ensemble holds is never
        changed, so the ensemble needs no copy of it (one copy of the expert's state per call, not
        two)."""
        est = self.estimators_[k]
        X = rows_for(est, X)
        kw = dict(kw, **self._expert_kwargs(est, X.shape[0]))
        if not self._replaced_by_call(est):
            return np.asarray(getattr(est, f"partial_fit_{method}")(X, y, **kw))
        work, raw = est._attempt(X, y, reset=not est._is_initialized(), from_fit=False, **kw)
        self.estimators_[k] = work
        return np.asarray(work._response(raw, method))

    @property
    def _chunk_dependent(self):
        if self.estimators is None:  # skonline's learners only: prequential
            return False
        try:
            return any(self._learns_online(est) and not self._is_prequential(est) for _, est in self.estimators)
        except Exception:  # pragma: no cover - malformed parameters
            return True

    #: the prequential method an online expert needs to be used prequentially (see _is_prequential)
    _PREQUENTIAL_METHOD = "partial_fit_predict"

    def _is_prequential(self, est):
        """An online expert that returns, while learning a chunk, each row's prediction made before
        learning it (every skonline learner): it is used prequentially, row by row, so it is
        awake from the first row and never predicts a row with a state older than the row before."""
        return hasattr(est, self._PREQUENTIAL_METHOD)

    def _learn_blocks(self, chunk, verbose):
        if verbose > 0 and self._chunk_dependent:
            # blocks would change what experts that follow the chunk protocol learn: one block,
            # one progress line (the experts stay quiet unless they were given verbose themselves)
            interval = _progress.Interval()
            raw = self._learn_blocks(chunk, 0)
            self._print_progress(chunk.n_samples, interval.lap())
            return raw
        if self.estimators is not None:
            return super()._learn_blocks(chunk, verbose)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_DEFAULT_EXPERT_NOTE, category=UserWarning)
            return super()._learn_blocks(chunk, verbose)

    @staticmethod
    def _expert_kwargs(est, n):
        """Keywords of an expert's learning call: one group for an expert that takes ``groups``
        (GroupDRO: the single-group model it would train without them, without its warning that
        groups were forgotten)."""
        if _takes_groups(type(est)):
            return {"groups": np.zeros(n, dtype=np.int64)}
        return {}

    def _prequential_experts(self):
        return [k for k, est in enumerate(self.estimators_) if self.online_[k] and self._is_prequential(est)]

    # ------------------------------------------------------------------ state
    def _expert_pairs(self, n_features=None):
        """The experts as (name, estimator) pairs: ``estimators``, or for ``estimators=None`` the
        default experts (:func:`default_estimators`) for a stream of ``n_features`` columns. The
        one place where ``None`` is resolved; the result is kept in the fitted ``estimators_`` and
        ``expert_names_`` (the parameter is never changed)."""
        if self.estimators is None:
            return default_estimators(self._TASK, self.random_state, n_features=n_features)
        return list(self.estimators)

    def _allocate(self, chunk):
        pairs = self._expert_pairs(chunk.X.shape[1])
        self.expert_names_ = [name for name, _ in pairs]
        self.estimators_ = _ExpertList()
        self.online_ = np.zeros(len(pairs), dtype=bool)
        for k, (_, est) in enumerate(pairs):
            if self._learns_online(est):
                self.estimators_.append(clone(est))
                self.online_[k] = True
            else:
                self.estimators_.append(est)
        self._expert_fitted_ = ~self.online_
        rule = self._default_rule() if self.rule is None else clone(self.rule)
        params = rule.get_params()
        if "loss_bound" in params:  # the rule sees losses in [0, 1] (a retired loss_range is reset)
            rule.set_params(loss_bound=1.0, **({"loss_range": DEPRECATED} if "loss_range" in params else {}))
        self.rule_ = rule
        # the running loss scale (LossState): scale of the last row, range of the targets seen, rows
        # whose target was far outside that range, targets seen
        self._loss_scale_ = np.zeros(1)
        self._y_min_ = np.full(1, np.inf)
        self._y_max_ = np.full(1, -np.inf)
        self._n_wild_targets_ = np.zeros(1)
        self._n_targets_ = np.zeros(1)
        self.expert_cumulative_losses_ = np.zeros(len(pairs))
        self._y_sum_ = 0.0

    @property
    def weights_(self):
        """Current weights of the experts (the rule's ``weights_``)."""
        check_is_fitted(self, "rule_")
        if not hasattr(self.rule_, "weights_"):
            return np.full(len(self.estimators_), 1.0 / len(self.estimators_))
        return self.rule_.weights_

    loss_scale_ = state_scalar(
        "_loss_scale_", float, "The scale of the last round's losses (``loss_bound='auto'``; see ``loss_bound``)."
    )

    @property
    def named_estimators_(self):
        """The experts by name."""
        check_is_fitted(self, "estimators_")
        return dict(zip(self.expert_names_, self.estimators_))

    def _aggregate(self, Ls, n_none):
        """Run the rule over the rows of the scaled loss matrix that have an awake expert; return
        the weights played at each row (n, K), zero rows where every expert is asleep."""
        n, K = Ls.shape
        if n_none == 0:
            return self.rule_._learn_trusted(Ls)
        W = np.zeros((n, K))
        rows = ~np.isnan(Ls).all(axis=1)
        if rows.any():
            W[rows] = self.rule_._learn_trusted(np.ascontiguousarray(Ls[rows]))
        return W

    @property
    def _loss_name(self):
        return self.loss

    def _loss_records(self):
        """The :class:`~skonline.experts._ensemble_core.LossSettings` of the next chunk and the
        :class:`~skonline.experts._ensemble_core.LossState` over the state attributes."""
        auto = self.loss_bound == "auto"
        settings = core.LossSettings(
            loss=self._LOSS_CODES[self._loss_name], quantile=float(getattr(self, "quantile", 0.5)), auto=auto,
            inv_bound=0.0 if auto else 1.0 / float(self.loss_bound),
            clip=bool(getattr(self, "clip_predictions", False)),
        )
        state = core.LossState(
            scale=self._loss_scale_, y_min=self._y_min_, y_max=self._y_max_, n_wild=self._n_wild_targets_,
            n_targets=self._n_targets_, expert_cum_losses=self.expert_cumulative_losses_,
        )
        return settings, state

    def _expert_learn(self, X, y, **kw):
        prequential = set(self._prequential_experts())
        for k, est in enumerate(self.estimators_):
            if self.online_[k] and k not in prequential:
                est.partial_fit(rows_for(est, X), y, **kw, **self._expert_kwargs(est, X.shape[0]))
                self._expert_fitted_[k] = True

    def _fallback_mean(self, y):
        """Prequential running mean of the targets before each row (0 before the first)."""
        n = y.shape[0]
        seen = self.n_samples_seen_
        cum = np.concatenate([[self._y_sum_], self._y_sum_ + np.cumsum(y)])[:-1]
        cnt = seen + np.arange(n)
        return np.where(cnt > 0, cum / np.maximum(cnt, 1), 0.0)

    def _validate_estimators_for_predict(self):
        check_is_fitted(self, "estimators_")


class OnlineEnsembleRegressor(_OnlineEnsembleBase, OnlineRegressorMixin, BaseEstimator):
    """Online aggregation of scikit-learn regressors by an expert rule.

    Each round the ensemble predicts ``sum_i w_t[i] f_i(x_t)`` with the weights ``w_t`` of an
    aggregation rule (default: :class:`FixedShare` with an adaptive learning rate, which tracks the
    best expert when it changes over the stream), then charges each expert its loss on ``y_t``. For
    a convex loss the ensemble's loss is at most the mixture loss ``<w_t, l_t>`` (Jensen), so the
    rule's tracking regret bound transfers to the ensemble's predictions (on the scaled losses).

    Chunk protocol: for each chunk passed to ``partial_fit``, (1) the experts predict the chunk with
    their current state, except that an online expert with ``partial_fit_predict`` (every skonline
    learner) learns the chunk in its own pass and gives each row's prediction made before that
    row, (2) the rule runs row by row over the chunk's loss matrix in compiled code (the
    prediction of each row mixes the experts' predictions with the weights of that row), (3) the
    other online experts learn the chunk. A chunk of one row is the exact online protocol. An
    online expert without ``partial_fit_predict`` is *asleep* (the rule's sleeping experts) until
    it has learned its first chunk, and so is an expert whose prediction is not finite. Rows where
    every expert is asleep get a fallback prediction (regression: the mean of the past targets;
    classification: uniform probabilities) and do not update the rule. With frozen and skonline
    experts only, every chunking gives the same result (up to the experts' own rounding
    differences between batch sizes).

    Parameters
    ----------
    estimators : list of (str, estimator) or None, default=None
        The experts. ``None``: skonline's own learners, one per family, at their defaults (linear,
        distributionally robust, kernel selection, kernel ridge; see :func:`default_estimators`,
        resolved at the first call into ``estimators_`` and ``expert_names_``; the parameter stays
        ``None``). They are prequential, so the ensemble's result does not depend on the chunking.
        A model with ``partial_fit`` learns online (cloned at the first call); a model
        without it must be fitted already and is used frozen (wrap it in
        :class:`sklearn.frozen.FrozenEstimator` so that ``clone`` and grid searches keep it fitted).
    rule : aggregation rule of :mod:`skonline.experts`, default=None
        The rule that weighs the experts (cloned; its ``loss_bound`` is set to 1). ``None``:
        ``FixedShare(eta='adaptive', share_rate=0.001)``, Fixed Share with AdaHedge's learning rate
        (it adapts to the observed losses and needs no horizon) and a constant sharing rate, the
        prior probability of a switch at each row. Measured on the development streams and the
        drift scenarios of ``benchmarks/defaults.py`` and ``benchmarks/ensemble.py``, 0.001
        recovered after a switch of the best expert faster than the decreasing rate 1/(t + 1)
        (``share_rate='decreasing'``), whose weight floor falls with t, and than
        0.0003, without the extra mixing of 0.003. The paper's rules at their worst-case tuning
        (``PCS()``, ``FixedShare()``) shrink their learning rate with the horizon and, measured on
        streams with a switch between frozen experts (``benchmarks/defaults.py``), kept most of
        their weight on the stale expert for thousands of rows. Its parameters are reachable as
        ``rule__<param>`` (e.g. in ``GridSearchCV``), also with the default ``None``: setting
        ``rule__<param>`` then first puts that default rule in ``rule``.
    loss : {'squared_error', 'absolute_error', 'quantile'}, default='squared_error'
        Loss of the experts' predictions: ``(f - y)^2``, ``|f - y|`` or the pinball loss
        ``max(q (y - f), (q - 1) (y - f))`` of the quantile ``quantile`` (scikit-learn's names,
        as in :class:`~sklearn.ensemble.HistGradientBoostingRegressor`; ``'squared'``,
        ``'absolute'`` and ``'pinball'`` are accepted aliases).
    quantile : float in (0, 1), default=0.5
        Quantile level of the pinball loss (``loss='quantile'``).
    clip_predictions : bool, default=True
        Clip each expert's prediction to the range of the targets seen before the row (a no-op
        until two targets were seen). A clipped prediction is never farther from a target inside
        that range, it keeps one diverging expert from ruining the mixture (the clipped simplex
        gives every expert some weight), and with ``loss_bound='auto'`` it keeps the scaled losses
        in [0, 1] without clipping them, so that the rule's guarantee carries over to the mixture.
    loss_bound : 'auto' or float, default='auto'
        How the experts' losses are mapped to [0, 1] for the rule, row by row (so that the scale of a
        row is known when the row is revealed and does not depend on the chunking): a loss ``x``
        becomes ``min(x / B, 1)``. A float gives B. ``'auto'``: for regression, the loss of a
        prediction off by the range of the targets seen so far (``range^2`` for the squared loss,
        ``range`` for the absolute loss, ``max(q, 1 - q) range`` for the pinball loss; until two
        distinct targets have been seen, the largest loss so far); for classification 1 (0-1
        loss), 2 (Brier) or the largest log loss seen so far (at most ``log(1e15)``). Clipping
        keeps a diverging expert from squashing the other experts' losses to zero.
    update_experts : 'auto' or bool, default='auto'
        ``'auto'``: experts with ``partial_fit`` learn online (a ``FrozenEstimator`` never), the
        others are frozen. ``True``: every expert learns online; ``False``: every expert is frozen
        (must be fitted).
    random_state : None, int, RandomState or Generator, default=None
        Seeds the default experts (``estimators=None``) that draw random numbers, one integer each;
        experts given in ``estimators`` keep their own ``random_state``.
    n_jobs : int or None, default=None
        Threads in which skonline's own experts learn each chunk, side by side (their compiled
        passes release the GIL; experts of other libraries learn one after another, in the calling
        thread). ``None`` or ``-1``: one per CPU available to the process, up to the number of
        experts; ``1``: one after another. Unlike joblib's ``n_jobs`` in scikit-learn, ``None`` does
        not mean 1: the threads never change the result (each expert learns on its own state, so
        any ``n_jobs`` gives the same bits, as ``HistGradientBoostingClassifier``'s OpenMP threads
        do), and an expert that refuses rows for its numerics is handled in the calling thread.
        Whether threads pay depends on the stream and the chunk size (on cheap chunks each
        call's Python work dominates and waits for the GIL), so the ensemble times both ways and
        keeps the faster per row, timing the other again from time to time (chunks on which the
        experts took at least ``THREADS_MIN_SECONDS`` together run in threads).
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metrics (average online loss). The result does not change.
        The ensemble's own progress; the experts stay quiet unless given ``verbose`` themselves.
        With experts that follow the chunk protocol, one line per call.

    Attributes
    ----------
    estimators_ : list of estimators
        The experts (online ones cloned and trained on the stream, frozen ones as given).
    expert_names_ : list of str
        Their names (those of ``estimators``, or of :func:`default_estimators`).
    named_estimators_ : dict
    rule_ : aggregation rule
        The fitted rule; ``rule_.weights_`` are the current weights.
    weights_ : ndarray of shape (n_experts,)
    online_ : ndarray of bool
        Which experts learn online (``update_experts`` resolved per expert; ``'auto'``: those with
        ``partial_fit`` that are not frozen).
    expert_cumulative_losses_ : ndarray of shape (n_experts,)
        Each expert's cumulative (unscaled) loss on the rows where it predicted.
    cumulative_loss_ : float
        The ensemble's cumulative loss (same loss, unscaled) of its prequential predictions.
    loss_scale_ : float
        The scale B of the last round (``loss_bound='auto'``).
    n_samples_seen_ : int
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.frozen import FrozenEstimator
    >>> from sklearn.linear_model import Ridge
    >>> from skonline.experts import OnlineEnsembleRegressor, OCSPlus
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((2000, 3))
    >>> y = np.where(np.arange(2000) < 1000, X[:, 0], -X[:, 0])   # the concept flips midway
    >>> before = FrozenEstimator(Ridge().fit(X[:1000], y[:1000]))
    >>> after = FrozenEstimator(Ridge().fit(X[1000:], y[1000:]))
    >>> ens = OnlineEnsembleRegressor([("before", before), ("after", after)],
    ...                               rule=OCSPlus(n_segments=2), loss="absolute_error")
    >>> y_online = ens.partial_fit_predict(X, y)       # predict each row, then learn it
    >>> ens.weights_.round(2).tolist()
    [0.0, 1.0]
    >>> mse = lambda p: float(np.mean((p - y) ** 2))
    >>> mse(y_online) < 0.2 * min(mse(before.predict(X)), mse(after.predict(X)))
    True
    """

    _parameter_constraints = {
        "estimators": [list, None],
        "rule": [None, BaseEstimator],
        "loss": [StrOptions({"squared_error", "absolute_error", "quantile", "squared", "absolute", "pinball"})],
        "quantile": [Interval(numbers.Real, 0, 1, closed="neither")],
        "loss_bound": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "clip_predictions": ["boolean"],
        "update_experts": [StrOptions({"auto"}), "boolean"],
        "random_state": ["random_state", np.random.Generator],
        "n_jobs": _N_JOBS_CONSTRAINT,
        "verbose": ["verbose"],
    }


    _TASK = "regressor"

    def __init__(self, estimators=None, rule=None, *, loss="squared_error", quantile=0.5, loss_bound="auto",
                 clip_predictions=True, update_experts="auto", random_state=None, n_jobs=None, verbose=0):
        self.estimators = estimators
        self.random_state = random_state
        self.rule = rule
        self.loss = loss
        self.quantile = quantile
        self.loss_bound = loss_bound
        self.clip_predictions = clip_predictions
        self.update_experts = update_experts
        self.n_jobs = n_jobs
        self.verbose = verbose

    _LOSS_CODES = {"squared_error": core.SQUARED, "absolute_error": core.ABSOLUTE, "quantile": core.PINBALL}
    #: accepted aliases of the loss names
    _LOSS_ALIASES = {"squared": "squared_error", "absolute": "absolute_error", "pinball": "quantile"}

    @property
    def _loss_name(self):
        return self._LOSS_ALIASES.get(self.loss, self.loss)

    def _losses(self, P, y):
        """Raw losses (n, K) of predictions P (numpy; NaN propagates)."""
        r = P - y[:, None]
        if self._loss_name == "squared_error":
            return r * r
        if self._loss_name == "absolute_error":
            return np.abs(r)
        q = float(self.quantile)
        return np.maximum(-q * r, (1.0 - q) * r)

    def _expert_predictions(self, X, y=None):
        """(n, K) predictions; NaN for asleep experts. With the targets ``y``, prequential experts
        learn the chunk and give their prequential predictions."""
        n = X.shape[0]
        P = np.full((n, len(self.estimators_)), np.nan)
        prequential = set(self._prequential_experts()) if y is not None else set()
        calls = self._prequential_calls([(k, "predict", {}) for k in sorted(prequential)], X, y)
        for k, est in enumerate(self.estimators_):
            if k in prequential:  # learns the chunk, returning each row's prediction before it
                out, asleep = calls[k]
                if out is not None:
                    P[:, k] = np.asarray(out, dtype=np.float64).reshape(n, -1)[:, 0]
                    self._expert_fitted_[k] = True
                if asleep is not None:
                    P[asleep, k] = np.nan
            elif self._expert_fitted_[k]:
                P[:, k] = np.asarray(est.predict(rows_for(est, X)), dtype=np.float64).reshape(n, -1)[:, 0]
        if not np.isfinite(P.sum()):  # an expert without a finite prediction sleeps on that row
            P[~np.isfinite(P)] = np.nan
        return P

    def _learn(self, chunk):
        X, y = chunk.X, chunk.y
        P = self._expert_predictions(X, y)
        n, K = P.shape
        LR = np.empty((n, K))
        Ls = np.empty((n, K))
        wild_before = self._n_wild_targets_[0]
        settings, state = self._loss_records()
        n_none = core.regression_losses(P, y, settings, state, LR, Ls)
        if self._n_wild_targets_[0] > wild_before:
            warn(
                f"{type(self).__name__}: {int(self._n_wild_targets_[0] - wild_before)} target(s) of this chunk "
                f"lie more than {core.RANGE_GROWTH:g} times the range of the targets seen before them "
                "outside it; they widen the range (the loss scale and the clipping of predictions) only "
                "that far, so one extreme row cannot freeze the weights. Check the targets.",
                DataAdviceWarning,
            )
        W = self._aggregate(Ls, n_none)
        pred = np.empty(n)
        core.mix_regression(P, W, pred)
        if n_none:
            none = ~(W > 0).any(axis=1)
            pred[none] = self._fallback_mean(y)[none]
        self.cumulative_loss_ = running_sum(self.cumulative_loss_, self._losses(pred[:, None], y)[:, 0])
        self._y_sum_ = running_sum(self._y_sum_, y)
        self._expert_learn(X, y)
        return pred

    def _predict_targets(self, X):
        """Mix the experts' predictions with the current weights."""
        check_is_fitted(self, "estimators_")
        X = self._predict_input(X, dtype=np.float64, order="C")
        P = self._expert_predictions(X)
        lo, hi = self._y_min_[0], self._y_max_[0]
        if self.clip_predictions and lo <= hi:
            P = np.clip(P, lo, hi)  # NaN stays NaN
        awake = ~np.isnan(P)
        n_awake = awake.sum(axis=1)
        w = np.where(awake, self.weights_[None, :], 0.0)
        s = w.sum(axis=1)
        # weights renormalised over the experts able to predict (uniform if they all weigh 0)
        w = np.where(s[:, None] > 0, w / np.where(s > 0, s, 1.0)[:, None], awake / np.maximum(n_awake, 1)[:, None])
        pred = np.sum(np.where(awake, P, 0.0) * w, axis=1)
        fallback = self._y_sum_ / self.n_samples_seen_ if self.n_samples_seen_ else 0.0
        return np.where(n_awake > 0, pred, fallback)


class OnlineEnsembleClassifier(_OnlineEnsembleBase, OnlineClassifierMixin, BaseEstimator):
    """Online aggregation of scikit-learn classifiers by an expert rule (mixing probabilities).

    Each round the ensemble predicts the class probabilities ``sum_i w_t[i] p_i(x_t)`` (the one-hot
    vector of ``predict`` for an expert without ``predict_proba``) with the weights ``w_t`` of an
    aggregation rule (default: :class:`FixedShare` with an adaptive learning rate), and the label of
    largest mixed probability; each expert is then charged its loss on ``y_t``.

    Chunk protocol: for each chunk passed to ``partial_fit``, (1) the experts predict the chunk with
    their current state, except that an online expert with ``partial_fit_predict`` (every skonline
    learner) learns the chunk in its own pass and gives each row's prediction made before that
    row, (2) the rule runs row by row over the chunk's loss matrix in compiled code (the
    prediction of each row mixes the experts' predictions with the weights of that row), (3) the
    other online experts learn the chunk. A chunk of one row is the exact online protocol. An
    online expert without ``partial_fit_predict`` is *asleep* (the rule's sleeping experts) until
    it has learned its first chunk, and so is an expert whose prediction is not finite. Rows where
    every expert is asleep get a fallback prediction (regression: the mean of the past targets;
    classification: uniform probabilities) and do not update the rule. With frozen and skonline
    experts only, every chunking gives the same result (up to the experts' own rounding
    differences between batch sizes).

    Parameters
    ----------
    estimators : list of (str, estimator) or None, default=None
        The experts. ``None``: skonline's own learners, one per family, at their defaults (linear,
        distributionally robust, kernel selection, kernel ridge; see :func:`default_estimators`,
        resolved at the first call into ``estimators_`` and ``expert_names_``; the parameter stays
        ``None``). They are prequential, so the ensemble's result does not depend on the chunking.
        A model with ``partial_fit`` learns online (cloned at the first call); a model
        without it must be fitted already and is used frozen (wrap it in
        :class:`sklearn.frozen.FrozenEstimator` so that ``clone`` and grid searches keep it fitted).
    rule : aggregation rule of :mod:`skonline.experts`, default=None
        The rule that weighs the experts (cloned; its ``loss_bound`` is set to 1). ``None``:
        ``FixedShare(eta='adaptive', share_rate=0.001)``, Fixed Share with AdaHedge's learning rate
        (it adapts to the observed losses and needs no horizon) and a constant sharing rate, the
        prior probability of a switch at each row. Measured on the development streams and the
        drift scenarios of ``benchmarks/defaults.py`` and ``benchmarks/ensemble.py``, 0.001
        recovered after a switch of the best expert faster than the decreasing rate 1/(t + 1)
        (``share_rate='decreasing'``), whose weight floor falls with t, and than
        0.0003, without the extra mixing of 0.003. The paper's rules at their worst-case tuning
        (``PCS()``, ``FixedShare()``) shrink their learning rate with the horizon and, measured on
        streams with a switch between frozen experts (``benchmarks/defaults.py``), kept most of
        their weight on the stale expert for thousands of rows. Its parameters are reachable as
        ``rule__<param>`` (e.g. in ``GridSearchCV``), also with the default ``None``: setting
        ``rule__<param>`` then first puts that default rule in ``rule``.
    loss : {'log_loss', 'zero_one', 'brier'}, default='log_loss'
        Loss of each expert: ``-log p_i(y)`` (probabilities clipped at 1e-15), the 0-1 loss of its
        predicted label, or the Brier score ``sum_c (p_i(c) - 1[c = y])^2``. The log loss of the mixture
        is at most the mixture of the log losses (convexity), so the rule's bound transfers; for the
        0-1 loss it holds for the randomised prediction that draws an expert from the weights.
    loss_bound : 'auto' or float, default='auto'
        How the experts' losses are mapped to [0, 1] for the rule, row by row (so that the scale of a
        row is known when the row is revealed and does not depend on the chunking): a loss ``x``
        becomes ``min(x / B, 1)``. A float gives B. ``'auto'``: for regression, the loss of a
        prediction off by the range of the targets seen so far (``range^2`` for the squared loss,
        ``range`` for the absolute loss, ``max(q, 1 - q) range`` for the pinball loss; until two
        distinct targets have been seen, the largest loss so far); for classification 1 (0-1
        loss), 2 (Brier) or the largest log loss seen so far (at most ``log(1e15)``). Clipping
        keeps a diverging expert from squashing the other experts' losses to zero.
    update_experts : 'auto' or bool, default='auto'
        ``'auto'``: experts with ``partial_fit`` learn online (a ``FrozenEstimator`` never), the
        others are frozen. ``True``: every expert learns online; ``False``: every expert is frozen
        (must be fitted).
    random_state : None, int, RandomState or Generator, default=None
        Seeds the default experts (``estimators=None``) that draw random numbers, one integer each;
        experts given in ``estimators`` keep their own ``random_state``.
    n_jobs : int or None, default=None
        Threads in which skonline's own experts learn each chunk, side by side (their compiled
        passes release the GIL; experts of other libraries learn one after another, in the calling
        thread). ``None`` or ``-1``: one per CPU available to the process, up to the number of
        experts; ``1``: one after another. Unlike joblib's ``n_jobs`` in scikit-learn, ``None`` does
        not mean 1: the threads never change the result (each expert learns on its own state, so
        any ``n_jobs`` gives the same bits, as ``HistGradientBoostingClassifier``'s OpenMP threads
        do), and an expert that refuses rows for its numerics is handled in the calling thread.
        Whether threads pay depends on the stream and the chunk size (on cheap chunks each
        call's Python work dominates and waits for the GIL), so the ensemble times both ways and
        keeps the faster per row, timing the other again from time to time (chunks on which the
        experts took at least ``THREADS_MIN_SECONDS`` together run in threads).
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metrics (average online loss; mistake rate). The result does not change.
        The ensemble's own progress; the experts stay quiet unless given ``verbose`` themselves.
        With experts that follow the chunk protocol, one line per call.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimators_ : list of estimators
    expert_names_ : list of str
    named_estimators_ : dict
    rule_ : aggregation rule
    weights_ : ndarray of shape (n_experts,)
    online_ : ndarray of bool
        Which experts learn online (``update_experts`` resolved per expert; ``'auto'``: those with
        ``partial_fit`` that are not frozen).
    expert_cumulative_losses_ : ndarray of shape (n_experts,)
    cumulative_loss_ : float
        The ensemble's cumulative loss (same loss) of its prequential probabilities.
    n_mistakes_ : int
        Mistakes of the prequential predictions.
    loss_scale_ : float
        The scale B of the last round (``loss_bound='auto'``: a running scale, state rather than a
        setting).
    n_samples_seen_ : int
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import SGDClassifier, Perceptron
    >>> from skonline.experts import OnlineEnsembleClassifier
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> ens = OnlineEnsembleClassifier([("sgd", SGDClassifier(loss="log_loss", random_state=0)),
    ...                                 ("perceptron", Perceptron(random_state=0))])
    >>> y_online = ens.partial_fit_predict(X[:400], y[:400], classes=[0, 1])
    >>> bool(np.mean(ens.predict(X[400:]) == y[400:]) > 0.9)
    True
    """

    _parameter_constraints = {
        "estimators": [list, None],
        "rule": [None, BaseEstimator],
        "loss": [StrOptions({"log_loss", "zero_one", "brier"})],
        "loss_bound": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "update_experts": [StrOptions({"auto"}), "boolean"],
        "random_state": ["random_state", np.random.Generator],
        "n_jobs": _N_JOBS_CONSTRAINT,
        "verbose": ["verbose"],
    }


    _TASK = "classifier"

    def __init__(self, estimators=None, rule=None, *, loss="log_loss", loss_bound="auto", update_experts="auto",
                 random_state=None, n_jobs=None, verbose=0):
        self.estimators = estimators
        self.random_state = random_state
        self.rule = rule
        self.loss = loss
        self.loss_bound = loss_bound
        self.update_experts = update_experts
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _allocate(self, chunk):
        super()._allocate(chunk)
        # per expert: mistakes and rows of the experts that give labels only (see _soften)
        self._label_counts_ = np.zeros((len(self.estimators_), 2))

    def _expert_probas(self, X, y=None):
        """(n, K, C) probabilities in the order of ``classes_``, NaN for asleep experts, and the
        (K,) mask of the experts that gave labels only (one-hot rows). With the labels ``y``,
        prequential experts learn the chunk and give their prequential outputs."""
        n = X.shape[0]
        C = self.classes_.shape[0]
        P = np.full((n, len(self.estimators_), C), np.nan)
        hard = np.zeros(len(self.estimators_), dtype=bool)
        prequential = set(self._prequential_experts()) if y is not None else set()
        proba = {k: hasattr(self.estimators_[k], "partial_fit_predict_proba") for k in prequential}
        calls = self._prequential_calls(
            [(k, "predict_proba" if proba[k] else "predict", {"classes": self.classes_}) for k in sorted(prequential)],
            X, y)
        bad = np.zeros((n, len(self.estimators_)), dtype=bool)  # rows asleep (checked at the end)
        for k, est in enumerate(self.estimators_):
            lab = asleep = None
            if k in prequential:
                if proba[k]:
                    pk, asleep = calls[k]
                    pk = None if pk is None else np.asarray(pk, dtype=np.float64)
                else:
                    lab, asleep = calls[k]
                    pk = None
                if lab is None and pk is None:  # asleep on every row of the chunk
                    continue
                est = self.estimators_[k]
                self._expert_fitted_[k] = True
            elif not self._expert_fitted_[k]:
                continue
            if k in prequential:
                pass
            elif hasattr(est, "predict_proba"):
                try:
                    pk = np.asarray(est.predict_proba(rows_for(est, X)), dtype=np.float64)
                except AttributeError:
                    pk = None
            else:
                pk = None
            if pk is None:
                lab = np.asarray(est.predict(rows_for(est, X))) if lab is None else lab
                j, missing = label_positions(self.classes_, lab)
                pk = np.zeros((n, C))
                ok = np.ones(n, dtype=bool) if missing is None else ~missing
                pk[np.arange(n)[ok], j[ok]] = 1.0
                P[:, k, :] = pk
                hard[k] = True
            else:
                cls = getattr(est, "classes_", self.classes_)
                if cls is self.classes_ or np.array_equal(cls, self.classes_):  # skonline's experts
                    P[:, k, :] = pk
                else:  # the expert's columns where its classes are among ours, zero elsewhere
                    idx, missing = label_positions(self.classes_, cls)
                    ours = slice(None) if missing is None else ~missing
                    full = np.zeros((n, C))
                    full[:, idx[ours]] = pk[:, ours]
                    P[:, k, :] = full
            if asleep is not None:
                bad[:, k] = asleep
        bad |= ~np.isfinite(P).all(axis=2)  # a non-finite probability: asleep on that row
        P[bad] = np.nan
        return P, hard

    def _soften(self, P, hard, yi=None):
        """Give the label-only experts' one-hot rows of ``P`` (in place) the probability their own
        record earns: the predicted class ``1 - e``, the others ``e / (C - 1)``, where ``e = (m + 1) /
        (r + 2)`` is the expert's smoothed mistake rate over the ``r`` rows it predicted before
        (``m`` mistakes; at most ``(C - 1) / C``, a uniform guess). A one-hot row would be charged
        ``-log(1e-15) = 34.5`` per mistake under the log loss, which hands the weight to any
        expert with probabilities, however worse its predictions. With the labels ``yi`` the
        counts advance row by row (prequentially: each row uses the rows before it) and are kept;
        without, the current counts are used (pure)."""
        n, _, C = P.shape
        for k in np.flatnonzero(hard):
            onehot = P[:, k, :]
            awake = ~np.isnan(onehot[:, 0])
            m0, r0 = self._label_counts_[k]
            if yi is None:
                m = np.full(n, m0)
                r = np.full(n, r0)
            else:
                wrong = (awake & (onehot[np.arange(n), yi] != 1.0)).astype(np.float64)
                m = m0 + np.concatenate([[0.0], np.cumsum(wrong)[:-1]])
                r = r0 + np.concatenate([[0.0], np.cumsum(awake)[:-1]])
                self._label_counts_[k] = (m0 + wrong.sum(), r0 + awake.sum())
            e = np.minimum((m + 1.0) / (r + 2.0), (C - 1.0) / C)[:, None]
            soft = np.where(onehot == 1.0, 1.0 - e, e / (C - 1.0))
            soft[~awake] = np.nan
            P[:, k, :] = soft

    def _losses(self, P, y_index):
        """P (n, K, C) -> raw losses (n, K) (NaN propagates for asleep experts)."""
        n = P.shape[0]
        py = P[np.arange(n), :, y_index] if P.ndim == 3 else None
        if self.loss == "log_loss":
            return -np.log(np.maximum(py, _EPS_PROBA))
        if self.loss == "zero_one":
            pred = np.argmax(np.where(np.isnan(P), -np.inf, P), axis=2)
            return np.where(np.isnan(py), np.nan, (pred != y_index[:, None]).astype(float))
        onehot = np.zeros((n, P.shape[2]))
        onehot[np.arange(n), y_index] = 1.0
        return np.sum((P - onehot[:, None, :]) ** 2, axis=2)

    _LOSS_CODES = {"log_loss": core.LOG_LOSS, "zero_one": core.ZERO_ONE, "brier": core.BRIER}

    def _learn(self, chunk):
        X, yi = chunk.X, chunk.y_index
        P, hard = self._expert_probas(X, self.classes_[yi])
        if hard.any() and self.loss != "zero_one":
            self._soften(P, hard, yi)
        n, K, C = P.shape
        LR = np.empty((n, K))
        Ls = np.empty((n, K))
        settings, state = self._loss_records()
        n_none = core.classification_losses(P, yi, settings, state, LR, Ls)
        W = self._aggregate(Ls, n_none)
        proba = np.empty((n, C))
        core.mix_classification(P, W, proba)
        if n_none:
            none = ~(W > 0).any(axis=1)
            proba[none] = 1.0 / C
        proba /= proba.sum(axis=1, keepdims=True)
        self.cumulative_loss_ = running_sum(self.cumulative_loss_, self._losses(proba[:, None, :], yi)[:, 0])
        self._expert_learn(X, self.classes_[yi], classes=self.classes_)
        return proba

    def _response(self, raw, method):
        if method == "predict":
            return self.classes_[np.argmax(raw, axis=1)]
        if method == "predict_proba":
            return raw
        raise ValueError(method)

    def _fallback_mean(self, y):  # pragma: no cover - classifiers use uniform probabilities
        raise NotImplementedError

    @reads_state
    def predict_proba(self, X):
        """Mixed class probabilities with the current weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "estimators_")
        X = self._predict_input(X, dtype=np.float64, order="C")
        P, hard = self._expert_probas(X)
        if hard.any() and self.loss != "zero_one":
            self._soften(P, hard)
        awake = ~np.isnan(P[:, :, 0])
        w = np.where(awake, self.weights_[None, :], 0.0)
        s = w.sum(axis=1)
        w = np.where(
            s[:, None] > 0, w / np.where(s > 0, s, 1.0)[:, None], awake / np.maximum(awake.sum(axis=1), 1)[:, None]
        )
        proba = np.einsum("nk,nkc->nc", w, np.where(np.isnan(P), 0.0, P))
        none = ~awake.any(axis=1)
        proba[none] = 1.0 / self.classes_.shape[0]
        return proba / proba.sum(axis=1, keepdims=True)

    @reads_state
    def predict(self, X):
        """Label of largest mixed probability.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def partial_fit_predict_proba(self, X, y, **fit_params):
        """Learn the chunk; return the mixed probabilities of each row computed before learning it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            ``classes`` on the first call.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self._partial_fit_response(X, y, "predict_proba", **fit_params)

