"""Online column transformer: online transformers applied to columns of a table, prequentially."""

import copy
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import TransformerMixin, clone
from sklearn.pipeline import _name_estimators
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, StrOptions
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.metaestimators import _BaseComposition
from sklearn.utils.validation import check_is_fitted, validate_data

from ..base import Chunk, FeatureTransformerMixin, OnlineTransformerMixin
from ..pipeline._pipeline import _is_fitted, stream_step

__all__ = ["OnlineColumnTransformer", "make_online_column_transformer"]


def _is_dataframe(X):
    return hasattr(X, "iloc") and hasattr(X, "columns")


def _column_indices(key, X, n_features, names):
    """Positions of the columns ``key`` selects: a name or an index, a list of them, a slice, a
    boolean mask, or a callable (``make_column_selector``) called on ``X``."""
    if callable(key):
        key = key(X)
    if isinstance(key, (str, numbers.Integral)):
        key = [key]
    if isinstance(key, slice):
        start, stop = key.start, key.stop
        if isinstance(start, str) or isinstance(stop, str):  # as pandas' loc: both ends included
            lo = 0 if start is None else _name_positions([start], names)[0]
            hi = n_features - 1 if stop is None else _name_positions([stop], names)[0]
            return np.arange(lo, hi + 1, key.step or 1, dtype=np.int64)
        return np.arange(n_features, dtype=np.int64)[key]
    arr = np.asarray(key)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind == "b":
        if arr.shape != (n_features,):
            raise ValueError(f"A boolean column mask must have one entry per column ({n_features}); got {arr.shape}.")
        return np.flatnonzero(arr).astype(np.int64)
    if arr.dtype.kind in "iu":
        idx = arr.astype(np.int64).ravel()
        if np.any((idx < -n_features) | (idx >= n_features)):
            raise ValueError(f"Column index out of range for {n_features} columns: {key!r}.")
        return idx % n_features
    return _name_positions(list(arr.ravel()), names)


def _name_positions(keys, names):
    if names is None:
        raise ValueError(
            "Specifying the columns using strings is only supported for dataframes (X has no column "
            f"names); got {keys!r}."
        )
    where = {name: k for k, name in enumerate(names)}
    missing = [k for k in keys if k not in where]
    if missing:
        raise ValueError(f"A given column is not a column of the dataframe: {missing!r}.")
    return np.array([where[k] for k in keys], dtype=np.int64)


def _to_array(part):
    """A transformer's output as an ndarray or a CSR matrix (a DataFrame's values)."""
    if sp.issparse(part):
        return part.tocsr()
    if hasattr(part, "to_numpy"):
        return part.to_numpy()
    return np.asarray(part)


class OnlineColumnTransformer(FeatureTransformerMixin, OnlineTransformerMixin, TransformerMixin, _BaseComposition):
    """Apply online transformers to columns of a table, prequentially, and stack their outputs.

    The online counterpart of :class:`~sklearn.compose.ColumnTransformer`, for raw tabular
    streams: e.g. :class:`~skonline.preprocessing.OnlineOneHotEncoder` on the string columns and
    :class:`~skonline.preprocessing.OnlineStandardScaler` on the numbers, in front of a learner in
    :func:`~skonline.pipeline.make_online_pipeline`. ``partial_fit_transform(X)`` hands each
    transformer its columns of the chunk (``partial_fit_transform``: row ``t`` transformed with the
    state before ``t``) and stacks the outputs side by side, so the streaming contract holds for
    the whole: ``fit`` equals ``partial_fit`` over any chunking, bit for bit; a rejected chunk
    leaves every transformer as it was; pickling mid-stream and continuing equals never stopping.
    ``transform`` uses the current state of every transformer.

    Each transformer is one of (as in :class:`~skonline.pipeline.OnlinePipeline`): an online
    transformer (cloned: the stream starts it afresh); an unfitted fixed feature map (cloned, fitted
    on the first chunk); a transformer fitted beforehand (a copy is used as it is). A scikit-learn
    transformer that learns from the data and is not fitted is refused: fitted on a chunk, it would
    transform each row with statistics of later rows.

    Differences from scikit-learn's ``ColumnTransformer``, each for the stream:

    * columns given by a callable (``make_column_selector``) or by names are resolved on the first
      chunk and kept for the whole stream (a dtype seen in the first chunk decides);
    * a transformer always receives a 2-D selection (a single name or index included);
    * the output is sparse when any transformer's output is sparse, dense otherwise (no
      ``sparse_threshold``: a density measured on a chunk would make the output container depend on
      how the stream was chunked);
    * every transformer's output width must stay the same along the stream (a learner downstream
      has a fixed number of features): a chunk that changes it is rejected;
    * no ``n_jobs``: the transformers run one after the other on each chunk.

    Parameters
    ----------
    transformers : list of (name, transformer, columns) tuples
        ``transformer``: an estimator, ``'drop'`` or ``'passthrough'``. ``columns``: a name, an
        index, a list of them, a slice, a boolean mask, or a callable returning one of these
        (e.g. :func:`sklearn.compose.make_column_selector`).
    remainder : {'drop', 'passthrough'} or estimator, default='drop'
        What happens to the columns no transformer names.
    transformer_weights : dict, default=None
        Multiplier of each transformer's output, by name.
    verbose_feature_names_out : bool, default=True
        Prefix the output names with the transformer's name (``'<name>__<feature>'``).
    verbose : int, default=0
        Print progress while learning, in the format every estimator uses (user guide,
        *Progress on long streams*); the result does not change.
        The transformers inside stay quiet unless given ``verbose`` themselves.

    Attributes
    ----------
    transformers_ : list of (name, transformer, columns) tuples
        The transformers of the stream (clones, learning), and ``('remainder', ..., indices)`` when
        columns remain.
    output_indices_ : dict
        ``name -> slice`` of the output columns of each transformer.
    sparse_output_ : bool
        Whether the output is a sparse matrix.
    n_samples_seen_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined only when X has feature names that are all strings.

    See Also
    --------
    make_online_column_transformer : Build one from (transformer, columns) pairs.
    skonline.pipeline.make_online_pipeline : Chain it with a learner.

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.compose import make_column_selector
    >>> from skonline.compose import OnlineColumnTransformer
    >>> from skonline.preprocessing import OnlineOneHotEncoder, OnlineStandardScaler
    >>> X = pd.DataFrame({"city": ["Paris", "Lyon", "Paris", None], "age": [30.0, 40.0, 35.0, 50.0]})
    >>> ct = OnlineColumnTransformer([
    ...     ("cat", OnlineOneHotEncoder(max_categories=3), make_column_selector(dtype_exclude="number")),
    ...     ("num", OnlineStandardScaler(), ["age"])])
    >>> ct.partial_fit_transform(X).round(2)
    array([[0.  , 0.  , 0.  , 0.  ],
           [0.  , 0.  , 0.  , 0.  ],
           [1.  , 0.  , 0.  , 0.  ],
           [0.  , 0.  , 0.  , 3.67]])
    >>> ct.get_feature_names_out().tolist()
    ['cat__city_slot0', 'cat__city_slot1', 'cat__city_infrequent_sklearn', 'num__age']
    """

    _parameter_constraints = {
        "transformers": [list],
        "remainder": [StrOptions({"drop", "passthrough"}), HasMethods(["fit", "transform"]),
                      HasMethods(["partial_fit_transform"])],
        "transformer_weights": [dict, None],
        "verbose_feature_names_out": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(self, transformers, *, remainder="drop", transformer_weights=None, verbose_feature_names_out=True,
                 verbose=0):
        self.transformers = transformers
        self.remainder = remainder
        self.transformer_weights = transformer_weights
        self.verbose_feature_names_out = verbose_feature_names_out
        self.verbose = verbose

    # ------------------------------------------------------------------ parameters (nested)
    @property
    def _transformers(self):
        try:
            return [(name, trans) for name, trans, _ in self.transformers]
        except (TypeError, ValueError):
            return self.transformers

    @_transformers.setter
    def _transformers(self, value):
        try:
            self.transformers = [(name, trans, col) for ((name, trans), (_, _, col)) in zip(value, self.transformers)]
        except (TypeError, ValueError):
            self.transformers = value

    def get_params(self, deep=True):
        """Parameters, with those of the transformers as ``<name>__<parameter>`` when ``deep``.

        Parameters
        ----------
        deep : bool, default=True

        Returns
        -------
        params : dict
        """
        return self._get_params("_transformers", deep=deep)

    def set_params(self, **kwargs):
        """Set parameters, including ``<name>__<parameter>`` of a transformer, or a transformer itself.

        Parameters
        ----------
        **kwargs : dict

        Returns
        -------
        self : OnlineColumnTransformer
        """
        self._set_params("_transformers", **kwargs)
        return self

    def _check_params(self):
        names = []
        for item in self.transformers:
            if not (isinstance(item, tuple) and len(item) == 3):
                raise ValueError(f"transformers must be (name, transformer, columns) tuples; got {item!r}.")
            name, trans, _ = item
            if not isinstance(name, str) or "__" in name or name == "remainder":
                raise ValueError(
                    f"Transformer names must be strings without '__' and not 'remainder'; got {name!r}."
                )
            if not (trans in ("drop", "passthrough") or hasattr(trans, "transform")):
                raise TypeError(
                    f"Transformer {name!r} must be 'drop', 'passthrough' or an estimator with transform; "
                    f"got {trans!r}."
                )
            names.append(name)
        if len(set(names)) != len(names):
            raise ValueError(f"Names provided are not unique: {names!r}.")
        if self.transformer_weights is not None:
            unknown = set(self.transformer_weights) - set(names)
            if unknown:
                raise ValueError(f"transformer_weights names no transformer: {sorted(unknown)!r}.")

    # ------------------------------------------------------------------ the stream
    def _validate_chunk(self, X, y=None, *, reset, from_fit):
        if not (_is_dataframe(X) or sp.issparse(X) or isinstance(X, np.ndarray)):
            X = np.asarray(X) if not _ragged(X) else np.asarray(X, dtype=object)
        if not _is_dataframe(X):
            if X.ndim != 2:
                raise ValueError(
                    f"Expected 2D array, got {X.ndim}D array instead. Reshape your data either using "
                    "array.reshape(-1, 1) if your data has a single feature or array.reshape(1, -1) if "
                    "it contains a single sample."
                )
            if X.dtype.kind == "c":
                raise ValueError("Complex data not supported.")
        if sp.issparse(X):
            X = X.tocsr()
        validate_data(self, X, reset=reset, skip_check_array=True)
        n, d = X.shape
        for count, what in ((n, "sample"), (d, "feature")):
            if count == 0:
                raise ValueError(
                    f"Found array with 0 {what}(s) (shape={X.shape}) while a minimum of 1 is required by "
                    f"{type(self).__name__}."
                )
        return Chunk(n, X=X)

    def _allocate(self, chunk):
        X = chunk.X
        n_features = X.shape[1]
        names = list(X.columns) if _is_dataframe(X) else None
        fitted, columns, used = [], [], np.zeros(n_features, dtype=bool)
        for name, trans, key in self.transformers:
            idx = _column_indices(key, X, n_features, names)
            used[idx] = True
            fitted.append((name, self._stream_copy(trans), copy.deepcopy(key)))  # no state shared with params
            columns.append(idx)
        rest = np.flatnonzero(~used).astype(np.int64)
        if rest.shape[0] and self.remainder != "drop":
            fitted.append(("remainder", self._stream_copy(self.remainder), rest.tolist()))
            columns.append(rest)
        self.transformers_ = fitted
        self._columns_ = columns

    @staticmethod
    def _stream_copy(trans):
        if trans in ("drop", "passthrough"):
            return trans
        if hasattr(trans, "partial_fit_transform") or getattr(trans, "_fixed_map", False):
            return clone(trans)
        if _is_fitted(trans):
            return copy.deepcopy(trans)  # a transformer fitted beforehand: used as it is
        return clone(trans)  # refused when the stream reaches it (stream_step)

    def _parts(self, X, learn):
        parts = []
        for (name, trans, _), idx in zip(self.transformers_, self._columns_):
            if trans == "drop" or idx.shape[0] == 0:
                continue
            Xs = _safe_indexing(X, idx, axis=1)
            if trans == "passthrough":
                out = Xs
            elif learn:
                out = stream_step(name, trans, Xs)
            else:
                out = trans.transform(Xs)
            weight = (self.transformer_weights or {}).get(name)
            if weight is not None:
                out = _to_array(out) * weight
            parts.append((name, out))
        return parts

    def _stack(self, parts, X):
        """The parts side by side: CSR if any is sparse, else dense (a DataFrame with pandas output)."""
        n = X.shape[0]
        arrays = [(name, _to_array(p)) for name, p in parts]
        for name, a in arrays:
            if a.ndim != 2 or a.shape[0] != n:
                raise ValueError(f"Transformer {name!r} returned shape {a.shape} for {n} rows: expected 2-D rows.")
        widths = {name: a.shape[1] for name, a in arrays}
        if not hasattr(self, "output_indices_"):
            self.sparse_output_ = any(sp.issparse(a) for _, a in arrays)
            start, indices = 0, {}
            for name, _, _ in self.transformers_:
                w = widths.get(name, 0)
                indices[name] = slice(start, start + w)
                start += w
            self.output_indices_ = indices
        else:
            changed = [name for name, w in widths.items()
                       if w != self.output_indices_[name].stop - self.output_indices_[name].start]
            if changed:
                raise ValueError(
                    f"The output width of {changed!r} changed during the stream; a learner downstream "
                    "needs a fixed number of features (fit such a transformer beforehand)."
                )
        if not arrays:
            return np.zeros((n, 0))
        if self.sparse_output_:
            return sp.hstack([sp.csr_matrix(a) for _, a in arrays], format="csr")
        dense = [a.toarray() if sp.issparse(a) else a for _, a in arrays]
        if _get_output_config("transform", self)["dense"] == "pandas":
            return self._pandas([p for _, p in parts], dense, X)
        return np.hstack(dense)

    def _pandas(self, parts, dense, X):
        """A DataFrame keeping each part's dtypes (numbers stay numbers next to string columns)."""
        import pandas as pd

        index = X.index if _is_dataframe(X) else None
        frames = []
        for p, a in zip(parts, dense):
            if _is_dataframe(p):
                p = p.set_axis(range(p.shape[1]), axis=1)
                frames.append(p if index is None else p.set_axis(index, axis=0))
            else:
                frames.append(pd.DataFrame(a, index=index))
        out = pd.concat(frames, axis=1)
        out.columns = list(self.get_feature_names_out())
        return out

    def _learn(self, chunk):
        X = chunk.X
        return self._stack(self._parts(X, learn=True), X)

    _fitted_attribute = "transformers_"

    def _transform_input(self, X):
        return self._validate_chunk(X, reset=False, from_fit=False).X

    def _output_dtype(self, X):  # what the transformers return
        return None

    def _transform(self, X):
        """``X`` transformed with the current state of every transformer (no update)."""
        return self._stack(self._parts(X, learn=False), X)

    def _concat(self, raws):
        if sp.issparse(raws[0]):
            return sp.vstack(raws, format="csr")
        if hasattr(raws[0], "iloc"):
            import pandas as pd

            return pd.concat(raws, axis=0)
        return np.concatenate(raws)

    # ------------------------------------------------------------------ names
    def _feature_names_out(self, names_in):
        """Each transformer's output names, prefixed ``'<name>__'`` (``verbose_feature_names_out``)."""
        out = []
        for (name, trans, _), idx in zip(self.transformers_, self._columns_):
            if trans == "drop" or idx.shape[0] == 0:
                continue
            sub = names_in[idx]
            if trans != "passthrough":
                if not hasattr(trans, "get_feature_names_out"):
                    raise AttributeError(
                        f"Transformer {name} ({type(trans).__name__}) does not provide get_feature_names_out."
                    )
                sub = trans.get_feature_names_out(sub)
            out.extend(f"{name}__{f}" if self.verbose_feature_names_out else str(f) for f in sub)
        if not self.verbose_feature_names_out and len(set(out)) != len(out):
            raise ValueError(
                "Output feature names are not unique with verbose_feature_names_out=False; set it to True."
            )
        return out

    @property
    def named_transformers_(self):
        """The transformers of the stream by name (a :class:`~sklearn.utils.Bunch`)."""
        from sklearn.utils import Bunch

        check_is_fitted(self, "transformers_")
        return Bunch(**{name: trans for name, trans, _ in self.transformers_})

    def __sklearn_tags__(self):
        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        steps = [get_tags(t).input_tags for _, t, _ in self.transformers + [(None, self.remainder, None)]
                 if hasattr(t, "fit")]
        tags.input_tags.sparse = all(t.sparse for t in steps)  # every transformer must take it
        tags.input_tags.string = any(t.string for t in steps)  # strings are a valid input somewhere
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.requires_fit = True
        return tags


def _ragged(X):
    try:
        a = np.asarray(X)
    except (TypeError, ValueError):
        return True
    return a.dtype.kind in "US"



def make_online_column_transformer(*transformers, remainder="drop", transformer_weights=None,
                                   verbose_feature_names_out=True):
    """Build an :class:`OnlineColumnTransformer` from ``(transformer, columns)`` pairs, naming each
    transformer after its class (as :func:`sklearn.compose.make_column_transformer`).

    Parameters
    ----------
    *transformers : tuples of (transformer, columns)
    remainder : {'drop', 'passthrough'} or estimator, default='drop'
    transformer_weights : dict, default=None
    verbose_feature_names_out : bool, default=True

    Returns
    -------
    ct : OnlineColumnTransformer

    Examples
    --------
    >>> from skonline.compose import make_online_column_transformer
    >>> from skonline.preprocessing import OnlineOneHotEncoder
    >>> make_online_column_transformer((OnlineOneHotEncoder(), ["city"]), remainder="passthrough")
    OnlineColumnTransformer(remainder='passthrough',
                            transformers=[('onlineonehotencoder', OnlineOneHotEncoder(),
                                           ['city'])])
    """
    trans, columns = zip(*transformers) if transformers else ((), ())
    named = _name_estimators(trans)
    return OnlineColumnTransformer(
        [(name, t, c) for (name, t), c in zip(named, columns)],
        remainder=remainder,
        transformer_weights=transformer_weights,
        verbose_feature_names_out=verbose_feature_names_out,
    )
