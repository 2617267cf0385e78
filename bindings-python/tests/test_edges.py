"""The language edge: callbacks off the engine's threads, close and wakeup
interrupting a poll, delivery accounting, fork, errors and options."""

from __future__ import annotations

import _thread
import multiprocessing
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

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
    caller = threading.get_ident()
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:

        def on_delivery(error: Optional[cursus.CursusError], md: Optional[cursus.RecordMetadata]) -> None:
            try:
                seen.append(threading.get_ident() != caller)
                seen.append(producer.send_and_wait(name, b"inner").offset)
                producer.flush(timeout=10)
                seen.append("flushed")
            except BaseException as e:  # recorded, asserted below
                seen.append(e)
            finally:
                done.set()

        producer.send(name, b"outer", on_delivery=on_delivery)
        assert done.wait(HANG_GUARD)
    # Off the caller's thread; the inner record went after the outer one.
    assert seen == [True, 1, "flushed"], seen


def test_a_blocked_callback_does_not_hold_up_another_producer(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    entered = threading.Event()
    other_ran = threading.Event()
    waited: List[bool] = []
    slow = cursus.Producer(bootstrap_servers=bootstrap)
    fast = cursus.Producer(bootstrap_servers=bootstrap)
    try:

        def blocks_until_the_other_ran(e: Optional[cursus.CursusError], md: Optional[cursus.RecordMetadata]) -> None:
            entered.set()
            # Returns True only if the other producer's callback ran while
            # this one was blocked; the timeout is a hang guard.
            waited.append(other_ran.wait(HANG_GUARD))

        slow.send(name, b"a", on_delivery=blocks_until_the_other_ran)
        assert entered.wait(HANG_GUARD)
        fast.send(name, b"b", on_delivery=lambda e, md: other_ran.set())
        slow.flush(timeout=HANG_GUARD * 2)  # returns once the first callback has
        assert waited == [True]
    finally:
        other_ran.set()
        slow.close()
        fast.close()


def _wait_until_polling(bootstrap: str, group: str) -> None:
    """Returns once the group has a member: the consumer joins inside its
    first poll, so that poll is then in progress (and, with nothing to
    read, stays blocked). The broker offers no event to wait on, so this
    asks it again every 20 ms, within a hang guard."""
    deadline = time.monotonic() + HANG_GUARD
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        while True:
            try:
                if admin.group_status(group).member_count >= 1:
                    return
            except cursus.NotFoundError:
                pass  # the group does not exist before the first join
            assert time.monotonic() < deadline, "the consumer never joined its group"
            time.sleep(0.02)


def test_close_from_another_thread_interrupts_a_blocked_poll(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    consumer = cursus.Consumer(bootstrap_servers=bootstrap, group_id=name)
    consumer.subscribe(name)
    outcome: List[object] = []

    def poll() -> None:
        try:
            outcome.append(consumer.poll(timeout=None))
        except BaseException as e:  # recorded, asserted below
            outcome.append(e)

    t = threading.Thread(target=poll)
    t.start()
    _wait_until_polling(bootstrap, name)
    consumer.close()
    t.join(HANG_GUARD)
    assert not t.is_alive(), "poll(timeout=None) kept blocking after close()"
    assert len(outcome) == 1 and isinstance(outcome[0], cursus.ClosedError), outcome
    assert outcome[0].code == "closed"


def test_wakeup_makes_a_blocked_poll_return_empty(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
        consumer.subscribe(name)
        outcome: List[object] = []
        t = threading.Thread(target=lambda: outcome.append(consumer.poll(timeout=None)))
        t.start()
        _wait_until_polling(bootstrap, name)
        consumer.wakeup()
        t.join(HANG_GUARD)
        assert not t.is_alive(), "poll(timeout=None) kept blocking after wakeup()"
        assert outcome == [[]]
        # A wakeup with no poll in progress ends the next one at once.
        consumer.wakeup()
        assert consumer.poll(timeout=None) == []


def _poll_reaches_deadline(consumer: cursus.Consumer, timeout: float) -> bool:
    """One poll that returned nothing: whether it waited its whole timeout
    (a lower bound on a wait, not a timing assertion)."""
    start = time.monotonic()
    assert consumer.poll(timeout) == []
    return time.monotonic() - start >= timeout


def test_poll_returns_only_with_records_at_its_deadline_or_when_woken(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name, partitions=2)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name, heartbeat_interval_ms=500) as c1:
        c1.subscribe(name)
        assert _poll_reaches_deadline(c1, 0.2)  # joins; nothing to read
        # A wakeup ends one poll, and only one.
        c1.wakeup()
        assert not _poll_reaches_deadline(c1, HANG_GUARD)
        assert _poll_reaches_deadline(c1, 0.3)
        # A second member joins: c1's heartbeat notices the rebalance while
        # c1 polls; the poll rejoins and waits on to its deadline.
        with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name, heartbeat_interval_ms=500) as c2:
            c2.subscribe(name)
            c2.poll(0)
            assert _poll_reaches_deadline(c1, 2.0), "a poll across a rebalance returned [] early"
            assert len(c1.assignment()) == 1


def test_an_interrupted_poll_takes_no_record(bootstrap: str, name: str) -> None:
    # Ctrl-C drops the engine poll while it waits, when it has taken none:
    # the records sent afterwards all reach the next polls, from offset 0.
    _topic(bootstrap, name)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
        consumer.subscribe(name)
        consumer.poll(0.1)
        interrupted = threading.Event()

        def interrupt() -> None:
            time.sleep(0.2)  # lets the poll block; correct either way
            interrupted.set()
            _thread.interrupt_main()  # as Ctrl-C does

        threading.Thread(target=interrupt, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            consumer.poll(timeout=HANG_GUARD)
        assert interrupted.is_set()
        with cursus.Producer(bootstrap_servers=bootstrap) as producer:
            for i in range(3):
                producer.send_and_wait(name, b"%d" % i)
        assert _take(consumer, 3) == [0, 1, 2]


def _take(consumer: cursus.Consumer, count: int, max_records: Optional[int] = None) -> List[int]:
    """Offsets of the next `count` records (each poll asks for at most
    `max_records` of the ones still wanted), within a hang guard."""
    deadline = time.monotonic() + HANG_GUARD
    offsets: List[int] = []
    while len(offsets) < count and time.monotonic() < deadline:
        wanted = None if max_records is None else min(max_records, count - len(offsets))
        offsets += [m.offset for m in consumer.poll(timeout=1.0, max_records=wanted)]
    return offsets


def test_auto_commit_and_close_commit_only_the_records_taken(bootstrap: str, name: str) -> None:
    _topic(bootstrap, name)
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(10):
            producer.send(name, f"v{i}".encode())
    options: Dict[str, Any] = dict(bootstrap_servers=bootstrap, group_id=name, enable_auto_commit=True,
                                   max_poll_records=10, auto_offset_reset="earliest")
    first = cursus.Consumer(**options)
    first.subscribe(name)
    # The engine fetches all 10 (max_poll_records=10) but only 3 are taken.
    assert _take(first, 3, max_records=3) == [0, 1, 2]
    first.close()
    with cursus.Consumer(**options) as second:
        second.subscribe(name)
        # Exactly the other 7: a commit of all 10 would leave nothing here,
        # a commit of fewer than 3 would start before offset 3.
        assert _take(second, 7) == list(range(3, 10))


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
        cursus.Producer(bootstrap_servers="127.0.0.1:1", linger_ms=value)  # type: ignore[call-overload]


def test_text_values_are_checked_by_the_engine() -> None:
    with pytest.raises(cursus.ValidationError, match="linger_ms"):
        cursus.Producer(bootstrap_servers="127.0.0.1:1", linger_ms="soon")


def test_each_option_type_is_checked(bootstrap: str, name: str) -> None:
    with pytest.raises(TypeError, match="enable_auto_commit: expected a bool"):
        cursus.Consumer(bootstrap_servers="127.0.0.1:1", group_id="g", enable_auto_commit=1)
    with pytest.raises(TypeError, match="bootstrap_servers: expected a str or a list of str"):
        cursus.AdminClient(bootstrap_servers=["127.0.0.1:1", 2])  # type: ignore[list-item]
    with cursus.AdminClient(bootstrap_servers=[bootstrap]) as admin:
        with pytest.raises(TypeError, match=r"topic option partitions: expected an int \(or its text\), got bool"):
            admin.create_topic(name, partitions=True)
        with pytest.raises(TypeError, match="unexpected keyword argument 'partition'"):
            admin.create_topic(name, partition=3)  # type: ignore[call-arg]
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
