"""Prints the trace of the walk-through (docs/observability.md, "See one
trace from a Go producer to a Python consumer") from the two span files,
and checks it: the Go publish span; the Python receive span, linked to it;
the Python process span, in the same trace, its child. Exits 1 when a
relation does not hold.

    python show_trace.py TOPIC GO_SPANS_FILE PYTHON_SPANS_FILE
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Tuple


@dataclass
class Span:
    """What the walk-through shows of a span, from either exporter."""

    source: str
    name: str
    kind: str
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root span
    links: List[Tuple[str, str]] = field(default_factory=list)  # (trace id, span id)
    attributes: Dict[str, Any] = field(default_factory=dict)


# Go's trace.SpanKind numbers, as its stdout exporter writes them.
GO_KINDS = {1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}
ZERO_SPAN = "0" * 16


def json_lines(path: str) -> Iterator[Any]:
    """The JSON objects of a file of one object per line (both exporters' format here)."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def go_span(s: Any) -> Span:
    """A span as Go's stdouttrace writes it."""
    parent = s["Parent"]["SpanID"]
    return Span(
        source="go",
        name=s["Name"],
        kind=GO_KINDS.get(s["SpanKind"], str(s["SpanKind"])),
        trace_id=s["SpanContext"]["TraceID"],
        span_id=s["SpanContext"]["SpanID"],
        parent_id="" if parent == ZERO_SPAN else parent,
        links=[(l["SpanContext"]["TraceID"], l["SpanContext"]["SpanID"]) for l in s.get("Links") or []],
        attributes={a["Key"]: a["Value"]["Value"] for a in s.get("Attributes") or []},
    )


def hex_id(value: str) -> str:
    """An id of the Python SDK's JSON ("0x...") as W3C lower-case hex."""
    return value[2:] if value.startswith("0x") else value


def python_span(s: Any) -> Span:
    """A span as the Python SDK's console exporter writes it (Span.to_json)."""
    return Span(
        source="python",
        name=s["name"],
        kind=s["kind"].removeprefix("SpanKind.").lower(),
        trace_id=hex_id(s["context"]["trace_id"]),
        span_id=hex_id(s["context"]["span_id"]),
        parent_id=hex_id(s["parent_id"] or ""),
        links=[(hex_id(l["context"]["trace_id"]), hex_id(l["context"]["span_id"])) for l in s["links"]],
        attributes=dict(s["attributes"]),
    )


def only(spans: List[Span], name: str, source: str) -> Span:
    """The one span of that name from that side (exits when not exactly one)."""
    found = [s for s in spans if s.name == name and s.source == source]
    if len(found) != 1:
        sys.exit(f"FAIL: {len(found)} {source} spans named {name!r}, want 1")
    return found[0]


def describe(s: Span, indent: str) -> str:
    keys = ("messaging.destination.partition.id", "messaging.cursus.offset", "messaging.client.id",
            "messaging.consumer.group.name", "messaging.batch.message_count")
    attrs = " ".join(f"{k}={s.attributes[k]}" for k in keys if k in s.attributes)
    return f"{indent}{s.name}  [{s.source}, {s.kind}]  span {s.span_id}  {attrs}"


def main(topic: str, go_file: str, python_file: str) -> int:
    spans = [go_span(s) for s in json_lines(go_file)] + [python_span(s) for s in json_lines(python_file)]
    publish = only(spans, f"publish {topic}", "go")
    receive = only(spans, f"receive {topic}", "python")
    process = only(spans, f"process {topic}", "python")

    print(f"trace {publish.trace_id}")
    print(describe(publish, "  "))
    print(describe(process, "    └─ "))
    print(f"trace {receive.trace_id} (the poll's own trace)")
    print(describe(receive, "  "))
    for trace_id, span_id in receive.links:
        print(f"    link → trace {trace_id} span {span_id}")

    checks = [
        ("the publish span is a producer span", publish.kind == "producer"),
        ("the receive span links to the publish span", (publish.trace_id, publish.span_id) in receive.links),
        ("the process span is in the publish span's trace", process.trace_id == publish.trace_id),
        ("the process span's parent is the publish span", process.parent_id == publish.span_id),
        ("the receive and process spans are consumer spans", receive.kind == process.kind == "consumer"),
    ]
    failed = 0
    for what, ok in checks:
        print(f"{'ok  ' if ok else 'FAIL'} {what}")
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
