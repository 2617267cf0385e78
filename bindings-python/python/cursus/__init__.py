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
:func:`client_options`); a producer or consumer also takes ``error_cb`` (called
with each background :class:`CursusError`) and ``stats_cb`` (called with a
:class:`Statistics` every ``statistics_interval_ms``). A consumer seeks, pauses
and resumes partitions and tells a :class:`RebalanceListener` (or the
``on_assign``/``on_revoke``/``on_lost`` callables given to ``subscribe``) of
assignment changes.

Engine logs go to the ``logging`` logger ``cursus`` (and its children, named
after the engine modules). The engine logs only at the levels that logger
lets through: its effective level is read when ``cursus`` is imported and when
a client is made; after changing it while clients exist, call
:func:`sync_log_level`.
"""

from __future__ import annotations

from ._cursus import (
    DEFAULT_TIMEOUT,
    AdminClient,
    Appended,
    ClusterBroker,
    ClusterPartition,
    ClusterStatus,
    Consumer,
    DeleteOutcome,
    BatchDelivery,
    Delivery,
    GroupMember,
    GroupStatus,
    LeaderElection,
    Latency,
    Message,
    PartitionLag,
    PartitionDescription,
    PartitionOffsets,
    PartitionReassignment,
    Producer,
    Page,
    RangeEvent,
    RecordMetadata,
    ReplayProof,
    Snapshot,
    Statistics,
    StoredEvent,
    TopicDescription,
    TopicInfo,
    TopicMetadata,
    TopicPartition,
    TraceContext,
    TruncateOutcome,
    __version__,
    client_options,
    consumer_options,
    producer_options,
    sync_log_level,
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
from ._rebalance import RebalanceCallback, RebalanceListener
from ._transaction import Transaction

__all__ = [
    "DEFAULT_TIMEOUT",
    "AdminClient",
    "ClusterBroker",
    "ClusterPartition",
    "ClusterStatus",
    "Aggregate",
    "Appended",
    "AuthorizationError",
    "AvailabilityError",
    "ClosedError",
    "ConflictError",
    "Consumer",
    "CursusError",
    "DeleteOutcome",
    "BatchDelivery",
    "Delivery",
    "EventReader",
    "EventStore",
    "FencingError",
    "GroupMember",
    "GroupStatus",
    "InternalError",
    "Latency",
    "LeaderElection",
    "Message",
    "NotFoundError",
    "Page",
    "PartitionDescription",
    "PartitionLag",
    "PartitionOffsets",
    "PartitionReassignment",
    "Producer",
    "RangeEvent",
    "RebalanceCallback",
    "RebalanceListener",
    "RecordMetadata",
    "ReplayProof",
    "RoutingError",
    "Snapshot",
    "Statistics",
    "StoredEvent",
    "TimeoutError",
    "TopicDescription",
    "TopicInfo",
    "TopicMetadata",
    "TopicPartition",
    "TraceContext",
    "Transaction",
    "TruncateOutcome",
    "ValidationError",
    "__version__",
    "client_options",
    "consumer_options",
    "producer_options",
    "sync_log_level",
]
