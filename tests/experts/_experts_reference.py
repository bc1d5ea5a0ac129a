"""Plain-numpy reference implementations (written from the papers and opera's R code, row by row,
without the compiled machinery) used as exact references by the experts tests."""

import math

import numpy as np


def proj(logp, gamma):
    """Sort-based KL projection onto the clipped simplex (spec App. A.1)."""
    K = logp.shape[0]
    p = np.exp(logp - np.max(logp))
    q = np.sort(p)[::-1]
    S = np.cumsum(q)
    k = np.arange(1, K + 1)
    valid = q * (1.0 - (K - k) * gamma) >= gamma * S
    kstar = np.flatnonzero(valid)[-1] + 1
    lam = (1.0 - (K - kstar) * gamma) / S[kstar - 1]
    return np.maximum(gamma, lam * p)


def hedge(L, eta):
    T, K = L.shape
    w = np.full(K, 1.0 / K)
    W = np.empty_like(L)
    for t in range(T):
        W[t] = w
        v = np.log(w) - eta * L[t]
        w = np.exp(v - v.max())
        w /= w.sum()
    return W


def clipped(L, eta, gamma, prod=False):
    """ClippedHedge (prod=False) or PCS (prod=True); gamma = 0 gives Hedge / Prod."""
    T, K = L.shape
    w = np.full(K, 1.0 / K)
    W = np.empty_like(L)
    for t in range(T):
        W[t] = w
        g = -np.log1p(-eta * L[t]) if prod else eta * L[t]
        w = proj(np.log(w) - g, gamma)
    return W


def ocs(L, eta, gamma):
    T, K = L.shape
    wt = np.full(K, 1.0 / K)
    prev = np.zeros(K)
    W = np.empty_like(L)
    for t in range(T):
        W[t] = proj(np.log(wt) - eta * prev, gamma)  # (17)
        wt = proj(np.log(wt) - eta * L[t], gamma)  # (18)
        prev = L[t]
    return W


def ocs_plus(L, T, S):
    """Algorithm 4, literally (epochs, halving test eta_m > sqrt(c / P_m))."""
    n, K = L.shape
    c = S * math.log(K * T / S)
    gamma = S / (T * K)
    wt = np.full(K, 1.0 / K)
    prev = np.zeros(K)
    eta = math.sqrt(c)
    P = 0.0
    W = np.empty_like(L)
    starts = [1]
    for t in range(n):
        W[t] = proj(np.log(wt) - eta * prev, gamma)
        wt = proj(np.log(wt) - eta * L[t], gamma)
        P += np.max(np.abs(L[t] - prev)) ** 2
        prev = L[t]
        if P > 0 and eta > math.sqrt(c / P):
            eta /= 2
            P = 0.0
            starts.append(t + 2)
    return W, starts


def fixed_share(L, eta, alpha):
    T, K = L.shape
    w = np.full(K, 1.0 / K)
    W = np.empty_like(L)
    for t in range(T):
        W[t] = w
        v = w * np.exp(-eta * (L[t] - L[t].min()))
        v /= v.sum()
        w = (1 - alpha) * v + alpha / (K - 1) * (1 - v)
    return W


def opera_mlpol(L):
    """opera's MLpol (R/MLpol.R) with the losses given directly (lpred - lexp = <p, l> - l)."""
    T, N = L.shape
    awake = (~np.isnan(L)).astype(float)
    Lz = np.where(np.isnan(L), 0.0, L)
    B = 0.0
    eta = np.full(N, math.exp(700))
    R = np.zeros(N)
    W = np.zeros((T, N))
    for t in range(T):
        if np.max(awake[t] * R) > 0:
            w = eta * np.maximum(R, 0) / np.sum(eta * np.maximum(R, 0))
        else:
            w = np.ones(N)
        p = awake[t] * w / np.sum(awake[t] * w)
        W[t] = p
        lpred = p @ Lz[t]
        r = awake[t] * (lpred - Lz[t])
        R = R + r
        newB = max(B, np.max(r**2))
        eta = 1 / (1 / eta + r**2 + newB - B)
        B = newB
    return W


def opera_boa(L):
    """opera's BOA (R/BOA.R), uniform prior, losses given directly."""
    T, N = L.shape
    awake = (~np.isnan(L)).astype(float)
    Lz = np.where(np.isnan(L), 0.0, L)
    w0 = np.ones(N)
    Rreg = np.zeros(N)
    w = w0.copy()
    eta = np.full(N, math.exp(350))
    V = 0.0
    B = 0.0
    W = np.zeros((T, N))
    for t in range(T):
        p = awake[t] * w / np.sum(awake[t] * w)
        W[t] = p
        lpred = p @ Lz[t]
        r = awake[t] * (lpred - Lz[t])
        B = np.maximum(B, np.abs(r))
        V = V + r**2
        with np.errstate(divide="ignore"):
            eta = np.minimum(np.minimum(1 / (2 * B), np.sqrt(math.log(N) / V)), math.exp(350))
        if np.max(eta) > math.exp(300):
            rreg = r
        else:
            rreg = r - eta * r**2
        Rreg = Rreg + rreg
        x = np.log(w0) + eta * Rreg
        w = np.exp(x - x.max())  # opera's truncate1 never binds on these inputs
    return W


def adahedge(L):
    T, K = L.shape
    Lc = np.zeros(K)
    Delta = 0.0
    W = np.empty_like(L)
    for t in range(T):
        if Delta == 0:
            w = (Lc == Lc.min()).astype(float)
            w /= w.sum()
        else:
            eta = math.log(K) / Delta
            x = -eta * Lc
            w = np.exp(x - x.max())
            w /= w.sum()
        W[t] = w
        h = w @ L[t]
        if Delta == 0:
            m = L[t][w > 0].min()
        else:
            m = -math.log(np.sum(w * np.exp(-eta * L[t]))) / eta
        Delta += max(h - m, 0.0)
        Lc = Lc + L[t]
    return W


def best_switching_bruteforce(L, S):
    """min over all K^T sequences with <= S - 1 switches (tiny T only)."""
    import itertools

    T, K = L.shape
    best = math.inf
    for seq in itertools.product(range(K), repeat=T):
        sw = sum(seq[t] != seq[t - 1] for t in range(1, T))
        if sw <= S - 1:
            best = min(best, sum(L[t, seq[t]] for t in range(T)))
    return best


def fixed_share_adaptive(L, alpha=None, eta_max=1e6):
    """Fixed Share with AdaHedge's learning rate (eta_t = log K / Delta_{t-1}, eta_max while the
    cumulative mixability gap is at most log K / eta_max) and sharing rate ``alpha`` (None:
    1 / (t + 1) at round t = 1, 2, ...), written from the definitions."""
    T, K = L.shape
    w = np.full(K, 1.0 / K)
    Delta = 0.0
    W = np.empty_like(L)
    for t in range(T):
        eta = math.log(K) / Delta if Delta > math.log(K) / eta_max else eta_max
        W[t] = w
        h = w @ L[t]
        z = np.log(w) - eta * L[t]
        zm = z.max()
        m = -(zm + math.log(np.sum(np.exp(z - zm)))) / eta  # mix loss
        Delta += max(h - m, 0.0)
        v = np.exp(z - zm)
        v /= v.sum()
        a = min(1.0 / (t + 2.0), (K - 1.0) / K) if alpha is None else alpha
        w = (1 - a) * v + a / (K - 1) * (1 - v)
    return W
