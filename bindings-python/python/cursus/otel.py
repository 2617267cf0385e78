"""OpenTelemetry tracing and metrics for Cursus clients (``pip install cursus[otel]``).

The plain clients record nothing and import nothing of OpenTelemetry: this
module is the optional part. Wrap a client to trace it::

    import cursus
    from cursus.otel import TracingProducer, TracingConsumer

    producer = TracingProducer(cursus.Producer(bootstrap_servers="127.0.0.1:9000"))
    producer.send("orders", b"...")          # a "publish orders" span, ended at the ack

    consumer = TracingConsumer(cursus.Consumer(...), group="billing")
    for record in consumer.poll(1.0):        # a "receive orders" span linked to each producer
        with consumer.process(record):       # a "process orders" span, child of the producer's
            ...

Each span's name, kind and attributes come from the engine's one
declaration (``cursus::telemetry``, docs/observability.md "Spans"), the same
in every language. A publish span's context travels in the record
(:class:`cursus.TraceContext`, written into its metadata by the engine). Spans
use the global tracer provider unless one is given; metrics
(:func:`observe_statistics`) the global meter provider.
"""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import contextmanager
from typing import (
    Any,
    AsyncIterator,
    Callable,
    Dict,
    Generic,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
)

try:
    from opentelemetry import context as otel_context
    from opentelemetry import metrics, trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError(
        "cursus.otel needs the OpenTelemetry API: pip install cursus[otel]"
    ) from e

from . import _cursus
from ._cursus import Message, RecordMetadata, TraceContext
from ._errors import CursusError
from ._errors import TimeoutError as CursusTimeout
from ._transaction import AsyncTransaction, Transaction

__all__ = [
    "TracingProducer",
    "TracingConsumer",
    "TracingEventStore",
    "TracingAsyncProducer",
    "TracingAsyncConsumer",
    "TracingAsyncEventStore",
    "observe_statistics",
]

_KINDS = {
    "producer": trace.SpanKind.PRODUCER,
    "consumer": trace.SpanKind.CONSUMER,
    "client": trace.SpanKind.CLIENT,
}
_PROPAGATOR = TraceContextTextMapPropagator()

_Spec = Tuple[str, str, List[Tuple[str, Union[str, int]]]]
_R = TypeVar("_R")


def _tracer(provider: Optional[trace.TracerProvider]) -> trace.Tracer:
    return trace.get_tracer(_cursus._TELEMETRY_SCOPE, _cursus.__version__, provider)


def _start(
    tracer: trace.Tracer,
    spec: _Spec,
    *,
    context: Optional[otel_context.Context] = None,
    links: Sequence[trace.Link] = (),
    start_time: Optional[int] = None,
) -> trace.Span:
    name, kind, attributes = spec
    return tracer.start_span(
        name,
        context=context,
        kind=_KINDS[kind],
        attributes=dict(attributes),
        links=links,
        start_time=start_time,
    )


def _error_type(error: BaseException) -> str:
    # The engine's error_type is the error's code; other exceptions are
    # named by their class, as the conventions say.
    if isinstance(error, CursusError) and error.code:
        return error.code
    return type(error).__qualname__


def _fail(span: trace.Span, error: BaseException) -> None:
    span.set_status(trace.Status(trace.StatusCode.ERROR, str(error)))
    span.set_attribute(_cursus._ERROR_TYPE_KEY, _error_type(error))


def _end_with(span: trace.Span, error: Optional[BaseException]) -> None:
    if error is not None:
        _fail(span, error)
    span.end()


@contextmanager
def _spanned(span: trace.Span) -> Iterator[trace.Span]:
    """Makes `span` current for the block and ends it; an exception marks it
    failed (with ``error.type``) and propagates."""
    with trace.use_span(span, end_on_exit=False, record_exception=False, set_status_on_exception=False):
        try:
            yield span
        except BaseException as e:
            _fail(span, e)
            raise
        finally:
            span.end()


def _trace_context(span: trace.Span) -> Optional[TraceContext]:
    """The W3C context of `span` for a record (None for an invalid one,
    as a non-recording tracer with no parent gives)."""
    carrier: Dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
    parent = carrier.get("traceparent")
    if parent is None:
        return None
    return TraceContext(parent, carrier.get("tracestate"))


def _record_context(record: Message) -> Optional[otel_context.Context]:
    """The context a received record carries, as an OpenTelemetry context."""
    tc = record.trace_context
    if tc is None:
        return None
    carrier = {"traceparent": tc.traceparent}
    if tc.tracestate is not None:
        carrier["tracestate"] = tc.tracestate
    return _PROPAGATOR.extract(carrier, context=otel_context.Context())


def _link(record: Message) -> Optional[trace.Link]:
    ctx = _record_context(record)
    if ctx is None:
        return None
    span_context = trace.get_current_span(ctx).get_span_context()
    return trace.Link(span_context) if span_context.is_valid else None


def _body_size(value: Any) -> int:
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, memoryview):
        return value.nbytes
    return len(value)


def _publish_span(
    tracer: trace.Tracer,
    topic: str,
    value: Any,
    key: Any,
    partition: Optional[int],
    client_id: Optional[str],
) -> Tuple[trace.Span, Optional[TraceContext]]:
    return _publishing(tracer, _cursus._span_publish(topic, partition, key, _body_size(value), client_id))


def _publishing(tracer: trace.Tracer, spec: _Spec) -> Tuple[trace.Span, Optional[TraceContext]]:
    """Starts a publish span: the span and the context its record carries."""
    span = _start(tracer, spec)
    return span, _trace_context(span)


def _publish_batch(
    tracer: trace.Tracer,
    topic: str,
    records: Sequence[Any],
    partition: Optional[int],
    client_id: Optional[str],
) -> Tuple[List[trace.Span], List[Optional[TraceContext]]]:
    """One publish span per record of a batch (the records parsed by the
    engine, as the batch send parses them), and the contexts they carry."""
    started = [
        _publishing(tracer, spec)
        for spec in _cursus._span_publish_batch(topic, records, partition, client_id)
    ]
    return [span for span, _ in started], [context for _, context in started]


def _acknowledged(span: trace.Span, metadata: RecordMetadata) -> None:
    span.set_attributes(dict(_cursus._span_acknowledged(metadata.partition, metadata.offset)))
    span.end()


def _delivered(span: trace.Span, error: Optional[BaseException], md: Optional[RecordMetadata]) -> None:
    """Ends a publish span with its record's outcome."""
    if error is not None or md is None:
        _end_with(span, error)
    else:
        _acknowledged(span, md)


def _end_all(spans: Sequence[trace.Span], error: BaseException) -> None:
    """Ends every span of a batch that failed as a whole."""
    for span in spans:
        _end_with(span, error)


@contextmanager
def _failing_all(spans: Sequence[trace.Span]) -> Iterator[None]:
    """Ends every span of a batch with the exception that leaves the block
    (a batch refused as a whole), and propagates it."""
    try:
        yield
    except BaseException as e:
        _end_all(spans, e)
        raise


def _batch_delivered(spans: Sequence[trace.Span], results: Sequence[Any]) -> None:
    """Ends a batch's publish spans, each with its record's result (a
    RecordMetadata, or the exception of a record that failed)."""
    for span, result in zip(spans, results):
        if isinstance(result, BaseException):
            _delivered(span, result, None)
        else:
            _delivered(span, None, result)


def _receive(
    tracer: trace.Tracer, records: List[Message], group: Optional[str], started: int
) -> None:
    """The receive span of a poll that returned `records` (none for an
    empty poll), from the poll's start to now."""
    if not records:
        return
    links = [link for link in map(_link, records) if link is not None]
    spec = _cursus._span_receive([r.topic for r in records], len(records), group)
    _start(tracer, spec, links=links, start_time=started).end()


def _process_span(tracer: trace.Tracer, record: Message, group: Optional[str]) -> trace.Span:
    spec = _cursus._span_process(
        record.topic,
        record.partition,
        record.offset,
        record.key,
        len(record.payload),
        group,
    )
    # Child of the producer's span when the record carries its context,
    # else of the current span.
    return _start(tracer, spec, context=_record_context(record))


class _Wrapper:
    """Delegates every attribute it does not trace to the wrapped client."""

    def __init__(self, client: Any) -> None:
        self._client = client

    @property
    def client(self) -> Any:
        """The wrapped (plain) client."""
        return self._client

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


_W = TypeVar("_W", bound="_Closing")


class _Closing(_Wrapper):
    """A wrapped sync client is a context manager that closes it, as the
    client itself is."""

    def __enter__(self: _W) -> _W:
        return self

    def __exit__(self, *exc: object) -> None:
        self._client.close()


class _TracedDelivery(Generic[_R]):
    """The pending acknowledgement of a traced send (as :class:`cursus.Delivery`;
    of a traced batch, as :class:`cursus.BatchDelivery`)."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._outcome: Tuple[Optional[BaseException], Optional[_R]] = (None, None)

    def _settle(self, error: Optional[BaseException], value: Optional[_R]) -> None:
        self._outcome = (error, value)
        self._done.set()

    def result(self, timeout: Optional[float] = None) -> _R:
        """Waits for the acknowledgement (``timeout`` seconds; ``None``: no
        limit) and returns where the record was stored (a batch: every
        record's result, in order), or raises its error."""
        if not self._done.wait(timeout):
            raise CursusTimeout(
                f"delivery not acknowledged within {int((timeout or 0) * 1000)} ms",
                code="timeout",
                kind="timeout",
                retryable=True,
            )
        error, value = self._outcome
        if error is not None:
            raise error
        assert value is not None
        return value

    def done(self) -> bool:
        """True once the record was acknowledged or failed."""
        return self._done.is_set()


class TracingProducer(_Closing):
    """A :class:`cursus.Producer` whose sends are traced: one publish span
    per record, a child of the current span, from ``send`` to the
    acknowledgement (or failure: status error and ``error.type``); the
    record carries the span's context. Transactions get commit/abort
    spans. Everything else is the wrapped producer's."""

    def __init__(
        self, producer: Any, *, tracer_provider: Optional[trace.TracerProvider] = None
    ) -> None:
        super().__init__(producer)
        self._tracer = _tracer(tracer_provider)
        self._client_id: Optional[str] = producer.statistics().client_id or None

    def send(
        self,
        topic: str,
        value: Any,
        *,
        key: Any = None,
        partition: Optional[int] = None,
        timestamp: Optional[int] = None,
        on_delivery: Optional[Callable[[Optional[CursusError], Optional[RecordMetadata]], object]] = None,
        metadata: Optional[str] = None,
    ) -> Optional[_TracedDelivery[RecordMetadata]]:
        """As :meth:`cursus.Producer.send`, traced; without ``on_delivery``
        returns a delivery with ``result(timeout)`` and ``done()``."""
        span, context = _publish_span(self._tracer, topic, value, key, partition, self._client_id)
        delivery: Optional[_TracedDelivery[RecordMetadata]] = (
            None if on_delivery is not None else _TracedDelivery()
        )

        def delivered(error: Optional[CursusError], md: Optional[RecordMetadata]) -> None:
            _delivered(span, error, md)
            if delivery is not None:
                delivery._settle(error, md)
            elif on_delivery is not None:
                on_delivery(error, md)

        try:
            self._client.send(
                topic,
                value,
                key=key,
                partition=partition,
                timestamp=timestamp,
                on_delivery=delivered,
                metadata=metadata,
                trace_context=context,
            )
        except BaseException as e:
            _end_with(span, e)
            raise
        return delivery

    def send_and_wait(
        self,
        topic: str,
        value: Any,
        *,
        key: Any = None,
        partition: Optional[int] = None,
        timestamp: Optional[int] = None,
        timeout: Optional[float] = None,
        metadata: Optional[str] = None,
    ) -> RecordMetadata:
        """As :meth:`cursus.Producer.send_and_wait`, traced."""
        delivery = self.send(
            topic, value, key=key, partition=partition, timestamp=timestamp, metadata=metadata
        )
        assert delivery is not None
        return delivery.result(timeout)

    def send_batch(
        self,
        topic: str,
        records: Iterable[Any],
        *,
        partition: Optional[int] = None,
        timestamp: Optional[int] = None,
        on_delivery: Optional[Callable[[List[Any]], object]] = None,
        metadata: Optional[Sequence[Optional[str]]] = None,
    ) -> Optional[_TracedDelivery[List[Any]]]:
        """As :meth:`cursus.Producer.send_batch`, traced: one publish span
        per record, a child of the current span, ended with that record's
        result; each record carries its span's context. Without
        ``on_delivery`` returns a delivery with ``result(timeout)`` (every
        record's result) and ``done()``."""
        records = list(records)  # read twice: for the spans, then the send
        spans, contexts = _publish_batch(self._tracer, topic, records, partition, self._client_id)
        delivery: Optional[_TracedDelivery[List[Any]]] = (
            None if on_delivery is not None else _TracedDelivery()
        )

        def delivered(results: List[Any]) -> None:
            _batch_delivered(spans, results)
            if delivery is not None:
                delivery._settle(None, results)
            elif on_delivery is not None:
                on_delivery(results)

        with _failing_all(spans):
            self._client.send_batch(
                topic,
                records,
                partition=partition,
                timestamp=timestamp,
                on_delivery=delivered,
                metadata=metadata,
                trace_context=contexts,
            )
        return delivery

    def _end_transaction(self, commit: bool) -> None:
        spec = _cursus._span_end_transaction(self._client.transactional_id or "", commit)
        with _spanned(_start(self._tracer, spec)):
            if commit:
                self._client.commit_transaction()
            else:
                self._client.abort_transaction()

    def commit_transaction(self) -> None:
        """As :meth:`cursus.Producer.commit_transaction`, in a commit span."""
        self._end_transaction(True)

    def abort_transaction(self) -> None:
        """As :meth:`cursus.Producer.abort_transaction`, in an abort span."""
        self._end_transaction(False)

    def transaction(self) -> Transaction:
        """As :meth:`cursus.Producer.transaction`, with traced commit/abort."""
        return Transaction(self)  # type: ignore[arg-type]


class TracingConsumer(_Closing):
    """A :class:`cursus.Consumer` whose polls are traced: a receive span
    per poll that returned records, linked to each record's producer span;
    :meth:`process` makes a process span per record. ``group`` (the
    consumer's ``group_id``) is recorded on the spans when given."""

    def __init__(
        self,
        consumer: Any,
        *,
        group: Optional[str] = None,
        tracer_provider: Optional[trace.TracerProvider] = None,
    ) -> None:
        super().__init__(consumer)
        self._tracer = _tracer(tracer_provider)
        self._group = group

    def poll(self, timeout: Optional[float] = None, max_records: Optional[int] = None) -> List[Message]:
        """As :meth:`cursus.Consumer.poll`, with a receive span when records came."""
        started = time.time_ns()
        records: List[Message] = self._client.poll(timeout, max_records)
        _receive(self._tracer, records, self._group, started)
        return records

    @contextmanager
    def process(self, record: Message) -> Iterator[trace.Span]:
        """A process span for the block (current inside it), child of the
        span that sent ``record``; an exception marks it failed."""
        with _spanned(_process_span(self._tracer, record, self._group)) as span:
            yield span


class TracingEventStore(_Closing):
    """A :class:`cursus.EventStore` whose appends and reads are traced (an
    append span per :meth:`append`, a read span per :meth:`read_stream`,
    covering its first page)."""

    def __init__(
        self, store: Any, *, tracer_provider: Optional[trace.TracerProvider] = None
    ) -> None:
        super().__init__(store)
        self._tracer = _tracer(tracer_provider)

    def append(self, topic: str, key: str, expected_version: int, payload: Any, **kwargs: Any) -> Any:
        """As :meth:`cursus.EventStore.append`, in an append span."""
        spec = _cursus._span_append(topic, key, expected_version)
        with _spanned(_start(self._tracer, spec)):
            return self._client.append(topic, key, expected_version, payload, **kwargs)

    def read_stream(self, topic: str, key: str, from_version: int = 1, **kwargs: Any) -> Any:
        """As :meth:`cursus.EventStore.read_stream`, in a read span."""
        spec = _cursus._span_read(topic, key, from_version)
        with _spanned(_start(self._tracer, spec)):
            return self._client.read_stream(topic, key, from_version, **kwargs)


class TracingAsyncProducer(_Wrapper):
    """:class:`TracingProducer` for a connected :class:`cursus.aio.Producer`:
    ``send`` returns the plain producer's future; its publish span ends when
    the future resolves."""

    def __init__(
        self, producer: Any, *, tracer_provider: Optional[trace.TracerProvider] = None
    ) -> None:
        super().__init__(producer)
        self._tracer = _tracer(tracer_provider)
        self._client_id: Optional[str] = producer.statistics().client_id or None

    def send(
        self,
        topic: str,
        value: Any,
        *,
        key: Any = None,
        partition: Optional[int] = None,
        timestamp: Optional[int] = None,
        metadata: Optional[str] = None,
    ) -> "asyncio.Future[RecordMetadata]":
        """As :meth:`cursus.aio.Producer.send`, traced."""
        span, context = _publish_span(self._tracer, topic, value, key, partition, self._client_id)
        try:
            future: "asyncio.Future[RecordMetadata]" = self._client.send(
                topic,
                value,
                key=key,
                partition=partition,
                timestamp=timestamp,
                metadata=metadata,
                trace_context=context,
            )
        except BaseException as e:
            _end_with(span, e)
            raise

        def settled(f: "asyncio.Future[RecordMetadata]") -> None:
            if f.cancelled():
                _end_with(span, asyncio.CancelledError())
            elif f.exception() is not None:
                _end_with(span, f.exception())
            else:
                _acknowledged(span, f.result())

        future.add_done_callback(settled)
        return future

    def send_batch(
        self,
        topic: str,
        records: Iterable[Any],
        *,
        partition: Optional[int] = None,
        timestamp: Optional[int] = None,
        metadata: Optional[Sequence[Optional[str]]] = None,
    ) -> "asyncio.Future[List[Any]]":
        """As :meth:`cursus.aio.Producer.send_batch`, traced: one publish
        span per record, ended with that record's result when the future
        resolves."""
        records = list(records)  # read twice: for the spans, then the send
        spans, contexts = _publish_batch(self._tracer, topic, records, partition, self._client_id)
        with _failing_all(spans):
            future: "asyncio.Future[List[Any]]" = self._client.send_batch(
                topic, records, partition=partition, timestamp=timestamp, metadata=metadata, trace_context=contexts
            )

        def settled(f: "asyncio.Future[List[Any]]") -> None:
            error: Optional[BaseException] = (
                asyncio.CancelledError() if f.cancelled() else f.exception()
            )
            if error is None:
                _batch_delivered(spans, f.result())
            else:
                _end_all(spans, error)

        future.add_done_callback(settled)
        return future

    async def _end_transaction(self, commit: bool) -> None:
        spec = _cursus._span_end_transaction(self._client.transactional_id or "", commit)
        with _spanned(_start(self._tracer, spec)):
            if commit:
                await self._client.commit_transaction()
            else:
                await self._client.abort_transaction()

    async def commit_transaction(self) -> None:
        """As :meth:`cursus.aio.Producer.commit_transaction`, in a commit span."""
        await self._end_transaction(True)

    async def abort_transaction(self) -> None:
        """As :meth:`cursus.aio.Producer.abort_transaction`, in an abort span."""
        await self._end_transaction(False)

    def transaction(self) -> AsyncTransaction[TracingAsyncProducer]:
        """As :meth:`cursus.aio.Producer.transaction`, with traced commit/abort."""
        return AsyncTransaction(self)


class TracingAsyncConsumer(_Wrapper):
    """:class:`TracingConsumer` for a connected :class:`cursus.aio.Consumer`."""

    def __init__(
        self,
        consumer: Any,
        *,
        group: Optional[str] = None,
        tracer_provider: Optional[trace.TracerProvider] = None,
    ) -> None:
        super().__init__(consumer)
        self._tracer = _tracer(tracer_provider)
        self._group = group

    async def poll(
        self, timeout: Optional[float] = None, max_records: Optional[int] = None
    ) -> List[Message]:
        """As :meth:`cursus.aio.Consumer.poll`, with a receive span when records came."""
        started = time.time_ns()
        records: List[Message] = await self._client.poll(timeout, max_records)
        _receive(self._tracer, records, self._group, started)
        return records

    @contextmanager
    def process(self, record: Message) -> Iterator[trace.Span]:
        """As :meth:`TracingConsumer.process`."""
        with _spanned(_process_span(self._tracer, record, self._group)) as span:
            yield span

    async def __aiter__(self) -> AsyncIterator[Message]:
        """``async for record in consumer``: the records of traced polls."""
        while True:
            for record in await self.poll():
                yield record


class TracingAsyncEventStore(_Wrapper):
    """:class:`TracingEventStore` for a connected :class:`cursus.aio.EventStore`."""

    def __init__(
        self, store: Any, *, tracer_provider: Optional[trace.TracerProvider] = None
    ) -> None:
        super().__init__(store)
        self._tracer = _tracer(tracer_provider)

    async def append(
        self, topic: str, key: str, expected_version: int, payload: Any, **kwargs: Any
    ) -> Any:
        """As :meth:`cursus.aio.EventStore.append`, in an append span."""
        spec = _cursus._span_append(topic, key, expected_version)
        with _spanned(_start(self._tracer, spec)):
            return await self._client.append(topic, key, expected_version, payload, **kwargs)

    async def read_stream(self, topic: str, key: str, from_version: int = 1, **kwargs: Any) -> Any:
        """As :meth:`cursus.aio.EventStore.read_stream`, in a read span (its first page)."""
        spec = _cursus._span_read(topic, key, from_version)
        with _spanned(_start(self._tracer, spec)):
            return await self._client.read_stream(topic, key, from_version, **kwargs)


def _field(value: Any, path: str) -> Any:
    """The field `path` (attribute names joined by ``.``) of a snapshot."""
    for name in path.split("."):
        value = getattr(value, name)
    return value


def _points(s: Any, field: str, breakdown: str) -> List[Tuple[int, Dict[str, str]]]:
    """The points of one engine metric in snapshot `s`, as the Rust layer
    computes them (``cursus::telemetry::metrics::Metric::points``)."""
    client = {_cursus._CLIENT_ID_KEY: s.client_id}
    if breakdown == "none":
        return [(_field(s, field), client)]
    if breakdown == "error_type":
        return [
            (n, {**client, _cursus._ERROR_TYPE_KEY: cls}) for cls, n in sorted(_field(s, field).items())
        ]
    # "partition": `partitions.lag`, one point per partition with a known lag.
    parent, _, leaf = field.rpartition(".")
    return [
        (
            getattr(p, leaf),
            {
                **client,
                _cursus._DESTINATION_KEY: p.topic,
                _cursus._PARTITION_KEY: str(p.partition),
            },
        )
        for p in _field(s, parent)
        if getattr(p, leaf) is not None
    ]


def observe_statistics(
    client: Any, *, meter_provider: Optional[metrics.MeterProvider] = None
) -> Callable[[], None]:
    """Exposes a client's statistics (its plain ``statistics()``, a
    :class:`cursus.Statistics`) as OpenTelemetry observable instruments of
    the meter ``cursus``: the instruments the engine declares for every
    language (docs/observability.md, "Metrics"), with the same names,
    units, kinds and attributes as the other languages' layers. Each is
    read when the meter collects, attributed with the client's
    ``messaging.client.id``; a producer reports no consumer instruments and
    the other way round. ``client``: a sync producer or consumer (a
    consumer's statistics ask the broker for end offsets, once per
    collection), or an asyncio producer. Returns a function that stops the
    observation (a closed client reports nothing)."""
    meter = metrics.get_meter(_cursus._TELEMETRY_SCOPE, _cursus.__version__, meter_provider)
    stopped = False
    # One snapshot per collection, shared by the instruments' callbacks
    # (a collection calls them one after another, none twice).
    cache: Dict[str, Any] = {}

    def snapshot(name: str) -> Optional[Any]:
        if stopped or getattr(client, "closed", False):
            return None
        if name in cache or "s" not in cache:
            cache.clear()
            try:
                cache["s"] = client.statistics()
            except CursusError:
                cache["s"] = None
        cache[name] = True
        return cache["s"]

    def callback(
        name: str, field: str, kind_of_client: Optional[str], breakdown: str
    ) -> Callable[[metrics.CallbackOptions], List[metrics.Observation]]:
        def observe(_options: metrics.CallbackOptions) -> List[metrics.Observation]:
            s = snapshot(name)
            if s is None or (kind_of_client is not None and s.kind != kind_of_client):
                return []
            return [metrics.Observation(v, a) for v, a in _points(s, field, breakdown)]

        return observe

    for name, field, unit, kind, kind_of_client, breakdown in _cursus._metrics():
        observe = callback(name, field, kind_of_client, breakdown)
        if kind == "counter":
            meter.create_observable_counter(name, [observe], unit=unit)
        else:
            meter.create_observable_gauge(name, [observe], unit=unit)

    def stop() -> None:
        nonlocal stopped
        stopped = True

    return stop
