"""``cursus produce TOPIC``: one record per input line."""

from __future__ import annotations

import argparse
import os
import stat
import sys
import threading
import time
from typing import IO, Any, Dict, Iterator, Optional

import cursus

from ._common import (
    EXIT_FAILED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    CommandError,
    UsageError,
    client_config,
    new_parser,
    non_negative_int,
    print_err,
)
from ._progress import Progress, choose_mode, human_bytes


def register(subparsers: Any) -> None:
    """Adds ``produce``."""
    p = new_parser(
        subparsers,
        "produce",
        "Send one record per line of stdin (or --file) to a topic.",
        "  echo hello | cursus produce orders\n"
        "  printf 'k1:v1\\nk2:v2\\n' | cursus produce orders --key-separator :\n"
        "  cursus produce orders --file records.txt --acks all --compression lz4 --progress",
        run,
        description="Each line (without its newline) is a record's value; with --key-separator "
        "the line is split at the first SEP into key and value (a line without SEP has no key). "
        "Every record is flushed before the command ends; a summary (records, bytes, seconds) "
        "goes to stderr. If any record fails, the failure is reported and the exit code is 1 "
        "(4 when the topic does not exist).",
    )
    p.add_argument("topic", help="topic to send to")
    p.add_argument("--file", "-f", metavar="PATH", help="read the lines from PATH instead of stdin")
    p.add_argument(
        "--key-separator",
        "-K",
        metavar="SEP",
        help="split each line into key and value at the first SEP",
    )
    p.add_argument("--acks", choices=("0", "1", "all"), help="acknowledgements to wait for (default: all)")
    p.add_argument(
        "--compression",
        choices=("none", "gzip", "snappy", "lz4"),
        help="payload compression (default: none)",
    )
    p.add_argument(
        "--partition",
        "-p",
        type=non_negative_int,
        metavar="N",
        help="send every record to partition N (default: by key, or spread)",
    )
    p.add_argument(
        "--delivery-timeout-ms",
        type=non_negative_int,
        metavar="MS",
        help="how long a record may take to be acknowledged, retries included (default: 120000)",
    )
    p.add_argument("--linger-ms", type=non_negative_int, metavar="MS", help="batching delay (default: 5)")
    p.add_argument(
        "--progress",
        action="store_true",
        help="progress lines on stderr even when it is not a terminal, one a second (on a terminal: "
        "a progress bar, the default)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="no summary, no progress")


class _Tally:
    """Outcomes reported by the producer's callback thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.delivered = 0
        self.failed = 0
        self.first_error: Optional[cursus.CursusError] = None

    def outcomes(self) -> str:
        """'N delivered, M failed', for the progress line."""
        with self.lock:
            return f"{self.delivered:,} delivered, {self.failed:,} failed"

    def on_delivery(
        self, error: Optional[cursus.CursusError], _meta: Optional[cursus.RecordMetadata]
    ) -> None:
        with self.lock:
            if error is None:
                self.delivered += 1
            else:
                self.failed += 1
                if self.first_error is None:
                    self.first_error = error


def _lines(source: IO[bytes]) -> Iterator[bytes]:
    for line in source:
        yield line[:-1] if line.endswith(b"\n") else line


def _file_size(source: IO[bytes]) -> Optional[int]:
    """The size of a regular file (a pipe or device has none to show)."""
    st = os.fstat(source.fileno())
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def run(args: argparse.Namespace) -> int:
    """Sends the lines, flushes, reports."""
    config: Dict[str, Any] = dict(client_config(args))
    if args.acks is not None:
        config["acks"] = args.acks
    if args.compression is not None:
        config["compression"] = args.compression
    if args.delivery_timeout_ms is not None:
        config["delivery_timeout_ms"] = args.delivery_timeout_ms
    if args.linger_ms is not None:
        config["linger_ms"] = args.linger_ms
    separator = args.key_separator.encode("utf-8") if args.key_separator is not None else None
    if separator == b"":
        raise UsageError("--key-separator must not be empty")
    source: IO[bytes]
    if args.file is not None:
        try:
            source = open(args.file, "rb")
        except OSError as e:
            raise UsageError(f"cannot open {args.file}: {e.strerror}") from None
    else:
        source = sys.stdin.buffer
    progress = Progress(
        sys.stderr,
        choose_mode(sys.stderr, args.quiet, args.progress),
        "sent",
        total=_file_size(source) if args.file is not None else None,
    )
    tally = _Tally()
    sent = 0
    size = 0
    read = 0
    start = time.monotonic()
    try:
        with cursus.Producer(**config) as producer:
            for line in _lines(source):
                key: Optional[bytes] = None
                value = line
                if separator is not None and separator in line:
                    key, _, value = line.partition(separator)
                producer.send(
                    args.topic,
                    value,
                    key=key,
                    partition=args.partition,
                    on_delivery=tally.on_delivery,
                )
                sent += 1
                size += len(value) + (len(key) if key is not None else 0)
                read += len(line) + 1
                progress.update(sent, size, read, tally.outcomes)
            producer.flush(timeout=None)
            progress.finish(sent, size, read, tally.outcomes)
    finally:
        progress.close()
        if source is not sys.stdin.buffer:
            source.close()
    elapsed = time.monotonic() - start
    with tally.lock:
        delivered, failed, first_error = tally.delivered, tally.failed, tally.first_error
    if not args.quiet:
        print_err(
            f"produced {delivered} of {sent} records ({human_bytes(size)}) to {args.topic} "
            f"in {elapsed:.2f} s"
        )
    if failed:
        code = EXIT_NOT_FOUND if isinstance(first_error, cursus.NotFoundError) else EXIT_FAILED
        raise CommandError(f"{failed} of {sent} records failed; first failure: {first_error}", code)
    return EXIT_OK
