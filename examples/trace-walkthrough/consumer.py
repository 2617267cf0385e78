"""The Python half of the trace walk-through (docs/observability.md, "See
one trace from a Go producer to a Python consumer"): consumes one record
through cursus.otel's TracingConsumer and processes it in a process span,
writing the spans as JSON lines to SPANS_FILE with the OpenTelemetry SDK's
console exporter.

    python consumer.py BROKER_ADDR TOPIC SPANS_FILE
"""

from __future__ import annotations

import sys
import time
from typing import List

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

import cursus
from cursus.otel import TracingConsumer


def one_line(span: ReadableSpan) -> str:
    """A span as one line of JSON (the exporter's default is indented)."""
    text: str = span.to_json(indent=None)
    return text + "\n"


def main(bootstrap: str, topic: str, spans_file: str) -> None:
    with open(spans_file, "w", encoding="utf-8") as out:
        provider = TracerProvider(resource=Resource.create({"service.name": "walkthrough-python-consumer"}))
        # Simple: each span is written when it ends.
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out, formatter=one_line)))
        group = "python-consumer"
        with cursus.Consumer(
            bootstrap_servers=bootstrap, group_id=group, client_id=group, auto_offset_reset="earliest"
        ) as raw:
            consumer = TracingConsumer(raw, group=group, tracer_provider=provider)
            consumer.subscribe(topic)
            deadline = time.monotonic() + 30
            records: List[cursus.Message] = []
            while not records and time.monotonic() < deadline:
                records = consumer.poll(1.0)  # a receive span for the poll that returns the record
            if not records:
                sys.exit(f"python consumer: nothing on {topic} in 30 s")
            for record in records:
                with consumer.process(record):  # a child of the Go publish span
                    print(f"python consumer: got {record.topic}/{record.partition}@{record.offset} {record.payload!r}")
        provider.shutdown()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
