"""Plots of a prequential pass: running losses, kernel probabilities, per-group risks."""

import numpy as np

from ._experts import _axes


def plot_progressive_loss(losses, *, log_x=True, ylim=None, styles=None, ax=None):
    """Running mean of per-row prequential losses, one line per learner.

    Parameters
    ----------
    losses : dict of str to array-like of shape (n_rows,)
        ``label -> loss of each row``, each row predicted before it was learned (e.g. the squared
        error of :func:`skonline.evaluation.prequential_predictions`).
    log_x : bool, default=True
        Logarithmic row axis (the first rows, where learners differ most, stay visible).
    ylim : (float, float), default=None
        Limits of the loss axis; ``None``: matplotlib's choice.
    styles : dict of str to dict, default=None
        Keyword arguments of ``ax.plot`` per label (line style, colour, width).
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
    >>> from skonline.plotting import plot_progressive_loss
    >>> ax = plot_progressive_loss({"constant": np.ones(50), "learning": 1 / np.arange(1, 51)})
    >>> [line.get_label() for line in ax.get_lines()]
    ['constant', 'learning']
    """
    ax = _axes(ax)
    styles = styles or {}
    for label, values in losses.items():
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 1:
            raise ValueError(f"losses[{label!r}] must be 1-D; got shape {values.shape}.")
        t = np.arange(1, len(values) + 1)
        ax.plot(t, np.cumsum(values) / t, label=label, **{"lw": 1.4, **styles.get(label, {})})
    if log_x:
        ax.set_xscale("log")
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_xlabel("rows seen")
    ax.set_ylabel("running mean loss")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def plot_kernel_probabilities(q, sigmas, *, rows_seen=None, ax=None):
    """The kernel-selection distribution over candidate kernels as it evolves, stacked.

    Parameters
    ----------
    q : array-like of shape (n_snapshots, n_kernels)
        The probabilities ``q_`` of a kernel-selection learner recorded after successive chunks.
    sigmas : array-like of shape (n_kernels,)
        The candidate Gaussian bandwidths (legend labels).
    rows_seen : array-like of shape (n_snapshots,), default=None
        Rows learned at each snapshot; ``None``: 1, 2, ...
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
    >>> from skonline.plotting import plot_kernel_probabilities
    >>> q = np.array([[0.5, 0.5], [0.3, 0.7], [0.1, 0.9]])
    >>> ax = plot_kernel_probabilities(q, [0.5, 2.0], rows_seen=[100, 200, 300])
    >>> [t.get_text() for t in ax.get_legend().get_texts()]
    ['sigma = 0.5', 'sigma = 2']
    """
    import matplotlib.pyplot as plt

    q = np.asarray(q, dtype=np.float64)
    sigmas = np.asarray(sigmas, dtype=np.float64)
    if q.ndim != 2 or q.shape[1] != sigmas.shape[0]:
        raise ValueError(f"q must have shape (n_snapshots, {sigmas.shape[0]}); got {q.shape}.")
    ax = _axes(ax)
    t = np.arange(1, q.shape[0] + 1) if rows_seen is None else np.asarray(rows_seen)
    colors = plt.cm.viridis(np.linspace(0, 0.95, len(sigmas)))
    ax.stackplot(t, q.T, colors=colors, labels=[f"sigma = {s:g}" for s in sigmas])
    ax.set_ylim(0, 1)
    ax.set_xlabel("rows seen")
    ax.set_ylabel("kernel probability q")
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize="small")
    return ax


def plot_group_risks(risks, group_names, *, ax=None):
    """Risk per group for several models, side by side (group DRO vs ERM, for instance).

    Parameters
    ----------
    risks : dict of str to array-like of shape (n_groups,)
        ``model label -> risk of each group`` (e.g. held-out log-loss per group).
    group_names : list of str
        Names of the groups (tick labels).
    ax : matplotlib Axes, default=None
        Where to draw (a new figure by default).

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from skonline.plotting import plot_group_risks
    >>> ax = plot_group_risks({"DRO": [0.4, 0.5], "ERM": [0.2, 0.9]}, ["a", "b"])
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['a', 'b']
    """
    names = [str(n) for n in group_names]
    ax = _axes(ax)
    xs = np.arange(len(names))
    width = 0.8 / max(len(risks), 1)
    for j, (label, values) in enumerate(risks.items()):
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (len(names),):
            raise ValueError(f"risks[{label!r}] must have one value per group ({len(names)}).")
        ax.bar(xs + (j - (len(risks) - 1) / 2) * width, values, width=width, label=label)
    ax.set_xticks(xs)
    ax.set_xticklabels(names, rotation=20, fontsize="small")
    ax.set_ylabel("risk")
    ax.legend(fontsize="small")
    return ax
