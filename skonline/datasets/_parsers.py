"""Small readers for the original file formats.

* :func:`_parse_svmlight` -- LIBSVM / svmlight text, plain, bz2 or gzip.
* :func:`_parse_csv` -- comma separated text such as the UCI files.
* :func:`_parse_arff` -- ARFF with numeric and nominal attributes.

Each reader takes a path or an open binary (or, for the text formats, text)
file object and returns plain Python / NumPy objects; the dataset specific
conventions live in ``_builders``.
"""

import bz2
import contextlib
import csv
import gzip
import io
import os
from typing import NamedTuple

import numpy as np
from sklearn.datasets import load_svmlight_file

__all__ = []  # private module


@contextlib.contextmanager
def _open_binary(source):
    """Open a path or wrap a binary file object, decompressing on the fly.

    bz2 and gzip streams are recognised by their magic bytes, whatever the
    file is called. Files opened here are closed on exit; a file object passed
    in is left open.
    """
    with contextlib.ExitStack() as stack:
        if isinstance(source, (str, bytes, os.PathLike)):
            raw = stack.enter_context(open(source, "rb"))
        elif isinstance(source, io.TextIOBase):
            raise TypeError("expected a path or a binary file object, got a text file")
        else:
            raw = source
        if hasattr(raw, "peek"):
            head = raw.peek(3)[:3]
        else:
            if not (hasattr(raw, "seekable") and raw.seekable()):
                raw = io.BytesIO(raw.read())
            pos = raw.tell()
            head = raw.read(3)
            raw.seek(pos)
        if head[:3] == b"BZh":
            raw = stack.enter_context(bz2.BZ2File(raw))
        elif head[:2] == b"\x1f\x8b":
            raw = stack.enter_context(gzip.GzipFile(fileobj=raw))
        yield raw


@contextlib.contextmanager
def _open_text(source, encoding="utf-8"):
    if isinstance(source, io.TextIOBase):
        yield source
        return
    with _open_binary(source) as fh:
        text = io.TextIOWrapper(fh, encoding=encoding, newline="")
        try:
            yield text
        finally:
            text.detach()  # do not close ``fh`` twice / a caller's file


def _parse_svmlight(source, *, n_features, zero_based=False, dtype=np.float64):
    """Read a LIBSVM / svmlight file.

    Parameters
    ----------
    source : path-like or binary file object
        The file; bz2 or gzip compression is detected from the content.
    n_features : int
        Number of columns of the result (files often do not use the last one).
    zero_based : bool, default=False
        LIBSVM files are 1-based: index ``j`` goes to column ``j - 1``.
    dtype : dtype, default=np.float64

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), float64
    """
    with _open_binary(source) as fh:
        X, y = load_svmlight_file(
            fh, n_features=n_features, dtype=dtype, zero_based=zero_based
        )
    X.sort_indices()
    return X, np.asarray(y, dtype=np.float64)


def _parse_csv(source, *, header=False, delimiter=",", comment=None,
               encoding="utf-8"):
    """Read delimited text into lists of stripped strings.

    Parameters
    ----------
    source : path-like or file object
    header : bool, default=False
        Whether the first (non-skipped) row holds column names.
    delimiter : str, default=","
    comment : str or None, default=None
        Lines starting with this prefix are skipped (e.g. ``"|"`` for the
        first line of UCI ``adult.test``).
    encoding : str, default="utf-8"

    Returns
    -------
    names : list of str or None
    rows : list of list of str
        Values with surrounding whitespace removed. Blank lines are skipped.
    """
    with _open_text(source, encoding) as fh:
        names, rows = None, []
        for row in csv.reader(fh, delimiter=delimiter, skipinitialspace=True):
            if not row or all(not v.strip() for v in row):
                continue
            if comment is not None and row[0].lstrip().startswith(comment):
                continue
            row = [v.strip() for v in row]
            if header and names is None:
                names = row
                continue
            rows.append(row)
    return names, rows


class ArffAttribute(NamedTuple):
    name: str
    kind: str  # "numeric" or "nominal"
    values: tuple | None  # the nominal values, in declaration order


class ArffData(NamedTuple):
    relation: str
    attributes: list
    data: np.ndarray  # float64; nominal values coded 0..k-1; missing = nan


_NUMERIC_TYPES = {"numeric", "real", "integer"}


def _split_values(text, sep=","):
    """Split ``text`` at ``sep``, honouring ARFF single and double quotes."""
    if "'" not in text and '"' not in text:
        return [v.strip() for v in text.split(sep)]
    out, i, n = [], 0, len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] in "'\"":
            quote, buf, i = text[i], [], i + 1
            while i < n and text[i] != quote:
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(text[i])
                i += 1
            if i >= n:
                raise ValueError(f"unterminated quote in ARFF line: {text!r}")
            out.append("".join(buf))
            i += 1
            while i < n and text[i] in " \t":
                i += 1
            if i < n and text[i] != sep:
                raise ValueError(f"unexpected text after quoted value: {text!r}")
        else:
            j = text.find(sep, i)
            j = n if j < 0 else j
            out.append(text[i:j].strip())
            i = j
        if i >= n:
            return out
        i += 1  # skip the separator


def _take_name(text):
    """Split ``text`` into its first (possibly quoted) token and the rest."""
    text = text.strip()
    if text[:1] in ("'", '"'):
        end = text.find(text[0], 1)
        if end < 0:
            raise ValueError(f"unterminated quoted name: {text!r}")
        return text[1:end], text[end + 1:].strip()
    parts = text.split(None, 1)
    return parts[0], (parts[1].strip() if len(parts) > 1 else "")


def _parse_arff(source, *, encoding="utf-8"):
    """Read an ARFF file with numeric and nominal attributes.

    Supports ``%`` comments, case-insensitive keywords, quoted names and
    values, ``?`` for missing values, and dense as well as sparse
    (``{index value, ...}``) data rows. String, date and relational
    attributes are rejected.

    Parameters
    ----------
    source : path-like or file object
    encoding : str, default="utf-8"

    Returns
    -------
    ArffData
        ``relation``, ``attributes`` (list of ``ArffAttribute(name, kind,
        values)``) and ``data``, a float64 array with one column per attribute;
        nominal values are coded by their position in the declaration and
        missing values are NaN.
    """
    with _open_text(source, encoding) as fh:
        relation, attributes, lineno = "", [], 0
        for line in fh:
            lineno += 1
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            keyword = line.split(None, 1)[0].lower()
            if keyword == "@relation":
                relation = _take_name(line[len("@relation"):])[0]
            elif keyword == "@attribute":
                name, kind = _take_name(line[len("@attribute"):])
                if kind.startswith("{"):
                    if not kind.endswith("}"):
                        raise ValueError(f"line {lineno}: bad nominal type {kind!r}")
                    values = tuple(_split_values(kind[1:-1]))
                    attributes.append(ArffAttribute(name, "nominal", values))
                elif kind.lower() in _NUMERIC_TYPES:
                    attributes.append(ArffAttribute(name, "numeric", None))
                else:
                    raise ValueError(
                        f"line {lineno}: attribute {name!r} has type {kind!r}; "
                        "only numeric and nominal attributes are supported"
                    )
            elif keyword == "@data":
                break
            else:
                raise ValueError(f"line {lineno}: unexpected header line {line!r}")
        else:
            raise ValueError("no @data section in ARFF file")
        if not attributes:
            raise ValueError("ARFF file declares no attributes")

        n_attr = len(attributes)
        codes = [
            {v: float(k) for k, v in enumerate(a.values)} if a.kind == "nominal" else None
            for a in attributes
        ]

        def convert(j, value):
            if value == "?":
                return np.nan
            if codes[j] is None:
                return float(value)
            try:
                return codes[j][value]
            except KeyError:
                raise ValueError(
                    f"line {lineno}: {value!r} is not a declared value of "
                    f"nominal attribute {attributes[j].name!r}"
                ) from None

        rows = []
        for line in fh:
            lineno += 1
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            if line.startswith("{"):
                if not line.endswith("}"):
                    raise ValueError(f"line {lineno}: bad sparse row")
                row = [0.0] * n_attr
                body = line[1:-1].strip()
                for item in _split_values(body) if body else []:
                    idx, value = _take_name(item)
                    if len(value) >= 2 and value[0] in "'\"" and value[-1] == value[0]:
                        value = value[1:-1]
                    j = int(idx)
                    if not 0 <= j < n_attr:
                        raise ValueError(f"line {lineno}: index {j} out of range")
                    row[j] = convert(j, value)
            else:
                values = _split_values(line)
                if len(values) != n_attr:
                    raise ValueError(
                        f"line {lineno}: {len(values)} values, expected {n_attr}"
                    )
                row = [convert(j, v) for j, v in enumerate(values)]
            rows.append(row)
    data = np.array(rows, dtype=np.float64).reshape(len(rows), n_attr)
    return ArffData(relation, attributes, data)
