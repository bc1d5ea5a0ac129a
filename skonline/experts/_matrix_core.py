"""Compiled pass of PCSP, Prod on the clipped spectraplex (Lu & Zhang, Algorithm 5).

State: the eigen-decomposition ``W_t = V diag(w) V'`` with the log-eigenvalues ``logw`` (exactly the
projection's output, never the logarithm of a recomputed matrix). Per round, O(K^3) and no
allocation: two in-place Jacobi eigen-decompositions (of the loss matrix and of the new ``Q``).
"""

import math

import numba

from ..utils._projections import clip_project, jacobi_eigh
from ._rules_core import PCS, _horizon, tuning


@numba.njit(cache=True)
def pcsp_pass(Z, inv_bound, t0, horizon, S, eta_user, bound_user, floor_user, tstate, w, logw, V,
              out, acc, A, U, Q, Vn, z, lp, d, p, sb, kb):
    """PCSP over the symmetric loss matrices ``Z[r]`` (spectral norm <= 1 after ``* inv_bound``).

    ``out[r]`` receives the matrix played at round r; ``acc[0]`` accumulates ``Tr(W_t Z_t)`` in the
    user's units. Update: ``Q = log W_t + log(I - eta Z_t)`` (both from eigen-decompositions),
    ``W_{t+1} = V_Q diag(proj(eig(Q), gamma)) V_Q'`` (Lemma M of the spec: the clipped spectraplex
    projection acts on the eigenvalues).
    """
    n = Z.shape[0]
    K = Z.shape[1]
    T = tstate[0]
    eta = tstate[1]
    floor = tstate[2]
    log_floor = math.log(floor) if floor > 0.0 else -math.inf
    for r in range(n):
        t = t0 + r + 1
        T_new = _horizon(t, horizon, S, T)
        if T_new != T or eta != eta:
            T = T_new
            eta, floor, _ = tuning(PCS, K, T, S, eta_user, bound_user, math.nan, floor_user)
            log_floor = math.log(floor) if floor > 0.0 else -math.inf
        # play W_t = V diag(w) V'; suffer Tr(W_t Z_t)
        loss = 0.0
        for i in range(K):
            for j in range(i, K):
                s = 0.0
                for k in range(K):
                    s += V[i, k] * w[k] * V[j, k]
                out[r, i, j] = s
                out[r, j, i] = s
                loss += s * Z[r, j, i] if i == j else s * (Z[r, j, i] + Z[r, i, j])
        acc[0] += loss
        if K == 1:
            continue
        # eigen-decomposition of the scaled loss matrix
        for i in range(K):
            for j in range(i, K):
                a = Z[r, i, j] * inv_bound
                A[i, j] = a
                A[j, i] = a
        jacobi_eigh(A, K, U)
        for k in range(K):
            z[k] = math.log1p(-eta * A[k, k])
        # Q = V diag(log w) V' + U diag(log(1 - eta z)) U'
        for i in range(K):
            for j in range(i, K):
                s = 0.0
                for k in range(K):
                    s += V[i, k] * logw[k] * V[j, k]
                s2 = 0.0
                for k in range(K):
                    s2 += U[i, k] * z[k] * U[j, k]
                Q[i, j] = s + s2
                Q[j, i] = s + s2
        jacobi_eigh(Q, K, Vn)
        for k in range(K):
            lp[k] = Q[k, k]
        clip_project(lp, K, floor, log_floor, w, logw, d, p, kb, sb)
        for i in range(K):
            for j in range(K):
                V[i, j] = Vn[i, j]
    tstate[0] = T
    tstate[1] = eta
    tstate[2] = floor
