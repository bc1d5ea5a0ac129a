"""Online pipelines: online transformers and a learner, streamed chunk by chunk prequentially.

scikit-learn's :class:`~sklearn.pipeline.Pipeline` has no ``partial_fit``, and fitting a scaler
on a chunk before the learner sees it would scale each row with the rows after it.
:class:`OnlinePipeline` transforms row ``t`` with the transformers' state before ``t``, then the
final learner learns it, under the same streaming contract as every skonline estimator.
"""

from ._pipeline import OnlinePipeline, make_online_pipeline

__all__ = ["OnlinePipeline", "make_online_pipeline"]
