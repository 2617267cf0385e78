from __future__ import annotations

import os
import time

import pytest

import cursus


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_use_after_fork_raises_instead_of_hanging(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    producer = cursus.Producer(bootstrap_servers=bootstrap)
    producer.send_and_wait(name, b"parent")
    pid = os.fork()
    if pid == 0:  # child: must get an error, never hang
        status = 1
        try:
            producer.send(name, b"child")
        except cursus.CursusError as e:
            status = 0 if e.code == "used_after_fork" else 2
        except BaseException:
            status = 3
        os._exit(status)
    deadline = time.monotonic() + 60  # hang guard only
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("child hung using a producer created before fork()")
        time.sleep(0.05)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    # The parent's producer still works.
    assert producer.send_and_wait(name, b"parent again").offset == 1
    producer.close()


def _wait_child(pid: int) -> int:
    deadline = time.monotonic() + 60  # hang guard only
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.WIFEXITED(status)
            return os.WEXITSTATUS(status)
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("child hung")
        time.sleep(0.05)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_send_paths_after_fork(bootstrap: str, name: str) -> None:
    # `send` skips the engine's pid check until a fork() (issue #20): in the
    # child, the parent's producer still refuses both send paths, and a
    # producer made in the child sends through the child's own engine.
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    producer = cursus.Producer(bootstrap_servers=bootstrap)
    assert producer.send(name, b"parent").result(timeout=30).offset == 0
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            for with_callback in (False, True):
                try:
                    if with_callback:
                        producer.send(name, b"child", on_delivery=lambda err, md: None)
                    else:
                        producer.send(name, b"child")
                    os._exit(2)
                except cursus.CursusError as e:
                    if e.code != "used_after_fork":
                        os._exit(3)
            with cursus.Producer(bootstrap_servers=bootstrap) as own:
                if own.send(name, b"child's own").result(timeout=30).offset == 1:
                    status = 0
        except BaseException:
            status = 4
        os._exit(status)
    assert _wait_child(pid) == 0
    assert producer.send(name, b"parent again").result(timeout=30).offset == 2
    producer.close()
