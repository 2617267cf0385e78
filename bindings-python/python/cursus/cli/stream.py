"""``cursus stream read|version``: the event streams of event-sourcing topics."""

from __future__ import annotations

import argparse
from typing import Any, Dict

import cursus

from ._common import (
    EXIT_OK,
    UsageError,
    add_format_option,
    client_config,
    group_parser,
    json_line,
    new_parser,
    positive_int,
    print_out,
    text_or_base64,
)


def register(subparsers: Any) -> None:
    """Adds ``stream`` and its commands."""
    commands = group_parser(
        subparsers, "stream", "Read the event streams of event-sourcing topics (docs/event-sourcing.md)."
    )
    p = new_parser(
        commands,
        "read",
        "Print an aggregate's events, one a line.",
        "  cursus stream read accounts acct-1\n"
        "  cursus stream read accounts acct-1 --from-version 10 --format json\n"
        "  cursus stream read accounts acct-1 --snapshot",
        run_read,
        description="By default every retained event from --from-version to --to-version "
        "(the original events, never a snapshot). With --snapshot, what a loader reads: the "
        "latest snapshot (when its version is at least --from-version), then the events "
        "after it. Text format: VERSION<TAB>EVENT_TYPE<TAB>PAYLOAD; json: one object a line "
        "(topic, partition, offset, key, version, event_type, schema_version, metadata, "
        'timestamp, payload), a snapshot as {"snapshot": {"version", "state"}}. '
        "An aggregate without events prints nothing.",
    )
    p.add_argument("topic", help="event-sourcing topic")
    p.add_argument("key", metavar="AGGREGATE_KEY", help="aggregate key")
    p.add_argument(
        "--from-version", type=positive_int, default=1, metavar="N", help="first version (default: 1)"
    )
    p.add_argument("--to-version", type=positive_int, metavar="N", help="last version (default: the head)")
    p.add_argument("--snapshot", action="store_true", help="start at the latest snapshot (see above)")
    add_format_option(p, "one JSON object a line")

    p = new_parser(
        commands,
        "version",
        "Print an aggregate's stream version (0: no events).",
        "  cursus stream version accounts acct-1",
        run_version,
    )
    p.add_argument("topic", help="event-sourcing topic")
    p.add_argument("key", metavar="AGGREGATE_KEY", help="aggregate key")


def _event_json(e: cursus.StoredEvent) -> Dict[str, Any]:
    obj: Dict[str, Any] = {
        "topic": e.topic,
        "partition": e.partition,
        "offset": e.offset,
        "key": e.key.decode("utf-8", "replace"),
        "version": e.version,
        "event_type": e.event_type,
        "schema_version": e.schema_version,
        "metadata": e.metadata,
        "timestamp": e.timestamp,
    }
    obj.update(text_or_base64("payload", e.payload))
    return obj


def run_read(args: argparse.Namespace) -> int:
    """Prints the events."""
    if args.snapshot and args.to_version is not None:
        raise UsageError("--snapshot reads to the head: leave out --to-version")
    with cursus.EventStore(**client_config(args)) as store:
        if args.snapshot:
            reader = store.read_stream(args.topic, args.key, args.from_version)
        else:
            reader = store.history(args.topic, args.key, args.from_version, args.to_version)
        if reader.snapshot is not None:
            snap = reader.snapshot
            if args.format == "json":
                print_out(json_line({"snapshot": {"version": snap.version, "state": snap.state}}))
            else:
                print_out(f"{snap.version}\tsnapshot\t{snap.state}")
        for e in reader:
            if args.format == "json":
                print_out(json_line(_event_json(e)))
            else:
                print_out(f"{e.version}\t{e.event_type}\t{e.payload.decode('utf-8', 'replace')}")
    return EXIT_OK


def run_version(args: argparse.Namespace) -> int:
    """Prints the stream version."""
    with cursus.EventStore(**client_config(args)) as store:
        print_out(str(store.stream_version(args.topic, args.key)))
    return EXIT_OK
