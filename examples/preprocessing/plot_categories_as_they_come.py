"""
=====================================================
Categories that appear during the stream
=====================================================

A raw table arrives row by row: a string column whose categories are not known up front (a new
device model is released in the middle of the stream), a column with ``'?'`` for a missing
value, and numbers in their own units. :class:`~skonline.compose.OnlineColumnTransformer` with
:class:`~skonline.preprocessing.OnlineOneHotEncoder` (and
:class:`~skonline.preprocessing.OnlineImputer` for the ``'?'``) learns the categories as they
come: a category first seen at row :math:`t` has its own column from row :math:`t + 1` on, in a
width fixed from the first row, so the learner behind it keeps its number of features.

We compare, all with :class:`~skonline.linear_model.ScaleInvariantClassifier` learning
prequentially (each row predicted, then learned):

* the online column transformer;
* scikit-learn's :class:`~sklearn.preprocessing.OneHotEncoder` fitted on the first 500 rows of
  the stream (what is known when the stream starts): a later category is all zeros for good;
* the same encoder fitted on all rows beforehand (the categories of the future known in
  advance, which no stream offers).
"""

# %%
# A stream of raw rows
# --------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder

from skonline.compose import make_online_column_transformer
from skonline.linear_model import ScaleInvariantClassifier
from skonline.pipeline import make_online_pipeline
from skonline.preprocessing import OnlineImputer, OnlineOneHotEncoder

rng = np.random.default_rng(0)
n = 6000
t = np.arange(n)
# device models: two at first, a third from row 2,000, a fourth from row 4,000 (each new one
# takes most of the traffic and has its own effect on the label)
devices = np.where(t < 2000, rng.choice(["d1", "d2"], n),
                   np.where(t < 4000, rng.choice(["d1", "d2", "d3"], n, p=[0.2, 0.2, 0.6]),
                            rng.choice(["d1", "d2", "d3", "d4"], n, p=[0.1, 0.1, 0.3, 0.5])))
effect = {"d1": -1.0, "d2": 0.0, "d3": 1.5, "d4": -2.0}
plans = rng.choice(["free", "pro", "team", "?"], n, p=[0.5, 0.25, 0.15, 0.1])  # '?': missing
plan_effect = {"free": -0.5, "pro": 0.5, "team": 1.0, "?": 0.0}
age = rng.integers(18, 80, n).astype(float)
usage = rng.lognormal(3.0, 1.0, n)  # hours: another unit
score = (np.array([effect[d] for d in devices]) + np.array([plan_effect[p] for p in plans])
         + (age - 45) / 20 + 0.5 * np.log(usage) - 1.5)
y = (rng.random(n) < 1 / (1 + np.exp(-2 * score))).astype(int)
X = np.empty((n, 4), dtype=object)
X[:, 0], X[:, 1], X[:, 2], X[:, 3] = devices, plans, age, usage

# %%
# Three ways to encode the stream
# -------------------------------
# Columns 0 and 1 are strings; 2 and 3 pass through as numbers. The online column transformer
# imputes the plan's ``'?'`` with the most frequent plan so far, then one-hot encodes both string
# columns; the learner sees ``2 * 16 + 2`` columns from the first row on.


def online(chunk=100):
    ct = make_online_column_transformer(
        (OnlineOneHotEncoder(), [0]),
        (make_online_pipeline(OnlineImputer(missing_values="?", strategy="most_frequent"),
                              OnlineOneHotEncoder()), [1]),
        remainder="passthrough")
    model = make_online_pipeline(ct, ScaleInvariantClassifier())
    pred = np.concatenate([model.partial_fit_predict(X[s:s + chunk], y[s:s + chunk], classes=[0, 1])
                           for s in range(0, n, chunk)])
    return pred, model


def fitted_on(rows, chunk=100):
    ct = ColumnTransformer([("ohe", OneHotEncoder(handle_unknown="ignore", sparse_output=False), [0, 1])],
                           remainder="passthrough").fit(X[rows])
    Z = ct.transform(X).astype(float)
    clf = ScaleInvariantClassifier()
    return np.concatenate([clf.partial_fit_predict(Z[s:s + chunk], y[s:s + chunk], classes=[0, 1])
                           for s in range(0, n, chunk)])


pred_online, model = online()
preds = {
    "online column transformer": pred_online,
    "OneHotEncoder fitted on the first 500 rows": fitted_on(slice(0, 500)),
    "OneHotEncoder fitted on all rows beforehand": fitted_on(slice(0, n)),
}
for name, pred in preds.items():
    print(f"{name:45s} accuracy {np.mean(pred == y):.3f}, after row 4,000: {np.mean(pred[4000:] == y[4000:]):.3f}")

# %%
# The categories the encoder learned, in the order they came, and its fixed output width:
encoder = model[0].named_transformers_["onlineonehotencoder"]
print(encoder.categories_[0], "output columns:", model[0].transform(X[:1]).shape[1])

# %%
# Accuracy over the stream
# ------------------------
# Accuracy over windows of 250 rows. The encoder fitted on the first rows never sees d3 and d4:
# after they arrive its learner cannot tell them apart from the other devices. The online encoder
# gives each its column from the row after its first and follows the encoder that knew the
# future.
window = 250
fig, ax = plt.subplots(figsize=(7, 3.5))
for name, pred in preds.items():
    acc = np.convolve(pred == y, np.ones(window) / window, mode="valid")
    ax.plot(np.arange(window, n + 1), acc, label=name)
for start, label in ((2000, "d3 appears"), (4000, "d4 appears")):
    ax.axvline(start, color="grey", ls=":")
    ax.text(start + 40, 0.96, label, color="grey")
ax.set_xlabel("row of the stream")
ax.set_ylabel(f"accuracy (last {window} rows)")
ax.set_ylim(0.5, 1.0)
ax.legend(loc="lower left", fontsize=8)
fig.tight_layout()
plt.show()
