"""``python -m skonline`` / ``skonline``: a short prequential tour of the online learners.

Runs on data bundled with scikit-learn (no download) and prints one results table: for each
dataset and learner, the progressive (predict-then-learn) score over one pass, on the raw features
and on features rescaled column-wise by random factors 10^U(-3, 3).
"""

import argparse
import sys
import time
import warnings


def _datasets():
    import numpy as np
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits, load_wine

    rng = np.random.default_rng(0)
    out = []
    for name, loader, task in [
        ("breast_cancer", load_breast_cancer, "clf"),
        ("wine", load_wine, "clf"),
        ("digits", load_digits, "clf"),
        ("diabetes", load_diabetes, "reg"),
    ]:
        X, y = loader(return_X_y=True)
        p = rng.permutation(len(y))
        out.append((name, X[p].astype(float), y[p], task))
    return out


def _learners(task):
    from sklearn.linear_model import SGDClassifier, SGDRegressor

    from .linear_model import ScaleInvariantClassifier, ScaleInvariantRegressor

    if task == "clf":
        return [
            ("ScaleInvariant(coordinate)", ScaleInvariantClassifier()),
            ("ScaleInvariant(full)", ScaleInvariantClassifier(invariance="full")),
            ("SGDClassifier (sklearn)", SGDClassifier(random_state=0)),
        ]
    return [
        ("ScaleInvariant(coordinate)", ScaleInvariantRegressor()),
        ("ScaleInvariant(full)", ScaleInvariantRegressor(invariance="full")),
        ("SGDRegressor (sklearn)", SGDRegressor(random_state=0)),
    ]


def _prequential(est, X, y, task, classes):
    """Predict each row, then learn it (SGD has no partial_fit_predict: row by row)."""
    import numpy as np

    if hasattr(est, "partial_fit_predict"):
        kw = {"classes": classes} if task == "clf" else {}
        return est.partial_fit_predict(X, y, **kw)
    pred = np.empty_like(y, dtype=float)
    for i in range(len(y)):
        if i == 0:
            pred[i] = classes[0] if task == "clf" else 0.0
        else:
            pred[i] = est.predict(X[i : i + 1])[0]
        if task == "clf":
            est.partial_fit(X[i : i + 1], y[i : i + 1], classes=classes)
        else:
            est.partial_fit(X[i : i + 1], y[i : i + 1])
    return pred


def tour(out=sys.stdout):
    """Run the tour and print the table; returns the rows."""
    import numpy as np
    from sklearn.base import clone

    rng = np.random.default_rng(1)
    rows = []
    for name, X, y, task in _datasets():
        scale = 10.0 ** rng.uniform(-3, 3, size=X.shape[1])
        classes = np.unique(y) if task == "clf" else None
        for lname, est in _learners(task):
            scores = []
            t0 = time.perf_counter()
            for Xv in (X, X * scale):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    pred = _prequential(clone(est), Xv, y, task, classes)
                if task == "clf":
                    scores.append(float(np.mean(pred == y)))
                else:
                    scores.append(float(np.mean(np.abs(pred - y))))
            rows.append((name, len(y), X.shape[1], lname, scores[0], scores[1], time.perf_counter() - t0))
    print("skonline tour: one prequential pass (predict each row, then learn it)", file=out)
    print("score: online accuracy (classification) / online mean absolute error (regression)\n", file=out)
    header = f"| {'dataset':<14}| {'n':>5} | {'d':>3} | {'learner':<27}| {'raw':>9} | {'rescaled':>9} | {'seconds':>7} |"
    print(header, file=out)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|", file=out)
    for r in rows:
        print(f"| {r[0]:<14}| {r[1]:>5} | {r[2]:>3} | {r[3]:<27}| {r[4]:>9.4g} | {r[5]:>9.4g} | {r[6]:>7.2f} |", file=out)
    print("\nrescaled: each feature multiplied by 10^U(-3,3). The scale-invariant learners give the same", file=out)
    print("score on both; SGD's depends on the scale.", file=out)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="skonline", description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", default="tour", choices=["tour"], help="what to run (default: tour)")
    args = parser.parse_args(argv)
    if args.command == "tour":
        tour()
    return 0


if __name__ == "__main__":
    sys.exit(main())
