"""Benchmark: the default online ensemble against what users pick instead (issue 22).

``OnlineEnsembleClassifier()`` / ``OnlineEnsembleRegressor()`` (no arguments) on the development
streams of ``benchmarks/defaults.py`` (same rows, same order, chunks of 100, each chunk predicted
before it is learned), beside:

* every single supervised skonline estimator at defaults (the defaults benchmark's row caps);
* river's strongest defaults, row by row: ``StandardScaler | LogisticRegression`` (one-vs-rest for
  multiclass) / ``LinearRegression``, ``HoeffdingAdaptiveTree``, ``ARF`` (adaptive random forest),
  ``StandardScaler | KNN``;
* Vowpal Wabbit, row by row: default, ``--nn 10``, quadratic (``-q ::``);
* CapyMOA (MOA's learners, when ``capymoa`` imports and Java runs): Hoeffding tree and the adaptive
  random forest at MOA's default of 100 trees.

The slowest baselines (river ARF and KNN, CapyMOA's forest: about 100-200 rows/s here) run on the
first ``SLOW_ROWS`` rows of each stream; every method is prequential with one fixed row order, so a
prefix's metrics are those of the first rows of a run, and each comparison is made on the rows both
methods saw.

The speed ratio of issue 22 (the ensemble's rows/s over its slowest expert's) comes from a pass of
its own after the timed ones: the ensemble and each of its experts alone learn the stream in turns
of ``LOCKSTEP_ROWS`` rows, so that a change of load on the shared machine slows all of them alike
(:func:`lockstep_speed`).

Then the drift scenarios: streams whose best family switches abruptly (a linear concept, then a
radial one, then back), where the ensemble's error after each switch is compared with the error of
the new best of its experts; and the defaults benchmark's scenarios with frozen experts.

Usage::

    python benchmarks/ensemble.py            # -> benchmarks/results/ensemble.{md,json}
    python benchmarks/ensemble.py --quick    # 2,000-row prefixes, prints the report

Baseline predictions are cached in benchmarks/_cache/ (git-ignored).
"""

import argparse
import datetime
import functools
import hashlib
import json
import os
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import defaults  # noqa: E402, I001  (benchmarks/defaults.py: streams, protocol, metrics)
from _common import machine  # noqa: E402

ROOT = defaults.ROOT
RESULTS = defaults.RESULTS
CACHE = defaults.CACHE
CHUNK = defaults.CHUNK
SEED = defaults.SEED
SLOW_ROWS = 2_000
LOCKSTEP_ROWS = 1_000  # the speed ratio's lockstep: rows each method learns in turn (lockstep_speed)
ACC_POINTS = 0.01  # within 1 accuracy point ...
MAE_RATIO = 1.05  # ... or 5 % MAE
SHARE = 0.9  # ... on at least 90 % of the streams
ENSEMBLES = {"classifier": "OnlineEnsembleClassifier", "regressor": "OnlineEnsembleRegressor"}

BASELINES = {
    "river_linear": ("river StandardScaler \\| LogisticRegression / LinearRegression", None),
    "river_hat": ("river HoeffdingAdaptiveTree", None),
    "river_arf": ("river ARF (10 trees)", SLOW_ROWS),
    "river_knn": ("river StandardScaler \\| KNN", SLOW_ROWS),
    "vw": ("Vowpal Wabbit default", None),
    "vw_nn": ("Vowpal Wabbit --nn 10", None),
    "vw_quadratic": ("Vowpal Wabbit -q ::", None),
    "moa_ht": ("CapyMOA HoeffdingTree", None),
    "moa_arf": ("CapyMOA AdaptiveRandomForest (100 trees)", SLOW_ROWS),
}


# --------------------------------------------------------------------------- baselines
def _river_model(name, task):
    from river import forest, linear_model, multiclass, neighbors, preprocessing, tree

    reg = task == "regression"
    if name == "river_linear":
        if reg:
            return preprocessing.StandardScaler() | linear_model.LinearRegression()
        if task == "binary":
            return preprocessing.StandardScaler() | linear_model.LogisticRegression()
        return preprocessing.StandardScaler() | multiclass.OneVsRestClassifier(linear_model.LogisticRegression())
    if name == "river_hat":
        if reg:
            return tree.HoeffdingAdaptiveTreeRegressor(seed=SEED)
        return tree.HoeffdingAdaptiveTreeClassifier(seed=SEED)
    if name == "river_arf":
        return forest.ARFRegressor(seed=SEED) if reg else forest.ARFClassifier(seed=SEED)
    return preprocessing.StandardScaler() | (neighbors.KNNRegressor() if reg else neighbors.KNNClassifier())


def _river(name, X, y, task, classes):
    n = X.shape[0]
    model = _river_model(name, task)
    rows = [dict(enumerate(r)) for r in X.tolist()]
    if task == "regression":
        targets = y.tolist()
    elif task == "binary" and name == "river_linear":
        targets = (y == classes[1]).tolist()
    else:
        targets = np.searchsorted(classes, y).tolist()
    pred = np.zeros(n)
    proba = None if task == "regression" else np.zeros((n, len(classes)))
    t0 = time.perf_counter()
    for i, (x, t) in enumerate(zip(rows, targets)):
        if task == "regression":
            pred[i] = model.predict_one(x) or 0.0
        else:
            d = model.predict_proba_one(x)
            if task == "binary" and name == "river_linear":
                p1 = d.get(True, 0.5)
                v = np.array([1.0 - p1, p1])
            else:
                v = np.array([d.get(k, 0.0) for k in range(len(classes))], dtype=float)
            s = v.sum()
            proba[i] = v / s if s > 0 else 1.0 / len(classes)
        model.learn_one(x, t)
    sec = time.perf_counter() - t0
    if proba is not None:
        pred = np.argmax(proba, axis=1).astype(float)
    return pred, proba, sec


def _vw(name, X, y, task, classes):
    extra = {"vw": "", "vw_nn": " --nn 10", "vw_quadratic": " -q ::"}[name]
    return defaults._vw_pass(X, y, task, classes, extra=extra)


def _moa(name, X, y, task, classes):
    from capymoa.stream import NumpyStream

    reg = task == "regression"
    yy = y if reg else np.searchsorted(classes, y)
    stream = NumpyStream(X, yy, target_type="numeric" if reg else "categorical")
    schema = stream.get_schema()
    if name == "moa_ht":
        from capymoa.classifier import HoeffdingTree
        from capymoa.regressor import FIMTDD

        model = FIMTDD(schema=schema) if reg else HoeffdingTree(schema=schema)
    else:
        from capymoa.classifier import AdaptiveRandomForestClassifier
        from capymoa.regressor import AdaptiveRandomForestRegressor

        model = (AdaptiveRandomForestRegressor if reg else AdaptiveRandomForestClassifier)(schema=schema)
    n = X.shape[0]
    pred = np.zeros(n)
    proba = None if reg else np.zeros((n, len(classes)))
    t0 = time.perf_counter()
    for i in range(n):
        inst = stream.next_instance()
        if reg:
            p = model.predict(inst)
            pred[i] = 0.0 if p is None or not np.isfinite(p) else p
        else:
            p = model.predict_proba(inst)
            v = np.zeros(len(classes)) if p is None else np.asarray(p, dtype=float)[: len(classes)]
            v = np.pad(v, (0, len(classes) - v.shape[0]))
            s = v.sum()
            proba[i] = v / s if s > 0 else 1.0 / len(classes)
        model.train(inst)
    sec = time.perf_counter() - t0
    if proba is not None:
        pred = np.argmax(proba, axis=1).astype(float)
    return pred, proba, sec


def _baseline_pass(name, X, y, task, classes):
    if name.startswith("river"):
        return _river(name, X, y, task, classes)
    if name.startswith("vw"):
        return _vw(name, X, y, task, classes)
    return _moa(name, X, y, task, classes)


def _versions_key():
    import river
    import vowpalwabbit

    v = f"river {river.__version__}; vw {vowpalwabbit.__version__}"
    try:
        import capymoa

        v += f"; capymoa {capymoa.__version__}"
    except Exception:  # pragma: no cover
        pass
    return v


def baseline_runs(stream, names, log=print, use_cache=True):
    """Per-row predictions of each baseline (on its prefix), cached: ``{name: dict(pred, proba,
    seconds, n, error)}``."""
    X, y, task = stream.X, stream.y, stream.task
    classes = None if task == "regression" else np.unique(y)
    h = hashlib.sha1(np.ascontiguousarray(X).tobytes() + np.ascontiguousarray(y).tobytes()).hexdigest()[:10]
    key = hashlib.sha1(f"{_versions_key()}|{SEED}".encode()).hexdigest()[:8]
    out = {}
    for b in names:
        cap = BASELINES[b][1]
        n = X.shape[0] if cap is None else min(cap, X.shape[0])
        path = CACHE / f"ensemble_{stream.name}_{n}_{h}_{key}_{b}.npz"
        if use_cache and path.exists():
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                out[b] = {"pred": z["pred"] if "pred" in z else None, "proba": z["proba"] if "proba" in z else None,
                          **meta}
            continue
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                pred, proba, sec = _baseline_pass(b, X[:n], y[:n], task, classes)
            out[b] = {"pred": pred, "proba": proba, "seconds": sec, "n": n, "error": None}
        except Exception as exc:
            out[b] = {"pred": None, "proba": None, "seconds": time.perf_counter() - t0, "n": n,
                      "error": f"{type(exc).__name__}: {exc}"[:300]}
        log(f"    {b:<14s} {out[b]['seconds']:7.1f} s" + (f"  ERROR {out[b]['error']}" if out[b]["error"] else ""))
        if use_cache:
            CACHE.mkdir(parents=True, exist_ok=True)
            arrays = {k: out[b][k] for k in ("pred", "proba") if out[b][k] is not None}
            meta = {k: out[b][k] for k in ("seconds", "n", "error")}
            tmp = path.with_suffix(".tmp.npz")
            np.savez_compressed(tmp, meta=json.dumps(meta), **arrays)
            os.replace(tmp, path)
    return out


# --------------------------------------------------------------------------- skonline
def skonline_runs(stream, quick=False, log=print):
    """Per-row predictions of the default ensemble and of every single skonline estimator at
    defaults (with the defaults benchmark's row caps): ``{name: dict(pred, proba, seconds, n,
    error)}``; under ``"speed"``, the ensemble's and its experts' times in lockstep
    (:func:`lockstep_speed`)."""
    X, y, task = stream.X, stream.y, stream.task
    kind = "regressor" if task == "regression" else "classifier"
    classes = None if task == "regression" else np.unique(y)
    out = {}
    makers = {name: make for name, (make, k) in defaults.estimators().items()
              if k == kind and not name.startswith("OnlineEnsemble")}
    from skonline.experts import OnlineEnsembleClassifier, OnlineEnsembleRegressor

    ens_cls = OnlineEnsembleClassifier if kind == "classifier" else OnlineEnsembleRegressor
    makers = {"ensemble": defaults.seeded(ens_cls), **makers}
    if kind == "classifier":  # the alternative loss of the rule (see ALT_LOSS)
        makers[f"ensemble:{ALT_LOSS}"] = _alt_ensemble(ens_cls)
    for name, make in makers.items():
        cap = None if name.startswith("ensemble") else defaults.row_cap_for(name, X.shape[1], quick)
        n = X.shape[0] if cap is None else min(cap, X.shape[0])
        defaults.warm_up(make, X[:n], y[:n], task, classes)
        r = defaults.run_online(make, X[:n], y[:n], task, classes)
        out[name] = {"pred": r["pred"], "proba": r["proba"], "seconds": r["seconds"], "n": n, "error": r["error"],
                     "warnings": r["warnings"]}
        log(f"    {name:<28s} {r['seconds']:7.1f} s" + (f"  ERROR {r['error']}" if r["error"] else ""))
    # the speed ratio: the ensemble and its experts alone, in lockstep by blocks of rows
    out["speed"] = lockstep_speed(defaults.seeded(ens_cls), X, y, task, classes)
    return out


def lockstep_speed(make_ensemble, X, y, task, classes):
    """Seconds of a fresh ensemble and of each of its experts run alone (same seeds, as the
    ensemble calls them) over the stream, in lockstep: each block of ``LOCKSTEP_ROWS`` rows is
    learned (in chunks of ``CHUNK``) by the ensemble, then by each expert alone, so that a change of
    load on the shared machine slows all of them alike (as ``benchmarks/scale.py`` times SGD beside
    each estimator). Blocks, not single chunks: the ensemble's threads sleep while the others run,
    and the first chunk after a pause pays their wake-up (chunk by chunk, the ensemble on adult
    ran at 10.7k rows/s, against 13.4k by blocks). Run after the stream's timed passes, so that
    every compiled path is loaded for both (a path reached first late in the stream, e.g. kernel
    selection's switch to random features, is not a cost of the ensemble only).
    ``{"ensemble": s, "members": {name: s}, "n": rows}``."""
    from sklearn.base import clone

    kind = "regressor" if task == "regression" else "classifier"
    probe = make_ensemble()
    probe.partial_fit(X[:2], y[:2], **({} if classes is None else {"classes": classes}))
    runners = {"ensemble": _Quiet(make_ensemble())}
    runners.update({name: _ExpertAlone(functools.partial(clone, est), kind)()
                    for name, est in probe.named_estimators_.items()})
    seconds = dict.fromkeys(runners, 0.0)
    method = "partial_fit_predict" if kind == "regressor" else "partial_fit_predict_proba"
    for block in range(0, X.shape[0], LOCKSTEP_ROWS):
        for name, runner in runners.items():
            t = time.perf_counter()
            for start in range(block, min(block + LOCKSTEP_ROWS, X.shape[0]), CHUNK):
                sl = slice(start, start + CHUNK)
                kw = {"classes": classes} if (start == 0 and classes is not None) else {}
                getattr(runner, method)(X[sl], y[sl], **kw)
            seconds[name] += time.perf_counter() - t
    return {"ensemble": seconds.pop("ensemble"), "members": seconds, "n": int(X.shape[0])}


class _ExpertAlone:
    """A factory of one of the ensemble's experts, called as the ensemble calls it (one group for
    GroupDRO, its notes about its own settings silenced)."""

    def __init__(self, make, kind):
        self.make, self.kind = make, kind

    def __call__(self):
        est = self.make()
        return _Quiet(est)


class _Quiet:
    """An estimator called as the ensemble calls its experts: its warnings silenced, and one group
    for an estimator that takes ``groups`` (looked up once: a signature per call would be timed)."""

    def __init__(self, est):
        import inspect

        self.est = est
        self.classes_ = None
        self._groups = "groups" in inspect.signature(est.partial_fit).parameters

    def _kw(self, X):
        return {"groups": np.zeros(X.shape[0], dtype=np.int64)} if self._groups else {}

    def partial_fit_predict(self, X, y, **kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.est.partial_fit_predict(X, y, **kw, **self._kw(X))

    def partial_fit_predict_proba(self, X, y, **kw):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = self.est.partial_fit_predict_proba(X, y, **kw, **self._kw(X))
        self.classes_ = self.est.classes_
        return out

    @property
    def predict_proba(self):
        return self.est.predict_proba


# --------------------------------------------------------------------------- scoring
def _score(task, y, r, n, classes):
    """Metrics of run ``r`` on its first ``n`` rows (rows/s of the whole run)."""
    m = defaults.metrics(task, y[:n], r["pred"][:n], None if r["proba"] is None else r["proba"][:n], classes,
                         r["seconds"], r["n"])
    return m


def _main(task, m):
    return m.get("mae") if task == "regression" else m.get("accuracy")


def _within(task, a, b, points=ACC_POINTS, ratio=MAE_RATIO):
    """Is the ensemble's metric ``a`` within the margin of ``b``?"""
    if a is None or b is None or not np.isfinite(a) or not np.isfinite(b):
        return False
    return a <= ratio * b if task == "regression" else a >= b - points


def evaluate_stream(stream, sk, base):
    """Comparisons of the ensemble on one stream."""
    task = stream.task
    classes = None if task == "regression" else np.unique(stream.y)
    ens = sk["ensemble"]
    res = {"stream": stream.name, "task": task, "n_rows": int(stream.X.shape[0]), "rows": []}
    if ens["error"]:
        res["error"] = ens["error"]
        return res
    singles = {k: v for k, v in sk.items() if not k.startswith(("ensemble", "speed"))}
    # the ensemble against each single skonline estimator, on the rows the single saw
    worst = None
    for name, r in singles.items():
        if r["error"]:
            res["rows"].append({"method": name, "kind": "skonline", "error": r["error"]})
            continue
        n = r["n"]
        ms, me = _score(task, stream.y, r, n, classes), _score(task, stream.y, ens, n, classes)
        ok = _within(task, _main(task, me), _main(task, ms))
        res["rows"].append({"method": name, "kind": "skonline", "n": n, "metrics": ms, "ensemble": me, "ok": ok})
        if not ok:
            worst = name if worst is None else worst
    res["within_best_single"] = worst is None
    res["failing_single"] = worst
    for name, r in base.items():
        if r["error"] or r["pred"] is None:
            res["rows"].append({"method": name, "kind": "baseline", "error": r["error"] or "missing"})
            continue
        n = r["n"]
        mb, me = _score(task, stream.y, r, n, classes), _score(task, stream.y, ens, n, classes)
        res["rows"].append({"method": name, "kind": "baseline", "n": n, "metrics": mb, "ensemble": me,
                            "ok": _within(task, _main(task, me), _main(task, mb))})
    rl = next((row for row in res["rows"] if row["method"] == "river_linear" and "metrics" in row), None)
    res["vs_river_linear"] = None if rl is None else rl["ok"]
    res["ensemble"] = _score(task, stream.y, ens, ens["n"], classes)
    alt = sk.get(f"ensemble:{ALT_LOSS}")
    if alt is not None and not alt["error"]:
        res["alt_loss"] = _score(task, stream.y, alt, alt["n"], classes)
        best = [_main(task, r["metrics"]) for r in res["rows"] if r["kind"] == "skonline" and "metrics" in r]
        res["alt_within_best_single"] = all(_within(task, _main(task, res["alt_loss"]), b) for b in best)
    speed = sk.get("speed")
    if speed:
        members = speed["members"]
        slowest = max(members, key=members.get)
        res["speed"] = {"ensemble_rows_per_s": speed["n"] / speed["ensemble"],
                        "members_rows_per_s": {k: speed["n"] / v for k, v in members.items()},
                        "slowest_member": slowest,
                        "ratio_to_slowest": members[slowest] / speed["ensemble"]}
    return res


# --------------------------------------------------------------------------- drift
#: the classifier's other proper-for-labels choice of ``loss``, run beside the default on every
#: classification stream and in the drift scenario: the rule weighs the experts by their 0-1 loss
ALT_LOSS = "zero_one"


def _alt_ensemble(ens_cls):
    """A factory of the classifier ensemble with ``loss=ALT_LOSS``, seeded as the default one."""
    return defaults.seeded(functools.partial(ens_cls, loss=ALT_LOSS))


SWITCH_ROWS = 3_000  # rows per concept
RECOVERY_ROWS = 500
WINDOW = 1_000  # error measured over the WINDOW rows starting RECOVERY_ROWS after a switch


def switching_stream(task, seed=0):
    """A stream whose best family switches abruptly: a linear concept (the linear learners learn
    it fastest), then a radial one (only the kernel learners can), then the linear one again.
    Eight standard-normal features; 5 % label noise (classification) or unit-variance noise
    (regression)."""
    rng = np.random.default_rng([SEED, 300, seed])
    d = 8
    n = 3 * SWITCH_ROWS
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    lin = X @ w
    rad = np.sum(X[:, :3] ** 2, axis=1) - 3.0  # median about -0.63: a ball of the first 3 coordinates
    seg = np.arange(n) // SWITCH_ROWS
    f = np.where(seg == 1, rad, lin)
    if task == "classification":
        y = (f > (np.where(seg == 1, -0.63, 0.0))).astype(np.int64)
        flip = rng.random(n) < 0.05
        y[flip] = 1 - y[flip]
    else:
        y = 3.0 * f + rng.standard_normal(n)
    return X, y, [SWITCH_ROWS, 2 * SWITCH_ROWS]


def drift_switch(task, log=print):
    """The default ensemble and its experts (run alone, same seeds) on :func:`switching_stream`:
    per switch, the error over rows [s + RECOVERY_ROWS, s + RECOVERY_ROWS + WINDOW) of the
    ensemble and of the best expert over those rows (0-1 error or absolute error)."""
    from skonline.experts import OnlineEnsembleClassifier, OnlineEnsembleRegressor

    X, y, switches = switching_stream(task)
    kind = "binary" if task == "classification" else "regression"
    classes = np.array([0, 1]) if task == "classification" else None
    ens_cls = OnlineEnsembleClassifier if task == "classification" else OnlineEnsembleRegressor
    make = defaults.seeded(ens_cls)
    r = defaults.run_online(make, X, y, kind, classes)
    if r["error"]:
        return {"task": task, "error": r["error"]}

    def err(pred):
        return (pred != y).astype(float) if task == "classification" else np.abs(pred - y)

    def logloss(proba):  # classification: the ensemble's own loss (it weighs its experts by it)
        if proba is None:
            return None
        p = proba[np.arange(y.shape[0]), y]
        return -np.log(np.clip(np.where(np.isfinite(p), p, 0.0), 1e-15, 1.0))

    errors = {"ensemble": err(r["pred"] if task != "classification" else classes[r["pred"].astype(int)])}
    logs = {"ensemble": logloss(r["proba"]) if task == "classification" else None}
    alt = f"ensemble:{ALT_LOSS}"
    if task == "classification":  # the rule weighing the experts by their 0-1 loss instead
        ra = defaults.run_online(_alt_ensemble(ens_cls), X, y, kind, classes)
        errors[alt], logs[alt] = err(classes[ra["pred"].astype(int)]), logloss(ra["proba"])
    ens = make()
    ens.partial_fit(X[:2], y[:2], **({} if classes is None else {"classes": classes}))
    from sklearn.base import clone

    for name, est in ens.named_estimators_.items():
        rr = defaults.run_online(_ExpertAlone(functools.partial(clone, est), "x"), X, y, kind, classes)
        p = rr["pred"] if task != "classification" else classes[rr["pred"].astype(int)]
        errors[name] = err(p)
        logs[name] = logloss(rr["proba"]) if task == "classification" else None
    out = {"task": task, "switches": switches, "n_rows": int(X.shape[0]), "segments": []}
    for s in switches:
        a, b = s + RECOVERY_ROWS, s + RECOVERY_ROWS + WINDOW
        win = {k: float(v[a:b].mean()) for k, v in errors.items()}
        experts = {k: v for k, v in win.items() if not k.startswith("ensemble")}
        best = min(experts, key=experts.get)
        before = {k: float(v[s - WINDOW:s].mean()) for k, v in errors.items() if not k.startswith("ensemble")}
        # first row after the switch from which the ensemble's error over the next 200 rows stays
        # within 10 % of the best expert's over the same rows
        seg = {"switch": s, "window": [a, b], "errors": win, "best_expert": best,
               "best_before": min(before, key=before.get),
               "ok": bool(win["ensemble"] <= 1.1 * experts[best])}
        if alt in win:
            seg["ok_alt"] = bool(win[alt] <= 1.1 * experts[best])
        if all(v is not None for v in logs.values()):  # the same window under the log loss
            lwin = {k: float(v[a:b].mean()) for k, v in logs.items()}
            lbest = min((k for k in lwin if not k.startswith("ensemble")), key=lwin.get)
            seg.update(log_loss=lwin, best_expert_log_loss=lbest,
                       ok_log_loss=bool(lwin["ensemble"] <= 1.1 * lwin[lbest]))
            if alt in lwin:
                seg["ok_alt_log_loss"] = bool(lwin[alt] <= 1.1 * lwin[lbest])
        out["segments"].append(seg)
    log(f"  drift {task}: " + "; ".join(
        f"switch {g['switch']}: ensemble {g['errors']['ensemble']:.4f} vs {g['best_expert']} "
        f"{g['errors'][g['best_expert']]:.4f}" for g in out["segments"]))
    return out


# --------------------------------------------------------------------------- report
def _cell(task, m):
    if m is None:
        return ["-", "-"] if task == "regression" else ["-", "-", "-"]
    rate = f"{m['rows_per_s']:,.0f}" if np.isfinite(m.get("rows_per_s", np.nan)) else "-"
    if task == "regression":
        return [f"{m['mae']:.4g}" if np.isfinite(m.get("mae", np.nan)) else "nan", rate]
    ll = m.get("log_loss")
    return [f"{m['accuracy']:.4f}", "-" if ll is None or not np.isfinite(ll) else f"{ll:.4f}", rate]


def _alt_drift(g):
    """The drift verdict of the ``ALT_LOSS`` classifier at one switch (see :func:`drift_switch`)."""
    key = f"ensemble:{ALT_LOSS}"
    e = g["errors"][key] / max(g["errors"][g["best_expert"]], 1e-12)
    ll = g["log_loss"][key] / max(g["log_loss"][g["best_expert_log_loss"]], 1e-12)
    return (f"switch {g['switch']:,} {g['errors'][key]:.4f} ({e:.2f}x, {'pass' if g['ok_alt'] else 'FAIL'}; "
            f"log loss {ll:.2f}x the best expert's)")


def report(run, command, started, total):
    md = ["# The default online ensemble against what users pick instead", "",
          f"- Command (from the repository root): `{command}`",
          f"- Date: {started:%Y-%m-%d %H:%M %Z}; total wall time {total / 60:.1f} min",
          f"- Machine: {machine()}; load average at start {run['load'][0][0]:.2f}, at end {run['load'][1][0]:.2f} "
          "(the machine is shared: rows/s are indicative)",
          "- Versions: " + ", ".join(f"{k} {v}" for k, v in defaults.versions().items())
          + f"; {_versions_key()}",
          f"- Streams: the development streams of `benchmarks/defaults.py`, capped at **{run['max_rows']:,} rows**; "
          f"chunks of {CHUNK} (skonline: `partial_fit_predict[_proba]`); baselines row by row (predict, "
          f"then learn); river ARF, river KNN and CapyMOA's forest on the first {SLOW_ROWS:,} rows.",
          "- Ensemble: `OnlineEnsembleClassifier(random_state=0)` / `OnlineEnsembleRegressor(random_state=0)`, "
          "every other parameter at its default (experts: `skonline.experts.default_estimators`).",
          f"- Each comparison is made on the rows both methods saw (the ensemble's metrics on that prefix are "
          "in the `ensemble` column). Verdicts: the ensemble is within "
          f"{100 * ACC_POINTS:.0f} accuracy point (MAE within {100 * (MAE_RATIO - 1):.0f} %) of every single "
          f"skonline estimator on at least {100 * SHARE:.0f} % of the streams, and on every stream at least as "
          "good as river's scaled linear model minus that margin.", ""]
    streams = run["streams"]
    n_ok = sum(1 for s in streams if s.get("within_best_single"))
    n_rl = sum(1 for s in streams if s.get("vs_river_linear"))
    md += ["## Verdicts", "",
           f"- Within the margin of the best single skonline estimator at defaults on **{n_ok} of {len(streams)}** "
           f"streams ({100 * n_ok / max(len(streams), 1):.0f} %; target {100 * SHARE:.0f} %): "
           f"**{'pass' if n_ok >= SHARE * len(streams) else 'FAIL'}**."
           + ("" if n_ok == len(streams) else " Missed on: " + ", ".join(
               f"{s['stream']} ({s.get('failing_single') or s.get('error')})" for s in streams
               if not s.get("within_best_single")) + "."),
           f"- At least river's scaled linear model minus the margin on **{n_rl} of {len(streams)}** streams: "
           f"**{'pass' if n_rl == len(streams) else 'FAIL'}**."
           + ("" if n_rl == len(streams) else " Missed on: " + ", ".join(
               s["stream"] for s in streams if not s.get("vs_river_linear")) + ".")]
    speeds = [s["speed"] for s in streams if "speed" in s]
    if speeds:
        ratios = [v["ratio_to_slowest"] for v in speeds]
        md.append(f"- Speed: the ensemble's rows/s over its slowest expert's (run alone on the same chunks of "
                  f"{CHUNK} rows, in lockstep with the ensemble, after the timed passes): "
                  f"median {np.median(ratios):.2f}, min {min(ratios):.2f} (target 0.5); at least 0.5 on "
                  f"{sum(r >= 0.5 for r in ratios)} of {len(ratios)} streams.")
    for d in run.get("drift", []):
        if "error" in d:
            md.append(f"- Drift ({d['task']}): error {d['error']}")
            continue
        for g in d["segments"]:
            md.append(f"- Drift ({d['task']}, switch at row {g['switch']:,}, best expert before: {g['best_before']}, "
                      f"after: {g['best_expert']}): the ensemble's error over rows {g['window'][0]:,}-"
                      f"{g['window'][1]:,} is {g['errors']['ensemble']:.4f} against {g['errors'][g['best_expert']]:.4f}"
                      f" ({g['errors']['ensemble'] / max(g['errors'][g['best_expert']], 1e-12):.2f}x; target 1.1x): "
                      f"**{'pass' if g['ok'] else 'FAIL'}**."
                      + (" Under the log loss, the loss the classifier weighs its experts by: "
                         f"{g['log_loss']['ensemble']:.4f} against the best expert's ({g['best_expert_log_loss']}) "
                         f"{g['log_loss'][g['best_expert_log_loss']]:.4f} "
                         f"({g['log_loss']['ensemble'] / max(g['log_loss'][g['best_expert_log_loss']], 1e-12):.2f}x): "
                         f"**{'pass' if g['ok_log_loss'] else 'FAIL'}**." if "log_loss" in g else ""))
    alts = [s for s in streams if "alt_loss" in s]
    if alts:
        ratios = [s["alt_loss"]["log_loss"] / s["ensemble"]["log_loss"] for s in alts
                  if s["alt_loss"].get("log_loss") and s["ensemble"].get("log_loss")]
        gains = [100 * (s["alt_loss"]["accuracy"] - s["ensemble"]["accuracy"]) for s in alts]
        segs = [g for d in run.get("drift", []) if d.get("task") == "classification" for g in d.get("segments", [])
                if "ok_alt" in g]
        md.append(f"- The classifier with `loss='{ALT_LOSS}'` (its rule weighs the experts by their 0-1 loss, "
                  f"the default by their log loss), on the {len(alts)} classification streams: accuracy "
                  f"{min(gains):+.2f} to {max(gains):+.2f} points against the default (median "
                  f"{np.median(gains):+.2f}); log loss {min(ratios):.2f}x to {max(ratios):.2f}x the default's "
                  f"(median {np.median(ratios):.2f}x); within the margin of the best single estimator on "
                  f"{sum(bool(s.get('alt_within_best_single')) for s in alts)} of {len(alts)}"
                  + ("; drift (error within 1.1x of the best expert's): " + ", ".join(map(_alt_drift, segs))
                     if segs else "") + ".")
    md.append("")
    md += ["## Per stream", ""]
    for s in streams:
        task = s["task"]
        reg = task == "regression"
        md += [f"### {s['stream']} ({task}, {s['n_rows']:,} rows)", ""]
        if "error" in s:
            md += [f"The ensemble raised: {s['error']}", ""]
            continue
        head = "| method | rows | MAE | rows/s | ensemble MAE on these rows | within |" if reg else (
            "| method | rows | accuracy | log-loss | rows/s | ensemble accuracy on these rows | within |")
        md += [head, "|---|---:|" + ("---:|" * (2 if reg else 3)) + "---:|---|"]
        md.append(f"| **OnlineEnsemble (default)** | {s['n_rows']:,} | " + " | ".join(_cell(task, s["ensemble"]))
                  + " | | |")
        if "alt_loss" in s:
            md.append(f"| OnlineEnsemble (loss='{ALT_LOSS}') | {s['n_rows']:,} | "
                      + " | ".join(_cell(task, s["alt_loss"])) + " | | |")
        for row in s["rows"]:
            label = BASELINES[row["method"]][0] if row["kind"] == "baseline" else row["method"]
            if "error" in row:
                md.append(f"| {label} | | error: {str(row['error'])[:80]} |" + " |" * (3 if reg else 4))
                continue
            e = _main(task, row["ensemble"])
            md.append(f"| {label} | {row['n']:,} | " + " | ".join(_cell(task, row["metrics"]))
                      + f" | {e:.4g} | {'yes' if row['ok'] else '**no**'} |")
        if "speed" in s:
            sp = s["speed"]
            md.append("")
            md.append("Experts run alone on the same chunks, in lockstep with the ensemble (rows/s): " + ", ".join(
                f"{k} {v:,.0f}" for k, v in sp["members_rows_per_s"].items())
                + f"; the ensemble {sp['ensemble_rows_per_s']:,.0f} rows/s = {sp['ratio_to_slowest']:.2f}x its "
                f"slowest expert ({sp['slowest_member']}).")
        md.append("")
    if run.get("drift"):
        md += ["## Drift: an abrupt switch of the best family", "",
               f"`switching_stream`: 8 standard-normal features; rows 0-{SWITCH_ROWS - 1:,} a linear concept, "
               f"then {SWITCH_ROWS:,} rows of a radial concept (a ball in the first three coordinates), then the "
               "linear concept again (classification: 5 % label noise; regression: y = 3 f(x) + unit noise). "
               f"Error (0-1 or absolute) over the {WINDOW:,} rows starting {RECOVERY_ROWS} rows after each switch, "
               "of the default ensemble and of each of its experts run alone (same seeds, same chunks).", ""]
        for d in run["drift"]:
            if "error" in d:
                continue
            names = list(d["segments"][0]["errors"])
            md += [f"### {d['task']}", "", "| switch | rows | " + " | ".join(names) + " |",
                   "|---:|---|" + "---:|" * len(names)]
            for g in d["segments"]:
                md.append(f"| {g['switch']:,} | {g['window'][0]:,}-{g['window'][1]:,} | "
                          + " | ".join(f"{g['errors'][k]:.4f}" for k in names) + " |")
            if all("log_loss" in g for g in d["segments"]):
                md += ["", "Log loss over the same rows:", "", "| switch | rows | " + " | ".join(names) + " |",
                       "|---:|---|" + "---:|" * len(names)]
                for g in d["segments"]:
                    md.append(f"| {g['switch']:,} | {g['window'][0]:,}-{g['window'][1]:,} | "
                              + " | ".join(f"{g['log_loss'][k]:.4f}" for k in names) + " |")
            md.append("")
    if run.get("drift_frozen"):
        md += defaults.drift_report(run["drift_frozen"])
    return "\n".join(md)


def _jsonable(o):
    return defaults._jsonable(o)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2,000-row prefixes; prints the report")
    ap.add_argument("--streams", nargs="+", choices=defaults.STREAM_NAMES)
    ap.add_argument("--baselines", nargs="*", default=None, choices=list(BASELINES),
                    help="subset of baselines (default: all)")
    ap.add_argument("--no-drift", action="store_true")
    ap.add_argument("--output", default=None)
    args = ap.parse_args(argv)
    max_rows = defaults.QUICK_ROWS if args.quick else defaults.MAX_ROWS
    full = not (args.quick or args.streams or args.baselines is not None or args.no_drift)
    output = args.output or (str(RESULTS / "ensemble.md") if full else None)
    command = "python " + shlex.join([os.path.relpath(sys.argv[0], ROOT)] + (sys.argv[1:] if argv is None else argv))
    started = datetime.datetime.now().astimezone()
    load0 = os.getloadavg()
    t0 = time.perf_counter()
    names = list(BASELINES) if args.baselines is None else args.baselines
    try:
        import capymoa  # noqa: F401
    except Exception:
        names = [b for b in names if not b.startswith("moa")]
    log = lambda s: print(s, flush=True)  # noqa: E731
    streams = []
    for sname in args.streams or defaults.STREAM_NAMES:
        st = defaults.load_stream(sname, max_rows)
        log(f"{sname} ({st.task}, {st.X.shape[0]:,} x {st.X.shape[1]})")
        base = baseline_runs(st, names, log=log)
        sk = skonline_runs(st, quick=args.quick, log=log)
        streams.append(evaluate_stream(st, sk, base))
    drift, frozen = [], []
    if not args.no_drift:
        for task in ("classification", "regression"):
            drift.append(drift_switch(task, log=log))
            for scen in ("abrupt", "recurring"):
                frozen.append(defaults.drift_scenario(task, scen, quick=args.quick))
    total = time.perf_counter() - t0
    run = {"max_rows": max_rows, "streams": streams, "drift": drift, "drift_frozen": frozen,
           "load": [load0, os.getloadavg()]}
    text = report(run, command, started, total)
    if output:
        Path(output).write_text(text + "\n")
        payload = _jsonable({"command": command, **run})
        Path(output).with_suffix(".json").write_text(json.dumps(payload, indent=1) + "\n")
        log(f"wrote {output}")
    else:
        print("\n" + text)
    return run


if __name__ == "__main__":
    main()
