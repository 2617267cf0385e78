"""What every command of the ``cursus`` command line shares: the connection
and security options (flags or ``CURSUS_*`` environment variables), the exit
codes, the error type for usage errors found after parsing, and output
helpers."""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import cursus

#: A client option's value, as the SDK's constructors take it.
Option = Union[str, int, bool, None]

#: Exit codes (documented in ``cursus --help`` and docs/cli.md).
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNAVAILABLE = 3
EXIT_NOT_FOUND = 4
EXIT_INTERRUPTED = 130

DEFAULT_BOOTSTRAP = "127.0.0.1:9000"

EXIT_CODES_HELP = """\
exit codes:
  0    success
  1    the operation failed (broker error, delivery failed)
  2    usage error (bad option or value)
  3    cannot connect, timed out, broker unavailable, TLS or authentication refused
  4    not found (topic, group)
  130  interrupted (Ctrl-C)"""

CONNECTION_HELP = """\
connection options may be given before or after the command, or as
environment variables: CURSUS_BOOTSTRAP, CURSUS_CLIENT_ID, CURSUS_TLS,
CURSUS_TLS_CA, CURSUS_TLS_CERT, CURSUS_TLS_KEY, CURSUS_TLS_SERVER_NAME,
CURSUS_PRINCIPAL, CURSUS_TOKEN, CURSUS_TOKEN_FILE, CURSUS_CONNECT_TIMEOUT_MS,
CURSUS_REQUEST_TIMEOUT_MS (a flag wins over its variable)."""


class UsageError(Exception):
    """A usage error found after parsing (exit code 2)."""


class CommandError(Exception):
    """A failure the command reports itself, with its exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


Handler = Callable[[argparse.Namespace], int]


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the line breaks of descriptions and epilogs (the examples)."""


# (flag, destination, metavar, environment variable, help)
_STRING_OPTIONS: List[Tuple[Sequence[str], str, str, str, str]] = [
    (
        ("-b", "--bootstrap"),
        "bootstrap",
        "HOST:PORT[,...]",
        "CURSUS_BOOTSTRAP",
        f"brokers to connect to first (default: {DEFAULT_BOOTSTRAP})",
    ),
    (("--client-id",), "client_id", "ID", "CURSUS_CLIENT_ID", "client id (default: cursus)"),
    (
        ("--tls-ca",),
        "tls_ca",
        "PEM",
        "CURSUS_TLS_CA",
        "CA certificates to trust for the broker's certificate (implies --tls)",
    ),
    (
        ("--tls-cert",),
        "tls_cert",
        "PEM",
        "CURSUS_TLS_CERT",
        "client certificate chain, for mutual TLS (with --tls-key)",
    ),
    (("--tls-key",), "tls_key", "PEM", "CURSUS_TLS_KEY", "private key of --tls-cert"),
    (
        ("--tls-server-name",),
        "tls_server_name",
        "NAME",
        "CURSUS_TLS_SERVER_NAME",
        "name the broker's certificate must carry (default: the host of the address)",
    ),
    (
        ("--principal",),
        "principal",
        "NAME",
        "CURSUS_PRINCIPAL",
        "AUTH principal (with --token or --token-file)",
    ),
    (
        ("--token",),
        "token",
        "TOKEN",
        "CURSUS_TOKEN",
        "AUTH token (never printed; prefer CURSUS_TOKEN or --token-file: "
        "command lines are visible to other users)",
    ),
    (
        ("--token-file",),
        "token_file",
        "PATH",
        "CURSUS_TOKEN_FILE",
        "read the AUTH token from this file (surrounding whitespace removed)",
    ),
]

_INT_OPTIONS: List[Tuple[str, str, str, str]] = [
    (
        "--connect-timeout-ms",
        "connect_timeout_ms",
        "CURSUS_CONNECT_TIMEOUT_MS",
        "deadline for connecting, TLS and AUTH (default: 5000)",
    ),
    (
        "--request-timeout-ms",
        "request_timeout_ms",
        "CURSUS_REQUEST_TIMEOUT_MS",
        "deadline for one request's reply (default: 30000)",
    ),
]


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    """Adds the connection, security and diagnostic options. Their defaults
    are suppressed so that a value given before the command is kept when the
    command's own parser does not see it; :func:`client_config` resolves
    flags, then environment variables, then defaults."""
    group = parser.add_argument_group("connection and security")
    for flags, dest, metavar, env, text in _STRING_OPTIONS:
        group.add_argument(
            *flags, dest=dest, metavar=metavar, default=argparse.SUPPRESS, help=f"{text} [env {env}]"
        )
    group.add_argument(
        "--tls",
        dest="tls",
        action="store_true",
        default=argparse.SUPPRESS,
        help="connect with TLS 1.2+ (implied by --tls-ca) [env CURSUS_TLS=1]",
    )
    for flag, dest, env, text in _INT_OPTIONS:
        group.add_argument(
            flag,
            dest=dest,
            metavar="MS",
            type=_non_negative_int,
            default=argparse.SUPPRESS,
            help=f"{text} [env {env}]",
        )
    group.add_argument(
        "--debug",
        dest="debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="show a traceback on errors and the SDK's log records (INFO) on stderr",
    )


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    value = _non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text}")
    return value


non_negative_int = _non_negative_int


def positive_float(text: str) -> float:
    """argparse type: a number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


def _setting(args: argparse.Namespace, dest: str, env: str) -> Optional[str]:
    value = getattr(args, dest, None)
    if value is not None:
        return str(value)
    from_env = os.environ.get(env)
    return from_env if from_env else None


def _env_flag(env: str) -> bool:
    value = os.environ.get(env, "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise UsageError(f"{env}: expected 1/true/yes/on or 0/false/no/off, got {value!r}")


def client_config(args: argparse.Namespace) -> Dict[str, Option]:
    """The client options of the connection flags and ``CURSUS_*``
    variables (a flag wins over its variable)."""
    config: Dict[str, Option] = {
        "bootstrap_servers": _setting(args, "bootstrap", "CURSUS_BOOTSTRAP") or DEFAULT_BOOTSTRAP,
    }
    names = {
        "client_id": ("client_id", "CURSUS_CLIENT_ID"),
        "tls_ca_file": ("tls_ca", "CURSUS_TLS_CA"),
        "tls_cert_file": ("tls_cert", "CURSUS_TLS_CERT"),
        "tls_key_file": ("tls_key", "CURSUS_TLS_KEY"),
        "tls_server_name": ("tls_server_name", "CURSUS_TLS_SERVER_NAME"),
        "principal": ("principal", "CURSUS_PRINCIPAL"),
    }
    for option, (dest, env) in names.items():
        value = _setting(args, dest, env)
        if value is not None:
            config[option] = value
    if getattr(args, "tls", False) or _env_flag("CURSUS_TLS"):
        config["tls"] = True
    token = _setting(args, "token", "CURSUS_TOKEN")
    token_file = _setting(args, "token_file", "CURSUS_TOKEN_FILE")
    if token is not None and token_file is not None:
        raise UsageError("give the token once: --token/CURSUS_TOKEN or --token-file/CURSUS_TOKEN_FILE")
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as e:
            raise UsageError(f"cannot read the token file {token_file}: {e.strerror}") from None
    if token is not None:
        config["token"] = token
    if ("token" in config) != ("principal" in config):
        raise UsageError("authentication needs both a principal and a token")
    for _, dest, env, _ in _INT_OPTIONS:
        number: Optional[int] = getattr(args, dest, None)
        if number is None and os.environ.get(env):
            try:
                number = _non_negative_int(os.environ[env])
            except argparse.ArgumentTypeError as e:
                raise UsageError(f"{env}: {e}") from None
        if number is not None:
            config[dest] = number
    return config


def exit_code_of(error: cursus.CursusError) -> int:
    """The exit code of an SDK error: 4 for not found, 3 when the broker
    cannot be reached or refuses the connection (availability and timeouts,
    TLS and authentication failures), 2 for an option value the SDK refused,
    else 1."""
    if isinstance(error, cursus.NotFoundError):
        return EXIT_NOT_FOUND
    if isinstance(error, cursus.AvailabilityError) or error.kind in ("io", "timeout", "tls"):
        return EXIT_UNAVAILABLE
    if isinstance(error, cursus.AuthorizationError) and error.code in (
        "authentication_failed",
        "tls_handshake_failed",
    ):
        return EXIT_UNAVAILABLE
    if error.status == "invalid_argument":
        return EXIT_USAGE
    return EXIT_FAILED


def text_or_base64(name: str, data: Optional[bytes]) -> Dict[str, Any]:
    """``{name: text}`` when ``data`` is UTF-8 (or ``None``), else
    ``{name: None, name_base64: "..."}``."""
    if data is None:
        return {name: None}
    try:
        return {name: data.decode("utf-8")}
    except UnicodeDecodeError:
        return {name: None, f"{name}_base64": base64.b64encode(data).decode("ascii")}


def json_line(obj: Any) -> str:
    """One JSON object on one line (non-ASCII kept as is)."""
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


def print_out(text: str = "") -> None:
    """Writes a line to stdout."""
    sys.stdout.write(text + "\n")


def print_err(text: str) -> None:
    """Writes a ``cursus: `` line to stderr."""
    sys.stderr.write(f"cursus: {text}\n")
    sys.stderr.flush()


def add_format_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--format text|json``."""
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help=f"text (default) or json: {what}",
    )


def table(rows: List[List[str]], header: List[str]) -> None:
    """Prints rows as aligned columns under a header."""
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    for row in [header, *rows]:
        print_out("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def new_parser(
    subparsers: Any,
    name: str,
    summary: str,
    examples: str,
    handler: Handler,
    *,
    description: Optional[str] = None,
) -> argparse.ArgumentParser:
    """A command's parser: one-line ``summary``, examples and the exit codes
    in its epilog, the connection options, ``handler`` as its action."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=summary,
        description=summary + ("\n\n" + description if description else ""),
        epilog=f"examples:\n{examples}\n\n{EXIT_CODES_HELP}\n\n{CONNECTION_HELP}",
        formatter_class=HelpFormatter,
    )
    add_connection_options(parser)
    parser.set_defaults(handler=handler)
    return parser


def group_parser(subparsers: Any, name: str, summary: str) -> Any:
    """A command group (``topics``, ``groups``, ``stream``) and the
    subparsers of its commands."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=summary, description=summary, formatter_class=HelpFormatter
    )
    add_connection_options(parser)
    parser.set_defaults(handler=None, group_parser=parser)
    return parser.add_subparsers(title="commands", metavar="COMMAND")
