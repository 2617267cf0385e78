"""The ``cursus`` command line (docs/cli.md): topics, produce, consume,
groups, offsets and event streams from a shell, like kcat for Kafka.

``main(argv)`` parses the arguments, runs the command and returns the exit
code (0 success, 1 failed, 2 usage, 3 unavailable / refused, 4 not found,
130 interrupted); errors are one ``cursus: error: ...`` line on stderr
(a traceback too with ``--debug``)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from typing import List, Optional, Sequence

import cursus

from . import consume, groups, offsets, produce, stream, topics
from ._common import (
    CONNECTION_HELP,
    EXIT_CODES_HELP,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    CommandError,
    HelpFormatter,
    UsageError,
    add_connection_options,
    exit_code_of,
)

__all__ = ["main", "build_parser"]

_EXAMPLES = """\
examples:
  cursus topics create orders --partitions 3
  printf 'k1:hello\\nk2:world\\n' | cursus produce orders --key-separator :
  cursus consume orders --from-beginning --count 2 --format json
  cursus consume orders --group billing --timeout 5
  cursus offsets orders --group billing
  cursus -b broker:9443 --tls-ca ca.pem --principal ops --token-file token topics list"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``cursus`` and every command."""
    parser = argparse.ArgumentParser(
        prog="cursus",
        description="Command line client of the Cursus broker: topics, produce, consume, "
        "groups, offsets and event streams.",
        epilog=f"{_EXAMPLES}\n\n{EXIT_CODES_HELP}\n\n{CONNECTION_HELP}\n\n"
        "Run `cursus COMMAND --help` for a command's options. See docs/cli.md.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cursus {cursus.__version__}")
    add_connection_options(parser)
    parser.set_defaults(handler=None, group_parser=parser)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    topics.register(commands)
    produce.register(commands)
    consume.register(commands)
    groups.register(commands)
    offsets.register(commands)
    stream.register(commands)
    return parser


def _error(message: str) -> None:
    sys.stderr.write(f"cursus: error: {message}\n")
    sys.stderr.flush()


def _quiet_stdout() -> None:
    """After a broken pipe (`cursus consume ... | head`): no more writes,
    and no error when Python flushes stdout at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs ``cursus`` with ``argv`` (default: ``sys.argv[1:]``) and returns
    its exit code."""
    parser = build_parser()
    args_list: List[str] = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(args_list)
    except SystemExit as e:  # --help, --version (0) and usage errors (2)
        return e.code if isinstance(e.code, int) else EXIT_USAGE
    debug = bool(getattr(args, "debug", False))
    if debug:
        logging.basicConfig(level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
    if args.handler is None:
        group: argparse.ArgumentParser = args.group_parser
        group.print_usage(sys.stderr)
        _error("a command is required (see --help)")
        return EXIT_USAGE
    try:
        code: int = args.handler(args)
        sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        _error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except UsageError as e:
        if debug:
            traceback.print_exc()
        _error(str(e))
        return EXIT_USAGE
    except CommandError as e:
        if debug:
            traceback.print_exc()
        _error(str(e))
        return e.exit_code
    except cursus.CursusError as e:
        if debug:
            traceback.print_exc()
        _error(str(e))
        return exit_code_of(e)
    except OSError as e:
        if debug:
            traceback.print_exc()
        _error(f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e))
        return EXIT_FAILED
    except Exception as e:  # a bug: still one line, the traceback with --debug
        if debug:
            traceback.print_exc()
        _error(f"{type(e).__name__}: {e} (run with --debug for a traceback)")
        return EXIT_FAILED
