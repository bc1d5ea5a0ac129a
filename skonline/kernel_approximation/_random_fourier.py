"""Random Fourier features of the Gaussian kernel, [cos, sin] form (Rahimi & Recht 2007)."""

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted

from ..base import FixedMapMixin, make_generator
from ..utils.validation import output_dtype, validate_X_predict

__all__ = ["RandomFourierFeatures", "MultiBandwidthFourierFeatures"]


def hash_columns(X, n_buckets, seed):
    """The columns of the CSR rows ``X`` hashed onto ``n_buckets`` buckets with random signs (a
    count sketch): column j goes to bucket b(j) with sign s(j), both from splitmix64(j, seed).

    Returns a CSR matrix of shape (n_samples, n_buckets) whose row i is ``sum_j X[i, j] s(j)
    e_{b(j)}``, with the entries in the order of ``X`` (two columns of a row may share a bucket:
    a CSR product sums them in that order). For the random Fourier features of the Gaussian kernel
    this makes the frequencies of columns j and j' equal (up to sign) when they share a bucket;
    squared distances are kept in expectation, E ||H x - H v||^2 = ||x - v||^2, with a relative
    variance of order 2 / n_buckets. A wide stream's random features (more columns than the memory
    of a Gaussian base would allow) read the hashed rows.
    """
    j = np.asarray(X.indices).astype(np.uint64)
    with np.errstate(over="ignore"):  # arithmetic modulo 2^64
        z = j + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    bucket = (z % np.uint64(n_buckets)).astype(np.int64)
    sign = 1.0 - 2.0 * (z >> np.uint64(63)).astype(np.float64)
    data = np.asarray(X.data, dtype=np.float64) * sign
    return sp.csr_matrix((data, bucket, np.asarray(X.indptr).astype(np.int64)), shape=(X.shape[0], int(n_buckets)))


def _cos_sin(P, sigma, D):
    a = P * (1.0 / sigma)
    return np.hstack([np.cos(a), np.sin(a)]) * (1.0 / math.sqrt(D))


class RandomFourierFeatures(FixedMapMixin, TransformerMixin, BaseEstimator):
    """Random Fourier features of the Gaussian kernel, in the [cos, sin] form.

    ``fit`` draws D frequencies w_j ~ N(0, sigma^-2 I_d); ``transform`` maps x to
    z(x) = D^(-1/2) [cos(w_1 . x), ..., cos(w_D . x), sin(w_1 . x), ..., sin(w_D . x)], so that
    ``E[z(x) . z(v)] = exp(-||x - v||^2 / (2 sigma^2))`` (Rahimi & Recht 2007; the map of Li & Liao
    2022, Appendix F). Dense and CSR input.

    Differences from :class:`sklearn.kernel_approximation.RBFSampler`:

    * features: ``[cos(W x), sin(W x)] / sqrt(D)`` with no random phase, versus RBFSampler's
      ``sqrt(2 / n) cos(W x + b)`` with ``b ~ U[0, 2 pi]``. Each (cos, sin) pair is exact on the
      diagonal: ``||z(x)||_2 = 1 = k(x, x)`` for every x, and the estimate
      z(x) . z(v) = mean_j cos(w_j . (x - v)) has no larger a variance than random-phase
      cosines with the same number of columns, and a much smaller one for wide kernels
      (Sutherland & Schneider, UAI 2015);
    * ``n_components`` counts frequencies D; the output has 2D columns (RBFSampler's
      ``n_components`` counts output columns, so compare RBFSampler(n_components=2D));
    * the bandwidth is sigma of ``exp(-||x - v||^2 / (2 sigma^2))``, i.e. RBFSampler's
      ``gamma = 1 / (2 sigma^2)``;
    * ``random_state`` seeds a :class:`numpy.random.Generator` (the same integer gives other
      frequencies than in RBFSampler).

    Parameters
    ----------
    sigma : float, default=1.0
        Bandwidth of the Gaussian kernel.
    n_components : int, default=100
        Number of frequencies D (the output has 2D features).
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the frequencies.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features, n_components)
        The frequencies as columns: W.T = base / sigma.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    See Also
    --------
    MultiBandwidthFourierFeatures : the same map for several bandwidths at once.
    sklearn.kernel_approximation.RBFSampler : cosine features with random phases.

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.kernel_approximation import RandomFourierFeatures
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(3, 5))
    >>> rff = RandomFourierFeatures(sigma=1.0, n_components=4000, random_state=0).fit(X)
    >>> Z = rff.transform(X)
    >>> Z.shape
    (3, 8000)
    >>> np.allclose((Z**2).sum(axis=1), 1.0)
    True
    >>> K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    >>> float(np.abs(Z @ Z.T - K).max()) < 0.05
    True
    >>> rff.get_feature_names_out()[[0, 4000]]
    array(['rff_cos0', 'rff_sin0'], dtype=object)
    """

    _parameter_constraints = {
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state", np.random.Generator],
    }

    _fitted_attribute = "random_weights_"

    def __init__(self, sigma=1.0, n_components=100, random_state=None):
        self.sigma = sigma
        self.n_components = n_components
        self.random_state = random_state

    def _set_up(self, n_features):
        """Draw the frequencies."""
        rng = make_generator(self.random_state)
        base = rng.standard_normal((n_features, self.n_components))
        self.random_weights_ = base / float(self.sigma)

    def _transform(self, X):
        """The 2 n_components random features of the rows of X."""
        P = np.asarray(safe_sparse_dot(X, self.random_weights_))
        return _cos_sin(P, 1.0, self.n_components)

    def _feature_names_out(self, names_in):
        """``rff_cos{j}`` then ``rff_sin{j}`` (the input names are only checked)."""
        return cos_sin_names("rff", self.n_components)


def cos_sin_names(prefix, D):
    """The names of the 2D [cos, sin] features: ``{prefix}_cos{j}``, then ``{prefix}_sin{j}``."""
    return [f"{prefix}_cos{j}" for j in range(D)] + [f"{prefix}_sin{j}" for j in range(D)]


class MultiBandwidthFourierFeatures(FixedMapMixin, TransformerMixin, BaseEstimator):
    """Random Fourier features of K Gaussian kernels (one block per bandwidth).

    The feature maps of the candidate kernels of online kernel selection: block k is the
    [cos, sin] map of :class:`RandomFourierFeatures` with bandwidth ``sigmas[k]`` and D
    frequencies. With ``shared_base=True`` one Gaussian matrix B of shape (n_features, D) is drawn
    and kernel k uses the frequencies B / sigma_k (the authors' code for RF-OKS++; the blocks are
    then coupled but each is an exact random-feature map of its kernel); with ``False`` each
    kernel gets an independent matrix (Algorithm 3 of Li & Liao 2022). Each block differs from
    :class:`sklearn.kernel_approximation.RBFSampler` as :class:`RandomFourierFeatures` does.

    Parameters
    ----------
    sigmas : array-like of float, default=(0.25, 0.5, 1, 2, 4, 8)
        The K bandwidths.
    n_components : int, default=100
        Frequencies per kernel D (each block has 2D features).
    shared_base : bool, default=True
        Share one base matrix between the kernels.
    random_state : int, RandomState instance, Generator or None, default=None

    Attributes
    ----------
    base_ : ndarray of shape (n_bases, n_features, n_components)
        Standard normal base matrices (n_bases = 1 if ``shared_base`` else K).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from skonline.kernel_approximation import MultiBandwidthFourierFeatures
    >>> X = np.random.default_rng(0).uniform(-1, 1, size=(4, 3))
    >>> m = MultiBandwidthFourierFeatures(sigmas=(0.5, 2.0), n_components=50, random_state=0).fit(X)
    >>> m.transform(X).shape
    (4, 200)
    >>> m.transform_kernel(X, 1).shape
    (4, 100)
    >>> m.get_feature_names_out()[[0, 100]]
    array(['rff0_cos0', 'rff1_cos0'], dtype=object)
    """

    _parameter_constraints = {
        "sigmas": ["array-like"],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "shared_base": ["boolean"],
        "random_state": ["random_state", np.random.Generator],
    }

    _fitted_attribute = "base_"

    def __init__(self, sigmas=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0), n_components=100, shared_base=True,
                 random_state=None):
        self.sigmas = sigmas
        self.n_components = n_components
        self.shared_base = shared_base
        self.random_state = random_state

    def _sigmas(self):
        s = np.asarray(self.sigmas, dtype=np.float64).ravel()
        if s.size == 0 or not np.all(np.isfinite(s)) or np.any(s <= 0):
            raise ValueError(f"sigmas must be a non-empty sequence of positive bandwidths; got {self.sigmas!r}.")
        return s

    def _set_up(self, n_features):
        """Draw the base matrices."""
        K = self._sigmas().size  # checks the bandwidths
        B = 1 if self.shared_base else K
        rng = make_generator(self.random_state)
        self.base_ = rng.standard_normal((B, n_features, self.n_components))

    def transform_kernel(self, X, kernel):
        """The 2D features of one kernel.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        kernel : int
            Index into ``sigmas``.

        Returns
        -------
        Z : ndarray of shape (n_samples, 2 * n_components)
        """
        check_is_fitted(self, "base_")
        s = self._sigmas()
        dtype = output_dtype(X)
        X = validate_X_predict(self, X, accept_sparse="csr", dtype=np.float64)
        k = int(kernel)
        if not 0 <= k < s.size:
            raise ValueError(f"kernel must be in [0, {s.size}); got {kernel!r}.")
        b = k if self.base_.shape[0] > 1 else 0
        return _cos_sin(np.asarray(safe_sparse_dot(X, self.base_[b])), s[k], self.n_components).astype(
            dtype, copy=False
        )

    def _transform(self, X):
        """The K blocks of 2 n_components features of the rows of X, concatenated."""
        s = self._sigmas()
        P = [np.asarray(safe_sparse_dot(X, self.base_[b])) for b in range(self.base_.shape[0])]
        return np.hstack([_cos_sin(P[k if len(P) > 1 else 0], s[k], self.n_components) for k in range(s.size)])

    def _feature_names_out(self, names_in):
        """``rff{k}_cos{j}``, ``rff{k}_sin{j}`` for kernel k (the input names are only checked)."""
        return [name for k in range(self._sigmas().size) for name in cos_sin_names(f"rff{k}", self.n_components)]
