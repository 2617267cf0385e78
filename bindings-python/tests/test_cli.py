"""The `cursus` command line (docs/cli.md), end to end: every test runs the
CLI as a subprocess (`python -m cursus.cli`, and the installed `cursus`
script) against the real broker fixtures and checks its output and exit
code."""

from __future__ import annotations

import fcntl
import importlib.metadata
import json
import os
import pty
import select
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import termios
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest

import cursus

from conftest import Broker, SecureBroker

TIMEOUT_S = 120


def cli(
    *args: str,
    bootstrap: Optional[str] = None,
    stdin: Optional[bytes] = None,
    env: Optional[Dict[str, str]] = None,
) -> subprocess.CompletedProcess[bytes]:
    """Runs `python -m cursus.cli ARGS` (with `-b bootstrap` first when
    given) and returns its result; no CURSUS_* variable leaks in from the
    caller's environment."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("CURSUS_")}
    argv: List[str] = [sys.executable, "-m", "cursus.cli"]
    if bootstrap is not None:
        argv += ["-b", bootstrap]
    return subprocess.run(
        [*argv, *args],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env={**base, **(env or {})},
        timeout=TIMEOUT_S,
    )


def ok(result: subprocess.CompletedProcess[bytes]) -> str:
    """stdout of a run that must have succeeded."""
    assert result.returncode == 0, (result.returncode, result.stderr.decode())
    return result.stdout.decode()


def error_line(result: subprocess.CompletedProcess[bytes]) -> str:
    """The one `cursus: error:` line of a failed run (and no traceback)."""
    stderr = result.stderr.decode()
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("cursus: error: ")]
    assert len(lines) == 1, stderr
    return lines[0]


def json_lines(text: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line]


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# ------------------------------------------------------------------ topics


def test_topics_create_list_describe_delete(bootstrap: str, name: str) -> None:
    out = ok(
        cli(
            "topics",
            "create",
            name,
            "--partitions",
            "3",
            "--config",
            "retention_hours=24",
            bootstrap=bootstrap,
        )
    )
    assert f"created topic {name} (3 partitions)" in out
    assert name in ok(cli("topics", "list", bootstrap=bootstrap)).splitlines()
    assert name in json.loads(ok(cli("topics", "list", "--format", "json", bootstrap=bootstrap)))

    text = ok(cli("topics", "describe", name, bootstrap=bootstrap))
    assert "retention_hours:      24" in text
    rows = [line.split() for line in text.splitlines() if line[:1].isdigit()]
    assert [r[0] for r in rows] == ["0", "1", "2"]
    assert all(r[1] == bootstrap for r in rows)  # the leader

    desc = json.loads(ok(cli("topics", "describe", name, "--format", "json", bootstrap=bootstrap)))
    assert desc["topic"] == name
    assert desc["config"]["partitions"] == 3 and desc["config"]["retention_hours"] == 24
    assert [p["partition"] for p in desc["partitions"]] == [0, 1, 2]
    assert all(p["leader"] == bootstrap and p["hwm"] == 0 for p in desc["partitions"])

    assert f"deleted topic {name}" in ok(cli("topics", "delete", name, bootstrap=bootstrap))
    assert name not in ok(cli("topics", "list", bootstrap=bootstrap)).splitlines()
    missing = cli("topics", "delete", name, bootstrap=bootstrap)
    assert missing.returncode == 4
    assert "topic_not_found" in error_line(missing)
    assert "does not exist" in ok(cli("topics", "delete", name, "--if-exists", bootstrap=bootstrap))


def test_topics_reassign_needs_a_cluster_and_checks_its_arguments(bootstrap: str, name: str) -> None:
    ok(cli("topics", "create", name, bootstrap=bootstrap))
    refused = cli("topics", "reassign", name, "--partition", "0", "--replicas", "broker-1", bootstrap=bootstrap)
    assert refused.returncode == 1
    assert "distribution_not_enabled" in error_line(refused)
    # --topic is the same as the positional name.
    refused = cli(
        "topics", "reassign", "--topic", name, "--partition", "0", "--replicas", "b1,b2", bootstrap=bootstrap
    )
    assert "distribution_not_enabled" in error_line(refused)
    for args, message in [
        (["--partition", "0", "--replicas", "b1"], "the topic is missing"),
        ([name, "--topic", "other", "--partition", "0", "--replicas", "b1"], "two topics given"),
        ([name, "--partition", "0", "--replicas", "b1,,b2"], "--replicas expects broker ids"),
    ]:
        bad = cli("topics", "reassign", *args, bootstrap=bootstrap)
        assert bad.returncode == 2, bad.stderr.decode()
        assert message in error_line(bad)
    missing = cli("topics", "reassign", name, "--replicas", "b1", bootstrap=bootstrap)
    assert missing.returncode == 2


def test_create_topic_options_are_checked(bootstrap: str, name: str) -> None:
    unknown = cli("topics", "create", name, "--config", "no_such_option=1", bootstrap=bootstrap)
    assert unknown.returncode == 2
    assert "unknown topic option 'no_such_option'" in error_line(unknown)
    bad_value = cli("topics", "create", name, "--config", "partitions=many", bootstrap=bootstrap)
    assert bad_value.returncode == 2
    assert "partitions" in error_line(bad_value)
    out = ok(cli("topics", "create", name, "--event-sourcing", "--format", "json", bootstrap=bootstrap))
    first = json.loads(out)
    assert first["event_sourcing"] is True and first["created"] is True
    # An existing topic is never changed by accident (the broker's CREATE
    # would apply the new settings).
    more = str(first["partitions"] + 1)
    again = cli("topics", "create", name, "--partitions", more, bootstrap=bootstrap)
    assert again.returncode == 1
    assert f"topic {name} already exists" in error_line(again)
    kept = json.loads(
        ok(
            cli(
                "topics",
                "create",
                name,
                "--partitions",
                more,
                "--if-not-exists",
                "--format",
                "json",
                bootstrap=bootstrap,
            )
        )
    )
    assert (kept["created"], kept["partitions"], kept["revision"]) == (
        False,
        first["partitions"],
        first["revision"],
    )
    assert "left as it is" in ok(cli("topics", "create", name, "--if-not-exists", bootstrap=bootstrap))


def test_describe_missing_topic_is_exit_4(bootstrap: str, name: str) -> None:
    result = cli("topics", "describe", name, bootstrap=bootstrap)
    assert result.returncode == 4
    assert error_line(result) == f"cursus: error: topic_not_found (not_found): topic={name}"
    assert result.stdout == b""
    offsets = cli("offsets", name, bootstrap=bootstrap)
    assert offsets.returncode == 4


# --------------------------------------------------------- produce / consume


def test_produce_with_key_separator_then_consume_json(bootstrap: str, name: str) -> None:
    ok(cli("topics", "create", name, "--partitions", "3", bootstrap=bootstrap))
    lines = [f"key-{i}:value {i}: with the separator inside" for i in range(20)]
    lines.append("no separator here")
    produced = cli(
        "produce",
        name,
        "--key-separator",
        ":",
        "--acks",
        "all",
        "--compression",
        "lz4",
        bootstrap=bootstrap,
        stdin=("\n".join(lines) + "\n").encode(),
    )
    ok(produced)
    summary = produced.stderr.decode()
    assert "produced 21 of 21 records" in summary and " s" in summary, summary

    out = ok(
        cli("consume", name, "--from-beginning", "--count", "21", "--format", "json", bootstrap=bootstrap)
    )
    got = json_lines(out)
    assert len(got) == 21
    assert {(g["key"], g["value"]) for g in got} == {
        *((f"key-{i}", f"value {i}: with the separator inside") for i in range(20)),
        (None, "no separator here"),
    }
    assert all(g["topic"] == name and g["timestamp"] > 0 for g in got)
    # The partitions and offsets are the broker's: compare with an SDK consumer.
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
        consumer.subscribe(name)
        records: List[cursus.Message] = []
        for _ in range(200):
            records += consumer.poll(0.2)
            if len(records) >= 21:
                break
    expected = {
        (m.partition, m.offset, m.key.decode() if m.key else None, m.payload.decode()) for m in records
    }
    assert {(g["partition"], g["offset"], g["key"], g["value"]) for g in got} == expected
    # Records with one key went to one partition, in order.
    assert len({g["partition"] for g in got if g["key"] == "key-3"}) == 1


def test_produce_to_one_partition_and_consume_text(bootstrap: str, name: str, tmp_path: Path) -> None:
    ok(cli("topics", "create", name, "--partitions", "2", bootstrap=bootstrap))
    source = tmp_path / "records.txt"
    source.write_bytes(b"a=1\nb=2\nc=3")  # no newline after the last line
    ok(
        cli(
            "produce",
            name,
            "--file",
            str(source),
            "-K",
            "=",
            "--partition",
            "1",
            "--acks",
            "1",
            bootstrap=bootstrap,
        )
    )
    out = cli(
        "consume",
        name,
        "--from-beginning",
        "--count",
        "3",
        "--print-key",
        "--key-separator",
        " -> ",
        bootstrap=bootstrap,
    )
    assert ok(out).splitlines() == ["a -> 1", "b -> 2", "c -> 3"]
    assert "consumed 3 records" in out.stderr.decode()
    desc = json.loads(ok(cli("topics", "describe", name, "--format", "json", bootstrap=bootstrap)))
    assert [p["hwm"] for p in desc["partitions"]] == [0, 3]
    missing_file = cli("produce", name, "--file", str(tmp_path / "nope.txt"), bootstrap=bootstrap)
    assert missing_file.returncode == 2
    assert "cannot open" in error_line(missing_file)


def test_consume_non_utf8_as_base64(bootstrap: str, name: str) -> None:
    ok(cli("topics", "create", name, "--partitions", "1", bootstrap=bootstrap))
    ok(cli("produce", name, "-K", "\t", bootstrap=bootstrap, stdin=b"\xff\xfe\t\x80value\ncaf\xc3\xa9\n"))
    got = json_lines(
        ok(cli("consume", name, "--from-beginning", "--count", "2", "--format", "json", bootstrap=bootstrap))
    )
    assert got[0]["key"] is None and got[0]["key_base64"] == "//4="
    assert got[0]["value"] is None and got[0]["value_base64"] == "gHZhbHVl"
    assert (got[1]["key"], got[1]["value"]) == (None, "caf\u00e9")
    assert "value_base64" not in got[1]


def test_consume_group_commits_and_offsets_show_no_lag(bootstrap: str, name: str) -> None:
    ok(cli("topics", "create", name, "--partitions", "2", bootstrap=bootstrap))
    ok(cli("produce", name, bootstrap=bootstrap, stdin=b"".join(b"r%d\n" % i for i in range(10))))
    group = name + "-g"

    before = json.loads(ok(cli("offsets", name, "--format", "json", bootstrap=bootstrap)))
    assert sum(p["latest"] - p["earliest"] for p in before["partitions"]) == 10
    assert "group" not in before

    first = ok(
        cli("consume", name, "--group", group, "--from-beginning", "--count", "10", bootstrap=bootstrap)
    )
    assert sorted(first.splitlines()) == sorted(f"r{i}" for i in range(10))
    again = cli("consume", name, "--group", group, "--from-beginning", "--timeout", "2", bootstrap=bootstrap)
    assert ok(again) == ""
    assert "consumed 0 records" in again.stderr.decode()

    offsets = json.loads(ok(cli("offsets", name, "--group", group, "--format", "json", bootstrap=bootstrap)))
    assert offsets["group"] == group and offsets["lag"] == 0
    assert all(p["committed"] == p["latest"] and p["lag"] == 0 for p in offsets["partitions"])
    assert sum(p["latest"] for p in offsets["partitions"]) == 10
    text = ok(cli("offsets", name, "--group", group, bootstrap=bootstrap))
    assert "COMMITTED" in text and f"total lag of {group}: 0" in text

    # New records are lag until the group reads them.
    ok(cli("produce", name, bootstrap=bootstrap, stdin=b"r10\nr11\n"))
    offsets = json.loads(ok(cli("offsets", name, "--group", group, "--format", "json", bootstrap=bootstrap)))
    assert offsets["lag"] == 2
    assert ok(cli("consume", name, "--group", group, "--count", "2", bootstrap=bootstrap)).split() in (
        ["r10", "r11"],
        ["r11", "r10"],
    )

    missing = cli("offsets", name, "--group", name + "-no-such-group", bootstrap=bootstrap)
    assert missing.returncode == 4
    assert "group_not_found" in error_line(missing)


def test_consume_without_group_commits_nothing(bootstrap: str, name: str) -> None:
    ok(cli("topics", "create", name, "--partitions", "1", bootstrap=bootstrap))
    ok(cli("produce", name, bootstrap=bootstrap, stdin=b"one\ntwo\n"))
    for _ in range(2):  # a fresh throwaway group each time: everything again
        assert ok(cli("consume", name, "--from-beginning", "--count", "2", bootstrap=bootstrap)).split() == [
            "one",
            "two",
        ]
    # Without --from-beginning a new group starts at the end.
    assert ok(cli("consume", name, "--timeout", "1", bootstrap=bootstrap)) == ""


def test_groups_list_and_describe(bootstrap: str, name: str) -> None:
    ok(cli("topics", "create", name, "--partitions", "2", bootstrap=bootstrap))
    ok(cli("produce", name, bootstrap=bootstrap, stdin=b"x\n"))
    group = name + "-g"
    ok(cli("consume", name, "--group", group, "--from-beginning", "--count", "1", bootstrap=bootstrap))
    assert group in ok(cli("groups", "list", bootstrap=bootstrap)).splitlines()
    assert group in json.loads(ok(cli("groups", "list", "--format", "json", bootstrap=bootstrap)))
    status = json.loads(ok(cli("groups", "describe", group, "--format", "json", bootstrap=bootstrap)))
    assert (status["group"], status["topic"], status["partition_count"]) == (group, name, 2)
    assert status["member_count"] == len(status["members"]) == 0  # the consumer left
    text = ok(cli("groups", "describe", group, bootstrap=bootstrap))
    assert f"topic:       {name}" in text
    missing = cli("groups", "describe", name + "-none", bootstrap=bootstrap)
    assert missing.returncode == 4
    assert "group_not_found" in error_line(missing)


def test_consume_ctrl_c_exits_130(bootstrap: str, name: str) -> None:
    ok(cli("topics", "create", name, "--partitions", "1", bootstrap=bootstrap))
    ok(cli("produce", name, bootstrap=bootstrap, stdin=b"first\n"))
    base = {k: v for k, v in os.environ.items() if not k.startswith("CURSUS_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cursus.cli", "-b", bootstrap, "consume", name, "--from-beginning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=base,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"first\n"  # it is in the poll loop now
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr.decode()
    assert "Traceback" not in stderr.decode()
    assert "cursus: error: interrupted" in stderr.decode()


# ------------------------------------------------------------------ errors


def test_unreachable_bootstrap_is_exit_3(name: str) -> None:
    address = f"127.0.0.1:{closed_port()}"
    timeouts = ["--connect-timeout-ms", "1000", "--request-timeout-ms", "1000"]
    for command in (
        ["topics", "list"],
        ["consume", name, "--count", "1"],
        ["produce", name],
        ["stream", "read", name, "k"],
    ):
        result = cli(*command, *timeouts, bootstrap=address, stdin=b"x\n")
        assert result.returncode == 3, (command, result.stderr.decode())
        assert address in error_line(result)
    # The same through the environment.
    result = cli("topics", "list", env={"CURSUS_BOOTSTRAP": address, "CURSUS_CONNECT_TIMEOUT_MS": "1000"})
    assert result.returncode == 3
    assert address in error_line(result)


def test_usage_errors_are_exit_2(bootstrap: str) -> None:
    for args in (
        ["no-such-command"],
        ["topics", "create"],
        ["produce", "t", "--acks", "2"],
        ["consume", "t", "--count", "0"],
        ["consume", "t", "--format", "xml"],
        ["topics"],
        ["topics", "list", "--request-timeout-ms", "soon"],
    ):
        result = cli(*args, bootstrap=bootstrap)
        assert result.returncode == 2, (args, result.stderr.decode())
        assert "cursus" in result.stderr.decode() and "error: " in result.stderr.decode()
        assert "Traceback" not in result.stderr.decode()
    result = cli("topics", "list", env={"CURSUS_REQUEST_TIMEOUT_MS": "soon", "CURSUS_BOOTSTRAP": bootstrap})
    assert result.returncode == 2
    assert "CURSUS_REQUEST_TIMEOUT_MS" in error_line(result)
    result = cli("topics", "list", "--principal", "p", bootstrap=bootstrap)
    assert result.returncode == 2
    assert "principal and a token" in error_line(result)


def test_debug_shows_a_traceback(bootstrap: str, name: str) -> None:
    result = cli("--debug", "topics", "describe", name, bootstrap=bootstrap)
    assert result.returncode == 4
    assert "Traceback" in result.stderr.decode()
    assert (
        result.stderr.decode().rstrip().endswith(f"cursus: error: topic_not_found (not_found): topic={name}")
    )


HELP_COMMANDS: Sequence[Sequence[str]] = (
    (),
    ("topics",),
    ("topics", "list"),
    ("topics", "create"),
    ("topics", "describe"),
    ("topics", "delete"),
    ("produce",),
    ("consume",),
    ("groups",),
    ("groups", "list"),
    ("groups", "describe"),
    ("offsets",),
    ("stream",),
    ("stream", "read"),
    ("stream", "version"),
)


@pytest.mark.parametrize("command", HELP_COMMANDS, ids=lambda c: " ".join(c) or "cursus")
def test_help_of_every_command(command: Sequence[str]) -> None:
    out = ok(cli(*command, "--help"))
    assert out.startswith("usage: cursus")
    assert "--bootstrap" in out and "--tls-ca" in out and "--token" in out
    if command not in ((), ("topics",), ("groups",), ("stream",)):
        examples = out.split("examples:\n", 1)[1]
        assert "cursus " + " ".join(command) in examples.split("\n\n", 1)[0]
        assert "exit codes:" in out and "130" in out


def test_installed_script() -> None:
    # pip installs the console script of the [project.scripts] entry next to
    # the interpreter's other scripts (the venv's bin).
    entry = [
        ep
        for ep in importlib.metadata.distribution("cursus").entry_points
        if ep.group == "console_scripts" and ep.name == "cursus"
    ]
    assert [ep.value for ep in entry] == ["cursus.cli:main"]
    script = Path(sysconfig.get_path("scripts")) / "cursus"
    assert script.exists(), script
    result = subprocess.run([str(script), "--version"], capture_output=True, timeout=TIMEOUT_S)
    assert result.returncode == 0
    assert result.stdout.decode().strip() == f"cursus {cursus.__version__}"


# ------------------------------------------------------------ event streams


def test_stream_read(bootstrap: str, name: str) -> None:
    ok(cli("topics", "create", name, "--partitions", "3", "--event-sourcing", bootstrap=bootstrap))
    with cursus.EventStore(bootstrap_servers=bootstrap) as store:
        store.append(name, "acct-1", 0, '{"amount": 50}', event_type="Deposited", metadata="m1")
        store.append(name, "acct-1", 1, '{"amount": 20}', event_type="Withdrawn", schema_version=2)
        store.append(name, "acct-1", 2, "caf\u00e9", event_type="Renamed")
        store.save_snapshot(name, "acct-1", 2, "30")
        store.append(name, "acct-2", 0, "other", event_type="Deposited")

    text = ok(cli("stream", "read", name, "acct-1", bootstrap=bootstrap))
    assert text.splitlines() == [
        '1\tDeposited\t{"amount": 50}',
        '2\tWithdrawn\t{"amount": 20}',
        "3\tRenamed\tcaf\u00e9",
    ]
    events = json_lines(ok(cli("stream", "read", name, "acct-1", "--format", "json", bootstrap=bootstrap)))
    assert [e["version"] for e in events] == [1, 2, 3]
    first = events[0]
    assert (first["topic"], first["key"], first["event_type"], first["metadata"]) == (
        name,
        "acct-1",
        "Deposited",
        "m1",
    )
    assert json.loads(first["payload"]) == {"amount": 50}
    assert events[1]["schema_version"] == 2 and events[2]["payload"] == "caf\u00e9"
    assert len({e["partition"] for e in events}) == 1 and events[0]["offset"] < events[1]["offset"]

    ranged = json_lines(
        ok(
            cli(
                "stream",
                "read",
                name,
                "acct-1",
                "--from-version",
                "2",
                "--to-version",
                "2",
                "--format",
                "json",
                bootstrap=bootstrap,
            )
        )
    )
    assert [e["version"] for e in ranged] == [2]
    with_snapshot = json_lines(
        ok(cli("stream", "read", name, "acct-1", "--snapshot", "--format", "json", bootstrap=bootstrap))
    )
    assert with_snapshot[0] == {"snapshot": {"version": 2, "state": "30"}}
    assert [e["version"] for e in with_snapshot[1:]] == [3]
    assert ok(cli("stream", "version", name, "acct-1", bootstrap=bootstrap)).strip() == "3"
    assert ok(cli("stream", "read", name, "acct-none", bootstrap=bootstrap)) == ""

    ok(cli("topics", "create", name + "-plain", bootstrap=bootstrap))
    plain = cli("stream", "read", name + "-plain", "acct-1", bootstrap=bootstrap)
    assert plain.returncode == 1
    assert "event_sourcing_not_enabled" in error_line(plain)
    missing = cli("stream", "read", name + "-none", "acct-1", bootstrap=bootstrap)
    assert missing.returncode == 4


# ------------------------------------------------------------ TLS and AUTH


def test_tls_and_token_via_flags_and_environment(secure_broker: SecureBroker, name: str) -> None:
    token = secure_broker.tokens["admin"]
    flags = [
        "--tls-ca",
        secure_broker.file("ca.pem"),
        "--tls-cert",
        secure_broker.file("client.pem"),
        "--tls-key",
        secure_broker.file("client.key"),
        "--tls-server-name",
        "localhost",
        "--principal",
        "admin",
        "--token",
        token,
        "--connect-timeout-ms",
        "30000",
    ]
    addr = secure_broker.tls_bootstrap
    outputs: List[subprocess.CompletedProcess[bytes]] = []
    outputs.append(cli("topics", "create", name, "--partitions", "1", *flags, bootstrap=addr))
    ok(outputs[-1])
    outputs.append(cli("produce", name, "-K", ":", *flags, bootstrap=addr, stdin=b"k:over tls\n"))
    ok(outputs[-1])
    # The same options through the environment (the token from a variable).
    env = {
        "CURSUS_BOOTSTRAP": addr,
        "CURSUS_TLS_CA": secure_broker.file("ca.pem"),
        "CURSUS_TLS_CERT": secure_broker.file("client.pem"),
        "CURSUS_TLS_KEY": secure_broker.file("client.key"),
        "CURSUS_PRINCIPAL": "admin",
        "CURSUS_TOKEN": token,
    }
    outputs.append(cli("consume", name, "--from-beginning", "--count", "1", "--format", "json", env=env))
    got = json_lines(ok(outputs[-1]))
    assert [(g["key"], g["value"]) for g in got] == [("k", "over tls")]
    outputs.append(cli("--debug", "topics", "describe", name, env=env))
    ok(outputs[-1])

    # A wrong token: authentication refused, exit 3, the token not shown.
    wrong = "wrong-" + token
    refused = cli("topics", "list", *flags[:-4], "--token", wrong, env={**env, "CURSUS_BOOTSTRAP": addr})
    outputs.append(refused)
    assert refused.returncode == 3
    assert "authentication_failed" in error_line(refused)
    refused = cli("--debug", "topics", "list", env={**env, "CURSUS_TOKEN": wrong})
    outputs.append(refused)
    assert refused.returncode == 3
    # No client certificate: the handshake is refused, exit 3.
    no_cert = cli(
        "topics", "list", env={k: v for k, v in env.items() if k not in ("CURSUS_TLS_CERT", "CURSUS_TLS_KEY")}
    )
    assert no_cert.returncode == 3
    assert "tls_handshake_failed" in error_line(no_cert)
    # A permission the principal lacks is a failed operation (exit 1).
    reader = {**env, "CURSUS_PRINCIPAL": "reader", "CURSUS_TOKEN": secure_broker.tokens["reader"]}
    denied = cli("topics", "create", name + "-denied", env=reader)
    assert denied.returncode == 1
    assert "NOT_AUTHORIZED_FOR_OPERATION" in error_line(denied)
    for result in outputs:
        assert token.encode() not in result.stdout + result.stderr
        assert wrong.encode() not in result.stdout + result.stderr


def test_token_file(secure_broker: SecureBroker, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(secure_broker.tokens["admin"] + "\n")
    result = cli(
        "topics",
        "list",
        "--tls-ca",
        secure_broker.file("ca.pem"),
        "--tls-cert",
        secure_broker.file("client.pem"),
        "--tls-key",
        secure_broker.file("client.key"),
        "--principal",
        "admin",
        "--token-file",
        str(token_file),
        bootstrap=secure_broker.tls_bootstrap,
    )
    ok(result)
    both = cli(
        "topics", "list", "--principal", "admin", "--token-file", str(token_file), env={"CURSUS_TOKEN": "t"}
    )
    assert both.returncode == 2


# ------------------------------------------------- progress and failed deliveries


def test_progress_then_failed_delivery_is_reported(private_broker: Broker, name: str) -> None:
    bootstrap = private_broker.addr
    ok(cli("topics", "create", name, "--partitions", "1", bootstrap=bootstrap))
    base = {k: v for k, v in os.environ.items() if not k.startswith("CURSUS_")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cursus.cli",
            "-b",
            bootstrap,
            "--request-timeout-ms",
            "500",
            "produce",
            name,
            "--progress",
            "--delivery-timeout-ms",
            "2000",
            "--linger-ms",
            "0",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=base,
    )
    try:
        assert proc.stdin is not None and proc.stderr is not None
        # Lines keep coming until a progress line says some were delivered
        # (one a second at most: a line arriving after the first second).
        progress = b""
        for i in range(100_000):  # hang guard
            proc.stdin.write(b"record %d\n" % i)
            proc.stdin.flush()
            if i % 50 == 0:
                progress = proc.stderr.readline() if _ready(proc.stderr) else b""
                if b" delivered" in progress and b" 0 delivered" not in progress:
                    break
        assert b"records sent" in progress, progress
        # The broker stops answering: what is sent now cannot be delivered.
        private_broker.pause()
        proc.stdin.write(b"lost\n")
        proc.stdin.close()
        stderr = proc.stderr.read().decode()
        proc.wait(timeout=TIMEOUT_S)
    finally:
        private_broker.resume()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("cursus: error: ")]
    assert len(errors) == 1 and " records failed; first failure: " in errors[0], stderr
    assert "produced " in stderr  # the summary comes first


def _ready(stream: Any) -> bool:
    """Whether a line can be read from the pipe without waiting long."""
    readable, _, _ = select.select([stream], [], [], 0.01)
    return bool(readable)


# ----------------------------------------------- the progress bar on a terminal


def cli_on_terminal(
    *args: str, bootstrap: str, stdout_too: bool = False, tmp_path: Path
) -> Tuple[int, str, str]:
    """Runs the CLI with stderr on a pseudo-terminal (stdout too with
    `stdout_too`, else a file); returns (exit code, stdout, what the
    terminal received)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("CURSUS_")}
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))
    out_path = tmp_path / "stdout.txt"
    with open(out_path, "wb") as out_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cursus.cli", "-b", bootstrap, *args],
            stdin=subprocess.DEVNULL,
            stdout=slave if stdout_too else out_file,
            stderr=slave,
            env=base,
        )
    os.close(slave)
    screen = b""
    try:
        while True:  # until the child's end closes the terminal (EIO)
            readable, _, _ = select.select([master], [], [], TIMEOUT_S)
            assert readable, "the command neither wrote nor ended"
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            screen += chunk
        code = proc.wait(timeout=TIMEOUT_S)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, out_path.read_text(), screen.decode()


def bar_lines(screen: str) -> List[str]:
    """The states a bar was drawn in (each starts with a carriage return)."""
    return [part.split("\x1b[K")[0] for part in screen.split("\r") if part.lstrip("\n").startswith("[")]


def test_produce_file_on_a_terminal_shows_a_bar(bootstrap: str, name: str, tmp_path: Path) -> None:
    ok(cli("topics", "create", name, "--partitions", "2", bootstrap=bootstrap))
    records = tmp_path / "records.txt"
    records.write_bytes(b"".join(b"value %05d\n" % i for i in range(3000)))
    code, _, screen = cli_on_terminal("produce", name, "--file", str(records), bootstrap=bootstrap, tmp_path=tmp_path)
    assert code == 0, screen
    bars = bar_lines(screen)
    assert bars, screen
    last = bars[-1]
    # The file's bytes were all read: a full bar, the records, their rate and size.
    assert last.startswith("[" + "#" * 24 + "] 100% 3,000 records sent, "), last
    assert " records/s, 32.2 KiB, 3,000 delivered, 0 failed" in last, last
    assert "produced 3000 of 3000 records" in screen.split(last, 1)[1]


def test_consume_count_on_a_terminal_shows_a_bar(bootstrap: str, name: str, tmp_path: Path) -> None:
    ok(cli("topics", "create", name, "--partitions", "1", bootstrap=bootstrap))
    ok(cli("produce", name, bootstrap=bootstrap, stdin=b"".join(b"r%03d\n" % i for i in range(500))))
    code, out, screen = cli_on_terminal(
        "consume", name, "--from-beginning", "--count", "500", bootstrap=bootstrap, tmp_path=tmp_path
    )
    assert code == 0, screen
    assert out.splitlines() == ["r%03d" % i for i in range(500)]
    last = bar_lines(screen)[-1]
    assert last.startswith("[" + "#" * 24 + "] 100% 500 records consumed, "), last
    assert last.endswith(" records/s, 2.0 KiB"), last
    assert "consumed 500 records" in screen


def test_no_bar_where_it_would_mix_with_the_records(bootstrap: str, name: str, tmp_path: Path) -> None:
    ok(cli("topics", "create", name, "--partitions", "1", bootstrap=bootstrap))
    ok(cli("produce", name, bootstrap=bootstrap, stdin=b"a\nb\n"))
    code, _, screen = cli_on_terminal(
        "consume", name, "--from-beginning", "--count", "2", bootstrap=bootstrap, stdout_too=True, tmp_path=tmp_path
    )
    assert code == 0, screen
    assert bar_lines(screen) == [] and "records/s" not in screen, screen
    assert "a\r\nb\r\n" in screen  # the records, on the terminal (its newline is CR LF)


def test_quiet_on_a_terminal_shows_nothing(bootstrap: str, name: str, tmp_path: Path) -> None:
    ok(cli("topics", "create", name, "--partitions", "1", bootstrap=bootstrap))
    records = tmp_path / "records.txt"
    records.write_bytes(b"x\n" * 10)
    code, _, screen = cli_on_terminal(
        "produce", name, "--file", str(records), "--quiet", bootstrap=bootstrap, tmp_path=tmp_path
    )
    assert (code, screen) == (0, "")


def test_no_progress_when_stderr_is_not_a_terminal(bootstrap: str, name: str, tmp_path: Path) -> None:
    ok(cli("topics", "create", name, "--partitions", "1", bootstrap=bootstrap))
    records = tmp_path / "records.txt"
    records.write_bytes(b"".join(b"v%d\n" % i for i in range(1000)))
    produced = cli("produce", name, "--file", str(records), bootstrap=bootstrap)
    consumed = cli("consume", name, "--from-beginning", "--count", "1000", bootstrap=bootstrap)
    ok(produced)
    assert len(ok(consumed).splitlines()) == 1000
    # stderr is a pipe: the summary line alone.
    lines = produced.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cursus: produced 1000 of 1000 records"), lines
    assert consumed.stderr.decode().splitlines() == [f"cursus: consumed 1000 records from {name}"]
