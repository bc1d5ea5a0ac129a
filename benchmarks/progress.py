"""Progress on a long fit: every estimator that takes ``verbose`` fits a synthetic stream with
``verbose=1`` (issue 23: "every estimator accepts ``verbose`` and prints progress on a 1M-row fit").

For each estimator (``skonline.utils.all_estimators`` with an integer ``verbose``; at its defaults,
or for a meta-estimator without defaults its first test configuration), the script builds the
estimator's own synthetic stream (``skonline.utils._test_instances.test_stream``: Gaussian features
with a linear target for the learners, uniform losses of ``--features`` experts for the
aggregation rules, small integer categories for the encoders) of ``--rows`` rows and
``--features`` columns, and times ``fit(..., verbose=1)``: one progress line per 100,000 rows
(GroupDRO's pooled fit: one per epoch). GroupDRO gets 4 groups (the signs of the first two
features). Encoders whose output grows with the columns (one-hot, hashing, the column
transformer) get ``--table-features`` columns, so that the output fits in memory.

A default estimator too slow for ``--rows`` rows within ``--budget`` seconds runs on fewer rows:
a warm-up fit (compilation) on 2,000 rows, then a timed fit on 20,000 rows, gives its rate; the
rows are cut to what that rate fits in the budget (a multiple of 100,000, at least 100,000), and
the results table says so. Progress lines go to standard output as they come; the table goes to
``benchmarks/results/progress.md`` (and ``.json``). A run with ``--estimators`` updates those
estimators' rows and keeps the others (each row names its run). The scalers' and the imputer's
synthetic streams have 4 columns (in their own units).

    python benchmarks/progress.py [--rows 1000000] [--features 100] [--budget 15]
                                  [--estimators NAME ...]
"""

import argparse
import contextlib
import gc
import inspect
import io
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from _common import run_header

RESULTS = Path(__file__).resolve().parent / "results"
WIDE_OUTPUT = {"OnlineOneHotEncoder", "OnlineHashingEncoder", "OnlineColumnTransformer"}


class _Tee(io.TextIOBase):
    """Standard output that also keeps the lines written to it."""

    def __init__(self, out):
        self.out, self.lines = out, []

    def write(self, s):
        self.out.write(s)
        self.lines.extend(line for line in s.splitlines() if line.strip())
        return len(s)

    def flush(self):
        self.out.flush()


def _estimators(names):
    from skonline.utils import _test_instances as ti
    from skonline.utils import all_estimators

    out = []
    for name, cls in all_estimators():
        if names and name not in names:
            continue
        if "verbose" not in cls._get_param_names():
            continue
        try:
            est = cls()
        except TypeError:  # a meta-estimator without defaults
            est = cls(**ti.test_params(cls)[0])
        if isinstance(est.get_params(deep=False)["verbose"], bool):  # the pipeline: scikit-learn's verbose
            continue
        out.append((name, est))
    return out


_STREAMS = {}


def _stream(est, rows, features):
    """The estimator's own synthetic stream, shared by estimators with the same stream function."""
    from skonline.utils import _test_instances as ti

    key = (ti.test_stream_key(est), rows, features)
    if key not in _STREAMS:
        _STREAMS.clear()
        gc.collect()
        X, y, kw = ti.test_stream(est, np.random.default_rng(0), n_samples=rows, n_features=features)
        _STREAMS[key] = (X, y, kw)
    X, y, kw = _STREAMS[key]
    if "groups" in inspect.signature(type(est).fit).parameters:
        kw = dict(kw, groups=(X[:, 0] > 0).astype(int) + 2 * (X[:, 1] > 0))
    return X, y, kw


def _fit(est, X, y, kw, rows, verbose):
    sl = slice(0, rows)
    kw = {k: (v[sl] if k == "groups" else v) for k, v in kw.items()}
    t0 = time.perf_counter()
    est.set_params(verbose=verbose).fit(X[sl], None if y is None else y[sl], **kw)
    return time.perf_counter() - t0


def main(argv=None):
    import warnings

    from sklearn.base import clone

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--table-features", type=int, default=10)
    parser.add_argument("--budget", type=float, default=15.0, help="seconds per estimator (about)")
    parser.add_argument("--estimators", nargs="*", default=None)
    args = parser.parse_args(argv)
    rows_rows = []
    started = time.perf_counter()
    for name, est in _estimators(args.estimators):
        features = args.table_features if name in WIDE_OUTPUT else args.features
        try:
            X, y, kw = _stream(est, args.rows, features)
        except ValueError:  # a stream of 4 columns in their own units (the scalers, the imputer)
            features = 4
        X, y, kw = _stream(est, args.rows, features)
        features = X.shape[1]  # PCSP's stream: 3 x 3 loss matrices, whatever is asked
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _fit(clone(est), X, y, kw, 2_000, 0)  # compile
            warm = _fit(clone(est), X, y, kw, 20_000, 0)
            rate = 20_000 / warm
            rows = args.rows
            if rows / rate > args.budget:
                rows = max(100_000, int(args.budget * rate) // 100_000 * 100_000)
                rows = min(rows, args.rows)
            print(f"== {name}: {rows:,} rows x {features} features"
                  + (f" (not {args.rows:,}: {args.rows / rate:,.0f} s estimated at {rate:,.0f} rows/s)"
                     if rows < args.rows else ""), flush=True)
            tee = _Tee(sys.stdout)
            with contextlib.redirect_stdout(tee):
                seconds = _fit(clone(est), X, y, kw, rows, 1)
        rows_rows.append((name, rows, features, seconds, len(tee.lines), tee.lines[-1] if tee.lines else ""))
    total = time.perf_counter() - started

    cmd = "python benchmarks/progress.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    cmd = cmd.strip()
    # a run with --estimators updates their rows of the results (the others keep theirs)
    store = RESULTS / "progress.json"
    results = json.loads(store.read_text()) if args.estimators and store.exists() else {"runs": [], "rows": {}}
    if results.get("target_rows") not in (None, args.rows):
        results = {"runs": [], "rows": {}}
    results["target_rows"] = args.rows
    results["runs"].append({"command": cmd, "header": run_header(), "seconds": round(total, 1)})
    for name, rows, features, seconds, n_lines, last in rows_rows:
        results["rows"][name] = {"rows": rows, "features": features, "seconds": round(seconds, 2),
                                 "lines": n_lines, "last": last, "run": len(results["runs"])}
    RESULTS.mkdir(exist_ok=True)
    store.write_text(json.dumps(results, indent=1) + "\n")
    table = results["rows"]
    short = [n for n, r in table.items() if r["rows"] < args.rows]
    lines = [
        "# Progress on a long fit (`verbose=1`)",
        "",
        *[f"Run {k}: `{r['command']}` ({r['seconds']:.0f} s). {r['header']}" for k, r in
          enumerate(results["runs"], 1)],
        "",
        f"Every estimator that takes `verbose`, at its defaults, fits its own synthetic stream of "
        f"{args.rows:,} rows with `verbose=1` (about {args.budget:g} s each at most: slower ones "
        f"run on fewer rows, marked below). {sum(1 for r in table.values() if r['lines'] > 0)} of "
        f"{len(table)} printed progress; {len(short)} ran on fewer rows than {args.rows:,}"
        + (f" ({', '.join(sorted(short))})" if short else "") + ".",
        "",
        "| estimator | rows | features | fit seconds | progress lines | last line | run |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    for name in sorted(table):
        r = table[name]
        mark = "" if r["rows"] == args.rows else " (fewer)"
        last = r["last"].replace("|", "\\|")  # a pipe inside a table cell
        lines.append(f"| {name} | {r['rows']:,}{mark} | {r['features']} | {r['seconds']:.1f} | {r['lines']} | "
                     f"`{last}` | {r['run']} |")
    (RESULTS / "progress.md").write_text("\n".join(lines) + "\n")
    print(lines[-len(table) - 4])

if __name__ == "__main__":
    main()
