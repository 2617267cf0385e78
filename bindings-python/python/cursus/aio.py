"""The asyncio API: awaitable producer, consumer, admin client and event store.

Each method returns an asyncio future of the running loop for the engine's
own future, which runs on the engine runtime; its outcome is handed to a
thread of the client (its dispatcher), which resolves the asyncio future
with ``loop.call_soon_threadsafe``. The engine's I/O threads never wait for
the GIL, no thread pool is involved, and cancelling an awaiting task cancels
the engine operation.

Options are checked when an object is constructed (an unknown or mistyped
keyword raises there, not at ``connect()``). ``Producer.flush`` and
``Producer.close`` wait at most the library's 30 s by default
(``timeout=None``: no limit). Objects are used as::

    async with cursus.aio.Producer(bootstrap_servers="127.0.0.1:9000") as p:
        meta = await p.send("topic", b"payload")

or created with ``await cursus.aio.Producer.connect(**config)``.

Callbacks: the rebalance listener (``Consumer.subscribe(on_assign=...,
on_revoke=..., on_lost=...)`` or :meth:`Consumer.set_rebalance_listener`)
and ``error_cb``/``stats_cb`` run on the client's own threads, **not** on the
event loop. Each may be a plain function (called on that thread: keep it
short, and use ``loop.call_soon_threadsafe`` to touch loop objects) or a
coroutine function (``async def``), which is run on the loop the client was
used from (``asyncio.run_coroutine_threadsafe``). A rebalance coroutine is
waited for -- records of newly assigned partitions are returned only after
it finished, and inside it ``await consumer.seek(...)``/``commit()`` work --
while an ``error_cb``/``stats_cb`` coroutine is scheduled in order and not
waited for. ``poll`` inside a rebalance callback raises
:class:`cursus.ValidationError`. Exceptions a callback raises are logged
(logger ``cursus``) and ignored.
"""

from __future__ import annotations

import abc
import asyncio
import concurrent.futures
import inspect
import logging
from types import TracebackType
from typing import (
    Any,
    AsyncIterator,
    Awaitable,
    Callable,
    Dict,
    Iterable,
    List,
    Mapping,
    Optional,
    Sequence,
    TYPE_CHECKING,
    Set,
    Tuple,
    Type,
    TypeVar,
    Union,
    overload,
)

from . import _cursus

if TYPE_CHECKING:
    from ._cursus import BatchRecord, BatchResult, FlushTimeout
from ._eventstore import DEFAULT_SNAPSHOT_EVERY, AsyncAggregate, AsyncEventReader, Text
from ._rebalance import RebalanceListener as _SyncRebalanceListener
from ._transaction import AsyncTransaction
from ._errors import CursusError
from ._cursus import (
    DEFAULT_TIMEOUT,
    Appended,
    ClusterBroker,
    ClusterStatus,
    DeleteOutcome,
    GroupStatus,
    LeaderElection,
    Message,
    PartitionOffsets,
    PartitionReassignment,
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
)

__all__ = [
    "Producer",
    "Consumer",
    "RebalanceListener",
    "RebalanceCallback",
    "AdminClient",
    "Transaction",
    "EventStore",
    "EventReader",
    "Aggregate",
]

Buffer = Union[bytes, bytearray, memoryview]
Offsets = Union[Mapping[TopicPartition, int], Sequence[Tuple[TopicPartition, int]]]
ConfigValue = Union[str, int, bool, Sequence[str], None]
_T = TypeVar("_T", bound="_Client")
_S = TypeVar("_S")


#: A rebalance callback of the asyncio consumer: a plain function or a
#: coroutine function, called with the partitions of the event.
RebalanceCallback = Callable[[List[TopicPartition]], Union[Awaitable[object], object]]
#: ``error_cb``: called with each background error (plain or ``async def``).
ErrorCallback = Callable[[CursusError], Union[Awaitable[object], object]]
#: ``stats_cb``: called with a :class:`cursus.Statistics` every
#: ``statistics_interval_ms`` (plain or ``async def``).
StatsCallback = Callable[[Statistics], Union[Awaitable[object], object]]

_log = logging.getLogger("cursus")


class RebalanceListener:
    """Base class of the asyncio consumer's rebalance listeners: override the
    methods you need, as coroutines (``async def``) or plain methods.

    Same semantics as :class:`cursus.RebalanceListener`: the methods are
    called one at a time while ``poll`` (or ``close``, ``subscribe``) waits;
    a coroutine runs on the consumer's event loop and is waited for, so
    ``await consumer.seek(...)`` or ``await consumer.commit()`` work in it,
    but ``poll`` raises :class:`cursus.ValidationError`. A loss is told
    through :meth:`on_partitions_revoked` unless :meth:`on_partitions_lost`
    is overridden (the library's rule, the same in every Cursus language).
    """

    async def on_partitions_assigned(self, partitions: List[TopicPartition]) -> None:
        """These partitions were added to the assignment (before any of
        their records is returned)."""

    async def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None:
        """These partitions are being taken away; a commit here counts."""

    async def on_partitions_lost(self, partitions: List[TopicPartition]) -> None:
        """These partitions were lost (session expired). Called only when
        overridden: otherwise the loss is told to :meth:`on_partitions_revoked`."""


async def _awaited(value: Awaitable[object]) -> object:
    return await value


def _run_on_loop(loop: asyncio.AbstractEventLoop, value: Awaitable[object], wait: bool) -> None:
    """Runs an awaitable a callback returned on ``loop`` (from a client
    thread); with ``wait``, until it finished (its exception is raised here,
    to be logged by the caller)."""
    if loop.is_closed():
        if inspect.iscoroutine(value):
            value.close()
        raise RuntimeError("the callback's event loop is closed")
    future = asyncio.run_coroutine_threadsafe(_awaited(value), loop)
    if not wait:
        future.add_done_callback(_log_outcome)
        return
    while True:
        try:
            future.result(timeout=0.5)
            return
        except concurrent.futures.TimeoutError:
            # A loop that stopped would never run it: give up then.
            if loop.is_closed() or not loop.is_running():
                future.cancel()
                raise RuntimeError("the callback's event loop stopped") from None


def _log_outcome(future: "concurrent.futures.Future[object]") -> None:
    if future.cancelled():
        return
    error = future.exception()
    if error is not None:
        _log.error("exception in a callback coroutine (ignored)", exc_info=error)


def _threaded(
    loop: asyncio.AbstractEventLoop, callback: Callable[[_S], object], wait: bool
) -> Callable[[_S], None]:
    """A plain callable for a client thread that calls ``callback`` and runs
    the awaitable it may return on ``loop``."""

    def call(arg: _S) -> None:
        result = callback(arg)
        if inspect.isawaitable(result):
            _run_on_loop(loop, result, wait)

    return call


class _ThreadedListener(_SyncRebalanceListener):
    """Adapts a listener whose methods may be coroutines to the consumer's
    listener thread. It has no lost callback: the engine tells a loss as a
    revocation (see :func:`_threaded_listener` for one that has)."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        listener: Union[RebalanceListener, _SyncRebalanceListener],
    ) -> None:
        self._loop = loop
        self._listener = listener

    def _call(self, result: object) -> None:
        if inspect.isawaitable(result):
            _run_on_loop(self._loop, result, True)

    def on_partitions_assigned(self, partitions: List[TopicPartition]) -> None:
        self._call(self._listener.on_partitions_assigned(partitions))

    def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None:
        self._call(self._listener.on_partitions_revoked(partitions))


class _ThreadedLostListener(_ThreadedListener):
    """A :class:`_ThreadedListener` of a listener with its own lost callback."""

    def on_partitions_lost(self, partitions: List[TopicPartition]) -> None:
        self._call(self._listener.on_partitions_lost(partitions))


def _threaded_listener(
    loop: asyncio.AbstractEventLoop,
    listener: Union[RebalanceListener, _SyncRebalanceListener],
) -> _ThreadedListener:
    """The adapter of ``listener``, with a lost callback only when the
    listener overrides ``on_partitions_lost`` (the bases' are never called)."""
    own = getattr(type(listener), "on_partitions_lost", None)
    defaults = (RebalanceListener.on_partitions_lost, _SyncRebalanceListener.on_partitions_lost)
    adapter = _ThreadedListener if own is None or own in defaults else _ThreadedLostListener
    return adapter(loop, listener)


def _callbacks_of(
    error_cb: Optional[ErrorCallback], stats_cb: Optional[StatsCallback]
) -> Dict[str, Any]:
    callbacks: Dict[str, Any] = {}
    if error_cb is not None:
        callbacks["error_cb"] = error_cb
    if stats_cb is not None:
        callbacks["stats_cb"] = stats_cb
    return callbacks


def _client_callbacks(config: Dict[str, Any]) -> Dict[str, Any]:
    """``config`` with ``error_cb``/``stats_cb`` adapted to the running loop."""
    loop = asyncio.get_running_loop()
    adapted = dict(config)
    for name in ("error_cb", "stats_cb"):
        callback = adapted.get(name)
        if callback is not None:
            adapted[name] = _threaded(loop, callback, wait=False)
    return adapted


# Options whose values are secrets: shown as <redacted> (docs/security.md).
_SECRET_OPTIONS = frozenset({"token"})


def _shown(name: str, value: ConfigValue) -> str:
    return "<redacted>" if name in _SECRET_OPTIONS else repr(value)


class _Config(Dict[str, ConfigValue]):
    """A client's options as given; ``repr()`` and ``str()`` print the token
    as ``<redacted>``."""

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {_shown(k, v)}" for k, v in self.items()) + "}"


class _Client(abc.ABC):
    _what = "client"
    _kind = "admin"
    #: ``error_cb``/``stats_cb`` of a producer or consumer (set before
    #: ``_Client.__init__`` runs).
    _callbacks: Dict[str, Any] = {}

    def __init__(self, **config: ConfigValue) -> None:
        # Checked now, so an unknown or mistyped option fails where it is
        # written, not at connect().
        _cursus._check_config(self._kind, **config, **self._callbacks)
        self._config = _Config(config)
        self._native_obj: Optional[object] = None
        self._closed = False

    @abc.abstractmethod
    async def _connect(self) -> object:
        """Creates the native client (each subclass connects its own kind)."""

    async def start(self) -> None:
        """Connects (done by ``async with`` and :meth:`connect`)."""
        if self._closed:
            raise _cursus._closed_error(f"{self._what} is closed", "closed")
        if self._native_obj is None:
            self._native_obj = await self._connect()

    @classmethod
    async def connect(cls: Type[_T], **config: ConfigValue) -> _T:
        """Creates and connects."""
        client = cls(**config)
        await client.start()
        return client

    def _require(self) -> object:
        if self._native_obj is None:
            if self._closed:
                raise _cursus._closed_error(f"{self._what} is closed", "closed")
            raise _cursus._closed_error(
                f"{self._what} is not connected; use 'async with' or await connect()",
                "not_connected",
            )
        return self._native_obj

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    def __repr__(self) -> str:
        # The options as given, the token as <redacted>.
        options = ", ".join(f"{k}={_shown(k, v)}" for k, v in self._config.items())
        if self._closed:
            state = "closed"
        else:
            state = "connected" if self._native_obj is not None else "not connected"
        return f"<cursus.aio.{type(self).__name__}({options}) {state}>"

    async def __aenter__(self: _T) -> _T:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes; closing twice does nothing."""
        self._closed = True
        native = self._native_obj
        if native is not None:
            await native.close()  # type: ignore[attr-defined]


class Producer(_Client):
    """Sends records; every :meth:`send` returns an awaitable that resolves when acknowledged.

    Configured with ``transactional_id``, it is transactional: after
    :meth:`init_transactions`, records are sent inside transactions
    (:meth:`begin_transaction` ... :meth:`commit_transaction` or
    :meth:`abort_transaction`, or ``async with producer.transaction():``).
    """

    _what = "producer"
    _kind = "producer"

    @overload
    def __init__(self, **config: ConfigValue) -> None: ...

    @overload
    def __init__(
        self,
        *,
        error_cb: Optional[ErrorCallback] = None,
        stats_cb: Optional[StatsCallback] = None,
        **config: ConfigValue,
    ) -> None: ...

    def __init__(
        self,
        *,
        # Any: the first overload lets them through typed as options; the
        # runtime check (`_callbacks_of`) rejects what is not callable.
        error_cb: Any = None,
        stats_cb: Any = None,
        **config: ConfigValue,
    ) -> None:
        """Options as keyword arguments (see :func:`cursus.producer_options`);
        ``error_cb(error)`` is called with each background error,
        ``stats_cb(statistics)`` every ``statistics_interval_ms`` (see the
        module docs for where they run)."""
        self._callbacks = _callbacks_of(error_cb, stats_cb)
        super().__init__(**config)
        # Send futures not resolved yet: flush and close return only after
        # the ones sent before them (acknowledged or failed by then) are.
        self._unresolved: Set["asyncio.Future[Any]"] = set()
        self._transactional_id: Optional[str] = None

    async def _connect(self) -> object:
        native = await _cursus.AsyncProducer.connect(
            **self._config, **_client_callbacks(self._callbacks)
        )
        self._transactional_id = native.transactional_id
        return native

    @property
    def transactional_id(self) -> Optional[str]:
        """The configured ``transactional_id`` (``None``: not transactional,
        or not connected yet)."""
        return self._transactional_id

    @property
    def _native(self) -> _cursus.AsyncProducer:
        return self._require()  # type: ignore[return-value]

    def statistics(self) -> Statistics:
        """This producer's statistics now (a plain call: it does no I/O)."""
        return self._native.statistics()

    def send(
        self,
        topic: str,
        value: Buffer,
        *,
        key: Union[Buffer, str, None] = None,
        partition: Optional[int] = None,
        timestamp: Optional[int] = None,
        metadata: Optional[str] = None,
        trace_context: Optional[TraceContext] = None,
    ) -> "asyncio.Future[RecordMetadata]":
        """Hands the record over at once and returns an awaitable that
        resolves with where it was stored, once acknowledged.

        Not a coroutine on purpose: records are queued in the order of the
        ``send`` calls (not of the awaits), per partition, and a later
        :meth:`flush` or :meth:`close` covers them. When ``buffer_memory`` is
        full, the record waits in the engine (in call order) at most
        ``max_block_ms``, then its future fails with ``max_block_exceeded``.
        Raises :class:`cursus.ClosedError` right away on a closed or
        unconnected producer. ``metadata`` is the record's metadata text;
        ``trace_context`` (a :class:`cursus.TraceContext`) is written into
        it (docs/observability.md).
        """
        future = self._native.send(
            topic,
            value,
            key=key,
            partition=partition,
            timestamp=timestamp,
            metadata=metadata,
            trace_context=trace_context,
        )
        self._unresolved.add(future)
        future.add_done_callback(self._unresolved.discard)
        return future

    def send_batch(
        self,
        topic: str,
        records: Iterable[BatchRecord],
        *,
        partition: Optional[int] = None,
        timestamp: Optional[int] = None,
        metadata: Optional[Sequence[Optional[str]]] = None,
        trace_context: Optional[Sequence[Optional[_cursus.TraceContext]]] = None,
    ) -> "asyncio.Future[List[BatchResult]]":
        """Hands a batch of records of ``topic`` over at once, in one call
        into the engine, and returns ONE awaitable that resolves with every
        record's result in order: a :class:`RecordMetadata`, or the exception
        (not raised) of a record that failed. Each item of ``records`` is a
        value, a ``(key, value)`` or a ``(key, value, partition)`` tuple;
        ``partition`` applies to the records without their own, ``timestamp``
        to every record. ``metadata`` and ``trace_context`` carry each
        record's metadata and :class:`cursus.TraceContext` as :meth:`send`
        does one record's: sequences with one entry per record (``None``:
        none for that record). Ordered with :meth:`send` calls like a send.
        """
        future = self._native.send_batch(
            topic,
            records,
            partition=partition,
            timestamp=timestamp,
            metadata=metadata,
            trace_context=trace_context,
        )
        self._unresolved.add(future)
        future.add_done_callback(self._unresolved.discard)
        return future

    async def _settle(self, sent: List["asyncio.Future[Any]"]) -> None:
        # Every record of `sent` is acknowledged or failed: their futures
        # are being resolved on this loop; let that happen first.
        if sent:
            await asyncio.wait(sent)

    async def flush(self, timeout: FlushTimeout = DEFAULT_TIMEOUT) -> None:
        """Sends everything handed over before the call and waits until it
        is acknowledged (or failed) and its future resolved, at most
        ``timeout`` seconds (the library's 30 s by default; ``None``: no limit). Raises
        :class:`cursus.TimeoutError` when the deadline passes."""
        sent = list(self._unresolved)
        await self._native.flush(timeout)
        await self._settle(sent)

    async def close(self, timeout: FlushTimeout = DEFAULT_TIMEOUT) -> None:
        """Flushes within ``timeout`` seconds (the library's 30 s by default;
        ``None``: no limit), fails what is left (those futures raise
        :class:`cursus.ClosedError`) and closes; idempotent."""
        self._closed = True
        native = self._native_obj
        if native is not None:
            sent = list(self._unresolved)
            await native.close(timeout)  # type: ignore[attr-defined]
            await self._settle(sent)

    # -- transactions (a producer configured with transactional_id)

    async def init_transactions(self) -> None:
        """Obtains the producer's transactional session from the broker
        (INIT_PRODUCER_ID), fencing any older producer with the same
        ``transactional_id`` and aborting a transaction it left open. Call
        once, before the first :meth:`begin_transaction`."""
        await self._native.init_transactions()

    async def begin_transaction(self) -> None:
        """Begins a transaction: records sent until :meth:`commit_transaction`
        or :meth:`abort_transaction` belong to it. Raises
        :class:`cursus.ValidationError` with code ``invalid_transaction_state``
        before :meth:`init_transactions` or while a transaction is open."""
        await self._native.begin_transaction()

    async def send_offsets_to_transaction(
        self, consumer: Consumer, offsets: Optional[Offsets] = None
    ) -> None:
        """Adds consumed offsets to the open transaction, fenced by
        ``consumer``'s group session (it must have joined: polled once); they
        are committed with the transaction's records, or not at all. Without
        ``offsets``: what ``consumer`` has delivered so far (the offset after
        the last record :meth:`Consumer.poll` returned, per partition); with
        ``offsets`` (``{TopicPartition: next_offset}`` or a list of pairs):
        those."""
        await self._native.send_offsets_to_transaction(consumer._native, offsets)

    async def append_stream(
        self,
        topic: str,
        key: str,
        expected_version: int,
        payload: Text,
        *,
        event_type: str = "",
        metadata: Text = "",
        schema_version: Optional[int] = None,
        event_id: Optional[str] = None,
    ) -> Appended:
        """Appends an event to aggregate ``key`` of event-sourcing ``topic``
        inside the open transaction (see
        :meth:`cursus.Producer.append_stream`): it becomes version
        ``expected_version + 1`` when the transaction commits and never
        exists if it aborts; until then the aggregate is reserved
        (``stream_version_reserved`` for other writers)."""
        return await self._native.append_stream(
            topic,
            key,
            expected_version,
            payload,
            event_type=event_type,
            metadata=metadata,
            schema_version=schema_version,
            event_id=event_id,
        )

    async def commit_transaction(self) -> None:
        """Waits for every record of the transaction, then commits it: its
        records and offsets become visible to ``read_committed`` consumers
        together. Returns once the futures of the records sent before it are
        resolved. When the outcome stays unknown (connection lost) the
        engine repeats the commit until the broker decides, for up to
        ``delivery_timeout_ms``; if it is still unknown then, the error is
        retryable and the transaction stays open (commit again, or abort).
        A failed send of the transaction makes the commit fail: abort then."""
        sent = list(self._unresolved)
        await self._native.commit_transaction()
        await self._settle(sent)

    async def abort_transaction(self) -> None:
        """Waits for the transaction's sends to finish, then aborts it: none
        of its records or offsets ever become visible to ``read_committed``
        consumers. Returns once the futures of the records sent before it
        are resolved."""
        sent = list(self._unresolved)
        await self._native.abort_transaction()
        await self._settle(sent)

    def transaction(self) -> Transaction:
        """One transaction as an asynchronous context manager::

            async with producer.transaction():
                producer.send("out", b"...")
                await producer.send_offsets_to_transaction(consumer)

        begins; commits when the block ends normally; aborts when it raises
        or is cancelled, and the block's exception propagates (an abort that
        fails too is attached to it as a note and logged, never raised
        instead of it). A commit error that is not retryable aborts the
        transaction before it is raised; a retryable one (outcome unknown)
        leaves it open."""
        return AsyncTransaction(self)


class Consumer(_Client):
    """A consumer-group member; ``async for message in consumer`` iterates."""

    _what = "consumer"
    _kind = "consumer"

    @overload
    def __init__(self, **config: ConfigValue) -> None: ...

    @overload
    def __init__(
        self,
        *,
        error_cb: Optional[ErrorCallback] = None,
        stats_cb: Optional[StatsCallback] = None,
        **config: ConfigValue,
    ) -> None: ...

    def __init__(
        self,
        *,
        # Any: the first overload lets them through typed as options; the
        # runtime check (`_callbacks_of`) rejects what is not callable.
        error_cb: Any = None,
        stats_cb: Any = None,
        **config: ConfigValue,
    ) -> None:
        """Options as keyword arguments (see :func:`cursus.consumer_options`;
        ``group_id`` is required); ``error_cb(error)`` is called with each
        background error, ``stats_cb(statistics)`` every
        ``statistics_interval_ms`` (see the module docs for where they run)."""
        self._callbacks = _callbacks_of(error_cb, stats_cb)
        super().__init__(**config)

    async def _connect(self) -> object:
        return await _cursus.AsyncConsumer.connect(
            **self._config, **_client_callbacks(self._callbacks)
        )

    @property
    def _native(self) -> _cursus.AsyncConsumer:
        return self._require()  # type: ignore[return-value]

    def _rebalance_callables(
        self,
        on_assign: Optional[RebalanceCallback],
        on_revoke: Optional[RebalanceCallback],
        on_lost: Optional[RebalanceCallback],
    ) -> Dict[str, Optional[Callable[[List[TopicPartition]], None]]]:
        loop = asyncio.get_running_loop()
        return {
            name: None if cb is None else _threaded(loop, cb, wait=True)
            for name, cb in (("on_assign", on_assign), ("on_revoke", on_revoke), ("on_lost", on_lost))
        }

    async def subscribe(
        self,
        topics: Union[str, Iterable[str]],
        on_assign: Optional[RebalanceCallback] = None,
        on_revoke: Optional[RebalanceCallback] = None,
        on_lost: Optional[RebalanceCallback] = None,
    ) -> None:
        """Subscribes to a topic or topics. ``on_assign``, ``on_revoke`` and
        ``on_lost`` (plain or coroutine functions, called with a list of
        :class:`cursus.TopicPartition`) replace the rebalance listener when
        any is given; a loss without ``on_lost`` calls ``on_revoke``."""
        callbacks = self._rebalance_callables(on_assign, on_revoke, on_lost)
        await self._native.subscribe(
            topics if isinstance(topics, str) else list(topics), **callbacks
        )

    async def subscribe_pattern(
        self,
        pattern: str,
        on_assign: Optional[RebalanceCallback] = None,
        on_revoke: Optional[RebalanceCallback] = None,
        on_lost: Optional[RebalanceCallback] = None,
    ) -> None:
        """Subscribes to every topic matching a glob pattern; the callbacks
        as for :meth:`subscribe`."""
        callbacks = self._rebalance_callables(on_assign, on_revoke, on_lost)
        await self._native.subscribe_pattern(pattern, **callbacks)

    def set_rebalance_listener(
        self, listener: Union[RebalanceListener, _SyncRebalanceListener, None]
    ) -> None:
        """Sets (or with ``None`` removes) the rebalance listener: a
        :class:`RebalanceListener` (coroutine methods) or a
        :class:`cursus.RebalanceListener` (plain methods). Call it from the
        event loop the consumer is used on (its coroutines run there)."""
        if listener is None:
            self._native.set_rebalance_listener(None)
        else:
            loop = asyncio.get_running_loop()
            self._native.set_rebalance_listener(_threaded_listener(loop, listener))

    async def seek(self, partition: TopicPartition, offset: int) -> None:
        """Makes the next :meth:`poll` return records of an assigned
        partition from ``offset`` on (see :meth:`cursus.Consumer.seek`)."""
        await self._native.seek(partition, offset)

    async def position(self, partition: TopicPartition) -> int:
        """The offset of the next record :meth:`poll` returns for an
        assigned partition."""
        return await self._native.position(partition)

    async def pause(self, partitions: Iterable[TopicPartition]) -> None:
        """Stops returning records of these assigned partitions until
        :meth:`resume` (the consumer stays in its group)."""
        await self._native.pause(list(partitions))

    async def resume(self, partitions: Iterable[TopicPartition]) -> None:
        """Returns records of these partitions again, from their positions."""
        await self._native.resume(list(partitions))

    async def paused(self) -> List[TopicPartition]:
        """The paused partitions, sorted."""
        return await self._native.paused()

    async def statistics(self) -> Statistics:
        """This consumer's statistics, with the lag of each assigned
        partition (asks the broker for the end offsets)."""
        return await self._native.statistics()

    async def poll(
        self, timeout: Optional[float] = None, max_records: Optional[int] = None
    ) -> List[Message]:
        """Returns the next records, up to ``max_records`` (default and
        maximum: the ``max_poll_records`` option); ``[]`` if none came within
        ``timeout`` seconds (``None``: wait for one) or after :meth:`wakeup`.
        Only the records returned count as delivered: commits (explicit,
        automatic, at close) cover exactly those."""
        return await self._native.poll(timeout, max_records)

    def wakeup(self) -> None:
        """Makes the pending :meth:`poll` (or else the next) return ``[]`` at once."""
        self._native.wakeup()

    async def commit(self) -> None:
        """Commits the positions of the records returned so far."""
        await self._native.commit()

    async def commit_offsets(
        self,
        offsets: Union[Mapping[TopicPartition, int], Sequence[Tuple[TopicPartition, int]]],
    ) -> None:
        """Commits explicit next offsets."""
        await self._native.commit_offsets(offsets)

    @overload
    async def committed(self, partitions: TopicPartition) -> Optional[int]: ...

    @overload
    async def committed(
        self, partitions: Iterable[TopicPartition]
    ) -> Dict[TopicPartition, Optional[int]]: ...

    async def committed(
        self, partitions: Union[TopicPartition, Iterable[TopicPartition]]
    ) -> Union[Optional[int], Dict[TopicPartition, Optional[int]]]:
        """The group's committed next offset of one partition (``None``:
        nothing committed), or of each partition of a list, as a dict in
        the order asked."""
        if isinstance(partitions, TopicPartition):
            return await self._native.committed(partitions)
        return await self._native.committed(list(partitions))

    async def assignment(self) -> List[TopicPartition]:
        """The partitions currently assigned to this member."""
        return await self._native.assignment()

    async def member_id(self) -> Optional[str]:
        """This member's id in its group, or None before it has joined."""
        return await self._native.member_id()

    async def __aiter__(self) -> AsyncIterator[Message]:
        while True:
            for message in await self.poll():
                yield message


#: ``async with producer.transaction():`` (see :meth:`Producer.transaction`).
Transaction = AsyncTransaction[Producer]


class AdminClient(_Client):
    """Topic and group administration."""

    _what = "admin client"
    _kind = "admin"

    async def _connect(self) -> object:
        return await _cursus.AsyncAdmin.connect(**self._config)

    @property
    def _native(self) -> _cursus.AsyncAdmin:
        return self._require()  # type: ignore[return-value]

    async def create_topic(
        self,
        name: str,
        *,
        partitions: Optional[int] = None,
        idempotent: Optional[bool] = None,
        event_sourcing: Optional[bool] = None,
        aggregate_replay: Optional[bool] = None,
        replication_factor: Optional[int] = None,
        min_in_sync_replicas: Optional[int] = None,
        cleanup_policy: Optional[str] = None,
        retention_hours: Optional[int] = None,
        retention_bytes: Optional[int] = None,
        partitioner: Optional[str] = None,
        auth_policy: Optional[str] = None,
        read_acl: Optional[List[str]] = None,
        write_acl: Optional[List[str]] = None,
    ) -> TopicInfo:
        """Creates a topic (or patches an existing one)."""
        return await self._native.create_topic(
            name,
            partitions=partitions,
            idempotent=idempotent,
            event_sourcing=event_sourcing,
            aggregate_replay=aggregate_replay,
            replication_factor=replication_factor,
            min_in_sync_replicas=min_in_sync_replicas,
            cleanup_policy=cleanup_policy,
            retention_hours=retention_hours,
            retention_bytes=retention_bytes,
            partitioner=partitioner,
            auth_policy=auth_policy,
            read_acl=read_acl,
            write_acl=write_acl,
        )

    async def alter_topic_config(
        self, topic: str, min_in_sync_replicas: Optional[int] = None
    ) -> TopicInfo:
        """Replaces the min_in_sync_replicas override."""
        return await self._native.alter_topic_config(topic, min_in_sync_replicas)

    async def delete_topic(self, topic: str, *, if_exists: bool = False) -> DeleteOutcome:
        """Deletes a topic."""
        return await self._native.delete_topic(topic, if_exists=if_exists)

    async def truncate_topic(self, topic: str, expected_revision: int) -> TruncateOutcome:
        """Truncates a topic at its current revision."""
        return await self._native.truncate_topic(topic, expected_revision)

    async def cluster_status(self) -> ClusterStatus:
        """CLUSTER_STATUS: the Raft leader, every broker and every partition
        (distributed mode; a standalone broker raises ValidationError with
        code ``distribution_not_enabled``)."""
        return await self._native.cluster_status()

    async def elect_leader(self, topic: str, partition: int, broker_id: str) -> LeaderElection:
        """ELECT_LEADER: makes ``broker_id`` (an active in-sync replica) the
        leader of ``topic``/``partition``; electing the current leader again
        changes nothing (``changed`` is False)."""
        return await self._native.elect_leader(topic, partition, broker_id)

    async def reassign_partition(
        self, topic: str, partition: int, replicas: List[str]
    ) -> PartitionReassignment:
        """REASSIGN_PARTITIONS (a project extension): moves the replicas of
        ``topic``/``partition`` to the brokers ``replicas`` (broker ids,
        preferred leader first, as many as the topic's replication factor)
        and resolves once the move is done: the new replicas in sync, the
        others dropped, the leader one of ``replicas``; no acknowledged
        record is lost. After the client's ``request_timeout_ms`` it raises
        the retryable ``TimeoutError`` with code ``reassignment_timeout``
        while the move goes on (call again with the same replicas to keep
        waiting). Errors: ``topic_not_found``, ``partition_not_found``,
        ``broker_not_found``, ``replica_broker_inactive``,
        ``invalid_replicas``, ``invalid_replication_factor``,
        ``reassignment_in_progress``, ``distribution_not_enabled``
        (standalone)."""
        return await self._native.reassign_partition(topic, partition, list(replicas))

    async def list_cluster(self) -> List[ClusterBroker]:
        """LIST_CLUSTER: the registered brokers (distributed mode)."""
        return await self._native.list_cluster()

    async def list_topics(self) -> List[str]:
        """Topic names."""
        return await self._native.list_topics()

    async def describe_topic(self, topic: str) -> TopicDescription:
        """DESCRIBE a topic."""
        return await self._native.describe_topic(topic)

    async def metadata(self, topic: str) -> TopicMetadata:
        """METADATA of a topic."""
        return await self._native.metadata(topic)

    async def list_offsets(
        self, topic: str, partition: Optional[int] = None
    ) -> List[PartitionOffsets]:
        """LIST_OFFSETS of a topic."""
        return await self._native.list_offsets(topic, partition)

    async def group_status(self, group: str) -> GroupStatus:
        """GROUP_STATUS of a group."""
        return await self._native.group_status(group)

    async def list_groups(self) -> List[str]:
        """Group names."""
        return await self._native.list_groups()

    async def help(self) -> List[str]:
        """The broker's HELP lines."""
        return await self._native.help()


#: ``async for`` over a read of :class:`EventStore` (see :class:`cursus.EventReader`).
EventReader = AsyncEventReader

#: An aggregate loaded by :meth:`EventStore.load_aggregate` (see :class:`cursus.Aggregate`).
Aggregate = AsyncAggregate


class EventStore(_Client):
    """The event store (see :class:`cursus.EventStore`) with coroutines:
    ``read_stream``, ``history`` and ``browse`` read the first page and
    return an :class:`EventReader` (``async for event in reader``, or
    ``async for page in reader.pages()``); ``load_aggregate`` returns an
    :class:`Aggregate` whose ``append`` is a coroutine.

    ::

        async with cursus.aio.EventStore(bootstrap_servers="127.0.0.1:9000") as store:
            await store.append("orders", "order-1", 0, "{}", event_type="OrderCreated")
            async for event in await store.read_stream("orders", "order-1"):
                print(event.version, event.text)
    """

    _what = "event store"
    _kind = "admin"

    async def _connect(self) -> object:
        return await _cursus.AsyncEventStore.connect(**self._config)

    @property
    def _native(self) -> _cursus.AsyncEventStore:
        return self._require()  # type: ignore[return-value]

    async def append(
        self,
        topic: str,
        key: str,
        expected_version: int,
        payload: Text,
        *,
        event_type: str = "",
        metadata: Text = "",
        schema_version: Optional[int] = None,
        event_id: Optional[str] = None,
    ) -> Appended:
        """Appends if the aggregate is at ``expected_version`` (see
        :meth:`cursus.EventStore.append`, also for ``event_id``)."""
        return await self._native.append(
            topic,
            key,
            expected_version,
            payload,
            event_type=event_type,
            metadata=metadata,
            schema_version=schema_version,
            event_id=event_id,
        )

    async def replay_proof(
        self, topic: str, match_id: str, expected_last_sequence: Optional[int] = None
    ) -> ReplayProof:
        """The complete replay proof of aggregate ``match_id``, or the
        broker's error with ``.proof`` (see
        :meth:`cursus.EventStore.replay_proof`)."""
        return await self._native.replay_proof(topic, match_id, expected_last_sequence)

    async def event_range(
        self,
        topic: str,
        match_id: str,
        from_sequence: int,
        to_sequence: int,
        max_records: Optional[int] = None,
    ) -> Tuple[ReplayProof, List[RangeEvent]]:
        """``(proof, events)``: sequences ``from_sequence`` to
        ``to_sequence`` of aggregate ``match_id`` under a complete proof (see
        :meth:`cursus.EventStore.event_range`)."""
        return await self._native.event_range(
            topic, match_id, from_sequence, to_sequence, max_records
        )

    async def stream_version(self, topic: str, key: str) -> int:
        """The aggregate's current version (0 when it has no event)."""
        return await self._native.stream_version(topic, key)

    async def save_snapshot(self, topic: str, key: str, version: int, state: Text) -> None:
        """Saves ``state`` as the aggregate's snapshot at ``version``."""
        await self._native.save_snapshot(topic, key, version, state)

    async def read_snapshot(self, topic: str, key: str) -> Optional[Snapshot]:
        """The aggregate's latest snapshot, or ``None``."""
        return await self._native.read_snapshot(topic, key)

    async def read_stream(
        self,
        topic: str,
        key: str,
        from_version: int = 1,
        *,
        max_events: Optional[int] = None,
        max_bytes: Optional[int] = None,
    ) -> AsyncEventReader:
        """Reads aggregate ``key`` from ``from_version`` (see
        :meth:`cursus.EventStore.read_stream`); reads the first page now."""
        cursor = _cursus._EventCursor.stream(topic, key, from_version, max_events, max_bytes)
        return await AsyncEventReader._start(self._native, cursor)

    async def history(
        self,
        topic: str,
        key: str,
        from_version: int = 1,
        to_version: Optional[int] = None,
        *,
        max_records: Optional[int] = None,
        max_bytes: Optional[int] = None,
    ) -> AsyncEventReader:
        """Reads the original events of aggregate ``key`` (see
        :meth:`cursus.EventStore.history`); reads the first page now."""
        cursor = _cursus._EventCursor.history(
            topic, key, from_version, to_version, max_records, max_bytes
        )
        return await AsyncEventReader._start(self._native, cursor)

    async def browse(
        self,
        topic: str,
        partition: int,
        from_offset: int = 0,
        to_offset: Optional[int] = None,
        *,
        max_records: Optional[int] = None,
        max_bytes: Optional[int] = None,
    ) -> AsyncEventReader:
        """Reads the records of one partition (see
        :meth:`cursus.EventStore.browse`); reads the first page now."""
        cursor = _cursus._EventCursor.browse(
            topic, partition, from_offset, to_offset, max_records, max_bytes
        )
        return await AsyncEventReader._start(self._native, cursor)

    async def load_aggregate(
        self,
        topic: str,
        key: str,
        initial: _S,
        apply: Callable[[_S, StoredEvent], _S],
        *,
        deserialize: Optional[Callable[[str], _S]] = None,
        serialize: Optional[Callable[[_S], str]] = None,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    ) -> AsyncAggregate[_S]:
        """Loads aggregate ``key`` (see :meth:`cursus.EventStore.load_aggregate`)."""
        aggregate = AsyncAggregate(
            self, topic, key, initial, apply, deserialize, serialize, snapshot_every
        )
        await aggregate.reload()
        return aggregate
