"""Why a run ended: the ``reason`` of ``run.failed`` / ``run.partial`` /
``run.cancelled`` and of ``GET …/runs/{id}``.

A run that ends on a ``SparkTideError`` carries that error's code instead
(``CITATION_LIMIT_EXCEEDED``, ``KNOWLEDGE_SOURCE_ERROR``…), so a reason is
always a ``RunReason`` or an ``ErrorCode`` (docs/errors.md, "Run reasons").
"""

from enum import StrEnum


class RunReason(StrEnum):
    CANCELLED_BY_USER = "CANCELLED_BY_USER"
    STEP_LIMIT_REACHED = "STEP_LIMIT_REACHED"
    PROVIDER_FAILED = "PROVIDER_FAILED"
    WORKER_LOST = "WORKER_LOST"
    INTERNAL_ERROR = "INTERNAL_ERROR"
