"""Cursus: a Python client for the Cursus message broker (Wire v2).

The synchronous API (:class:`Producer`, :class:`Consumer`,
:class:`AdminClient`) releases the GIL around every blocking call; long waits
can be interrupted with Ctrl-C. A producer configured with
``transactional_id`` sends inside transactions (``with
producer.transaction():``, see :class:`Transaction`). :class:`EventStore`
appends to and reads event-sourcing topics (per-aggregate streams with
optimistic concurrency, snapshots, the :class:`Aggregate` helper; on
aggregate replay topics event ids, exact retries, replay proofs and range
reads), and ``Producer.append_stream`` appends an event inside a
transaction. The
asyncio API is :mod:`cursus.aio`.
Configuration is passed as keyword arguments named like the engine's options
(see :func:`producer_options`, :func:`consumer_options`,
:func:`client_options`). Engine logs go to the ``logging`` logger ``cursus``.
"""

from __future__ import annotations

from ._cursus import (
    AdminClient,
    Appended,
    Consumer,
    DeleteOutcome,
    Delivery,
    GroupMember,
    GroupStatus,
    Message,
    PartitionDescription,
    PartitionOffsets,
    Producer,
    Page,
    RangeEvent,
    RecordMetadata,
    ReplayProof,
    Snapshot,
    StoredEvent,
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
from ._eventstore import Aggregate, EventReader, EventStore
from ._transaction import Transaction

__all__ = [
    "AdminClient",
    "Aggregate",
    "Appended",
    "AuthorizationError",
    "AvailabilityError",
    "ClosedError",
    "ConflictError",
    "Consumer",
    "CursusError",
    "DeleteOutcome",
    "Delivery",
    "EventReader",
    "EventStore",
    "FencingError",
    "GroupMember",
    "GroupStatus",
    "InternalError",
    "Message",
    "NotFoundError",
    "Page",
    "PartitionDescription",
    "PartitionOffsets",
    "Producer",
    "RangeEvent",
    "RecordMetadata",
    "ReplayProof",
    "RoutingError",
    "Snapshot",
    "StoredEvent",
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
