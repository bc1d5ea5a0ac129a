"""skonline.plotting: the plots draw what they claim, and matplotlib stays optional."""

import subprocess
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from skonline.experts import FixedShare, Hedge  # noqa: E402
from skonline.plotting import plot_cumulative_losses, plot_regret, plot_weights  # noqa: E402


@pytest.fixture
def stream():
    rng = np.random.default_rng(0)
    L = rng.uniform(size=(80, 3))
    L[40:, 1] = np.nan
    W = FixedShare().partial_fit_predict(L)
    return L, W


def test_plot_weights_stacks_to_one(stream):
    import matplotlib.pyplot as plt

    L, W = stream
    ax = plot_weights(W, expert_names=["a", "b", "c"])
    polys = ax.collections
    assert len(polys) == 3
    # the stack reaches exactly 1 and never exceeds it; the first layer is expert a's weight
    top = polys[-1].get_paths()[0].vertices
    assert top[:, 1].max() == pytest.approx(1.0) and top[:, 1].max() <= 1 + 1e-12
    first = polys[0].get_paths()[0].vertices
    assert first[:, 1].max() == pytest.approx(W[:, 0].max())
    ax2 = plot_weights(W, stacked=False)
    np.testing.assert_allclose(ax2.get_lines()[2].get_ydata(), W[:, 2])
    with pytest.raises(ValueError, match="names"):
        plot_weights(W, expert_names=["a"])
    plt.close("all")


def test_plot_cumulative_losses_and_regret(stream):
    import matplotlib.pyplot as plt

    L, W = stream
    ax = plot_cumulative_losses(L, W)
    lines = ax.get_lines()
    lh = np.nansum(W * L, axis=1)
    np.testing.assert_allclose(lines[-1].get_ydata(), np.cumsum(lh))
    np.testing.assert_allclose(lines[0].get_ydata(), np.cumsum(L[:, 0]))
    # asleep rounds of expert 1 are charged the mixture's loss
    np.testing.assert_allclose(lines[1].get_ydata()[-1], np.sum(np.where(np.isnan(L[:, 1]), lh, L[:, 1])))
    ax = plot_regret(L, W, per_expert=True)
    reg = ax.get_lines()[0].get_ydata()
    Li = np.where(np.isnan(L), lh[:, None], L)
    np.testing.assert_allclose(reg, np.max(np.cumsum(lh[:, None] - Li, axis=0), axis=1))
    fig, axes = plt.subplots(1, 2)
    assert plot_weights(Hedge().partial_fit_predict(np.nan_to_num(L)), ax=axes[1]) is axes[1]
    plt.close("all")


def test_matplotlib_is_not_imported_by_skonline():
    code = (
        "import sys, skonline, skonline.experts, skonline.evaluation, skonline.plotting, skonline.utils; "
        "sys.exit('matplotlib' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
