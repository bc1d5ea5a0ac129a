"""Turn the original files into the cached ``<name>.npz`` layout.

Layout (the same as the offline copies described in the project's data
README, so such a folder can serve as a ready data home):

* ``X``, ``y``: the main (train) part; ``X_test``, ``y_test`` where the source
  has a test part (a9a, ijcnn1, adult).
* Dense ``X`` is float64 (adult: float32). Sparse ``X`` (a9a) is stored as
  ``X_data``, ``X_indices`` (int32), ``X_indptr`` (int64), ``X_shape`` (int64),
  and the same ``X_test_*`` keys.
* Binary labels are int64, regression targets float64.
* Optional ``feature_names``; adult also has ``race``, ``sex``, ``race_test``
  and ``sex_test`` (string arrays).

Every builder takes the list of :class:`~._remote.Fetched` files in the order
of ``_REMOTE_FILES[name]`` and returns a dict of arrays for ``np.savez``.
"""

import os
import tempfile

import numpy as np
import scipy.sparse as sp

from ._parsers import _parse_arff, _parse_csv, _parse_svmlight

__all__ = []  # private module


# --------------------------------------------------------------------------
# npz input / output
# --------------------------------------------------------------------------


def _sparse_parts(key, X):
    X = sp.csr_matrix(X)
    X.sort_indices()
    return {
        f"{key}_data": np.asarray(X.data, dtype=np.float64),
        f"{key}_indices": np.asarray(X.indices, dtype=np.int32),
        f"{key}_indptr": np.asarray(X.indptr, dtype=np.int64),
        f"{key}_shape": np.asarray(X.shape, dtype=np.int64),
    }


def _read_matrix(z, key):
    """Dense array ``z[key]`` or the CSR matrix stored as ``key_*`` parts."""
    if f"{key}_indptr" in z.files:
        return _csr_from_parts(
            z[f"{key}_data"], z[f"{key}_indices"], z[f"{key}_indptr"], z[f"{key}_shape"], key
        )
    return z[key]


def _csr_from_parts(data, indices, indptr, shape, key="X"):
    """A CSR matrix from stored parts, checked before scipy or compiled code reads them."""
    from ..utils.validation import check_csr_arrays

    shape = np.asarray(shape)
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or np.any(shape < 0):
        raise ValueError(f"{key}_shape must be two non-negative integers; got {shape!r}.")
    for part, a in (("data", data), ("indices", indices), ("indptr", indptr)):
        if a.ndim != 1:
            raise ValueError(f"{key}_{part} must be 1-D; got shape {a.shape}.")
    if indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu":
        raise ValueError(
            f"{key}_indices and {key}_indptr must be integers; got {indices.dtype} and {indptr.dtype}."
        )
    if data.dtype.kind not in "fiu":
        raise ValueError(f"{key}_data must be numbers; got {data.dtype}.")
    n_rows, n_cols = (int(v) for v in shape)
    check_csr_arrays(data, indices, indptr, (n_rows, n_cols))  # before scipy reads them
    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))


def _has_matrix(z, key):
    return key in z.files or f"{key}_indptr" in z.files


def _write_npz_atomic(path, arrays):
    """Write ``arrays`` with ``np.savez_compressed`` to a temporary file in the
    target folder, then rename it into place, so that ``path`` is either
    absent or complete."""
    directory, base = os.path.split(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{base}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def _int_labels(y, name, allowed):
    y = np.asarray(y, dtype=np.float64)
    values = set(np.unique(y).tolist())
    if not values <= set(allowed):
        raise ValueError(
            f"{name}: unexpected label values {sorted(values)}, expected a "
            f"subset of {sorted(allowed)}"
        )
    return y.astype(np.int64)


def _check_width(name, X, d):
    if X.shape[1] != d:
        raise ValueError(f"{name}: parsed {X.shape[1]} feature columns, expected {d}")


def _floats(rows, name):
    try:
        return np.array(rows, dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{name}: non-numeric or ragged rows ({exc})") from exc


# --------------------------------------------------------------------------
# LIBSVM sets
# --------------------------------------------------------------------------


def _libsvm(path, n_features):
    return _parse_svmlight(path, n_features=n_features, zero_based=False)


def _build_phishing(files):
    X, y = _libsvm(files[0].path, 68)
    return {"X": X.toarray(), "y": _int_labels(y, "phishing", {0, 1})}


def _build_cod_rna(files):
    X, y = _libsvm(files[0].path, 8)
    return {"X": X.toarray(), "y": _int_labels(y, "cod-rna", {-1, 1})}


def _build_a9a(files):
    X, y = _libsvm(files[0].path, 123)
    Xt, yt = _libsvm(files[1].path, 123)
    out = {"y": _int_labels(y, "a9a", {-1, 1}),
           "y_test": _int_labels(yt, "a9a", {-1, 1})}
    out.update(_sparse_parts("X", X))
    out.update(_sparse_parts("X_test", Xt))
    return out


def _build_ijcnn1(files):
    """train = ijcnn1.tr followed by ijcnn1.val; test = ijcnn1.t."""
    (Xtr, ytr), (Xva, yva), (Xt, yt) = (_libsvm(f.path, 22) for f in files)
    allowed = {-1, 1}
    return {
        "X": sp.vstack([Xtr, Xva]).toarray(),
        "y": _int_labels(np.concatenate([ytr, yva]), "ijcnn1", allowed),
        "X_test": Xt.toarray(),
        "y_test": _int_labels(yt, "ijcnn1", allowed),
    }


# --------------------------------------------------------------------------
# UCI CSV sets
# --------------------------------------------------------------------------

MAGIC04_FEATURES = ["fLength", "fWidth", "fSize", "fConc", "fConc1", "fAsym",
                    "fM3Long", "fM3Trans", "fAlpha", "fDist"]


def _build_magic04(files):
    """UCI magic04.data: 10 numeric columns then the class, g -> +1, h -> -1."""
    _, rows = _parse_csv(files[0].path)
    if any(len(r) != 11 for r in rows):
        raise ValueError("magic04: expected 11 values per row")
    mapping = {"g": 1, "h": -1}
    try:
        y = np.array([mapping[r[10]] for r in rows], dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"magic04: unknown class label {exc.args[0]!r}") from None
    X = _floats([r[:10] for r in rows], "magic04").reshape(len(rows), 10)
    return {"X": X, "y": y, "feature_names": np.array(MAGIC04_FEATURES)}


CASP_FEATURES = [f"F{i}" for i in range(1, 10)]


def _build_casp(files):
    """UCI CASP.csv, header RMSD,F1..F9: X = F1..F9, y = RMSD."""
    names, rows = _parse_csv(files[0].path, header=True)
    missing = [c for c in ["RMSD"] + CASP_FEATURES if c not in (names or [])]
    if missing:
        raise ValueError(f"casp: header {names} lacks columns {missing}")
    A = _floats(rows, "casp").reshape(len(rows), len(names))
    X = A[:, [names.index(c) for c in CASP_FEATURES]]
    y = A[:, names.index("RMSD")]
    return {"X": np.ascontiguousarray(X), "y": np.ascontiguousarray(y),
            "feature_names": np.array(CASP_FEATURES)}


ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education_num",
                 "marital_status", "occupation", "relationship", "race", "sex",
                 "capital_gain", "capital_loss", "hours_per_week",
                 "native_country", "income"]
ADULT_NUMERIC = ["age", "fnlwgt", "education_num", "capital_gain",
                 "capital_loss", "hours_per_week"]
ADULT_CATEGORICAL = ["workclass", "education", "marital_status", "occupation",
                     "relationship", "race", "sex", "native_country"]
ADULT_RACES = ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"]
ADULT_SEXES = ["Female", "Male"]


def _adult_rows(path):
    # adult.test starts with the line "|1x3 Cross validator"; both files end
    # with a blank line. Values are separated by ", ".
    _, rows = _parse_csv(path, comment="|")
    if any(len(r) != len(ADULT_COLUMNS) for r in rows):
        raise ValueError(f"adult: expected {len(ADULT_COLUMNS)} values per row")
    return rows


def _build_adult(files):
    """UCI adult.data / adult.test -> 6 numeric columns and one-hot blocks.

    Categories of each one-hot block are sorted and taken from train and test
    together; ``?`` is its own category; y = 1 for ``>50K`` (test labels end
    with a dot, which is dropped).
    """
    parts = [_adult_rows(f.path) for f in files]
    col = {c: j for j, c in enumerate(ADULT_COLUMNS)}
    categories = {
        c: sorted({r[col[c]] for rows in parts for r in rows})
        for c in ADULT_CATEGORICAL
    }
    feature_names = list(ADULT_NUMERIC)
    for c in ADULT_CATEGORICAL:
        feature_names += [f"{c}={v}" for v in categories[c]]

    def encode(rows, label):
        n = len(rows)
        num = _floats([[r[col[c]] for c in ADULT_NUMERIC] for r in rows], "adult")
        blocks = [num.reshape(n, len(ADULT_NUMERIC))]
        for c in ADULT_CATEGORICAL:
            index = {v: k for k, v in enumerate(categories[c])}
            onehot = np.zeros((n, len(index)))
            onehot[np.arange(n), [index[r[col[c]]] for r in rows]] = 1.0
            blocks.append(onehot)
        X = np.hstack(blocks).astype(np.float32)
        income = [r[col["income"]].rstrip(".") for r in rows]
        bad = set(income) - {"<=50K", ">50K"}
        if bad:
            raise ValueError(f"adult ({label}): unexpected income values {sorted(bad)}")
        y = np.array([v == ">50K" for v in income], dtype=np.int64)
        race = [r[col["race"]] for r in rows]
        sex = [r[col["sex"]] for r in rows]
        bad = (set(race) - set(ADULT_RACES)) | (set(sex) - set(ADULT_SEXES))
        if bad:
            raise ValueError(f"adult ({label}): unexpected race/sex values {sorted(bad)}")
        return X, y, np.array(race, dtype=str), np.array(sex, dtype=str)

    X, y, race, sex = encode(parts[0], "train")
    Xt, yt, race_t, sex_t = encode(parts[1], "test")
    return {"X": X, "y": y, "X_test": Xt, "y_test": yt,
            "race": race, "sex": sex, "race_test": race_t, "sex_test": sex_t,
            "feature_names": np.array(feature_names)}


# --------------------------------------------------------------------------
# OpenML ARFF sets (Torgo / Delve regression problems)
# --------------------------------------------------------------------------


def _arff_regression(name, d):
    def build(files):
        f = files[0]
        arff = _parse_arff(f.path)
        names = [a.name for a in arff.attributes]
        target = f.meta.get("target") or names[-1]
        if target not in names:
            raise ValueError(f"{name}: target attribute {target!r} not in {names}")
        t = names.index(target)
        if arff.attributes[t].kind != "numeric":
            raise ValueError(f"{name}: target {target!r} is not numeric")
        keep = [j for j in range(len(names)) if j != t]
        X = np.ascontiguousarray(arff.data[:, keep])
        _check_width(name, X, d)
        return {"X": X, "y": np.ascontiguousarray(arff.data[:, t]),
                "feature_names": np.array([names[j] for j in keep])}

    build.__name__ = f"_build_{name}"
    return build


_BUILDERS = {
    "magic04": _build_magic04,
    "phishing": _build_phishing,
    "a9a": _build_a9a,
    "bank32nh": _arff_regression("bank32nh", 32),
    "elevators": _arff_regression("elevators", 18),
    "ailerons": _arff_regression("ailerons", 40),
    "casp": _build_casp,
    "ijcnn1": _build_ijcnn1,
    "cod-rna": _build_cod_rna,
    "adult": _build_adult,
}
