"""Online column transformers: a transformer per group of columns of a raw table, on a stream.

:class:`OnlineColumnTransformer` (and :func:`make_online_column_transformer`) apply online
transformers, such as :class:`~skonline.preprocessing.OnlineOneHotEncoder` on the string columns
and :class:`~skonline.preprocessing.OnlineStandardScaler` on the numbers, to a table as it comes:
row ``t`` of every column is transformed with the state before ``t``, whatever the chunking.
"""

from ._column_transformer import OnlineColumnTransformer, make_online_column_transformer

__all__ = ["OnlineColumnTransformer", "make_online_column_transformer"]
