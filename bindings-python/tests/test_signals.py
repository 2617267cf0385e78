"""Ctrl-C interrupts a blocking poll or flush (the GIL is released and
signals are checked between short waits)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

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


def test_ctrl_c_interrupts_a_blocking_flush(private_broker: Broker, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=private_broker.addr) as admin:
        admin.create_topic(name, partitions=1)
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, cursus
            p = cursus.Producer(bootstrap_servers={private_broker.addr!r})
            p.send_and_wait({name!r}, b"warm")
            print("connected", flush=True)
            sys.stdin.readline()
            p.send({name!r}, b"stuck")
            import threading, time
            def announce():
                time.sleep(0.3)
                print("ready", flush=True)
            threading.Thread(target=announce, daemon=True).start()
            try:
                p.flush()  # the broker is paused: never acknowledged
            except KeyboardInterrupt:
                print("interrupted", flush=True)
                raise
        """)],
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
            raise AssertionError("flush ignored Ctrl-C")
    finally:
        private_broker.resume()
    assert "interrupted" in out
    assert "KeyboardInterrupt" in err
