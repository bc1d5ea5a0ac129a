"""The streaming contract shared by every online estimator.

:class:`OnlineMixin` carries what every online learner in skonline shares, so each estimator only
writes its own state and its own compiled pass:

* ``partial_fit(X, y, **kw)`` validates the whole chunk first, then runs one compiled prequential
  pass over the rows in order: for each row, predict, observe the target, update. The first call
  allocates the state.
* ``fit(X, y, **kw)`` resets all state, then runs the same pass. ``fit`` never shuffles.
* ``partial_fit_predict(X, y, **kw)`` learns the chunk and returns, for each row, the prediction
  made *before* that row was learned (progressive validation), computed inside the same pass.
* Every call is all or nothing. It learns on a working copy of the state
  (:meth:`OnlineMixin._working_copy`) and the estimator takes the copy's attribute dict in one
  step at the end (:func:`commit`). A call that raises (bad input, a non-finite state, a
  ``KeyboardInterrupt`` or ``MemoryError`` at any point) leaves the estimator exactly as it was,
  with nothing to restore; a ``predict`` (or ``transform``, ...) running meanwhile in another
  thread sees the state before the call or after it, never a mix (:func:`reads_state`); two calls
  that change one estimator at once do not silently lose one's chunk: the second to finish raises.
* No silent non-finite state: after every pass, the float state (``cumulative_loss_``
  included), the state an estimator derives (hook ``_derived_state``) and the pass's outputs
  must be finite; otherwise the chunk is rejected with a ``FloatingPointError`` naming the first
  row that makes them non-finite (found by replaying prefixes of the chunk). NaN/inf markers by
  design are listed in ``_nonfinite_state_ok``. A Ctrl-C that numba reports as ``SystemError``
  is re-raised as ``KeyboardInterrupt``.
* Online metrics are fitted attributes: ``n_samples_seen_``; ``cumulative_loss_``, the training
  loss of the prequential predictions, which the compiled pass accumulates row by row (so it does
  not depend on how the stream was chunked; ``running_sum`` does the same in numpy);
  ``n_mistakes_`` for classifiers, counted here from the pass's outputs.
* Randomness comes from one :class:`numpy.random.Generator` owned by the estimator and created from
  ``random_state``; a chunk draws a fixed count of numbers per row in numpy and hands them to the
  compiled pass, so any chunking of the stream sees the same numbers.

Where each part lives:

* this module: the driver (``fit``, ``partial_fit``, ``partial_fit_<method>``; one call =
  validate, allocate on a reset, standardise, run the pass in blocks, update the metrics:
  :meth:`OnlineMixin._learn_call` and :meth:`OnlineMixin._learn_blocks`), the prediction input
  (:meth:`OnlineMixin._predict_input`) and the classifier / regressor / transformer mixins;
* :mod:`skonline._atomic`: all or nothing (working copies, commit, readers pinned to one
  state, non-finite detection and the search for the row that causes it);
* :mod:`skonline._standardize`: the online standardisation of features and target.

Hooks. A subclass implements four:

``_validate_chunk(X, y, *, reset, from_fit, **kw) -> Chunk``
    Validate and convert one chunk; no state change other than what ``validate_data`` records.
    The classifier and regressor mixins implement it for the usual ``(X, y)`` chunk.
``_allocate(chunk)``
    Create the state arrays (first call only), after ``_resolve_settings(chunk)``.
``_learn(chunk) -> ndarray``
    Run the compiled pass; return the raw prequential outputs, one row per sample.
``_response(raw, method)``
    Turn raw outputs into what ``predict`` (or ``decision_function``, ``predict_proba``) returns.
    The classifier, regressor and transformer mixins implement it.

and may override these (class attributes or methods; the defaults are on the mixins):

* driver: ``_check_params()`` (checks across parameters), ``_resolve_settings(chunk)`` (on a
  reset, before ``_allocate``: every ``'auto'`` or data-driven parameter resolved once into the
  fitted attribute ``<param>_`` that everything reads afterwards; default: nothing to resolve),
  ``_update_metrics(chunk, raw)``,
  ``_concat(raws)`` (outputs that are not arrays of rows; a chunk whose fields hold rows
  otherwise cuts them in its :class:`Chunk` subclass's ``rows``),
  ``_row_container`` and ``_container(X)`` (dense or CSR rows), ``_progress_metrics()``,
  ``_has_loss``, ``_supports_sample_weight``, ``_accept_sparse``;
* all or nothing (:mod:`skonline._atomic`): ``_nonfinite_state_ok``, ``_derived_state``,
  ``_buffer_layout``, ``_copy_state(name, value, context)``, ``_recycled_state``, ``_fixed_state``,
  ``_discard_attempt()``, ``_no_sample_weight_reason``;
* standardisation (:mod:`skonline._standardize`): ``_standardizes()``,
  ``_standardizes_target()``, ``_standardize_clip``, ``_standardize_min_count``,
  ``_standardize_target_clip``, ``_restandardize_targets(chunk)``.

Learned state is every instance attribute whose name ends with an underscore: public ``name_``
when it is documented (the *Attributes* section), private ``_name_`` otherwise (buffers, the
generator ``_rng_``). The mixin finds the state by that suffix alone, to reset it and to copy
it for a call; caches that can be rebuilt from the parameters are plain ``_name``. See
CONTRIBUTING.md.
"""

import dataclasses
import numbers
import operator

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.base import ClassifierMixin, RegressorMixin, TransformerMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from ._atomic import (  # noqa: F401 - the contract's public helpers, importable from here as before
    AtomicCallMixin,
    _copied,
    atomic,
    check_finite_output,
    commit,
    nonfinite_state,
    raise_if_nonfinite,
    reads_state,
)
from ._standardize import OnlineStandardizationMixin
from .utils import _calibration, _progress, _scaling
from .utils._deprecation import check_renamed_params
from .utils._math import running_sum
from .utils.validation import (
    label_positions,
    output_dtype,
    readonly,
    validate_X_chunk,
    validate_X_fit,
    validate_X_predict,
)

__all__ = [
    "OnlineMixin",
    "OnlineClassifierMixin",
    "OnlineDecisionClassifierMixin",
    "OnlineRegressorMixin",
    "OnlineTransformerMixin",
    "IgnoresTargetMixin",
    "FeatureTransformerMixin",
    "FixedMapMixin",
    "SampleWeightMixin",
    "Chunk",
    "atomic",
    "commit",
    "make_generator",
    "running_sum",
    "state_scalar",
    "raise_if_nonfinite",
    "nonfinite_state",
    "reads_state",
    "check_finite_output",
]


def make_generator(random_state):
    """A :class:`numpy.random.Generator` from ``None``, an int, a Generator or a RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.Generator)):
        return np.random.default_rng(random_state)
    raise ValueError(f"random_state must be None, an int, a Generator or a RandomState; got {random_state!r}.")


def state_scalar(name, kind, doc):
    """A read-only property for documented learned state kept in a length-1 array: ``kind(self.<name>[0])``.

    Scalars a compiled pass updates in place live in length-1 arrays (``_eta_``, ``_t_``); the
    public attribute reads the value out after a fit check (``NotFittedError`` before a fit).
    """

    def get(self):
        check_is_fitted(self, name)
        return kind(getattr(self, name)[0])

    return property(get, doc=doc)


def _validate_sample_weight(estimator, sample_weight, n_samples, from_fit=False):
    """Per-row weights as a C-contiguous float64 array: ones for ``None``; finite, non-negative,
    one per row, and for ``fit`` not all zero (checked before the pass, so a bad weight changes
    nothing; a ``partial_fit`` chunk of zero weights is fine)."""
    if sample_weight is None:
        return np.ones(n_samples)
    name = type(estimator).__name__
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    try:
        w = np.ascontiguousarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: sample_weight must be numeric: {exc}") from None
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(
            f"{name}: sample_weight.shape == {w.shape}, expected ({n_samples},) (one weight per row)."
        )
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name}: sample_weight must be finite (got NaN or infinity).")
    if np.any(w < 0):
        raise ValueError(f"{name}: sample_weight must be non-negative (got {float(w.min())!r}).")
    if from_fit and n_samples and not np.any(w > 0):
        raise ValueError(f"{name}: sample weights must contain at least one non-zero number.")
    return w


@dataclasses.dataclass(eq=False)
class Chunk:
    """One validated chunk of the stream, as the driver hands it to the hooks.

    ``_validate_chunk`` builds it; the driver then puts ``X`` in the estimator's container, adds
    ``sample_weight`` (estimators that weigh rows) and the standardised target
    (:mod:`skonline._standardize`), and cuts it into blocks of rows (:meth:`rows`); ``_allocate``
    and ``_learn`` read it. A family with more per-chunk data subclasses it (GroupDRO's groups,
    the encoders' table, the expert rules' loss matrix, ...). Fields left at None are not part of
    this estimator's chunks.
    """

    #: rows in the chunk
    n_samples: int
    #: the rows (ndarray or CSR), validated
    X: object = None
    #: targets: regressors' float64 targets (standardised when the estimator standardises them)
    y: object = None
    #: classifiers: float64 targets in {-1, +1}, shape (n_samples, n_heads)
    Y: object = None
    #: classifiers: int64 index of each row's label in ``classes_``
    y_index: object = None
    #: float64 weight of each row (estimators with ``_supports_sample_weight``: ones when not given)
    sample_weight: object = None
    #: a batch chunk (GroupDRO's pooled ``fit``): standardised with the statistics of all its rows
    batch: bool = False
    #: standardised target: the target as given, and each row's shift and scale
    y_raw: object = None
    y_shift: object = None
    y_scale: object = None

    def replace(self, **changes):
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def extend(self, cls, **changes):
        """This chunk as a ``cls`` (a subclass), with ``changes`` (the subclass's fields, ...)."""
        return cls(**{f.name: getattr(self, f.name) for f in dataclasses.fields(self)} | changes)

    def rows(self, a, b):
        """Rows ``a:b``: every field that holds one entry per row is cut (a DataFrame by
        position). A subclass whose fields hold rows otherwise cuts those too."""
        n = self.n_samples
        cut = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name != "n_samples" and hasattr(v, "shape") and len(v.shape) and v.shape[0] == n:
                cut[f.name] = v.iloc[a:b] if hasattr(v, "iloc") else v[a:b]
        return dataclasses.replace(self, n_samples=b - a, **cut)


class OnlineMixin(AtomicCallMixin, OnlineStandardizationMixin):
    """Mixin implementing the streaming contract (see the module docstring)."""

    #: whether the estimator keeps a prequential training loss (transformers do not)
    _has_loss = True
    #: whether ``_validate_chunk`` of the shared classifier / regressor mixins accepts CSR rows
    _accept_sparse = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self._row_container is not None:  # CSR rows accepted (see _row_container)
            tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------ public API
    def fit(self, X, y=None, **fit_params):
        """Reset the state, then learn the rows of ``X`` in order, in one pass.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The stream, in order.
        y : array-like of shape (n_samples,)
            Targets.
        **fit_params : dict
            Estimator-specific keywords (e.g. ``classes`` for classifiers).

        Returns
        -------
        self : object
        """
        self._partial_fit(X, y, reset=True, from_fit=True, **fit_params)
        return self

    def partial_fit(self, X, y=None, **fit_params):
        """Learn the rows of ``X`` in order, continuing from the current state.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The next chunk of the stream.
        y : array-like of shape (n_samples,)
            Targets.
        **fit_params : dict
            Estimator-specific keywords (e.g. ``classes`` on the first call for classifiers).

        Returns
        -------
        self : object
        """
        self._partial_fit(X, y, reset=not self._is_initialized(), from_fit=False, **fit_params)
        return self

    @available_if(lambda self: hasattr(self, "predict"))
    def partial_fit_predict(self, X, y=None, **fit_params):
        """Learn the chunk and return the prediction made for each row before it was learned.

        This is progressive (prequential) validation: the returned predictions are honest
        out-of-sample predictions, computed inside the same compiled pass as the update.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            As for :meth:`partial_fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The algorithm's prediction for each row, made just before learning it. For estimators
            whose ``predict`` uses a summary of the state (e.g. ``predict_mode='linear'``), this is
            the online algorithm's own prediction, which ``predict`` approximates.
        """
        return self._partial_fit_response(X, y, "predict", **fit_params)

    # ------------------------------------------------------------------ machinery
    def _partial_fit_response(self, X, y, method, **fit_params):
        raw = self._partial_fit(
            X, y, reset=not self._is_initialized(), from_fit=False, **fit_params
        )
        return self._response(raw, method)

    def _is_initialized(self):
        return hasattr(self, "n_samples_seen_")

    #: estimators whose loss takes per-row weights set this and document what a weight does
    _supports_sample_weight = False

    def _learn_call(self, X, y, reset, from_fit, sample_weight, fit_params):
        """The body of a call, on a working copy (see :meth:`_attempt`): validate, allocate, learn."""
        self._validate_params_once()
        if reset:
            self._reset()
        chunk = self._validate_chunk(X, y, reset=reset, from_fit=from_fit, **fit_params)
        if chunk.X is not None:
            chunk.X = self._container(chunk.X)
        if self._supports_sample_weight:  # ones when absent: the compiled pass always weighs
            chunk.sample_weight = _validate_sample_weight(self, sample_weight, chunk.n_samples, from_fit)
        if reset:
            if "random_state" in self._param_names():
                self._rng_ = make_generator(self.random_state)
            self.n_samples_seen_ = 0
            if self._has_loss:
                self.cumulative_loss_ = 0.0
            self._init_standardization(chunk)
        chunk = self._standardize_chunk(chunk)
        if reset:
            self._resolve_settings(chunk)
            self._allocate(chunk)
        return self._learn_blocks(chunk, int(getattr(self, "verbose", 0) or 0))

    def _learn_blocks(self, chunk, verbose):
        """Run the pass over the chunk: in one block, or (``verbose > 0``) in blocks of rows,
        printing progress after each (:mod:`skonline.utils._progress`), like SGD's verbose.

        Splitting a chunk into blocks gives the same result bit for bit (chunking invariance).
        """
        n = chunk.n_samples
        block = _progress.block_rows(verbose, n)
        densify = self._row_container == "dense" and sp.issparse(chunk.X)
        if densify and not chunk.batch:  # a batch chunk (GroupDRO's pooled fit): whole
            block = min(block, _scaling.dense_block_rows(chunk.X.shape[1]))
        raws = []
        interval = _progress.Interval()
        for a in range(0, n, block):
            b = min(n, a + block)
            if b - a == n:
                sub = chunk
            else:
                sub = chunk.rows(a, b)
            if densify:  # a dense algorithm: this block of CSR rows as dense rows (bit for bit)
                sub = sub.replace(X=_scaling.dense_rows(sub.X))
            loss0 = getattr(self, "cumulative_loss_", 0.0)
            raw = self._learn(sub)
            if sub.y_shift is not None:
                raw = self._unstandardize_pass(sub, raw, loss0)
            self._update_metrics(sub, raw)
            self.n_samples_seen_ += b - a
            raws.append(raw)
            if verbose > 0:
                self._print_progress(b - a, interval.lap())
        return raws[0] if len(raws) == 1 else self._concat(raws)

    def _concat(self, raws):
        return None if raws[0] is None else np.concatenate(raws)

    def _progress_metrics(self):
        """``(label, value)`` pairs of the progress line: the online metrics (hook)."""
        n = self.n_samples_seen_
        metrics = []
        if n and hasattr(self, "cumulative_loss_"):
            metrics.append(("online loss", self.cumulative_loss_ / n))
        if n and hasattr(self, "n_mistakes_"):
            metrics.append(("mistake rate", self.n_mistakes_ / n))
        return metrics

    def _print_progress(self, interval_rows, seconds):
        _progress.print_progress(type(self).__name__, rows=self.n_samples_seen_,
                                 interval_rows=interval_rows, seconds=seconds,
                                 metrics=self._progress_metrics())

    #: private attributes that are neither parameters nor learned state and are not pickled: the
    #: cache of validated parameters (rebuilt on demand); an estimator may add its own
    _not_pickled = ("_validated_params",)

    def __getstate__(self):
        state = dict(super().__getstate__())
        for name in self._not_pickled:
            state.pop(name, None)
        return state

    @classmethod
    def _param_names(cls):
        names = cls.__dict__.get("_param_names_cache")
        if names is None:
            names = tuple(cls._get_param_names())
            cls._param_names_cache = names
        return names

    def _param_values(self):
        """The values of the parameters, as a tuple in the order of :meth:`_param_names` (one
        ``operator.attrgetter`` per class: half the time of a loop of ``getattr``, on every call)."""
        cls = type(self)
        get = cls.__dict__.get("_param_getter_cache")
        if get is None:
            names = cls._param_names()
            if len(names) > 1:
                get = operator.attrgetter(*names)
            elif names:
                single = operator.attrgetter(names[0])
                get = lambda obj: (single(obj),)  # noqa: E731 - attrgetter of one name gives a value
            else:
                get = lambda obj: ()  # noqa: E731
            cls._param_getter_cache = get
        return get(self)

    def _validate_params_once(self):
        """Validate the parameters, unless none has changed since the last validation; like
        scikit-learn's estimators, skip the constraint checks under
        ``sklearn.set_config(skip_parameter_validation=True)``."""
        skip = bool(get_config()["skip_parameter_validation"])
        current = (skip,) + self._param_values()
        last = getattr(self, "_validated_params", None)
        if last is not None and len(last) == len(current) and all(a is b for a, b in zip(last, current)):
            return
        if not skip:
            self._validate_params()
        check_renamed_params(self)  # a retired parameter name warns (or raises if both are set)
        self._check_params()
        self._validated_params = current

    def _prequential_loss(self, y, pred):  # pragma: no cover - regressors define it
        raise NotImplementedError

    def _predict_input(self, X, **kwargs):
        """Validate ``X`` for prediction, put it in the stream's container (:meth:`_container`) and
        apply the online standardisation (current statistics); an estimator whose algorithm is
        dense (``_row_container = 'dense'``) gets dense rows."""
        if self._row_container is not None:
            kwargs.setdefault("accept_sparse", "csr")
        X = self._container(validate_X_predict(self, X, **kwargs))
        if self._standardizes() and hasattr(self, "_x_mean_"):
            count = np.array([float(self.n_samples_seen_)])
            Z = _scaling.frozen_transform(X, count, self._x_mean_, self._x_m2_, float(self._standardize_clip),
                                          min_count=float(self._standardize_min_count))
            X = readonly(Z)
        if self._row_container == "dense" and sp.issparse(X):
            X = _scaling.dense_rows(X)
        return X

    #: the container an estimator computes with, whatever the caller passed (one rule,
    #: :func:`skonline.utils._scaling.as_stream_container`): ``None``: the rows as given (the
    #: estimator handles CSR and dense rows alike itself); ``'stream'``: dense rows up to 4,096
    #: features, CSR beyond, for every chunk and every prediction input, so that the same rows
    #: give the same model in either container and a stream may mix them; ``'dense'``: the
    #: same, for an algorithm that computes on dense rows: a CSR chunk (wide streams) reaches its
    #: pass as dense blocks of at most ``_scaling.DENSIFY_BYTES`` (:meth:`_learn_blocks`; the
    #: pass is row by row, so this is the pass over the dense rows, bit for bit)
    _row_container = None

    def _container(self, X):
        """The validated rows in the container the estimator computes with (see
        ``_row_container``; hook: kernel selection decides from its own width)."""
        if self._row_container is None:
            return X
        return _scaling.as_stream_container(X)

    def _draw(self, n_samples, n_per_row, kind="uniform"):
        """Random numbers for a chunk: ``n_per_row`` per row, from the estimator's Generator."""
        if kind == "uniform":
            return self._rng_.random((n_samples, n_per_row))
        if kind == "normal":
            return self._rng_.standard_normal((n_samples, n_per_row))
        raise ValueError(kind)

    def _update_metrics(self, chunk, raw):
        pass

    def _check_params(self):
        """Checks across parameters that ``_parameter_constraints`` cannot express."""

    def _resolve_settings(self, chunk):
        """On a reset, before ``_allocate``: set ``<param>_`` for every ``'auto'`` or data-driven
        parameter, the value the estimator uses from then on (nothing to resolve by default)."""

    # hooks -----------------------------------------------------------------
    def _validate_chunk(self, X, y, *, reset, from_fit, **fit_params):  # pragma: no cover
        raise NotImplementedError

    def _allocate(self, chunk):  # pragma: no cover
        raise NotImplementedError

    def _learn(self, chunk):  # pragma: no cover
        raise NotImplementedError

    def _response(self, raw, method):  # pragma: no cover
        raise NotImplementedError


class OnlineClassifierMixin(ClassifierMixin, OnlineMixin):
    """Streaming contract for classifiers: label encoding, ``classes``, mistakes and losses.

    Subclasses provide ``_decision(chunk)``-free cores: ``_learn`` must return raw decision values
    of shape (n_samples, n_heads), one head for binary problems (positive class ``classes_[1]``)
    and one per class (one-vs-rest) otherwise.

    Ties, one rule for every classifier (scikit-learn's): a binary decision value ``> 0`` predicts
    ``classes_[1]``, anything else (a decision of exactly 0 included) ``classes_[0]``; with several
    heads, the first class of largest decision (``argmax``). ``predict``, the prequential
    predictions and ``n_mistakes_`` all use it. Its :class:`Chunk` holds ``X``, ``y_index`` (int64
    index into ``classes_``) and ``Y`` (float64 targets in {-1, +1}, shape (n_samples, n_heads)).
    """

    def _validate_chunk(self, X, y, *, reset, from_fit, classes=None):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        X, y = validate_X_chunk(
            self, X, y=y, reset=reset, accept_sparse=self._accept_sparse
        )
        if reset:
            check_classification_targets(y)
        if reset:
            if classes is None:
                if not from_fit:
                    raise ValueError(
                        "classes must be passed on the first call to partial_fit "
                        "(the full set of labels of the stream)."
                    )
                classes = np.unique(y)
            classes = np.unique(np.asarray(classes))
            if classes.shape[0] < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least 2 classes; got only one class: "
                    f"{classes.tolist()}."
                )
            self.classes_ = classes
        elif classes is not None and not (np.array_equal(classes, self.classes_)  # the usual case, cheaply
                                          or np.array_equal(np.unique(np.asarray(classes)), self.classes_)):
            raise ValueError(
                f"classes={np.unique(classes).tolist()} differs from the classes of the first call "
                f"{self.classes_.tolist()}."
            )
        idx, bad = label_positions(self.classes_, y)
        if bad is not None:
            row = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"Row {row} has label {y[row]!r}, which is not in classes {self.classes_.tolist()}. "
                "All labels must be given in `classes` on the first call to partial_fit."
            )
        n_classes = self.classes_.shape[0]
        if n_classes == 2:
            Y = (2.0 * idx - 1.0).reshape(-1, 1)
        else:
            Y = np.where(idx[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)
        return Chunk(X.shape[0], X=X, y_index=idx, Y=np.ascontiguousarray(Y))

    @property
    def _n_heads(self):
        k = self.classes_.shape[0]
        return 1 if k == 2 else k

    def _labels_from_decision(self, dec):
        dec = np.asarray(dec)
        if dec.ndim == 1 or dec.shape[1] == 1:
            return self.classes_[(dec.ravel() > 0).astype(np.int64)]
        return self.classes_[np.argmax(dec, axis=1)]

    def _response(self, raw, method):
        if method == "decision_function":
            return raw.ravel() if raw.shape[1] == 1 else raw
        if method == "predict":
            return self._labels_from_decision(raw)
        if method == "predict_proba":
            return self._proba_from_decision(raw)
        raise ValueError(method)

    def _proba_from_decision(self, dec):  # pragma: no cover - per estimator
        raise AttributeError("predict_proba is not available for this estimator.")

    def _update_metrics(self, chunk, raw):
        if raw.shape[1] == 1:
            pred = (raw[:, 0] > 0).astype(np.int64)
        else:
            pred = np.argmax(raw, axis=1)
        self.n_mistakes_ = getattr(self, "n_mistakes_", 0) + int(np.count_nonzero(pred != chunk.y_index))

    def partial_fit_decision_function(self, X, y, **fit_params):
        """Learn the chunk; return each row's decision value computed before learning it.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            As for :meth:`partial_fit`.

        Returns
        -------
        decision : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return self._partial_fit_response(X, y, "decision_function", **fit_params)

    @property
    def mistake_rate_(self):
        """Fraction of rows misclassified by the prequential predictions."""
        check_is_fitted(self, "n_mistakes_")
        return self.n_mistakes_ / max(self.n_samples_seen_, 1)

    @property
    def average_loss_(self):
        """Average training loss of the prequential predictions."""
        check_is_fitted(self, "cumulative_loss_")
        return self.cumulative_loss_ / max(self.n_samples_seen_, 1)


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # the logistic function, without overflow


class OnlineDecisionClassifierMixin(OnlineClassifierMixin):
    """Classifiers whose outputs are decision values from ``_raw_decision(X)``.

    Provides ``decision_function``, ``predict``, ``predict_proba``, ``predict_log_proba`` and
    ``partial_fit_predict_proba``. For the log loss (``loss='log_loss'`` or ``'logistic'``) the
    probabilities are the sigmoid of the decision values, normalised across one-vs-rest heads as
    in SGDClassifier; for any other loss (PKAWV's square loss, a hinge loss) the decision values are
    calibrated online (:mod:`skonline.utils._calibration`: a temperature fitted prequentially to
    the log loss, so the most probable class is the predicted one), in the same call and row by
    row, so that the prequential probabilities do not depend on the chunking. The pass's raw
    outputs then carry the probabilities after the decision values (``_response`` splits them).
    ``_raw_decision(X)`` validates ``X`` and returns decision values of shape (n_samples, n_heads)
    without changing the state.
    """

    def _calibrates(self):
        """Whether the probabilities are calibrated online (no probabilistic loss)."""
        return getattr(self, "loss", None) not in ("log_loss", "logistic")

    def _learn_blocks(self, chunk, verbose):
        raw = super()._learn_blocks(chunk, verbose)
        if self._calibrates():
            raw = _calibration.learn(self, raw, chunk)
        return raw

    def _response(self, raw, method):
        if self._calibrates():
            if method == "predict_proba":
                return raw[:, self._n_heads:]
            raw = raw[:, :self._n_heads]
        return super()._response(raw, method)

    @reads_state
    def decision_function(self, X):
        """Decision values: shape (n_samples,) for binary problems, (n_samples, n_classes) otherwise.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray
        """
        return self._response(self._raw_decision(X), "decision_function")

    @reads_state
    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._labels_from_decision(self._raw_decision(X))

    def _proba_from_decision(self, dec):
        if self._calibrates():
            return _calibration.predict(self, dec)
        dec = np.asarray(dec)
        if dec.ndim == 1:
            dec = dec[:, None]
        p = _sigmoid(dec)
        if p.shape[1] == 1:
            return np.hstack([1.0 - p, p])
        s = p.sum(axis=1, keepdims=True)
        return np.where(s > 0, p / np.where(s > 0, s, 1.0), 1.0 / p.shape[1])

    @reads_state
    def predict_proba(self, X):
        """Class probabilities (log loss: the sigmoid of the decisions, one-vs-rest heads normalised
        as in SGDClassifier; other losses: the decisions calibrated online, see the class).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self._proba_from_decision(self._raw_decision(X))

    @reads_state
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def partial_fit_predict_proba(self, X, y, **fit_params):
        """Learn the chunk; return each row's class probabilities computed before learning it.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **fit_params : dict
            As for :meth:`partial_fit`.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self._partial_fit_response(X, y, "predict_proba", **fit_params)


class OnlineRegressorMixin(RegressorMixin, OnlineMixin):
    """Streaming contract for single-output regressors.

    ``_learn`` returns raw predictions of shape (n_samples,). Its :class:`Chunk` holds ``X`` and
    ``y`` (float64).
    """

    def _validate_chunk(self, X, y, *, reset, from_fit):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        X, y = validate_X_chunk(
            self, X, y=y, reset=reset, accept_sparse=self._accept_sparse,
            y_numeric=True,
        )
        y = np.ascontiguousarray(y, dtype=np.float64)
        return Chunk(X.shape[0], X=X, y=y)

    def _response(self, raw, method):
        if method == "predict":
            return raw.ravel()
        raise ValueError(method)

    def _standardizes_target(self):
        # a regressor that standardises its features standardises its target too
        return self._standardizes()

    def _prequential_loss(self, y, pred):
        """The training loss of predictions ``pred`` for targets ``y``, row by row."""
        from .losses import get_loss

        if getattr(self, "loss", None) is None:  # the square-loss forecasters (kernel_ridge)
            return (y - pred) ** 2
        return get_loss(self.loss).value(y, pred, getattr(self, "epsilon", 0.1))

    @reads_state
    def predict(self, X):
        """Predict each row as the next round of the stream would, without learning it.

        Pure: the state is unchanged (``partial_fit_predict`` predicts each row, then learns it).
        What is predicted is the family's own (the current model, the averaged model, the
        selected kernel, the experts' mixture): see the class description.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input where the estimator accepts it for learning.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._predict_output(self._predict_targets(X))

    def _predict_targets(self, X):  # each regressor: its predictions (standardised units), (n_samples,)
        raise NotImplementedError

    @property
    def average_loss_(self):
        """Average training loss of the prequential predictions."""
        check_is_fitted(self, "cumulative_loss_")
        return self.cumulative_loss_ / max(self.n_samples_seen_, 1)


class IgnoresTargetMixin:
    """``fit`` / ``partial_fit`` of streaming estimators that learn from ``X`` alone (put it before
    :class:`OnlineMixin`): ``y`` is accepted and ignored, as in scikit-learn's transformers."""

    def fit(self, X, y=None, **fit_params):
        """Reset the statistics, then learn the rows of ``X`` in order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.
        **fit_params : dict
            None is accepted (a ``sample_weight`` raises a clear ``TypeError``).

        Returns
        -------
        self : object
        """
        return super().fit(X, **fit_params)

    def partial_fit(self, X, y=None, **fit_params):
        """Learn the rows of ``X`` in order, continuing from the current statistics.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.
        **fit_params : dict
            None is accepted (a ``sample_weight`` raises a clear ``TypeError``).

        Returns
        -------
        self : object
        """
        return super().partial_fit(X, **fit_params)


class OnlineTransformerMixin(IgnoresTargetMixin, OnlineMixin):
    """Streaming contract for online transformers.

    ``partial_fit_transform(X)`` learns the chunk and returns each row transformed with the state
    **before** that row was learned (prequential), computed in the same pass: this is what an
    online pipeline feeds to the next step. ``_learn`` returns the transformed rows.
    """

    _has_loss = False

    def _response(self, raw, method):
        if method == "transform":
            return raw
        raise ValueError(method)

    def partial_fit_transform(self, X, y=None, **fit_params):
        """Learn the chunk; return each row transformed with the state before it was learned.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.
        **fit_params : dict
            As for :meth:`partial_fit`.

        Returns
        -------
        X_new : {ndarray, sparse matrix} of shape (n_samples, n_features_out)
        """
        raw = self._partial_fit(X, None, reset=not self._is_initialized(), from_fit=False, **fit_params)
        return self._output_container(raw)

    def _output_container(self, raw):
        wrap = getattr(self, "_sklearn_output_config", {}).get("transform", "default")
        if wrap == "default" or not hasattr(self, "get_feature_names_out"):
            return raw
        from sklearn.utils._set_output import _wrap_data_with_container

        return _wrap_data_with_container("transform", raw, None, self)


class FeatureTransformerMixin(TransformerMixin):
    """``transform`` and ``get_feature_names_out`` of skonline's transformers, written once.

    ``transform`` checks that the transformer is fitted (``_fitted_attribute``), validates ``X``
    (:meth:`_transform_input`), maps it with the current state (``_transform``, nothing learned)
    and returns float32 for float32 input (:meth:`_output_dtype`; ``None``: the map decides).
    ``get_feature_names_out`` checks ``input_features`` against the input names (scikit-learn's
    rule) and hands them to ``_feature_names_out(names_in)``. Put it before ``TransformerMixin``
    (it is one: its ``transform`` is wrapped for ``set_output``).
    """

    #: the attribute that exists once the transformer is fitted
    _fitted_attribute = "n_features_in_"
    #: memory order of the rows ``_transform`` receives (``None``: as given)
    _transform_order = None

    def _transform_input(self, X):
        """``X`` validated for ``_transform``: float64 rows, CSR accepted."""
        return validate_X_predict(self, X, accept_sparse="csr", dtype=np.float64, order=self._transform_order)

    def _output_dtype(self, X):
        """The dtype ``transform`` returns for ``X`` (``None``: what ``_transform`` returns)."""
        return output_dtype(X)

    def _transform(self, X):  # each transformer: the rows of X mapped with the current state
        raise NotImplementedError

    @reads_state
    def transform(self, X):
        """Transform ``X`` with the current state (nothing is learned).

        Parameters
        ----------
        X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features_in_)
            The input the transformer accepts (see the class description).

        Returns
        -------
        X_new : {ndarray, sparse matrix, DataFrame} of shape (n_samples, n_features_out)
            Numeric maps compute in float64 and return float32 for float32 input; table
            transformers return their map's own dtype (see the class description).
        """
        check_is_fitted(self, self._fitted_attribute)
        dtype = self._output_dtype(X)
        Z = self._transform(self._transform_input(X))
        return Z if dtype is None else Z.astype(dtype, copy=False)

    def _feature_names_out(self, names_in):  # each transformer: its output names from the input names
        raise NotImplementedError

    def get_feature_names_out(self, input_features=None):
        """Output feature names (see the class description for how they are formed).

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Checked against the input names (``feature_names_in_``, else ``x0, x1, ...``).

        Returns
        -------
        feature_names_out : ndarray of str objects
        """
        check_is_fitted(self, self._fitted_attribute)
        names_in = _check_feature_names_in(self, input_features)
        return np.asarray(self._feature_names_out(names_in), dtype=object)


class FixedMapMixin(FeatureTransformerMixin):
    """Data-independent feature maps: ``fit`` only sets the map up from the number of features.

    ``fit`` validates the parameters and ``X`` (float64, CSR accepted) and calls
    ``_set_up(n_features)``. An online pipeline or column transformer fits such a map on its
    first chunk (``_fixed_map``). Dense and CSR input; computed in float64, float32 kept.
    """

    _fixed_map = True

    def _set_up(self, n_features):  # each map: its fitted attributes for n_features input columns
        raise NotImplementedError

    @atomic
    def fit(self, X, y=None):
        """Set the map up for the columns of ``X`` (only their number is used).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._validate_params()
        X = validate_X_fit(self, X, accept_sparse="csr", dtype=np.float64)
        self._set_up(X.shape[1])
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]  # computed in float64
        return tags


class SampleWeightMixin:
    """``fit`` / ``partial_fit`` with an explicit ``sample_weight`` keyword.

    For estimators whose loss takes per-row weights (put it before the other mixins). The weights
    are validated with the chunk (one per row, finite, non-negative) and reach the compiled pass as
    ``chunk.sample_weight`` (ones when not given, so the pass has one code path). Being an explicit
    keyword, ``sample_weight`` works with scikit-learn's metadata routing
    (``set_fit_request(sample_weight=True)``, ``set_partial_fit_request``). What a weight means is
    documented by each estimator.
    """

    _supports_sample_weight = True

    def fit(self, X, y=None, sample_weight=None, **fit_params):
        """Reset the state, then learn the rows of ``X`` in order, in one pass.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The stream, in order.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row (see the estimator's documentation); ``None``: ones.
        **fit_params : dict
            Estimator-specific keywords (e.g. ``classes`` for classifiers).

        Returns
        -------
        self : object
        """
        return super().fit(X, y, sample_weight=sample_weight, **fit_params)

    def partial_fit(self, X, y=None, sample_weight=None, **fit_params):
        """Learn the rows of ``X`` in order, continuing from the current state.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The next chunk of the stream.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row (see the estimator's documentation); ``None``: ones.
        **fit_params : dict
            Estimator-specific keywords (e.g. ``classes`` on the first call for classifiers).

        Returns
        -------
        self : object
        """
        return super().partial_fit(X, y, sample_weight=sample_weight, **fit_params)
