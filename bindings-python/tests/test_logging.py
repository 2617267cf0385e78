from __future__ import annotations

import logging

import pytest

import cursus


def test_engine_logs_reach_python_logging(
    bootstrap: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="cursus")
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
        consumer.subscribe(name)
        consumer.poll(0.1)  # joins the group; the engine logs it
    records = [r for r in caplog.records if r.name.startswith("cursus")]
    assert any("joined group" in r.getMessage() for r in records), records


EXIT_WHILE_LOGGING = """
import logging, sys, cursus
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
bootstrap, topic = sys.argv[1], sys.argv[2]
admin = cursus.AdminClient(bootstrap_servers=bootstrap)
admin.create_topic(topic, partitions=4, auth_policy="deny_read")
producer = cursus.Producer(bootstrap_servers=bootstrap, linger_ms=1)
for i in range(200):
    producer.send(topic, b"x", key=str(i))
consumer = cursus.Consumer(bootstrap_servers=bootstrap, group_id=topic, heartbeat_interval_ms=1)
consumer.subscribe(topic)
try:
    consumer.poll(1.0)  # fails: the topic denies reads; fetchers keep logging
except cursus.AuthorizationError:
    pass
# Exit with every handle open: engine threads are still logging (and taking
# the GIL to do so) while the interpreter shuts down.
"""


def test_interpreter_exit_while_engine_threads_log(bootstrap: str, name: str) -> None:
    # Before the exit hook waited for engine threads, one of them could be
    # blocked on the GIL when finalization began; Python then ends such a
    # thread with pthread_exit, and the process aborted (SIGABRT).
    import subprocess
    import sys

    for attempt in range(10):
        proc = subprocess.run(
            [sys.executable, "-c", EXIT_WHILE_LOGGING, bootstrap, f"{name}-{attempt}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
