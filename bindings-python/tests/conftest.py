"""Fixtures: a real `cursus-broker` on a free port with a fresh data dir, and
a secure one (TLS, mutual TLS, token authentication) with a test PKI made at
test time by `cursus-test-pki`."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Union

import pytest

import cursus

REPO = Path(__file__).resolve().parents[2]

# A client option's value (as `cursus.ConfigValue`).
Option = Union[str, int, bool, List[str], None]


def broker_binary() -> str:
    explicit = os.environ.get("CURSUS_BROKER_BIN")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    path = target / "debug" / "cursus-broker"
    if not path.exists():
        subprocess.run(["cargo", "build", "-p", "cursus-broker"], cwd=REPO, check=True)
    return str(path)


def pki_binary() -> str:
    """`cursus-test-pki` (CURSUS_TEST_PKI_BIN, which build.mk sets; else
    built next to the broker)."""
    explicit = os.environ.get("CURSUS_TEST_PKI_BIN")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    path = target / "debug" / "cursus-test-pki"
    if not path.exists():
        subprocess.run(
            ["cargo", "build", "-p", "cursus-testkit", "--bin", "cursus-test-pki"], cwd=REPO, check=True
        )
    return str(path)


class Broker:
    """A running broker process; `addr` is its client address (`tls_addr`
    that of its TLS listener, when it has one)."""

    def __init__(self, *extra_args: str, listen: str = "127.0.0.1:0") -> None:
        """`extra_args`: more command-line options of the broker; `listen`:
        its plain listener (`off`: none, `addr` is then `off`)."""
        self.data_dir = tempfile.mkdtemp(prefix="cursus-py-")
        self.proc = subprocess.Popen(
            [
                broker_binary(),
                "--listen",
                listen,
                "--health-listen",
                "127.0.0.1:0",
                "--data-dir",
                self.data_dir,
                *extra_args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "RUST_LOG": "warn"},
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        fields = dict(p.split("=", 1) for p in line.split() if "=" in p)
        if "addr" not in fields:
            self.stop()
            raise RuntimeError(f"broker did not start: {line!r}")
        self.addr: str = fields["addr"]
        self.tls_addr: Optional[str] = fields.get("tls_addr")

    def pause(self) -> None:
        """Stops the broker (SIGSTOP) and returns once every one of its
        threads is stopped: a loaded machine may let a woken thread answer
        one more request first."""
        self.proc.send_signal(signal.SIGSTOP)
        tasks = f"/proc/{self.proc.pid}/task"
        states: list[str] = []
        for _ in range(5000):  # hang guard: 5 s
            states = []
            for tid in os.listdir(tasks):
                try:
                    with open(f"{tasks}/{tid}/stat") as f:
                        states.append(f.read().rsplit(")", 1)[1].split()[0])
                except FileNotFoundError:
                    pass
            if states and all(state in ("T", "t") for state in states):
                return
            time.sleep(0.001)
        raise AssertionError(f"the broker did not stop: {states}")

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)


class SecureBroker(Broker):
    """A broker with a TLS listener only, mutual TLS and token
    authentication (`enable_sasl`), configured by a TOML file in its own
    temporary directory, next to the test PKI (`pki/`: ca.pem,
    server.pem/.key, client.pem/.key, other-ca.pem, ...) made for it.

    TLS only (`listen = off`), like the conformance harness's secure
    broker: every address it hands out is a TLS one. Tests of a plain port
    use the plain `broker` fixture."""

    # principal -> permissions; tokens are made per broker (`tokens`).
    USERS: Dict[str, List[str]] = {
        "admin": ["*"],
        "reader": ["topic.read"],
    }

    def __init__(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="cursus-py-secure-"))
        try:
            self.pki = self.work / "pki"
            subprocess.run([pki_binary(), str(self.pki)], check=True, stdout=subprocess.DEVNULL)
            self.tokens: Dict[str, str] = {p: f"{p}-{uuid.uuid4().hex}" for p in self.USERS}
            lines = [
                'tls_listen = "127.0.0.1:0"',
                f'tls_cert_file = "{self.pki / "server.pem"}"',
                f'tls_key_file = "{self.pki / "server.key"}"',
                f'tls_client_ca_file = "{self.pki / "ca.pem"}"',
                "enable_sasl = true",
            ]
            for principal, permissions in self.USERS.items():
                perms = ", ".join(f'"{p}"' for p in permissions)
                lines += [
                    "",
                    "[[users]]",
                    f'principal = "{principal}"',
                    f'token = "{self.tokens[principal]}"',
                    f"permissions = [{perms}]",
                ]
            config = self.work / "broker.toml"
            config.write_text("\n".join(lines) + "\n")
            super().__init__("--config", str(config), listen="off")
        except BaseException:
            shutil.rmtree(self.work, ignore_errors=True)
            raise
        if self.tls_addr is None:
            self.stop()
            raise RuntimeError("the secure broker has no TLS listener (no tls_addr= in its banner)")
        self.tls_bootstrap: str = self.tls_addr

    def file(self, name: str) -> str:
        """The path of a PKI file (`ca.pem`, `client.key`, ...)."""
        return str(self.pki / name)

    def options(
        self, principal: str = "admin", *, client_certificate: bool = True, **overrides: Option
    ) -> Dict[str, Option]:
        """Client options for the TLS listener: the CA, the client
        certificate (unless `client_certificate=False`) and `principal` with
        its token; `overrides` replace or add options (`None` removes one)."""
        options: Dict[str, Option] = {
            "bootstrap_servers": self.tls_bootstrap,
            "tls": True,
            "tls_ca_file": self.file("ca.pem"),
            "principal": principal,
            "token": self.tokens.get(principal, "no-such-token"),
        }
        if client_certificate:
            options["tls_cert_file"] = self.file("client.pem")
            options["tls_key_file"] = self.file("client.key")
        options.update(overrides)
        return {k: v for k, v in options.items() if v is not None}

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.work, ignore_errors=True)


@pytest.fixture(scope="session")
def secure_broker() -> Iterator[SecureBroker]:
    """One secure broker for the session (tests use unique names)."""
    b = SecureBroker()
    yield b
    b.stop()


@pytest.fixture(scope="session")
def broker() -> Iterator[Broker]:
    """One broker for the session; tests use unique topic and group names."""
    b = Broker()
    yield b
    b.stop()


@pytest.fixture
def private_broker() -> Iterator[Broker]:
    """A broker of the test's own (for tests that pause or kill it)."""
    b = Broker()
    yield b
    b.stop()


@pytest.fixture
def bootstrap(broker: Broker) -> str:
    return broker.addr


@pytest.fixture
def name() -> str:
    """A unique topic / group name."""
    return "py-" + uuid.uuid4().hex[:12]


def consume(consumer: cursus.Consumer, count: int, rounds: int = 200) -> List[cursus.Message]:
    """Polls until `count` records arrived or `rounds` polls of 0.2 s passed."""
    got: List[cursus.Message] = []
    for _ in range(rounds):
        got.extend(consumer.poll(0.2))
        if len(got) >= count:
            break
    return got
