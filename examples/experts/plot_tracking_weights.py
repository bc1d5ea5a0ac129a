"""
=================================================
Tracking the best expert: weights over time
=================================================

Five experts forecast a stream whose best expert changes: expert 0 is best for the first third,
expert 3 for the second, expert 1 for the last. The losses of the good expert are small (0.05 on
average against 0.5 for the others), the regime where :class:`~skonline.experts.PCS` (Prod on
the clipped simplex, Lu & Zhang) has its second-order guarantee.

We compare the weights played by :class:`~skonline.experts.Hedge`, which does not track (once an
expert's weight has collapsed it recovers slowly), with :class:`~skonline.experts.PCS` and
:class:`~skonline.experts.FixedShare`, which keep every weight above a floor and follow the
switches. The tracking regret is measured against the best sequence of experts with two switches
(exact dynamic programme).
"""

# %%
# A stream with two switches of the best expert
# ----------------------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skonline.evaluation import tracking_regret
from skonline.experts import PCS, FixedShare, Hedge
from skonline.plotting import plot_regret, plot_weights

rng = np.random.default_rng(0)
T, K, S = 3000, 5, 3
best = np.repeat([0, 3, 1], T // 3)
mean = np.full((T, K), 0.5)
mean[np.arange(T), best] = 0.05
L = (rng.uniform(size=(T, K)) < mean).astype(float)  # Bernoulli losses in {0, 1}

rules = {
    "Hedge": Hedge(horizon=T),
    "PCS (eta = 1/2)": PCS(eta=0.5, n_segments=S, horizon=T),
    "Fixed Share": FixedShare(n_segments=S, horizon=T),
}
weights = {name: rule.partial_fit_predict(L) for name, rule in rules.items()}
for name, W in weights.items():
    print(f"{name:16s} tracking regret (S = {S}): {tracking_regret(L, W, n_segments=S):7.1f}")

# %%
# The weights played at each round
# --------------------------------
# Stacked areas: each round's weights sum to one. Hedge stays on expert 0 long after the first
# switch; PCS and Fixed Share move to the new best expert within a few dozen rounds.
names = [f"expert {i}" for i in range(K)]
fig, axes = plt.subplots(3, 1, figsize=(8, 7), sharex=True)
for ax, (name, W) in zip(axes, weights.items()):
    plot_weights(W, expert_names=names, ax=ax)
    ax.set_title(name)
    if ax is not axes[0]:
        ax.get_legend().remove()
fig.tight_layout()

# %%
# Regret against the best expert so far
# -------------------------------------
# The regret against the best *single* expert (in hindsight, on each prefix) becomes negative
# for the tracking rules: following the switches beats every fixed expert.
fig, ax = plt.subplots(figsize=(8, 3.5))
for k, (name, W) in enumerate(weights.items()):
    plot_regret(L, W, ax=ax, label=name, color=f"C{k}")
ax.set_title("cumulative regret against the best fixed expert")
fig.tight_layout()
plt.show()
