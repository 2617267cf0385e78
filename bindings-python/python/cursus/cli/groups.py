"""``cursus groups list|describe``."""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict

import cursus

from ._common import EXIT_OK, add_format_option, client_config, group_parser, new_parser, print_out, table


def register(subparsers: Any) -> None:
    """Adds ``groups`` and its commands."""
    commands = group_parser(subparsers, "groups", "List and describe consumer groups.")
    p = new_parser(
        commands,
        "list",
        "List the consumer groups, one name a line.",
        "  cursus groups list\n  cursus groups list --format json",
        run_list,
    )
    add_format_option(p, "one JSON array of names")
    p = new_parser(
        commands,
        "describe",
        "Describe a consumer group: its topic, state, generation and members.",
        "  cursus groups describe billing\n  cursus groups describe billing --format json",
        run_describe,
    )
    p.add_argument("group", help="group name")
    add_format_option(p, "one JSON object")


def run_list(args: argparse.Namespace) -> int:
    """Prints the group names."""
    with cursus.AdminClient(**client_config(args)) as admin:
        names = sorted(admin.list_groups())
    if args.format == "json":
        print_out(json.dumps(names))
    else:
        for name in names:
            print_out(name)
    return EXIT_OK


def status_json(status: cursus.GroupStatus) -> Dict[str, Any]:
    """A group's status as a JSON object."""
    return {
        "group": status.group_name,
        "topic": status.topic_name,
        "state": status.state,
        "generation": status.generation,
        "member_count": status.member_count,
        "partition_count": status.partition_count,
        "members": [
            {
                "member_id": m.member_id,
                "last_heartbeat": m.last_heartbeat,
                "assignments": m.assignments,
            }
            for m in status.members
        ],
    }


def run_describe(args: argparse.Namespace) -> int:
    """Prints the group's status."""
    with cursus.AdminClient(**client_config(args)) as admin:
        status = admin.group_status(args.group)
    if args.format == "json":
        print_out(json.dumps(status_json(status)))
        return EXIT_OK
    print_out(f"group:       {status.group_name}")
    print_out(f"topic:       {status.topic_name}")
    print_out(f"state:       {status.state}")
    print_out(f"generation:  {status.generation}")
    print_out(f"members:     {status.member_count}")
    print_out(f"partitions:  {status.partition_count}")
    if status.members:
        print_out()
        table(
            [
                [m.member_id, ",".join(str(p) for p in m.assignments) or "-", m.last_heartbeat]
                for m in status.members
            ],
            ["MEMBER", "PARTITIONS", "LAST HEARTBEAT"],
        )
    return EXIT_OK
