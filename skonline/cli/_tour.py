"""``skonline tour``: every family on the public datasets, one prequential pass per learner.

Private module behind the command line (:mod:`skonline.cli`). Each family runs its learners
on the benchmark datasets found in the data home (never downloaded here), on a prefix of at most
``MAX_ROWS`` rows, and on small synthetic data (fixed seed) for each dataset that is missing. The
tour prints one results table and writes a few plots.

Every number is a *progressive* (prequential) score: each row is predicted before it is learned,
in one pass, except for the group-DRO family, which fits on a training part and is scored on
held-out rows per group (it is an offline-sampling method).
"""

import os
import shutil
import sys
import time
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MAX_ROWS = 20_000  # prefix of each real dataset
N_SYNTHETIC = 4_000  # rows of each synthetic stand-in
N_QUICK = 1_000  # rows with --quick
CHUNK = 100  # chunk size of the scikit-learn baselines (predict the chunk, then learn it)

FAMILIES = ("start", "linear_model", "experts", "kernel_selection", "kernel_ridge", "dro")

# the real datasets each family uses, with the synthetic stand-in used when a file is missing
PLAN = {
    "start": [("magic04", "bumps_binary"), ("casp", "bumps_regression")],
    "linear_model": [("magic04", "logistic"), ("phishing", "logistic"), ("ijcnn1", "logistic"),
                     ("cod-rna", "logistic")],
    "experts": [("casp", "drift")],
    "kernel_selection": [("magic04", "bumps_binary"), ("phishing", "bumps_binary"),
                         ("elevators", "bumps_regression"), ("ailerons", "bumps_regression")],
    "kernel_ridge": [("casp", "bumps_regression"), ("cod-rna", "bumps_binary")],
    "dro": [("adult", "groups")],
}

SYNTHETIC_TITLES = {
    "logistic": "synthetic: logistic, 20 features",
    "drift": "synthetic: concept change, 4 features",
    "bumps_binary": "synthetic: Gaussian bumps, 3 features",
    "bumps_regression": "synthetic: Gaussian-bump regression, 3 features",
    "groups": "synthetic: 6 groups, one noisy",
}


# --------------------------------------------------------------------------- results


@dataclass
class Row:
    family: str
    dataset: str
    learner: str
    rows: int
    metric: str
    value: float
    baseline: str
    baseline_value: float
    seconds: float
    note: str = ""  # what the run found (the selected bandwidth, the dictionary size, ...)
    why: str = ""  # why the row loses to its baseline (printed under the table); see loses()


#: a row within this relative margin of its baseline is a tie, not a loss
TIE = 0.005


def loses(row):
    """Whether a row is worse than its baseline (lower is better) by more than ``TIE``; for a
    pair of values (raw / rescaled), whether either is."""
    values = row.value if isinstance(row.value, tuple) else (row.value,)
    bases = row.baseline_value if isinstance(row.baseline_value, tuple) else (row.baseline_value,)
    return any(v > b * (1 + TIE) for v, b in zip(values, bases))


@dataclass
class Dataset:
    name: str  # what the table says: the real name or 'synthetic: ...'
    task: str  # 'binary' or 'regression' ('groups' for the DRO data)
    X: np.ndarray
    y: np.ndarray
    real: bool
    extra: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- progress


class Progress:
    """A one-line text progress bar on stderr (no dependency); silent when disabled."""

    def __init__(self, total, enabled, stream=None, width=24):
        self.total = max(int(total), 1)
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.done = 0
        self.t0 = time.perf_counter()
        self._len = 0

    def show(self, label):
        if not self.enabled:
            return
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        text = f"[{bar}] {self.done}/{self.total} {time.perf_counter() - self.t0:5.1f}s  {label}"
        cols = shutil.get_terminal_size((100, 20)).columns
        text = text[: max(cols - 1, 20)]
        self.stream.write("\r" + text.ljust(self._len))
        self.stream.flush()
        self._len = len(text)

    def advance(self, label=""):
        self.done += 1
        self.show(label)

    def close(self):
        if self.enabled and self._len:
            self.stream.write("\r" + " " * self._len + "\r")
            self.stream.flush()


# --------------------------------------------------------------------------- data


def resolve_data_home(data_home=None):
    """The data home the loaders would use, without creating it."""
    home = data_home or os.environ.get("SKONLINE_DATA") or os.path.join("~", "skonline_data")
    return os.path.expanduser(os.fspath(home))


def _permutation(name, n):
    return np.random.default_rng([0, zlib.crc32(name.encode())]).permutation(n)


def _dense(X):
    if hasattr(X, "toarray"):
        X = X.toarray()
    return np.ascontiguousarray(X, dtype=np.float64)


def load_real(name, data_home, max_rows=MAX_ROWS):
    """The permuted prefix of a dataset in the data home, or None when its file is missing.

    Never downloads (``download_if_missing=False``); a file that cannot be read is reported
    on stderr and treated as missing.
    """
    if not os.path.isfile(os.path.join(data_home, f"{name}.npz")):
        return None
    from ..datasets import load_dataset

    try:
        bunch = load_dataset(name, data_home=data_home, download_if_missing=False)
        X, y = _dense(bunch.data), np.asarray(bunch.target)
        perm = _permutation(name, len(y))[:max_rows]
        extra = {}
        if name == "adult":
            extra["groups"], extra["group_names"] = _adult_groups(bunch)
            extra["groups"] = extra["groups"][perm]
            test = load_dataset(name, split="test", data_home=data_home, download_if_missing=False)
            Xt, yt = _dense(test.data), np.asarray(test.target)
            gt, _ = _adult_groups(test)
            keep = _permutation(name + "-test", len(yt))[:max_rows]
            extra.update(X_test=Xt[keep], y_test=yt[keep], groups_test=gt[keep])
        task = bunch.get("task", "binary" if np.unique(y).size <= 2 else "regression")
        if task == "binary" and np.unique(y).size > 2:
            task = "regression"
        return Dataset(name, task, X[perm], y[perm], True, extra)
    except Exception as exc:  # noqa: BLE001 - a broken file falls back to synthetic data
        print(f"skonline tour: could not read {name}.npz ({type(exc).__name__}: {exc}); "
              "using synthetic data instead.", file=sys.stderr)
        return None


def _adult_groups(bunch):
    """race in {Black, White, other} x sex, as in benchmarks/dro.py: 6 groups."""
    race = np.asarray(bunch.race).astype(str)
    sex = np.asarray(bunch.sex).astype(str)
    race3 = np.where(np.isin(race, ["Black", "White"]), race, "Other")
    names = [f"{r}/{s[0]}" for r in ("Black", "White", "Other") for s in ("Female", "Male")]
    code = {n: k for k, n in enumerate(names)}
    groups = np.array([code[f"{r}/{s[:1]}"] for r, s in zip(race3, sex)], dtype=np.int64)
    return groups, names


def _bumps(rng, n, d=3, n_bumps=30, width=0.5):
    X = rng.uniform(-1, 1, (n, d))
    centres = rng.uniform(-1, 1, (n_bumps, d))
    weights = rng.standard_normal(n_bumps)
    F = (weights * np.exp(-((X[:, None, :] - centres[None]) ** 2).sum(-1) / (2 * width**2))).sum(1)
    return X, F


def synthetic(kind, n):
    """Small synthetic stand-ins, generated with a fixed seed."""
    rng = np.random.default_rng([7, zlib.crc32(kind.encode())])
    title = SYNTHETIC_TITLES[kind]
    if kind == "logistic":
        d = 20
        X = rng.standard_normal((n, d))
        w = rng.standard_normal(d) * (rng.random(d) < 0.5)
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ w))).astype(np.int64)
        return Dataset(title, "binary", X, y, False)
    if kind == "drift":
        d = 4
        X = rng.standard_normal((n, d))
        a, b = np.array([1.0, 2.0, 0.0, 0.0]), np.array([0.0, 0.0, 2.0, 1.0])
        half = n // 2
        y = np.concatenate([X[:half] @ a, X[half:] @ b]) + 0.3 * rng.standard_normal(n)
        return Dataset(title, "regression", X, y, False)
    if kind == "bumps_binary":
        X, F = _bumps(rng, n)
        y = np.where(F >= np.median(F), 1, -1)
        return Dataset(title, "binary", X, y, False)
    if kind == "bumps_regression":
        X, F = _bumps(rng, n)
        y = F + 0.1 * F.std() * rng.standard_normal(n)
        return Dataset(title, "regression", X, y, False)
    if kind == "groups":
        m, d = 6, 10
        w0 = rng.standard_normal(d)
        W = w0 / np.linalg.norm(w0) + 0.5 * rng.standard_normal((m, d)) / np.sqrt(d)
        noise = np.r_[0.3, np.full(m - 1, 0.05)]
        # group 0 (the noisy one) is also the rare one, as a minority group would be
        p = np.r_[0.05, np.full(m - 1, 0.95 / (m - 1))]

        def sample(k):
            g = rng.choice(m, size=k, p=p)
            Xg = rng.standard_normal((k, d))
            yg = (np.einsum("ij,ij->i", Xg, W[g]) > 0) ^ (rng.random(k) < noise[g])
            return Xg, yg.astype(np.int64), g

        X, y, g = sample(n)
        Xt, yt, gt = sample(n)
        extra = dict(groups=g, group_names=[f"group {i}" + (" (noisy)" if i == 0 else "")
                                            for i in range(m)],
                     X_test=Xt, y_test=yt, groups_test=gt)
        return Dataset(title, "groups", X, y, False, extra)
    raise ValueError(kind)


class DataStore:
    """Loads each real dataset once; builds each synthetic stand-in once."""

    def __init__(self, data_home, quick):
        self.data_home = data_home
        self.quick = quick
        self._cache = {}

    def available(self, name):
        if self.quick:
            return False
        return os.path.isfile(os.path.join(self.data_home, f"{name}.npz"))

    def get(self, name, fallback):
        key = name if self.available(name) else "synthetic:" + fallback
        if key not in self._cache:
            data = load_real(name, self.data_home) if self.available(name) else None
            if data is None:
                key = "synthetic:" + fallback
                if key not in self._cache:
                    self._cache[key] = synthetic(fallback, N_QUICK if self.quick else N_SYNTHETIC)
            else:
                self._cache[key] = data
        return self._cache[key]

    def plan(self, family):
        """The datasets of a family, synthetic stand-ins deduplicated."""
        seen, out = set(), []
        for name, fallback in PLAN[family]:
            key = name if self.available(name) else "synthetic:" + fallback
            if key not in seen:
                seen.add(key)
                out.append((name, fallback))
        return out


# --------------------------------------------------------------------------- helpers


def _log_loss(p, y1):
    p = np.clip(p, 1e-15, 1 - 1e-15)
    return -(y1 * np.log(p) + (1 - y1) * np.log1p(-p))


def _timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def _warm_up(est, X, y, **kw):
    """Compile the estimator's pass (numba, cached on disk) before timing it."""
    from sklearn.base import clone

    k = min(50, len(y))
    clone(est).partial_fit(X[:k], y[:k], **kw)


def _baseline(est, X, y, response_method="predict"):
    """A scikit-learn baseline's prequential outputs: chunks of ``CHUNK`` rows, each predicted
    with the model learned on the chunks before it, then learned."""
    from ..evaluation import prequential_predictions

    pred, _ = prequential_predictions(est, X, y, response_method=response_method, chunk_size=CHUNK)
    return pred


def _nystroem_features(X, n_components=100):
    """What a scikit-learn user would feed SGD for a kernel model: StandardScaler then Nystroem
    (default gamma), both fitted (unsupervised) on the first rows of the stream."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    k = min(1000, len(X))
    features = make_pipeline(
        StandardScaler(), Nystroem(n_components=min(n_components, k), random_state=0)
    ).fit(X[:k])
    return features.transform(X)


# --------------------------------------------------------------------------- families


def run_start(data, ctx):
    """The learner to start with: the default online ensemble vs StandardScaler + SGD."""
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    from ..experts import OnlineEnsembleClassifier, OnlineEnsembleRegressor

    X, n = data.X, len(data.y)
    if data.task == "binary":
        y, est, kw = data.y, OnlineEnsembleClassifier(random_state=0), {"classes": np.unique(data.y)}
    else:
        y, est, kw = data.y.astype(float), OnlineEnsembleRegressor(random_state=0), {}
    label = f"{type(est).__name__}(random_state=0)"
    ctx.progress.show(f"start / {data.name} / {label}")
    _warm_up(est, X, y, **kw)
    pred, sec = _timed(est.partial_fit_predict, X, y, **kw)
    Z = (X - X[:1000].mean(axis=0)) / np.where(X[:1000].std(axis=0) > 0, X[:1000].std(axis=0), 1.0)
    if data.task == "binary":
        base = _baseline(SGDClassifier(loss="log_loss", random_state=0), Z, y)
        metric, value, base_value = "error rate", float(np.mean(pred != y)), float(np.mean(base != y))
        base_name = "SGDClassifier(loss='log_loss')"
    else:
        base = _baseline(SGDRegressor(random_state=0), Z, y)
        metric, value, base_value = "MAE", float(np.mean(np.abs(pred - y))), float(np.mean(np.abs(base - y)))
        base_name = "SGDRegressor()"
    best = est.expert_names_[int(np.argmax(est.weights_))]
    return [Row("start", data.name, label, n, metric, value, base_name, base_value, sec,
                note=f"leading expert at the end: {best}")]


def run_linear_model(data, ctx):
    """Scale-invariant linear learners vs SGDClassifier, on raw and rescaled features."""
    from sklearn.linear_model import SGDClassifier

    from ..evaluation import prequential_predictions
    from ..linear_model import ScaleInvariantClassifier

    X, y = data.X, data.y
    classes = np.unique(y)
    y1 = (y == classes[-1]).astype(float)
    rng = np.random.default_rng([1, zlib.crc32(data.name.encode())])
    scale = 10.0 ** rng.uniform(-3, 3, size=X.shape[1])
    variants = {"raw": X, "rescaled": np.ascontiguousarray(X * scale)}
    rows, curves = [], {}
    sgd = []
    for variant, Xv in variants.items():
        ctx.progress.show(f"linear_model / {data.name} / SGDClassifier ({variant})")
        p = _baseline(SGDClassifier(loss="log_loss", random_state=0), Xv, y, "predict_proba")
        curves["SGDClassifier(loss='log_loss')", variant] = losses = _log_loss(p[:, -1], y1)
        sgd.append(float(losses.mean()))
    for invariance in ("coordinate", "full"):
        values, seconds = [], 0.0
        for variant, Xv in variants.items():
            ctx.progress.show(
                f"linear_model / {data.name} / ScaleInvariant({invariance}, {variant})")
            est = ScaleInvariantClassifier(invariance=invariance)
            _warm_up(est, Xv, y, classes=classes)
            (proba, _), sec = _timed(prequential_predictions, est, Xv, y,
                                     response_method="predict_proba", chunk_size=len(y))
            losses = _log_loss(proba[:, -1], y1)
            curves[f"ScaleInvariantClassifier(invariance='{invariance}')", variant] = losses
            values.append(float(losses.mean()))
            seconds += sec
        rows.append(Row("linear_model", data.name, f"ScaleInvariantClassifier(invariance='{invariance}')",
                        len(y), "log-loss, raw / rescaled", tuple(values),
                        "SGDClassifier(loss='log_loss')", tuple(sgd), seconds))
    full = rows[-1].value[0]
    for row in rows:
        if loses(row) and row.value[1] <= row.baseline_value[1]:
            top = float(np.max(np.abs(X)))
            why = (f"SGD wins on the raw features only: they lie within |x| <= {top:.3g}, "
                   "the scale its default learning rate assumes; rescaled, its loss is "
                   f"{row.baseline_value[1]:.4g} and this learner's unchanged.")
            if row is not rows[-1] and full < row.baseline_value[0]:
                why += (f" invariance='full' ({full:.4g}) also follows correlated features, which the "
                        "per-feature invariance does not.")
            row.why = why
    ctx.plot_data.setdefault("linear_model", (data.name, curves))
    return rows


def run_experts(data, ctx):
    """Online ensembles of scikit-learn regressors (frozen and online experts)."""
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import Ridge, SGDRegressor

    from ..experts import PCS, FixedShare, OCSPlus, OnlineEnsembleRegressor
    from ..linear_model import ScaleInvariantRegressor

    X, y = data.X, data.y.astype(float)
    name = data.name
    if data.real and data.name == "casp":  # the stream drifts when ordered by F3
        order = np.argsort(X[:, 2], kind="stable")
        X, y = X[order], y[order]
        name = "casp (ordered by F3)"
    n_warm = min(2000, max(20, len(y) // 10), len(y) // 2)
    # the experts are the user's models: SGDRegressor needs standardised features, so the
    # ensemble (and every expert) sees features standardised on the warm-up rows
    mu, sd = X[:n_warm].mean(axis=0), X[:n_warm].std(axis=0) + 1e-12
    Xs = np.ascontiguousarray((X - mu) / sd)
    Xw, yw, Xs_s, ys = Xs[:n_warm], y[:n_warm], Xs[n_warm:], y[n_warm:]
    ctx.progress.show(f"experts / {name} / fitting the warm-up experts")
    experts = [
        ("sgd", SGDRegressor(random_state=0)),
        ("scale_invariant", ScaleInvariantRegressor()),
        ("ridge_warmup", FrozenEstimator(Ridge().fit(Xw, yw))),
        ("hgb_warmup", FrozenEstimator(HistGradientBoostingRegressor(max_iter=50, random_state=0)
                                       .fit(Xw, yw))),
    ]
    names = [n for n, _ in experts]
    frozen = np.array([n.endswith("_warmup") for n in names])
    T = len(ys)
    # the default rule (rule=None: Fixed Share with adaptive rates), then the paper's rules
    rules = [("", None), ("rule=PCS()", PCS()), ("rule=OCSPlus()", OCSPlus()),
             ("rule=FixedShare()", FixedShare())]
    rows, weights = [], None
    for rule_name, rule in rules:
        ctx.progress.show(f"experts / {name} / OnlineEnsembleRegressor({rule_name})")
        warm = OnlineEnsembleRegressor(experts, rule=rule)
        for i in (0, CHUNK):  # compile the passes the timed loop runs (asleep, then awake)
            warm.partial_fit_predict(Xs_s[i:i + CHUNK], ys[i:i + CHUNK])
        ens = OnlineEnsembleRegressor(experts, rule=rule)
        preds, W = [], []
        t0 = time.perf_counter()
        for i in range(0, T, CHUNK):
            preds.append(ens.partial_fit_predict(Xs_s[i:i + CHUNK], ys[i:i + CHUNK]))
            W.append(np.tile(ens.weights_, (min(CHUNK, T - i), 1)))
        sec = time.perf_counter() - t0
        mse = float(np.mean((np.concatenate(preds) - ys) ** 2))
        # online experts without partial_fit_predict are asleep during the first chunk (charged
        # nothing there); skonline experts are used prequentially from the first row
        prequential = np.array([ens._is_prequential(e) for e in ens.estimators_])
        n_pred = np.where(ens.online_ & ~prequential, T - min(CHUNK, T), T)
        expert_mse = ens.expert_cumulative_losses_ / np.maximum(n_pred, 1)
        best = int(np.argmin(expert_mse))
        label = "OnlineEnsembleRegressor(experts" + (f", {rule_name})" if rule_name else ")")
        row = Row("experts", name, label, T, "MSE", mse, f"best single expert: {names[best]}",
                  float(expert_mse[best]), sec)
        if loses(row) and weights is not None:  # the default rule (first) is the reference
            on_frozen = float(np.vstack(W)[:, frozen].sum(axis=1).mean())
            on_frozen_default = float(weights[:, frozen].sum(axis=1).mean())
            scaled = float(expert_mse[best]) / float(ens.loss_scale_)
            row.why = (f"{type(ens.rule_).__name__}'s default learning rate is set for losses spread over "
                       f"[0, 1]; the ensemble divides the squared losses by a scale of {ens.loss_scale_:.3g} "
                       f"(the squared target range), so the best expert's loss is about {scaled:.2g} per "
                       "row and the weights move slowly: over the stream, the frozen warm-up experts "
                       f"kept {on_frozen:.0%} of the weight on average (default rule, first row: "
                       f"{on_frozen_default:.0%}), which adapts its rate to the losses themselves.")
        rows.append(row)
        if weights is None:
            weights = np.vstack(W)
    ctx.plot_data.setdefault("experts", (name, names, weights, n_warm))
    return rows


def run_kernel_selection(data, ctx):
    """Online kernel selection (OKS++, default settings) vs Nystroem + SGD."""
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    from ..kernel_selection import KernelSelectionClassifier, KernelSelectionRegressor

    X, n = data.X, len(data.y)
    # snapshots of q at geometrically spaced rows: the selection happens in the first hundreds
    # of rows (the plot's rows axis is logarithmic); the result does not depend on the chunking
    bounds = np.unique(np.r_[0, np.geomspace(10, n, 80).astype(np.int64), n])
    if data.task == "binary":
        y = data.y
        est = KernelSelectionClassifier(random_state=0)
        kw = {"classes": np.unique(y)}
        metric = "error rate"
    else:
        y = data.y.astype(float)
        est = KernelSelectionRegressor(random_state=0)
        kw = {}
        metric = "MSE"
    ctx.progress.show(f"kernel_selection / {data.name} / {type(est).__name__}")
    _warm_up(est, X, y, **kw)
    qs, preds = [], []
    t0 = time.perf_counter()
    for start, stop in zip(bounds[:-1], bounds[1:]):  # chunk by chunk, to record q
        rows_ = slice(start, stop)
        preds.append(est.partial_fit_predict(X[rows_], y[rows_], **(kw if start == 0 else {})))
        q = np.asarray(est.q_)
        qs.append(q if q.ndim == 1 else q.mean(axis=0))
    sec = time.perf_counter() - t0
    pred = np.concatenate(preds)
    ctx.progress.show(f"kernel_selection / {data.name} / Nystroem+SGD")
    Z = _nystroem_features(X)
    if data.task == "binary":
        value = float(np.mean(pred != y))
        base = _baseline(SGDClassifier(loss="log_loss", random_state=0), Z, y)
        base_value = float(np.mean(base != y))
        base_name = "Nystroem+SGDClassifier(loss='log_loss')"
    else:
        value = float(np.mean((pred - y) ** 2))
        base = _baseline(SGDRegressor(random_state=0), Z, y)
        base_value = float(np.mean((base - y) ** 2))
        base_name = "Nystroem+SGDRegressor()"
    learner = f"{type(est).__name__}(random_state=0)"
    if data.task == "binary" or "kernel_selection" not in ctx.plot_data:
        ctx.plot_data.setdefault("kernel_selection",
                                 (data.name, est.sigmas_, np.array(qs), bounds[1:]))
    return [Row("kernel_selection", data.name, learner, n, metric, value, base_name, base_value,
                sec, note=f"{est.algorithm}, selected sigma={est.selected_sigma_:.3g}")]


def run_kernel_ridge(data, ctx):
    """PKAWV (Taylor and online Nystrom features, default settings) vs Nystroem + SGD."""
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    from ..evaluation import prequential_predictions
    from ..kernel_ridge import PKAWVClassifier, PKAWVRegressor

    X, n = data.X, len(data.y)
    rows, curves = [], {}
    if data.task == "binary":
        y = data.y
        Est, metric = PKAWVClassifier, "error rate"
        base_est, base_name = SGDClassifier(loss="log_loss", random_state=0), "Nystroem+SGDClassifier(loss='log_loss')"

        def score(pred):
            return pred != y
    else:
        y = data.y.astype(float)
        Est, metric = PKAWVRegressor, "MSE"
        base_est, base_name = SGDRegressor(random_state=0), "Nystroem+SGDRegressor()"

        def score(pred):
            return (pred - y) ** 2
    learners = [(f"{Est.__name__}()", Est()),
                (f"{Est.__name__}(features='nystrom', random_state=0)", Est(features="nystrom", random_state=0))]
    kw = {"classes": np.unique(y)} if data.task == "binary" else {}
    ctx.progress.show(f"kernel_ridge / {data.name} / Nystroem+SGD")
    base_losses = score(_baseline(base_est, _nystroem_features(X), y)).astype(float)
    curves[base_name] = base_losses
    for name, est in learners:
        ctx.progress.show(f"kernel_ridge / {data.name} / {name}")
        _warm_up(est, X, y, **kw)
        (pred, _), sec = _timed(prequential_predictions, est, X, y, chunk_size=len(y),
                                clone_estimator=False)
        losses = score(pred).astype(float)
        curves[name] = losses
        m = getattr(est, "n_components_", None)
        rows.append(Row("kernel_ridge", data.name, name, n, metric, float(losses.mean()),
                        base_name, float(base_losses.mean()), sec,
                        note=f"{est.features_} features, m={m}" if m is not None else ""))
    taylor, nystrom = rows[0], rows[1]
    if loses(taylor) and not loses(nystrom) and taylor.note.startswith("taylor"):
        taylor.why = (f"the default feature map on {X.shape[1]} columns is a Taylor map of degree "
                      f"{Est().degree} (m={getattr(learners[0][1], 'n_components_', '?')} features), too "
                      "few for this target; with features='nystrom' (next row) PKAWV wins.")
    if data.task == "regression":
        ctx.plot_data.setdefault("kernel_ridge", (data.name, metric, curves))
    return rows


def run_dro(data, ctx):
    """Group DRO (worst group, default settings) vs ERM LogisticRegression, per-group held-out
    log-loss."""
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression

    try:
        from ..dro import GroupDROClassifier
    except ImportError as exc:  # the family is optional in the tour
        ctx.notes.append(f"dro: skipped (skonline.dro does not import: {exc}).")
        return []
    X, y, g = data.X, data.y, data.extra["groups"]
    Xt, yt, gt = data.extra["X_test"], data.extra["y_test"], data.extra["groups_test"]
    names = data.extra["group_names"]
    classes = np.unique(y)
    y1t = (yt == classes[-1]).astype(float)

    def group_risks(model):
        losses = _log_loss(model.predict_proba(Xt)[:, -1], y1t)
        return np.array([losses[gt == k].mean() if np.any(gt == k) else np.nan
                         for k in range(len(names))])

    ctx.progress.show(f"dro / {data.name} / GroupDROClassifier")
    est = GroupDROClassifier(random_state=0)
    small = np.concatenate([np.flatnonzero(g == k)[:5] for k in np.unique(g)])
    clone(est).fit(X[small], y[small], groups=g[small])  # compile before timing
    _, sec = _timed(est.fit, X, y, groups=g)
    ctx.progress.show(f"dro / {data.name} / LogisticRegression (ERM)")
    erm = LogisticRegression(max_iter=5000).fit(X, y)
    r_dro, r_erm = group_risks(est), group_risks(erm)
    worst = int(np.nanargmax(r_dro))
    worst_erm = int(np.nanargmax(r_erm))
    ctx.plot_data.setdefault("dro", (data.name, names, r_dro, r_erm))
    ctx.notes.append(f"dro on {data.name}: worst group {names[worst]} (GroupDROClassifier), "
                     f"{names[worst_erm]} (LogisticRegression); group weights q_ = "
                     f"{np.round(est.q_, 2).tolist()}.")
    return [Row("dro", data.name, "GroupDROClassifier(random_state=0)", len(y),
                "worst-group log-loss", float(r_dro[worst]), "LogisticRegression(max_iter=5000)",
                float(r_erm[worst_erm]), sec, note=f"{est.algorithm}, fit(X, y, groups=g)")]


RUNNERS = {
    "start": run_start,
    "linear_model": run_linear_model,
    "experts": run_experts,
    "kernel_selection": run_kernel_selection,
    "kernel_ridge": run_kernel_ridge,
    "dro": run_dro,
}


# --------------------------------------------------------------------------- plots


def _finish(plt, fig, ax, title, path):
    """Title the plot (wrapped to the figure's width, never cut off), save it and close it."""
    import textwrap

    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_linear_model(plt, payload, path):
    from ..plotting import plot_progressive_loss

    name, curves = payload
    fig, ax = plt.subplots(figsize=(8, 4.5))
    losses, styles, colors = {}, {}, {}
    for (learner, variant), values in curves.items():
        label = f"{learner}, {variant}"
        losses[label] = values
        styles[label] = {"color": colors.setdefault(learner, f"C{len(colors)}"),
                         "ls": "-" if variant == "raw" else "--",
                         "lw": 1.6 if variant == "raw" else 1.2}
    plot_progressive_loss(losses, styles=styles, ylim=(0, 2.0), ax=ax)
    ax.set_ylabel("running mean log-loss (clipped at 2)")
    _finish(plt, fig, ax, f"{name}: raw features (solid) vs rescaled by 10^U(-3,3) (dashed)", path)


def _plot_experts(plt, payload, path):
    from ..plotting import plot_weights

    name, names, W, n_warm = payload
    fig, ax = plt.subplots(figsize=(8, 4))
    plot_weights(W, expert_names=names, ax=ax)
    _finish(plt, fig, ax, f"{name}: expert weights of OnlineEnsembleRegressor(experts) (default rule; "
                          f"frozen experts fitted on a {n_warm}-row warm-up)", path)


def _plot_kernel_selection(plt, payload, path):
    name, sigmas, qs, rows_seen = payload
    fig, ax = plt.subplots(figsize=(8, 4))
    # one line per bandwidth on a logarithmic rows axis: the selection happens in the first
    # hundreds of rows, and a stacked area of a distribution that settles on one kernel is a
    # solid block
    for k, sigma in enumerate(sigmas):
        ax.plot(rows_seen, qs[:, k], lw=1.6, label=f"sigma = {sigma:.3g}")
    ax.set_xscale("log")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("rows seen (log scale)")
    ax.set_ylabel("kernel probability q")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    _finish(plt, fig, ax, f"{name}: KernelSelectionClassifier's distribution q over the Gaussian bandwidths",
            path)


def _plot_kernel_ridge(plt, payload, path):
    from ..plotting import plot_progressive_loss

    name, metric, curves = payload
    fig, ax = plt.subplots(figsize=(8, 4))
    top = max(np.mean(v) for v in curves.values())
    plot_progressive_loss(curves, ylim=(0, 2.5 * top), ax=ax)
    ax.set_ylabel(f"running {metric}")
    _finish(plt, fig, ax, f"{name}: progressive loss of PKAWV and Nystroem+SGD", path)


def _plot_dro(plt, payload, path):
    from ..plotting import plot_group_risks

    name, names, r_dro, r_erm = payload
    fig, ax = plt.subplots(figsize=(8, 4))
    plot_group_risks({"GroupDROClassifier (worst group)": r_dro, "ERM LogisticRegression": r_erm},
                     names, ax=ax)
    ax.set_ylabel("held-out log-loss")
    _finish(plt, fig, ax, f"{name}: per-group risk", path)


PLOTS = {
    "linear_model": ("linear_model_raw_vs_rescaled.png", _plot_linear_model),
    "experts": ("experts_weights.png", _plot_experts),
    "kernel_selection": ("kernel_selection_probabilities.png", _plot_kernel_selection),
    "kernel_ridge": ("kernel_ridge_progressive_loss.png", _plot_kernel_ridge),
    "dro": ("dro_group_risks.png", _plot_dro),
}


def write_plots(plot_data, output_dir):
    """Write the PNGs; returns their paths, or None when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for family in FAMILIES:
        if family in plot_data:
            filename, plot = PLOTS[family]
            path = output_dir / filename
            plot(plt, plot_data[family], path)
            paths.append(path)
    return paths


# --------------------------------------------------------------------------- table


COLUMNS = ("family", "dataset", "learner", "rows", "metric", "value", "baseline",
           "baseline value", "seconds", "note")


def _number(value):
    if isinstance(value, tuple):
        return " / ".join(_number(v) for v in value)
    return f"{value:.4g}"


def _worse(row):
    """Whether a row is worse than its baseline at all (a tie when not by more than ``TIE``)."""
    values = row.value if isinstance(row.value, tuple) else (row.value,)
    bases = row.baseline_value if isinstance(row.baseline_value, tuple) else (row.baseline_value,)
    return any(v > b for v, b in zip(values, bases))


def _cells(row, k=None):
    tie = f"a tie: worse by at most {TIE:.1%}" if _worse(row) and not loses(row) else ""
    note = "; ".join(x for x in (row.note, tie, f"loses: see [{k}]" if k else "") if x)
    return (row.family, row.dataset, row.learner, f"{row.rows:,}", row.metric, _number(row.value),
            row.baseline, _number(row.baseline_value), f"{row.seconds:.3f}", note)


def explain(rows):
    """Every row that loses to its baseline gets a reason: its runner's, or the tour says it has
    none (it never drops a row quietly). Returns the numbered reasons."""
    reasons = []
    for row in rows:
        if loses(row):
            if not row.why:
                row.why = "no reason known to the tour: this learner is worse than the baseline here."
            reasons.append(row.why)
    return reasons


def format_reasons(rows):
    lines, k = [], 0
    for row in rows:
        if loses(row):
            k += 1
            lines.append(f"[{k}] {row.learner} on {row.dataset}: {row.why}")
    return "\n".join(lines)


def format_table(rows):
    """A Markdown pipe table, padded for the terminal."""
    numbers, k = [], 0
    for r in rows:
        k += loses(r)
        numbers.append(k if loses(r) else None)
    cells = [COLUMNS] + [_cells(r, j) for r, j in zip(rows, numbers)]
    widths = [max(len(c[j]) for c in cells) for j in range(len(COLUMNS))]
    right = {3, 5, 7, 8}

    def line(c):
        return "| " + " | ".join(
            (s.rjust(w) if j in right else s.ljust(w)) for j, (s, w) in enumerate(zip(c, widths))
        ) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if j in right else "-" * (w + 2)
                         for j, w in enumerate(widths)) + "|"
    return "\n".join([line(cells[0]), sep] + [line(c) for c in cells[1:]])


LEGEND = """\
Lower is better everywhere. Every score is progressive (prequential): each row is predicted,
then learned, in one pass. Real datasets: a fixed random permutation, at most {max_rows:,} rows.
Every skonline learner runs with its default settings on the raw data. Baselines: what a
scikit-learn user would pick instead, learned with partial_fit in chunks of 100 rows (each chunk
is predicted with the current model, then learned; skonline.evaluation.prequential_predictions).
- start: the learner to start with, the default online ensemble (skonline's families weighed
  online); the baseline SGD sees features standardised with the first 1,000 rows.
- linear_model: log-loss on the raw features / on features multiplied by 10^U(-3, 3).
- experts: chunks of 100 rows; experts = [("sgd", SGDRegressor(random_state=0)),
  ("scale_invariant", ScaleInvariantRegressor()), ("ridge_warmup", FrozenEstimator(Ridge())),
  ("hgb_warmup", FrozenEstimator(HistGradientBoostingRegressor(max_iter=50)))], the frozen ones
  fitted on the warm-up rows; every expert sees features standardised on the warm-up rows; the
  best single expert is chosen in hindsight (an oracle).
- kernel_selection, kernel_ridge: the baseline's features are StandardScaler + Nystroem (100
  components, default gamma), both fitted on the first 1,000 rows, then SGD.
- dro: fitted on the training rows, log-loss per group on held-out rows (the worst group).
seconds: the skonline learner (numba compilation excluded). A row more than {tie:.1%} worse than
its baseline is numbered in the note column; the reason is printed below the table."""


# --------------------------------------------------------------------------- driver


def run(*, data_home=None, output_dir="skonline_tour", quick=False, progress=None,
        families=FAMILIES, out=None):
    """Run the tour, print the table and write the plots. Returns the exit code."""
    out = out if out is not None else sys.stdout
    t_start = time.perf_counter()
    home = resolve_data_home(data_home)
    store = DataStore(home, quick)
    if progress is None:
        progress = sys.stderr.isatty()
    plan = [(f, name, fb) for f in families for name, fb in store.plan(f)]
    ctx = _Context(Progress(len(plan), progress))

    found = sorted({name for _, name, _ in plan if store.available(name)})
    missing = sorted({name for _, name, _ in plan if not store.available(name)})
    print("skonline tour: every family, one prequential pass per learner", file=out)
    if quick:
        print("--quick: small synthetic data only.", file=out)
    else:
        print(f"data home: {home}", file=out)
        print(f"  found: {', '.join(found) if found else 'none'}", file=out)
        if missing:
            print(f"  missing (synthetic stand-ins used, nothing is downloaded): "
                  f"{', '.join(missing)}", file=out)
            if not found:
                print("  point SKONLINE_DATA (or --data-home) at a folder with the .npz files "
                      "to run on the real datasets.", file=out)
    out.flush()

    rows, failed, done = [], [], set()
    from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

    # one thread for BLAS and OpenMP (Nystroem, HistGradientBoosting): the problems are small
    # and the skonline passes are sequential anyway; this keeps the tour from oversubscribing
    # a busy machine
    with warnings.catch_warnings(), threadpool_limits(limits=1):
        warnings.simplefilter("ignore")
        for family, name, fallback in plan:
            data = store.get(name, fallback)
            if (family, data.name) in done:  # an unreadable file fell back to a stand-in
                ctx.progress.advance(f"{family} / {data.name} done")
                continue
            done.add((family, data.name))
            ctx.progress.show(f"{family} / {data.name}")
            try:
                rows.extend(RUNNERS[family](data, ctx))
            except Exception as exc:  # noqa: BLE001 - report, go on with the other families
                failed.append(family)
                ctx.notes.append(f"{family} on {data.name}: FAILED ({type(exc).__name__}: {exc})")
            ctx.progress.advance(f"{family} / {data.name} done")
    ctx.progress.close()

    explain(rows)
    reasons = format_reasons(rows)
    print("", file=out)
    print(format_table(rows), file=out)
    if reasons:
        print("\nWhy these rows lose to their baselines:\n" + reasons, file=out)
    print("", file=out)
    print(LEGEND.format(max_rows=MAX_ROWS, tie=TIE), file=out)
    for note in ctx.notes:
        print(note, file=out)

    paths = write_plots(ctx.plot_data, output_dir)
    print("", file=out)
    if paths is None:
        print("matplotlib is not installed: plots skipped (pip install matplotlib).", file=out)
    else:
        table_path = Path(output_dir) / "results.md"
        table_path.write_text(format_table(rows) + ("\n\n" + reasons if reasons else "") + "\n\n"
                              + LEGEND.format(max_rows=MAX_ROWS, tie=TIE) + "\n", encoding="utf-8")
        print("plots and table written:", file=out)
        for p in paths + [table_path]:
            print(f"  {p}", file=out)
    print(f"\ntotal time {time.perf_counter() - t_start:.1f} s, measured by this run (including "
          "numba compilation on a first run)", file=out)
    out.flush()
    return 1 if failed else 0


class _Context:
    def __init__(self, progress):
        self.progress = progress
        self.plot_data = {}
        self.notes = []
