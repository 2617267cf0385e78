"""Tracing (issue #34): `cursus.TraceContext` on plain sends, and the
OpenTelemetry layer `cursus.otel` against the real broker, checked with the
SDK's in-memory exporter: span names, kinds, attributes (as the engine
declares them, docs/observability.md "Spans"), the publish span's context in
the consumed record, receive links, the process span's parent, commit/abort
and event-store spans, and the statistics as metrics."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import cursus
import cursus.aio
from cursus.otel import (
    TracingAsyncConsumer,
    TracingAsyncEventStore,
    TracingAsyncProducer,
    TracingConsumer,
    TracingEventStore,
    TracingProducer,
    observe_statistics,
)

from conftest import consume

PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.fixture
def spans() -> Iterator[Tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def create(bootstrap: str, topic: str, **options: Any) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(topic, partitions=1, **options)


def consumer(bootstrap: str, group: str, topic: str, **options: Any) -> cursus.Consumer:
    c = cursus.Consumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=50,
        **options,
    )
    c.subscribe(topic)
    return c


def traced_producer(bootstrap: str, topic: str, provider: TracerProvider) -> TracingProducer:
    """Creates `topic` and a producer tracing into `provider` (client id app-1)."""
    create(bootstrap, topic)
    return TracingProducer(
        cursus.Producer(bootstrap_servers=bootstrap, linger_ms=1, client_id="app-1"),
        tracer_provider=provider,
    )


def ids(span: Any) -> Tuple[str, str]:
    """A span context's (trace id, span id) as W3C hex."""
    ctx = span.get_span_context() if hasattr(span, "get_span_context") else span
    return (format(ctx.trace_id, "032x"), format(ctx.span_id, "016x"))


def attrs(span: ReadableSpan) -> Dict[str, Any]:
    return dict(span.attributes or {})


def named(exporter: InMemorySpanExporter, name: str) -> List[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


# ---- the plain API: no OpenTelemetry involved --------------------------------


def test_trace_context_checks_its_input() -> None:
    tc = cursus.TraceContext(PARENT, "vendor=1")
    assert (tc.traceparent, tc.tracestate) == (PARENT, "vendor=1")
    assert tc.trace_id == "0af7651916cd43dd8448eb211c80319c"
    assert tc.span_id == "b7ad6b7169203331"
    assert tc.sampled
    assert cursus.TraceContext(PARENT) == cursus.TraceContext(PARENT, "")
    assert cursus.TraceContext(PARENT).tracestate is None
    for bad in ["", "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", "not-a-context"]:
        with pytest.raises(cursus.ValidationError) as e:
            cursus.TraceContext(bad)
        assert e.value.code == "invalid_trace_context"


def test_a_plain_send_carries_the_context_and_metadata_given(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    with cursus.Producer(bootstrap_servers=bootstrap, linger_ms=1) as p:
        p.send_and_wait(name, b"traced", trace_context=cursus.TraceContext(PARENT, "k=v"))
        p.send_and_wait(name, b"both", metadata='{"app":1}', trace_context=cursus.TraceContext(PARENT))
        p.send_and_wait(name, b"metadata only", metadata='{"app":2}')
        p.send(name, b"plain").result(30)
    with consumer(bootstrap, name, name) as c:
        got = {m.value: m for m in consume(c, 4)}
    assert len(got) == 4
    tc = got[b"traced"].trace_context
    assert tc is not None and (tc.traceparent, tc.tracestate) == (PARENT, "k=v")
    both = got[b"both"]
    assert both.trace_context == cursus.TraceContext(PARENT)
    assert both.metadata is not None and both.metadata.endswith('"app":1}')
    assert got[b"metadata only"].metadata == '{"app":2}'
    assert got[b"metadata only"].trace_context is None
    # Without tracing a record carries nothing.
    assert got[b"plain"].trace_context is None
    assert got[b"plain"].metadata is None


def test_an_aio_send_carries_the_context(bootstrap: str, name: str) -> None:
    create(bootstrap, name)

    async def main() -> None:
        async with cursus.aio.Producer(bootstrap_servers=bootstrap, linger_ms=1) as p:
            await p.send(name, b"x", trace_context=cursus.TraceContext(PARENT))

    asyncio.run(main())
    with consumer(bootstrap, name, name) as c:
        [m] = consume(c, 1)
    assert m.trace_context == cursus.TraceContext(PARENT)


def test_a_batch_carries_each_records_context_and_metadata(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    context = cursus.TraceContext(PARENT, "k=v")
    with cursus.Producer(bootstrap_servers=bootstrap, linger_ms=1) as p:
        results = p.send_batch(
            name,
            [b"both", b"traced", b"metadata only", b"plain"],
            metadata=['{"app":1}', None, "text", None],
            trace_context=[context, cursus.TraceContext(PARENT), None, None],
        ).result(30)
        assert all(isinstance(r, cursus.RecordMetadata) for r in results), results
        # One entry per record, never a str for the whole batch.
        with pytest.raises(ValueError):
            p.send_batch(name, [b"a", b"b"], metadata=['{"app":1}'])
        with pytest.raises(TypeError):
            p.send_batch(name, [b"a"], metadata="text")  # a str is a sequence to mypy, not to send_batch
        with pytest.raises(TypeError):
            p.send_batch(name, [b"a"], trace_context=[PARENT])  # type: ignore[list-item]

    async def aio() -> None:
        async with cursus.aio.Producer(bootstrap_servers=bootstrap, linger_ms=1) as ap:
            [r] = await ap.send_batch(
                name, [b"aio"], metadata=['{"app":2}'], trace_context=[cursus.TraceContext(PARENT)]
            )
            assert isinstance(r, cursus.RecordMetadata), r

    asyncio.run(aio())
    with consumer(bootstrap, name, name) as c:
        got = {m.value: m for m in consume(c, 5)}
    both = got[b"both"]
    assert both.trace_context == context
    assert both.metadata is not None and both.metadata.endswith('"app":1}')
    assert got[b"traced"].trace_context == cursus.TraceContext(PARENT)
    assert (got[b"metadata only"].metadata, got[b"metadata only"].trace_context) == ("text", None)
    assert (got[b"plain"].metadata, got[b"plain"].trace_context) == (None, None)
    aio_record = got[b"aio"]
    assert aio_record.trace_context == cursus.TraceContext(PARENT)
    assert aio_record.metadata is not None and aio_record.metadata.endswith('"app":2}')


# ---- cursus.otel ----------------------------------------------------------------


def test_publish_receive_and_process_spans(
    bootstrap: str, name: str, spans: Tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    tracer = provider.get_tracer("test")
    with traced_producer(bootstrap, name, provider) as p:
        with tracer.start_as_current_span("request") as request:
            md = p.send_and_wait(name, b"hello", key="k-1")
            p.send(name, b"second").result(30)  # type: ignore[union-attr]
        delivered: List[Optional[cursus.CursusError]] = []
        p.send(name, b"third", on_delivery=lambda e, m: delivered.append(e))
        p.flush()
    assert delivered == [None]

    publishes = named(exporter, f"publish {name}")
    assert len(publishes) == 3
    first = publishes[0]
    assert first.kind == trace.SpanKind.PRODUCER
    assert first.parent is not None and ids(first.parent) == ids(request)
    assert attrs(first) == {
        "messaging.system": "cursus",
        "messaging.operation.name": "publish",
        "messaging.operation.type": "publish",
        "messaging.destination.name": name,
        "messaging.cursus.message.key": "k-1",
        "messaging.message.body.size": 5,
        "messaging.client.id": "app-1",
        "messaging.destination.partition.id": str(md.partition),
        "messaging.cursus.offset": md.offset,
    }
    assert first.status.is_ok

    exporter.clear()
    with TracingConsumer(consumer(bootstrap, name, name), group=name, tracer_provider=provider) as c:
        got: List[cursus.Message] = []
        deadline = time.monotonic() + 30
        while len(got) < 3:
            assert time.monotonic() < deadline, "hang guard"
            got.extend(c.poll(0.2))
        with c.process(got[0]) as processing:
            assert trace.get_current_span() is processing
        with pytest.raises(KeyError):
            with c.process(got[1]):
                raise KeyError("boom")

    # The record carries the publish span's own context.
    for record, publish in zip(got, publishes):
        tc = record.trace_context
        assert tc is not None and (tc.trace_id, tc.span_id) == ids(publish.context)
        assert tc.sampled

    receives = named(exporter, f"receive {name}")
    assert receives, "a poll that returned records has a receive span"
    assert all(r.kind == trace.SpanKind.CONSUMER for r in receives)
    assert sum(attrs(r)["messaging.batch.message_count"] for r in receives) == 3
    assert all(attrs(r)["messaging.consumer.group.name"] == name for r in receives)
    linked = sorted(ids(link.context) for r in receives for link in r.links)
    assert linked == sorted(ids(s.context) for s in publishes)

    processed = named(exporter, f"process {name}")
    assert len(processed) == 2
    ok, failed = processed
    assert ok.kind == trace.SpanKind.CONSUMER
    assert ok.parent is not None and ids(ok.parent) == ids(publishes[0].context)
    assert attrs(ok)["messaging.cursus.offset"] == got[0].offset
    assert attrs(ok)["messaging.operation.type"] == "process"
    assert attrs(ok)["messaging.cursus.message.key"] == "k-1"
    assert failed.status.status_code == trace.StatusCode.ERROR
    assert attrs(failed)["error.type"] == "KeyError"


def test_a_failed_send_marks_its_span(
    bootstrap: str, name: str, spans: Tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    create(bootstrap, name)
    with TracingProducer(cursus.Producer(bootstrap_servers=bootstrap), tracer_provider=provider) as p:
        with pytest.raises(cursus.CursusError) as e:
            p.send_and_wait(name, b"x", partition=7, timeout=30)
    [span] = named(exporter, f"publish {name}")
    assert span.status.status_code == trace.StatusCode.ERROR
    assert attrs(span)["error.type"] == e.value.code
    assert attrs(span)["messaging.destination.partition.id"] == "7"


def test_a_batch_has_one_publish_span_per_record(
    bootstrap: str, name: str, spans: Tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    tracer = provider.get_tracer("test")
    with traced_producer(bootstrap, name, provider) as p:
        with tracer.start_as_current_span("request") as request:
            delivery = p.send_batch(
                name, [(b"k-0", b"a"), (None, b"b", 7), "c"], partition=0, metadata=['{"app":1}', None, None]
            )
            assert delivery is not None
            results = delivery.result(30)
        # The spans have ended with their records' results.
        ok0, failed, ok2 = named(exporter, f"publish {name}")
        calls: List[int] = []
        p.send_batch(name, [b"d"], on_delivery=lambda rs: calls.append(len(named(exporter, f"publish {name}"))))
        p.flush()
    assert calls == [4]  # ended before on_delivery ran
    assert isinstance(results[0], cursus.RecordMetadata) and isinstance(results[2], cursus.RecordMetadata)
    assert isinstance(results[1], cursus.CursusError)
    for span in (ok0, failed, ok2):
        assert span.kind == trace.SpanKind.PRODUCER
        assert span.parent is not None and ids(span.parent) == ids(request)
        assert attrs(span)["messaging.client.id"] == "app-1"
    assert attrs(ok0)["messaging.cursus.message.key"] == "k-0"
    assert attrs(ok0)["messaging.message.body.size"] == 1
    assert attrs(ok0)["messaging.cursus.offset"] == results[0].offset
    assert attrs(ok2)["messaging.cursus.offset"] == results[2].offset
    assert attrs(failed)["messaging.destination.partition.id"] == "7"
    assert failed.status.status_code == trace.StatusCode.ERROR
    assert attrs(failed)["error.type"] == results[1].code

    with consumer(bootstrap, name, name) as c:
        got = consume(c, 3)
    # Each record carries its own publish span's context.
    for record, publish in zip(got, [ok0, ok2]):
        tc = record.trace_context
        assert tc is not None and (tc.trace_id, tc.span_id) == ids(publish.context)
    assert got[0].metadata is not None and got[0].metadata.endswith('"app":1}')


def test_an_asyncio_batch_has_one_publish_span_per_record(
    bootstrap: str, name: str, spans: Tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    create(bootstrap, name)

    async def main() -> List[Any]:
        async with cursus.aio.Producer(bootstrap_servers=bootstrap, linger_ms=1) as plain:
            p = TracingAsyncProducer(plain, tracer_provider=provider)
            return await p.send_batch(name, [b"a", b"b"])

    results = asyncio.run(main())
    publishes = named(exporter, f"publish {name}")
    assert [attrs(s)["messaging.cursus.offset"] for s in publishes] == [r.offset for r in results]
    with consumer(bootstrap, name, name) as c:
        got = consume(c, 2)
    assert [ids(s.context) for s in publishes] == [
        (m.trace_context.trace_id, m.trace_context.span_id) for m in got if m.trace_context is not None
    ]


def test_without_a_recording_tracer_nothing_is_carried(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    # The API's default provider records nothing and has no context to give.
    with TracingProducer(
        cursus.Producer(bootstrap_servers=bootstrap, linger_ms=1),
        tracer_provider=trace.NoOpTracerProvider(),
    ) as p:
        p.send_and_wait(name, b"x")
    with consumer(bootstrap, name, name) as c:
        [m] = consume(c, 1)
    assert m.trace_context is None


def test_commit_and_abort_spans(
    bootstrap: str, name: str, spans: Tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    create(bootstrap, name)
    tid = f"tx-{name}"
    with TracingProducer(
        cursus.Producer(bootstrap_servers=bootstrap, transactional_id=tid, linger_ms=1),
        tracer_provider=provider,
    ) as p:
        p.init_transactions()
        with p.transaction():
            p.send(name, b"committed")
        p.begin_transaction()
        p.send(name, b"aborted")
        p.abort_transaction()
    [commit] = named(exporter, "commit_transaction")
    [abort] = named(exporter, "abort_transaction")
    for span, operation in [(commit, "commit_transaction"), (abort, "abort_transaction")]:
        assert span.kind == trace.SpanKind.CLIENT
        assert attrs(span) == {
            "messaging.system": "cursus",
            "messaging.operation.name": operation,
            "messaging.operation.type": "settle",
            "messaging.cursus.transactional_id": tid,
        }
    # A transactional record carries its publish span's context too.
    [publish, _] = named(exporter, f"publish {name}")
    with consumer(bootstrap, name, name, isolation_level="read_committed") as c:
        [m] = consume(c, 1)
    assert m.value == b"committed"
    tc = m.trace_context
    assert tc is not None and (tc.trace_id, tc.span_id) == ids(publish.context)


def test_event_store_spans(
    bootstrap: str, name: str, spans: Tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    create(bootstrap, name, event_sourcing=True)
    with TracingEventStore(cursus.EventStore(bootstrap_servers=bootstrap), tracer_provider=provider) as s:
        s.append(name, "order-1", 0, "{}", event_type="Created")
        with pytest.raises(cursus.ConflictError):
            s.append(name, "order-1", 0, "{}", event_type="Created")
        events = list(s.read_stream(name, "order-1"))
    assert [e.version for e in events] == [1]
    ok, conflict = named(exporter, f"append {name}")
    assert ok.kind == trace.SpanKind.PRODUCER
    assert attrs(ok)["messaging.cursus.aggregate.key"] == "order-1"
    assert attrs(ok)["messaging.cursus.aggregate.version"] == 0
    assert attrs(ok)["messaging.operation.type"] == "publish"
    assert conflict.status.status_code == trace.StatusCode.ERROR
    assert attrs(conflict)["error.type"] == "version_conflict"
    [read] = named(exporter, f"read {name}")
    assert read.kind == trace.SpanKind.CLIENT
    assert attrs(read)["messaging.cursus.aggregate.version"] == 1
    assert attrs(read)["messaging.operation.type"] == "receive"


def test_asyncio_publish_and_receive(
    bootstrap: str, name: str, spans: Tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    create(bootstrap, name)

    async def main() -> List[cursus.Message]:
        async with cursus.aio.Producer(bootstrap_servers=bootstrap, linger_ms=1) as plain:
            p = TracingAsyncProducer(plain, tracer_provider=provider)
            await p.send(name, b"a")
        async with cursus.aio.Consumer(
            bootstrap_servers=bootstrap, group_id=name, auto_offset_reset="earliest", fetch_max_wait_ms=50
        ) as plain_consumer:
            await plain_consumer.subscribe(name)
            c = TracingAsyncConsumer(plain_consumer, tracer_provider=provider)
            async def first() -> cursus.Message:
                async for record in c:
                    return record
                raise AssertionError("the iteration ended")

            record = await asyncio.wait_for(first(), 30)  # hang guard
            with c.process(record):
                pass
            return [record]

    [m] = asyncio.run(main())
    [publish] = named(exporter, f"publish {name}")
    assert attrs(publish)["messaging.cursus.offset"] == m.offset
    tc = m.trace_context
    assert tc is not None and (tc.trace_id, tc.span_id) == ids(publish.context)
    [receive] = named(exporter, f"receive {name}")
    assert [ids(link.context) for link in receive.links] == [ids(publish.context)]
    [process] = named(exporter, f"process {name}")
    assert process.parent is not None and ids(process.parent) == ids(publish.context)


def test_statistics_as_metrics(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    with cursus.Producer(bootstrap_servers=bootstrap, linger_ms=1, client_id="m-1") as p:
        stop = observe_statistics(p, meter_provider=meters)
        p.send_and_wait(name, b"x")
        data = reader.get_metrics_data()
        stop()
    assert data is not None
    [scope] = [sm for rm in data.resource_metrics for sm in rm.scope_metrics]
    assert scope.scope.name == "cursus"
    values = {
        m.name: [(dp.value, dict(dp.attributes or {})) for dp in m.data.data_points]  # type: ignore[union-attr]
        for m in scope.metrics
    }
    # The engine's names (cursus::telemetry::metrics), as every language's.
    assert values["messaging.client.sent.messages"] == [(1, {"messaging.client.id": "m-1"})]
    assert values["cursus.client.sent.bytes"][0][0] >= 1
    assert "cursus.client.requests.in_flight" in values
    assert "cursus.client.produce.latency.p99" in values
    # A producer reports no consumer instruments.
    assert not values.get("messaging.client.consumed.messages")
    assert not values.get("cursus.consumer.lag")
    meters.shutdown()


def test_a_consumer_reports_its_lag_under_the_engine_names(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    with cursus.Producer(bootstrap_servers=bootstrap, linger_ms=1) as p:
        p.send_and_wait(name, b"a", partition=0)
        p.send_and_wait(name, b"b", partition=0)
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    with consumer(bootstrap, f"g-{name}", name, client_id="c-1") as c:
        # Reading one of the two records leaves a lag on the partition.
        deadline = time.monotonic() + 30
        while not c.poll(0.2, max_records=1) and time.monotonic() < deadline:
            pass
        stop = observe_statistics(c, meter_provider=meters)
        data = reader.get_metrics_data()
        stop()
    assert data is not None
    [scope] = [sm for rm in data.resource_metrics for sm in rm.scope_metrics]
    points = {m.name: [dict(dp.attributes or {}) for dp in m.data.data_points] for m in scope.metrics}
    lag = {
        "messaging.client.id": "c-1",
        "messaging.destination.name": name,
        "messaging.destination.partition.id": "0",
    }
    assert lag in points["cursus.consumer.lag"]
    assert not points.get("messaging.client.sent.messages")
    meters.shutdown()


def test_the_plain_package_never_imports_opentelemetry() -> None:
    """Users without tracing pay nothing: `import cursus` leaves
    OpenTelemetry alone, and `cursus.otel` without it says what to install."""
    code = (
        "import sys, cursus, cursus.aio\n"
        "assert not any(m.startswith('opentelemetry') for m in sys.modules), sys.modules\n"
        "sys.modules['opentelemetry'] = None\n"
        "try:\n"
        "    import cursus.otel\n"
        "except ImportError as e:\n"
        "    assert 'pip install cursus[otel]' in str(e), e\n"
        "else:\n"
        "    raise AssertionError('cursus.otel imported without opentelemetry')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_asyncio_event_store_spans(
    bootstrap: str, name: str, spans: Tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    provider, exporter = spans
    create(bootstrap, name, event_sourcing=True)

    async def main() -> List[int]:
        async with cursus.aio.EventStore(bootstrap_servers=bootstrap) as plain:
            s = TracingAsyncEventStore(plain, tracer_provider=provider)
            await s.append(name, "order-1", 0, "{}", event_type="Created")
            return [e.version async for e in await s.read_stream(name, "order-1")]

    assert asyncio.run(main()) == [1]
    [append] = named(exporter, f"append {name}")
    [read] = named(exporter, f"read {name}")
    assert (append.kind, read.kind) == (trace.SpanKind.PRODUCER, trace.SpanKind.CLIENT)
    assert attrs(append)["messaging.cursus.aggregate.key"] == "order-1"
