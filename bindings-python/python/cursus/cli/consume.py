"""``cursus consume TOPIC``: print records as they arrive."""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from typing import Any, Dict, List, Optional

import cursus

from ._common import (
    EXIT_OK,
    UsageError,
    client_config,
    json_line,
    new_parser,
    positive_float,
    positive_int,
    print_err,
    text_or_base64,
)
from ._progress import Progress, choose_mode


def register(subparsers: Any) -> None:
    """Adds ``consume``."""
    p = new_parser(
        subparsers,
        "consume",
        "Read records of a topic and print them, one a line.",
        "  cursus consume orders --from-beginning\n"
        "  cursus consume orders --from-beginning --count 10 --format json\n"
        "  cursus consume orders --group billing --timeout 5 --print-key --key-separator '='",
        run,
        description="Without --group the consumer joins a unique throwaway group "
        "(cursus-cli-<random>) and commits nothing, so every run reads from the start "
        "(--from-beginning) or only new records. With --group G it resumes at G's committed "
        "offsets (or, where G has none, at the beginning with --from-beginning, else at the "
        "end) and commits what it has printed. Runs until --count records were printed, "
        "--timeout seconds passed without a record, or Ctrl-C (exit code 130, after closing "
        "the consumer).\n\n"
        "--format json prints one object a line: topic, partition, offset, timestamp (ms), "
        "key and value as UTF-8 text (null for no key); bytes that are not UTF-8 are given as "
        "key_base64 / value_base64 instead (with key / value null).",
    )
    p.add_argument("topic", help="topic to read")
    p.add_argument(
        "--group",
        "-g",
        metavar="G",
        help="consumer group: resume from and commit its offsets (default: a throwaway "
        "group that commits nothing)",
    )
    p.add_argument(
        "--from-beginning",
        action="store_true",
        help="start at the earliest offset where the group has no committed offset "
        "(default: only new records)",
    )
    p.add_argument("--count", "-c", type=positive_int, metavar="N", help="stop after N records")
    p.add_argument(
        "--timeout",
        "-t",
        type=positive_float,
        metavar="SECONDS",
        help="stop after SECONDS without a record (default: run until Ctrl-C)",
    )
    p.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text (default): the value (with --print-key: key, separator, value); "
        "json: one JSON object a line",
    )
    p.add_argument("--print-key", action="store_true", help="text format: print the key before the value")
    p.add_argument(
        "--key-separator",
        metavar="SEP",
        default="\t",
        help="text format: what separates key and value with --print-key (default: a tab)",
    )
    p.add_argument(
        "--isolation-level",
        choices=("read_committed", "read_uncommitted"),
        help="read_committed (default): only committed transactional records",
    )
    p.add_argument(
        "--quiet", "-q", action="store_true", help="no summary line and no progress bar on stderr"
    )


def _text(m: cursus.Message, print_key: bool, separator: bytes) -> bytes:
    if print_key:
        return (m.key or b"") + separator + m.payload + b"\n"
    return m.payload + b"\n"


def _json(m: cursus.Message) -> bytes:
    obj: Dict[str, Any] = {
        "topic": m.topic,
        "partition": m.partition,
        "offset": m.offset,
        "timestamp": m.timestamp,
    }
    obj.update(text_or_base64("key", m.key))
    obj.update(text_or_base64("value", m.payload))
    return (json_line(obj) + "\n").encode("utf-8")


def run(args: argparse.Namespace) -> int:
    """Polls and prints until the count, the silence timeout or Ctrl-C."""
    if args.key_separator != "\t" and not args.print_key and args.format == "text":
        raise UsageError("--key-separator needs --print-key")
    config: Dict[str, Any] = dict(client_config(args))
    group: Optional[str] = args.group
    throwaway = group is None
    config["group_id"] = group if group is not None else f"cursus-cli-{uuid.uuid4().hex}"
    config["auto_offset_reset"] = "earliest" if args.from_beginning else "latest"
    config["enable_auto_commit"] = False
    config["fetch_max_wait_ms"] = 200
    if args.isolation_level is not None:
        config["isolation_level"] = args.isolation_level
    separator = args.key_separator.encode("utf-8")
    out = sys.stdout.buffer
    count: Optional[int] = args.count
    silence: Optional[float] = args.timeout
    printed = 0
    size = 0
    # A bar only where it does not mix with the records: stdout elsewhere.
    progress = Progress(
        sys.stderr,
        choose_mode(sys.stderr, args.quiet, asked=False, screen_free=not sys.stdout.isatty()),
        "consumed",
        total=count,
    )
    try:
        with cursus.Consumer(**config) as consumer:
            consumer.subscribe(args.topic)
            last = time.monotonic()
            while count is None or printed < count:
                wait = 1.0
                if silence is not None:
                    left = last + silence - time.monotonic()
                    if left <= 0:
                        break
                    wait = min(wait, left)
                remaining = None if count is None else count - printed
                records: List[cursus.Message] = consumer.poll(timeout=wait, max_records=remaining)
                if not records:
                    continue
                last = time.monotonic()
                for m in records:
                    out.write(_json(m) if args.format == "json" else _text(m, args.print_key, separator))
                out.flush()
                printed += len(records)
                size += sum(len(m.payload) + len(m.key or b"") for m in records)
                progress.update(printed, size, printed)
                if not throwaway:
                    consumer.commit()
            progress.finish(printed, size, printed)
    finally:
        progress.close()  # Ctrl-C: the error starts on its own line
    if not args.quiet:
        print_err(f"consumed {printed} records from {args.topic}")
    return EXIT_OK
