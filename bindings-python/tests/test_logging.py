from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path
from typing import List

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
    assert cursus._cursus._flush_logs(30.0)  # the log thread hands records over
    records = [r for r in caplog.records if r.name.startswith("cursus")]
    assert any("joined group" in r.getMessage() for r in records), records


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads thread names from /proc")
def test_engine_logs_are_handed_to_python_on_the_log_thread(bootstrap: str, name: str) -> None:
    # The engine logs on its I/O threads; handing a record to `logging`
    # takes the GIL, so that happens on the log thread, never on them.
    threads: List[str] = []

    class ThreadOfEmit(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            tid = threading.get_native_id()
            threads.append(Path(f"/proc/self/task/{tid}/comm").read_text().strip())

    handler = ThreadOfEmit(level=logging.DEBUG)
    logger = logging.getLogger("cursus")
    old_level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
            admin.create_topic(name, partitions=1)
        with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
            consumer.subscribe(name)
            consumer.poll(0.1)  # joins the group; an I/O thread logs it
        assert cursus._cursus._flush_logs(30.0)  # the log thread hands records over
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    assert threads and set(threads) == {"cursus-log"}, threads


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
