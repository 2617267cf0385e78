"""Fixtures: a real `cursus-broker` on a free port with a fresh data dir."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]


def broker_binary() -> str:
    explicit = os.environ.get("CURSUS_BROKER_BIN")
    if explicit:
        return explicit
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    path = target / "debug" / "cursus-broker"
    if not path.exists():
        subprocess.run(["cargo", "build", "-p", "cursus-broker"], cwd=REPO, check=True)
    return str(path)


class Broker:
    """A running broker process; `addr` is its client address."""

    def __init__(self, *extra_args: str) -> None:
        """`extra_args`: more command-line options of the broker."""
        self.data_dir = tempfile.mkdtemp(prefix="cursus-py-")
        self.proc = subprocess.Popen(
            [
                broker_binary(),
                "--listen",
                "127.0.0.1:0",
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
