"""``cursus offsets TOPIC [--group G]``."""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict, List, Optional

import cursus

from ._common import EXIT_OK, add_format_option, client_config, new_parser, print_out, table


def register(subparsers: Any) -> None:
    """Adds ``offsets``."""
    p = new_parser(
        subparsers,
        "offsets",
        "Show a topic's earliest and latest offset per partition (and a group's committed "
        "offsets and lag).",
        "  cursus offsets orders\n  cursus offsets orders --group billing --format json",
        run,
        description="With --group G: G's committed offset per partition (the next offset it "
        "will read; '-' when it has none) and its lag, latest - committed (latest - earliest "
        "without a committed offset). A group that does not exist is exit code 4.",
    )
    p.add_argument("topic", help="topic name")
    p.add_argument("--group", "-g", metavar="G", help="also show this group's committed offsets and lag")
    add_format_option(p, "one JSON object")


def run(args: argparse.Namespace) -> int:
    """Prints the offsets."""
    config = client_config(args)
    committed: Dict[int, Optional[int]] = {}
    with cursus.AdminClient(**config) as admin:
        offsets = sorted(admin.list_offsets(args.topic), key=lambda o: o.partition)
        if args.group is not None:
            admin.group_status(args.group)  # not found: exit code 4
    if args.group is not None:
        # The admin API has no committed-offset request: a consumer of the
        # group that never subscribes reads them without joining the group.
        with cursus.Consumer(**config, group_id=args.group) as consumer:
            for o in offsets:
                committed[o.partition] = consumer.committed(cursus.TopicPartition(args.topic, o.partition))
    rows: List[Dict[str, Any]] = []
    for o in offsets:
        row: Dict[str, Any] = {"partition": o.partition, "earliest": o.earliest, "latest": o.latest}
        if args.group is not None:
            c = committed.get(o.partition)
            row["committed"] = c
            row["lag"] = max(0, o.latest - (c if c is not None else o.earliest))
        rows.append(row)
    if args.format == "json":
        doc: Dict[str, Any] = {"topic": args.topic, "partitions": rows}
        if args.group is not None:
            doc["group"] = args.group
            doc["lag"] = sum(r["lag"] for r in rows)
        print_out(json.dumps(doc))
        return EXIT_OK
    header = ["PARTITION", "EARLIEST", "LATEST"]
    if args.group is not None:
        header += ["COMMITTED", "LAG"]
    cells = [["-" if r.get(h.lower()) is None else str(r[h.lower()]) for h in header] for r in rows]
    table(cells, header)
    if args.group is not None:
        print_out(f"total lag of {args.group}: {sum(r['lag'] for r in rows)}")
    return EXIT_OK
