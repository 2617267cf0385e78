"""The event store (``docs/event-sourcing.md``): :class:`EventStore` (and
:class:`cursus.aio.EventStore`), the paged readers and the aggregate helper.

An event-sourcing topic (created with ``event_sourcing=True``) keeps, per
aggregate key, a stream of events numbered 1, 2, 3, ... with optimistic
concurrency, and the aggregate's latest snapshot. Payloads, metadata and
snapshot states are UTF-8 text (``str``, or ``bytes`` holding UTF-8); an
aggregate key is text without whitespace.

Reads are paged by the broker. ``read_stream``, ``history`` and ``browse``
read the first page when called (so a bad topic or key raises there) and
return a reader: iterating it yields the events of every page, fetching the
next page when one is used up; ``reader.pages()`` yields the pages
themselves instead (with ``has_more``, ``completeness``, ...). Both draw on
the same position, so use one or the other.

An aggregate replay topic (``event_sourcing=True, idempotent=True,
aggregate_replay=True``) gives every event an identity (its ``event_id``,
and the SHA-256 of its payload): an append repeated with the same version,
id and payload answers the original offset instead of appending twice, and
any other reuse is ``aggregate_identity_conflict``. ``replay_proof`` proves
that an aggregate's retained events are exactly sequences 1..n with
verified identities; ``event_range`` reads some of them under such a proof.
"""

from __future__ import annotations

import collections
from typing import (
    TYPE_CHECKING,
    AsyncIterator,
    Callable,
    Deque,
    Generic,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

from . import _cursus
from ._cursus import Appended, Page, RangeEvent, ReplayProof, Snapshot, StoredEvent

if TYPE_CHECKING:
    from .aio import EventStore as AsyncEventStore

__all__ = [
    "EventStore",
    "EventReader",
    "AsyncEventReader",
    "Aggregate",
    "AsyncAggregate",
    "DEFAULT_SNAPSHOT_EVERY",
]

S = TypeVar("S")
Text = Union[str, bytes]
ConfigValue = Union[str, int, bool, Sequence[str], None]

#: Snapshot every 500 events unless told otherwise (the engine's default).
DEFAULT_SNAPSHOT_EVERY = 500


class _ReaderState:
    """What a reader knows: pages read but not handed out, the events of the
    page being iterated, and the last page's attributes."""

    def __init__(self, first: Optional[Page]) -> None:
        self._unread: Deque[Page] = collections.deque()
        self._events: Deque[StoredEvent] = collections.deque()
        self.snapshot: Optional[Snapshot] = None
        self.partition: Optional[int] = None
        self.completeness: Optional[str] = None
        self.head_version: Optional[int] = None
        self.readable_end_offset: Optional[int] = None
        self.earliest_offset: Optional[int] = None
        self.pages_read = 0
        if first is not None:
            self.snapshot = first.snapshot
            self.partition = first.partition
            self._took(first)

    def _took(self, page: Page) -> None:
        self.pages_read += 1
        self.completeness = page.completeness
        self.head_version = page.head_version
        self.readable_end_offset = page.readable_end_offset
        self.earliest_offset = page.earliest_offset
        self._unread.append(page)


class EventReader(_ReaderState, Iterator[StoredEvent]):
    """A paged read of :class:`EventStore` (``read_stream``, ``history``,
    ``browse``). Iterating yields every event (browse: every record) in
    order, reading the next page from the broker when needed; :meth:`pages`
    yields whole pages instead.

    Attributes:
        snapshot: stream reads: the aggregate's snapshot, when its version
            is at least ``from_version`` (the events then start after it);
            otherwise ``None``.
        partition: the partition read.
        completeness: history reads: ``"complete"``, ``"partial"`` or
            ``"unknown"``, of the last page read.
        head_version: history reads: the aggregate's version, as of the
            last page read.
        readable_end_offset, earliest_offset: browse reads, of the last page
            read.
        pages_read: how many pages were read so far.
    """

    def __init__(self, native: _cursus._EventStore, cursor: _cursus._EventCursor) -> None:
        self._native = native
        self._cursor = cursor
        super().__init__(native.next_page(cursor))

    @property
    def has_more(self) -> bool:
        """True while pages are left to read from the broker."""
        return not self._cursor.done

    def _next_page(self) -> Optional[Page]:
        if self._unread:
            return self._unread.popleft()
        page = self._native.next_page(self._cursor)
        if page is None:
            return None
        self._took(page)
        return self._unread.popleft()

    def pages(self) -> Iterator[Page]:
        """Yields the pages not yet iterated: the first (already read), then
        one per request to the broker, until the read is done."""
        while True:
            page = self._next_page()
            if page is None:
                return
            yield page

    def __iter__(self) -> EventReader:
        return self

    def __next__(self) -> StoredEvent:
        while not self._events:
            page = self._next_page()
            if page is None:
                raise StopIteration
            self._events.extend(page.events)
        return self._events.popleft()


class AsyncEventReader(_ReaderState, AsyncIterator[StoredEvent]):
    """A paged read of :class:`cursus.aio.EventStore`: ``async for`` yields
    every event; :meth:`pages` yields whole pages. The attributes are
    :class:`EventReader`'s."""

    def __init__(
        self,
        native: _cursus.AsyncEventStore,
        cursor: _cursus._EventCursor,
        first: Optional[Page],
    ) -> None:
        self._native = native
        self._cursor = cursor
        super().__init__(first)

    @classmethod
    async def _start(
        cls, native: _cursus.AsyncEventStore, cursor: _cursus._EventCursor
    ) -> AsyncEventReader:
        return cls(native, cursor, await native.next_page(cursor))

    @property
    def has_more(self) -> bool:
        """True while pages are left to read from the broker."""
        return not self._cursor.done

    async def _next_page(self) -> Optional[Page]:
        if self._unread:
            return self._unread.popleft()
        page = await self._native.next_page(self._cursor)
        if page is None:
            return None
        self._took(page)
        return self._unread.popleft()

    async def pages(self) -> AsyncIterator[Page]:
        """Yields the pages not yet iterated (see :meth:`EventReader.pages`)."""
        while True:
            page = await self._next_page()
            if page is None:
                return
            yield page

    def __aiter__(self) -> AsyncEventReader:
        return self

    async def __anext__(self) -> StoredEvent:
        while not self._events:
            page = await self._next_page()
            if page is None:
                raise StopAsyncIteration
            self._events.extend(page.events)
        return self._events.popleft()


class _AggregateBase(Generic[S]):
    """The Python half shared by :class:`Aggregate` and
    :class:`AsyncAggregate`: folding events into ``state`` through
    ``apply``, and ``serialize`` / ``deserialize`` of the state. The
    bookkeeping is the engine's ``Aggregate`` (``_cursus._Aggregate`` /
    ``_cursus._AsyncAggregate``): the version appends go at, the snapshot
    version, when a snapshot is due, and the appends and snapshots
    themselves."""

    def __init__(
        self,
        engine: Union[_cursus._Aggregate, _cursus._AsyncAggregate],
        initial: S,
        apply: Callable[[S, StoredEvent], S],
        deserialize: Optional[Callable[[str], S]],
        serialize: Optional[Callable[[S], str]],
    ) -> None:
        self._engine = engine
        self._initial = initial
        self._apply = apply
        self._deserialize = deserialize
        self._serialize = serialize
        self.state: S = initial
        self.loaded_snapshot: Optional[Snapshot] = None
        self.loaded_events = 0

    @staticmethod
    def _check_snapshot_every(snapshot_every: int) -> int:
        if snapshot_every < 0:
            raise ValueError(f"snapshot_every must be >= 0, got {snapshot_every}")
        return snapshot_every

    @property
    def topic(self) -> str:
        """The topic."""
        return self._engine.topic

    @property
    def key(self) -> str:
        """The aggregate key."""
        return self._engine.key

    @property
    def version(self) -> int:
        """The version loaded or last appended (the engine's)."""
        return self._engine.version

    @property
    def snapshot_version(self) -> int:
        """The version of the last snapshot loaded or saved (0: none)."""
        return self._engine.snapshot_version

    @property
    def snapshot_every(self) -> int:
        """Events between automatic snapshots (0: never)."""
        return self._engine.snapshot_every

    @property
    def snapshot_due(self) -> bool:
        """True when ``snapshot_every`` (> 0) events were appended since the
        last snapshot (the one loaded or saved); the engine decides."""
        return self._engine.snapshot_due

    def _loaded(self, read: Tuple[Optional[Snapshot], List[StoredEvent]]) -> None:
        """Folds what the engine's load read: the snapshot through
        ``deserialize`` (else ``initial``), then each event."""
        snapshot, events = read
        self.loaded_snapshot = snapshot
        self.loaded_events = 0
        if snapshot is None:
            self.state = self._initial
        elif self._deserialize is None:
            raise ValueError(
                f"aggregate {self.key!r} of {self.topic!r} has a snapshot at version "
                f"{snapshot.version}: pass deserialize= to load it"
            )
        else:
            self.state = self._deserialize(snapshot.state)
        for event in events:
            self._fold(event)
            self.loaded_events += 1

    def _fold(self, event: StoredEvent) -> None:
        self.state = self._apply(self.state, event)

    def _auto_snapshot_state(self) -> Optional[str]:
        """The state text for the automatic snapshot when one is due, else
        ``None``. A ``serialize`` that raises is reported as the engine
        reports a failed save (the ``cursus`` log, at warn): the append
        before it stands, and the snapshot stays due."""
        if self._serialize is None or not self.snapshot_due:
            return None
        try:
            return self._serialize(self.state)
        except Exception as e:  # noqa: BLE001 - the append stands; the engine logs it
            self._engine.snapshot_failed(repr(e))
            return None

    def _state_text(self) -> str:
        if self._serialize is None:
            raise ValueError("pass serialize= to load_aggregate() to save snapshots")
        return self._serialize(self.state)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(topic={self.topic!r}, key={self.key!r}, version={self.version}, "
            f"snapshot_version={self.snapshot_version}, state={self.state!r})"
        )


class Aggregate(_AggregateBase[S]):
    """One aggregate loaded from its stream: ``state`` is ``initial`` (or
    the latest snapshot through ``deserialize``) folded with every later
    event through ``apply(state, event) -> state``; ``version`` is the last
    event's. Made by :meth:`EventStore.load_aggregate`.

    :meth:`append` appends at ``version + 1`` and, once it succeeded, folds
    the stored event into ``state`` (a failed append changes nothing); when
    ``serialize`` was given and ``snapshot_every`` events were appended
    since the last snapshot, it then saves ``serialize(state)`` as the
    snapshot. A snapshot that fails (the save, or ``serialize`` raising)
    never fails the append, which is durable: the engine logs it at warn
    (logger ``cursus``) and it stays due, so the next append tries again.

    When another writer appended first, :meth:`append` raises
    :class:`cursus.ConflictError` with code ``version_conflict`` (fields
    ``current`` and ``expected``, as text) and changes nothing: call
    :meth:`reload` and decide again::

        while True:
            account = store.load_aggregate("accounts", "acct-1", 0, apply, ...)
            if account.state < amount:
                raise InsufficientFunds()
            try:
                account.append("Withdrawn", str(amount))
                break
            except cursus.ConflictError as e:
                if e.code != "version_conflict":
                    raise
                # someone else appended (e.fields["current"]): load again
    """

    def __init__(
        self,
        store: EventStore,
        topic: str,
        key: str,
        initial: S,
        apply: Callable[[S, StoredEvent], S],
        deserialize: Optional[Callable[[str], S]] = None,
        serialize: Optional[Callable[[S], str]] = None,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    ) -> None:
        self._native = _cursus._Aggregate(topic, key, self._check_snapshot_every(snapshot_every))
        super().__init__(self._native, initial, apply, deserialize, serialize)
        self._store = store

    def reload(self) -> None:
        """Loads the aggregate again: the latest snapshot (if any) and the
        events after it (the state restarts from ``initial`` without a
        snapshot)."""
        self._loaded(self._native.load(self._store._native))

    def append(
        self,
        event_type: str,
        payload: Text,
        *,
        metadata: Text = "",
        schema_version: Optional[int] = None,
        event_id: Optional[str] = None,
    ) -> StoredEvent:
        """Appends an event at ``version + 1``, folds the stored event into
        ``state`` and saves a snapshot when one is due; returns the event as
        stored (its version, offset and partition; timestamp 0, which the
        append's reply does not carry). ``event_id`` as
        :meth:`EventStore.append`."""
        stored = self._native.append(
            self._store._native,
            payload,
            event_type=event_type,
            metadata=metadata,
            schema_version=schema_version,
            event_id=event_id,
        )
        self._fold(stored)
        state = self._auto_snapshot_state()
        if state is not None:
            self._native.auto_snapshot(self._store._native, state)
        return stored

    def save_snapshot(self) -> None:
        """Saves ``serialize(state)`` as the snapshot at ``version`` (needs
        ``serialize``)."""
        self._native.save_snapshot(self._store._native, self._state_text())


class AsyncAggregate(_AggregateBase[S]):
    """:class:`Aggregate` for :class:`cursus.aio.EventStore`: the same
    rules, with :meth:`append`, :meth:`reload` and :meth:`save_snapshot` as
    coroutines. Made by ``await store.load_aggregate(...)``."""

    def __init__(
        self,
        store: AsyncEventStore,
        topic: str,
        key: str,
        initial: S,
        apply: Callable[[S, StoredEvent], S],
        deserialize: Optional[Callable[[str], S]] = None,
        serialize: Optional[Callable[[S], str]] = None,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    ) -> None:
        self._native = _cursus._AsyncAggregate(
            topic, key, self._check_snapshot_every(snapshot_every)
        )
        super().__init__(self._native, initial, apply, deserialize, serialize)
        self._store = store

    async def reload(self) -> None:
        """Loads the aggregate again (see :meth:`Aggregate.reload`)."""
        self._loaded(await self._native.load(self._store._native))

    async def append(
        self,
        event_type: str,
        payload: Text,
        *,
        metadata: Text = "",
        schema_version: Optional[int] = None,
        event_id: Optional[str] = None,
    ) -> StoredEvent:
        """Appends at ``version + 1``, folds, snapshots when due (see
        :meth:`Aggregate.append`)."""
        stored = await self._native.append(
            self._store._native,
            payload,
            event_type=event_type,
            metadata=metadata,
            schema_version=schema_version,
            event_id=event_id,
        )
        self._fold(stored)
        state = self._auto_snapshot_state()
        if state is not None:
            await self._native.auto_snapshot(self._store._native, state)
        return stored

    async def save_snapshot(self) -> None:
        """Saves ``serialize(state)`` as the snapshot at ``version``."""
        await self._native.save_snapshot(self._store._native, self._state_text())


class EventStore:
    """Event store client: appends with optimistic concurrency, snapshots,
    paged reads and the aggregate helper. Keyword arguments are client
    options (as :class:`AdminClient`'s: ``bootstrap_servers``, TLS,
    timeouts, ...). Every call blocks with the GIL released and can be
    interrupted with Ctrl-C. A context manager: ``with`` closes it.

    ::

        with cursus.EventStore(bootstrap_servers="127.0.0.1:9000") as store:
            store.append("orders", "order-1", 0, '{"total": 5}', event_type="OrderCreated")
            for event in store.read_stream("orders", "order-1"):
                print(event.version, event.event_type, event.text)
    """

    def __init__(self, **config: ConfigValue) -> None:
        self._native = _cursus._EventStore(**config)

    def append(
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
        """Appends an event to aggregate ``key`` if its version is
        ``expected_version`` (the version last seen; 0 for a new aggregate):
        the event gets ``expected_version + 1``. Otherwise raises
        :class:`cursus.ConflictError` with code ``version_conflict`` and
        fields ``current`` and ``expected``. ``schema_version`` ``None``
        lets the broker use 1. A topic without event sourcing raises
        :class:`cursus.ValidationError` ``event_sourcing_not_enabled``.

        ``event_id`` identifies the event (text without whitespace;
        ``None``: the engine generates a random one). On an aggregate replay
        topic, repeating an append with the same version, ``event_id`` and
        payload returns the original :class:`Appended` without appending
        again (the engine itself retries an append whose outcome it lost
        that way); the same version with another id or payload, or an id
        already used, raises ``aggregate_identity_conflict``."""
        return self._native.append(
            topic,
            key,
            expected_version,
            payload,
            event_type=event_type,
            metadata=metadata,
            schema_version=schema_version,
            event_id=event_id,
        )

    def replay_proof(
        self, topic: str, match_id: str, expected_last_sequence: Optional[int] = None
    ) -> ReplayProof:
        """Proves that the retained events of aggregate ``match_id`` (its
        key) on aggregate replay ``topic`` are exactly sequences 1..n, each
        with a verified payload digest and a unique event id, and, when
        ``expected_last_sequence`` is given, that n is it. Returns the
        complete :class:`cursus.ReplayProof`. A proof that is not complete
        raises the broker's error (code ``aggregate_proof_<status>``, e.g.
        ``aggregate_proof_not_found``, ``aggregate_proof_sequence_gap``;
        class ``internal``) whose ``proof`` attribute holds the
        :class:`cursus.ReplayProof` with the status and diagnostic."""
        return self._native.replay_proof(topic, match_id, expected_last_sequence)

    def event_range(
        self,
        topic: str,
        match_id: str,
        from_sequence: int,
        to_sequence: int,
        max_records: Optional[int] = None,
    ) -> Tuple[ReplayProof, List[RangeEvent]]:
        """Reads the events of aggregate ``match_id`` with sequences
        ``from_sequence`` to ``to_sequence`` (inclusive; at most
        ``max_records``, ``None``: the broker's 1,000) under a complete
        replay proof: ``(proof, events)``, events in sequence order. A proof
        that is not complete raises ``aggregate_range_<status>`` (with
        ``.proof``); fewer events than asked raises
        ``aggregate_range_incomplete``."""
        return self._native.event_range(
            topic, match_id, from_sequence, to_sequence, max_records
        )

    def stream_version(self, topic: str, key: str) -> int:
        """The aggregate's current version (0 when it has no event)."""
        return self._native.stream_version(topic, key)

    def save_snapshot(self, topic: str, key: str, version: int, state: Text) -> None:
        """Saves ``state`` as the aggregate's snapshot at ``version`` (at most
        its current version, else ``snapshot_version_exceeds_stream``); it
        replaces the previous one."""
        self._native.save_snapshot(topic, key, version, state)

    def read_snapshot(self, topic: str, key: str) -> Optional[Snapshot]:
        """The aggregate's latest snapshot, or ``None``."""
        return self._native.read_snapshot(topic, key)

    def read_stream(
        self,
        topic: str,
        key: str,
        from_version: int = 1,
        *,
        max_events: Optional[int] = None,
        max_bytes: Optional[int] = None,
    ) -> EventReader:
        """Reads aggregate ``key`` from ``from_version``: the reader's
        ``snapshot`` is the latest snapshot if its version is at least
        ``from_version`` (iteration then starts after it), and iterating
        yields the events. ``max_events`` / ``max_bytes`` bound each page
        (broker defaults: 256 events, 8 MiB). Reads the first page now."""
        return EventReader(
            self._native, _cursus._EventCursor.stream(topic, key, from_version, max_events, max_bytes)
        )

    def history(
        self,
        topic: str,
        key: str,
        from_version: int = 1,
        to_version: Optional[int] = None,
        *,
        max_records: Optional[int] = None,
        max_bytes: Optional[int] = None,
    ) -> EventReader:
        """Reads the original events of aggregate ``key`` from
        ``from_version`` to ``to_version`` (``None``: its head), never a
        snapshot. The reader's ``completeness`` and ``head_version`` are the
        last page's. Reads the first page now."""
        return EventReader(
            self._native,
            _cursus._EventCursor.history(topic, key, from_version, to_version, max_records, max_bytes),
        )

    def browse(
        self,
        topic: str,
        partition: int,
        from_offset: int = 0,
        to_offset: Optional[int] = None,
        *,
        max_records: Optional[int] = None,
        max_bytes: Optional[int] = None,
    ) -> EventReader:
        """Reads the committed records of one partition from ``from_offset``
        up to ``to_offset`` (exclusive; ``None``: the readable end), events
        or not. The reader's ``readable_end_offset`` and
        ``earliest_offset`` are the last page's. Reads the first page now."""
        return EventReader(
            self._native,
            _cursus._EventCursor.browse(
                topic, partition, from_offset, to_offset, max_records, max_bytes
            ),
        )

    def load_aggregate(
        self,
        topic: str,
        key: str,
        initial: S,
        apply: Callable[[S, StoredEvent], S],
        *,
        deserialize: Optional[Callable[[str], S]] = None,
        serialize: Optional[Callable[[S], str]] = None,
        snapshot_every: int = DEFAULT_SNAPSHOT_EVERY,
    ) -> Aggregate[S]:
        """Loads aggregate ``key``: the latest snapshot through
        ``deserialize`` (or ``initial`` without one), then every later event
        folded through ``apply(state, event) -> state``. With ``serialize``,
        :meth:`Aggregate.append` saves a snapshot every ``snapshot_every``
        events (0: never). A stream with a snapshot needs ``deserialize``
        (else ``ValueError``). See :class:`Aggregate`."""
        aggregate = Aggregate(self, topic, key, initial, apply, deserialize, serialize, snapshot_every)
        aggregate.reload()
        return aggregate

    def close(self) -> None:
        """Closes; later calls raise :class:`cursus.ClosedError`. Closing
        twice does nothing."""
        self._native.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._native.closed

    def __enter__(self) -> EventStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Shown as the public names (tracebacks, repr), not the private module.
_cls: type
for _cls in (EventStore, EventReader, Aggregate):
    _cls.__module__ = "cursus"
for _cls in (AsyncEventReader, AsyncAggregate):
    _cls.__module__ = "cursus.aio"
del _cls
