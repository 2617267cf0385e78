"""Cursus: a Python client for the Cursus message broker (Wire v2).

The synchronous API (:class:`Producer`, :class:`Consumer`,
:class:`AdminClient`) releases the GIL around every blocking call; long waits
can be interrupted with Ctrl-C. A producer configured with
``transactional_id`` sends inside transactions (``with
producer.transaction():``, see :class:`Transaction`). The asyncio API is :mod:`cursus.aio`.
Configuration is passed as keyword arguments named like the engine's options
(see :func:`producer_options`, :func:`consumer_options`,
:func:`client_options`). Engine logs go to the ``logging`` logger ``cursus``.
"""

from __future__ import annotations

from ._cursus import (
    AdminClient,
    Consumer,
    DeleteOutcome,
    Delivery,
    GroupMember,
    GroupStatus,
    Message,
    PartitionDescription,
    PartitionOffsets,
    Producer,
    RecordMetadata,
    TopicDescription,
    TopicInfo,
    TopicMetadata,
    TopicPartition,
    TruncateOutcome,
    __version__,
    client_options,
    consumer_options,
    producer_options,
)
from ._errors import (
    AuthorizationError,
    AvailabilityError,
    ClosedError,
    ConflictError,
    CursusError,
    FencingError,
    InternalError,
    NotFoundError,
    RoutingError,
    TimeoutError,
    ValidationError,
)
from ._transaction import Transaction

__all__ = [
    "AdminClient",
    "AuthorizationError",
    "AvailabilityError",
    "ClosedError",
    "ConflictError",
    "Consumer",
    "CursusError",
    "DeleteOutcome",
    "Delivery",
    "FencingError",
    "GroupMember",
    "GroupStatus",
    "InternalError",
    "Message",
    "NotFoundError",
    "PartitionDescription",
    "PartitionOffsets",
    "Producer",
    "RecordMetadata",
    "RoutingError",
    "TimeoutError",
    "TopicDescription",
    "TopicInfo",
    "TopicMetadata",
    "TopicPartition",
    "Transaction",
    "TruncateOutcome",
    "ValidationError",
    "__version__",
    "client_options",
    "consumer_options",
    "producer_options",
]
