"""Benchmark: every supervised skonline estimator at DEFAULT parameters on data as it comes (issue 10).

The measuring instrument for choosing defaults. Three parts:

1. Development suite (``streams()``): the ten datasets of ../shared/datasets raw (not rescaled; a9a
   densified), scikit-learn's bundled tables, and synthetic streams with gradual / abrupt drift,
   unscaled mixed-magnitude features, a target offset and one wild row. Every stream is one fixed
   permutation (seeded by its name) capped at a prefix of ``--max-rows`` rows.
2. Same protocol for everyone: rows in the same order, chunks of 100 rows, each chunk predicted
   before it is learned. skonline estimators (and the online pipeline ``OnlineStandardScaler -> est``
   when ``skonline.pipeline`` exists) use ``partial_fit_predict[_proba]`` per chunk (each row's
   prediction is made before the row is learned). Baselines: river's scaled linear models and Vowpal
   Wabbit's default (row by row, exact prequential), scikit-learn SGD behind a StandardScaler (per
   chunk: predict, then partial_fit), and the trivial predictor (majority so far / running mean).
   Acceptance per (estimator, stream): accuracy >= max(river, trivial) - 0.03, or MAE <= 1.15 x
   min(river, running mean).
3. Drift scenarios for the ensembles: frozen experts fitted on each concept plus an online expert;
   an abrupt switch and a recurring concept; the default rule against FixedShare() and OCSPlus()
   and against every single expert.
4. Run-to-run spread (issue 21): every estimator that takes a ``random_state``, left at None, five
   runs per stream (default column); the runs must differ by at most one accuracy point or 2 %
   of the median MAE.

Usage::

    python benchmarks/defaults.py                 # full run -> benchmarks/results/defaults.{md,json}
    python benchmarks/defaults.py --quick         # 2,000-row prefixes, prints the report only
    python benchmarks/defaults.py --quick --estimators ScaleInvariantClassifier --streams magic04 wine

From Python (e.g. while tuning a default)::

    import sys; sys.path.insert(0, "benchmarks")
    import defaults
    defaults.streams()                                    # name -> (task, description)
    r = defaults.evaluate(lambda: ScaleInvariantClassifier(invariance="full"), "magic04", max_rows=2000)
    r["metrics"], r["baselines"]["river"], r["verdict"]

Baseline predictions are cached per (stream, prefix, data hash, library versions) in
benchmarks/_cache/ (git-ignored), so rerunning a subset of skonline estimators is fast.
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
import traceback
import warnings
import zlib
from pathlib import Path

_SHARED_DATA = "/work/shared/datasets"
if "SKONLINE_DATA" not in os.environ and os.path.isdir(_SHARED_DATA):
    os.environ["SKONLINE_DATA"] = _SHARED_DATA

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))  # _common, linear_model (also when imported by a test)

from _common import machine  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CACHE = ROOT / "benchmarks" / "_cache"
CHUNK = 100
MAX_ROWS = 10_000
QUICK_ROWS = 2_000
SEED = 0
CLIP = 1e-15
ACC_MARGIN = 0.03  # classification: accuracy >= max(river, trivial) - 0.03
MAE_FACTOR = 1.15  # regression: MAE <= 1.15 x min(river, running mean)
BASELINES = ("river", "vw", "sgd", "trivial")
BASELINE_LABELS = {
    "river": "river StandardScaler \\| linear model (row by row)",
    "vw": "Vowpal Wabbit default (row by row)",
    "sgd": f"StandardScaler + SGD partial_fit (chunks of {CHUNK})",
    "trivial": "trivial (majority so far / running mean)",
}

# --------------------------------------------------------------------------- streams
DATASETS = ["magic04", "phishing", "a9a", "ijcnn1", "cod-rna", "adult",
            "bank32nh", "elevators", "ailerons", "casp"]
_DATASET_TASK = {"bank32nh": "regression", "elevators": "regression", "ailerons": "regression",
                 "casp": "regression"}
TABLES = {"iris": "multiclass", "wine": "multiclass", "breast_cancer": "binary",
          "digits": "multiclass", "diabetes": "regression"}
_SYNTH_ROWS = 10_000


class Stream(dict):
    """A stream: ``X`` (float64, C-contiguous), ``y``, ``task`` ('binary', 'multiclass',
    'regression'), ``description``, ``name``; attribute access for convenience."""

    __getattr__ = dict.__getitem__


def _perm_rng(name):
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


def _dataset(name):
    from skonline.datasets import load_dataset

    b = load_dataset(name)
    X = b.data.toarray() if sp.issparse(b.data) else np.asarray(b.data)
    y = np.asarray(b.target)
    task = _DATASET_TASK.get(name, "binary")
    desc = {"a9a": "LIBSVM a9a (123 binary features, densified)",
            "adult": "UCI Adult (adult.npz: 6 raw numeric columns up to 1e6 + one-hot blocks)",
            "phishing": "LIBSVM phishing (unit-normalised binary rows)",
            }.get(name, f"{name} as stored (raw features)")
    return X, y, task, desc


def _table(name):
    import sklearn.datasets as skd

    X, y = getattr(skd, f"load_{name}")(return_X_y=True)
    return X, y, TABLES[name], f"scikit-learn's bundled {name} table ({X.shape[0]} rows, {X.shape[1]} features)"


def _hyperplane_drift():
    n, d = _SYNTH_ROWS, 10
    rng = np.random.default_rng([SEED, 101])
    a, b = rng.standard_normal(d), rng.standard_normal(d)
    b -= a * (a @ b) / (a @ a)
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    X = rng.random((n, d))
    theta = 0.5 * np.pi * np.arange(n) / n  # the hyperplane turns by 90 degrees over the stream
    W = np.cos(theta)[:, None] * a + np.sin(theta)[:, None] * b
    y = (np.einsum("ij,ij->i", X - 0.5, W) > 0).astype(np.int64)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    return X, y, "binary", ("drifting hyperplane: 10 features in [0, 1], the normal turns by 90 degrees "
                            "gradually over 10,000 rows, 5% label noise")


SEA_SWITCHES = (2500, 5000, 7500)
SEA_THETAS = (8.0, 9.0, 7.0, 9.5)


def _sea_abrupt():
    n = _SYNTH_ROWS
    rng = np.random.default_rng([SEED, 102])
    X = rng.uniform(0.0, 10.0, (n, 3))
    seg = np.searchsorted(SEA_SWITCHES, np.arange(n), side="right")
    y = (X[:, 0] + X[:, 1] <= np.asarray(SEA_THETAS)[seg]).astype(np.int64)
    flip = rng.random(n) < 0.10
    y[flip] = 1 - y[flip]
    return X, y, "binary", (f"SEA concepts: 3 features in [0, 10], y = x1 + x2 <= theta, theta "
                            f"{'/'.join(f'{t:g}' for t in SEA_THETAS)} switching abruptly at rows "
                            f"{', '.join(f'{s:,}' for s in SEA_SWITCHES)}; 10% label noise")


def _agrawal_mixed():
    n = _SYNTH_ROWS
    rng = np.random.default_rng([SEED, 103])
    salary = rng.uniform(20e3, 150e3, n)
    commission = np.where(salary >= 75e3, 0.0, rng.uniform(10e3, 75e3, n))
    age = rng.integers(20, 81, n).astype(float)
    elevel = rng.integers(0, 5, n).astype(float)
    car = rng.integers(1, 21, n).astype(float)
    zipcode = rng.integers(0, 9, n).astype(float)
    hvalue = rng.uniform(50e3, 150e3, n) * (9 - zipcode) / 9 * 2
    hyears = rng.integers(1, 31, n).astype(float)
    loan = rng.uniform(0.0, 500e3, n)
    X = np.column_stack([salary, commission, age, elevel, car, zipcode, hvalue, hyears, loan])
    disposable = 0.67 * (salary + commission) - 0.2 * loan - 20e3  # Agrawal's function 7
    y = (disposable > 0).astype(np.int64)
    flip = rng.random(n) < 0.05
    y[flip] = 1 - y[flip]
    return X, y, "binary", ("Agrawal-like generator: 9 unscaled columns (salary, commission, loan, house value "
                            "up to 5e5; age, education level, car, zip code, years as small integers), "
                            "y = 0.67 (salary + commission) - 0.2 loan > 20,000 (function 7); 5% label noise")


def _reg_offset_drift():
    n, d = _SYNTH_ROWS, 10
    rng = np.random.default_rng([SEED, 104])
    a, b = 2.0 * rng.standard_normal(d), 2.0 * rng.standard_normal(d)
    X = rng.standard_normal((n, d))
    s = (np.arange(n) / n)[:, None]
    W = (1 - s) * a + s * b  # gradual drift from a to b
    y = 100.0 + np.einsum("ij,ij->i", X, W) + rng.standard_normal(n)
    return X, y, "regression", ("linear regression with target offset 100: 10 standard-normal features, "
                                "weights drifting linearly from one random vector to another over "
                                "10,000 rows, unit noise")


WILD_ROW = 3000


def _reg_wild_row():
    n, d = _SYNTH_ROWS, 5
    rng = np.random.default_rng([SEED, 105])
    w = rng.standard_normal(d)
    X = rng.standard_normal((n, d))
    y = 10.0 + X @ w + 0.5 * rng.standard_normal(n)
    X[WILD_ROW, 0] *= 1e6  # a corrupted measurement: the target comes from the clean value
    return X, y, "regression", (f"linear series y = 10 + x.w + noise, 5 standard-normal features; at row "
                                f"{WILD_ROW:,} feature 0 is 1e6 times its usual scale (a corrupted "
                                "measurement; the target is the clean one)")


SYNTHETIC = {"hyperplane_drift": _hyperplane_drift, "sea_abrupt": _sea_abrupt,
             "agrawal_mixed": _agrawal_mixed, "reg_offset_drift": _reg_offset_drift,
             "reg_wild_row": _reg_wild_row}
_SYNTH_TASK = {"hyperplane_drift": "binary", "sea_abrupt": "binary", "agrawal_mixed": "binary",
               "reg_offset_drift": "regression", "reg_wild_row": "regression"}
STREAM_NAMES = DATASETS + list(TABLES) + list(SYNTHETIC)


def streams():
    """The development suite: ``{name: (task, kind)}`` in report order (kind: dataset, table,
    synthetic). Load one with :func:`load_stream`."""
    out = {}
    for name in STREAM_NAMES:
        if name in DATASETS:
            out[name] = (_DATASET_TASK.get(name, "binary"), "dataset")
        elif name in TABLES:
            out[name] = (TABLES[name], "table")
        else:
            out[name] = (_SYNTH_TASK[name], "synthetic")
    return out


_STREAM_CACHE = {}


def load_stream(name, max_rows=MAX_ROWS):
    """Load stream ``name``: one fixed permutation (``default_rng([0, crc32(name)])``; synthetic
    streams keep their generated order), then the first ``max_rows`` rows. A smaller ``max_rows``
    gives a prefix of the same stream."""
    if name not in STREAM_NAMES:
        raise ValueError(f"unknown stream {name!r}; known: {', '.join(STREAM_NAMES)}")
    key = name
    if key not in _STREAM_CACHE:
        if name in DATASETS:
            X, y, task, desc = _dataset(name)
        elif name in TABLES:
            X, y, task, desc = _table(name)
        else:
            X, y, task, desc = SYNTHETIC[name]()
        if name not in SYNTHETIC:
            perm = _perm_rng(name).permutation(X.shape[0])
            X, y = X[perm], y[perm]
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64 if task == "regression" else np.int64)
        _STREAM_CACHE[key] = (X, y, task, desc)
    X, y, task, desc = _STREAM_CACHE[key]
    n = min(int(max_rows), X.shape[0])
    return Stream(X=X[:n], y=y[:n], task=task, description=desc, name=name, n_total=X.shape[0])


# --------------------------------------------------------------------------- estimators
# Row caps: exact kernel learners cost O(t) or O(t^2) per row, and PKAWV's degree-2 Taylor map has
# m = (d + 1)(d + 2) / 2 features and costs O(m^2) per row; each capped estimator (and every baseline
# it is compared with) is evaluated on this prefix of the stream. name -> (full cap, quick cap,
# minimum number of features for the cap to apply, reason).
#: estimator -> (rows, quick rows, minimum features, reason): a row cap for an estimator whose
#: cost per row grows with the stream. Empty since every estimator at defaults has a budget (issue
#: 21: Kernel-AWV's 4,096-row budget, PKAWV's Nystrom dictionary of at most 192 points, kernel
#: selection's expansions replaced by random features), so every cell runs the whole stream.
ROW_CAPS = {}


def row_cap_for(name, n_features, quick=False):
    """Row cap of estimator ``name`` on a stream with ``n_features`` columns (None: no cap)."""
    if name not in ROW_CAPS:
        return None
    full, small, min_d, _ = ROW_CAPS[name]
    if n_features < min_d:
        return None
    return small if quick else full


#: the ensembles run at their defaults too: estimators=None, skonline's own learners
#: (skonline.experts.default_estimators; benchmarks/ensemble.py compares them with other libraries)
ENSEMBLE_EXPERTS = {
    "OnlineEnsembleClassifier": "estimators=None: skonline.experts.default_estimators('classifier')",
    "OnlineEnsembleRegressor": "estimators=None: skonline.experts.default_estimators('regressor')",
}


def estimators():
    """``{name: (make_estimator, 'classifier' | 'regressor')}`` for every supervised
    skonline estimator found by ``skonline.utils.all_estimators()``, at default parameters (the
    ensembles with their default experts, ``ENSEMBLE_EXPERTS``)."""
    from sklearn.base import ClassifierMixin, RegressorMixin

    from skonline.utils import all_estimators

    out = {}
    for name, cls in all_estimators():
        if issubclass(cls, ClassifierMixin):
            kind = "classifier"
        elif issubclass(cls, RegressorMixin):
            kind = "regressor"
        else:
            continue
        out[name] = (seeded(cls), kind)
    return out


def seeded(make_estimator, seed=SEED):
    """Factory of ``make_estimator()`` with every ``random_state`` parameter left at None (its own
    and its sub-estimators') set to ``seed``, so that reruns are reproducible; nothing else changes."""

    def make():
        est = make_estimator()
        params = est.get_params(deep=True)
        fixed = {k: seed for k, v in params.items()
                 if (k == "random_state" or k.endswith("__random_state")) and v is None}
        if fixed:
            est.set_params(**fixed)
        return est

    make.__name__ = getattr(make_estimator, "__name__", "make")
    return make


def pipeline_available():
    try:
        from skonline.pipeline import make_online_pipeline  # noqa: F401
        from skonline.preprocessing import OnlineStandardScaler  # noqa: F401
    except ImportError:
        return False
    return True


def in_pipeline(make_estimator):
    """``make_online_pipeline(OnlineStandardScaler(), make_estimator())`` as a factory."""
    from skonline.pipeline import make_online_pipeline
    from skonline.preprocessing import OnlineStandardScaler

    return lambda: make_online_pipeline(OnlineStandardScaler(), make_estimator())


# --------------------------------------------------------------------------- protocol
class _Collector:
    """Unique warning texts (category: first line), in order of first appearance."""

    def __init__(self):
        self.seen = {}

    def add(self, records):
        for m in records:
            text = f"{m.category.__name__}: {str(m.message).strip()}"
            if len(text) > 400:
                text = text[:400] + " ..."
            key = re.sub(r"[-+]?\d[\d.,e+-]*", "#", text)  # same message with other numbers: one entry
            if key in self.seen:
                self.seen[key][1] += 1
            else:
                self.seen[key] = [text, 1]

    def list(self):
        return [{"text": t, "count": c} for t, c in self.seen.values()]


def run_online(make_estimator, X, y, task, classes, chunk=CHUNK):
    """One pass of the chunk protocol over (X, y) with ``partial_fit_predict[_proba]``.

    Returns dict(pred, proba or None, seconds, warnings, error or None, error_row)."""
    n = X.shape[0]
    pred = np.full(n, np.nan)
    proba = None
    col = _Collector()
    err, err_row = None, None
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        try:
            est = make_estimator()
            use_proba = (task != "regression" and hasattr(est, "predict_proba")
                         and hasattr(est, "partial_fit_predict_proba"))
            if use_proba:
                proba = np.full((n, len(classes)), np.nan)
            for start in range(0, n, chunk):
                err_row = start
                sl = slice(start, min(start + chunk, n))
                kw = {"classes": classes} if (start == 0 and task != "regression") else {}
                if use_proba:
                    P = np.asarray(est.partial_fit_predict_proba(X[sl], y[sl], **kw), dtype=float)
                    order = np.searchsorted(classes, np.asarray(est.classes_))
                    proba[sl][:, order] = P  # columns in the order of `classes`
                else:
                    p = np.asarray(est.partial_fit_predict(X[sl], y[sl], **kw))
                    if task == "regression":
                        pred[sl] = p.astype(float)
                    else:  # label index; a label outside `classes` stays NaN (counted as wrong)
                        idx = np.minimum(np.searchsorted(classes, p), len(classes) - 1)
                        pred[sl] = np.where(classes[idx] == p, idx, np.nan)
                col.add(rec)
                rec.clear()
            err_row = None
        except Exception as exc:  # recorded, never aborts the run
            lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
            err = f"{type(exc).__name__}: {lines[0] if lines else ''}"[:500]
            tb = traceback.extract_tb(exc.__traceback__)
            if tb:
                err += f" [{Path(tb[-1].filename).name}:{tb[-1].lineno}]"
        col.add(rec)
    sec = time.perf_counter() - t0
    if proba is not None:
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(proba).all(axis=1)
            pred = np.where(ok, np.argmax(np.where(np.isfinite(proba), proba, -np.inf), axis=1), np.nan)
    return {"pred": pred, "proba": proba, "seconds": sec, "warnings": col.list(), "error": err,
            "error_row": err_row}


WARMUP_ROWS, WARMUP_CHUNK = 20, 10


def warm_up(make_estimator, X, y, task, classes):
    """One untimed pass on the first rows (numba compilation / on-disk cache loading happen here,
    not in the timed pass). Warnings and errors are ignored (the timed pass records them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_online(make_estimator, X[:WARMUP_ROWS], y[:WARMUP_ROWS], task, classes, chunk=WARMUP_CHUNK)


def metrics(task, y, pred, proba, classes, seconds, n_pass):
    """Accuracy + log-loss (classification; log-loss when probabilities exist) or MAE; rows/s."""
    n = y.shape[0]
    out = {"n_rows": int(n), "rows_per_s": (n_pass / seconds) if seconds > 0 else float("inf")}
    if task == "regression":
        pred = pred[:n]
        finite = np.isfinite(pred)
        out["n_nonfinite"] = int(n - finite.sum())
        out["mae"] = float(np.mean(np.abs(pred - y))) if finite.all() else float("nan")
        return out
    yi = np.searchsorted(classes, y)
    pred = pred[:n]
    out["n_nonfinite"] = int(np.sum(~np.isfinite(pred)))
    out["accuracy"] = float(np.mean(pred == yi))
    if proba is not None:
        p = proba[:n][np.arange(n), yi]
        out["log_loss"] = float(np.mean(-np.log(np.clip(p, CLIP, 1.0)))) if np.isfinite(p).all() else float("nan")
    return out


# --------------------------------------------------------------------------- baselines
def _river_pass(X, y, task, classes):
    from river import linear_model, multiclass, preprocessing

    n = X.shape[0]
    pred = np.zeros(n)
    proba = None if task == "regression" else np.zeros((n, len(classes)))
    if task == "regression":
        model = preprocessing.StandardScaler() | linear_model.LinearRegression()
    elif task == "binary":
        model = preprocessing.StandardScaler() | linear_model.LogisticRegression()
    else:
        model = preprocessing.StandardScaler() | multiclass.OneVsRestClassifier(linear_model.LogisticRegression())
    rows = [dict(enumerate(r)) for r in X.tolist()]  # every column, zeros included (dense scaler)
    if task == "binary":
        targets = (y == classes[1]).tolist()
    elif task == "multiclass":
        targets = np.searchsorted(classes, y).tolist()
    else:
        targets = y.tolist()
    K = len(classes) if classes is not None else 0
    t0 = time.perf_counter()
    for i, (x, t) in enumerate(zip(rows, targets)):
        if task == "regression":
            pred[i] = model.predict_one(x)
        elif task == "binary":
            p1 = model.predict_proba_one(x).get(True, 0.5)
            proba[i] = (1.0 - p1, p1)
        else:
            d = model.predict_proba_one(x)
            v = np.array([d.get(k, 0.0) for k in range(K)], dtype=float)
            s = v.sum()
            proba[i] = v / s if s > 0 else 1.0 / K
        model.learn_one(x, t)
    sec = time.perf_counter() - t0
    if proba is not None:
        pred = np.argmax(proba, axis=1).astype(float)
    return pred, proba, sec


def _vw_pass(X, y, task, classes, extra=""):
    """Vowpal Wabbit row by row (predict, then learn); ``extra``: more command-line options
    (``' --nn 10'``, ``' -q ::'``)."""
    import vowpalwabbit
    from scipy.special import expit

    n = X.shape[0]
    if task == "binary":
        args, labels = "--quiet --loss_function logistic", np.where(y == classes[1], "1", "-1")
    elif task == "multiclass":
        args, labels = f"--quiet --oaa {len(classes)}", (np.searchsorted(classes, y) + 1).astype(str)
    else:
        args, labels = "--quiet", np.array([repr(float(v)) for v in y])
    lines = [lab + " | " + " ".join(f"{j}:{v:.9g}" for j, v in enumerate(r) if v != 0.0)
             for lab, r in zip(labels.tolist(), X.tolist())]
    vw = vowpalwabbit.Workspace(args + extra)
    out = np.empty(n)
    t0 = time.perf_counter()
    for i, line in enumerate(lines):
        ex = vw.parse(line)
        out[i] = vw.predict(ex)  # before learning the row
        vw.learn(ex)
        vw.finish_example(ex)
    sec = time.perf_counter() - t0
    vw.finish()
    if task == "binary":
        p1 = expit(out)
        return (p1 > 0.5).astype(float), np.column_stack([1 - p1, p1]), sec
    if task == "multiclass":
        return out - 1.0, None, sec
    return out, None, sec


def _sgd_pass(X, y, task, classes):
    from sklearn.linear_model import SGDClassifier, SGDRegressor
    from sklearn.preprocessing import StandardScaler

    n = X.shape[0]
    K = 0 if classes is None else len(classes)
    pred = np.zeros(n)  # chunk 0: trivial prediction (class 0 / 0.0)
    proba = None if task == "regression" else np.full((n, K), 1.0 / max(K, 1))
    scaler = StandardScaler()
    model = SGDRegressor(random_state=SEED) if task == "regression" else SGDClassifier(
        loss="log_loss", random_state=SEED)
    t0 = time.perf_counter()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for start in range(0, n, CHUNK):
            sl = slice(start, min(start + CHUNK, n))
            if start:
                Xs = scaler.transform(X[sl])
                if task == "regression":
                    pred[sl] = model.predict(Xs)
                else:
                    proba[sl] = model.predict_proba(Xs)
            scaler.partial_fit(X[sl])
            kw = {} if task == "regression" else {"classes": classes}
            try:
                model.partial_fit(scaler.transform(X[sl]), y[sl], **kw)
            except ValueError as exc:  # "Floating-point under-/overflow occurred ..."
                raise RuntimeError(f"diverged at row {start}: {str(exc).splitlines()[0]}") from None
    sec = time.perf_counter() - t0
    if proba is not None:
        pred = np.argmax(proba, axis=1).astype(float)
        if not np.isfinite(proba).all():
            raise RuntimeError("non-finite probabilities")
    elif not np.isfinite(pred).all():
        raise RuntimeError(f"diverged: non-finite prediction at row {int(np.argmin(np.isfinite(pred)))}")
    return pred, proba, sec


def _trivial_pass(X, y, task, classes):
    n = X.shape[0]
    t0 = time.perf_counter()
    if task == "regression":
        cum = np.concatenate([[0.0], np.cumsum(y)[:-1]])
        cnt = np.arange(n)
        pred = np.where(cnt > 0, cum / np.maximum(cnt, 1), 0.0)
        return pred, None, time.perf_counter() - t0
    K = len(classes)
    onehot = np.zeros((n, K))
    onehot[np.arange(n), np.searchsorted(classes, y)] = 1.0
    counts = np.vstack([np.zeros(K), np.cumsum(onehot, axis=0)[:-1]])  # counts before each row
    pred = np.argmax(counts, axis=1).astype(float)  # ties -> the smallest label
    proba = (counts + 1.0) / (np.arange(n)[:, None] + K)  # Laplace-smoothed frequencies
    return pred, proba, time.perf_counter() - t0


_BASELINE_PASS = {"river": _river_pass, "vw": _vw_pass, "sgd": _sgd_pass, "trivial": _trivial_pass}


def _versions_key():
    import river
    import sklearn
    import vowpalwabbit

    return f"river {river.__version__}; vw {vowpalwabbit.__version__}; sklearn {sklearn.__version__}"


def _data_hash(X, y):
    h = hashlib.sha1()
    h.update(np.ascontiguousarray(X).tobytes())
    h.update(np.ascontiguousarray(y).tobytes())
    return h.hexdigest()[:12]


def baseline_predictions(stream, use_cache=True, compute=True, log=None):
    """Per-row predictions of every baseline on the whole stream (cached in benchmarks/_cache/).

    Returns ``{baseline: dict(pred, proba, seconds, n_pass, error)}``. All baselines are
    prequential with a fixed row order, so the metrics of any prefix are the metrics of the
    first rows of these predictions."""
    X, y, task = stream.X, stream.y, stream.task
    classes = None if task == "regression" else np.unique(y)
    key = hashlib.sha1(f"{_versions_key()}|{CHUNK}|{SEED}".encode()).hexdigest()[:8]
    path = CACHE / f"{stream.name}_{X.shape[0]}_{_data_hash(X, y)}_{key}.npz"
    out = {}
    if use_cache and path.exists():
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            for b in meta:
                out[b] = {"pred": z[f"{b}_pred"] if f"{b}_pred" in z else None,
                          "proba": z[f"{b}_proba"] if f"{b}_proba" in z else None, **meta[b]}
        if all(b in out for b in BASELINES):
            return out
    if not compute:
        return out or None
    arrays, meta = {}, {}
    for b in BASELINES:
        t0 = time.perf_counter()
        try:
            pred, proba, sec = _BASELINE_PASS[b](X, y, task, classes)
            out[b] = {"pred": pred, "proba": proba, "seconds": sec, "n_pass": int(X.shape[0]), "error": None}
            arrays[f"{b}_pred"] = pred
            if proba is not None:
                arrays[f"{b}_proba"] = proba
        except Exception as exc:
            out[b] = {"pred": None, "proba": None, "seconds": time.perf_counter() - t0,
                      "n_pass": int(X.shape[0]), "error": f"{type(exc).__name__}: {exc}"[:300]}
        meta[b] = {k: out[b][k] for k in ("seconds", "n_pass", "error")}
        if log:
            log(f"    baseline {b:<8s} {out[b]['seconds']:6.1f} s"
                + (f"  ERROR {out[b]['error']}" if out[b]["error"] else ""))
    if use_cache:
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, meta=json.dumps(meta), **arrays)
        os.replace(tmp, path)
    return out


def baseline_metrics(stream, preds, n):
    """Metrics of every baseline on the first n rows."""
    classes = None if stream.task == "regression" else np.unique(stream.y)
    res = {}
    for b, r in (preds or {}).items():
        if r.get("error") or r.get("pred") is None:
            res[b] = {"error": r.get("error") or "missing", "n_rows": int(n)}
            continue
        res[b] = metrics(stream.task, stream.y[:n], r["pred"], r["proba"], classes, r["seconds"], r["n_pass"])
    return res


# --------------------------------------------------------------------------- verdicts
def verdict(task, m, base):
    """Acceptance of one (estimator, stream): dict(passed, threshold, gap, reference, reason)."""
    if m is None or m.get("error"):
        return {"passed": False, "reason": "error", "threshold": None, "gap": None}
    if not base or "trivial" not in base or "accuracy" not in base["trivial"] and "mae" not in base["trivial"]:
        return {"passed": None, "reason": "no baselines", "threshold": None, "gap": None}
    refs = {b: base[b] for b in ("river", "trivial") if b in base and not base[b].get("error")}
    if task == "regression":
        ref = {b: r["mae"] for b, r in refs.items() if np.isfinite(r.get("mae", np.nan))}
        thr = MAE_FACTOR * min(ref.values())
        val = m.get("mae", np.nan)
        ok = bool(np.isfinite(val) and val <= thr)
        return {"passed": ok, "threshold": thr, "value": val, "reference": min(ref, key=ref.get),
                "gap": (val / thr - 1.0) if np.isfinite(val) else float("inf"),
                "reason": "" if ok else ("non-finite predictions" if not np.isfinite(val) else "MAE above threshold")}
    ref = {b: r["accuracy"] for b, r in refs.items()}
    thr = max(ref.values()) - ACC_MARGIN
    val = m.get("accuracy", np.nan)
    ok = bool(val >= thr)
    return {"passed": ok, "threshold": thr, "value": val, "reference": max(ref, key=ref.get),
            "gap": thr - val, "reason": "" if ok else "accuracy below threshold"}


# --------------------------------------------------------------------------- public API
def evaluate(make_estimator, stream_name, max_rows=MAX_ROWS, *, row_cap="auto", pipeline=False,
             baselines=True, use_cache=True, seed=SEED):
    """Run one estimator on one stream of the suite and score it against the baselines.

    Parameters
    ----------
    make_estimator : str or callable
        A callable returning a fresh (unfitted) estimator (a class, a lambda, ...), or the name of a
        suite estimator (a key of :func:`estimators`, e.g. ``'ScaleInvariantClassifier'``).
    stream_name : str
        One of :func:`streams`.
    max_rows : int, default=10,000
        Prefix of the stream.
    row_cap : 'auto', int or None, default='auto'
        Evaluate on at most this many rows (the baselines on the same prefix). ``'auto'``: the suite's
        cap (:data:`ROW_CAPS`) when ``make_estimator`` is a suite name or a class of that name,
        else no cap.
    pipeline : bool, default=False
        Wrap the estimator in ``make_online_pipeline(OnlineStandardScaler(), est)``.
    baselines : bool, default=True
        Compute (or load from the cache) the baselines and the verdict; ``False``: use cached
        baselines only if present.
    use_cache : bool, default=True
        Read / write baseline predictions in benchmarks/_cache/.
    seed : int or None, default=0
        Every ``random_state`` parameter left at None (the estimator's and its sub-estimators') is
        set to ``seed`` (reproducible reruns); ``None`` leaves them alone.

    Returns
    -------
    result : dict
        ``stream``, ``task``, ``n_rows``, ``metrics`` (``accuracy`` and ``log_loss``, or ``mae``;
        ``rows_per_s``, ``n_nonfinite``; None after an exception), ``seconds``, ``warnings`` (list of
        ``{text, count}``), ``error`` (text or None), ``error_row``, ``baselines`` (metrics of each
        baseline on the same ``n_rows``), ``verdict`` (``passed``, ``threshold``, ``value``, ``gap``,
        ``reference``, ``reason``).
    """
    name = make_estimator if isinstance(make_estimator, str) else getattr(make_estimator, "__name__", None)
    if isinstance(make_estimator, str):
        make_estimator = estimators()[make_estimator][0]
    if seed is not None:
        make_estimator = seeded(make_estimator, seed)
    full = load_stream(stream_name, max_rows)
    if row_cap == "auto":
        row_cap = row_cap_for(name, full.X.shape[1]) if name else None
    n = full.X.shape[0] if row_cap is None else min(row_cap, full.X.shape[0])
    task = full.task
    classes = None if task == "regression" else np.unique(full.y)
    make = in_pipeline(make_estimator) if pipeline else make_estimator
    warm_up(make, full.X[:n], full.y[:n], task, classes)
    r = run_online(make, full.X[:n], full.y[:n], task, classes)
    m = None
    if r["error"] is None:
        m = metrics(task, full.y[:n], r["pred"], r["proba"], classes, r["seconds"], n)
    preds = baseline_predictions(full, use_cache=use_cache, compute=baselines)
    base = baseline_metrics(full, preds, n) if preds else {}
    return {"stream": stream_name, "task": task, "n_rows": int(n), "metrics": m,
            "seconds": r["seconds"], "warnings": r["warnings"], "error": r["error"],
            "error_row": r["error_row"], "baselines": base, "verdict": verdict(task, m, base)}


# --------------------------------------------------------------------------- drift scenarios
DRIFT_ROWS = 2_000  # post-switch window


def _concepts(task, seed):
    """Two linear concepts on 5 standard-normal features (B = A with the sign of w flipped on 3
    of the 5 features)."""
    rng = np.random.default_rng([SEED, 200, seed])
    wa = rng.standard_normal(5)
    wb = wa * np.array([-1, -1, -1, 1, 1.0])
    return wa, wb


def _draw(task, w, n, rng):
    X = rng.standard_normal((n, 5))
    if task == "classification":
        y = (X @ w > 0).astype(np.int64)
        flip = rng.random(n) < 0.05
        y[flip] = 1 - y[flip]
    else:
        y = 5.0 + X @ w + 0.3 * rng.standard_normal(n)
    return X, y


def drift_scenario(task, scenario, quick=False):
    """Ensembles on a drifting stream with frozen per-concept experts plus an online expert.

    task: 'classification' or 'regression'; scenario: 'abrupt' (A then B) or 'recurring'
    (A, B, A, B). Returns dict of per-method errors (0-1 error / absolute error) over the whole
    stream and over the DRIFT_ROWS rows after each switch."""
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression, Ridge, SGDClassifier, SGDRegressor

    from skonline.experts import FixedShare, OCSPlus, OnlineEnsembleClassifier, OnlineEnsembleRegressor

    seg = 2_500 if scenario == "recurring" else 4_000
    order = "ABAB" if scenario == "recurring" else "AB"
    wa, wb = _concepts(task, 0)
    rng = np.random.default_rng([SEED, 201, 0 if task == "classification" else 1])
    # frozen experts: fitted once on 2,000 separate rows of their concept
    fit = (lambda X, y: LogisticRegression().fit(X, y)) if task == "classification" else (
        lambda X, y: Ridge().fit(X, y))
    frozen = {c: FrozenEstimator(fit(*_draw(task, w, 2_000, rng))) for c, w in (("A", wa), ("B", wb))}
    parts = [_draw(task, wa if c == "A" else wb, seg, rng) for c in order]
    X = np.ascontiguousarray(np.vstack([p[0] for p in parts]))
    y = np.concatenate([p[1] for p in parts])
    n = X.shape[0]
    switches = [seg * k for k in range(1, len(order))]
    online = (lambda: SGDClassifier(loss="log_loss", random_state=SEED)) if task == "classification" else (
        lambda: SGDRegressor(random_state=SEED))
    classes = np.array([0, 1])

    def experts():
        return [("frozen_A", frozen["A"]), ("frozen_B", frozen["B"]), ("online_sgd", online())]

    def ens(rule):
        if task == "classification":
            return OnlineEnsembleClassifier(experts(), rule=rule)
        return OnlineEnsembleRegressor(experts(), rule=rule)

    def errors(pred):
        return (pred != y).astype(float) if task == "classification" else np.abs(pred - y)

    methods = {"default rule": lambda: ens(None), "FixedShare()": lambda: ens(FixedShare()),
               "OCSPlus()": lambda: ens(OCSPlus())}
    res = {}
    for name, make in methods.items():
        r = run_online(make, X, y, "binary" if task == "classification" else "regression",
                       classes if task == "classification" else None)
        if r["error"]:
            res[name] = {"error": r["error"], "warnings": r["warnings"]}
            continue
        pred = classes[r["pred"].astype(int)] if task == "classification" else r["pred"]
        res[name] = {"err": errors(pred), "warnings": r["warnings"], "seconds": r["seconds"]}
    # single experts, same chunk protocol: frozen ones predict; the online one predicts, then learns
    for name, est in (("frozen_A", frozen["A"]), ("frozen_B", frozen["B"])):
        res[name] = {"err": errors(est.predict(X))}
    model = online()
    pred = np.empty(n) if task == "regression" else np.zeros(n, dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in range(0, n, CHUNK):
            sl = slice(start, start + CHUNK)
            if start:
                pred[sl] = model.predict(X[sl])
            else:
                pred[sl] = 0 if task == "classification" else 0.0
            model.partial_fit(X[sl], y[sl], **({"classes": classes} if task == "classification" else {}))
    res["online_sgd"] = {"err": errors(pred)}
    out = {"task": task, "scenario": scenario, "order": order, "segment_rows": seg, "n_rows": n,
           "switches": switches, "methods": {}}
    for name, r in res.items():
        if "err" not in r:
            out["methods"][name] = {"error": r["error"], "warnings": r.get("warnings", [])}
            continue
        e = r["err"]
        post = [float(e[s:s + DRIFT_ROWS].mean()) for s in switches]
        post_all = float(np.concatenate([e[s:s + DRIFT_ROWS] for s in switches]).mean())
        out["methods"][name] = {"whole": float(e.mean()), "post_switch": post, "post_switch_mean": post_all,
                                "warnings": r.get("warnings", [])}
    m = out["methods"]
    d = m.get("default rule", {})
    if "whole" in d:
        best_rule = min((m[k]["post_switch_mean"], k) for k in ("FixedShare()", "OCSPlus()") if "whole" in m.get(k, {}))
        singles = {k: m[k]["whole"] for k in ("frozen_A", "frozen_B", "online_sgd")}
        out["verdict_post_switch"] = {"passed": bool(d["post_switch_mean"] <= 1.1 * best_rule[0]),
                                      "value": d["post_switch_mean"], "threshold": 1.1 * best_rule[0],
                                      "reference": best_rule[1]}
        out["verdict_whole"] = {"passed": bool(d["whole"] < min(singles.values())), "value": d["whole"],
                                "threshold": min(singles.values()), "reference": min(singles, key=singles.get)}
    return out


# --------------------------------------------------------------------------- report
def versions():
    import numba
    import scipy
    import sklearn

    v = {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
         "scikit-learn": sklearn.__version__, "numba": numba.__version__}
    for mod in ("river", "vowpalwabbit"):
        try:
            v[mod] = __import__(mod).__version__
        except Exception:  # pragma: no cover
            v[mod] = "not installed"
    try:
        v["skonline commit"] = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
            check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "skonline"],
                               capture_output=True, text=True).stdout.strip()
        if dirty:
            v["skonline commit"] += " (+ uncommitted changes under skonline/)"
    except Exception:  # pragma: no cover
        v["skonline commit"] = "unknown"
    return v




def _f(x, fmt=".4f"):
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "nan" if isinstance(x, float) and np.isnan(x) else ("inf" if x is not None else "-")
    return format(x, fmt)


def _rate(x):
    if x is None or not np.isfinite(x):
        return "-"
    return f"{x:,.0f}"


def _mcell(task, m):
    """(main metric, log-loss, rows/s) cells."""
    if m is None or m.get("error"):
        return ["error", "-"] + ([] if task == "regression" else ["-"])
    if task == "regression":
        return [_f(m.get("mae"), ".4g"), _rate(m.get("rows_per_s"))]
    return [_f(m.get("accuracy")), _f(m.get("log_loss")), _rate(m.get("rows_per_s"))]


def _verdict_cell(v):
    if v["passed"] is None:
        return "n/a"
    if v["reason"] == "error":
        return "**FAIL** (error)"
    return "pass" if v["passed"] else f"**FAIL** ({v['gap']:+.3f})" if v.get("gap") is not None else "**FAIL**"


def _gap_text(task, v):
    if v["reason"] == "error":
        return "raised an exception"
    if task == "regression":
        if not np.isfinite(v["value"]):
            return "non-finite predictions"
        return (f"MAE {v['value']:.4g} > {v['threshold']:.4g} (= 1.15 x {v['reference']}); "
                f"{v['value'] / v['threshold']:.2f}x the threshold")
    return (f"accuracy {v['value']:.4f} < {v['threshold']:.4f} (= {v['reference']} - 0.03); "
            f"gap {v['gap']:.4f}")


def report(run, command, started, total, args):
    v = versions()
    la = run["load"]
    md = ["# Defaults benchmark: every supervised skonline estimator at default parameters on data as it comes",
          "", f"- Command (from the repository root): `{command}`",
          f"- Date: {started:%Y-%m-%d %H:%M %Z}; total wall time {total / 60:.1f} min",
          f"- Machine: {machine()}; load average (1, 5, 15 min) at start {la['start'][0]:.2f}, "
          f"{la['start'][1]:.2f}, {la['start'][2]:.2f}; at end {la['end'][0]:.2f}, {la['end'][1]:.2f}, "
          f"{la['end'][2]:.2f} (the machine is shared: rows/s are indicative)",
          "- Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()),
          f"- Data: `skonline.datasets.load_dataset` (SKONLINE_DATA={os.environ.get('SKONLINE_DATA', '')}); "
          f"streams capped at **{run['max_rows']:,} rows**" + (" (**--quick**)" if args.quick else ""),
          "- Online pipeline column: " + ("`make_online_pipeline(OnlineStandardScaler(), est)`"
                                           if run["pipeline"] else "**skipped** (`skonline.pipeline` / "
                                           "`skonline.preprocessing` not importable in this checkout)"),
          ""]
    md += ["## Protocol", "",
           f"- Rows in one fixed order per stream: datasets and tables permuted by "
           f"`numpy.random.default_rng([{SEED}, zlib.crc32(name)])`, synthetic streams in generated order; "
           f"then the first `max_rows` rows. Chunks of {CHUNK} rows; each chunk is predicted before it is learned.",
           "- **skonline estimators** at default parameters (constructed with no arguments, except that "
           f"every `random_state` left at None is set to {SEED} so that reruns are reproducible; the ensembles "
           "with their default experts, below), one pass per estimator: `partial_fit_predict_proba` per chunk "
           "when the estimator has `predict_proba` (labels = argmax), else `partial_fit_predict`; "
           "`classes=` (all labels of the stream) on the first call. The returned predictions are made "
           "row by row before each row is learned. Warnings are recorded; an exception is recorded and "
           "the run goes on. GroupDRO learners get no groups (one group).",
           "- Ensembles: " + "; ".join(f"`{k}({e})`" for k, e in ENSEMBLE_EXPERTS.items()) + ".",
           ("- Row caps (the estimator and every baseline it is compared with are scored on the same "
            "prefix): " + "; ".join(f"{k} {c[1] if args.quick else c[0]:,} rows ({c[3]})"
                                    for k, c in ROW_CAPS.items()) + "." if ROW_CAPS else
            "- No row caps: every estimator runs the whole stream (up to the stream cap)."),
           "- **river**: `preprocessing.StandardScaler() | linear_model.LogisticRegression()` (binary), "
           "`StandardScaler() | multiclass.OneVsRestClassifier(LogisticRegression())` (multiclass), "
           "`StandardScaler() | linear_model.LinearRegression()` (regression); row by row "
           "`predict_proba_one` / `predict_one`, then `learn_one` (exact prequential); rows as dicts of every "
           "column (zeros included, so the scaler sees them).",
           "- **Vowpal Wabbit** default: `Workspace('--quiet --loss_function logistic')` (binary, p = "
           "sigmoid(margin)), `'--quiet --oaa K'` (multiclass; labels only, no log-loss), `'--quiet'` "
           "(regression, squared loss); row by row `parse`, `predict`, `learn`.",
           f"- **SGD**: per chunk of {CHUNK}: predict with the current model (chunk 0: class 0 / uniform "
           "probabilities / 0.0), then `StandardScaler.partial_fit(chunk)` and `SGDClassifier(loss='log_loss', "
           "random_state=0)` / `SGDRegressor(random_state=0)` `.partial_fit` on the scaled chunk.",
           "- **trivial**: majority class of the past rows (ties: smallest label; probabilities: Laplace-"
           "smoothed past frequencies) / running mean of the past targets (0 before the first row).",
           "- Metrics: accuracy, log-loss (probabilities clipped to [1e-15, 1]; only when the learner "
           "gives probabilities) or MAE; rows/s = rows / wall time of the whole pass incl. prediction.",
           f"- **Acceptance** per (estimator, stream): classification passes iff accuracy >= max(river, "
           f"trivial) - {ACC_MARGIN}; regression passes iff MAE <= {MAE_FACTOR} x min(river, running mean). "
           "An exception or a non-finite prediction fails. The cell shows the gap to the threshold "
           "(accuracy points below it, or MAE / threshold - 1).", ""]

    # summary
    res = run["results"]
    names = run["estimators"]
    cols = ["default"] + (["pipeline"] if run["pipeline"] else [])
    md += ["## Summary: passes per estimator", "",
           "| estimator | task | " + " | ".join(f"passes ({c})" for c in cols) + " | warnings on | errors on |",
           "|---|---|" + "---:|" * len(cols) + "---:|---:|"]
    failures = {c: [] for c in cols}
    tot = {c: [0, 0] for c in cols}
    for name in names:
        kind = run["kinds"][name]
        cells = []
        warn_on, err_on = set(), set()
        for c in cols:
            rs = [r for r in res if r["estimator"] == name and r["column"] == c]
            judged = [r for r in rs if r["verdict"]["passed"] is not None]
            p = sum(1 for r in judged if r["verdict"]["passed"])
            cells.append(f"{p} / {len(judged)}")
            tot[c][0] += p
            tot[c][1] += len(judged)
            for r in rs:
                if r["warnings"]:
                    warn_on.add(r["stream"])
                if r["error"]:
                    err_on.add(r["stream"])
                if r["verdict"]["passed"] is False:
                    failures[c].append(r)
        md.append(f"| {name} | {kind} | " + " | ".join(cells) + f" | {len(warn_on)} | {len(err_on)} |")
    md.append("| **all** | | " + " | ".join(f"**{tot[c][0]} / {tot[c][1]}**" for c in cols) + " | | |")
    md.append("")
    for c in cols:
        p, n = tot[c]
        if n:
            md.append(f"At defaults{' in the online pipeline' if c == 'pipeline' else ''}, {p} of {n} "
                      f"(estimator, stream) runs pass ({100 * p / n:.0f}%); {n - p} fail.")
    md.append("")

    for c in cols:
        md += [f"### Failures ({c}{' = OnlineStandardScaler -> estimator' if c == 'pipeline' else ''})", ""]
        if not failures[c]:
            md += ["None.", ""]
            continue
        md += ["| estimator | stream | rows | gap | warning fired? |", "|---|---|---:|---|---|"]
        for r in failures[c]:
            gap = _gap_text(r["task"], r["verdict"]) if not r["error"] else f"error: {r['error'][:160]}"
            md.append(f"| {r['estimator']} | {r['stream']} | {r['n_rows']:,} | {gap} | "
                      f"{'yes' if r['warnings'] else 'no'} |")
        md.append("")

    # streams
    md += ["### Passes per stream", "", "| stream | task | " + " | ".join(f"passes ({c})" for c in cols) + " |",
           "|---|---|" + "---:|" * len(cols)]
    for s in run["streams"]:
        cells = []
        for c in cols:
            rs = [r for r in res if r["stream"] == s["name"] and r["column"] == c
                  and r["verdict"]["passed"] is not None]
            cells.append(f"{sum(1 for r in rs if r['verdict']['passed'])} / {len(rs)}")
        md.append(f"| {s['name']} | {s['task']} | " + " | ".join(cells) + " |")
    md.append("")
    md += ["## Streams", "", "| stream | task | rows used | features | description |", "|---|---|---:|---:|---|"]
    for s in run["streams"]:
        md.append(f"| {s['name']} | {s['task']} | {s['n_rows']:,} | {s['n_features']} | {s['description']} |")
    md.append("")

    # per stream tables
    md += ["## Results per stream", "",
           "Rows: the baselines (on the full prefix, and on a capped prefix when a capped estimator uses "
           "one), then each estimator (default, and in the pipeline). Accuracy / MAE, log-loss, rows/s, "
           "verdict.", ""]
    for s in run["streams"]:
        task = s["task"]
        reg = task == "regression"
        md += [f"### {s['name']} ({task}, {s['n_rows']:,} rows)", "",
               "| learner | rows | MAE | rows/s | verdict |" if reg else
               "| learner | rows | accuracy | log-loss | rows/s | verdict |",
               "|---|---:|---:|---:|---|" if reg else "|---|---:|---:|---:|---:|---|"]
        for n_b, base in sorted(s["baselines"].items(), key=lambda kv: -int(kv[0])):
            for b in BASELINES:
                m = base.get(b)
                if m is None:
                    continue
                if m.get("error"):
                    md.append(f"| {BASELINE_LABELS[b]} | {int(n_b):,} | error: {m['error'][:80]} | - |"
                              + ("" if reg else " - |") + " |")
                    continue
                cells = _mcell(task, m)
                if b == "trivial":
                    cells[-1] = "(vectorised)"
                md.append(f"| {BASELINE_LABELS[b]} | {int(n_b):,} | " + " | ".join(cells) + " | |")
        for r in res:
            if r["stream"] != s["name"]:
                continue
            label = r["estimator"] + (" (pipeline)" if r["column"] == "pipeline" else "")
            cells = _mcell(task, r["metrics"])
            if r["error"]:
                cells[0] = "error"
            if r["warnings"]:
                label += " (w)"
            md.append(f"| {label} | {r['n_rows']:,} | " + " | ".join(cells) + f" | {_verdict_cell(r['verdict'])} |")
        md.append("")
    md += ["(w): the estimator emitted warnings on this stream (listed below).", ""]

    # warnings and errors
    md += ["## Warnings emitted", "", "Unique warning texts per (estimator, stream), with the number of "
           "chunks that emitted them.", ""]
    any_w = False
    for r in res:
        if r["warnings"]:
            any_w = True
            label = r["estimator"] + (" (pipeline)" if r["column"] == "pipeline" else "")
            for w in r["warnings"]:
                md.append(f"- {label} on {r['stream']} ({w['count']}x): {w['text']}")
    if not any_w:
        md.append("None.")
    md += ["", "## Errors", ""]
    errs = [r for r in res if r["error"]]
    for r in errs:
        label = r["estimator"] + (" (pipeline)" if r["column"] == "pipeline" else "")
        md.append(f"- {label} on {r['stream']} (chunk starting at row {r['error_row']}): {r['error']}")
    if not errs:
        md.append("None.")
    md.append("")

    # drift
    if run.get("drift"):
        md += drift_report(run["drift"])
    if run.get("si_vs_vw"):
        md += si_vw_report(run["si_vs_vw"])
    if run.get("spreads"):
        md += variance_report(run["spreads"])
    if run.get("previous"):
        md += changes_report(run["results"], run["previous"])
    return "\n".join(md)


#: a cell is worse than the previous run's when its accuracy is lower by more than this
CHANGE_ACC = 0.005
#: ... or its MAE higher by more than this fraction
CHANGE_MAE = 0.02


def changes_report(results, previous):
    """Every (estimator, stream) cell of the default column against the previous run's
    (``previous``: its json payload): cells worse by more than half an accuracy point or 2 % MAE,
    on the same rows, are listed."""
    old = {(r["estimator"], r["stream"]): r for r in previous["results"] if r["column"] == "default"}
    worse, better, same, other_rows, missing = [], 0, 0, [], []
    for r in results:
        if r["column"] != "default":
            continue
        o = old.get((r["estimator"], r["stream"]))
        if o is None or o.get("error") or r.get("error"):
            missing.append(f"{r['estimator']} on {r['stream']}")
            continue
        m, mo = r["metrics"], o["metrics"]
        if m["n_rows"] != mo["n_rows"]:
            key = "mae" if "mae" in m else "accuracy"
            other_rows.append((r["estimator"], r["stream"], mo["n_rows"], mo[key], m["n_rows"], m[key], key))
            continue
        if "mae" in m:
            change = m["mae"] / mo["mae"] - 1.0 if mo["mae"] > 0 else 0.0
            bad, good = change > CHANGE_MAE, change < -CHANGE_MAE
            text = f"MAE {mo['mae']:.4g} -> {m['mae']:.4g} ({100 * change:+.1f} %)"
        else:
            change = m["accuracy"] - mo["accuracy"]
            bad, good = change < -CHANGE_ACC, change > CHANGE_ACC
            text = f"accuracy {mo['accuracy']:.4f} -> {m['accuracy']:.4f} ({100 * change:+.2f} pts)"
        if bad:
            worse.append(f"| {r['estimator']} | {r['stream']} | {m['n_rows']:,} | {text} |")
        elif good:
            better += 1
        else:
            same += 1
    md = ["## Changes against the previous run", "",
          f"The default column against the previous `benchmarks/results/defaults.json` (commit "
          f"{previous.get('versions', {}).get('skonline commit', '?')}, {previous.get('date', '?')[:10]}), "
          f"cell by cell on the same rows: worse = accuracy lower by more than {100 * CHANGE_ACC:g} point or "
          f"MAE higher by more than {100 * CHANGE_MAE:g} %.", "",
          f"- Same rows: {len(worse)} worse, {better} better, {same} within the margin.",
          f"- Different rows (a row cap or --quick in either run): "
          f"{len(other_rows)} cells, listed below with both figures (not comparable row for row)."]
    if missing:
        md.append(f"- Not compared (new, or an error in either run): {', '.join(missing)}.")
    md.append("")
    if worse:
        md += ["| estimator | stream | rows | change |", "|---|---|---:|---|"] + worse + [""]
    if other_rows:
        md += ["| estimator | stream | previous rows | previous | rows | now |", "|---|---|---:|---:|---:|---:|"]
        md += [f"| {e} | {s} | {n0:,} | {v0:.4g} | {n1:,} | {v1:.4g} ({k}) |" for e, s, n0, v0, n1, v1, k in other_rows]
        md.append("")
    return md


def drift_report(drift):
    md = ["## Ensembles under drift: frozen experts per concept plus an online expert", "",
          "Two linear concepts A and B on 5 standard-normal features (B flips the sign of 3 of A's 5 "
          "weights). Classification: y = 1[x.w > 0] with 5% label noise; regression: y = 5 + x.w + "
          "0.3 noise. Experts: `FrozenEstimator(LogisticRegression())` / `FrozenEstimator(Ridge())` fitted "
          "once on 2,000 separate rows of A (frozen_A) and of B (frozen_B), plus an online expert "
          "(`SGDClassifier(loss='log_loss', random_state=0)` / `SGDRegressor(random_state=0)`, chunk "
          f"protocol). Ensembles at defaults except `rule`; chunks of {CHUNK}. Error: 0-1 error "
          "(classification) or absolute error (regression). Scenarios: abrupt = A (4,000 rows) then B "
          "(4,000 rows); recurring = A, B, A, B (2,500 rows each). Post-switch: mean error over the "
          f"{DRIFT_ROWS:,} rows after each switch (all switches pooled; per switch in brackets).", "",
          "Verdicts: the default rule's post-switch error <= 1.1 x min(FixedShare(), OCSPlus()); its "
          "whole-stream error < every single expert's.", ""]
    for d in drift:
        md += [f"### {d['task']}, {d['scenario']} ({'-'.join(d['order'])}, switches at rows "
               f"{', '.join(f'{s:,}' for s in d['switches'])})", "",
               "| method | whole stream | post-switch (pooled) | per switch |", "|---|---:|---:|---|"]
        for name, m in d["methods"].items():
            if "error" in m:
                md.append(f"| {name} | error: {m['error'][:100]} | | |")
                continue
            md.append(f"| {name} | {m['whole']:.4f} | {m['post_switch_mean']:.4f} | "
                      + ", ".join(f"{x:.4f}" for x in m["post_switch"]) + " |")
        md.append("")
        if "verdict_post_switch" in d:
            a, b = d["verdict_post_switch"], d["verdict_whole"]
            md.append(f"- Post-switch: the default rule's error {a['value']:.4f} is "
                      f"{'<=' if a['passed'] else '>'} 1.1 x {a['reference']} ({a['threshold']:.4f}): "
                      f"**{'pass' if a['passed'] else 'FAIL'}**.")
            md.append(f"- Whole stream: the default rule's error {b['value']:.4f} is "
                      f"{'below' if b['passed'] else 'not below'} the best single expert ({b['reference']}, "
                      f"{b['threshold']:.4f}): **{'pass' if b['passed'] else 'FAIL'}**.")
        else:
            md.append("- The default rule raised an error: **FAIL**.")
        ws = [(n, w["text"]) for n, m in d["methods"].items() for w in m.get("warnings", [])]
        for n, t in ws:
            md.append(f"- warning ({n}): {t}")
        md.append("")
    return md


def _jsonable(o):
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    if isinstance(o, (np.floating, float)):
        return float(o) if np.isfinite(o) else None
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return _jsonable(o.tolist())
    return o


# --------------------------------------------------------------------------- run-to-run spread
VARIANCE_RUNS = 5
VARIANCE_ACC = 0.01  # classification: five runs within one accuracy point
VARIANCE_MAE = 0.02  # regression: within 2 % of the median MAE


def has_random_state(make_estimator):
    """Whether the estimator (or one of its sub-estimators) takes a ``random_state``."""
    params = make_estimator().get_params(deep=True)
    return any(k == "random_state" or k.endswith("__random_state") for k in params)


def run_spread(make_estimator, stream, n, classes, runs=VARIANCE_RUNS):
    """``runs`` passes of the chunk protocol with every ``random_state`` left at None (a fresh
    seed each run, as a user gets by default): the metric of each run and the spread (accuracy:
    max - min; MAE: (max - min) / median)."""
    task = stream.task
    values = []
    for _ in range(runs):
        r = run_online(make_estimator, stream.X[:n], stream.y[:n], task, classes)
        if r["error"]:
            return {"values": values, "error": r["error"]}
        m = metrics(task, stream.y[:n], r["pred"], r["proba"], classes, r["seconds"], n)
        values.append(m["mae"] if task == "regression" else m["accuracy"])
    v = np.asarray(values, dtype=float)
    if task == "regression":
        spread = float((v.max() - v.min()) / np.median(v)) if np.median(v) > 0 else float("inf")
        ok = spread <= VARIANCE_MAE
    else:
        spread = float(v.max() - v.min())
        ok = spread <= VARIANCE_ACC
    return {"values": values, "spread": spread, "passed": bool(ok), "error": None}


def variance_report(rows):
    md = ["## Run-to-run spread at random_state=None", "",
          f"Each estimator that takes a `random_state` (its own or a sub-estimator's), left at None "
          f"(a new seed each run), {VARIANCE_RUNS} runs of the same stream and protocol (default "
          f"column, the same rows as above). Verdict: the runs differ by at most "
          f"{100 * VARIANCE_ACC:g} accuracy point or {100 * VARIANCE_MAE:g} % of the median MAE. "
          "Estimators without a `random_state` are deterministic.", "",
          "| estimator | stream | rows | values | spread | verdict |", "|---|---|---:|---|---:|---|"]
    n_pass = n_all = 0
    for r in rows:
        n_all += 1
        if r.get("error"):
            md.append(f"| {r['estimator']} | {r['stream']} | {r['n_rows']:,} | error: {r['error'][:80]} | | **FAIL** |")
            continue
        n_pass += r["passed"]
        reg = r["task"] == "regression"
        vals = ", ".join(f"{v:.4g}" for v in r["values"])
        spread = f"{100 * r['spread']:.2f} %" if reg else f"{100 * r['spread']:.2f} pts"
        md.append(f"| {r['estimator']} | {r['stream']} | {r['n_rows']:,} | {vals} | {spread} | "
                  f"{'pass' if r['passed'] else '**FAIL**'} |")
    md += ["", f"{n_pass} of {n_all} (estimator, stream) pairs within the bound.", ""]
    return md


# --------------------------------------------------------------------------- main
def scale_invariant_vs_vw(quick=False):
    """Issue 10's acceptance line for the linear learner: ``ScaleInvariantClassifier()`` (defaults)
    against Vowpal Wabbit's default on magic04 and cod-rna, raw and with every feature multiplied
    by 10^U(-3, 3). The data, permutation, rescaling and VW protocol are benchmarks/linear_model.py's
    (row by row, each row predicted before it is learned); the error counts p > 0.5 as positive."""
    import linear_model as lm  # benchmarks/linear_model.py (same folder)

    from skonline.linear_model import ScaleInvariantClassifier

    out = []
    for name in ("magic04", "cod-rna"):
        X, y, factors, _ = lm.load(name, quick)
        for variant, Xv in (("raw", X), ("rescaled", lm.rescale(X, factors))):
            clf = ScaleInvariantClassifier()
            t0 = time.perf_counter()
            dec = clf.partial_fit_decision_function(Xv, y, classes=[0, 1])
            sec = time.perf_counter() - t0
            _, vw_sec, margin, _ = lm.run_vw(lm.nonzero_rows(Xv), y)
            err_si = float(np.mean((dec > 0) != (y == 1)))
            err_vw = float(np.mean((margin > 0) != (y == 1)))
            out.append({"dataset": name, "variant": variant, "n_rows": int(len(y)),
                        "invariance": clf.invariance_, "error_skonline": err_si, "error_vw": err_vw,
                        "seconds_skonline": sec, "seconds_vw": vw_sec, "passed": bool(err_si <= err_vw)})
    return out


def si_vw_report(rows):
    md = ["## ScaleInvariantClassifier() against Vowpal Wabbit's default", "",
          "Progressive error (each row predicted, then learned, row by row), whole datasets in "
          "benchmarks/linear_model.py's permutation; *rescaled*: every column multiplied by "
          "10^U(-3, 3). Verdict: skonline's error <= VW's.", "",
          "| dataset | variant | rows | skonline (invariance_) | VW default | verdict |",
          "|---|---|---:|---:|---:|---|"]
    for r in rows:
        md.append(f"| {r['dataset']} | {r['variant']} | {r['n_rows']:,} | {r['error_skonline']:.4f} "
                  f"({r['invariance']}) | {r['error_vw']:.4f} | {'pass' if r['passed'] else '**FAIL**'} |")
    n_pass = sum(r["passed"] for r in rows)
    md += ["", f"{n_pass} of {len(rows)} pass.", ""]
    return md


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"{QUICK_ROWS:,}-row prefixes; prints the report unless --output is given")
    ap.add_argument("--estimators", nargs="+", metavar="NAME", help="subset of skonline estimators")
    ap.add_argument("--streams", nargs="+", metavar="NAME", help="subset of streams", choices=STREAM_NAMES)
    ap.add_argument("--max-rows", type=int, default=None, help=f"stream prefix (default {MAX_ROWS:,}; "
                    f"--quick: {QUICK_ROWS:,})")
    ap.add_argument("--no-baselines", action="store_true",
                    help="do not compute baselines (cached ones are still used; no verdict without them)")
    ap.add_argument("--no-pipeline", action="store_true", help="skip the online-pipeline column")
    ap.add_argument("--no-drift", action="store_true", help="skip the ensemble drift scenarios")
    ap.add_argument("--no-cache", action="store_true", help="neither read nor write benchmarks/_cache/")
    ap.add_argument("--variance-runs", type=int, default=VARIANCE_RUNS, metavar="N",
                    help=f"runs at random_state=None per (estimator, stream) for the spread section "
                         f"(default {VARIANCE_RUNS}; 0: skip)")
    ap.add_argument("--output", default=None,
                    help="markdown file to write (a .json with the same stem is written next to it); default "
                         "benchmarks/results/defaults.md for a full run of everything, none otherwise")
    args = ap.parse_args(argv)
    max_rows = args.max_rows or (QUICK_ROWS if args.quick else MAX_ROWS)
    full_run = not (args.quick or args.estimators or args.streams or args.max_rows or args.no_baselines
                    or args.no_pipeline or args.no_drift or args.variance_runs != VARIANCE_RUNS)
    output = args.output or (str(RESULTS / "defaults.md") if full_run else None)

    log = lambda s: print(s, flush=True)  # noqa: E731
    command = "python " + shlex.join([os.path.relpath(sys.argv[0], ROOT)] + (sys.argv[1:] if argv is None else argv))
    started = datetime.datetime.now().astimezone()
    load_start = os.getloadavg()
    t_start = time.perf_counter()

    ests = estimators()
    if args.estimators:
        unknown = [e for e in args.estimators if e not in ests]
        if unknown:
            ap.error(f"unknown estimators {unknown}; known: {', '.join(ests)}")
        ests = {k: v for k, v in ests.items() if k in args.estimators}
    stream_names = args.streams or STREAM_NAMES
    pipe = (not args.no_pipeline) and pipeline_available()
    if not args.no_pipeline and not pipe:
        log("skonline.pipeline / skonline.preprocessing not importable: the pipeline column is skipped")
    columns = ["default"] + (["pipeline"] if pipe else [])

    results, stream_info = [], []
    for sname in stream_names:
        st = load_stream(sname, max_rows)
        task = st.task
        kind = "regressor" if task == "regression" else "classifier"
        log(f"{sname} ({task}, {st.X.shape[0]:,} x {st.X.shape[1]}):")
        t0 = time.perf_counter()
        preds = baseline_predictions(st, use_cache=not args.no_cache, compute=not args.no_baselines, log=log)
        info = {"name": sname, "task": task, "n_rows": int(st.X.shape[0]), "n_features": int(st.X.shape[1]),
                "description": st.description, "baselines": {}}
        if preds:
            info["baselines"][str(st.X.shape[0])] = baseline_metrics(st, preds, st.X.shape[0])
        classes = None if task == "regression" else np.unique(st.y)
        for ename, (make, ekind) in ests.items():
            if ekind != kind:
                continue
            cap = row_cap_for(ename, st.X.shape[1], args.quick)
            n = st.X.shape[0] if cap is None else min(cap, st.X.shape[0])
            base = baseline_metrics(st, preds, n) if preds else {}
            if preds and str(n) not in info["baselines"]:
                info["baselines"][str(n)] = base
            for col in columns:
                mk = in_pipeline(make) if col == "pipeline" else make
                warm_up(mk, st.X[:n], st.y[:n], task, classes)
                r = run_online(mk, st.X[:n], st.y[:n], task, classes)
                m = None if r["error"] else metrics(task, st.y[:n], r["pred"], r["proba"], classes,
                                                    r["seconds"], n)
                v = verdict(task, m, base)
                results.append({"estimator": ename, "column": col, "stream": sname, "task": task,
                                "n_rows": int(n), "metrics": m, "seconds": r["seconds"],
                                "warnings": r["warnings"], "error": r["error"], "error_row": r["error_row"],
                                "verdict": v})
                main_m = "-" if m is None else (
                    _f(m.get("mae"), ".4g") if task == "regression" else _f(m.get("accuracy")))
                log(f"  {ename + (' [pipe]' if col == 'pipeline' else ''):<34s} {main_m:>10s} "
                    f"{r['seconds']:6.1f} s  {_verdict_cell(v)}" + (f"  {r['error']}" if r["error"] else "")
                    + (f"  ({len(r['warnings'])} warning texts)" if r["warnings"] else ""))
        info["seconds"] = time.perf_counter() - t0
        stream_info.append(info)

    drift = []
    if not args.no_drift and (not args.estimators or any(e.startswith("OnlineEnsemble") for e in ests)):
        for task in ("classification", "regression"):
            for scen in ("abrupt", "recurring"):
                log(f"drift: {task} {scen}")
                try:
                    drift.append(drift_scenario(task, scen, quick=args.quick))
                except Exception as exc:
                    drift.append({"task": task, "scenario": scen, "order": "", "switches": [],
                                  "methods": {"setup": {"error": f"{type(exc).__name__}: {exc}"}}})
    spreads = []
    if args.variance_runs > 0:
        from skonline.utils import all_estimators

        raw = dict(all_estimators())
        for ename, (_, ekind) in ests.items():
            unseeded = raw.get(ename)  # the class: its defaults (the ensembles' default experts included)
            if unseeded is None or not has_random_state(unseeded):
                continue
            for sname in stream_names:
                st = load_stream(sname, max_rows)
                if (st.task == "regression") != (ekind == "regressor"):
                    continue
                cap = row_cap_for(ename, st.X.shape[1], args.quick)
                n = st.X.shape[0] if cap is None else min(cap, st.X.shape[0])
                classes = None if st.task == "regression" else np.unique(st.y)
                r = run_spread(unseeded, st, n, classes, args.variance_runs)
                spreads.append({"estimator": ename, "stream": sname, "task": st.task, "n_rows": int(n), **r})
                log(f"  spread {ename:<28s} {sname:<18s} " + (f"error {r['error']}" if r["error"] else
                    f"{r['spread']:.4f} {'pass' if r['passed'] else 'FAIL'}"))
    si_vw = []
    if not args.no_baselines and (not args.estimators or "ScaleInvariantClassifier" in ests) and not args.streams:
        log("ScaleInvariantClassifier() vs Vowpal Wabbit on magic04 and cod-rna")
        si_vw = scale_invariant_vs_vw(quick=args.quick)
    total = time.perf_counter() - t_start
    previous = None
    if output and Path(output).with_suffix(".json").exists():  # the run this one replaces
        previous = json.loads(Path(output).with_suffix(".json").read_text())
    run = {"max_rows": max_rows, "pipeline": pipe, "previous": previous, "estimators": list(ests), "si_vs_vw": si_vw,
           "spreads": spreads,
           "kinds": {k: v[1] for k, v in ests.items()}, "results": results, "streams": stream_info,
           "drift": drift, "load": {"start": load_start, "end": os.getloadavg()}}
    text = report(run, command, started, total, args)
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text + "\n")
        js = Path(output).with_suffix(".json")
        payload = {"command": command, "date": started.isoformat(), "total_seconds": total,
                   "machine": machine(), "versions": versions(), "protocol": {
                       "chunk": CHUNK, "seed": SEED, "max_rows": max_rows,
                       "row_caps": {k: {"rows": c[1] if args.quick else c[0], "min_features": c[2],
                                        "reason": c[3]} for k, c in ROW_CAPS.items()},
                       "acc_margin": ACC_MARGIN, "mae_factor": MAE_FACTOR, "ensemble_experts": ENSEMBLE_EXPERTS},
                   **{k: val for k, val in run.items() if k != "previous"},
                   "previous": {k: (previous or {}).get(k) for k in ("command", "date", "versions")}}
        js.write_text(json.dumps(_jsonable(payload), indent=1) + "\n")
        log(f"wrote {output} and {js}")
    else:
        print("\n" + text)
    log(f"total {total:.1f} s")
    return run


if __name__ == "__main__":
    main()
