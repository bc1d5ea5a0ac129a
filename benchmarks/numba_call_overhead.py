"""Cost of calling a numba helper with array arguments once per round, vs the same code written
out in the row loop: the measurement behind skonline/experts/_rules_core.py calling the one
clipped-simplex projection (``utils._projections.clip_project_max``, ``inline="always"``) from
passes compiled with ``njit(borrowed=True)``.

Four versions of the same ClippedHedge pass (exponential step, then the KL projection onto the
clipped simplex, every round), identical results (checked):

* ``written out``: the projection's code in the row loop (as ``_rules_core`` had it before);
* ``inline helper``: a call to ``clip_project_max`` (inlined), in a pass compiled as usual: numba
  counts a reference to every array argument of the inlined call, every round;
* ``inline, borrowed``: the same pass compiled with ``skonline.utils._jit.njit(borrowed=True)``
  (no reference counting), as the experts' passes are;
* ``plain call``: the helper compiled without ``inline``, a real call per round.

Reported: nanoseconds per round (best of ``--repeats``, interleaved so that a change of load hits
every version alike) and the extra cost of each call form over the written-out loop, at K = 10
(the usual ensemble size) and K = 130 (where the projection's sort fallback runs). The verdict
line is computed from these numbers. Results: benchmarks/results/numba_call_overhead.md.

    python benchmarks/numba_call_overhead.py [--rows 200000] [--repeats 7] [--quick]
"""

import argparse
import math
import shlex
import sys
import time
from pathlib import Path

import numba
import numpy as np

from skonline.utils._jit import njit
from skonline.utils._math import EXP_MIN
from skonline.utils._projections import (
    _MAX_FIXED_POINT_PASSES,
    clip_project,
    clip_project_max,
    exp_nonpos,
    sorted_lambda,
)

from _common import run_header

RESULTS = Path(__file__).resolve().parent / "results" / "numba_call_overhead.md"
NEGLIGIBLE = 0.05  # an extra cost below 5 % of a round is within the run-to-run noise

# the same code, a real call (not cached: skonline caches that function)
plain_project = numba.njit(clip_project.py_func)


@numba.njit(cache=True)
def pass_written_out(L, eta, floor, w, logw, lp, d, p, sb):
    n, K = L.shape
    log_floor = math.log(floor)
    acc = 0.0
    for r in range(n):
        m = -math.inf
        for i in range(K):
            acc += w[i] * L[r, i]
            v = logw[i] - eta * L[r, i]
            lp[i] = v
            m = v if v > m else m
        s = 0.0
        for i in range(K):
            di = lp[i] - m
            d[i] = di
            pi = exp_nonpos(di) if di > EXP_MIN else 0.0
            p[i] = pi
            s += pi
        for i in range(K):
            sb[i] = 0.0
        lam = 1.0 / s
        converged = False
        for _ in range(_MAX_FIXED_POINT_PASSES):
            changed = False
            n_clip = 0
            s_free = 0.0
            for i in range(K):
                if sb[i] == 0.0 and p[i] < 1.0 and lam * p[i] < floor:
                    sb[i] = 1.0
                    changed = True
                if sb[i] == 0.0:
                    s_free += p[i]
                else:
                    n_clip += 1
            if not changed:
                converged = True
                break
            lam = (1.0 - n_clip * floor) / s_free
        if not converged:
            lam = sorted_lambda(p, K, floor, sb)
        log_lam = math.log(lam)
        for i in range(K):
            v = lam * p[i]
            if v > floor:
                w[i] = v
                logw[i] = log_lam + d[i]
            else:
                w[i] = floor
                logw[i] = log_floor
    return acc


def _inline_pass(L, eta, floor, w, logw, lp, d, p, sb):
    n, K = L.shape
    log_floor = math.log(floor)
    acc = 0.0
    for r in range(n):
        m = -math.inf
        for i in range(K):
            acc += w[i] * L[r, i]
            v = logw[i] - eta * L[r, i]
            lp[i] = v
            m = v if v > m else m
        clip_project_max(lp, m, K, floor, log_floor, w, logw, d, p, sb)
    return acc


pass_inline_helper = numba.njit(_inline_pass)  # not cached: the same function as below, cached by skonline
pass_inline_borrowed = njit(borrowed=True)(_inline_pass)


@numba.njit(cache=True)
def pass_plain_call(L, eta, floor, w, logw, lp, d, p, sb):
    n, K = L.shape
    log_floor = math.log(floor)
    acc = 0.0
    for r in range(n):
        for i in range(K):
            acc += w[i] * L[r, i]
            lp[i] = logw[i] - eta * L[r, i]
        plain_project(lp, K, floor, log_floor, w, logw, d, p, sb)
    return acc


VERSIONS = {"written out": pass_written_out, "inline helper": pass_inline_helper,
            "inline, borrowed": pass_inline_borrowed, "plain call": pass_plain_call}


def _run(name, L, eta, floor):
    K = L.shape[1]
    w = np.full(K, 1.0 / K)
    logw = np.log(w)
    bufs = [np.empty(K) for _ in range(4)]
    args = (L, eta, floor, w, logw, *bufs)
    t0 = time.perf_counter()
    acc = VERSIONS[name](*args)
    return time.perf_counter() - t0, acc, w


def measure(K, rows, repeats, seed=0):
    rng = np.random.default_rng(seed)
    L = rng.uniform(size=(rows, K))
    if K > 100:  # shuffled ramps with a floor near 1/K: the fixed point runs out, the sort runs
        L = np.array([rng.permutation(np.linspace(0.0, 1.0, K)) for _ in range(rows)])
        floor = 0.995 / K
    else:
        floor = 1.0 / (10 * K)
    eta = 0.3
    ref = None
    for name in VERSIONS:  # compile, and check that the three versions agree exactly
        _, acc, w = _run(name, L[:1000], eta, floor)
        if ref is None:
            ref = (acc, w)
        elif acc != ref[0] or not np.array_equal(w, ref[1]):
            raise AssertionError(f"{name} differs from the written-out pass")
    best = dict.fromkeys(VERSIONS, math.inf)
    for _ in range(repeats):
        for name in VERSIONS:
            best[name] = min(best[name], _run(name, L, eta, floor)[0])
    return {name: 1e9 * sec / rows for name, sec in best.items()}


def verdict(results):
    """The sentence the results file ends with, from the measured numbers."""
    worst = {name: max((ns[name] - ns["written out"]) / ns["written out"] for ns in results.values())
             for name in ("inline helper", "inline, borrowed")}
    w_b, w_i = 100 * worst["inline, borrowed"], 100 * worst["inline helper"]
    lim = f"{100 * NEGLIGIBLE:.0f} %"
    if worst["inline, borrowed"] < NEGLIGIBLE:
        return (f"Inlined into a pass compiled borrowed (no reference counting), the one shared projection "
                f"costs at most {w_b:+.1f} % of a round over the written-out loop (below {lim}), against "
                f"{w_i:+.1f} % with reference counting: the experts' passes call the one copy, compiled "
                "borrowed.")
    return (f"Even inlined into a pass compiled borrowed, the shared projection costs up to {w_b:+.1f} % of a "
            f"round over the written-out loop (more than {lim}; {w_i:+.1f} % with reference counting).")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="20,000 rows, 2 repeats (a smoke test)")
    args = parser.parse_args(argv)
    rows, repeats = (20_000, 2) if args.quick else (args.rows, args.repeats)
    results = {}
    for K in (10, 130):
        results[K] = measure(K, rows if K == 10 else max(rows // 10, 1000), repeats)
        print(f"K={K}: " + ", ".join(f"{k} {v:.1f} ns/round" for k, v in results[K].items()), flush=True)
    cmd = "python " + " ".join(shlex.quote(a) for a in ["benchmarks/numba_call_overhead.py"] + sys.argv[1:])
    lines = [
        "# Cost of a numba helper call per round (skonline.experts clipped-simplex projection)",
        "",
        f"Command: `{cmd}`",
        "",
        run_header() + f" numba {numba.__version__}, numpy {np.__version__}.",
        "",
        "| K | written out (ns / round) | inline helper (ns / round) | extra | inline, borrowed (ns / round) "
        "| extra | plain call (ns / round) | extra |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for K, ns in results.items():
        base = ns["written out"]
        lines.append(f"| {K} | {base:.1f} | " + " | ".join(
            f"{ns[name]:.1f} | {100 * (ns[name] / base - 1):+.1f} %"
            for name in ("inline helper", "inline, borrowed", "plain call")) + " |")
    lines += ["", verdict(results), ""]
    out = RESULTS if not args.quick else Path(sys.argv[0]).resolve().parent / "_cache" / RESULTS.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
