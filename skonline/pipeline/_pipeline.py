"""Online pipelines: chain online transformers and a learner, and stream chunks through them.

scikit-learn's :class:`~sklearn.pipeline.Pipeline` has no ``partial_fit``, and fitting a scaler
on a whole chunk before the learner sees it would scale each row with statistics of the rows after
it. :class:`OnlinePipeline` streams every chunk prequentially: each transformer returns row ``t``
transformed with the state it had **before** row ``t`` (``partial_fit_transform``), and the final
learner learns the transformed rows in order. So the pipeline follows the same streaming contract
as every skonline estimator: ``fit`` equals ``partial_fit`` over any chunking, bit for bit; a
rejected chunk changes nothing; pickling mid-stream and continuing equals never stopping.
"""

import copy
import functools
import itertools

from sklearn.base import clone
from sklearn.pipeline import Pipeline, _name_estimators
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..base import OnlineMixin, commit

__all__ = ["OnlinePipeline", "make_online_pipeline"]


def _final_has(attr):
    def check(self):
        return hasattr(self._final_estimator, attr)

    return check


def _is_fitted(est):
    try:
        check_is_fitted(est)
    except Exception:  # NotFittedError, or an estimator check_is_fitted cannot judge
        return False
    return True


def stream_step(name, step, X, **kw):
    """One transformer step of a stream: ``X`` transformed row by row with the state before each row.

    The rule of :class:`OnlinePipeline` (and of :class:`skonline.compose.OnlineColumnTransformer`):
    an online transformer learns the chunk (``partial_fit_transform``); a fitted transformer is
    used as it is; an unfitted fixed feature map (``_fixed_map``) is fitted on its first chunk; any
    other transformer is refused (fitted on a chunk, it would transform each row with statistics
    of later rows).
    """
    if hasattr(step, "partial_fit_transform"):
        return step.partial_fit_transform(X, **kw)
    if _is_fitted(step):
        return step.transform(X)
    if getattr(step, "_fixed_map", False):
        return step.fit(X, **kw).transform(X)
    raise TypeError(
        f"Step {name!r} ({type(step).__name__}) is not an online transformer: it has no "
        "partial_fit_transform, is not fitted, and is not a fixed feature map. Fitted "
        "on a chunk it would transform each row with statistics of later rows. Use an "
        "online transformer (e.g. skonline.preprocessing.OnlineStandardScaler) or fit "
        "it beforehand."
    )


def reset_step(step):
    """The step ready for a new stream: an online transformer reset in place, an unfitted copy of a
    fixed feature map, a fitted fixed transformer as it is."""
    if hasattr(step, "_reset") and hasattr(step, "_is_initialized"):
        step._reset()
        return step
    if getattr(step, "_fixed_map", False):
        return clone(step)
    return step


class OnlinePipeline(Pipeline):
    """A pipeline of online transformers and a final online learner, streamed prequentially.

    Every step but the last is a transformer; in a stream each one must be one of:

    * an **online transformer** with ``partial_fit_transform`` (the skonline scalers,
      :class:`~skonline.kernel_selection.OnlineKernelSelector`): row ``t`` is transformed with
      the state before ``t``, then learned;
    * a **fixed map** (:class:`~skonline.kernel_approximation.RandomFourierFeatures`,
      :class:`~skonline.kernel_approximation.TaylorFeatures`, or any transformer fitted
      beforehand): used as is; an unfitted skonline feature map is fitted on the first chunk
      (its fit only draws or sets up the map from the number of features).

    A scikit-learn transformer that learns from the data (``StandardScaler``, ...) is refused
    unless already fitted: fitted on a chunk, it would scale each row with the rows after it.

    ``partial_fit``, ``partial_fit_predict`` (and the ``decision_function`` / ``predict_proba``
    variants the final step has) pass each chunk through the transformers, then to the final
    step, with the keywords (``classes``, ``groups``, ...) given to the final step. ``fit`` resets
    every step and streams ``X`` once. ``predict``, ``transform``, ``score``... are
    scikit-learn's: the current state of every step, nothing learned. Nested parameters
    (``GridSearchCV``), ``set_output``, cloning and pickling work as for ``Pipeline``.

    Parameters
    ----------
    steps : list of (str, estimator) tuples
    memory : None
        Not supported (caching fitted transformers contradicts streaming); kept for
        scikit-learn's ``Pipeline`` signature.
    verbose : bool, default=False

    See Also
    --------
    make_online_pipeline : Build an OnlinePipeline from estimators, naming the steps.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.pipeline import make_online_pipeline
    >>> from skonline.preprocessing import OnlineStandardScaler
    >>> from skonline.kernel_selection import KernelSelectionClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((1000, 3)) * [1.0, 1e3, 1e-3] + [0.0, 5e3, 1.0]   # raw units
    >>> y = (X @ [1.0, 1e-3, 1e3] > 1005.0).astype(int)
    >>> learner = KernelSelectionClassifier(standardize=False, random_state=0)   # the scaler does it
    >>> pipe = make_online_pipeline(OnlineStandardScaler(), learner)
    >>> online = np.concatenate([pipe.partial_fit_predict(X[i:i + 100], y[i:i + 100], classes=[0, 1])
    ...                          for i in range(0, 1000, 100)])     # each row predicted, then learned
    >>> float(np.mean(online[500:] == y[500:]))
    0.96
    """

    def __init__(self, steps, *, memory=None, verbose=False):
        super().__init__(steps, memory=memory, verbose=verbose)

    # ------------------------------------------------------------------ streaming
    def _transformer_steps(self):
        return [(name, t) for name, t in self.steps[:-1] if t is not None and t != "passthrough"]

    def _split_params(self, params):
        """``step__key`` keywords go to that step; the rest to the final step."""
        per_step = {name: {} for name, _ in self.steps}
        final = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if sep and name in per_step:
                per_step[name][sub] = value
            else:
                final[key] = value
        per_step[self.steps[-1][0]].update(final)
        return per_step

    def _stream_transform(self, X, per_step):
        for name, step in self._transformer_steps():
            X = stream_step(name, step, X, **per_step.get(name, {}))
        return X

    def _stream(self, method, X, y, params, reset=False):
        """Run a chunk through the transformers, then ``final.method`` (``None``: no final call).

        Atomically: the chunk streams through private copies of the steps, and every step takes its
        copy's state at the end, all in one step (:func:`skonline.base.commit`). If anything
        raises (a rejected chunk, a ``KeyboardInterrupt`` at any line), no step has changed; once
        the commit is done, every step has learned the chunk.
        """
        originals = [step for _, step in self.steps]
        keep = [i for i, step in enumerate(originals) if hasattr(step, "__dict__")]
        bases = [originals[i].__dict__ for i in keep]
        try:
            work = self._working_copy()
            if reset:
                work._reset_steps()
            per_step = work._split_params(params)
            out = work._stream_transform(X, per_step)
            if method is not None:
                out = getattr(work._final_estimator, method)(out, y, **per_step[self.steps[-1][0]])
        except BaseException:
            for step in originals:  # what the copies appended to buffers they share with the steps
                if isinstance(step, OnlineMixin):
                    step._discard_attempt()
            raise
        copies = [step for _, step in work.steps]
        commit([originals[i] for i in keep], [copies[i].__dict__ for i in keep], bases)
        return out

    def _working_copy(self):
        """A pipeline like this one whose steps are private copies (an online step's
        :meth:`~skonline.base.OnlineMixin._working_copy`, a deep copy of any other)."""
        work = object.__new__(type(self))
        work.__dict__ = dict(self.__dict__)
        work.steps = [
            (name, step if not hasattr(step, "__dict__") else
             step._working_copy() if isinstance(step, OnlineMixin) else copy.deepcopy(step))
            for name, step in self.steps
        ]
        return work

    def _pinned(self):
        """A view of this pipeline whose steps are views of the steps' states as committed now, all
        read in one step (see :func:`skonline.base.reads_state`)."""
        steps = [step for _, step in self.steps]
        states = list(map(getattr, steps, itertools.repeat("__dict__"), itertools.repeat(None)))  # C only
        views = []
        for step, state in zip(steps, states):
            if state is not None:
                step = object.__new__(type(step))
                step.__dict__ = state
            views.append(step)
        view = object.__new__(type(self))
        view.__dict__ = dict(self.__dict__)
        view.steps = [(name, v) for (name, _), v in zip(self.steps, views)]
        return view

    def _reset_steps(self):
        steps = []
        for name, step in self.steps:
            if step is None or step == "passthrough":
                steps.append((name, step))
            elif name == self.steps[-1][0]:
                steps.append((name, step))  # its fit resets it
            else:
                steps.append((name, reset_step(step)))
        self.steps = steps

    def fit(self, X, y=None, **params):
        """Reset every step, then stream the rows of ``X`` through the pipeline in order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
        **params : dict
            Keywords for the final step's ``partial_fit`` (``classes``, ``groups``, ...), or
            ``step__key`` for another step.

        Returns
        -------
        self : OnlinePipeline
        """
        final = self._final_estimator
        self._stream(None if final in (None, "passthrough") else "fit", X, y, params, reset=True)
        return self

    def partial_fit(self, X, y=None, **params):
        """Stream one chunk through the pipeline: transformers prequentially, then the learner.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
        **params : dict
            Keywords for the final step's ``partial_fit`` (e.g. ``classes`` on the first call).

        Returns
        -------
        self : OnlinePipeline
        """
        self._stream("partial_fit", X, y, params)
        return self

    @available_if(_final_has("partial_fit_predict"))
    def partial_fit_predict(self, X, y=None, **params):
        """Learn the chunk; return each row's prediction made before it was learned.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **params : dict
            As for :meth:`partial_fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._stream("partial_fit_predict", X, y, params)

    @available_if(_final_has("partial_fit_decision_function"))
    def partial_fit_decision_function(self, X, y=None, **params):
        """Learn the chunk; return each row's decision value computed before it was learned.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **params : dict
            As for :meth:`partial_fit`.

        Returns
        -------
        decision : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return self._stream("partial_fit_decision_function", X, y, params)

    @available_if(_final_has("partial_fit_predict_proba"))
    def partial_fit_predict_proba(self, X, y=None, **params):
        """Learn the chunk; return each row's class probabilities computed before it was learned.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        **params : dict
            As for :meth:`partial_fit`.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self._stream("partial_fit_predict_proba", X, y, params)

    @property
    def _supports_sample_weight(self):
        """A ``sample_weight`` keyword goes to the final step, which decides."""
        return getattr(self._final_estimator, "_supports_sample_weight", False)

    @property
    def n_samples_seen_(self):
        """Rows the final step has learned."""
        return self._final_estimator.n_samples_seen_

    # shared checks (tests/test_common.py) -------------------------------------------------
    def _expected_failed_checks(self):
        reason = (
            "the steps are the pipeline's learned state: fit trains them in place, as scikit-learn's "
            "Pipeline does (scikit-learn does not run this check on Pipeline either)"
        )
        failed = {"check_estimators_overwrite_params": reason}
        failed["check_classifiers_one_label_sample_weights"] = (
            "a row of weight 0 still enters the scaler's statistics and the learner's feature "
            "statistics (a weight only scales the row's loss), so on 10 rows the predictions need not "
            "all be the remaining class. The final step alone is in the same case (the check lets it "
            "pass because it matches the estimator's name, here full of brackets, as a regular "
            "expression against its own assertion message); the pipeline passed only while the "
            "scaler's warm-up sent 10 rows of zeros"
        )
        return failed

    @available_if(_final_has("partial_fit_transform"))
    def partial_fit_transform(self, X, y=None, **params):
        """Learn the chunk; return each row transformed by every step before it was learned.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.
        **params : dict

        Returns
        -------
        X_new : {ndarray, sparse matrix}
        """
        return self._stream("partial_fit_transform", X, None, params)


def _reading_committed_steps(name):
    """``Pipeline.<name>`` run on :meth:`OnlinePipeline._pinned` (same availability)."""
    descriptor = Pipeline.__dict__[name]
    fn = descriptor.fn

    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return fn(self._pinned(), *args, **kwargs)

    method.reads_committed_state = True
    return available_if(descriptor.check)(method)


for _name in ("predict", "predict_proba", "predict_log_proba", "decision_function", "score_samples",
              "transform", "inverse_transform", "score"):
    setattr(OnlinePipeline, _name, _reading_committed_steps(_name))


def make_online_pipeline(*steps, verbose=False):
    """Build an :class:`OnlinePipeline` from estimators, naming each step after its class.

    Parameters
    ----------
    *steps : estimators
        Online transformers (or fixed feature maps), then an online learner.
    verbose : bool, default=False

    Returns
    -------
    pipeline : OnlinePipeline

    Examples
    --------
    >>> from skonline.pipeline import make_online_pipeline
    >>> from skonline.preprocessing import OnlineStandardScaler
    >>> from skonline.linear_model import ScaleInvariantClassifier
    >>> make_online_pipeline(OnlineStandardScaler(), ScaleInvariantClassifier())
    OnlinePipeline(steps=[('onlinestandardscaler', OnlineStandardScaler()),
                          ('scaleinvariantclassifier', ScaleInvariantClassifier())])
    """
    return OnlinePipeline(_name_estimators(steps), verbose=verbose)

