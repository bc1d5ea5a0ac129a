"""Golden traces of the spec (Appendix A): forced kernel choices I = [0, 1, 0, 1], to 1e-8.

X = [[0], [0.5], [1], [0.2]], y = [0.2, 0.8, 0.5, 0.3], sigma = [0.5, 2]; the values were computed
by hand from the paper's formulas (OKS++: Theorem 3.1; IOKS: Algorithm 2 with eq. (4)-(6); OKS:
Algorithm 1 with Remark 1) in the spec's prototype and are checked row by row here.
"""

import numpy as np
import pytest

from skonline.kernel_selection import KernelSelectionRegressor

from _paper import paper

X = np.array([[0.0], [0.5], [1.0], [0.2]])
Y = np.array([0.2, 0.8, 0.5, 0.3])
CHOICES = [0, 1, 0, 1]


class _Forced(KernelSelectionRegressor):
    """The same estimator with the kernel choices imposed through the private test hook."""

    def _forced_kernels(self, n_samples, n_heads):
        t = self.n_samples_seen_
        return np.array(CHOICES[t : t + n_samples], dtype=np.int64).reshape(-1, 1)


def _run(**params):
    """Learn the four rows one by one; record the quantities of the trace after each row."""
    est = paper(_Forced, sigmas=(0.5, 2.0), random_state=0, **params)
    rows = []
    prev_loss = 0.0
    for t in range(4):
        p_before = est.p_.copy() if t else np.array([0.5, 0.5])
        f = est.partial_fit_predict(X[t : t + 1], Y[t : t + 1])[0]
        I = CHOICES[t]
        _, coef = est.support_vectors(kernel=I)  # no projection happens in these traces
        rows.append(dict(
            p_t=p_before, f=f, lam=est.step_sizes_[I], coef=coef[-1], norm2=est.norms_[I] ** 2,
            q=est.q_, p=est.p_, delta=est.delta_, eta=est.eta_, C=est._C_[0],
            loss=est.cumulative_loss_ - prev_loss,
        ))
        prev_loss = est.cumulative_loss_
    return est, rows


def _check(rows, table, keys):
    for row, ref in zip(rows, table):
        for k in keys:
            np.testing.assert_allclose(row[k], ref[k], rtol=0, atol=1e-8, err_msg=k)


def test_golden_okspp_square():
    est, rows = _run(algorithm="oks++", loss="squared")
    table = [
        dict(p_t=[0.5, 0.5], f=0.0, loss=0.04, lam=0.2946278255, coef=0.2357022604, norm2=0.0555555556,
             C=0.08, delta=0.5, eta=1.1755306757, q=[0.4765066985, 0.5234933015], p=[0.4882533492, 0.5117466508]),
        dict(p_t=[0.4882533492, 0.5117466508], f=0.0, loss=0.64, lam=0.2040960801, coef=0.6381160046,
             norm2=0.4071920354, C=1.3306188346, delta=0.5, eta=0.8722828047, q=[0.7351888901, 0.2648111099],
             p=[0.617594445, 0.382405555]),
        dict(p_t=[0.617594445, 0.382405555], f=0.0318988322, loss=0.2191187033, lam=0.2556176788,
             coef=0.3874870797, norm2=0.2304225631, C=1.6854126724, delta=0.5, eta=0.8509392806,
             q=[0.666904481, 0.333095519], p=[0.5834522405, 0.4165477595]),
        dict(p_t=[0.5834522405, 0.4165477595], f=0.6309774294, loss=0.1095460588, lam=0.1931244109,
             coef=-0.3069027242, norm2=0.1140839336, C=1.9483982635, delta=0.5, eta=0.8458653443,
             q=[0.7135172911, 0.2864827089], p=[0.6067586456, 0.3932413544]),
    ]
    _check(rows, table, ["p_t", "f", "loss", "lam", "coef", "norm2", "C", "delta", "eta", "q", "p"])
    # every norm is below U = 1: no projection happened, the tracked norm is the exact one
    vecs, coef = est.support_vectors(kernel=0)
    K = np.exp(-((vecs - vecs.T) ** 2) / (2 * 0.5**2))
    np.testing.assert_allclose(coef @ K @ coef, est.norms_[0] ** 2, rtol=1e-12)


@pytest.mark.filterwarnings("ignore:horizon=4")
def test_golden_ioks_absolute():
    est, rows = _run(algorithm="ioks", loss="absolute", horizon=4)
    table = [
        dict(p_t=[0.5, 0.5], f=0.0, loss=0.2, lam=0.3162277660, coef=0.6324555320, norm2=0.4,
             C=0.0407685988, q=[0.4720965485, 0.5279034515], p=[0.4819619084, 0.5180380916]),
        dict(p_t=[0.4819619084, 0.5180380916], f=0.0, loss=0.8, lam=0.3252556394, coef=0.6278604694,
             norm2=0.3942087690, q=[0.58153692, 0.41846308], p=[0.5527092655, 0.4472907345]),
        dict(p_t=[0.5527092655, 0.4472907345], f=0.0855935486, loss=0.4144064514, lam=0.2458337585,
             coef=0.4447795139, norm2=0.6739693299, q=[0.526108336, 0.473891664], p=[0.5168776453, 0.4831223547]),
        dict(p_t=[0.5168776453, 0.4831223547], f=0.6208366223, loss=0.3208366223, lam=0.2355629601,
             coef=-0.4875844759, norm2=0.0265267919, q=[0.5699614713, 0.4300385287], p=[0.5452263559, 0.4547736441]),
    ]
    _check(rows, table, ["p_t", "f", "loss", "lam", "coef", "norm2", "q", "p"])
    # ctilde of each round (eq. (4)): the increments of the loss estimates
    L = [r["C"] for r in rows]
    np.testing.assert_allclose(np.diff([0.0] + L), [0.0407685988, 0.1624769774, 0.0835758779, 0.0656260770],
                               atol=1e-8)
    np.testing.assert_allclose(est.eta_, [4.4057364210, 4.4057364210], atol=1e-8)  # never increased
    np.testing.assert_allclose(est._rho_[0], [4.0, 4.0])
    np.testing.assert_allclose(est.delta_, 0.3535533906, atol=1e-10)


def test_golden_oks_square():
    est, rows = _run(algorithm="oks", loss="squared", horizon=4)
    table = [
        dict(p_t=[0.5, 0.5], f=0.0, loss=0.04, coef=6.2996052495, q=[0.4962185922, 0.5037814078],
             p=[0.4992198976, 0.5007801024]),
        dict(p_t=[0.4992198976, 0.5007801024], f=0.0, loss=0.64, coef=25.1591675424,
             q=[0.5563870623, 0.4436129377], p=[0.5116326213, 0.4883673787]),
        dict(p_t=[0.5116326213, 0.4883673787], f=0.8525588607, loss=0.1242977503, coef=-10.8524239724,
             q=[0.5450221042, 0.4549778958], p=[0.5092880364, 0.4907119636]),
        dict(p_t=[0.5092880364, 0.4907119636], f=24.8777130575, loss=604.0639791344, coef=-788.8022999642,
             q=[1.0, 6.9168e-102], p=[0.603149737, 0.396850263]),
    ]
    _check(rows, table, ["p_t", "f", "loss", "coef", "q", "p"])
    np.testing.assert_allclose(rows[-1]["q"][1], 6.9168e-102, rtol=1e-4)
    np.testing.assert_allclose([est.delta_, est.eta_, est.step_sizes_[0]],
                               [0.7937005260, 0.1890739926, 7.8745065618], atol=1e-9)
