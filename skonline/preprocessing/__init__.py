"""Online (prequential) preprocessing for streams: scalers that follow the streaming contract.

Row ``t`` of a stream is transformed with statistics of the rows before ``t`` only, so a learner
downstream never sees a row scaled with itself or the future, and the output does not depend on how
the stream was chunked. Chain them with a learner by :func:`skonline.pipeline.make_online_pipeline`.
"""

from ._scalers import OnlineMinMaxScaler, OnlineStandardScaler

__all__ = ["OnlineStandardScaler", "OnlineMinMaxScaler"]
