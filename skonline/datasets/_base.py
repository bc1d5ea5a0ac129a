"""Data home, the dataset registry and the public loaders."""

import os
import shutil
import tempfile
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from ..utils.validation import check_sparse_structure
from ._builders import (
    _BUILDERS,
    ADULT_RACES,
    ADULT_SEXES,
    _has_matrix,
    _read_matrix,
    _write_npz_atomic,
)
from ._remote import _REMOTE_FILES, DATA_ENV, _fetch_remote, _offline_hint

__all__ = [
    "get_data_home",
    "clear_data_home",
    "dataset_names",
    "load_dataset",
    "load_magic04",
    "load_phishing",
    "load_a9a",
    "load_bank32nh",
    "load_elevators",
    "load_ailerons",
    "load_casp",
    "load_ijcnn1",
    "load_cod_rna",
    "load_adult",
]

_SPLITS = ("train", "test", "all")


# --------------------------------------------------------------------------
# data home
# --------------------------------------------------------------------------


def get_data_home(data_home=None):
    """Return the folder that caches the datasets, creating it if needed.

    The folder is, in this order: ``data_home`` when given, the environment
    variable ``SKONLINE_DATA`` when set, else ``~/skonline_data``. Each dataset
    is cached there as ``<name>.npz``; a folder that already holds these files
    (such as an offline copy) is used as is, without any download.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder to use instead of ``SKONLINE_DATA`` / ``~/skonline_data``.
        ``~`` is expanded.

    Returns
    -------
    data_home : str
        Path of the data home folder.

    See Also
    --------
    clear_data_home : Delete the data home and everything in it.

    Examples
    --------
    >>> from skonline.datasets import get_data_home
    >>> get_data_home()  # doctest: +SKIP
    '/home/user/skonline_data'
    """
    data_home = _resolve_data_home(data_home)
    if not os.path.isdir(data_home):
        os.makedirs(data_home, exist_ok=True)
        _write_marker(data_home)
    return data_home


#: File that marks a data home folder created by skonline (see clear_data_home).
_MARKER = ".skonline-data-home"


def _resolve_data_home(data_home):
    if data_home is None:
        data_home = os.environ.get(DATA_ENV) or os.path.join("~", "skonline_data")
    return os.path.expanduser(os.fspath(data_home))


def _write_marker(data_home):
    with open(os.path.join(data_home, _MARKER), "w", encoding="utf-8") as fh:
        fh.write(
            "This folder was created by skonline as its data home; "
            "skonline.datasets.clear_data_home() may delete it.\n"
        )


def clear_data_home(data_home=None):
    """Delete the data home folder and all cached datasets in it.

    Parameters
    ----------
    data_home : str or path-like, default=None
        Folder to delete; resolved as in :func:`get_data_home`.

    See Also
    --------
    get_data_home : Where the datasets are cached.

    Examples
    --------
    >>> from skonline.datasets import clear_data_home
    >>> clear_data_home("/tmp/my_skonline_cache")  # doctest: +SKIP

    Notes
    -----
    Only a folder that skonline created (:func:`get_data_home` writes a marker
    file, ``.skonline-data-home``, into a data home it creates) is deleted. A
    folder that already existed (an offline copy, a folder of your own named by
    ``SKONLINE_DATA``) is refused with an ``OSError``: delete the cached
    ``<name>.npz`` files yourself. A missing folder is left missing.
    """
    path = _resolve_data_home(data_home)
    if not os.path.lexists(path):
        return
    if os.path.islink(path) or not os.path.isdir(path):
        raise OSError(
            f"Refusing to delete {path!r}: it is not a folder created by skonline "
            "(a symbolic link or not a directory)."
        )
    if not os.path.isfile(os.path.join(path, _MARKER)):
        raise OSError(
            f"Refusing to delete {path!r}: skonline did not create this folder (it has "
            f"no {_MARKER} marker file), so it may hold files that are not skonline's. "
            "Delete the cached <name>.npz files yourself."
        )
    shutil.rmtree(path)


# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------


class _Spec(NamedTuple):
    task: str  # "binary" or "regression"
    n_train: int
    n_test: int  # 0 when there is no test part
    n_features: int
    sparse: bool
    target_name: str
    title: str
    labels: str
    source: str
    conventions: str
    reference: str


_LIBSVM_REF = (
    "C.-C. Chang and C.-J. Lin, LIBSVM: a library for support vector "
    "machines, ACM TIST 2(3), 2011. "
    "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"
)
_TORGO_REF = (
    "L. Torgo, Regression data sets, "
    "https://www.dcc.fc.up.pt/~ltorgo/Regression/DataSets.html "
    "(originally from the Delve repository); the OpenML ARFF is used."
)

_SPECS = {
    "magic04": _Spec(
        "binary", 19020, 0, 10, False, "class",
        "MAGIC Gamma Telescope",
        "+1 = 'g' gamma (12,332), -1 = 'h' hadron (6,688)",
        "UCI Machine Learning Repository, MAGIC Gamma Telescope (magic04.data)",
        "The string labels are mapped to +1 (g) and -1 (h). The features keep "
        "the UCI order fLength ... fDist and are not rescaled.",
        "R. K. Bock et al., Methods for multidimensional event classification: "
        "a case study using images from a Cherenkov gamma-ray telescope, NIM A "
        "516, 2004. https://archive.ics.uci.edu/dataset/159",
    ),
    "phishing": _Spec(
        "binary", 11055, 0, 68, False, "label",
        "Phishing websites (LIBSVM version)",
        "0 (4,898), 1 (6,157)",
        "LIBSVM binary data sets, 'phishing' (from UCI Phishing Websites)",
        "Values are kept as in the LIBSVM file (1-based indices). In the "
        "offline copy every row has 30 active binary features stored as "
        "1/sqrt(30) = 0.18257 (unit-normalised rows); use X > 0 to get 0/1 "
        "features.",
        _LIBSVM_REF,
    ),
    "a9a": _Spec(
        "binary", 32561, 16281, 123, True, "label",
        "Adult a9a (LIBSVM binarised UCI Adult)",
        "-1 (24,720), +1 (7,841); test -1 (12,435), +1 (3,846)",
        "LIBSVM binary data sets, 'a9a' and 'a9a.t'",
        "Sparse CSR with 123 columns; LIBSVM's 1-based index j is column j-1. "
        "The test file does not use the last column, so the width is fixed "
        "to 123.",
        _LIBSVM_REF,
    ),
    "bank32nh": _Spec(
        "regression", 8192, 0, 32, False, "rej",
        "Bank-32nh (Delve bank family, 32 inputs, non-linear, high noise)",
        "y in [0, 0.8197] (rejection rate)",
        "Torgo / Delve 'bank32nh', OpenML data set 558 (ARFF)",
        "Torgo's train and test parts (4,500 + 3,692) merged in the file's row "
        "order. Features are not rescaled.",
        _TORGO_REF,
    ),
    "elevators": _Spec(
        "regression", 16599, 0, 18, False, "Goal",
        "Elevators (F-16 aircraft control)",
        "y in [0.012, 0.078]",
        "Torgo 'elevators', OpenML data set 216 (ARFF)",
        "Torgo's train and test parts (8,752 + 7,847) merged in the file's row "
        "order.",
        _TORGO_REF,
    ),
    "ailerons": _Spec(
        "regression", 13750, 0, 40, False, "goal",
        "Ailerons (F-16 aircraft control)",
        "y in [-0.0036, 0]",
        "Torgo 'ailerons', OpenML data set 296 (ARFF)",
        "Torgo's train and test parts (7,154 + 6,596) merged in the file's row "
        "order. The targets are very small; consider scaling y.",
        _TORGO_REF,
    ),
    "casp": _Spec(
        "regression", 45730, 0, 9, False, "RMSD",
        "Physicochemical Properties of Protein Tertiary Structure (CASP)",
        "y = RMSD in [0, 20.999]",
        "UCI Machine Learning Repository, CASP.csv",
        "The UCI header is RMSD,F1..F9: X = F1..F9 and y = RMSD.",
        "P. S. Rana, UCI Physicochemical Properties of Protein Tertiary "
        "Structure, 2013. https://archive.ics.uci.edu/dataset/265",
    ),
    "ijcnn1": _Spec(
        "binary", 49990, 91701, 22, False, "label",
        "IJCNN 2001 neural network competition",
        "-1 (45,137), +1 (4,853); test -1 (82,989), +1 (8,712)",
        "LIBSVM binary data sets, 'ijcnn1.tr' + 'ijcnn1.val' (train) and "
        "'ijcnn1.t' (test)",
        "The train part is ijcnn1.tr (35,000 rows) followed by ijcnn1.val "
        "(14,990 rows). Stored dense.",
        "D. Prokhorov, IJCNN 2001 neural network competition, 2001; "
        + _LIBSVM_REF,
    ),
    "cod-rna": _Spec(
        "binary", 59535, 0, 8, False, "label",
        "cod-RNA (non-coding RNA detection)",
        "-1 (39,690), +1 (19,845)",
        "LIBSVM binary data sets, 'cod-rna' (training part only)",
        "Only the training file is used (the LIBSVM test file cod-rna.t is "
        "not part of this loader). Stored dense.",
        "A. V. Uzilov, J. M. Keegan and D. H. Mathews, Detection of non-coding "
        "RNAs on the basis of predicted secondary structure formation free "
        "energy change, BMC Bioinformatics 7, 2006; " + _LIBSVM_REF,
    ),
    "adult": _Spec(
        "binary", 32561, 16281, 108, False, "income",
        "Adult census income (UCI), with fairness groups",
        "y = 1 if income '>50K' (7,841; test 3,846), else 0 (24,720; test "
        "12,435)",
        "UCI Machine Learning Repository, Adult (adult.data, adult.test)",
        "X (float32) holds the 6 numeric columns unscaled (age, fnlwgt, "
        "education_num, capital_gain, capital_loss, hours_per_week), then "
        "one-hot blocks for workclass, education, marital_status, occupation, "
        "relationship, race, sex and native_country. The categories of each "
        "block are sorted and taken from train and test together; '?' is its "
        "own category. The race and sex one-hots are in X; use feature_names "
        "to drop them. race and sex are also returned as strings, and groups "
        "codes race x sex as race_index * 2 + sex_index (see group_names).",
        "R. Kohavi, Scaling up the accuracy of naive-Bayes classifiers: a "
        "decision-tree hybrid, KDD 1996. https://archive.ics.uci.edu/dataset/2",
    ),
}

#: adult groups: code = race_index * len(ADULT_SEXES) + sex_index.
ADULT_GROUP_NAMES = [f"{r}/{s}" for r in ADULT_RACES for s in ADULT_SEXES]


def dataset_names():
    """List the names of the benchmark datasets.

    Returns
    -------
    names : list of str
        The names accepted by :func:`load_dataset`.

    Examples
    --------
    >>> from skonline.datasets import dataset_names
    >>> dataset_names()
    ['magic04', 'phishing', 'a9a', 'bank32nh', 'elevators', 'ailerons', 'casp', 'ijcnn1', 'cod-rna', 'adult']
    """
    return list(_SPECS)


def _canonical_name(name):
    if not isinstance(name, str):
        raise ValueError(f"dataset name must be a string, got {name!r}")
    key = name.strip().lower().replace("_", "-")
    if key not in _SPECS:
        raise ValueError(
            f"Unknown dataset {name!r}. Available datasets: {', '.join(_SPECS)}."
        )
    return key


def _splits_of(name):
    return _SPLITS if _SPECS[name].n_test else ("train",)


def _descr(name):
    spec = _SPECS[name]
    n = f"{spec.n_train:,}" + (f" (+{spec.n_test:,} test)" if spec.n_test else "")
    urls = "\n".join(f"  - {r.url}  [{r.format}]" for r in _REMOTE_FILES[name])
    title = f"{name}: {spec.title}"
    return (
        f"{title}\n{'=' * len(title)}\n\n"
        f"Task: {spec.task}\n"
        f"Samples: {n}\n"
        f"Features: {spec.n_features}{' (sparse CSR)' if spec.sparse else ''}\n"
        f"Labels: {spec.labels}\n"
        f"Splits: {', '.join(_splits_of(name))}\n\n"
        f"Original source: {spec.source}\n"
        f"Downloaded from (when {name}.npz is not in the data home):\n{urls}\n\n"
        f"Conventions: {spec.conventions}\n"
        "Features are stored as in the source files, without rescaling.\n\n"
        f"Reference: {spec.reference}\n"
    )


# --------------------------------------------------------------------------
# fetching
# --------------------------------------------------------------------------


def _npz_path(name, data_home):
    return os.path.join(get_data_home(data_home), f"{name}.npz")


def _download_and_convert(name, path):
    """Download the original files of ``name``, convert them and write
    ``path`` atomically. Raw files go to a temporary folder that is removed
    afterwards; on any error nothing is left in the data home."""
    with tempfile.TemporaryDirectory(prefix=f"skonline-{name}-") as tmp:
        fetched = [_fetch_remote(r, tmp, name=name) for r in _REMOTE_FILES[name]]
        arrays = _BUILDERS[name](fetched)
    _write_npz_atomic(path, arrays)


def _ensure_npz(name, data_home, download_if_missing):
    path = _npz_path(name, data_home)
    if not os.path.exists(path):
        if not download_if_missing:
            raise OSError(
                f"{name}.npz is not in the data home {os.path.dirname(path)} and "
                "download_if_missing=False. " + _offline_hint(name)
            )
        _download_and_convert(name, path)
    return path


def _stack(a, b):
    if sp.issparse(a):
        return sp.vstack([a, b]).tocsr()
    return np.concatenate([a, b])


def _read_split(path, name, split):
    """Read one split of ``path``; returns (X, y, extras)."""
    with np.load(path, allow_pickle=False) as z:
        if split != "train" and not _has_matrix(z, "X_test"):
            raise ValueError(
                f"{path} has no test part (X_test / y_test), but dataset "
                f"{name!r} should have one; delete the file to download it again."
            )
        extras = {}
        if "feature_names" in z.files:
            extras["feature_names"] = [str(s) for s in z["feature_names"]]
        parts = []
        for suffix in {"train": ("",), "test": ("_test",), "all": ("", "_test")}[split]:
            try:
                item = {"X": _read_matrix(z, "X" + suffix), "y": z["y" + suffix]}
            except (ValueError, KeyError) as exc:
                raise ValueError(
                    f"{path} is not a valid {name!r} file: {exc} Delete it to download it "
                    "again (or replace it with a good copy)."
                ) from None
            for key in ("race", "sex"):
                if key + suffix in z.files:
                    item[key] = z[key + suffix]
            parts.append(item)
    for item in parts:
        _check_arrays(path, name, item)
    if len(parts) == 2 and parts[0]["X"].shape[1] != parts[1]["X"].shape[1]:
        raise ValueError(
            f"{path} is not a valid {name!r} file: X has {parts[0]['X'].shape[1]} features "
            f"and X_test {parts[1]['X'].shape[1]}. Delete it to download it again."
        )
    if len(parts) == 1:
        merged = parts[0]
    else:
        merged = {k: _stack(parts[0][k], parts[1][k]) for k in parts[0]}
    X, y = merged.pop("X"), merged.pop("y")
    extras.update(merged)
    if "feature_names" in extras and len(extras["feature_names"]) != X.shape[1]:
        raise ValueError(
            f"{path}: {len(extras['feature_names'])} feature names for {X.shape[1]} "
            "features; delete the file to download it again."
        )
    return X, y, extras


def _check_arrays(path, name, item):
    """Validate one part read from ``<name>.npz`` before anything uses it.

    A file in the data home is not trusted: shapes, dtypes, the sparse
    structure (out-of-range indices would crash compiled code), finiteness
    and the X / y lengths are checked.
    """
    X, y = item["X"], item["y"]

    def bad(what):
        return ValueError(
            f"{path} is not a valid {name!r} file: {what}. Delete it to download "
            "it again (or replace it with a good copy)."
        )

    if sp.issparse(X):
        try:
            check_sparse_structure(X)
        except ValueError as exc:
            raise bad(str(exc)) from None
        values = X.data
    else:
        values = X
        if X.ndim != 2:
            raise bad(f"X has shape {X.shape}, expected 2 dimensions")
    if values.dtype.kind not in "fiu":
        raise bad(f"X has dtype {values.dtype}, expected numbers")
    if values.dtype.kind == "f" and not np.isfinite(values).all():
        raise bad("X holds NaN or inf")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise bad(f"X has shape {X.shape}")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise bad(f"y has shape {y.shape} for {X.shape[0]} rows of X")
    if y.dtype.kind not in "fiu":
        raise bad(f"y has dtype {y.dtype}, expected numbers")
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise bad("y holds NaN or inf")
    for key in ("race", "sex"):
        if key in item and (item[key].ndim != 1 or item[key].shape[0] != X.shape[0]):
            raise bad(f"{key} has shape {item[key].shape} for {X.shape[0]} rows")


def _to_frame(X, y, feature_names, target_name):
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError("as_frame=True requires pandas.") from exc
    columns = feature_names or [f"f{j + 1}" for j in range(X.shape[1])]
    if sp.issparse(X):
        data = pd.DataFrame.sparse.from_spmatrix(X, columns=columns)
    else:
        data = pd.DataFrame(X, columns=columns)
    target = pd.Series(y, name=target_name)
    return data, target, pd.concat([data, target], axis=1)


def load_dataset(name, *, split="train", data_home=None, download_if_missing=True,
                 return_X_y=False, as_frame=False):
    """Load one of the benchmark datasets.

    The data are read from ``<data_home>/<name>.npz``. When that file is
    missing it is built from the original public files (UCI, LIBSVM or
    OpenML), which are downloaded, parsed and converted once; the result is
    written atomically into the data home.

    Safety: a file read from the data home is validated before use (shapes,
    dtypes, sparse structure, finite values, X / y lengths). A download is
    verified against the SHA-256 pinned in skonline; only the adult files have
    one today, so the other files are refused unless the environment variable
    ``SKONLINE_ALLOW_UNPINNED=1`` is set (a warning then reports the SHA-256 of
    the downloaded file). The ARFF address named by an OpenML description must
    be ``https://``.

    Parameters
    ----------
    name : str
        One of :func:`dataset_names`: ``'magic04'``, ``'phishing'``,
        ``'a9a'``, ``'bank32nh'``, ``'elevators'``, ``'ailerons'``,
        ``'casp'``, ``'ijcnn1'``, ``'cod-rna'``, ``'adult'``. Case is ignored
        and ``_`` may be used for ``-``.
    split : {'train', 'test', 'all'}, default='train'
        Part to return. ``'test'`` and ``'all'`` (train rows first, then test
        rows) exist only for ``'a9a'``, ``'ijcnn1'`` and ``'adult'``; the
        other datasets have a single part, called ``'train'``.
    data_home : str or path-like, default=None
        Cache folder; see :func:`get_data_home`.
    download_if_missing : bool, default=True
        If False, raise an ``OSError`` instead of downloading a missing file.
    return_X_y : bool, default=False
        If True, return ``(data, target)`` instead of a Bunch.
    as_frame : bool, default=False
        If True (requires pandas), ``data`` is a DataFrame (sparse for a9a),
        ``target`` a Series and ``frame`` holds both.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the attributes

        data : ndarray of shape (n_samples, n_features) or scipy.sparse.csr_matrix
            The features: float64, float32 for adult, CSR for a9a.
        target : ndarray of shape (n_samples,)
            int64 labels for classification, float64 for regression.
        feature_names : list of str or None
            Column names when the source has them.
        frame : DataFrame or None
            Only with ``as_frame=True``.
        DESCR : str
            Description with provenance and conventions.
        name, split, task : str
            Dataset name, returned part, ``'binary'`` or ``'regression'``.
        race, sex : ndarray of str
            adult only: the group attributes of each row.
        groups : ndarray of int64
            adult only: race x sex group code of each row,
            ``race_index * 2 + sex_index``.
        group_names : list of str
            adult only: ``group_names[k]`` is ``'<race>/<sex>'`` for code k.

    (data, target) : tuple if ``return_X_y`` is True

    Raises
    ------
    ValueError
        For an unknown name, or a split the dataset does not have.
    OSError
        If the file is missing and cannot (or may not) be downloaded. The
        message names the URL and explains how to point ``SKONLINE_DATA`` at a
        folder with the ``.npz`` files.

    See Also
    --------
    dataset_names : The available names.
    get_data_home : Where files are cached.

    Notes
    -----
    The environment variable ``SKONLINE_DATA_URL`` replaces the scheme and
    host of every download address (the paths are kept), e.g. to use a
    mirror.

    Examples
    --------
    >>> from skonline.datasets import load_dataset
    >>> bunch = load_dataset("magic04")  # doctest: +SKIP
    >>> bunch.data.shape, bunch.feature_names[:2]  # doctest: +SKIP
    ((19020, 10), ['fLength', 'fWidth'])
    >>> X_test, y_test = load_dataset("a9a", split="test", return_X_y=True)  # doctest: +SKIP
    >>> X_test.shape  # doctest: +SKIP
    (16281, 123)
    """
    name = _canonical_name(name)
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {_SPLITS}, got {split!r}.")
    if split not in _splits_of(name):
        raise ValueError(
            f"Dataset {name!r} has no {split!r} split; it only has "
            f"{_splits_of(name)}. Test parts exist for "
            f"{', '.join(n for n in _SPECS if _SPECS[n].n_test)}."
        )
    spec = _SPECS[name]
    path = _ensure_npz(name, data_home, download_if_missing)
    X, y, extras = _read_split(path, name, split)
    feature_names = extras.pop("feature_names", None)

    frame = None
    if as_frame:
        X, y, frame = _to_frame(X, y, feature_names, spec.target_name)
    if return_X_y:
        return X, y

    bunch = Bunch(
        data=X, target=y, feature_names=feature_names, frame=frame,
        DESCR=_descr(name), name=name, split=split, task=spec.task,
    )
    if name == "adult":
        race, sex = extras["race"], extras["sex"]
        code = {g: k for k, g in enumerate(ADULT_GROUP_NAMES)}
        try:
            groups = np.array([code[f"{r}/{s}"] for r, s in zip(race, sex)],
                              dtype=np.int64)
        except KeyError as exc:
            raise ValueError(f"{path}: unknown adult group {exc.args[0]!r}") from None
        bunch.update(race=race, sex=sex, groups=groups,
                     group_names=list(ADULT_GROUP_NAMES))
    return bunch


# --------------------------------------------------------------------------
# named loaders
# --------------------------------------------------------------------------

_LOADER_DOC = """Load the {name} dataset ({title}).

{task_line} {n} samples, {d} features{sparse}. Labels: {labels}.
{split_line}

Shorthand for ``load_dataset({name!r}, ...)``; see :func:`load_dataset` for
the caching and download behaviour.

Parameters
----------
split : {split_type}, default='train'
    {split_doc}
data_home, download_if_missing, return_X_y, as_frame
    As for :func:`load_dataset` (cache folder, downloading a missing file, a
    ``(data, target)`` pair instead of a Bunch, pandas objects).

Returns
-------
data : :class:`~sklearn.utils.Bunch`
    With ``data``, ``target``, ``feature_names``, ``frame``, ``DESCR``,
    ``name``, ``split`` and ``task``{extra_returns}.
(data, target) : tuple if ``return_X_y`` is True

See Also
--------
load_dataset : The generic loader.

Notes
-----
Original source: {source}. {conventions}

Examples
--------
>>> from skonline.datasets import {func}
>>> X, y = {func}(return_X_y=True)  # doctest: +SKIP
>>> X.shape  # doctest: +SKIP
({n_train}, {d})
"""


def _loader_doc(name):
    def decorate(func):
        spec = _SPECS[name]
        has_test = bool(spec.n_test)
        func.__doc__ = _LOADER_DOC.format(
            name=name, func=func.__name__, title=spec.title,
            task_line="Binary classification:" if spec.task == "binary"
            else "Regression:",
            n=f"{spec.n_train:,}" + (f" (+{spec.n_test:,} test)" if has_test else ""),
            n_train=spec.n_train, d=spec.n_features,
            sparse=", returned as scipy CSR" if spec.sparse else "",
            labels=spec.labels,
            split_line=("Splits: 'train', 'test' and 'all'." if has_test else
                        "There is a single part, 'train'."),
            split_type="{'train', 'test', 'all'}" if has_test else "{'train'}",
            split_doc=("Part to return; 'all' stacks train then test rows."
                       if has_test else
                       "Only 'train' exists; 'test' and 'all' raise ValueError."),
            extra_returns=(", plus ``race``, ``sex``, ``groups`` (race x sex "
                           "codes) and ``group_names``" if name == "adult" else ""),
            source=spec.source, conventions=spec.conventions,
        )
        return func
    return decorate


def _loader(name):
    """The public ``load_<name>``: :func:`load_dataset` with the dataset's name fixed, documented
    from its spec (:func:`_loader_doc`)."""

    def load(*, split="train", data_home=None, download_if_missing=True, return_X_y=False, as_frame=False):
        return load_dataset(name, split=split, data_home=data_home, download_if_missing=download_if_missing,
                            return_X_y=return_X_y, as_frame=as_frame)

    load.__name__ = load.__qualname__ = "load_" + name.replace("-", "_")
    return _loader_doc(name)(load)


load_magic04 = _loader("magic04")
load_phishing = _loader("phishing")
load_a9a = _loader("a9a")
load_bank32nh = _loader("bank32nh")
load_elevators = _loader("elevators")
load_ailerons = _loader("ailerons")
load_casp = _loader("casp")
load_ijcnn1 = _loader("ijcnn1")
load_cod_rna = _loader("cod-rna")
load_adult = _loader("adult")
