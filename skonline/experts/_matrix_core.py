"""Compiled pass of PCSP, Prod on the clipped spectraplex (Lu & Zhang, Algorithm 5).

State: the eigen-decomposition ``W_t = V diag(w) V'`` with the log-eigenvalues ``logw`` (exactly the
projection's output, never the logarithm of a recomputed matrix). Per round, O(K^3) and no
allocation: two in-place Jacobi eigen-decompositions (of the loss matrix and of the new ``Q``).
The settings are the rules' :class:`~skonline.experts._rules_core.RuleSettings` (``inv_span`` is
``1 / loss_bound``, ``bound`` the bound on M_2).
"""

import math
from typing import NamedTuple

import numpy as np

from ..utils._jit import njit
from ..utils._projections import clip_project, jacobi_eigh
from ._rules_core import PCS, _log_floor, _retune


class PCSPState(NamedTuple):
    """State of PCSP, updated in place by :func:`pcsp_pass`.

    w : (K,) eigenvalues of the density matrix played next, ``W = V diag(w) V'``; log_w : (K,) their
    logarithms (the projection's output); V : (K, K) its eigenvectors (columns); T : (1,) horizon of
    the last round's tuning (0 before the first round); eta, gamma : (1,) learning rate and
    eigenvalue floor of the last round (NaN before the first); cum_loss : (1,) ``sum_t Tr(W_t Z_t)``.
    """

    w: np.ndarray
    log_w: np.ndarray
    V: np.ndarray
    T: np.ndarray
    eta: np.ndarray
    gamma: np.ndarray
    cum_loss: np.ndarray


class MatrixBuffers(NamedTuple):
    """Scratch of one PCSP round (no meaning between rounds).

    A : (K, K) the scaled loss matrix, diagonalised in place (eigenvalues on its diagonal); U : (K, K)
    its eigenvectors; Q : (K, K) ``log W_t + log(I - eta Z_t)``, diagonalised in place; V_new : (K, K)
    its eigenvectors; z : (K,) ``log(1 - eta lambda(Z_t))``; lp, d, p, mark : (K,) the projection's
    scratch (``clip_project``).
    """

    A: np.ndarray
    U: np.ndarray
    Q: np.ndarray
    V_new: np.ndarray
    z: np.ndarray
    lp: np.ndarray
    d: np.ndarray
    p: np.ndarray
    mark: np.ndarray


def matrix_buffers(K):
    """Fresh :class:`MatrixBuffers` for K x K matrices."""
    return MatrixBuffers(*(np.empty((K, K)) for _ in range(4)), *(np.empty(K) for _ in range(5)))


@njit
def pcsp_pass(Z, settings, state, out, buf):
    """PCSP over the symmetric loss matrices ``Z[r]`` (spectral norm <= 1 after ``* inv_span``).

    ``out[r]`` receives the matrix played at round r; ``state.cum_loss[0]`` accumulates
    ``Tr(W_t Z_t)`` in the user's units. Update: ``Q = log W_t + log(I - eta Z_t)`` (both from
    eigen-decompositions), ``W_{t+1} = V_Q diag(proj(eig(Q), gamma)) V_Q'`` (Lemma M of the spec: the
    clipped spectraplex projection acts on the eigenvalues). ``state``: :class:`PCSPState`.
    """
    n = Z.shape[0]
    K = Z.shape[1]
    inv_bound, t0 = settings.inv_span, settings.t0
    w, logw, V, acc = state.w, state.log_w, state.V, state.cum_loss
    A, U, Q, Vn, z, lp, d, p, sb = buf.A, buf.U, buf.Q, buf.V_new, buf.z, buf.lp, buf.d, buf.p, buf.mark
    T, eta, floor = state.T[0], state.eta[0], state.gamma[0]
    log_floor = _log_floor(floor)
    for r in range(n):
        T, eta, floor, log_floor = _retune(PCS, settings, K, t0 + r + 1, T, eta, floor, log_floor)
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
        clip_project(lp, K, floor, log_floor, w, logw, d, p, sb)
        for i in range(K):
            for j in range(K):
                V[i, j] = Vn[i, j]
    state.T[0] = T
    state.eta[0] = eta
    state.gamma[0] = floor
