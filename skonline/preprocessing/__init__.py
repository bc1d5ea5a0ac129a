"""Online (prequential) preprocessing for streams: scalers, encoders and an imputer.

Row ``t`` of a stream is transformed with statistics of the rows before ``t`` only, so a learner
downstream never sees a row scaled with itself or the future, and the output does not depend on how
the stream was chunked. Categorical columns are encoded with the categories seen so far
(:class:`OnlineOneHotEncoder`, into a width fixed from the first row) or hashed
(:class:`OnlineHashingEncoder`); missing values are imputed from the rows before
(:class:`OnlineImputer`). Chain them with a learner by :func:`skonline.pipeline.make_online_pipeline`,
per column by :class:`skonline.compose.OnlineColumnTransformer`.
"""

from ._encoders import OnlineHashingEncoder, OnlineOneHotEncoder
from ._imputer import OnlineImputer
from ._scalers import OnlineMinMaxScaler, OnlineStandardScaler

__all__ = ["OnlineStandardScaler", "OnlineMinMaxScaler", "OnlineOneHotEncoder", "OnlineHashingEncoder", "OnlineImputer"]
