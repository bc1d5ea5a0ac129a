"""
=====================================================
Learning without a learning rate or feature scaling
=====================================================

:class:`~skonline.linear_model.ScaleInvariantClassifier` implements the two scale-invariant
online learners of Kotłowski (ALT 2017). Their predictions do not change when a feature is
expressed in other units: with ``invariance='coordinate'`` (Algorithm 1) each feature can be
multiplied by any nonzero number, with ``invariance='full'`` (Algorithm 2) the features can go
through any invertible linear map.

We learn a stream of 4,000 rows drawn from a logistic model with 20 features, once with the
features as drawn (unit scale) and once with each column multiplied by a random factor
:math:`10^{U(-3, 3)}`, i.e. with units that differ by up to six orders of magnitude between
features. Each learner is evaluated prequentially: every row is predicted before it is learned.

The baseline is scikit-learn's :class:`~sklearn.linear_model.SGDClassifier` with the logistic
loss, learned with ``partial_fit``, with a learning-rate schedule that works well on the
unit-scale features (``learning_rate='invscaling', eta0=0.5``).
"""

# %%
# A logistic stream, and the same stream in other units
# ------------------------------------------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import SGDClassifier

from skonline.linear_model import ScaleInvariantClassifier

rng = np.random.default_rng(7)
n_samples, n_features = 4000, 20
X = rng.standard_normal((n_samples, n_features))
w_true = rng.standard_normal(n_features) * (rng.random(n_features) < 0.5)
y = (rng.random(n_samples) < 1.0 / (1.0 + np.exp(-X @ w_true))).astype(int)

units = 10.0 ** rng.uniform(-3, 3, size=n_features)  # one change of units per feature
X_rescaled = X * units
streams = {"unit scale": X, "rescaled": X_rescaled}

# %%
# Prequential decision values
# ---------------------------
# ``partial_fit_decision_function`` learns the stream and returns, for each row, the decision
# value computed *before* that row was learned, in one compiled pass. For SGD we do the same
# by hand, in chunks of 10 rows: predict the chunk, then learn it.


def skonline_online_scores(invariance, X):
    clf = ScaleInvariantClassifier(invariance=invariance)
    return clf.partial_fit_decision_function(X, y, classes=[0, 1])


def sgd_online_scores(X, chunk=10):
    clf = SGDClassifier(
        loss="log_loss", learning_rate="invscaling", eta0=0.5, alpha=1e-5, random_state=0
    )
    scores = np.zeros(n_samples)
    for start in range(0, n_samples, chunk):
        rows = slice(start, start + chunk)
        if start > 0:
            scores[rows] = clf.decision_function(X[rows])
        clf.partial_fit(X[rows], y[rows], classes=[0, 1])
    return scores


learners = {
    "ScaleInvariantClassifier, coordinate": lambda X: skonline_online_scores("coordinate", X),
    "ScaleInvariantClassifier, full": lambda X: skonline_online_scores("full", X),
    "SGDClassifier (log_loss)": sgd_online_scores,
}
scores = {(name, s): learn(Xs) for name, learn in learners.items() for s, Xs in streams.items()}

# %%
# The scale-invariant learners make the same predictions on both streams, up to rounding:

for name in learners:
    diff = np.max(np.abs(scores[name, "unit scale"] - scores[name, "rescaled"]))
    print(f"{name:38s} max |score(unit scale) - score(rescaled)| = {diff:.1e}")

# %%
# Progressive log-loss
# --------------------
# The running mean of the logistic loss :math:`\log(1 + e^{-y f(x)})` of the online
# predictions, for :math:`y \in \{-1, +1\}`, computed from the decision values (no clipping).

y_pm = 2 * y - 1
t = np.arange(1, n_samples + 1)
log_loss_true = np.mean(np.logaddexp(0, -y_pm * (X @ w_true)))

fig, ax = plt.subplots(figsize=(7.5, 4.5), layout="constrained")
colors = {name: f"C{k}" for k, name in enumerate(learners)}
for (name, stream), s in scores.items():
    running = np.cumsum(np.logaddexp(0, -y_pm * s)) / t
    ax.plot(
        t,
        running,
        color=colors[name],
        linestyle="-" if stream == "unit scale" else "--",
        linewidth=2.5 if stream == "unit scale" else 1.5,
        label=f"{name}, {stream}",
    )
    print(f"{name:38s} {stream:10s} mean online log-loss {running[-1]:10.3f}")
ax.axhline(log_loss_true, color="k", linewidth=0.8, linestyle=":", label="true model")
ax.set_yscale("log")
ax.set_xlabel("rows seen (t)")
ax.set_ylabel("mean online log-loss up to t")
ax.set_title("Changing the units of the features: SGD degrades, skonline does not move")
ax.legend(fontsize=8, loc="upper right")
plt.show()

# %%
# On the unit-scale stream the tuned SGD is the best of the three; after the change of units
# its loss grows by three orders of magnitude, because a single learning rate cannot suit
# features whose scales differ by :math:`10^6`. The dashed curves of both
# :class:`~skonline.linear_model.ScaleInvariantClassifier` variants lie exactly on their solid
# ones. The full-invariance variant (Algorithm 2, :math:`O(d^2)` per row) learns faster than
# the coordinate-wise one (Algorithm 1, :math:`O(d)` per row); it would also be unaffected by
# any invertible affine map of the features (rotations, mixtures of features, standardisation),
# not only by per-feature units. See :ref:`the user guide <linear_model>` for the details.
