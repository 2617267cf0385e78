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
