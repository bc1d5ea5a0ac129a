"""Group distributionally robust linear models by stochastic approximation (Zhang et al.)."""

import dataclasses
import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..base import Chunk, OnlineDecisionClassifierMixin, OnlineRegressorMixin, raise_if_nonfinite, state_scalar
from ..exceptions import DataAdviceWarning, HorizonExceededWarning
from ..losses import get_loss
from ..utils import _progress, _scaling
from ..utils._deprecation import param, renamed_constraint
from ..utils._warnings import warn
from ..utils.validation import label_positions
from . import _gdro_core as core

__all__ = ["GroupDROClassifier", "GroupDRORegressor"]

_ALGORITHMS = {
    "max": ("smd", "smd_uniform", "online"),
    "weighted": ("smd", "mirror_prox"),
    "top_k": ("smd", "depround", "online"),
}
#: radius='auto' of the regressor with standardize=True (target in running standard deviations);
#: measured on the regression streams of benchmarks/defaults.py (10 elsewhere: the paper's)
AUTO_STANDARDIZED_REGRESSOR_RADIUS = 3.0
#: n_epochs='auto' when fit runs until converged (``tol``): at most this many epochs (scikit-learn's
#: SGD allows 1000)
MAX_EPOCHS_AUTO = 1000
_ROUND_BLOCK = 4096  # rounds per block of uniforms drawn by the pool pass


def _can_stream(est):
    return est.objective != "weighted"


@dataclasses.dataclass(eq=False)
class GroupChunk(Chunk):
    """A GroupDRO chunk: the rows' groups and the targets as a matrix."""

    #: int64 index of each row's group in ``groups_``
    G: object = None
    #: a pooled ``fit`` (``sampling='pool'``): rounds draw from all the rows at once
    pool: bool = False
    #: float64 targets, shape (n_samples, n_heads) (set by ``_restandardize_targets``)
    Ymat: object = None


class _BaseGroupDRO:
    """State machine shared by the classifier and the regressor."""

    #: retired parameter names (one release): old -> new (skonline.utils._deprecation)
    _renamed_params = {"max_iter": "horizon", "eta_w_scale": "step_scale", "eta_q_scale": "eta_scale"}

    _parameter_constraints = {
        "objective": [StrOptions({"max", "weighted", "top_k"})],
        "algorithm": [StrOptions({"smd", "smd_uniform", "online", "depround", "mirror_prox"})],
        "k": [Interval(Integral, 1, None, closed="left"), Interval(Real, 0, 1, closed="right")],
        "radius": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "loss_bound": [None, Interval(Real, 0, None, closed="neither")],
        "step_scale": [Interval(Real, 0, None, closed="left")],
        "eta_scale": [Interval(Real, 0, None, closed="left")],
        "eta_w_scale": renamed_constraint([Interval(Real, 0, None, closed="left")]),
        "eta_q_scale": renamed_constraint([Interval(Real, 0, None, closed="left")]),
        "anytime": ["boolean", StrOptions({"auto"})],
        "horizon": [None, Interval(Integral, 1, None, closed="left")],
        "max_iter": renamed_constraint([None, Interval(Integral, 1, None, closed="left")]),
        "n_epochs": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "tol": [None, Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "sampling": [StrOptions({"pool", "stream"})],
        "average": ["boolean", StrOptions({"auto"})],
        "fit_intercept": ["boolean"],
        "max_buffer": [Interval(Integral, 1, None, closed="left")],
        "record_every": [None, Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state", np.random.Generator],
        "standardize": ["boolean"],
        "verbose": ["verbose"],
    }

    #: CSR rows accepted: dense rows up to 4,096 features, CSR rows beyond (see
    #: ``OnlineMixin._row_container``), which the stream pass learns from their non-zeros
    #: (``_gdro_core``, "sparse rows") and a pooled ``fit`` densifies: the same rows give the same
    #: model in either container
    _accept_sparse = True
    _row_container = "stream"

    #: NaN marks a group with no draw yet (its risk is unknown), and then the objective
    _nonfinite_state_ok = ("group_risks_", "objective_value_")

    _supports_sample_weight = True

    #: standardize=True: features get a scale after 5 rows (the shared default is 10), see the
    #: ``standardize`` parameter
    _standardize_min_count = 5.0

    # metadata routing: request `groups` by default (like scikit-learn's group splitters), so that
    # with routing enabled GridSearchCV / cross_validate pass it to the estimator and the splitter.
    __metadata_request__fit = {"groups": True}
    __metadata_request__partial_fit = {"groups": True}

    # ------------------------------------------------------------------ parameters
    def _check_params(self):
        name = type(self).__name__
        allowed = _ALGORITHMS[self.objective]
        if self.algorithm not in allowed:
            raise ValueError(
                f"algorithm={self.algorithm!r} is not available for objective={self.objective!r}; "
                f"choose one of {list(allowed)}."
            )
        loss = get_loss(self.loss)
        if self.algorithm == "mirror_prox":
            loss.check(smooth=True, estimator=f"{name}(algorithm='mirror_prox')",
                       reason="Stochastic mirror-prox (Alg. 4) assumes L-smooth risks.")
        no_anytime = self.algorithm in ("depround", "mirror_prox")
        if self.anytime is True and no_anytime:
            raise ValueError(
                f"algorithm={self.algorithm!r} has no anytime version in the paper; use "
                "anytime='auto' or False (fixed step sizes for a horizon T)."
            )
        if self.anytime is False and self.objective == "top_k" and self.algorithm == "online":
            raise ValueError(
                "objective='top_k' with algorithm='online' is the anytime one-sample method "
                "(Alg. 7): it has no fixed-step version; use anytime='auto' or True."
            )

    def _alg_code(self):
        a = self.algorithm
        if a == "smd":
            return core.SMD_WEIGHTED if self.objective == "weighted" else core.SMD
        return {"smd_uniform": core.SMD_UNIFORM, "online": core.ONLINE,
                "depround": core.DEPROUND, "mirror_prox": core.MIRROR_PROX}[a]

    def _resolve_k(self, m):
        if self.objective != "top_k":
            return 1
        k = self.k
        if isinstance(k, Integral) and not isinstance(k, bool):
            k = int(k)
        else:
            k = int(math.ceil(float(k) * m - 1e-12))
        if k > m:
            raise ValueError(
                f"k={self.k} exceeds the number of groups ({m}); the average top-k risk needs "
                "1 <= k <= number of groups."
            )
        return max(k, 1)

    # ------------------------------------------------------------------ chunk validation
    def _validate_chunk(self, X, y, *, reset, from_fit, groups=None, group_labels=None, **kw):
        if not from_fit and not _can_stream(self):  # pragma: no cover - partial_fit is hidden
            raise ValueError("objective='weighted' is fit-only.")
        chunk = super()._validate_chunk(X, y, reset=reset, from_fit=from_fit, **kw)
        n = chunk.n_samples
        if reset:
            labels = self._first_labels(groups, group_labels)
            if groups is None:
                warn(
                    f"{type(self).__name__}.{'fit' if from_fit else 'partial_fit'} was called "
                    "without groups: it trains a single-group model (plain averaged SGD, not group "
                    "DRO). Pass groups=...; inside GridSearchCV, cross_validate or a Pipeline, "
                    "enable metadata routing (sklearn.set_config(enable_metadata_routing=True)) so "
                    "that groups reaches the estimator.",
                    DataAdviceWarning,
                )
        else:
            if group_labels is not None and not np.array_equal(
                np.unique(np.asarray(group_labels)), self.groups_
            ):
                raise ValueError(
                    f"group_labels={np.unique(group_labels).tolist()} differs from the groups of "
                    f"the first call {self.groups_.tolist()}."
                )
            labels = self.groups_
        pool = from_fit and self.sampling == "pool"
        # a pooled fit is standardised with all its rows' statistics (a batch chunk)
        chunk = chunk.extend(GroupChunk, batch=pool, pool=pool,
                             G=self._encode_groups(groups, labels, n, reset, declared=group_labels is not None))
        if reset:
            self.groups_ = labels
            self.n_groups_ = labels.shape[0]
        if chunk.pool:
            counts = np.bincount(chunk.G, minlength=labels.shape[0])
            empty = np.flatnonzero(counts == 0)
            if empty.size:
                raise ValueError(
                    f"Group {labels[empty[0]]!r} has no samples. fit draws every round's samples "
                    "from the groups' rows and cannot sample an empty group; drop it from "
                    "group_labels (or use sampling='stream')."
                )
        self._restandardize_targets(chunk)
        return chunk

    def _restandardize_targets(self, chunk):
        y_mat = chunk.Y if chunk.Y is not None else chunk.y.reshape(-1, 1)
        chunk.Ymat = np.ascontiguousarray(y_mat, dtype=np.float64)

    @staticmethod
    def _first_labels(groups, group_labels):
        if groups is None:
            if group_labels is not None:
                raise ValueError("group_labels was given without groups.")
            return np.array([0])
        src = groups if group_labels is None else group_labels
        arr = np.asarray(src)
        if arr.ndim != 1:
            arr = arr.ravel()
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError("groups must not contain NaN or infinite labels.")
        try:
            labels = np.unique(arr)
        except TypeError as exc:
            raise ValueError(f"group labels must be comparable to each other: {exc}") from None
        if labels.shape[0] == 0:
            raise ValueError("group_labels is empty.")
        return labels

    def _encode_groups(self, groups, labels, n, reset, declared=False):
        if groups is None:
            if labels.shape[0] > 1:
                raise ValueError(
                    f"groups is required: this estimator learns {labels.shape[0]} groups "
                    f"{labels.tolist()}, so every call must say which group each row belongs to "
                    "(groups=None is only accepted for a single-group model)."
                )
            return np.zeros(n, dtype=np.int64)
        g = np.asarray(groups)
        if g.ndim == 2 and g.shape[1] == 1:
            g = g[:, 0]
        if g.ndim != 1 or g.shape[0] != n:
            raise ValueError(
                f"groups must be a 1d array with one label per row: got shape {g.shape} for "
                f"{n} rows."
            )
        idx, bad = label_positions(labels, g)
        if bad is not None:
            row = int(np.flatnonzero(bad)[0])
            if reset and declared:  # fit, or the first partial_fit, with group_labels
                raise ValueError(
                    f"Row {row} has group {g[row]!r}, which is not in group_labels "
                    f"{labels.tolist()}: group_labels must list every group of groups."
                )
            raise ValueError(
                f"Row {row} has group {g[row]!r}, which is not one of the groups "
                f"{labels.tolist()}. Declare every group of the stream on the first call to "
                "partial_fit with group_labels=..."
            )
        return idx

    # ------------------------------------------------------------------ state
    def _resolve_settings(self, chunk):
        """``k_``, ``radius_``, ``epoch_budget_``, ``T_``, ``anytime_`` and ``average_``: the values
        in use (``'auto'`` resolved; the horizon from ``horizon`` or, for a pooled ``fit``, the
        epochs)."""
        self.k_ = self._resolve_k(self.n_groups_)
        if self.radius != "auto":
            self.radius_ = float(self.radius)
        else:
            self.radius_ = AUTO_STANDARDIZED_REGRESSOR_RADIUS if self._is_regressor() and self.standardize else 10.0
        if self.n_epochs != "auto":
            self.epoch_budget_ = float(self.n_epochs)
        else:
            self.epoch_budget_ = float(MAX_EPOCHS_AUTO) if self._converges() else 1.0
        if chunk.pool:
            T = None if self._converges() else self._pool_horizon(chunk)
        else:
            T = param(self, "horizon")
        if self.anytime == "auto":
            anytime = (self.objective == "top_k" and self.algorithm == "online") or (
                T is None and self.algorithm not in ("depround", "mirror_prox")
            )
        else:
            anytime = bool(self.anytime)
        if not anytime and T is None:
            raise ValueError(
                f"algorithm={self.algorithm!r} with fixed step sizes needs the horizon T when "
                "learning from a stream: set horizon (or anytime=True where the algorithm has "
                "an anytime version)."
            )
        self.anytime_ = anytime
        if self.average == "auto":  # the last iterate only where it follows the stream well
            self.average_ = bool(chunk.pool) or not anytime
        else:
            self.average_ = bool(self.average)
        self.T_ = None if T is None else int(T)

    def _allocate(self, chunk):
        m = self.n_groups_
        H = chunk.Ymat.shape[1]
        d = chunk.X.shape[1]
        D = d + int(self.fit_intercept)
        alg = self._alg_code()
        self.D_ = self.radius_ / math.sqrt(2.0)
        # the learned state of core.State (see its docstring for each field)
        self._w_ = np.zeros((H, D))
        self._w_sum_ = np.zeros((H, D))
        self._log_q_ = np.full(m, -math.log(m))
        self._q_linear_ = np.exp(self._log_q_)
        self._q_sum_ = np.zeros(m)
        self._avg_weight_sum_ = np.zeros(1)
        self._w_norm2_ = np.zeros(1)
        self._eta_w_ = np.zeros(1)
        self._eta_q_ = np.zeros(1)
        self._gamma_ = np.zeros(1)
        self._q_order_ = np.arange(m, dtype=np.int64)
        self._group_loss_sum_ = np.zeros(m)
        self.group_draws_ = np.zeros(m, dtype=np.int64)
        self._x_norm2_max_ = np.zeros(1)
        self._y_abs_max_ = np.zeros(1)
        self._t_ = np.zeros(1, dtype=np.int64)
        # a CSR stream's lazy form of w and w_sum (core.Lazy; settled: scale 1, clock 0)
        sparse = sp.issparse(chunk.X)
        self._w_scale_ = np.ones(1)
        self._avg_clock_ = np.zeros(1)
        self._avg_stamp_ = np.zeros(D if sparse else 0)
        # the stream's queues, core.StreamBuffers (grown on demand): dense rows, or CSR rows
        self._buffer_X_ = np.zeros((m, 1, 0 if sparse else d))
        self._buffer_cols_ = np.zeros((m, 1, 0), dtype=np.int64)
        self._buffer_vals_ = np.zeros((m, 1, 0))
        self._buffer_nnz_ = np.zeros((m, 1), dtype=np.int64)
        self._buffer_Y_ = np.zeros((m, 1, H + 1))  # the heads' targets and the sample weight
        self._buffer_head_ = np.zeros(m, dtype=np.int64)
        self._buffer_length_ = np.zeros(m, dtype=np.int64)
        self._uniforms_ = np.zeros(1)
        self._uniforms_head_ = np.zeros(1, dtype=np.int64)
        self._uniforms_length_ = np.zeros(1, dtype=np.int64)
        self._pending_groups_ = np.zeros(max(m, self.k_), dtype=np.int64)
        self._n_pending_ = np.zeros(1, dtype=np.int64)
        self.history_coef_ = None
        self.history_q_ = None
        self.history_iter_ = None
        self.n_epochs_ = None
        if alg in (core.SMD_WEIGHTED, core.MIRROR_PROX):
            self.weights_ = self._default_weights(np.bincount(chunk.G, minlength=m))
        else:
            self.weights_ = np.ones(m)

    def _samples_per_round(self, m):
        alg = self._alg_code()
        if alg == core.SMD:
            return m
        if alg == core.DEPROUND:
            return self.k_
        return 1

    def _converges(self):
        """Whether a pooled ``fit`` runs epochs until the objective stops improving (``tol``)
        rather than for a horizon fixed in advance: the anytime step sizes need no horizon, so
        only the algorithms that have them can stop when converged; the weighted objective reads
        each group's budget as the paper prescribes; ``horizon`` fixes the horizon."""
        return (self.tol is not None and param(self, "horizon") is None and self.anytime is not False
                and self.objective != "weighted" and self.algorithm not in ("depround", "mirror_prox"))

    def _pool_horizon(self, chunk):
        """Rounds of a pooled ``fit``: ``horizon``, or ``n_epochs`` epochs' worth of samples (with
        ``tol``: the most it may run)."""
        if param(self, "horizon") is not None:
            return int(param(self, "horizon"))
        m = self.n_groups_
        counts = np.bincount(chunk.G, minlength=m)
        alg = self._alg_code()
        epochs = self.epoch_budget_
        if alg == core.SMD_WEIGHTED:
            return max(1, int(math.ceil(epochs * counts.max())))
        if alg == core.MIRROR_PROX:
            return max(1, int(math.floor(epochs * counts.min() / 2)))
        return max(1, int(math.ceil(epochs * chunk.n_samples / self._samples_per_round(m))))

    def _default_weights(self, counts):
        counts = counts.astype(np.float64)
        if self.algorithm == "smd":  # Alg. 3: p_i = n_i / n_1
            return counts / counts.max()
        nm = counts.min()  # Alg. 4, eq. (45): p_i = (1/sqrt(n_m) + 1) / (1/sqrt(n_m) + sqrt(n_m/n_i))
        return (1.0 / math.sqrt(nm) + 1.0) / (1.0 / math.sqrt(nm) + np.sqrt(nm / counts))

    # ------------------------------------------------------------------ learning
    def _loss_info(self):
        loss = get_loss(self.loss)
        if loss.name == "squared_error":
            return loss, core.LIP_SQUARED, 0.0
        return loss, core.LIP_CONST, float(loss.lipschitz_constant())

    def _inv_b(self):
        return 1.0 if self.loss_bound is None else 1.0 / float(self.loss_bound)

    def _learn_blocks(self, chunk, verbose):
        if not chunk.pool:
            return super()._learn_blocks(chunk, verbose)
        # a pooled fit resamples the whole table: one block; it reports each epoch (_epoch_progress)
        return super()._learn_blocks(chunk, 0)

    def _epoch_progress(self):
        """``report(objective, epoch=None)`` printing a pooled fit's progress line after an epoch:
        the rows drawn so far, the rate over the epoch, the objective of the model fit would return
        on the training rows; ``None`` when quiet."""
        if not self.verbose:
            return None
        interval, last = _progress.Interval(), {"drawn": int(self.group_draws_.sum()), "epoch": 0}

        def report(objective, epoch=None):
            drawn = int(self.group_draws_.sum())
            last["epoch"] += 1
            _progress.print_progress(
                type(self).__name__, epoch=last["epoch"] if epoch is None else epoch, rows=drawn,
                interval_rows=drawn - last["drawn"], seconds=interval.lap(), metrics=[("objective", objective)],
            )
            last["drawn"] = drawn

        return report

    def _learn(self, chunk):
        before = self.n_iter_
        if chunk.pool:
            raw, pool_risks = self._learn_pool(chunk)
        else:
            raw, pool_risks = self._learn_stream(chunk), None
        self._finish(pool_risks)
        if (not self.anytime_ and self.T_ is not None and before <= self.T_ < self.n_iter_
                and not chunk.pool):
            warn(
                f"{type(self).__name__}: {self.n_iter_} rounds exceed the horizon (horizon="
                f"{self.T_}) the fixed step sizes were set for; the steps stay fixed (the paper's "
                "protocol) but the guarantee no longer applies. Use anytime=True for an open-ended "
                "stream.",
                HorizonExceededWarning,
            )
        return raw

    def _with_weights(self, chunk):
        """The targets with the sample weights as a last column: what the compiled passes read."""
        Y = chunk.Ymat
        return np.ascontiguousarray(np.hstack([Y, chunk.sample_weight[:, None]]))

    def _records(self, n_heads):
        """The records the compiled passes read: ``(core.Settings, core.State, core.StreamBuffers)``
        assembled from the parameters and the state attributes (the arrays are shared, not copied:
        the passes update the state in place)."""
        m = self.n_groups_
        alg = self._alg_code()
        loss, lip_kind, lip = self._loss_info()
        inv_b = self._inv_b()
        u_need = core.uniforms_per_decision(alg, m, self.k_)
        settings = core.Settings(
            k=int(self.k_),
            fit_intercept=bool(self.fit_intercept),
            loss=loss.record(),
            inv_b=inv_b,
            inv_hb=inv_b / n_heads,
            clip=self.loss_bound is not None,
            radius=self.radius_,
            anytime=bool(self.anytime_),
            D=float(self.D_),
            T=0 if self.T_ is None else int(self.T_),
            average=bool(self.average_),
            step_scale=float(param(self, "step_scale")),
            eta_scale=float(param(self, "eta_scale")),
            lip_kind=int(lip_kind),
            lip=float(lip),
            max_buffer=int(self.max_buffer),
            max_uniforms=max(1, u_need * (m * int(self.max_buffer) + 1)),
            uniforms_per_decision=int(u_need),
        )
        state = core.State(
            w=self._w_, w_sum=self._w_sum_, log_q=self._log_q_, q=self._q_linear_, q_sum=self._q_sum_,
            a_sum=self._avg_weight_sum_, w_norm2=self._w_norm2_, eta_w=self._eta_w_,
            eta_q=self._eta_q_, gamma=self._gamma_, order=self._q_order_,
            group_loss=self._group_loss_sum_, group_draws=self.group_draws_,
            x_norm2_max=self._x_norm2_max_, y_abs_max=self._y_abs_max_, t=self._t_,
        )
        buffers = core.StreamBuffers(
            X=self._buffer_X_, XI=self._buffer_cols_, XV=self._buffer_vals_, XN=self._buffer_nnz_,
            Y=self._buffer_Y_, head=self._buffer_head_,
            length=self._buffer_length_, uniforms=self._uniforms_, u_head=self._uniforms_head_,
            u_length=self._uniforms_length_, pending=self._pending_groups_,
            n_pending=self._n_pending_,
        )
        return settings, state, buffers

    def _variant(self):
        """What the compiled passes are specialised for: ``(algorithm code, k > 1)`` (and the loss,
        from the type of its record)."""
        return self._alg_code(), self.k_ > 1

    def _lazy(self):
        """The lazy form of a CSR stream's model (:class:`core.Lazy`)."""
        return core.Lazy(scale=self._w_scale_, clock=self._avg_clock_, stamp=self._avg_stamp_,
                         every=core.settle_every(self._w_.shape[1]))

    def _settle(self):
        """Fold a CSR stream's lazy form back into ``_w_`` and ``_w_sum_`` (before a dense pass;
        nothing to do when settled)."""
        if self._w_scale_[0] == 1.0 and self._avg_clock_[0] == 0.0:
            return
        self._w_[...], self._w_sum_[...] = self._model_arrays()
        self._w_scale_[0], self._avg_clock_[0] = 1.0, 0.0
        self._avg_stamp_[:] = 0.0
        self._w_norm2_[0] = float(np.sum(self._w_ * self._w_))

    def _switch_rows(self, sparse):
        """Keep the stream's model and buffered rows in the form of the other container (the
        container follows the width of the stream, so only a change of that rule gets here)."""
        self._settle()
        D = self._w_.shape[1]
        d = D - int(self.fit_intercept)
        m, cap = self._buffer_Y_.shape[:2]
        if sparse:
            Xb = self._buffer_X_
            nnz = np.count_nonzero(Xb, axis=2) if Xb.shape[2] else np.zeros((m, cap), dtype=np.int64)
            w = max(1, int(nnz.max()))
            cols = np.zeros((m, cap, w), dtype=np.int64)
            vals = np.zeros((m, cap, w))
            for g in range(m):
                for slot in range(cap):
                    nz = np.flatnonzero(Xb[g, slot]) if Xb.shape[2] else np.zeros(0, dtype=np.int64)
                    cols[g, slot, :nz.size] = nz
                    vals[g, slot, :nz.size] = Xb[g, slot, nz]
            self._buffer_cols_, self._buffer_vals_ = cols, vals
            self._buffer_nnz_ = nnz.astype(np.int64)
            self._buffer_X_ = np.zeros((m, cap, 0))
            self._avg_stamp_ = np.zeros(D)
        else:
            Xb = np.zeros((m, cap, d))
            for g in range(m):
                for slot in range(cap):
                    k = self._buffer_nnz_[g, slot]
                    Xb[g, slot, self._buffer_cols_[g, slot, :k]] = self._buffer_vals_[g, slot, :k]
            self._buffer_X_ = Xb
            self._buffer_cols_ = np.zeros((m, cap, 0), dtype=np.int64)
            self._buffer_vals_ = np.zeros((m, cap, 0))
            self._buffer_nnz_ = np.zeros((m, cap), dtype=np.int64)
            self._avg_stamp_ = np.zeros(0)

    def _model_arrays(self):
        """``(w_t, sum_s a_s w_s)``, whatever the form they are kept in."""
        if self._avg_stamp_.shape[0] == 0:
            return self._w_, self._w_sum_
        return core.settled(self._w_, self._w_sum_, self._w_scale_[0], self._avg_clock_[0],
                            self._avg_stamp_)

    def _learn_stream(self, chunk):
        X, Y, G = chunk.X, chunk.Ymat, chunk.G
        sparse = sp.issparse(X)
        if sparse != (self._avg_stamp_.shape[0] > 0):
            self._switch_rows(sparse)
        if sparse:
            if not X.has_canonical_format:  # sorted columns, no duplicates (they would count twice)
                X = X.copy()
                X.sum_duplicates()
            Xp = core.CSRRows(indptr=X.indptr.astype(np.int64, copy=False),
                              indices=X.indices.astype(np.int64, copy=False),
                              data=np.asarray(X.data, dtype=np.float64))
        else:
            self._settle()
            Xp = X
        YW = self._with_weights(chunk)
        m = self.n_groups_
        alg = self._alg_code()
        n = X.shape[0]
        c = core.uniforms_per_row(alg, m, self.k_)
        Ur = self._rng_.random((n, c)) if c > 0 else np.zeros((n, 0))
        raw = np.zeros((n, Y.shape[1]))
        loss_acc = np.array([self.cumulative_loss_])
        settings, state, buffers = self._records(Y.shape[1])
        work = core.make_scratch(m, settings.k, Y.shape[1], settings.uniforms_per_decision)
        stream_pass = core.stream_pass_for(*self._variant(), sparse)
        lazy = self._lazy()
        start = 0
        while True:
            status, i = stream_pass(settings, state, lazy, buffers, Xp, YW, G, Ur, raw, loss_acc, work,
                                    start)
            if status != core.STREAM_GROW:
                break
            nnz = int(Xp.indptr[i + 1] - Xp.indptr[i]) if sparse else 0
            buffers = core.grow_stream_buffers(settings, buffers, G[i], c, nnz)
            self._buffer_X_, self._buffer_Y_, self._uniforms_ = buffers.X, buffers.Y, buffers.uniforms
            self._buffer_cols_, self._buffer_vals_, self._buffer_nnz_ = buffers.XI, buffers.XV, buffers.XN
            start = i
        raise_if_nonfinite(i if status == core.STREAM_NONFINITE else -1, what="losses")
        self.cumulative_loss_ = float(loss_acc[0])
        return raw

    def _learn_pool(self, chunk):
        X, Y, G = chunk.X, chunk.Ymat, chunk.G
        X = _scaling.dense_rows(X) if sp.issparse(X) else X  # the pool pass is dense
        self._settle()
        sw = chunk.sample_weight
        YW = self._with_weights(chunk)
        m = self.n_groups_
        H = Y.shape[1]
        alg = self._alg_code()
        k = self.k_
        T = self.T_
        loss, lip_kind, lip = self._loss_info()
        inv_b = self._inv_b()
        xn2 = np.einsum("ij,ij->i", X, X) + float(self.fit_intercept)
        self._x_norm2_max_[0] = max(self._x_norm2_max_[0], float(xn2.max()))
        self._y_abs_max_[0] = max(self._y_abs_max_[0], float(np.abs(Y).max()))
        x_norm = math.sqrt(self._x_norm2_max_[0])
        Gl = core.lipschitz_bound(lip_kind, lip, x_norm, self._y_abs_max_[0], self.radius_, H,
                                  inv_b)
        order = np.argsort(G, kind="stable")
        counts = np.bincount(G, minlength=m)
        rec = self.record_every
        history = []  # the History records of each block of rounds
        report = self._epoch_progress()
        if alg in (core.SMD_WEIGHTED, core.MIRROR_PROX):
            # budgets read without replacement: each pool is a few independent permutations
            n_perm = int(math.ceil(self.epoch_budget_)) + 1
            pieces, ptr = [], [0]
            starts = np.concatenate([[0], np.cumsum(counts)])
            for i in range(m):
                rows_i = order[starts[i]:starts[i + 1]]
                for _ in range(n_perm):
                    pieces.append(self._rng_.permutation(rows_i))
                ptr.append(ptr[-1] + n_perm * counts[i])
            pool_rows = np.concatenate(pieces).astype(np.int64)
            pool_ptr = np.asarray(ptr, dtype=np.int64)
        else:
            pool_rows = order.astype(np.int64)
            pool_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        p = self.weights_ if alg in (core.SMD_WEIGHTED, core.MIRROR_PROX) else np.ones(m)
        pools = core.Pools(ptr=pool_ptr, rows=pool_rows, position=np.zeros(m, dtype=np.int64), p=p)
        settings, state, _ = self._records(H)
        converging = False
        if alg == core.MIRROR_PROX:
            history.append(self._history(0, T, H))
            status = self._run_mirror_prox(settings, state, X, YW, pools, counts, T, Gl, x_norm,
                                           history[0], loss)
        else:
            cw, cq = core.step_constants(alg, self.anytime_, 0 if T is None else T, self.D_, Gl, m, k)
            cw *= float(param(self, "step_scale"))
            cq *= float(param(self, "eta_scale"))
            upr = core.uniforms_per_round(alg, m, k)
            work = core.make_scratch(m, k, H, upr)
            pool_pass = core.pool_pass_for(*self._variant(), rec is not None)

            def rounds(n_rounds):
                """Run ``n_rounds`` more rounds; -1, or the round whose loss was not finite."""
                done = 0
                while done < n_rounds:
                    nb = min(_ROUND_BLOCK, n_rounds - done)
                    t0 = int(self._t_[0])
                    history.append(self._history(t0, t0 + nb, H))
                    U = self._rng_.random((nb, upr))
                    status = pool_pass(settings, state, X, YW, pools, U, cw, cq, history[-1], work)
                    if status >= 0:
                        return t0 + status
                    done += nb
                return -1

            converging = T is None
            if T is not None:
                status = rounds(T)
            else:
                status = self._rounds_until_converged(rounds, X, Y, G, sw, loss, chunk, report)
        if status >= 0:
            raise FloatingPointError(
                f"Round {status} produced a non-finite loss; the fit was rejected and the estimator "
                "is unchanged. Check the scale of the features and targets."
            )
        if rec is not None:
            self.history_coef_ = np.concatenate([h.W[:h.n[0]] for h in history])
            self.history_q_ = np.concatenate([h.q[:h.n[0]] for h in history])
            self.history_iter_ = np.concatenate([h.t[:h.n[0]] for h in history])
        if alg in (core.SMD_WEIGHTED, core.MIRROR_PROX):
            self.n_pool_wraps_ = np.maximum(0, (pools.position - 1) // np.maximum(counts, 1))
        self.n_epochs_ = float(self.group_draws_.sum()) / X.shape[0]
        # metrics of the fitted model on the training rows
        self._finish()
        raw = self._decision_raw(X)
        vals, risks = self._training_risks(raw, Y, G, sw, loss)
        self.cumulative_loss_ = float(vals.sum())
        if report is not None and not converging:  # a fixed horizon: one line, after the last round
            report(self._objective(risks), epoch=f"{self.n_epochs_:.3g}")
        return raw, risks

    def _training_risks(self, raw, Y, G, sw, loss):
        """The (weighted) loss of each training row under the decision values ``raw``, and the
        weighted mean loss of each group."""
        m = self.n_groups_
        vals = sw * loss.value(Y.ravel(), raw.ravel()).reshape(raw.shape).mean(axis=1)
        sums = np.bincount(G, weights=vals, minlength=m)
        mass = np.bincount(G, weights=sw, minlength=m)
        return vals, sums / np.where(mass > 0, mass, 1.0)

    def _history(self, t_start, t_end, n_heads):
        """A :class:`core.History` for rounds ``t_start + 1 .. t_end``: room for the averaged iterate
        of every ``record_every``-th round among them (none without ``record_every``)."""
        rec = self.record_every
        n = 0 if rec is None else t_end // rec - t_start // rec
        return core.History(every=1 if rec is None else int(rec),
                            W=np.zeros((n, n_heads, self._w_.shape[1])), q=np.zeros((n, self.n_groups_)),
                            t=np.zeros(n, dtype=np.int64), n=np.zeros(1, dtype=np.int64))

    def _rounds_until_converged(self, rounds, X, Y, G, sw, loss, chunk, report=None):
        """Epochs of rounds (``n_samples`` samples each) until the objective of the fitted model on
        the training rows has not improved by ``tol`` for ``n_iter_no_change`` epochs in a row, at
        most ``n_epochs`` epochs (scikit-learn's SGD rule). Returns as ``rounds`` does. ``report``:
        called with each epoch's objective (``verbose``, :meth:`_epoch_progress`)."""
        n, m = X.shape[0], self.n_groups_
        per_epoch = max(1, int(math.ceil(n / self._samples_per_round(m))))
        max_rounds = self._pool_horizon(chunk)
        best, stale, done = math.inf, 0, 0
        fi = bool(self.fit_intercept)
        while done < max_rounds:
            nb = min(per_epoch, max_rounds - done)
            status = rounds(nb)
            if status >= 0:
                return status
            done += nb
            W, _ = self._fitted_iterate()  # the model fit would return now (as _finish makes it)
            d = W.shape[1] - int(fi)
            intercept = W[:, d].copy() if fi else np.zeros(W.shape[0])
            raw = np.asarray(X @ np.ascontiguousarray(W[:, :d]).T) + intercept
            objective = self._objective(self._training_risks(raw, Y, G, sw, loss)[1])
            if report is not None:
                report(objective)
            stale = stale + 1 if objective > best - self.tol else 0
            best = min(best, objective)
            if stale >= self.n_iter_no_change:
                return -1
        warn(
            f"{type(self).__name__}.fit stopped after n_epochs={self.epoch_budget_:g} epochs before its "
            f"objective settled (it improved by at least tol={self.tol:g} within the last "
            f"n_iter_no_change={self.n_iter_no_change} epochs); raise n_epochs (or tol).",
            ConvergenceWarning,
        )
        return -1

    def _run_mirror_prox(self, settings, state, X, Y, pools, counts, T, Gl, x_norm, hist, loss):
        m = self.n_groups_
        H = Y.shape[1] - 1  # Y holds the sample weights in its last column
        n_bar = int(counts.min())
        batch = np.maximum(1, counts // max(n_bar, 1)).astype(np.int64)
        p = self.weights_
        D, lnm = self.D_, math.log(m)
        inv_b = settings.inv_b
        Ls = float(loss.smoothness) * x_norm**2 * inv_b / H
        L_tilde = 2.0 * math.sqrt(2.0) * p.max() * (D * D * Ls + D * Gl * math.sqrt(lnm))
        omega = float(np.max(p**2 / batch))
        sigma2 = 2.0 * 1.0 * omega * (1.0 * D * D * Gl * Gl + lnm**2)
        n_eff = 2 * T
        cands = []
        if L_tilde > 0:
            cands.append(1.0 / (math.sqrt(3.0) * L_tilde))
        if sigma2 > 0:
            cands.append(2.0 / math.sqrt(7.0 * sigma2 * n_eff))
        eta = min(cands) if cands else 0.0
        eta_w = 2.0 * D * D * eta * float(param(self, "step_scale"))
        eta_q = 2.0 * eta * lnm * float(param(self, "eta_scale"))
        self._eta_w_[0], self._eta_q_[0], self._gamma_[0] = eta_w, eta_q, 0.0
        self.batch_sizes_ = batch
        mirror_prox_pass = core.mirror_prox_pass_for(self.record_every is not None)
        status = mirror_prox_pass(settings, state, X, Y, pools, batch, T, eta_w, eta_q, hist)
        self._q_linear_[:] = np.exp(self._log_q_)
        return status

    def _fitted_iterate(self):
        """``(W, q)`` of the model ``predict`` uses: the averaged iterate (``average_``) or the last."""
        a_sum = self._avg_weight_sum_[0]
        w, w_sum = self._model_arrays()
        if self.average_ and a_sum > 0:
            return w_sum / a_sum, self._q_sum_ / a_sum
        return w.copy(), np.exp(self._log_q_)

    def _finish(self, pool_risks=None):
        """Refresh the public attributes from the state (``pool_risks``: the group risks of a
        pooled fit's model on its rows; otherwise the running estimates of the rounds)."""
        W, q = self._fitted_iterate()
        d = W.shape[1] - int(self.fit_intercept)
        coef = W[:, :d]
        intercept = W[:, d] if self.fit_intercept else np.zeros(W.shape[0])
        if self._is_regressor():
            self.coef_ = coef[0].copy()
            self.intercept_ = intercept.copy()
        else:
            self.coef_ = coef.copy()
            self.intercept_ = intercept.copy()
        self.q_ = q
        self.q_last_ = np.exp(self._log_q_)
        loss, lip_kind, lip = self._loss_info()
        self.G_ = float(core.lipschitz_bound(lip_kind, lip, math.sqrt(self._x_norm2_max_[0]),
                                             self._y_abs_max_[0], self.radius_,
                                             self._w_.shape[0], self._inv_b()))
        with np.errstate(invalid="ignore", divide="ignore"):
            est = np.where(self.group_draws_ > 0,
                           self._group_loss_sum_ / np.maximum(self.group_draws_, 1), np.nan)
        self.group_risks_ = pool_risks if pool_risks is not None else est
        self.objective_value_ = self._objective(self.group_risks_)

    # ------------------------------------------------------------------ derived state
    n_iter_ = state_scalar("_t_", int, "Rounds completed (the paper's t).")

    eta_w_ = state_scalar("_eta_w_", float, "Step size of the w-player in the last round.")

    eta_q_ = state_scalar("_eta_q_", float, "Step size of the q-player in the last round.")

    gamma_ = state_scalar(
        "_gamma_", float, "Implicit-exploration coefficient of the last round (``eta_q / 2``; 0 for mirror-prox)."
    )

    def _objective(self, risks):
        if np.any(np.isnan(risks)):
            return float("nan")
        if self.objective == "weighted":
            return float(np.max(self.weights_ * risks))
        if self.objective == "top_k":
            return float(np.sort(risks)[::-1][: self.k_].mean())
        return float(np.max(risks))

    def _is_regressor(self):
        return isinstance(self, OnlineRegressorMixin)

    # ------------------------------------------------------------------ prediction
    def _decision_raw(self, X):
        return np.asarray(X @ np.atleast_2d(self.coef_).T) + self.intercept_

    def _raw_decision(self, X):
        check_is_fitted(self, "coef_")
        X = self._predict_input(X, dtype=np.float64, order="C")
        return self._decision_raw(X)

    def group_risk(self, X, y, groups=None):
        """Average loss of the fitted model on each group's rows (the paper's R_i, empirically).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            Group of each row (any labels; they need not be those seen in training).
            ``None``: one group.

        Returns
        -------
        labels : ndarray of shape (n_groups,)
            The sorted distinct labels of ``groups``.
        risks : ndarray of shape (n_groups,)
            The loss (``loss``, raw scale, averaged over heads) of ``predict``'s model per group.
        """
        check_is_fitted(self, "coef_")
        X = self._predict_input(X, dtype=np.float64, order="C")
        y = np.asarray(y)
        if groups is None:
            groups = np.zeros(X.shape[0], dtype=np.int64)
        labels, gidx = np.unique(np.asarray(groups), return_inverse=True)
        if gidx.shape[0] != X.shape[0] or y.shape[0] != X.shape[0]:
            raise ValueError("X, y and groups must have the same number of rows.")
        raw = self._decision_raw(X)
        if self._is_regressor():
            raw = self._predict_output(raw)
            Y = y.astype(np.float64).reshape(-1, 1)
        else:
            idx, bad = label_positions(self.classes_, y)
            if bad is not None:
                raise ValueError("y has labels outside classes_.")
            if raw.shape[1] == 1:
                Y = (2.0 * idx - 1.0).reshape(-1, 1)
            else:
                Y = np.where(idx[:, None] == np.arange(raw.shape[1])[None, :], 1.0, -1.0)
        loss = get_loss(self.loss)
        vals = loss.value(Y.ravel(), raw.ravel()).reshape(raw.shape).mean(axis=1)
        risks = np.bincount(gidx, weights=vals) / np.bincount(gidx)
        return labels, risks

    # shared checks (tests/test_common.py): single-group streams (see tests/dro for groups)

    def _expected_failed_checks(self):
        # as scikit-learn marks it for its own stochastic online learners (SGDClassifier)
        reason = ("sample_weight is not equivalent to removing/repeating samples: the rows are "
                  "sampled (pools or stream rounds), so repeated rows change the draws.")
        return {"check_sample_weight_equivalence_on_dense_data": reason,
                "check_sample_weight_equivalence_on_sparse_data": reason}

    @property
    def _chunk_dependent(self):
        # with sampling='pool', fit resamples the rows of each group (the paper's protocol) and so
        # is not a pass over the rows: it cannot equal partial_fit over a chunking of them. The
        # streaming (partial_fit) path is checked with sampling='stream'.
        return self.sampling == "pool"


class GroupDROClassifier(_BaseGroupDRO, OnlineDecisionClassifierMixin, BaseEstimator):
    """Linear classifier minimising the worst group risk (group DRO) by stochastic approximation.

    Trains a linear model in a Euclidean ball against the worst-case mixture of the groups: the
    saddle point ``min_w max_q sum_i q_i R_i(w)`` over the simplex (worst group), with a weighted
    variant for imbalanced groups, or over the capped simplex (average of the k worst groups).
    Both players run stochastic mirror descent (or a bandit / mirror-prox variant) with the step
    sizes prescribed by the paper's theorems; ``q_`` tells which groups are hard. Multiclass
    problems use one-vs-rest heads trained jointly (the loss of a row is the mean of the heads'
    binary losses).

    Parameters
    ----------
    loss : {'log_loss', 'hinge'}, default='log_loss'
        Binary loss (alias ``'logistic'``).
    objective : {'max', 'weighted', 'top_k'}, default='max'
        ``'max'``: the worst group risk ``max_i R_i(w)`` (GDRO). ``'weighted'``: ``max_i p_i R_i(w)``
        for groups with unequal sample budgets ``n_i`` (the group sizes in ``fit``; ``weights_``
        holds p). ``'top_k'``: the average of the ``k`` largest group risks (ATkRO), less
        sensitive to one outlier group.
    algorithm : {'smd', 'smd_uniform', 'online', 'depround', 'mirror_prox'}, default='smd'
        The paper's method for the objective (all but 'mirror_prox' also learn from a stream):

        * ``'max'``: ``'smd'`` -- SMD(m), one sample of every group per round (Alg. 1);
          ``'smd_uniform'`` -- SMD(1), one sample of a uniformly drawn group (Sagawa et al.'s
          baseline, eq. 17); ``'online'`` -- Online(1), one sample of a group drawn from q, q updated
          by Exp3-IX (Alg. 2).
        * ``'weighted'`` (fit only): ``'smd'`` -- SMDr, group i sampled with probability
          ``p_i = n_i / n_1`` each round for ``n_1`` rounds (Alg. 3); ``'mirror_prox'`` -- SMPAm,
          stochastic mirror-prox with per-group mini-batches of ``n_i / n_m`` samples for
          ``n_m / 2`` rounds, ``p`` from eq. (45) (Alg. 4; smooth losses only).
        * ``'top_k'``: ``'smd'`` -- ATkRO(m), m samples per round (Alg. 5); ``'depround'`` --
          ATkRO(k), k samples per round from the groups DepRound draws (Alg. 6); ``'online'`` --
          ATkRO(1)_a, one sample per round, anytime (Alg. 7).
    k : int or float, default=1
        ``objective='top_k'`` only: number of worst groups averaged; a float in (0, 1] is a
        fraction of the groups (``ceil(k * m)``). Must not exceed the number of groups.
    radius : 'auto' or float, default='auto'
        Radius R of the Euclidean ball ``W = {||[coef, intercept]||_2 <= R}`` the model lives in
        (the paper's domain; its diameter constant is ``D = R / sqrt(2)``). The only capacity
        control: the paper has no other regularisation. The w-player's step sizes grow with R.
        ``'auto'``: the paper's 10, except 3 for a regressor with ``standardize=True``: its
        target is in running standard deviations and its features standardised, so a model of
        norm 3 already spans the target's range, and with R = 10 the steps were too large
        (measured on the raw regression streams of ``benchmarks/defaults.py``: every stream of
        the suite had a lower MAE at 3).
    loss_bound : float, default=None
        ``B``: learn the loss ``l / B`` and show the q-player ``min(l / B, 1)``, in [0, 1] as the
        analysis assumes (Assumption 3; Exp3-IX needs it, or ``1 - l`` turns negative). ``None``:
        raw losses (the paper's experiments with the logistic loss).
    step_scale, eta_scale : float, default=1.0
        Multipliers of the prescribed step sizes of the w- and q-player (the IX coefficient stays
        ``gamma = eta_q / 2``). The prescribed values are the theorems' (listed in the user
        guide, and in ``_gdro_core.step_constants``); in high dimension ``eta_q`` of the SMD
        methods carries a factor ``1/(D G)`` that barely moves q, and ``eta_scale`` is the knob
        to tune (e.g. with GridSearchCV on a worst-group score). ``eta_scale=0`` freezes q at
        uniform: ERM on the uniform mixture of the groups.
    anytime : bool or 'auto', default='auto'
        Time-varying step sizes ``~1/sqrt(t)`` and step-weighted averages (the paper's anytime
        variants, eqs. 19, 30, 52), which need no horizon. ``'auto'``: anytime when the horizon is
        unknown (``partial_fit`` without ``horizon``, a ``fit`` that runs until converged: see
        ``tol``) and for the anytime-only ATkRO(1)_a; fixed steps for the horizon T otherwise.
        'depround' and 'mirror_prox' have no anytime version.
    horizon : int, default=None
        Horizon T (rounds). In ``fit`` with ``sampling='pool'``: exactly this many rounds, with the
        fixed step sizes for T (``tol`` and ``n_epochs`` are then not used). When streaming: the
        horizon the fixed step sizes are set for; rounds beyond it keep the same steps (with a
        warning).
    n_epochs : float or 'auto', default='auto'
        ``fit`` with ``sampling='pool'`` and no ``horizon``: draw about ``n_epochs * n_samples``
        samples in all (``T = ceil(n_epochs n / s)`` rounds of s samples; for 'weighted', T =
        ``n_epochs n_1`` (SMDr) or ``n_epochs n_m / 2`` (SMPAm)). When ``fit`` runs until
        converged (see ``tol``), the most it may run (scikit-learn's ``max_iter`` of
        :class:`~sklearn.linear_model.SGDClassifier`). ``'auto'``: 1000 epochs at most when
        ``fit`` runs until converged, otherwise one epoch (the paper's horizon).
    tol : float or None, default=1e-3
        Stopping criterion of a pooled ``fit``, as in scikit-learn's
        :class:`~sklearn.linear_model.SGDClassifier`: ``fit`` runs epochs (``n_samples`` samples
        each) with the anytime step sizes and stops when the objective of the fitted model on the
        training rows (``objective_value_``: the worst group's mean loss, in standardised target
        units for the regressor with ``standardize=True``) has not improved by at least ``tol``
        for ``n_iter_no_change`` epochs in a row, or after ``n_epochs`` epochs (with a
        ``ConvergenceWarning``). ``None``: ``n_epochs`` epochs (default one) with the fixed step
        sizes for that horizon, the paper's setting (``tol=None`` is the paper's one-pass
        ``fit``). Not used with ``horizon``, ``anytime=False``, ``objective='weighted'`` (its
        budgets are read as the paper prescribes) and the algorithms with a fixed horizon only
        ('depround', 'mirror_prox'), nor by ``partial_fit`` (one pass over its rows). One epoch of
        the paper's steps stops far from the optimum.
    n_iter_no_change : int, default=5
        Epochs without an improvement of at least ``tol`` before a pooled ``fit`` stops.
    sampling : {'pool', 'stream'}, default='pool'
        What ``fit`` does with the rows. ``'pool'``: each group's rows are its distribution P_i and
        every round draws the samples the algorithm asks for from them, with replacement (the
        paper's protocol for Adult), or in shuffled order without replacement for 'weighted' (each
        group's budget read once). ``'stream'``: ``fit`` is ``partial_fit`` on the rows in order.
    average : bool or 'auto', default='auto'
        Predict with the averaged iterate (the paper's output ``w_bar``, certified by the theory);
        False: the last iterate. ``'auto'``: the averaged iterate for a pooled ``fit`` (an
        optimisation over a fixed sample, the paper's protocol) and for fixed step sizes (a
        known horizon ``horizon``), the last iterate when learning an open-ended stream with
        the anytime step sizes, where it follows the stream instead of lagging behind it; the
        choice is ``average_``.
    fit_intercept : bool, default=True
        Add a constant feature; the intercept is part of w (inside the ball).
    max_buffer : int, default=1000
        Streaming: rows of one group waiting for a round that needs them are kept in a FIFO of at
        most this many rows (the oldest is dropped).
    record_every : int, default=None
        ``fit`` with ``sampling='pool'``: every that many rounds, record the averaged iterate in
        ``history_coef_`` / ``history_q_`` / ``history_iter_`` (for learning curves).
    standardize : bool, default=True
        Standardise the features online (and, for the regressor, the target), prequentially:
        row t is centred and scaled with the running mean and standard deviation of the rows
        before it (clipped at 5 standard deviations; see
        :class:`~skonline.preprocessing.OnlineStandardScaler`), and regression predictions are
        mapped back to target units. A pooled ``fit`` standardises with the statistics of all its
        rows. This is the scale ``radius`` and the step sizes assume, on data as it comes:
        features in any units, rare one-hot columns, one extreme row cannot shrink the steps to
        nothing. ``False``: the paper's algorithms on the raw data (what the reproductions use).
        ``coef_`` and ``intercept_`` then act on the standardised features. A feature gets its
        scale after 5 rows (before, it is passed on as 0), not after the 10 of the other
        estimators' internal standardisation: on short tables every row passed on
        as zeros is predicted from the intercept alone (measured with ``benchmarks/defaults.py``
        and on held-out row orders and 150- to 600-row prefixes of its datasets: fewer streams
        below their threshold at 5 rows than at 10, for the classifier and the regressor).
    random_state : int, RandomState or Generator, default=None
        Seeds every random draw (groups, pool rows, DepRound coins).
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metrics (average online loss; mistake rate for the classifier). The result does not
        change. A pooled ``fit`` (``sampling='pool'``) prints one line per epoch instead, with the
        rows drawn and the objective its stopping rule checks (see ``tol``).
    max_iter : int or None, default='deprecated'
        Deprecated alias of ``horizon`` (renamed in 0.1; ``max_iter`` is removed in 0.2).
    eta_w_scale : float, default='deprecated'
        Deprecated alias of ``step_scale`` (renamed in 0.1; ``eta_w_scale`` is removed in 0.2).
    eta_q_scale : float, default='deprecated'
        Deprecated alias of ``eta_scale`` (renamed in 0.1; ``eta_q_scale`` is removed in 0.2).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_heads, n_features)
        Coefficients of the averaged iterate (n_heads = 1 for binary problems).
    intercept_ : ndarray of shape (n_heads,)
    groups_ : ndarray of shape (n_groups,)
        Group labels (sorted); ``[0]`` when no groups were given (a single group).
    n_groups_ : int
        m.
    k_ : int
        Effective k (1 unless ``objective='top_k'``).
    q_ : ndarray of shape (n_groups,)
        Group weights: the averaged ``q_bar`` (the dual solution); ``q_last_`` the current ``q_t``.
    weights_ : ndarray of shape (n_groups,)
        Scale factors p of the weighted objective (ones otherwise).
    group_risks_ : ndarray of shape (n_groups,)
        Per-group risk estimates. After ``fit`` with ``sampling='pool'``: the loss of the fitted
        model on each group's rows. Otherwise: the running mean of the losses of the samples each
        group contributed to the rounds, at the iterate of their round (an estimate that lags the
        model); NaN for a group not sampled yet.
    objective_value_ : float
        The objective (max, weighted max or top-k average) of ``group_risks_``.
    group_draws_ : ndarray of shape (n_groups,)
        Samples of each group used by the rounds.
    n_iter_ : int
        Rounds completed (the paper's t).
    T_ : int or None
        Horizon the fixed step sizes are set for (None with anytime steps).
    radius_ : float
        The radius R in use (``radius``; ``'auto'`` resolved).
    anytime_ : bool
        Whether the anytime schedules are used (``anytime``; ``'auto'`` resolved).
    average_ : bool
        Whether the model is the (step-weighted) average of the iterates or the last iterate
        (``average``; ``'auto'`` resolved).
    epoch_budget_ : float
        ``n_epochs`` with ``'auto'`` resolved: the epochs a pooled ``fit`` draws at most (used only
        by ``fit`` with ``sampling='pool'``; ``n_epochs_`` is the epochs it ran).
    eta_w_, eta_q_, gamma_ : float
        Step sizes (and IX coefficient) of the last round.
    D_, G_ : float
        The constants of the step sizes: ``D = radius / sqrt(2)`` and the gradient bound
        ``G = Lip * max ||[x, 1]|| / (B sqrt(n_heads))`` (a running maximum when streaming).
    n_epochs_ : float or None
        After ``fit`` with ``sampling='pool'``: the epochs it ran (samples drawn / ``n_samples``);
        None when streaming.
    history_coef_, history_q_, history_iter_ : ndarray or None
        With ``record_every``: averaged iterates (n_records, n_heads, n_features + fit_intercept),
        averaged q and the round of each record.
    n_samples_seen_ : int
        Rows passed to ``fit`` / ``partial_fit``.
    cumulative_loss_ : float
        Streaming: loss of the prequential predictions (each row predicted on arrival). After a
        pool ``fit``: the loss of the fitted model on the training rows.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.
    n_mistakes_ : int
        Mistakes of the prequential predictions (streaming) or of the fitted model on the training
        rows (pool ``fit``).

    Notes
    -----
    **Groups and routing.** ``groups`` is a keyword of ``fit`` and ``partial_fit`` that the
    estimator requests for metadata routing by default: with
    ``sklearn.set_config(enable_metadata_routing=True)``, ``GridSearchCV(est, cv=GroupKFold())
    .fit(X, y, groups=g)`` and ``cross_validate`` pass ``g`` to both the splitter and the
    estimator, and a Pipeline forwards it to this step. Without routing, GridSearchCV gives
    ``groups`` to the splitter only; pass it as ``<step>__groups`` through a Pipeline instead.
    ``groups=None`` means one group: every algorithm then reduces to projected, averaged SGD
    with the prescribed step sizes (scikit-learn's estimator checks run in that mode). Since this
    is usually a forgotten ``groups`` (e.g. GridSearchCV without metadata routing), ``fit`` and
    the first ``partial_fit`` warn (a ``DataAdviceWarning``) when ``groups`` is not passed.

    **Streaming.** ``partial_fit`` takes the rows as fresh samples ``(x, y, group)``, each used at
    most once. The algorithm's next round says which groups it needs (all of them for 'smd', one
    drawn from q for 'online', ...); rows wait in a per-group FIFO until their round can run, and
    a drawn group is never redrawn because it is absent (that would bias the sampling). Every
    call after the first must pass ``groups`` unless there is a single group; declare all groups
    on the first call with ``group_labels`` if the first chunk may miss some.

    **Exceptions to the streaming contract.** With ``sampling='pool'`` (the default), ``fit``
    resamples the groups, epoch after epoch until its objective settles (``tol``), instead of
    passing once over the rows, so it does not equal ``partial_fit`` over the same rows (use
    ``sampling='stream'`` for that; ``partial_fit`` is always one pass). ``objective='weighted'`` needs the
    budgets in advance and is fit-only (no ``partial_fit``).

    **Sample weights.** ``sample_weight`` multiplies each row's loss (value and gradient) wherever
    the row is used: a sampled row contributes ``w l`` to its group's risk estimate, to the
    w-player's gradient and to the q-player's loss, so each group's risk becomes the weighted
    risk. ``group_risks_`` after ``fit`` are the weighted means of the rows' losses per group;
    ``cumulative_loss_`` sums ``w l``. A row of weight 0 has no effect on the updates but is still
    drawn (it uses a round's sample), so it is not the same as leaving it out, and integer weights
    are not repeated rows (the pools are sampled uniformly). The step sizes assume gradients
    bounded by ``G_``: weights in [0, 1] keep that (larger weights scale the bounds). Weights are
    per row: ``partial_fit`` stays chunk-invariant.

    References
    ----------
    L. Zhang, H. Bai, P. Zhao, T. Yang, Z.-H. Zhou. Stochastic Approximation Approaches to Group
    Distributionally Robust Optimization and Beyond (journal version of L. Zhang, P. Zhao,
    Z.-H. Zhuang, T. Yang, Z.-H. Zhou, NeurIPS 2023). Algorithms 1-9, Theorems 1-16.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.dro import GroupDROClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((3000, 2))
    >>> groups = rng.integers(0, 3, 3000)
    >>> flip = (groups == 2) & (rng.random(3000) < 0.3)        # group 2 is noisier
    >>> y = ((X[:, 0] > 0) ^ flip).astype(int)
    >>> clf = GroupDROClassifier(random_state=0, eta_scale=10).fit(X, y, groups=groups)
    >>> int(np.argmax(clf.q_))                                # the hardest group gets the most weight
    2
    >>> float(clf.score(X, y)) > 0.8
    True
    """

    _parameter_constraints = {
        **_BaseGroupDRO._parameter_constraints,
        "loss": [StrOptions({"log_loss", "logistic", "hinge"})],
    }


    def __init__(
        self,
        loss="log_loss",
        *,
        objective="max",
        algorithm="smd",
        k=1,
        radius="auto",
        loss_bound=None,
        step_scale=1.0,
        eta_scale=1.0,
        anytime="auto",
        horizon=None,
        n_epochs="auto",
        tol=1e-3,
        n_iter_no_change=5,
        sampling="pool",
        average="auto",
        fit_intercept=True,
        max_buffer=1000,
        record_every=None,
        standardize=True,
        random_state=None,
        verbose=0,
        max_iter="deprecated",
        eta_w_scale="deprecated",
        eta_q_scale="deprecated",
    ):
        self.standardize = standardize
        self.loss = loss
        self.objective = objective
        self.algorithm = algorithm
        self.k = k
        self.radius = radius
        self.loss_bound = loss_bound
        self.step_scale = step_scale
        self.eta_scale = eta_scale
        self.anytime = anytime
        self.horizon = horizon
        self.n_epochs = n_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.sampling = sampling
        self.average = average
        self.fit_intercept = fit_intercept
        self.max_buffer = max_buffer
        self.record_every = record_every
        self.random_state = random_state
        self.verbose = verbose
        self.max_iter = max_iter
        self.eta_w_scale = eta_w_scale
        self.eta_q_scale = eta_q_scale

    def fit(self, X, y, groups=None, classes=None, group_labels=None, sample_weight=None):
        """Fit the model from scratch (by default resampling each group's rows: ``sampling``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            Group of each row (any sortable labels). ``None``: a single group.
        classes : array-like, default=None
            All labels (default: those of ``y``).
        group_labels : array-like, default=None
            All group labels (default: those of ``groups``).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row; it multiplies the row's loss (see Notes).

        Returns
        -------
        self : object
        """
        return super().fit(X, y, groups=groups, classes=classes, group_labels=group_labels,
                           sample_weight=sample_weight)

    @available_if(_can_stream)
    def partial_fit(self, X, y, groups=None, classes=None, group_labels=None, sample_weight=None):
        """Learn from the next chunk of a stream of ``(x, y, group)`` (see Notes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            Group of each row; required on every call once there is more than one group.
        classes : array-like, default=None
            All labels; required on the first call.
        group_labels : array-like, default=None
            First call: all group labels of the stream (default: those of this chunk's groups).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row; it multiplies the row's loss (see Notes).

        Returns
        -------
        self : object
        """
        return super().partial_fit(X, y, groups=groups, classes=classes, group_labels=group_labels,
                                   sample_weight=sample_weight)

    @available_if(_can_stream)
    def partial_fit_predict(self, X, y, groups=None, classes=None, group_labels=None,
                            sample_weight=None):
        """Learn the chunk; return each row's prediction made on its arrival, before learning.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups, classes, group_labels, sample_weight :
            As for :meth:`partial_fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._partial_fit_response(X, y, "predict", groups=groups, classes=classes,
                                          group_labels=group_labels, sample_weight=sample_weight)

class GroupDRORegressor(_BaseGroupDRO, OnlineRegressorMixin, BaseEstimator):
    """Linear regressor minimising the worst group risk (group DRO) by stochastic approximation.

    The regression counterpart of :class:`GroupDROClassifier`: a linear model in a Euclidean ball
    trained against the worst group (or the weighted worst group, or the average of the k worst
    groups) with the paper's stochastic mirror descent / bandit / mirror-prox methods.

    Parameters
    ----------
    loss : {'absolute_error', 'squared_error'}, default='absolute_error'
        ``|p - y|`` or ``(p - y)^2 / 2`` (aliases ``'absolute'``, ``'squared'``). The absolute loss
        is 1-Lipschitz, as the analysis assumes (G = max ||[x, 1]||). The squared loss is not
        Lipschitz on R; on the ball its gradient is bounded by ``(R ||x|| + |y|) ||x||``, the G
        used by its step sizes, which are then small: raise ``n_epochs`` or ``step_scale``.
    objective : {'max', 'weighted', 'top_k'}, default='max'
        ``'max'``: the worst group risk ``max_i R_i(w)`` (GDRO). ``'weighted'``: ``max_i p_i R_i(w)``
        for groups with unequal sample budgets ``n_i`` (the group sizes in ``fit``; ``weights_``
        holds p). ``'top_k'``: the average of the ``k`` largest group risks (ATkRO), less
        sensitive to one outlier group.
    algorithm : {'smd', 'smd_uniform', 'online', 'depround', 'mirror_prox'}, default='smd'
        The paper's method for the objective (all but 'mirror_prox' also learn from a stream):

        * ``'max'``: ``'smd'`` -- SMD(m), one sample of every group per round (Alg. 1);
          ``'smd_uniform'`` -- SMD(1), one sample of a uniformly drawn group (Sagawa et al.'s
          baseline, eq. 17); ``'online'`` -- Online(1), one sample of a group drawn from q, q updated
          by Exp3-IX (Alg. 2).
        * ``'weighted'`` (fit only): ``'smd'`` -- SMDr, group i sampled with probability
          ``p_i = n_i / n_1`` each round for ``n_1`` rounds (Alg. 3); ``'mirror_prox'`` -- SMPAm,
          stochastic mirror-prox with per-group mini-batches of ``n_i / n_m`` samples for
          ``n_m / 2`` rounds, ``p`` from eq. (45) (Alg. 4; smooth losses only).
        * ``'top_k'``: ``'smd'`` -- ATkRO(m), m samples per round (Alg. 5); ``'depround'`` --
          ATkRO(k), k samples per round from the groups DepRound draws (Alg. 6); ``'online'`` --
          ATkRO(1)_a, one sample per round, anytime (Alg. 7).
    k : int or float, default=1
        ``objective='top_k'`` only: number of worst groups averaged; a float in (0, 1] is a
        fraction of the groups (``ceil(k * m)``). Must not exceed the number of groups.
    radius : 'auto' or float, default='auto'
        Radius R of the Euclidean ball ``W = {||[coef, intercept]||_2 <= R}`` the model lives in
        (the paper's domain; its diameter constant is ``D = R / sqrt(2)``). The only capacity
        control: the paper has no other regularisation. The w-player's step sizes grow with R.
        ``'auto'``: the paper's 10, except 3 for a regressor with ``standardize=True``: its
        target is in running standard deviations and its features standardised, so a model of
        norm 3 already spans the target's range, and with R = 10 the steps were too large
        (measured on the raw regression streams of ``benchmarks/defaults.py``: every stream of
        the suite had a lower MAE at 3).
    loss_bound : float, default=None
        ``B``: learn the loss ``l / B`` and show the q-player ``min(l / B, 1)``, in [0, 1] as the
        analysis assumes (Assumption 3; Exp3-IX needs it, or ``1 - l`` turns negative). ``None``:
        raw losses (the paper's experiments with the logistic loss).
    step_scale, eta_scale : float, default=1.0
        Multipliers of the prescribed step sizes of the w- and q-player (the IX coefficient stays
        ``gamma = eta_q / 2``). The prescribed values are the theorems' (listed in the user
        guide, and in ``_gdro_core.step_constants``); in high dimension ``eta_q`` of the SMD
        methods carries a factor ``1/(D G)`` that barely moves q, and ``eta_scale`` is the knob
        to tune (e.g. with GridSearchCV on a worst-group score). ``eta_scale=0`` freezes q at
        uniform: ERM on the uniform mixture of the groups.
    anytime : bool or 'auto', default='auto'
        Time-varying step sizes ``~1/sqrt(t)`` and step-weighted averages (the paper's anytime
        variants, eqs. 19, 30, 52), which need no horizon. ``'auto'``: anytime when the horizon is
        unknown (``partial_fit`` without ``horizon``, a ``fit`` that runs until converged: see
        ``tol``) and for the anytime-only ATkRO(1)_a; fixed steps for the horizon T otherwise.
        'depround' and 'mirror_prox' have no anytime version.
    horizon : int, default=None
        Horizon T (rounds). In ``fit`` with ``sampling='pool'``: exactly this many rounds, with the
        fixed step sizes for T (``tol`` and ``n_epochs`` are then not used). When streaming: the
        horizon the fixed step sizes are set for; rounds beyond it keep the same steps (with a
        warning).
    n_epochs : float or 'auto', default='auto'
        ``fit`` with ``sampling='pool'`` and no ``horizon``: draw about ``n_epochs * n_samples``
        samples in all (``T = ceil(n_epochs n / s)`` rounds of s samples; for 'weighted', T =
        ``n_epochs n_1`` (SMDr) or ``n_epochs n_m / 2`` (SMPAm)). When ``fit`` runs until
        converged (see ``tol``), the most it may run (scikit-learn's ``max_iter`` of
        :class:`~sklearn.linear_model.SGDClassifier`). ``'auto'``: 1000 epochs at most when
        ``fit`` runs until converged, otherwise one epoch (the paper's horizon).
    tol : float or None, default=1e-3
        Stopping criterion of a pooled ``fit``, as in scikit-learn's
        :class:`~sklearn.linear_model.SGDClassifier`: ``fit`` runs epochs (``n_samples`` samples
        each) with the anytime step sizes and stops when the objective of the fitted model on the
        training rows (``objective_value_``: the worst group's mean loss, in standardised target
        units for the regressor with ``standardize=True``) has not improved by at least ``tol``
        for ``n_iter_no_change`` epochs in a row, or after ``n_epochs`` epochs (with a
        ``ConvergenceWarning``). ``None``: ``n_epochs`` epochs (default one) with the fixed step
        sizes for that horizon, the paper's setting (``tol=None`` is the paper's one-pass
        ``fit``). Not used with ``horizon``, ``anytime=False``, ``objective='weighted'`` (its
        budgets are read as the paper prescribes) and the algorithms with a fixed horizon only
        ('depround', 'mirror_prox'), nor by ``partial_fit`` (one pass over its rows). One epoch of
        the paper's steps stops far from the optimum.
    n_iter_no_change : int, default=5
        Epochs without an improvement of at least ``tol`` before a pooled ``fit`` stops.
    sampling : {'pool', 'stream'}, default='pool'
        What ``fit`` does with the rows. ``'pool'``: each group's rows are its distribution P_i and
        every round draws the samples the algorithm asks for from them, with replacement (the
        paper's protocol for Adult), or in shuffled order without replacement for 'weighted' (each
        group's budget read once). ``'stream'``: ``fit`` is ``partial_fit`` on the rows in order.
    average : bool or 'auto', default='auto'
        Predict with the averaged iterate (the paper's output ``w_bar``, certified by the theory);
        False: the last iterate. ``'auto'``: the averaged iterate for a pooled ``fit`` (an
        optimisation over a fixed sample, the paper's protocol) and for fixed step sizes (a
        known horizon ``horizon``), the last iterate when learning an open-ended stream with
        the anytime step sizes, where it follows the stream instead of lagging behind it; the
        choice is ``average_``.
    fit_intercept : bool, default=True
        Add a constant feature; the intercept is part of w (inside the ball).
    max_buffer : int, default=1000
        Streaming: rows of one group waiting for a round that needs them are kept in a FIFO of at
        most this many rows (the oldest is dropped).
    record_every : int, default=None
        ``fit`` with ``sampling='pool'``: every that many rounds, record the averaged iterate in
        ``history_coef_`` / ``history_q_`` / ``history_iter_`` (for learning curves).
    standardize : bool, default=True
        Standardise the features online (and, for the regressor, the target), prequentially:
        row t is centred and scaled with the running mean and standard deviation of the rows
        before it (clipped at 5 standard deviations; see
        :class:`~skonline.preprocessing.OnlineStandardScaler`), and regression predictions are
        mapped back to target units. A pooled ``fit`` standardises with the statistics of all its
        rows. This is the scale ``radius`` and the step sizes assume, on data as it comes:
        features in any units, rare one-hot columns, one extreme row cannot shrink the steps to
        nothing. ``False``: the paper's algorithms on the raw data (what the reproductions use).
        ``coef_`` and ``intercept_`` then act on the standardised features. A feature gets its
        scale after 5 rows (before, it is passed on as 0), not after the 10 of the other
        estimators' internal standardisation: on short tables every row passed on
        as zeros is predicted from the intercept alone (measured with ``benchmarks/defaults.py``
        and on held-out row orders and 150- to 600-row prefixes of its datasets: fewer streams
        below their threshold at 5 rows than at 10, for the classifier and the regressor).
    random_state : int, RandomState or Generator, default=None
        Seeds every random draw (groups, pool rows, DepRound coins).
    verbose : int, default=0
        Print progress while learning: one line per block of 100,000 rows (10,000 with
        ``verbose >= 2``) giving the rows seen, the rate over that block (rows/s) and the online
        metrics (average online loss; mistake rate for the classifier). The result does not
        change. A pooled ``fit`` (``sampling='pool'``) prints one line per epoch instead, with the
        rows drawn and the objective its stopping rule checks (see ``tol``).
    max_iter : int or None, default='deprecated'
        Deprecated alias of ``horizon`` (renamed in 0.1; ``max_iter`` is removed in 0.2).
    eta_w_scale : float, default='deprecated'
        Deprecated alias of ``step_scale`` (renamed in 0.1; ``eta_w_scale`` is removed in 0.2).
    eta_q_scale : float, default='deprecated'
        Deprecated alias of ``eta_scale`` (renamed in 0.1; ``eta_q_scale`` is removed in 0.2).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : ndarray of shape (1,)
    groups_ : ndarray of shape (n_groups,)
        Group labels (sorted); ``[0]`` when no groups were given (a single group).
    n_groups_ : int
        m.
    k_ : int
        Effective k (1 unless ``objective='top_k'``).
    q_ : ndarray of shape (n_groups,)
        Group weights: the averaged ``q_bar`` (the dual solution); ``q_last_`` the current ``q_t``.
    weights_ : ndarray of shape (n_groups,)
        Scale factors p of the weighted objective (ones otherwise).
    group_risks_ : ndarray of shape (n_groups,)
        Per-group risk estimates. After ``fit`` with ``sampling='pool'``: the loss of the fitted
        model on each group's rows. Otherwise: the running mean of the losses of the samples each
        group contributed to the rounds, at the iterate of their round (an estimate that lags the
        model); NaN for a group not sampled yet.
    objective_value_ : float
        The objective (max, weighted max or top-k average) of ``group_risks_``.
    group_draws_ : ndarray of shape (n_groups,)
        Samples of each group used by the rounds.
    n_iter_ : int
        Rounds completed (the paper's t).
    T_ : int or None
        Horizon the fixed step sizes are set for (None with anytime steps).
    radius_ : float
        The radius R in use (``radius``; ``'auto'`` resolved).
    anytime_ : bool
        Whether the anytime schedules are used (``anytime``; ``'auto'`` resolved).
    average_ : bool
        Whether the model is the (step-weighted) average of the iterates or the last iterate
        (``average``; ``'auto'`` resolved).
    epoch_budget_ : float
        ``n_epochs`` with ``'auto'`` resolved: the epochs a pooled ``fit`` draws at most (used only
        by ``fit`` with ``sampling='pool'``; ``n_epochs_`` is the epochs it ran).
    eta_w_, eta_q_, gamma_ : float
        Step sizes (and IX coefficient) of the last round.
    D_, G_ : float
        The constants of the step sizes: ``D = radius / sqrt(2)`` and the gradient bound
        ``G = Lip * max ||[x, 1]|| / (B sqrt(n_heads))`` (a running maximum when streaming).
    n_epochs_ : float or None
        After ``fit`` with ``sampling='pool'``: the epochs it ran (samples drawn / ``n_samples``);
        None when streaming.
    history_coef_, history_q_, history_iter_ : ndarray or None
        With ``record_every``: averaged iterates (n_records, n_heads, n_features + fit_intercept),
        averaged q and the round of each record.
    n_samples_seen_ : int
        Rows passed to ``fit`` / ``partial_fit``.
    cumulative_loss_ : float
        Streaming: loss of the prequential predictions (each row predicted on arrival). After a
        pool ``fit``: the loss of the fitted model on the training rows.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    Notes
    -----
    **Groups and routing.** ``groups`` is a keyword of ``fit`` and ``partial_fit`` that the
    estimator requests for metadata routing by default: with
    ``sklearn.set_config(enable_metadata_routing=True)``, ``GridSearchCV(est, cv=GroupKFold())
    .fit(X, y, groups=g)`` and ``cross_validate`` pass ``g`` to both the splitter and the
    estimator, and a Pipeline forwards it to this step. Without routing, GridSearchCV gives
    ``groups`` to the splitter only; pass it as ``<step>__groups`` through a Pipeline instead.
    ``groups=None`` means one group: every algorithm then reduces to projected, averaged SGD
    with the prescribed step sizes (scikit-learn's estimator checks run in that mode). Since this
    is usually a forgotten ``groups`` (e.g. GridSearchCV without metadata routing), ``fit`` and
    the first ``partial_fit`` warn (a ``DataAdviceWarning``) when ``groups`` is not passed.

    **Streaming.** ``partial_fit`` takes the rows as fresh samples ``(x, y, group)``, each used at
    most once. The algorithm's next round says which groups it needs (all of them for 'smd', one
    drawn from q for 'online', ...); rows wait in a per-group FIFO until their round can run, and
    a drawn group is never redrawn because it is absent (that would bias the sampling). Every
    call after the first must pass ``groups`` unless there is a single group; declare all groups
    on the first call with ``group_labels`` if the first chunk may miss some.

    **Exceptions to the streaming contract.** With ``sampling='pool'`` (the default), ``fit``
    resamples the groups, epoch after epoch until its objective settles (``tol``), instead of
    passing once over the rows, so it does not equal ``partial_fit`` over the same rows (use
    ``sampling='stream'`` for that; ``partial_fit`` is always one pass). ``objective='weighted'`` needs the
    budgets in advance and is fit-only (no ``partial_fit``).

    **Sample weights.** ``sample_weight`` multiplies each row's loss (value and gradient) wherever
    the row is used: a sampled row contributes ``w l`` to its group's risk estimate, to the
    w-player's gradient and to the q-player's loss, so each group's risk becomes the weighted
    risk. ``group_risks_`` after ``fit`` are the weighted means of the rows' losses per group;
    ``cumulative_loss_`` sums ``w l``. A row of weight 0 has no effect on the updates but is still
    drawn (it uses a round's sample), so it is not the same as leaving it out, and integer weights
    are not repeated rows (the pools are sampled uniformly). The step sizes assume gradients
    bounded by ``G_``: weights in [0, 1] keep that (larger weights scale the bounds). Weights are
    per row: ``partial_fit`` stays chunk-invariant.

    References
    ----------
    L. Zhang, H. Bai, P. Zhao, T. Yang, Z.-H. Zhou. Stochastic Approximation Approaches to Group
    Distributionally Robust Optimization and Beyond (journal version of L. Zhang, P. Zhao,
    Z.-H. Zhuang, T. Yang, Z.-H. Zhou, NeurIPS 2023). Algorithms 1-9, Theorems 1-16.

    Examples
    --------
    The toy problem of the paper (Example 1): 16 groups of Bernoulli targets with means 0.5 and
    0.86..1.0, a constant model w in [0, 1]. The worst group pins the GDRO solution at 0.5; the
    average of the 5 worst groups moves it to 0.8.

    >>> import numpy as np
    >>> from skonline.dro import GroupDRORegressor
    >>> rng = np.random.default_rng(0)
    >>> mu = np.r_[0.5, np.linspace(0.86, 1.0, 15)]
    >>> groups = np.repeat(np.arange(16), 2000)
    >>> y = (rng.random(groups.size) < mu[groups]).astype(float)
    >>> X = np.ones((y.size, 1))
    >>> params = dict(loss="squared_error", radius=1.0, fit_intercept=False, loss_bound=2.0,
    ...               n_epochs=8, standardize=False, random_state=0)
    >>> gdro = GroupDRORegressor(**params).fit(X, y, groups=groups)
    >>> top5 = GroupDRORegressor(objective="top_k", k=5, **params).fit(X, y, groups=groups)
    >>> round(float(gdro.coef_[0]), 1), round(float(top5.coef_[0]), 1)
    (0.5, 0.8)
    """

    _parameter_constraints = {
        **_BaseGroupDRO._parameter_constraints,
        "loss": [StrOptions({"squared_error", "squared", "absolute_error", "absolute"})],
    }


    def __init__(
        self,
        loss="absolute_error",
        *,
        objective="max",
        algorithm="smd",
        k=1,
        radius="auto",
        loss_bound=None,
        step_scale=1.0,
        eta_scale=1.0,
        anytime="auto",
        horizon=None,
        n_epochs="auto",
        tol=1e-3,
        n_iter_no_change=5,
        sampling="pool",
        average="auto",
        fit_intercept=True,
        max_buffer=1000,
        record_every=None,
        standardize=True,
        random_state=None,
        verbose=0,
        max_iter="deprecated",
        eta_w_scale="deprecated",
        eta_q_scale="deprecated",
    ):
        self.standardize = standardize
        self.loss = loss
        self.objective = objective
        self.algorithm = algorithm
        self.k = k
        self.radius = radius
        self.loss_bound = loss_bound
        self.step_scale = step_scale
        self.eta_scale = eta_scale
        self.anytime = anytime
        self.horizon = horizon
        self.n_epochs = n_epochs
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.sampling = sampling
        self.average = average
        self.fit_intercept = fit_intercept
        self.max_buffer = max_buffer
        self.record_every = record_every
        self.random_state = random_state
        self.verbose = verbose
        self.max_iter = max_iter
        self.eta_w_scale = eta_w_scale
        self.eta_q_scale = eta_q_scale

    def fit(self, X, y, groups=None, group_labels=None, sample_weight=None):
        """Fit the model from scratch (by default resampling each group's rows: ``sampling``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            Group of each row (any sortable labels). ``None``: a single group.
        group_labels : array-like, default=None
            All group labels (default: those of ``groups``).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row; it multiplies the row's loss (see Notes).

        Returns
        -------
        self : object
        """
        return super().fit(X, y, groups=groups, group_labels=group_labels, sample_weight=sample_weight)

    @available_if(_can_stream)
    def partial_fit(self, X, y, groups=None, group_labels=None, sample_weight=None):
        """Learn from the next chunk of a stream of ``(x, y, group)`` (see Notes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups : array-like of shape (n_samples,), default=None
            Group of each row; required on every call once there is more than one group.
        group_labels : array-like, default=None
            First call: all group labels of the stream (default: those of this chunk's groups).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weight of each row; it multiplies the row's loss (see Notes).

        Returns
        -------
        self : object
        """
        return super().partial_fit(X, y, groups=groups, group_labels=group_labels,
                                   sample_weight=sample_weight)

    @available_if(_can_stream)
    def partial_fit_predict(self, X, y, groups=None, group_labels=None, sample_weight=None):
        """Learn the chunk; return each row's prediction made on its arrival, before learning.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        groups, group_labels, sample_weight :
            As for :meth:`partial_fit`.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._partial_fit_response(X, y, "predict", groups=groups,
                                          group_labels=group_labels, sample_weight=sample_weight)

    def _predict_targets(self, X):
        """Predicted targets of the averaged model."""
        return self._raw_decision(X)[:, 0]
