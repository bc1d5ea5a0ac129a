"""Taylor-expansion features of the Gaussian kernel (Jézéquel, Gaillard & Rudi, NeurIPS 2019)."""

from numbers import Integral, Real

import numpy as np
from scipy.special import comb
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval

from ..base import FixedMapMixin
from ..exceptions import DataAdviceWarning
from ..utils import _scaling
from ..utils._online_kernel import taylor_tables, taylor_transform
from ..utils._warnings import warn

__all__ = ["TaylorFeatures"]

#: above this many output features, the AWV state (r x r floats) stops being practical
_WARN_N_OUTPUT = 20_000


class TaylorFeatures(FixedMapMixin, TransformerMixin, BaseEstimator):
    r"""Taylor-expansion features of the Gaussian kernel: an orthonormal basis, truncated.

    For the Gaussian kernel :math:`k(x, x') = \exp(-\|x - x'\|^2 / (2\sigma^2))` the functions

    .. math::
        g_k(x) = e^{-\|x\|^2/(2\sigma^2)} \prod_{i=1}^d \frac{(x_i/\sigma)^{k_i}}{\sqrt{k_i!}},
        \qquad k \in \mathbb{N}_0^d,

    form an orthonormal basis of its RKHS (Steinwart et al. 2006) and
    :math:`k(x, x') = \sum_k g_k(x) g_k(x')`. This transformer keeps every multi-index of total
    degree :math:`|k| \le M` (``degree``), i.e. :math:`\binom{M + d}{d}` features, so that

    .. math::
        \langle g(x), g(x') \rangle = e^{-(\|x\|^2 + \|x'\|^2)/(2\sigma^2)}
        \sum_{j=0}^{M} \frac{(x^\top x' / \sigma^2)^j}{j!},

    the Gaussian kernel with its exponential :math:`e^{x^\top x'/\sigma^2}` truncated at order
    :math:`M`. For :math:`\|x\|, \|x'\| \le R` the error is at most
    :math:`(R/\sigma)^{2M+2} / (M+1)!` (paper's Lemma 13). The approximation is centred at the
    origin and degrades away from it: :math:`\|g(x)\|^2 = P[\mathrm{Poisson}(\|x\|^2/\sigma^2)
    \le M]`; scale the inputs (e.g. to :math:`[-1, 1]^d`) and pick :math:`\sigma` accordingly.

    Used with a linear AWV forecaster on top, this is the paper's PKAWV-Taylor
    (:class:`~skonline.kernel_ridge.PKAWVRegressor` with ``features='taylor'``).

    The map is data independent: :meth:`fit` only records the input dimension. Features are
    computed by the recursion :math:`g_{k + e_i} = g_k\, z_i / \sqrt{k_i + 1}`
    (:math:`z = x/\sigma`), which cannot overflow (every intermediate value is itself a feature,
    bounded by 1); rows whose :math:`\|z\|^2/2` exceeds 700 are evaluated in the log domain.

    Parameters
    ----------
    degree : int, default=2
        Maximal total degree :math:`M` of the multi-indices (the paper uses 2, 3 or 4 in its
        experiments; its theory asks for :math:`M \ge \max(8R^2/\sigma^2, 2\log(n/(\lambda \wedge 1)))`).
    sigma : float, default=1.0
        Bandwidth :math:`\sigma` of the Gaussian kernel. In scikit-learn's ``rbf_kernel``
        parametrisation, ``gamma = 1 / (2 sigma**2)`` (``sigma=1`` is ``gamma=0.5``).

    Attributes
    ----------
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.
    powers_ : ndarray of shape (n_output_features_, n_features_in_)
        Multi-index :math:`k` of each output feature, in ``PolynomialFeatures`` order.
    n_output_features_ : int
        :math:`\binom{M + d}{d}`.

    See Also
    --------
    OnlineNystroem : data-dependent features of any kernel, with a dictionary grown online.
    sklearn.kernel_approximation.RBFSampler : random Fourier features of the same kernel.

    References
    ----------
    R. Jézéquel, P. Gaillard, A. Rudi. Efficient online learning with kernels for adversarial large
    scale problems. NeurIPS 2019 (Section 3.1, eq. 6, Lemmas 11-13).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from skonline.kernel_approximation import TaylorFeatures
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, size=(5, 2))
    >>> tf = TaylorFeatures(degree=6, sigma=1.0).fit(X)
    >>> Z = tf.transform(X)
    >>> Z.shape
    (5, 28)
    >>> bool(np.abs(Z @ Z.T - rbf_kernel(X, gamma=0.5)).max() < 1e-6)
    True
    >>> tf.get_feature_names_out()[:4].tolist()
    ['1', 'x0', 'x1', 'x0^2']
    """

    _parameter_constraints = {
        "degree": [Interval(Integral, 0, None, closed="left")],
        "sigma": [Interval(Real, 0, None, closed="neither")],
    }

    _fitted_attribute = "powers_"
    _transform_order = "C"

    def __init__(self, degree=2, sigma=1.0):
        self.degree = degree
        self.sigma = sigma

    def _set_up(self, d):
        """Record the multi-indices (the map itself is data independent)."""
        r = int(comb(self.degree + d, d, exact=True))
        if r > _WARN_N_OUTPUT:
            warn(
                f"TaylorFeatures(degree={self.degree}) on {d} features gives {r} output features; "
                "an AWV forecaster on top keeps an r x r matrix.",
                DataAdviceWarning,
            )
        self.powers_, self._parent, self._var, self._inv_sqrt = taylor_tables(d, int(self.degree))
        self.n_output_features_ = r

    def _transform(self, X):
        """Taylor features of the rows of ``X``."""
        if not hasattr(self, "_parent"):  # e.g. after a partial unpickle of an older object
            _, self._parent, self._var, self._inv_sqrt = taylor_tables(self.n_features_in_, int(self.degree))
        out = np.empty((X.shape[0], self.n_output_features_))
        for a, b, Xb in _scaling.dense_row_blocks(X):  # CSR rows: dense blocks of bounded size
            taylor_transform(
                Xb, np.zeros(X.shape[1]), 1.0 / float(self.sigma), self._parent, self._var, self._inv_sqrt, out[a:b]
            )
        return out

    def _feature_names_out(self, input_features):
        """The monomials' names as ``PolynomialFeatures`` gives them: feature ``'x0^2 x1'`` is
        :math:`g_{(2,1)}(x)`, the monomial :math:`z_0^2 z_1 / \\sqrt{2!\\,1!}` times
        :math:`e^{-\\|z\\|^2/2}`."""
        names = []
        for row in self.powers_:
            inds = np.flatnonzero(row)
            if inds.size == 0:
                names.append("1")
                continue
            names.append(
                " ".join(
                    f"{input_features[i]}^{row[i]}" if row[i] != 1 else str(input_features[i]) for i in inds
                )
            )
        return names
