"""The language edge: callbacks off the engine's threads, close and wakeup
interrupting a poll, delivery accounting, fork, errors and options."""

from __future__ import annotations

import multiprocessing
import os
import re
import threading
from pathlib import Path
from typing import List, Optional

import pytest

import cursus

HANG_GUARD = 30.0  # seconds; only against a hang, never a timing assertion


def _topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=partitions)


def test_a_delivery_callback_may_send_and_flush_on_its_own_producer(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    done = threading.Event()
    seen: List[object] = []
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:

        def on_delivery(error: Optional[cursus.CursusError], md: Optional[cursus.RecordMetadata]) -> None:
            try:
                seen.append(threading.current_thread().name)
                seen.append(producer.send_and_wait(name, b"inner").offset)
                producer.flush(timeout=10)
                seen.append("flushed")
            except BaseException as e:  # recorded, asserted below
                seen.append(e)
            finally:
                done.set()

        producer.send(name, b"outer", on_delivery=on_delivery)
        assert done.wait(HANG_GUARD)
    assert seen[1:] == [1, "flushed"], seen


def test_a_blocked_callback_does_not_hold_up_another_producer(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    entered = threading.Event()
    release = threading.Event()
    other_ran = threading.Event()
    slow = cursus.Producer(bootstrap_servers=bootstrap)
    fast = cursus.Producer(bootstrap_servers=bootstrap)
    try:
        slow.send(name, b"a", on_delivery=lambda e, md: (entered.set(), release.wait(HANG_GUARD)))
        assert entered.wait(HANG_GUARD)
        fast.send(name, b"b", on_delivery=lambda e, md: other_ran.set())
        # Runs while the first producer's callback is still blocked.
        assert other_ran.wait(HANG_GUARD)
        assert not release.is_set()
    finally:
        release.set()
        slow.close()
        fast.close()


def test_close_from_another_thread_interrupts_a_blocked_poll(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    consumer = cursus.Consumer(bootstrap_servers=bootstrap, group_id=name)
    consumer.subscribe(name)
    outcome: List[object] = []
    started = threading.Event()

    def poll() -> None:
        started.set()
        try:
            outcome.append(consumer.poll(timeout=None))
        except BaseException as e:  # recorded, asserted below
            outcome.append(e)

    t = threading.Thread(target=poll)
    t.start()
    assert started.wait(HANG_GUARD)
    consumer.close()
    t.join(HANG_GUARD)
    assert not t.is_alive(), "poll(timeout=None) kept blocking after close()"
    assert len(outcome) == 1 and isinstance(outcome[0], cursus.ClosedError), outcome


def test_wakeup_makes_a_blocked_poll_return_empty(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
        consumer.subscribe(name)
        outcome: List[object] = []
        t = threading.Thread(target=lambda: outcome.append(consumer.poll(timeout=None)))
        t.start()
        consumer.wakeup()
        t.join(HANG_GUARD)
        assert not t.is_alive(), "poll(timeout=None) kept blocking after wakeup()"
        assert outcome == [[]]


def test_auto_commit_and_close_commit_only_the_records_taken(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(10):
            producer.send(name, f"v{i}".encode())
    options = dict(bootstrap_servers=bootstrap, group_id=name, enable_auto_commit=True, max_poll_records=10)
    first = cursus.Consumer(**options)
    first.subscribe(name)
    taken: List[int] = []
    while len(taken) < 3:
        taken += [m.offset for m in first.poll(timeout=10, max_records=3 - len(taken))]
    assert taken == [0, 1, 2]
    first.close()
    with cursus.Consumer(**options) as second:
        second.subscribe(name)
        rest: List[int] = []
        while len(rest) < 7:
            batch = second.poll(timeout=10)
            assert batch, "the other 7 records never came"
            rest += [m.offset for m in batch]
        assert rest == list(range(3, 10))


def _child_uses_its_own_clients(bootstrap: str, name: str, parent: cursus.Producer, result: "multiprocessing.Queue[str]") -> None:
    try:
        try:
            parent.send_and_wait(name, b"from the parent's producer")
            result.put("the parent's producer worked in the child")
            return
        except cursus.ClosedError as e:
            if e.code != "used_after_fork":
                result.put(f"wrong error for the parent's producer: {e}")
                return
        with cursus.Producer(bootstrap_servers=bootstrap) as producer:
            producer.send_and_wait(name, b"child")
        with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name + "-child") as consumer:
            consumer.subscribe(name)
            values: List[bytes] = []
            while b"child" not in values:
                batch = consumer.poll(timeout=10)
                if not batch:
                    result.put("the child consumed nothing")
                    return
                values += [m.value for m in batch]
        result.put("ok")
    except BaseException as e:  # reported to the parent
        result.put(f"child failed: {e!r}")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_creates_and_uses_its_own_clients(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    parent = cursus.Producer(bootstrap_servers=bootstrap)
    parent.send_and_wait(name, b"before fork")
    ctx = multiprocessing.get_context("fork")
    result: "multiprocessing.Queue[str]" = ctx.Queue()
    child = ctx.Process(target=_child_uses_its_own_clients, args=(bootstrap, name, parent, result))
    child.start()
    child.join(HANG_GUARD * 2)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung")
    assert result.get(timeout=HANG_GUARD) == "ok"
    assert parent.send_and_wait(name, b"after fork").offset == 2
    parent.close()


@pytest.mark.parametrize("value", [True, {}, 1.5, [5]])
def test_wrong_value_types_are_type_errors(value: object) -> None:
    with pytest.raises(TypeError, match="option linger_ms: expected an int"):
        cursus.Producer(bootstrap_servers="127.0.0.1:1", linger_ms=value)


def test_text_values_are_checked_by_the_engine() -> None:
    with pytest.raises(cursus.ValidationError, match="linger_ms"):
        cursus.Producer(bootstrap_servers="127.0.0.1:1", linger_ms="soon")


def test_each_option_type_is_checked(bootstrap: str, name: str) -> None:
    with pytest.raises(TypeError, match="enable_auto_commit: expected a bool"):
        cursus.Consumer(bootstrap_servers="127.0.0.1:1", group_id="g", enable_auto_commit=1)
    with pytest.raises(TypeError, match="bootstrap_servers: expected a str or a list of str"):
        cursus.AdminClient(bootstrap_servers=["127.0.0.1:1", 2])
    with cursus.AdminClient(bootstrap_servers=[bootstrap]) as admin:
        with pytest.raises(TypeError, match=r"topic option partitions: expected an int \(or its text\), got bool"):
            admin.create_topic(name, partitions=True)
        with pytest.raises(TypeError, match="unexpected keyword argument 'partition'"):
            admin.create_topic(name, partition=3)
        assert admin.create_topic(name, partitions=2, read_acl=["a", "b"]).read_acl == ["a", "b"]


def test_an_unknown_option_names_the_kind_and_its_options() -> None:
    with pytest.raises(cursus.ValidationError) as info:
        cursus.Producer(bootstrap_servers="127.0.0.1:1", group_id="g")
    text = str(info.value)
    assert text.startswith('invalid_argument (validation): unknown producer option "group_id"; known options: acks, ')
    assert "linger_ms" in text and "group_id," not in text


def test_exceptions_have_public_names() -> None:
    assert cursus.AvailabilityError.__module__ == "cursus"
    assert repr(cursus.NotFoundError("x")).startswith("NotFoundError(")
    assert f"{cursus.TimeoutError.__module__}.{cursus.TimeoutError.__qualname__}" == "cursus.TimeoutError"


def test_an_error_reads_the_same_as_in_every_language(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        with pytest.raises(cursus.NotFoundError) as info:
            admin.describe_topic(name)
    assert str(info.value) == f"topic_not_found (not_found): topic={name}"
    assert info.value.fields == {"topic": name}


def test_the_version_is_the_workspace_version() -> None:
    cargo = (Path(__file__).resolve().parents[2] / "Cargo.toml").read_text()
    workspace = re.search(r'\[workspace\.package\][^\[]*?\nversion = "([^"]+)"', cargo)
    assert workspace is not None
    assert cursus.__version__ == workspace.group(1)
