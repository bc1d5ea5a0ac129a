"""Benchmark: expert aggregation and tracking the best expert (Lu & Zhang; opera's rules; river).

Three parts, all measured in the same run:

1. Synthetic tracking suite (spec Sec. 5.1): K = 10 experts, T = 5,000 rounds, 5 seeds.
   E1 abrupt switches (Bernoulli losses, 0.3 for the current best expert vs 0.5, S = 5 segments),
   E2 small losses (0.02 vs 0.5, S = 5), E3 slow drift (0.5 + 0.4 sin(2 pi t / 2500 + phase_i),
   S = number of changes of the pointwise best expert + 1), E4 worst case (i.i.d. uniform losses,
   S = 5; and an alternating leader, S = 5). Every rule gets (T, S) (the paper's setting); the
   tracking regret is measured against the exact best sequence with S - 1 switches (dynamic
   programme). river's EWARegressor (learning_rate = 0.5, its default) runs on the same losses
   (each "model" predicts its loss, absolute loss against y = 0).
2. Online ensemble on a real stream with drift: casp (45,730 rows) ordered by feature F3 (the
   feature most correlated with the target), the first 5,000 rows as warm-up for the frozen batch
   experts (Ridge, HistGradientBoosting) and for the feature scaling of the online SGD experts;
   prequential squared loss on the remaining rows, chunks of 100 rows (experts predict a chunk, the
   rule runs over it, the online experts learn it).
3. Throughput: every rule at K = 10 on 1,000,000 rounds (best of 3, after compilation); the
   ensemble's aggregation step (frozen experts that read their prediction from a column, so the
   experts cost nothing) against river's EWARegressor on the same stream of expert predictions,
   same run (200,000 rows for skonline, 20,000 for river).

Usage::

    python benchmarks/experts.py            # full run, writes benchmarks/results/experts.md (+ png)
    python benchmarks/experts.py --quick    # 2 seeds, shorter streams, prints the tables only
"""

import argparse
import datetime
import os
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path

_SHARED_DATA = "/work/shared/datasets"
if "SKONLINE_DATA" not in os.environ and os.path.isdir(_SHARED_DATA):
    os.environ["SKONLINE_DATA"] = _SHARED_DATA

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sklearn.base import BaseEstimator, RegressorMixin  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402
from sklearn.linear_model import Ridge, SGDRegressor  # noqa: E402

from skonline.datasets import load_dataset  # noqa: E402
from skonline.evaluation import best_switching_sequence, path_length, tracking_regret  # noqa: E402
from skonline.experts import (  # noqa: E402
    BOA,
    OCS,
    PCS,
    AdaHedge,
    ClippedHedge,
    FixedShare,
    Hedge,
    MLPoly,
    OCSPlus,
    OnlineEnsembleRegressor,
)
from skonline.linear_model import ScaleInvariantRegressor  # noqa: E402

from _common import run_header  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
K = 10


# --------------------------------------------------------------------------- synthetic suite
def env_switching(rng, T, mu_good, S=5):
    cuts = np.sort(rng.choice(np.arange(1, T), S - 1, replace=False))
    seg = np.searchsorted(cuts, np.arange(T), side="right")
    best = [int(rng.integers(K))]
    for _ in range(S - 1):
        best.append(int(rng.choice([i for i in range(K) if i != best[-1]])))
    mu = np.full((T, K), 0.5)
    mu[np.arange(T), np.array(best)[seg]] = mu_good
    return (rng.uniform(size=(T, K)) < mu).astype(float), S


def env_smooth(rng, T):
    t = np.arange(T)[:, None]
    L = 0.5 + 0.4 * np.sin(2 * np.pi * t / (T / 2) + rng.uniform(0, 2 * np.pi, K))
    best = np.argmin(L, axis=1)
    return L, int(1 + np.sum(best[1:] != best[:-1]))


def env_uniform(rng, T):
    return rng.uniform(size=(T, K)), 5


def env_alternating(rng, T):
    """The leader alternates: a fresh expert has loss 0 for 2 rounds, everyone else 1 (a
    follow-the-leader trap); S = 5 (the comparator cannot follow)."""
    L = np.ones((T, K))
    L[np.arange(T), (np.arange(T) // 2) % K] = 0.0
    L[:, 0] = 0.55
    return L, 5


ENVS = {
    "E1 abrupt switches": lambda rng, T: env_switching(rng, T, 0.3),
    "E2 small losses": lambda rng, T: env_switching(rng, T, 0.02),
    "E3 slow drift": env_smooth,
    "E4 iid uniform": env_uniform,
    "E4 alternating": env_alternating,
}


def rules(T, S, L):
    """(label, rule) in the paper's setting (T and S known); the oracles use the true L_2 / P_inf."""
    c = S * np.log(K * T / S)
    _, path = best_switching_sequence(L, S)
    L2 = float(np.sum(L[np.arange(T), path] ** 2))
    P = path_length(L)
    kw = dict(n_segments=S, horizon=T)
    return [
        ("Hedge", Hedge(horizon=T)),
        ("Fixed Share", FixedShare(**kw)),
        ("ClippedHedge (Thm 1 eta)", ClippedHedge(**kw)),
        ("PCS (worst-case eta)", PCS(**kw)),
        ("PCS (L2-oracle eta)", PCS(l2_bound=max(L2, 1e-12), **kw)),
        ("PCS eta=1/2", PCS(eta=0.5, **kw)),
        ("OCS (P-oracle eta)", OCS(path_length_bound=max(P, 1e-12), **kw)),
        ("OCS+", OCSPlus(**kw)),
        ("MLPoly", MLPoly()),
        ("BOA", BOA()),
        ("AdaHedge", AdaHedge()),
    ], dict(L2=L2, P=P, c=c)


def river_ewa_weights(L, learning_rate=0.5):
    """Weights river's EWARegressor plays on the loss matrix L (its models predict their losses)."""
    from river import base, ensemble, optim

    class _LossModel(base.Regressor):
        def __init__(self, i):
            self.i = i

        def learn_one(self, x, y):
            pass

        def predict_one(self, x):
            return x[self.i]

    ewa = ensemble.EWARegressor([_LossModel(i) for i in range(L.shape[1])], loss=optim.losses.Absolute(),
                                learning_rate=learning_rate)
    W = np.empty_like(L)
    for t in range(L.shape[0]):
        w = np.asarray(ewa.weights, dtype=float)
        s = w.sum()
        W[t] = w / s if s > 0 else np.full(L.shape[1], 1.0 / L.shape[1])
        ewa.learn_one(dict(enumerate(L[t])), 0.0)
    return W


def synthetic_suite(T, seeds):
    table = {}
    info = {}
    for env, make in ENVS.items():
        for seed in range(seeds):
            rng = np.random.default_rng(1000 + seed)
            L, S = make(rng, T)
            rs, q = rules(T, S, L)
            info.setdefault(env, []).append((S, q["L2"], q["P"]))
            for name, rule in rs:
                W = rule.partial_fit_predict(L)
                table.setdefault(env, {}).setdefault(name, []).append(tracking_regret(L, W, S))
            W = river_ewa_weights(L)
            table[env].setdefault("river EWARegressor (lr 0.5)", []).append(tracking_regret(L, W, S))
    return table, info


def format_synthetic(table, info):
    envs = list(table)
    names = list(table[envs[0]])
    lines = ["| rule | " + " | ".join(envs) + " |", "|---|" + "---|" * len(envs)]
    for name in names:
        cells = []
        for env in envs:
            v = np.array(table[env][name])
            best = min(np.mean(table[env][n]) for n in names)
            cell = f"{v.mean():.1f} ± {v.std():.1f}"
            cells.append(f"**{cell}**" if np.isclose(v.mean(), best) else cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("| *S (segments)* | " + " | ".join(
        f"{np.mean([s for s, _, _ in info[e]]):.0f}" for e in envs) + " |")
    lines.append("| *L_2 of the best sequence* | " + " | ".join(
        f"{np.mean([l2 for _, l2, _ in info[e]]):.0f}" for e in envs) + " |")
    lines.append("| *path length P_inf* | " + " | ".join(
        f"{np.mean([p for _, _, p in info[e]]):.1f}" for e in envs) + " |")
    return "\n".join(lines)


def verdicts(table):
    """Where the paper says the adaptive rules should win: small losses (PCS) and slow drift (OCS)."""
    out = []
    fs = {e: np.mean(table[e]["Fixed Share"]) for e in table}
    checks = [
        ("E2 small losses", "PCS (L2-oracle eta)"),
        ("E2 small losses", "PCS (worst-case eta)"),
        ("E3 slow drift", "OCS (P-oracle eta)"),
        ("E3 slow drift", "OCS+"),
        ("E1 abrupt switches", "PCS (L2-oracle eta)"),
        ("E1 abrupt switches", "OCS+"),
    ]
    for env, name in checks:
        v = np.mean(table[env][name])
        word = "beats" if v < fs[env] else "does NOT beat"
        out.append(f"- {env}: {name} {word} Fixed Share ({v:.1f} vs {fs[env]:.1f}, ratio {v / fs[env]:.2f}).")
    return "\n".join(out)


# --------------------------------------------------------------------------- real stream
def casp_stream(quick):
    b = load_dataset("casp")
    X, y = b.data.astype(float), b.target.astype(float)
    order = np.argsort(X[:, 2], kind="stable")  # F3
    X, y = X[order], y[order]
    if quick:
        X, y = X[::4], y[::4]
    return X, y


def casp_ensembles(quick, chunk=100):
    X, y = casp_stream(quick)
    n_warm = 5000 if not quick else 1250
    Xw, yw = X[:n_warm], y[:n_warm]
    mu, sd = Xw.mean(axis=0), Xw.std(axis=0) + 1e-12
    Xs = (X - mu) / sd  # fixed map from the warm-up rows
    Xs_w, Xs_s, ys = Xs[:n_warm], Xs[n_warm:], y[n_warm:]
    experts = [
        ("sgd_0.01", SGDRegressor(learning_rate="constant", eta0=0.01, random_state=0)),
        ("sgd_0.001", SGDRegressor(learning_rate="constant", eta0=0.001, random_state=0)),
        ("scale_invariant", ScaleInvariantRegressor(loss="huber", epsilon=1.0, invariance="coordinate",
                                                     standardize=False)),
        ("ridge_warmup", FrozenEstimator(Ridge().fit(Xs_w, yw))),
        ("hgb_warmup", FrozenEstimator(HistGradientBoostingRegressor(random_state=0).fit(Xs_w, yw))),
    ]
    T = Xs_s.shape[0]
    configs = [
        ("PCS (default, horizon-free)", PCS()),
        ("PCS eta=1/2", PCS(eta=0.5)),
        ("Fixed Share", FixedShare()),
        ("OCS+", OCSPlus()),
        ("Hedge", Hedge()),
        ("MLPoly", MLPoly()),
        ("BOA", BOA()),
    ]
    for _, rule in configs:  # compile every rule's pass before timing
        OnlineEnsembleRegressor(experts, rule=rule, loss="squared_error").fit(Xs_s[:300], ys[:300])
    rows = []
    weights = None
    expert_losses = None
    for name, rule in configs:
        ens = OnlineEnsembleRegressor(experts, rule=rule, loss="squared_error")
        preds, W = [], []
        t0 = time.perf_counter()
        for i in range(0, T, chunk):
            preds.append(ens.partial_fit_predict(Xs_s[i:i + chunk], ys[i:i + chunk]))
            W.append(np.tile(ens.weights_, (min(chunk, T - i), 1)))
        elapsed = time.perf_counter() - t0
        p = np.concatenate(preds)
        mse = float(np.mean((p - ys) ** 2))
        rows.append((name, mse, elapsed))
        if expert_losses is None:
            expert_losses = ens.expert_cumulative_losses_.copy()
        if name.startswith("PCS (default"):
            weights = np.vstack(W)
    names = [n for n, _ in experts]
    return rows, names, expert_losses, T, chunk, weights, n_warm


# --------------------------------------------------------------------------- throughput
class _Column(RegressorMixin, BaseEstimator):
    """A frozen 'expert' whose prediction is column i of X (costs nothing)."""

    def __init__(self, i=0):
        self.i = i

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        return X[:, self.i]


def throughput(quick):
    n = 200_000 if quick else 1_000_000
    rng = np.random.default_rng(0)
    L = rng.uniform(size=(n, K))
    out = []
    for name, rule in [
        ("Hedge", Hedge()), ("FixedShare", FixedShare()), ("ClippedHedge", ClippedHedge()), ("PCS", PCS()),
        ("OCS", OCS()), ("OCSPlus", OCSPlus()), ("MLPoly", MLPoly()), ("BOA", BOA()), ("AdaHedge", AdaHedge()),
    ]:
        rule.fit(L[:100])  # compile
        best = np.inf
        for _ in range(3):
            t0 = time.perf_counter()
            rule.fit(L)
            best = min(best, time.perf_counter() - t0)
        out.append((name, n / best))
    # ensemble aggregation step vs river EWARegressor on the same expert predictions
    n_ens = 50_000 if quick else 200_000
    n_river = 5_000 if quick else 20_000
    P = rng.standard_normal((n_ens, K)) + rng.standard_normal((n_ens, 1))
    y = P.mean(axis=1) + 0.3 * rng.standard_normal(n_ens)
    experts = [(f"c{i}", FrozenEstimator(_Column(i).fit(P[:2]))) for i in range(K)]
    from river import base, ensemble

    class _RiverColumn(base.Regressor):
        def __init__(self, i):
            self.i = i

        def learn_one(self, x, y):
            pass

        def predict_one(self, x):
            return x[self.i]

    rows = [dict(enumerate(P[t])) for t in range(n_river)]

    def river_once():
        ewa = ensemble.EWARegressor([_RiverColumn(i) for i in range(K)])
        t0 = time.perf_counter()
        for t in range(n_river):
            ewa.learn_predict_one(rows[t], y[t])
        return n_river / (time.perf_counter() - t0)

    def ours_once(rule, chunk):
        m = n_ens if chunk > 1 else n_river // 4
        ens = OnlineEnsembleRegressor(experts, rule=rule, loss="squared_error")
        t0 = time.perf_counter()
        for i in range(0, m, chunk):
            ens.partial_fit_predict(P[i:i + chunk], y[i:i + chunk])
        return m / (time.perf_counter() - t0)

    configs = [("Hedge(eta=0.5)", Hedge(eta=0.5), c) for c in (10_000, 1000, 1)]
    configs += [("PCS()", PCS(), c) for c in (10_000, 1000, 1)]
    for _, rule, _chunk in configs:  # compile
        OnlineEnsembleRegressor(experts, rule=rule, loss="squared_error").partial_fit(P[:100], y[:100])
    # interleaved repeats, best of 3 for each (the machine is shared: this keeps the ratio fair)
    agg = {}
    river_rate = 0.0
    for _ in range(3):
        river_rate = max(river_rate, river_once())
        for label, rule, chunk in configs:
            agg[(label, chunk)] = max(agg.get((label, chunk), 0.0), ours_once(rule, chunk))
    return out, agg, river_rate, n, n_ens, n_river


# --------------------------------------------------------------------------- report
def machine():
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    quick = args.quick
    warnings.filterwarnings("ignore", category=UserWarning)
    T = 2000 if quick else 5000
    seeds = 2 if quick else 5

    t_start = time.perf_counter()
    table, info = synthetic_suite(T, seeds)
    syn = format_synthetic(table, info)
    verdict = verdicts(table)
    print(syn, "\n", verdict, sep="")

    rows, names, expert_losses, T_real, casp_chunk, weights, n_warm = casp_ensembles(quick)
    best_expert = float(np.min(expert_losses)) / T_real
    real_lines = ["| predictor | prequential MSE | vs best single expert | time (s) |", "|---|---|---|---|"]
    for name, mse, el in rows:
        real_lines.append(f"| ensemble, {name} | {mse:.3f} | {mse / best_expert:.3f} | {el:.1f} |")
    for nm, l in zip(names, expert_losses):
        real_lines.append(f"| expert {nm} | {l / T_real:.3f} | {l / T_real / best_expert:.3f} | |")
    real = "\n".join(real_lines)
    print(real)

    thr, agg, river_rate, n_thr, n_ens, n_river = throughput(quick)
    thr_lines = ["| rule (K = 10) | rounds / s |", "|---|---|"]
    thr_lines += [f"| {name} | {rate:,.0f} |" for name, rate in thr]
    agg_lines = ["| aggregation of K = 10 expert predictions | rows / s | ratio to river EWARegressor |",
                 "|---|---|---|"]
    for (label, chunk), rate in agg.items():
        agg_lines.append(
            f"| skonline OnlineEnsembleRegressor, rule={label}, chunks of {chunk} | {rate:,.0f} | "
            f"{rate / river_rate:.1f}x |"
        )
    agg_lines.append(f"| river EWARegressor (learn_predict_one per row) | {river_rate:,.0f} | 1.0x |")
    print("\n".join(thr_lines + [""] + agg_lines))
    elapsed = time.perf_counter() - t_start

    if quick:
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    plot_file = RESULTS / "experts_casp_weights.png"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from skonline.plotting import plot_weights

        fig, ax = plt.subplots(figsize=(9, 3.5))
        plot_weights(weights, expert_names=names, ax=ax)
        ax.set_title("casp ordered by F3: weights of the experts (OnlineEnsembleRegressor, PCS)")
        fig.tight_layout()
        fig.savefig(plot_file, dpi=110)
        plt.close(fig)
    except ImportError:  # pragma: no cover
        plot_file = None

    import river
    import sklearn

    cmd = "python " + " ".join(shlex.quote(a) for a in ["benchmarks/experts.py"] + (argv or sys.argv[1:]))
    md = f"""# Expert aggregation benchmark

Command: `{cmd}`
Date: {datetime.datetime.now().strftime("%Y-%m-%d %H:%M")}
Machine: {machine()}
Versions: numpy {np.__version__}, scikit-learn {sklearn.__version__}, river {river.__version__}
Total time: {elapsed:.0f} s
{run_header()}

## 1. Tracking regret on the synthetic suite (K = {K}, T = {T}, {seeds} seeds, mean ± std)

Tracking regret ``sum_t <w_t, l_t> - min over sequences with S - 1 switches`` (exact DP), every rule
given (T, S). Oracle rows use the true L_2 of the best sequence / the true path length to tune eta
(Theorems 2 and 3), which a user does not know in advance; "worst-case" and "Thm 1" rows use the
paper's prescribed tuning without that knowledge. Bold: best row of the column.

{syn}

Where the paper says the adaptive rules should beat Fixed Share:

{verdict}

## 2. Online ensemble on casp ordered by F3 (drift)

{T_real} prequential rows after a {n_warm}-row warm-up (frozen experts fitted on it; the SGD experts
see features standardised with its statistics); chunks of {casp_chunk} rows; squared loss,
`loss_bound='auto'`, `clip_predictions=True` (the defaults). The experts' losses are the
same in every run (they do not depend on the rule). "vs best single expert": MSE divided by the best
expert's prequential MSE in hindsight (online experts are asleep during the first chunk and are
charged nothing there).

{real}

![weights]({plot_file.name if plot_file else ''})

## 3. Throughput

Every rule on {n_thr:,} rounds of K = {K} uniform losses (best of 3, compiled):

{chr(10).join(thr_lines)}

The ensemble's aggregation step on the same stream of expert predictions (frozen experts that read
their prediction from a column of X, squared loss): skonline on {n_ens:,} rows in chunks of 10,000 and
1,000 rows and on {n_river // 4:,} rows one row per call, river on {n_river:,} rows (`learn_predict_one`,
its fastest path); interleaved repeats, best of 3 each, so that the load of the shared machine affects
both alike. With one row per call the cost is the scikit-learn API (validation and one `predict` per
expert per call), not the aggregation.

{chr(10).join(agg_lines)}
"""
    (RESULTS / "experts.md").write_text(md, encoding="utf-8")
    print(f"wrote {RESULTS / 'experts.md'}")


if __name__ == "__main__":
    main()
