"""The streaming contract shared by every online estimator.

:class:`OnlineMixin` carries what every online learner in skonline shares, so each estimator only
writes its own state and its own compiled pass:

* ``partial_fit(X, y, **kw)`` validates the whole chunk first, then runs one compiled prequential
  pass over the rows in order: for each row, predict, observe the target, update. The first call
  allocates the state.
* ``fit(X, y, **kw)`` resets all state, then runs the same pass. ``fit`` never shuffles.
* ``partial_fit_predict(X, y, **kw)`` learns the chunk and returns, for each row, the prediction
  made *before* that row was learned (progressive validation), computed inside the same pass.
* A call that raises (bad input, a non-finite state) leaves the estimator exactly as it was:
  the state is snapshotted before the call and restored on any exception.
* Online metrics are fitted attributes: ``n_samples_seen_``; ``cumulative_loss_``, the training
  loss of the prequential predictions, which the compiled pass accumulates row by row (so it does
  not depend on how the stream was chunked; ``running_sum`` does the same in numpy);
  ``n_mistakes_`` for classifiers, counted here from the pass's outputs.
* Randomness comes from one :class:`numpy.random.Generator` owned by the estimator and created from
  ``random_state``; a chunk draws a fixed count of numbers per row in numpy and hands them to the
  compiled pass, so any chunking of the stream sees the same numbers.

A subclass implements four hooks:

``_validate_chunk(X, y, *, reset, from_fit, **kw) -> dict``
    Validate and convert one chunk; no state change other than what ``validate_data`` records.
``_allocate(chunk)``
    Create the state arrays (first call only).
``_learn(chunk) -> ndarray``
    Run the compiled pass; return the raw prequential outputs, one row per sample.
``_response(raw, method)``
    Turn raw outputs into what ``predict`` (or ``decision_function``, ``predict_proba``) returns.

and optionally ``_update_metrics(chunk, raw)``.
"""

import copy
import numbers
import time

import numba
import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .utils.validation import validate_X_chunk

__all__ = [
    "OnlineMixin",
    "OnlineClassifierMixin",
    "OnlineDecisionClassifierMixin",
    "OnlineRegressorMixin",
    "make_generator",
    "running_sum",
    "raise_if_nonfinite",
]


def make_generator(random_state):
    """A :class:`numpy.random.Generator` from ``None``, an int, a Generator or a RandomState."""
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.Generator)):
        return np.random.default_rng(random_state)
    raise ValueError(f"random_state must be None, an int, a Generator or a RandomState; got {random_state!r}.")


@numba.njit(cache=True)
def _seq_sum(start, values):
    s = start
    for i in range(values.shape[0]):
        s += values[i]
    return s


def running_sum(start, values):
    """``start + values[0] + values[1] + ...`` summed left to right.

    Unlike ``np.sum`` (pairwise), the result does not depend on how a stream was split into chunks.
    """
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    return float(_seq_sum(float(start), values))


def raise_if_nonfinite(status, first_row=0, what="state"):
    """Raise if a compiled pass reported (``status >= 0``) the row at which it became non-finite."""
    if status >= 0:
        raise FloatingPointError(
            f"Row {first_row + int(status)} of this chunk would make the model's {what} non-finite "
            "(overflow); the chunk was rejected and the estimator is unchanged. Check the scale of "
            "the features and targets."
        )


class _GeneratorState:
    """A Generator and its bit-generator state at snapshot time (cheaper than a deep copy)."""

    def __init__(self, rng):
        self.rng = rng
        self.state = rng.bit_generator.state

    def restore(self):
        self.rng.bit_generator.state = self.state
        return self.rng


class OnlineMixin:
    """Mixin implementing the streaming contract (see the module docstring)."""

    #: attribute names (besides fitted ``*_`` ones) that belong to the learned state
    #: (``_validated_params``, a cache of the last validated parameters, is not state: never reset)
    _private_state = ("_rng",)

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

    def _partial_fit(self, X, y, *, reset, from_fit, **fit_params):
        snapshot = self._snapshot()
        for k in self._state_keys():  # state loaded read-only (joblib mmap_mode='r') is copied
            v = self.__dict__[k]
            if isinstance(v, np.ndarray) and not v.flags.writeable:
                self.__dict__[k] = v.copy()
        try:
            self._validate_params_once()
            if reset:
                self._reset()
            chunk = self._validate_chunk(X, y, reset=reset, from_fit=from_fit, **fit_params)
            if reset:
                if "random_state" in self._param_names():
                    self._rng = make_generator(self.random_state)
                self.n_samples_seen_ = 0
                self.cumulative_loss_ = 0.0
                self._allocate(chunk)
            raw = self._learn_blocks(chunk, int(getattr(self, "verbose", 0) or 0))
        except BaseException:
            self._restore(snapshot)
            raise
        return raw

    def _learn_blocks(self, chunk, verbose):
        """Run the pass over the chunk: in one block, or (``verbose > 0``) in blocks of rows,
        printing progress after each, like SGD's verbose.

        Splitting a chunk into blocks gives the same result bit for bit (chunking invariance).
        """
        n = chunk["n_samples"]
        block = n if verbose <= 0 else (100_000 if verbose == 1 else 10_000)
        raws = []
        start_time = time.perf_counter()
        for a in range(0, n, block):
            b = min(n, a + block)
            if b - a == n:
                sub = chunk
            else:
                sub = {
                    k: (v[a:b] if hasattr(v, "shape") and len(v.shape) and v.shape[0] == n else v)
                    for k, v in chunk.items()
                }
                sub["n_samples"] = b - a
            raw = self._learn(sub)
            self._update_metrics(sub, raw)
            self.n_samples_seen_ += b - a
            raws.append(raw)
            if verbose > 0:
                self._print_progress(b / max(time.perf_counter() - start_time, 1e-12))
        return raws[0] if len(raws) == 1 else np.concatenate(raws)

    def _print_progress(self, rows_per_s):
        line = f"[{type(self).__name__}] rows seen {self.n_samples_seen_:,}, {rows_per_s:,.0f} rows/s"
        if self.n_samples_seen_ and hasattr(self, "cumulative_loss_"):
            line += f", average online loss {self.cumulative_loss_ / self.n_samples_seen_:.6g}"
        if hasattr(self, "n_mistakes_"):
            line += f", mistake rate {self.n_mistakes_ / self.n_samples_seen_:.4f}"
        print(line, flush=True)

    def __getstate__(self):
        # the cache of validated parameters is not learned state: it is rebuilt on demand
        state = dict(super().__getstate__())
        state.pop("_validated_params", None)
        return state

    @classmethod
    def _param_names(cls):
        names = cls.__dict__.get("_param_names_cache")
        if names is None:
            names = tuple(cls._get_param_names())
            cls._param_names_cache = names
        return names

    def _validate_params_once(self):
        """Validate the parameters, unless none has changed since the last validation."""
        current = tuple(getattr(self, k) for k in self._param_names())
        last = getattr(self, "_validated_params", None)
        if last is not None and len(last) == len(current) and all(a is b for a, b in zip(last, current)):
            return
        self._validate_params()
        self._check_params()
        self._validated_params = current

    def _state_keys(self):
        return [
            k
            for k in vars(self)
            if (k.endswith("_") and not k.startswith("__")) or k in self._private_state
        ]

    def _reset(self):
        for k in self._state_keys():
            delattr(self, k)

    def _snapshot(self):
        params = self._param_names()
        snap = {}
        for k, v in vars(self).items():
            if k in params or isinstance(v, (numbers.Number, str, bytes, type(None), tuple)):
                snap[k] = v
            elif isinstance(v, np.ndarray):
                snap[k] = v.copy()
            elif isinstance(v, np.random.Generator):
                snap[k] = _GeneratorState(v)
            else:
                snap[k] = copy.deepcopy(v)
        return snap

    def _restore(self, snap):
        self.__dict__.clear()
        for k, v in snap.items():
            self.__dict__[k] = v.restore() if isinstance(v, _GeneratorState) else v

    def _draw(self, n_samples, n_per_row, kind="uniform"):
        """Random numbers for a chunk: ``n_per_row`` per row, from the estimator's Generator."""
        if kind == "uniform":
            return self._rng.random((n_samples, n_per_row))
        if kind == "normal":
            return self._rng.standard_normal((n_samples, n_per_row))
        raise ValueError(kind)

    def _update_metrics(self, chunk, raw):
        pass

    def _check_params(self):
        """Checks across parameters that ``_parameter_constraints`` cannot express."""

    # hooks -----------------------------------------------------------------
    def _validate_chunk(self, X, y, *, reset, from_fit, **fit_params):  # pragma: no cover
        raise NotImplementedError

    def _allocate(self, chunk):  # pragma: no cover
        raise NotImplementedError

    def _learn(self, chunk):  # pragma: no cover
        raise NotImplementedError

    def _response(self, raw, method):  # pragma: no cover
        raise NotImplementedError

    # test data (used by tests/test_common.py) --------------------------------
    def _online_test_stream(self, rng, n_samples=60, n_features=4):
        """A small stream this estimator accepts: ``(X, y, first_call_kwargs)``.

        Used by the shared checks in ``tests/test_common.py``; families whose ``fit`` takes other
        inputs (loss matrices, groups) override it.
        """
        raise NotImplementedError


class OnlineClassifierMixin(ClassifierMixin, OnlineMixin):
    """Streaming contract for classifiers: label encoding, ``classes``, mistakes and losses.

    Subclasses provide ``_decision(chunk)``-free cores: ``_learn`` must return raw decision values
    of shape (n_samples, n_heads), one head for binary problems (positive class ``classes_[1]``)
    and one per class (one-vs-rest) otherwise. ``chunk`` holds ``X``, ``y_index`` (int64 index into
    ``classes_``) and ``Y`` (float64 targets in {-1, +1}, shape (n_samples, n_heads)).
    """

    def _validate_chunk(self, X, y, *, reset, from_fit, classes=None):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        X, y = validate_X_chunk(
            self, X, y=y, reset=reset, accept_sparse=getattr(self, "_accept_sparse", False)
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
        elif classes is not None and not np.array_equal(np.unique(np.asarray(classes)), self.classes_):
            raise ValueError(
                f"classes={np.unique(classes).tolist()} differs from the classes of the first call "
                f"{self.classes_.tolist()}."
            )
        try:
            idx = np.searchsorted(self.classes_, y)
        except TypeError:  # labels of another type than classes_
            idx = np.zeros(y.shape[0], dtype=np.int64)
        idx = np.clip(idx, 0, self.classes_.shape[0] - 1)
        bad = self.classes_[idx] != y
        if np.any(bad):
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
        return {"X": X, "y_index": idx.astype(np.int64), "Y": np.ascontiguousarray(Y), "n_samples": X.shape[0]}

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
        self.n_mistakes_ = getattr(self, "n_mistakes_", 0) + int(np.count_nonzero(pred != chunk["y_index"]))

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

    def _online_test_stream(self, rng, n_samples=60, n_features=4, n_classes=2):
        X = rng.standard_normal((n_samples, n_features))
        w = rng.standard_normal((n_features, n_classes))
        y = np.argmax(X @ w + 0.3 * rng.standard_normal((n_samples, n_classes)), axis=1)
        y[:n_classes] = np.arange(n_classes)
        return X, y, {"classes": np.arange(n_classes)}

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

    Provides ``decision_function``, ``predict`` and, for the log loss (``loss='log_loss'`` or
    ``'logistic'``), ``predict_proba``, ``predict_log_proba`` and ``partial_fit_predict_proba``:
    the sigmoid of the decision values, normalised across one-vs-rest heads as in SGDClassifier.
    ``_raw_decision(X)`` validates ``X`` and returns decision values of shape (n_samples, n_heads)
    without changing the state.
    """

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

    def _has_proba(self):
        return getattr(self, "loss", None) in ("log_loss", "logistic")

    def _proba_from_decision(self, dec):
        if not self._has_proba():
            raise AttributeError(f"predict_proba is only available for the log loss, not loss={self.loss!r}.")
        dec = np.asarray(dec)
        if dec.ndim == 1:
            dec = dec[:, None]
        p = _sigmoid(dec)
        if p.shape[1] == 1:
            return np.hstack([1.0 - p, p])
        s = p.sum(axis=1, keepdims=True)
        return np.where(s > 0, p / np.where(s > 0, s, 1.0), 1.0 / p.shape[1])

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities (log loss only; one-vs-rest heads normalised as in SGDClassifier).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self._proba_from_decision(self._raw_decision(X))

    @available_if(_has_proba)
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

    @available_if(_has_proba)
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

    ``_learn`` returns raw predictions of shape (n_samples,). ``chunk`` holds ``X`` and ``y``
    (float64).
    """

    def _validate_chunk(self, X, y, *, reset, from_fit):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        X, y = validate_X_chunk(
            self, X, y=y, reset=reset, accept_sparse=getattr(self, "_accept_sparse", False),
            y_numeric=True,
        )
        y = np.ascontiguousarray(y, dtype=np.float64)
        return {"X": X, "y": y, "n_samples": X.shape[0]}

    def _response(self, raw, method):
        if method == "predict":
            return raw.ravel()
        raise ValueError(method)

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
        return self._predict_targets(X)

    def _predict_targets(self, X):  # each regressor: its predictions, shape (n_samples,)
        raise NotImplementedError

    def _online_test_stream(self, rng, n_samples=60, n_features=4):
        X = rng.standard_normal((n_samples, n_features))
        y = X @ rng.standard_normal(n_features) + 0.1 * rng.standard_normal(n_samples)
        return X, y, {}

    @property
    def average_loss_(self):
        """Average training loss of the prequential predictions."""
        check_is_fitted(self, "cumulative_loss_")
        return self.cumulative_loss_ / max(self.n_samples_seen_, 1)

