"""Online kernel selection as a supervised transformer."""

import dataclasses

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from ..base import Chunk, FeatureTransformerMixin, OnlineMixin
from ..kernel_approximation._random_fourier import cos_sin_names
from ..utils.validation import validate_X_chunk
from ._kernel_selection import KernelSelectionClassifier, KernelSelectionRegressor, _KernelSelectionBase

__all__ = ["OnlineKernelSelector"]


@dataclasses.dataclass(eq=False)
class _SelectorChunk(Chunk):
    """The selector's chunk: the keywords its learner's ``partial_fit`` receives."""

    kw: dict = dataclasses.field(default_factory=dict)

class OnlineKernelSelector(FeatureTransformerMixin, OnlineMixin, TransformerMixin, BaseEstimator):
    """Select a Gaussian kernel's bandwidth online, then transform with its random features.

    A supervised transformer, like :class:`~sklearn.feature_selection.SelectFromModel`:
    ``fit`` / ``partial_fit`` run an online kernel-selection learner with random Fourier features
    (by default RF-OKS++, :class:`KernelSelectionClassifier` or :class:`KernelSelectionRegressor`
    with ``n_components=100`` depending on the targets) over the stream, and ``transform`` maps X
    to the [cos, sin] random features of the kernel it currently selects (argmax of q), reusing
    the learner's frequencies. Put it in front of any scikit-learn estimator, e.g. a linear model
    with ``partial_fit``, to give it the bandwidth chosen under bandit feedback.

    Parameters
    ----------
    estimator : KernelSelectionClassifier or KernelSelectionRegressor, default=None
        The kernel-selection learner, with ``n_components`` set (random features). ``None``: RF-OKS++
        with ``n_components=100`` and the paper's bandwidths; a classifier if the targets of the
        first chunk are binary or multiclass labels, a regressor otherwise.
    random_state : int, RandomState instance, Generator or None, default=None
        If not None, seeds the learner (overriding its own ``random_state``).
    verbose : int, default=0
        Print progress while learning, in the format every estimator uses (user guide,
        *Progress on long streams*); the result does not change. The learner inside stays quiet
        unless given ``verbose`` itself.

    Notes
    -----
    For a classification stream, pass ``classes=`` to the first ``partial_fit`` (as for any
    scikit-learn classifier); without it the labels of the first chunk are taken as the classes.

    Attributes
    ----------
    estimator_ : estimator
        The fitted kernel-selection learner.
    selected_kernel_ : int
        Index of the selected kernel (for multiclass problems: argmax of q summed over classes).
    selected_sigma_ : float
        Its bandwidth.
    kernel_weights_ : ndarray of shape (n_kernels,)
        The learner's distribution q over the kernels (averaged over one-vs-rest heads).
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import SGDClassifier
    >>> from sklearn.pipeline import make_pipeline
    >>> from skonline.kernel_selection import OnlineKernelSelector
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(3000, 2))
    >>> y = (np.sin(4 * X[:, 0]) > X[:, 1]).astype(int)
    >>> sel = OnlineKernelSelector(random_state=0).fit(X, y)
    >>> sel.transform(X).shape
    (3000, 200)
    >>> pipe = make_pipeline(OnlineKernelSelector(random_state=0), SGDClassifier(random_state=0))
    >>> float(pipe.fit(X, y).score(X, y)) > 0.8
    True
    """

    _parameter_constraints = {
        "estimator": [_KernelSelectionBase, None],
        "random_state": ["random_state", np.random.Generator],
        "verbose": ["verbose"],
    }

    def __init__(self, estimator=None, *, random_state=None, verbose=0):
        self.estimator = estimator
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ streaming hooks
    def _validate_chunk(self, X, y, *, reset, from_fit, classes=None):
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None.")
        X, y = validate_X_chunk(self, X, y=y, reset=reset, accept_sparse=True)
        kw = {}
        if reset:
            if classes is None and self._task(y) == "classification":
                classes = np.unique(y)
            if classes is not None:
                kw["classes"] = classes
        elif classes is not None:
            kw["classes"] = classes
        return _SelectorChunk(X.shape[0], X=X, y=y, kw=kw)

    def _task(self, y):
        if self.estimator is not None:
            return "regression" if isinstance(self.estimator, KernelSelectionRegressor) else "classification"
        kind = type_of_target(y)
        return "classification" if kind in ("binary", "multiclass") else "regression"

    def _allocate(self, chunk):
        if self.estimator is None:
            cls = KernelSelectionClassifier if self._task(chunk.y) == "classification" else KernelSelectionRegressor
            est = cls(algorithm="oks++", n_components=100)
        else:
            est = clone(self.estimator)
            if est.n_components is None:
                raise ValueError(
                    "OnlineKernelSelector transforms with random features: its estimator needs "
                    "n_components set (an integer), not None (exact kernel expansion)."
                )
        if self.random_state is not None:
            est.set_params(random_state=int(self._rng_.integers(2**31 - 1)))
        if isinstance(est, KernelSelectionRegressor):
            chunk.kw.pop("classes", None)
        self.estimator_ = est

    def _learn(self, chunk):
        kw = {} if isinstance(self.estimator_, KernelSelectionRegressor) else chunk.kw
        self.estimator_.partial_fit(chunk.X, chunk.y, **kw)
        return None

    def _progress_metrics(self):
        """The progress line reports the learner's online metrics (the selector has no loss)."""
        return self.estimator_._progress_metrics()

    # ------------------------------------------------------------------ transformer
    def _selected(self):
        q = np.atleast_2d(self.estimator_.q_)  # one row per one-vs-rest head
        return int(np.argmax(q.sum(axis=0)))

    @property
    def selected_kernel_(self):
        """Index of the selected kernel."""
        check_is_fitted(self, "estimator_")
        return self._selected()

    @property
    def selected_sigma_(self):
        """Bandwidth of the selected kernel."""
        check_is_fitted(self, "estimator_")
        return float(self.estimator_.sigmas_[self._selected()])

    @property
    def kernel_weights_(self):
        """The learner's distribution over the kernels (averaged over one-vs-rest heads)."""
        check_is_fitted(self, "estimator_")
        return np.atleast_2d(self.estimator_.q_).mean(axis=0)

    _fitted_attribute = "estimator_"

    def _transform(self, X):
        """Random Fourier features of the selected kernel (2 n_components columns)."""
        return self.estimator_.random_features_.transform_kernel(X, self._selected())

    def _feature_names_out(self, names_in):
        """``rff_cos{j}``, ``rff_sin{j}`` (the input names are only checked)."""
        return cos_sin_names("rff", int(self.estimator_.n_components))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]  # computed in float64
        return tags
