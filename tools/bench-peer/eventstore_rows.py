"""The event-store rows of `make bench-peer` (issue #31). Kafka has no event
store, so these rows are not set against Kafka: each event-store path is
set against our own plain path on the same broker with the same 100-byte
records (idempotent produce, a group consumer), in a second table,
"Cursus-specific paths vs our own produce", printed after the first and
stored in peer.json as `eventstore`.

The workload is core/examples/bench_eventstore.rs (the Rust engine), run
against a fresh standalone broker of ours (run.py's start_ours: release,
default config, its own temp dir, stopped and removed whatever happens).
"""

from __future__ import annotations

import argparse
import json
import math
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--eventstore-bin", type=Path, required=True,
                        help="the release core/examples/bench_eventstore")
    parser.add_argument("--events", type=int, default=20_000)


def run(peer: ModuleType, args: argparse.Namespace, results: Dict[str, Dict[str, Any]]) -> None:
    """Runs bench_eventstore against a broker of ours of its own; stores the
    figures under results["ours"]["eventstore"]."""
    broker = peer.start_ours(args.broker_bin)
    try:
        peer.log(f"{broker.name} (event store) up at {broker.bootstrap}")
        results["ours"]["eventstore"] = peer.run_json(
            [str(args.eventstore_bin), broker.bootstrap, f"peer-{uuid.uuid4().hex[:8]}",
             str(args.events)], timeout=1800, env={"RUST_LOG": "warn"})
        peer.log(f"{broker.name}: eventstore {json.dumps(results['ours']['eventstore'])}")
    finally:
        broker.stop()
        if broker in peer.STARTED:
            peer.STARTED.remove(broker)
        peer.log(f"stopped {broker.name} (event store)")


def report(peer: ModuleType, results: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """The second table: rows (for peer.json) and its text."""
    r = results["ours"]["eventstore"]
    n, agg, per, reads = r["events"], r["aggregates"], r["per_aggregate"], r["read_events"]

    def each(k: str) -> str:
        return f"{peer.fmt_rate(r[k]['per_s'])}/s ({r[k]['us_each']:.0f} µs each)"

    def read(k: str) -> str:
        return f"{r[k]['ms']:.1f} ms ({peer.fmt_rate(r[k]['per_s'])}/s)"

    def per_s(k: str) -> str:
        return f"{peer.fmt_rate(r[k]['per_s'])}/s"

    # (workload, plain path, event store path, cell writer)
    specs: List[tuple[str, str, str, Callable[[str], str]]] = [
        (f"One aggregate, each write awaited before the next: {n:,} appends vs "
         f"{n:,} idempotent sends of one key",
         "produce_one", "append_one", each),
        (f"{agg:,} aggregates, a task each: {per * agg:,} appends ({per:,} each) vs "
         f"{per * agg:,} idempotent sends over {agg:,} keys",
         "produce_many", "append_many", per_s),
        (f"Read {reads:,}: READ_STREAM of one aggregate vs a joined group member "
         f"reading {reads:,} records of one key", "consume", "read_stream", read),
    ]
    rows = []
    for label, plain, es, cell in specs:
        ratio: Optional[float] = r[es]["per_s"] / r[plain]["per_s"] \
            if r[plain]["per_s"] and not math.isnan(r[plain]["per_s"]) else None
        rows.append({"workload": label, "unit": "per_s", "produce": r[plain], "eventstore": r[es],
                     "eventstore_vs_produce": ratio,
                     "cells": [label, cell(plain), cell(es), peer.fmt_ratio(ratio)]})
    head = ["Workload: event store vs our plain path", "Our idempotent produce / consume",
            "Event store", "event store / plain"]
    table = peer.markdown_table(head, [row.pop("cells") for row in rows])
    title = (f"Cursus-specific paths vs our own produce (no Kafka peer: our broker, standalone, "
             f"100 B records, acks=all; ratio above 1: the event store is faster)")
    return {"events": n, "rows": rows, "title": title, "table": table, "raw": r}
