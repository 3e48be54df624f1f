"""The local SQLite store (runs, results, scores, history), the outbox and its delivery to Langfuse;
the files a command writes, whole or not at all."""

from evaluator.storage.delivery import (
    DeliveryReport,
    ExperimentScoreSender,
    LiveDelivery,
    MemorySink,
    ScoreSink,
    SpanDeliveryReport,
    SpanSender,
    deliver,
    deliver_experiment_scores,
    deliver_spans,
)
from evaluator.storage.files import write_whole
from evaluator.storage.store import DeliveryStatus, Finished, KeptTrace, Store, VerdictKey

__all__ = [
    "DeliveryReport",
    "DeliveryStatus",
    "ExperimentScoreSender",
    "Finished",
    "KeptTrace",
    "LiveDelivery",
    "MemorySink",
    "ScoreSink",
    "SpanDeliveryReport",
    "SpanSender",
    "Store",
    "VerdictKey",
    "deliver",
    "deliver_experiment_scores",
    "deliver_spans",
    "write_whole",
]
