"""Plots for expert aggregation: weights over time, cumulative losses, regret curves."""

import numpy as np

from ..evaluation._regret import _imputed


def _axes(ax):
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "skonline.plotting needs matplotlib: pip install 'skonline[plot]'"
        ) from exc
    _, ax = plt.subplots()
    return ax


def _names(K, expert_names):
    if expert_names is None:
        return [f"expert {i}" for i in range(K)]
    names = [str(n) for n in expert_names]
    if len(names) != K:
        raise ValueError(f"expert_names has {len(names)} names for {K} experts.")
    return names


def _rounds(n, start=1):
    return np.arange(start, start + n)


def plot_weights(W, *, expert_names=None, stacked=True, ax=None):
    """Weights of the experts over time, stacked (as in opera's weight plot).

    Parameters
    ----------
    W : array-like of shape (n_rounds, K)
        Weights played at each round, e.g. ``rule.partial_fit_predict(L)`` or the stacked
        ``weights_`` of an ensemble.
    expert_names : list of str, default=None
        Legend labels.
    stacked : bool, default=True
        Stacked areas (each round sums to one); ``False``: one line per expert.
    ax : matplotlib Axes, default=None
        Where to draw (a new figure by default).

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skonline.experts import PCS
    >>> from skonline.plotting import plot_weights
    >>> L = np.random.default_rng(0).uniform(size=(100, 3))
    >>> ax = plot_weights(PCS().partial_fit_predict(L), expert_names=["a", "b", "c"])
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['a', 'b', 'c']
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise ValueError(f"W must be 2-D (n_rounds, K); got shape {W.shape}.")
    ax = _axes(ax)
    names = _names(W.shape[1], expert_names)
    t = _rounds(W.shape[0])
    if stacked:
        ax.stackplot(t, W.T, labels=names, linewidth=0)
        ax.set_ylim(0, 1)
    else:
        for i, name in enumerate(names):
            ax.plot(t, W[:, i], label=name)
    ax.set_xlim(t[0], t[-1])
    ax.set_xlabel("round")
    ax.set_ylabel("weight")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def plot_cumulative_losses(L, W=None, *, expert_names=None, average=False, ax=None):
    """Cumulative losses of the experts and, given the weights, of the mixture.

    Parameters
    ----------
    L : array-like of shape (n_rounds, K)
        Losses of the experts (NaN: asleep; charged the mixture's loss when ``W`` is given).
    W : array-like of shape (n_rounds, K), default=None
        Weights played; adds the mixture's cumulative loss ``sum_t <W[t], L[t]>``.
    expert_names : list of str, default=None
    average : bool, default=False
        Plot the running average loss instead of the cumulative loss.
    ax : matplotlib Axes, default=None

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skonline.experts import Hedge
    >>> from skonline.plotting import plot_cumulative_losses
    >>> L = np.random.default_rng(0).uniform(size=(100, 2))
    >>> ax = plot_cumulative_losses(L, Hedge().partial_fit_predict(L))
    >>> len(ax.get_lines())
    3
    """
    L = np.asarray(L, dtype=np.float64)
    ax = _axes(ax)
    names = _names(L.shape[1], expert_names)
    t = _rounds(L.shape[0])
    if W is not None:
        lh, Li = _imputed(L, W)
    else:
        lh, Li = None, np.where(np.isnan(L), 0.0, L)
    div = t[:, None] if average else 1.0
    C = np.cumsum(Li, axis=0) / div
    for i, name in enumerate(names):
        ax.plot(t, C[:, i], label=name, linewidth=1)
    if lh is not None:
        ax.plot(t, np.cumsum(lh) / (t if average else 1.0), color="black", linewidth=2, label="mixture")
    ax.set_xlabel("round")
    ax.set_ylabel("average loss" if average else "cumulative loss")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def plot_regret(L, W, *, expert_names=None, per_expert=False, ax=None, **line_kw):
    """Regret curves: the mixture's cumulative loss minus the best expert's (in hindsight, on each
    prefix), and optionally minus each expert's.

    Parameters
    ----------
    L : array-like of shape (n_rounds, K)
        Losses (NaN: asleep, charged the mixture's loss).
    W : array-like of shape (n_rounds, K)
        Weights played.
    expert_names : list of str, default=None
    per_expert : bool, default=False
        Also draw ``sum_{s<=t} (<W[s], L[s]> - L[s, i])`` for every expert i.
    ax : matplotlib Axes, default=None
    **line_kw : dict
        Properties of the main regret line (e.g. ``label``, ``color``) for
        :meth:`matplotlib.axes.Axes.plot`.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import numpy as np
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skonline.experts import Hedge
    >>> from skonline.plotting import plot_regret
    >>> L = np.random.default_rng(0).uniform(size=(100, 2))
    >>> ax = plot_regret(L, Hedge().partial_fit_predict(L), per_expert=True)
    >>> [line.get_label() for line in ax.get_lines()][:3]
    ['regret vs best expert so far', 'vs expert 0', 'vs expert 1']
    """
    lh, Li = _imputed(L, W)
    ax = _axes(ax)
    names = _names(Li.shape[1], expert_names)
    t = _rounds(Li.shape[0])
    R = np.cumsum(lh[:, None] - Li, axis=0)
    kw = {"color": "black", "linewidth": 2, "label": "regret vs best expert so far", **line_kw}
    ax.plot(t, R.max(axis=1), **kw)
    if per_expert:
        for i, name in enumerate(names):
            ax.plot(t, R[:, i], linewidth=1, label=f"vs {name}")
    ax.axhline(0.0, color="grey", linewidth=0.5)
    ax.set_xlabel("round")
    ax.set_ylabel("cumulative regret")
    ax.legend(loc="upper left", fontsize="small")
    return ax
