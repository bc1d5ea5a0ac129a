"""Scale: every skonline estimator and transformer at defaults on long, wide and sparse streams.

Issue 21's measuring instrument. For each estimator of ``skonline.utils.all_estimators()`` (at its
defaults; an ensemble or a pipeline, which has no defaults, in its first test configuration,
``skonline.utils._test_instances.test_params(cls)[0]``) and each stream:

* ``dense10``, ``dense100``, ``dense1000``: dense float64 rows of 10, 100 and 1,000 features with
  mixed column scales and offsets (features ``z * scale + offset``, z standard normal, scales
  10^U(-1, 1), offsets U(-3, 3) x scale); 1,000,000 rows (200,000 at 1,000 features);
* ``csr``: CSR rows of 2^18 columns with about 40 non-zeros each (column j drawn with a
  probability decreasing in j as in a vocabulary: ``floor(2^18 u^3)``, u uniform, so a few
  thousand columns are frequent and most are rare; values 1 + |N(0, 1)|); 1,000,000 rows;

the rows are fed in chunks of 1,000 (the chunks are generated on the fly from a seed per chunk,
the same for every estimator): classifiers and regressors with ``partial_fit_predict`` (each row
predicted before it is learned; the prequential accuracy or MAE is reported), online transformers
with ``partial_fit_transform`` (or ``partial_fit`` for a supervised one), the frozen maps
(random features, Taylor features) ``fit`` on the first chunk then ``transform``, the expert rules
with loss matrices (the logistic function of the rows: d experts) and PCSP with symmetric K x K
loss matrices (K = floor(sqrt(d)), the first K^2 features, symmetrised, divided by their
Frobenius norm). Targets: classification ``y = 1[f(z) + 0.3 e > 0]`` and regression
``y = 10 + 3 f(z) + e`` with ``f(z) = z . w / sqrt(d) + sin(2 z_0) z_1`` (CSR: ``f = x . w / 40``
with a fixed random w), e standard normal.

Each (estimator, stream) runs in a fresh process: it imports skonline, warms the estimator up on
three chunks of another seed (compilation, cache loads), then feeds the stream, with
``SGDClassifier(max_iter=1, tol=None, shuffle=False).partial_fit`` learning every chunk just
before the estimator (the same chunks, the same moments: load on the shared machine slows both
alike), and reports the time of every tenth of the stream, the peak resident memory (above the
process's after imports) and the metric. A run that exceeds its time cap (``--cap`` seconds) is
stopped and reported as not finished, with the rows it reached.

Verdicts (issue 21, acceptance): per-row cost flat (the last tenth costs at most 1.5 x the
second); kernel estimators (``skonline.kernel_selection``, ``skonline.kernel_ridge`` except the
linear AWV) at least 1/20 of SGD's rows/s at 100 dense features and 1/50 at 1,000 features and on
the CSR stream; the scale-invariant linear learners at least SGD's rows/s.

Usage::

    python benchmarks/scale.py                 # full run -> benchmarks/results/scale.{md,json}
    python benchmarks/scale.py --quick         # short streams (20,000 rows; 10,000 at 1,000 features)
    python benchmarks/scale.py --quick --estimators KernelSelectionClassifier --streams dense100
"""

import argparse
import datetime
import json
import math
import os
import resource
import shlex
import subprocess
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from _common import machine, run_header  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CHUNK = 1000
SEED = 0
#: stream -> (features, rows, quick rows, sparse)
STREAMS = {
    "dense10": (10, 1_000_000, 20_000, False),
    "dense100": (100, 1_000_000, 20_000, False),
    "dense1000": (1000, 200_000, 10_000, False),
    "csr": (2**18, 1_000_000, 20_000, True),
}
CSR_NNZ = 40
WARMUP_CHUNKS = 3
CAP = 300.0
QUICK_CAP = 60.0
FLAT_FACTOR = 1.5
SPEED_RATIO = {"dense100": 1 / 20, "dense1000": 1 / 50, "csr": 1 / 50}
FULL_VS_BARE = 0.7
#: the default online ensembles at 100 dense features: at least this many rows/s, at a flat cost
ENSEMBLE_ROWS_PER_S = 50_000
#: linear kernel-ridge learner: not a kernel estimator for the speed verdict
NOT_KERNEL = {"AWVRegressor"}


# --------------------------------------------------------------------------- streams
def _weights(stream):
    d, _, _, sparse = STREAMS[stream]
    rng = np.random.default_rng([SEED, 7, d])
    w = rng.standard_normal(d)
    if sparse:
        return w, None, None
    scale = 10.0 ** rng.uniform(-1, 1, d)
    offset = rng.uniform(-3, 3, d) * scale
    return w, scale, offset


def make_chunk(stream, c, seed=SEED, n=CHUNK):
    """Chunk ``c`` of ``stream``: ``(X, y_class, y_reg)``, from the seed ``[seed, c, d]``."""
    import scipy.sparse as sp

    d, _, _, sparse = STREAMS[stream]
    w, scale, offset = _weights(stream)
    rng = np.random.default_rng([seed, c, d])
    if sparse:
        cols = np.sort((d * rng.random((n, CSR_NNZ)) ** 3).astype(np.int64), axis=1)
        vals = 1.0 + np.abs(rng.standard_normal((n, CSR_NNZ)))
        X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * CSR_NNZ + 1, CSR_NNZ)), shape=(n, d))
        X.sum_duplicates()
        f = (X @ w) / CSR_NNZ
    else:
        z = rng.standard_normal((n, d))
        X = np.ascontiguousarray(z * scale + offset)
        f = z @ w / math.sqrt(d) + np.sin(2 * z[:, 0]) * z[:, 1]
    e = rng.standard_normal(n)
    return X, (f + 0.3 * e > 0).astype(np.int64), 10.0 + 3.0 * f + e


def stream_rows(stream, quick):
    return STREAMS[stream][2 if quick else 1]


# --------------------------------------------------------------------------- estimators
def kind_of(est):
    """How the stream feeds an estimator: classifier, regressor, rule, matrix, online transformer,
    supervised transformer or frozen map."""
    from sklearn.base import is_classifier, is_regressor

    name = type(est).__name__
    if is_classifier(est):
        return "classifier"
    if is_regressor(est):
        return "regressor"
    if name == "PCSP":
        return "matrix"
    if type(est).__module__.startswith("skonline.experts"):
        return "rule"
    if name == "OnlineKernelSelector":
        return "supervised transformer"
    if hasattr(est, "partial_fit_transform"):
        return "online transformer"
    return "frozen map"


def make_estimator(name):
    from skonline.utils import all_estimators

    cls = dict(all_estimators())[name]
    try:
        return cls(), "defaults"
    except TypeError:
        from skonline.utils._test_instances import test_params

        return cls(**test_params(cls)[0]), f"{test_params(cls)[0]}"


def _feed(kind, est, X, yc, yr, first, classes):
    """Feed one chunk; return the prequential predictions (classifier / regressor) or None."""
    if kind == "classifier":
        return est.partial_fit_predict(X, yc, **({"classes": classes} if first else {}))
    if kind == "regressor":
        return est.partial_fit_predict(X, yr)
    if kind == "rule":
        est.partial_fit(_losses(X))
    elif kind == "matrix":
        est.partial_fit(_matrices(X))
    elif kind == "supervised transformer":
        est.partial_fit(X, yc, **({"classes": classes} if first else {}))
    elif kind == "online transformer":
        est.partial_fit_transform(X)
    else:
        if first:
            est.fit(X)
        est.transform(X)
    return None


def _losses(X):
    """The expert rules' losses in [0, 1]: the logistic function of the rows (d experts)."""
    import scipy.sparse as sp

    if sp.issparse(X):
        X = X.copy()
        X.data = 1.0 / (1.0 + np.exp(-X.data))
        return X
    return 1.0 / (1.0 + np.exp(-np.clip(X, -50, 50)))


def _matrices(X):
    """PCSP's symmetric K x K losses (K = floor(sqrt(d))), Frobenius norm 1 (spectral norm <= 1)."""
    import scipy.sparse as sp

    if sp.issparse(X):
        return X  # rejected (or not) as it comes
    K = int(math.isqrt(X.shape[1]))
    A = X[:, : K * K].reshape(-1, K, K)
    A = 0.5 * (A + A.transpose(0, 2, 1))
    A /= np.maximum(np.linalg.norm(A, axis=(1, 2)), 1e-300)[:, None, None]
    return A.reshape(-1, K * K)


def _rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _current_rss_mb():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return _rss_mb()


def _bare_rank_one_update():
    """A bare compiled Sherman-Morrison update of a (d + 1) x (d + 1) matrix per row (u = P z as a
    sum of the rows of P, then P -= u u' / (1 + z'u)): what Algorithm 2's update of its
    pseudo-inverse competes with."""
    from skonline.utils._jit import njit

    @njit
    def bare(X, P, u, z):
        n, d = X.shape
        D = P.shape[0]
        for i in range(n):
            for j in range(d):
                z[j] = X[i, j]
            z[D - 1] = 1.0
            for a in range(D):
                u[a] = 0.0
            for b in range(D):
                zb = z[b]
                for a in range(D):
                    u[a] += zb * P[b, a]
            beta = 1.0
            for a in range(D):
                beta += z[a] * u[a]
            ib = 1.0 / beta
            for a in range(D):
                ua = u[a] * ib
                for b in range(D):
                    P[a, b] -= ua * u[b]

    return bare


def child(name, stream, rows):
    """One (estimator, stream) run; prints JSON lines (progress, each tenth, then the result).

    The SGD reference learns every chunk just before the estimator does, in lockstep (and, for
    ScaleInvariant* with full invariance, a bare rank-one update of a matrix of the same size does
    too), so that a change of load on the shared machine slows both alike: the ratio of their
    times over the same chunks is what the verdicts read.
    """
    warnings.simplefilter("ignore")
    import scipy.sparse as sp
    from sklearn.linear_model import SGDClassifier

    def emit(**kw):
        print(json.dumps(kw), flush=True)

    rss0 = _current_rss_mb()
    classes = np.array([0, 1])
    sgd = SGDClassifier(max_iter=1, tol=None, shuffle=False)
    est, config = make_estimator(name)
    kind = kind_of(est)
    from skonline.utils._threads import available_cpus

    emit(kind=kind, config=config, cpus=available_cpus())
    try:  # warm-up: compilation and cache loads, on chunks of another seed
        warm, _ = make_estimator(name)
        for c in range(WARMUP_CHUNKS):
            X, yc, yr = make_chunk(stream, c, seed=SEED + 1)
            _feed(kind, warm, X, yc, yr, c == 0, classes)
            if c == 0:
                SGDClassifier(max_iter=1, tol=None, shuffle=False).partial_fit(X, yc, classes=classes)
        del warm
    except Exception as exc:  # noqa: BLE001 - reported, the run stops here
        sparse = sp.issparse(make_chunk(stream, 0, n=2)[0])
        emit(error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}", rejects_csr=sparse,
             done=False)
        return
    rss1 = _current_rss_mb()
    tenth = rows // 10
    correct = sgd_correct = 0
    abs_err = 0.0
    elapsed = sgd_elapsed = 0.0
    t_tenth, sgd_tenth, bare_tenth = [], [], []
    done = 0
    bare = P = None
    try:
        for c in range(rows // CHUNK):
            X, yc, yr = make_chunk(stream, c)
            if c:
                sgd_correct += int(np.sum(sgd.predict(X) == yc))
            t = time.perf_counter()
            sgd.partial_fit(X, yc, classes=classes)
            dt = time.perf_counter() - t
            sgd_elapsed += dt
            sgd_tenth.append(dt)
            t = time.perf_counter()
            pred = _feed(kind, est, X, yc, yr, c == 0, classes)
            dt = time.perf_counter() - t
            elapsed += dt
            t_tenth.append(dt)
            if bare is None and getattr(est, "invariance_", None) == "full":
                bare, D = _bare_rank_one_update(), est.pinv_.shape[0]
                P, u, z = np.eye(D), np.zeros(D), np.zeros(D)
                Xw = X / np.maximum(np.abs(X).max(axis=0), 1e-300)  # a well-conditioned matrix
                bare(Xw[:5], np.eye(D), u, z)  # compiled before it is timed
            if bare is not None:
                Xw = X / np.maximum(np.abs(X).max(axis=0), 1e-300)
                t = time.perf_counter()
                bare(Xw, P, u, z)
                bare_tenth.append(time.perf_counter() - t)
            done += X.shape[0]
            emit(r=done, e=elapsed, s=sgd_elapsed)  # progress (what a run stopped at its cap reached)
            if pred is not None:
                if kind == "classifier":
                    correct += int(np.sum(np.asarray(pred) == yc))
                else:
                    abs_err += float(np.sum(np.abs(np.asarray(pred, dtype=float) - yr)))
            if done % tenth == 0:
                extra = {"bare_p10_chunk_seconds": float(np.percentile(bare_tenth, 10))} if bare_tenth else {}
                emit(tenth=done // tenth, rows=done, seconds=float(np.sum(t_tenth)),
                     median_chunk_seconds=float(np.median(t_tenth)),
                     p10_chunk_seconds=float(np.percentile(t_tenth, 10)),
                     sgd_seconds=float(np.sum(sgd_tenth)), rss_mb=_rss_mb() - rss0, **extra)
                t_tenth, sgd_tenth, bare_tenth = [], [], []
    except Exception as exc:  # noqa: BLE001
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" [{Path(tb[-1].filename).name}:{tb[-1].lineno}]" if tb else ""
        emit(error=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}{where}", rows=done, done=False)
        return
    metric = None
    if kind == "classifier":
        metric = {"accuracy": correct / done}
    elif kind == "regressor":
        metric = {"mae": abs_err / done}
    emit(done=True, rows=done, seconds=elapsed, rows_per_s=done / elapsed, metric=metric,
         sgd_rows_per_s=done / sgd_elapsed, sgd_accuracy=sgd_correct / max(done - CHUNK, 1), sgd_rows=done,
         peak_rss_mb=_rss_mb() - rss0, rss_after_warmup_mb=rss1 - rss0,
         invariance=getattr(est, "invariance_", None))


def run_one(name, stream, rows, cap):
    """Run the child process with a time cap; collect its JSON lines."""
    argv = [sys.executable, __file__, "--child", name, stream, str(rows)]
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        out, err = proc.communicate(timeout=cap)
        finished_in_cap = True
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        finished_in_cap = False
    rec = {"estimator": name, "stream": stream, "rows_total": rows, "tenths": [], "wall_seconds":
           time.perf_counter() - t0}
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "tenth" in msg:
            rec["tenths"].append(msg)
        elif "r" in msg:
            rec["rows_reached"] = msg["r"]
            rec["partial_seconds"], rec["partial_sgd_seconds"] = msg["e"], msg["s"]
        else:
            rec.update(msg)
    if not finished_in_cap:
        rec["done"] = False
        rec["timeout"] = True
        rec["rows"] = rec.get("rows_reached", 0)
    elif "done" not in rec:
        rec["done"] = False
        rec["error"] = rec.get("error") or ("crashed: " + err.strip().splitlines()[-1][:300] if err.strip()
                                            else "crashed")
    return rec


# --------------------------------------------------------------------------- verdicts and report
#: deliberate refusals: an estimator that cannot take a stream by design says so at its first chunk,
#: with a clear error, before anything changes (reported apart, not as failures): the rules and PCSP
#: take loss matrices, not feature rows (the CSR stream would be 2^18 experts); the encoders take
#: tables of raw columns (as scikit-learn's); and what a stream would make too large to allocate
REFUSALS = (
    (r"^TypeError: Sparse data was passed for X, but dense data is required", "a loss matrix is dense"),
    (r"^TypeError: Sparse data was passed to Online\w+, but dense data is required \(a table of raw columns\)",
     "a table of raw columns is dense"),
    (r"^MemoryError: \w+ keeps an m x m matrix .* too large for this machine", "an m x m matrix too large"),
    (r"^ValueError: Taylor features of degree \d+ on [\d,]+ features: [\d,]+ output features",
     "too many Taylor features"),
    (r"^TypeError: OnlineMinMaxScaler does not take sparse rows of more than", "dense output too large"),
)


def refusal(rec):
    """The reason of a deliberate refusal (:data:`REFUSALS`), or None."""
    import re

    err = rec.get("error") or ""
    return next((why for pat, why in REFUSALS if re.match(pat, err)), None) if not rec.get("done") else None


def kernel_estimator(name, module):
    return name not in NOT_KERNEL and (module.startswith("skonline.kernel_selection")
                                       or module.startswith("skonline.kernel_ridge"))


def analyse(rec):
    """Derived figures of one record: per-row costs per tenth, ratios, verdicts."""
    t = rec["tenths"]
    per = [x["median_chunk_seconds"] / CHUNK for x in t]
    low = [x["p10_chunk_seconds"] / CHUNK for x in t]
    a = {"us_per_row": [1e6 * p for p in per], "us_per_row_p10": [1e6 * p for p in low]}
    if rec.get("done"):
        a["ratio_sgd"] = rec["rows_per_s"] / rec["sgd_rows_per_s"]
        a["flat"] = low[-1] / low[1] if len(low) >= 10 else None
        if t and "bare_p10_chunk_seconds" in t[-1]:  # full invariance: the last tenth, chunk for chunk
            a["ratio_bare_rank_one"] = t[-1]["bare_p10_chunk_seconds"] / t[-1]["p10_chunk_seconds"]
    elif rec.get("partial_seconds"):  # stopped at the cap: the time ratio over the chunks done
        a["ratio_sgd"] = rec["partial_sgd_seconds"] / rec["partial_seconds"]
    return a


def _stream_kind(s):
    return "CSR columns, about 40 non-zeros per row" if STREAMS[s][3] else "dense features"


def _fmt(v, f=".3g"):
    return "-" if v is None else format(v, f)


def _ensemble_verdict(records):
    """The default online ensembles at 100 dense features: rows/s against ENSEMBLE_ROWS_PER_S, at a
    flat cost (their experts learn side by side in threads: ``n_jobs=None``, one per CPU)."""
    rs = [r for r in records if r["estimator"].startswith("OnlineEnsemble") and r["stream"] == "dense100"]
    if not rs:
        return "- **Default ensembles at 100 dense features**: not run."
    parts = []
    for r in rs:
        a = r["analysis"]
        good = bool(r.get("done") and (r.get("rows_per_s") or 0) >= ENSEMBLE_ROWS_PER_S
                    and a.get("flat") is not None and a["flat"] <= FLAT_FACTOR)
        parts.append(f"{r['estimator']} {_fmt(r.get('rows_per_s'), ',.0f')} rows/s "
                     f"(end/2nd {_fmt(a.get('flat'), '.2f')}): {'pass' if good else 'FAIL'}")
    return (f"- **Default ensembles at 100 dense features** (at least {ENSEMBLE_ROWS_PER_S:,} rows/s at a flat "
            f"cost; their experts learn side by side in threads, one per CPU available: "
            f"{'/'.join(sorted({str(r.get('cpus', '?')) for r in rs}))} in these runs): "
            + "; ".join(parts) + ".")


def _ensemble_vs_slowest(records):
    """The default ensembles against their slowest expert run alone on the same stream (each row of
    this file at defaults): the ratio of their speeds, each as its ratio to SGD on the same chunks
    (robust to the machine's speed between runs), against 0.5."""
    from skonline.experts._ensemble import default_estimators

    by = {(r["estimator"], r["stream"]): r for r in records if r.get("done")}
    parts, n_ok = [], 0
    for r in records:
        if not (r["estimator"].startswith("OnlineEnsemble") and r.get("done")):
            continue
        task = "classifier" if "Classifier" in r["estimator"] else "regressor"
        names = [type(e).__name__ for _, e in default_estimators(task, n_features=STREAMS[r["stream"]][0])]
        alone = {n: by[(n, r["stream"])]["analysis"].get("ratio_sgd") for n in names if (n, r["stream"]) in by}
        if len(alone) < len(names) or None in alone.values():
            continue
        slowest = min(alone, key=alone.get)
        ratio = r["analysis"]["ratio_sgd"] / alone[slowest]
        n_ok += ratio >= 0.5
        parts.append(f"{r['estimator']} on {r['stream']} {ratio:.2f}x {slowest}")
    if not parts:
        return "- **Default ensembles against their slowest expert**: not run."
    return (f"- **Default ensembles against their slowest expert** (rows/s over the slowest expert's alone on the "
            f"same stream and chunks of {CHUNK:,}, each as its ratio to SGD; target at least 0.5): {n_ok} of "
            f"{len(parts)} pass: " + "; ".join(parts) + ".")


def report(records, command, started, total, quick, cap, header=None):
    from skonline.utils import all_estimators

    modules = {n: c.__module__ for n, c in all_estimators()}
    md = ["# Scale: every estimator at defaults on long, wide and sparse streams", "",
          f"- Command (from the repository root): {command}",
          f"- Date: {started:%Y-%m-%d %H:%M %Z}; total wall time {total / 60:.1f} min",
          f"- {header or run_header()}",
          f"- Machine: {machine()}",
          "- Streams: " + "; ".join(f"`{s}` {STREAMS[s][0]:,} {_stream_kind(s)}, {stream_rows(s, quick):,} rows"
                                    for s in STREAMS),
          f"- Protocol: chunks of {CHUNK:,} rows, generated from a seed per chunk (the same for every "
          "estimator); each (estimator, stream) in a fresh process, after a warm-up on "
          f"{WARMUP_CHUNKS} chunks of another seed; time cap {cap:g} s per run (not finished: the "
          "rows reached). See the module docstring of `benchmarks/scale.py` for the data and what "
          "each kind of estimator is fed.",
          "- `x SGD`: `SGDClassifier(max_iter=1, tol=None, shuffle=False).partial_fit`'s time over "
          "the stream divided by the estimator's: SGD learns every chunk just before the estimator, in "
          "the same process, so a change of load slows both alike (a run stopped at its cap: over the "
          "chunks it finished). Full invariance (ScaleInvariant* up to 200 columns): a bare compiled "
          "rank-one update of a matrix of the same size runs on every chunk too, and the verdict "
          "compares their costs in the last tenth. `us/row` at the start, middle "
          "and end: the 1st, 5th and 10th tenths of the stream, each from the median time of its "
          "chunks (robust to a moment of load on the shared machine). `end/2nd`: the last tenth's cost "
          "per row over the second's, each from the 10th percentile of its chunk times (what a chunk "
          "costs when the shared machine does not slow it down; load only adds time). Peak memory: "
          "the process's peak resident set above what it used after imports (the warm-up, SGD "
          "and the stream included).", ""]
    # verdicts
    flat_fail, speed_fail, speed_n, lin_fail, lin_n, flat_n = [], [], 0, [], 0, 0
    refused = []
    for r in records:
        a = r["analysis"]
        mod = modules.get(r["estimator"], "")
        why = refusal(r)
        if why:
            refused.append(f"{r['estimator']} on {r['stream']} ({why})")
            continue
        if r.get("done") and a.get("flat") is not None:  # the cost: the 10th percentile of a tenth's chunks
            flat_n += 1
            if a["flat"] > FLAT_FACTOR:
                flat_fail.append(f"{r['estimator']} on {r['stream']} ({a['flat']:.2f}x)")
        elif not r.get("done"):
            flat_n += 1
            flat_fail.append(f"{r['estimator']} on {r['stream']} (" + (
                "not finished" if r.get("timeout") else "error") + ")")
        if kernel_estimator(r["estimator"], mod) and r["stream"] in SPEED_RATIO:
            speed_n += 1
            need = SPEED_RATIO[r["stream"]]
            ok = r.get("done") and a.get("ratio_sgd") is not None and a["ratio_sgd"] >= need
            if not ok:
                ratio = a.get("ratio_sgd")
                if ratio is None:
                    why = "not finished" if r.get("timeout") else "error"
                elif r.get("done"):
                    why = f"{ratio:.3f}x < {need:.3f}x"
                else:  # stopped at the cap: the ratio over the chunks it finished
                    why = (f"{ratio:.3f}x over the rows reached, {'above' if ratio >= need else 'below'} "
                           f"{need:.3f}x; " + ("not finished" if r.get("timeout") else "error"))
                speed_fail.append(f"{r['estimator']} on {r['stream']} ({why})")
        if r["estimator"].startswith("ScaleInvariant"):
            lin_n += 1
            if r.get("invariance") == "full":
                ok = a.get("ratio_bare_rank_one", 0) >= FULL_VS_BARE
                if not ok:
                    lin_fail.append(f"{r['estimator']} on {r['stream']} ('full': "
                                    f"{_fmt(a.get('ratio_bare_rank_one'), '.2f')}x the bare rank-one update)")
            elif not (r.get("done") and a.get("ratio_sgd", 0) >= 1.0):
                ratio = _fmt(a.get("ratio_sgd"), ".2f")
                lin_fail.append(f"{r['estimator']} on {r['stream']} ({ratio}x SGD" + (
                    "" if r.get("done") else " over the rows reached; not finished") + ")")
    md += ["## Verdicts", "",
           f"- **Flat per-row cost** (the last tenth of the stream at most {FLAT_FACTOR} x the second, "
           f"every run finished): {flat_n - len(flat_fail)} of {flat_n} (estimator, stream) runs pass"
           + ("." if not flat_fail else "; fail: " + "; ".join(flat_fail) + "."),
           f"- **Refused by design** (at the first chunk, with a clear error, before anything changes; "
           f"the error is in the stream's table): {len(refused)} runs"
           + ("." if not refused else ": " + "; ".join(refused) + "."),
           f"- **Speed of the kernel estimators** (at least 1/20 of SGD's rows/s at 100 dense features, "
           f"1/50 at 1,000 features and on the CSR stream): {speed_n - len(speed_fail)} of {speed_n} pass"
           + ("." if not speed_fail else "; fail: " + "; ".join(speed_fail) + "."),
           f"- **Linear learners** (ScaleInvariant* at defaults: with coordinate invariance at least SGD's "
           f"rows/s on the same 1,000-row chunks; with full invariance, the default up to 200 columns, at "
           f"least {FULL_VS_BARE} x the speed of a bare compiled rank-one (Sherman-Morrison) update of its "
           f"(d + 1) x (d + 1) matrix on the same chunks, in the last tenth of the stream; the estimator's "
           f"time includes what each partial_fit call costs besides the pass: validation, rollback "
           f"snapshot, label encoding): "
           f"{lin_n - len(lin_fail)} of {lin_n} pass"
           + ("." if not lin_fail else "; fail: " + "; ".join(lin_fail) + "."),
           _ensemble_verdict(records),
           _ensemble_vs_slowest(records),
           ""]
    for s in STREAMS:
        rs = [r for r in records if r["stream"] == s]
        if not rs:
            continue
        d, _, _, sparse = STREAMS[s]
        sgd = [r["sgd_rows_per_s"] for r in rs if "sgd_rows_per_s" in r]
        acc = [r["sgd_accuracy"] for r in rs if "sgd_accuracy" in r]
        n_acc = max((r.get("sgd_rows", 0) for r in rs), default=0)
        md += [f"## {s}: {d:,} {'CSR columns' if sparse else 'dense features'}, {stream_rows(s, quick):,} rows", "",
               (f"SGD reference (median over the finished runs): {np.median(sgd):,.0f} rows/s; its "
                f"prequential accuracy over the stream ({n_acc:,} rows, unscaled features): {np.median(acc):.4f}.")
               if sgd else "", "",
               "| estimator | kind | rows | rows/s | x SGD | us/row start | middle | end | end/2nd | peak MB "
               "| accuracy / MAE |",
               "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in rs:
            a = r["analysis"]
            us = a["us_per_row"]
            status = ""
            if not r.get("done"):
                status = (f"not finished in the cap ({r.get('rows', 0):,} rows)" if r.get("timeout")
                          else ("refuses by design: " if refusal(r) else "rejects CSR: " if r.get("rejects_csr")
                                else "error: ") + r.get("error", "")[:140])
            metric = r.get("metric") or {}
            mtxt = (f"{metric['accuracy']:.4f}" if "accuracy" in metric else
                    f"{metric['mae']:.4g} (MAE)" if "mae" in metric else "")
            if r.get("invariance"):
                mtxt += f" ({r['invariance']}" + (f"; {a['ratio_bare_rank_one']:.2f} x bare rank-one"
                                                   if "ratio_bare_rank_one" in a else "") + ")"
            mid = us[4] if len(us) > 4 else None
            md.append(
                f"| {r['estimator']} | {r.get('kind', '')} | {r.get('rows', 0):,} | "
                f"{_fmt(r.get('rows_per_s'), ',.0f')} | {_fmt(a.get('ratio_sgd'), '.3f')} | "
                f"{_fmt(us[0] if us else None, '.3g')} | {_fmt(mid, '.3g')} | "
                f"{_fmt(us[-1] if len(us) == 10 else None, '.3g')} | {_fmt(a.get('flat'), '.2f')} | "
                f"{_fmt(r.get('peak_rss_mb'), '.0f')} | {mtxt or status} |")
        md.append("")
    return "\n".join(md)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="short streams; prints the report unless --output")
    ap.add_argument("--estimators", nargs="+", metavar="NAME")
    ap.add_argument("--streams", nargs="+", choices=list(STREAMS))
    ap.add_argument("--cap", type=float, default=None, help=f"seconds per run (default {CAP:g}, --quick {QUICK_CAP:g})")
    ap.add_argument("--output", default=None, help="markdown file (and .json next to it); default "
                    "benchmarks/results/scale.md for a full run of everything")
    ap.add_argument("--update", action="store_true",
                    help="rerun the given estimators / streams and merge them into the existing results "
                         "(--output, default benchmarks/results/scale.md): the other runs are kept")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the markdown from the json of --output (default benchmarks/results/scale.md) "
                         "without running anything (after a change to the report or the verdicts)")
    ap.add_argument("--child", nargs=3, metavar=("NAME", "STREAM", "ROWS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    if args.report_only:
        out = Path(args.output or RESULTS / "scale.md")
        previous = json.loads(out.with_suffix(".json").read_text())
        for r in previous["records"]:
            r["analysis"] = analyse(r)
        started = datetime.datetime.fromisoformat(previous["date"])
        commands = previous.get("commands", [previous["command"]])
        header = previous.get("header")  # the run's commit and load (older json: from its markdown)
        if header is None and out.exists():
            header = next((ln[2:] for ln in out.read_text().splitlines() if ln.startswith("- Commit:")), None)
        out.write_text(report(previous["records"], " then ".join(f"`{c}`" for c in commands), started,
                              previous["total_seconds"], previous["quick"], previous["cap_seconds"], header) + "\n")
        print(f"wrote {out}")
        return 0
    from skonline.utils import all_estimators

    names = [n for n, _ in all_estimators()]
    if args.estimators:
        unknown = sorted(set(args.estimators) - set(names))
        if unknown:
            ap.error(f"unknown estimators {unknown}")
        names = [n for n in names if n in args.estimators]
    streams = args.streams or list(STREAMS)
    cap = args.cap if args.cap is not None else (QUICK_CAP if args.quick else CAP)
    full_run = not (args.quick or args.estimators or args.streams or args.cap)
    output = args.output or (str(RESULTS / "scale.md") if full_run or args.update else None)
    previous = None
    if args.update:
        previous = json.loads(Path(output).with_suffix(".json").read_text())
        if previous["quick"] != args.quick:
            ap.error("--update merges runs of the same stream lengths (--quick or not) only")
    command = "python " + shlex.join([os.path.relpath(__file__, ROOT)] + (sys.argv[1:] if argv is None else argv))
    started = datetime.datetime.now().astimezone()
    t0 = time.perf_counter()
    records = []
    for s in streams:
        rows = stream_rows(s, args.quick)
        for name in names:
            rec = run_one(name, s, rows, cap)
            rec["analysis"] = analyse(rec)
            records.append(rec)
            a = rec["analysis"]
            state = "ok" if rec.get("done") else ("TIMEOUT" if rec.get("timeout") else "ERROR")
            print(f"{s:10s} {name:28s} {state:7s} rows {rec.get('rows', 0):>9,} "
                  f"{_fmt(rec.get('rows_per_s'), ',.0f'):>10s} rows/s  x SGD {_fmt(a.get('ratio_sgd'), '.3f'):>7s}  "
                  f"end/2nd {_fmt(a.get('flat'), '.2f'):>5s}  peak {_fmt(rec.get('peak_rss_mb'), '.0f'):>5s} MB  "
                  f"{rec.get('metric') or rec.get('error', '')}", flush=True)
    total = time.perf_counter() - t0
    commands = [command]
    if previous is not None:  # merge: the new runs replace the old ones of the same (estimator, stream)
        new_keys = {(r["estimator"], r["stream"]) for r in records}
        order = [(r["estimator"], r["stream"]) for r in previous["records"]]
        merged = {(r["estimator"], r["stream"]): r for r in previous["records"]}
        merged.update({(r["estimator"], r["stream"]): r for r in records})
        order += [k for k in new_keys if k not in order]
        records = [merged[k] for k in order]
        for r in records:
            r["analysis"] = analyse(r)
        commands = previous.get("commands", [previous["command"]]) + [command]
        total += previous["total_seconds"]
        cap = previous["cap_seconds"] if previous["cap_seconds"] == cap else cap
    header = run_header()
    text = report(records, " then ".join(f"`{c}`" for c in commands), started, total, args.quick, cap, header)
    if output:
        out = Path(output)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
        payload = {"command": command, "commands": commands, "date": started.isoformat(), "total_seconds": total,
                   "machine": machine(), "header": header,
                   "quick": args.quick, "cap_seconds": cap, "chunk": CHUNK,
                   "streams": {s: {"features": STREAMS[s][0], "rows": stream_rows(s, args.quick),
                                   "sparse": STREAMS[s][3]} for s in STREAMS},
                   "records": records}
        out.with_suffix(".json").write_text(json.dumps(payload, indent=1) + "\n")
        print(f"wrote {out} and {out.with_suffix('.json')}")
    else:
        print("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
