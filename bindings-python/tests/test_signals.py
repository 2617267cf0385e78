"""Ctrl-C interrupts a blocking call (poll, flush, a send waiting for buffer
space, a request waiting for its reply): the GIL is released and signals are
checked between waits of at most 100 ms."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest

import cursus

from conftest import Broker


def run_until_ready_then_interrupt(script: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", line
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)  # hang guard only
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("the blocking call ignored Ctrl-C")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_ctrl_c_interrupts_a_blocking_poll(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    done = run_until_ready_then_interrupt(f"""
        import cursus
        c = cursus.Consumer(bootstrap_servers={bootstrap!r}, group_id={name!r})
        c.subscribe({name!r})
        c.poll(0.1)
        import threading, time
        def announce():
            # Runs while the main thread is blocked in poll(): the GIL is free.
            time.sleep(0.3)
            print("ready", flush=True)
        threading.Thread(target=announce, daemon=True).start()
        try:
            c.poll()  # no limit, nothing to read
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            raise
    """)
    assert "KeyboardInterrupt" in done.stderr
    assert "interrupted" in done.stdout
    assert done.returncode != 0


# Calls that block while the broker is paused (SIGSTOP): each must give way
# to Ctrl-C. `p` is a producer, `a` an admin client, `s` an event store,
# all connected first; `t1` a transactional producer with its session, `t2`
# one with an open transaction; ES the event-sourcing topic.
PAUSED_CALLS = {
    "begin_transaction": "t1.begin_transaction()",
    # END_TXN never answered (an unknown outcome is retried).
    "commit_transaction": "t2.commit_transaction()",
    # Never acknowledged.
    "flush": 'p.send(NAME, b"stuck")\n    p.flush(timeout=None)',
    # buffer_memory holds one record: the second send waits for space
    # (max_block_ms: 10 minutes).
    "send": 'p.send(NAME, b"a" * 1500)\n    p.send(NAME, b"b" * 1500)',
    "send_and_wait": 'p.send_and_wait(NAME, b"never acknowledged")',
    # A request without a reply (request_timeout_ms: 10 minutes).
    "admin": "a.list_topics()",
    "event_store_append": 's.append(ES, "k", 0, "never acknowledged")',
    # A paged read: the first page is read at the call.
    "event_store_read_stream": 's.read_stream(ES, "k")',
    "event_store_replay_proof": 's.replay_proof(ES, "k")',
    # TXN_APPEND_STREAM inside t2's open transaction, never answered.
    "append_stream": 't2.append_stream(ES, "k", 0, "never acknowledged")',
}


@pytest.mark.parametrize("call", sorted(PAUSED_CALLS))
def test_ctrl_c_interrupts_a_call_waiting_for_the_broker(private_broker: Broker, name: str, call: str) -> None:
    with cursus.AdminClient(bootstrap_servers=private_broker.addr) as admin:
        admin.create_topic(name, partitions=1)
        admin.create_topic(name + "-es", partitions=1, event_sourcing=True)
    script = f"""
import sys, threading, time, cursus
NAME = {name!r}
ES = NAME + "-es"
p = cursus.Producer(bootstrap_servers={private_broker.addr!r}, buffer_memory=2048,
                    max_block_ms=600000, request_timeout_ms=600000, retries=0)
a = cursus.AdminClient(bootstrap_servers={private_broker.addr!r}, request_timeout_ms=600000, retries=0)
p.send_and_wait(NAME, b"warm")
a.list_topics()
s = cursus.EventStore(bootstrap_servers={private_broker.addr!r}, request_timeout_ms=600000, retries=0)
s.stream_version(ES, "k")
t1, t2 = (cursus.Producer(bootstrap_servers={private_broker.addr!r}, transactional_id=NAME + t,
                          request_timeout_ms=600000, retries=0) for t in ("-t1", "-t2"))
t1.init_transactions()
t2.init_transactions()
t2.begin_transaction()
t2.send_and_wait(NAME, b"open")
print("connected", flush=True)
sys.stdin.readline()
def announce():
    time.sleep(0.3)
    print("ready", flush=True)
threading.Thread(target=announce, daemon=True).start()
try:
    {PAUSED_CALLS[call]}
    print("returned", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    raise
"""
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        assert proc.stdout.readline().strip() == "connected"
        private_broker.pause()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)  # hang guard only
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(f"{call} ignored Ctrl-C")
    finally:
        private_broker.resume()
    assert "interrupted" in out, (out, err)
    assert "KeyboardInterrupt" in err
