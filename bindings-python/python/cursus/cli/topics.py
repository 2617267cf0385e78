"""``cursus topics list|create|describe|delete|reassign``."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any, Dict, List, Optional

import cursus

from ._common import (
    EXIT_OK,
    CommandError,
    UsageError,
    add_format_option,
    client_config,
    group_parser,
    new_parser,
    non_negative_int,
    positive_int,
    print_err,
    print_out,
    table,
)

#: The topic options of ``AdminClient.create_topic`` (``--config NAME=VALUE``).
TOPIC_OPTIONS = (
    "partitions",
    "replication_factor",
    "min_in_sync_replicas",
    "idempotent",
    "event_sourcing",
    "aggregate_replay",
    "cleanup_policy",
    "retention_hours",
    "retention_bytes",
    "partitioner",
    "auth_policy",
    "read_acl",
    "write_acl",
)


def register(subparsers: Any) -> None:
    """Adds ``topics`` and its commands."""
    commands = group_parser(subparsers, "topics", "List, create, describe and delete topics.")

    p = new_parser(
        commands,
        "list",
        "List the topics, one name a line.",
        "  cursus topics list\n  cursus topics list --format json",
        run_list,
    )
    add_format_option(p, "one JSON array of names")

    p = new_parser(
        commands,
        "create",
        "Create a topic (an existing one is an error, or left as it is with --if-not-exists).",
        "  cursus topics create orders --partitions 3\n"
        "  cursus topics create ledger --event-sourcing --config retention_hours=720\n"
        "  cursus topics create audit --config cleanup_policy=compact --config read_acl=ops,audit",
        run_create,
        description="Topic options (--config NAME=VALUE, values in their text form, lists "
        "comma-separated): " + ", ".join(TOPIC_OPTIONS) + ".\n\n"
        "The broker's CREATE of an existing topic applies the new settings to it; this "
        "command checks first and refuses (exit code 1) rather than change a topic by "
        "accident. --if-not-exists leaves an existing topic untouched and succeeds.",
    )
    p.add_argument("topic", help="topic name")
    p.add_argument(
        "--if-not-exists",
        action="store_true",
        help="succeed without changes when the topic exists",
    )
    p.add_argument("--partitions", type=positive_int, metavar="N", help="number of partitions")
    p.add_argument("--replication-factor", type=positive_int, metavar="N", help="replicas per partition")
    p.add_argument(
        "--event-sourcing", action="store_true", help="an event-sourcing topic (per-aggregate streams)"
    )
    p.add_argument("--idempotent", action="store_true", help="idempotent appends")
    p.add_argument(
        "--aggregate-replay",
        action="store_true",
        help="an aggregate replay topic (needs --event-sourcing --idempotent)",
    )
    p.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a topic option (repeatable); see the list above",
    )
    add_format_option(p, "the created topic's settings as one JSON object")

    p = new_parser(
        commands,
        "describe",
        "Describe a topic: its settings, and per partition the leader, replicas, ISR and offsets.",
        "  cursus topics describe orders\n  cursus topics describe orders --format json",
        run_describe,
    )
    p.add_argument("topic", help="topic name")
    add_format_option(p, "one JSON object")

    p = new_parser(
        commands,
        "delete",
        "Delete a topic.",
        "  cursus topics delete orders\n  cursus topics delete orders --if-exists",
        run_delete,
    )
    p.add_argument("topic", help="topic name")
    p.add_argument("--if-exists", action="store_true", help="succeed when the topic does not exist")

    p = new_parser(
        commands,
        "reassign",
        "Move a partition's replicas to other brokers (distributed mode) and wait until done.",
        "  cursus topics reassign orders --partition 0 --replicas broker-4,broker-2\n"
        "  cursus topics reassign --topic orders --partition 0 --replicas broker-4,broker-2 --format json",
        run_reassign,
        description="REASSIGN_PARTITIONS (docs/cluster.md, \"Moving replicas\"): the new "
        "replicas are added and catch up into the ISR, then the replicas not listed are "
        "dropped; the leader moves to the first listed replica if the old one is dropped. "
        "List as many broker ids as the topic's replication factor, preferred leader first. "
        "While the move runs a progress line (replicas, ISR, target) goes to stderr after "
        "every --request-timeout-ms; running the command again with the same replicas "
        "resumes waiting for a move in progress.",
    )
    p.add_argument("topic", nargs="?", help="topic name (or --topic)")
    p.add_argument("--topic", dest="topic_option", metavar="TOPIC", help="topic name")
    p.add_argument(
        "--partition", type=non_negative_int, required=True, metavar="N", help="the partition to move"
    )
    p.add_argument(
        "--replicas",
        required=True,
        metavar="ID,ID,...",
        help="the broker ids of the new replica set, preferred leader first",
    )
    p.add_argument(
        "--wait-ms",
        type=positive_int,
        default=600_000,
        metavar="MS",
        help="give up (exit code 3) when the move is not done after this long (default 600000)",
    )
    add_format_option(p, "the finished move as one JSON object")


def _info(info: cursus.TopicInfo) -> Dict[str, Any]:
    return {
        "name": info.name,
        "partitions": info.partitions,
        "revision": info.revision,
        "replication_factor": info.replication_factor,
        "min_in_sync_replicas": info.min_in_sync_replicas,
        "cleanup_policy": info.cleanup_policy,
        "retention_hours": info.retention_hours,
        "retention_bytes": info.retention_bytes,
        "partitioner": info.partitioner,
        "auth_policy": info.auth_policy,
        "read_acl": info.read_acl,
        "write_acl": info.write_acl,
        "idempotent": info.idempotent,
        "event_sourcing": info.event_sourcing,
        "aggregate_replay": info.aggregate_replay,
        "lifecycle_epoch": info.lifecycle_epoch,
    }


def _print_info(info: cursus.TopicInfo) -> None:
    for name, value in _info(info).items():
        if isinstance(value, list):
            value = ",".join(value) or "-"
        elif value is None:
            value = "-"
        elif isinstance(value, bool):
            value = "true" if value else "false"
        print_out(f"{name + ':':<22}{value}")


def run_list(args: argparse.Namespace) -> int:
    """Prints the topic names."""
    with cursus.AdminClient(**client_config(args)) as admin:
        names = sorted(admin.list_topics())
    if args.format == "json":
        print_out(json.dumps(names))
    else:
        for name in names:
            print_out(name)
    return EXIT_OK


def _create_options(args: argparse.Namespace) -> Dict[str, Any]:
    options: Dict[str, Any] = {}
    for item in args.config:
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise UsageError(f"--config expects NAME=VALUE, got {item!r}")
        if name not in TOPIC_OPTIONS:
            raise UsageError(f"unknown topic option {name!r}; known options: {', '.join(TOPIC_OPTIONS)}")
        options[name] = value
    flags: Dict[str, Any] = {
        "partitions": args.partitions,
        "replication_factor": args.replication_factor,
        "event_sourcing": True if args.event_sourcing else None,
        "idempotent": True if args.idempotent else None,
        "aggregate_replay": True if args.aggregate_replay else None,
    }
    for name, value in flags.items():
        if value is not None:
            if name in options:
                raise UsageError(f"--{name.replace('_', '-')} and --config {name}=... both given")
            options[name] = value
    return options


def run_create(args: argparse.Namespace) -> int:
    """Creates the topic and prints its settings."""
    options = _create_options(args)
    with cursus.AdminClient(**client_config(args)) as admin:
        if args.topic in admin.list_topics():
            if not args.if_not_exists:
                raise CommandError(f"topic {args.topic} already exists (--if-not-exists: leave it as it is)")
            info = admin.describe_topic(args.topic).definition
            created = False
        else:
            try:
                info = admin.create_topic(args.topic, **options)
            except TypeError as e:  # a value of the wrong type for its option
                raise UsageError(str(e)) from None
            created = True
    if args.format == "json":
        print_out(json.dumps({**_info(info), "created": created}))
    elif created:
        print_out(f"created topic {info.name} ({info.partitions} partitions)")
    else:
        print_out(f"topic {info.name} exists ({info.partitions} partitions); left as it is")
    return EXIT_OK


def _partition(p: cursus.PartitionDescription) -> Dict[str, Any]:
    return {
        "partition": p.id,
        "leader": p.leader,
        "replicas": p.replicas,
        "isr": p.isr,
        "earliest": p.earliest,
        "hwm": p.hwm,
        "leo": p.leo,
    }


def run_describe(args: argparse.Namespace) -> int:
    """Prints the topic's settings and partitions."""
    with cursus.AdminClient(**client_config(args)) as admin:
        desc = admin.describe_topic(args.topic)
    partitions = sorted(desc.partitions, key=lambda p: p.id)
    if args.format == "json":
        print_out(
            json.dumps(
                {
                    "topic": desc.topic,
                    "config": _info(desc.definition),
                    "partitions": [_partition(p) for p in partitions],
                }
            )
        )
        return EXIT_OK
    _print_info(desc.definition)
    print_out()
    rows: List[List[str]] = [
        [
            str(p.id),
            p.leader or "-",
            ",".join(p.replicas) or "-",
            ",".join(p.isr) or "-",
            str(p.earliest),
            str(p.hwm),
            str(p.leo),
        ]
        for p in partitions
    ]
    table(rows, ["PARTITION", "LEADER", "REPLICAS", "ISR", "EARLIEST", "HWM", "LEO"])
    return EXIT_OK


def run_delete(args: argparse.Namespace) -> int:
    """Deletes the topic."""
    with cursus.AdminClient(**client_config(args)) as admin:
        outcome = admin.delete_topic(args.topic, if_exists=args.if_exists)
    if outcome.deleted:
        pending = " (data cleanup pending)" if outcome.cleanup_pending else ""
        print_out(f"deleted topic {args.topic}{pending}")
    else:
        print_out(f"topic {args.topic} does not exist")
    return EXIT_OK


def _reassign_topic(args: argparse.Namespace) -> str:
    topic: Optional[str] = args.topic or args.topic_option
    if not topic:
        raise UsageError("the topic is missing (TOPIC or --topic)")
    if args.topic and args.topic_option and args.topic != args.topic_option:
        raise UsageError(f"two topics given: {args.topic!r} and --topic {args.topic_option!r}")
    return topic


def run_reassign(args: argparse.Namespace) -> int:
    """Moves the partition's replicas, printing progress while it runs."""
    topic = _reassign_topic(args)
    replicas = [r.strip() for r in args.replicas.split(",")]
    if not all(replicas):
        raise UsageError(f"--replicas expects broker ids separated by commas, got {args.replicas!r}")
    deadline = time.monotonic() + args.wait_ms / 1000
    with cursus.AdminClient(**client_config(args)) as admin:
        while True:
            try:
                done = admin.reassign_partition(topic, args.partition, replicas)
                break
            except cursus.TimeoutError as e:
                if e.code != "reassignment_timeout" or time.monotonic() >= deadline:
                    raise
                f = e.fields
                print_err(
                    f"moving {topic}/{args.partition}: replicas {f.get('replicas', '-')}, "
                    f"in sync {f.get('isr', '-')}, target {f.get('target', '-')}"
                )
    if args.format == "json":
        print_out(
            json.dumps(
                {
                    "topic": done.topic,
                    "partition": done.partition,
                    "done": done.done,
                    "replicas": done.replicas,
                    "isr": done.isr,
                    "leader": done.leader,
                    "target": done.target,
                }
            )
        )
    else:
        print_out(
            f"moved {done.topic}/{done.partition} to {','.join(done.replicas)} "
            f"(leader {done.leader or '-'}, in sync {','.join(done.isr) or '-'})"
        )
    return EXIT_OK


__all__ = ["register", "TOPIC_OPTIONS"]
