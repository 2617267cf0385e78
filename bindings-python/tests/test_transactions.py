"""Transactions of the synchronous API against the real broker
(docs/transactions.md): what read_committed and read_uncommitted consumers
see, consume-process-produce, zombie fencing and the context manager.

Every "not visible" check is deterministic: a later committed record (or the
partition's last stable offset, LIST_OFFSETS `latest`) shows the reader got
past the place where the invisible records are."""

from __future__ import annotations

import logging
import time
from typing import Callable, List, Optional

import pytest

import cursus

from conftest import Broker

HANG_GUARD_S = 60.0


def create(bootstrap: str, topic: str, partitions: int = 1) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(topic, partitions=partitions)


def txn_producer(bootstrap: str, transactional_id: str) -> cursus.Producer:
    return cursus.Producer(
        bootstrap_servers=bootstrap, transactional_id=transactional_id, linger_ms=1
    )


def reader(bootstrap: str, group: str, topic: str, isolation: str) -> cursus.Consumer:
    c = cursus.Consumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        isolation_level=isolation,
        fetch_max_wait_ms=50,
    )
    c.subscribe(topic)
    return c


def read_until(
    consumer: cursus.Consumer, done: Callable[[List[bytes]], bool]
) -> List[bytes]:
    """Polls until `done(values so far)`; the deadline is a hang guard only."""
    got: List[bytes] = []
    deadline = time.monotonic() + HANG_GUARD_S
    while not done(got):
        assert time.monotonic() < deadline, f"hang guard: got {got}"
        got.extend(m.value for m in consumer.poll(0.5))
    return got


def latest(bootstrap: str, topic: str) -> int:
    """The partition's `latest` offset: its last stable offset."""
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        (offsets,) = admin.list_offsets(topic, 0)
    return offsets.latest


def test_calls_in_the_wrong_state_raise(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    with txn_producer(bootstrap, name) as p:
        assert p.transactional_id == name
        with pytest.raises(cursus.ValidationError) as begin:
            p.begin_transaction()
        assert begin.value.code == "invalid_transaction_state"
        with pytest.raises(cursus.ValidationError) as commit:
            p.commit_transaction()
        assert commit.value.code == "invalid_transaction_state"
        p.init_transactions()
        # A transactional producer sends only inside a transaction.
        with pytest.raises(cursus.ValidationError) as outside:
            p.send(name, b"outside")
        assert outside.value.code == "invalid_transaction_state"
        with pytest.raises(cursus.ValidationError) as enter:
            with p.transaction():
                p.begin_transaction()  # already open
        assert enter.value.code == "invalid_transaction_state"
    assert p.transactional_id == name  # still readable once closed
    with cursus.Producer(bootstrap_servers=bootstrap) as plain:
        assert plain.transactional_id is None
        with pytest.raises(cursus.ValidationError) as not_txn:
            plain.init_transactions()
        assert not_txn.value.code == "invalid_transaction_state"
        with pytest.raises(cursus.ValidationError):
            plain.transaction().__enter__()


def test_committed_records_are_visible_and_aborted_never(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    with txn_producer(bootstrap, name) as p:
        p.init_transactions()
        p.begin_transaction()
        for v in (b"a1", b"a2"):
            p.send(name, v)
        p.abort_transaction()
        p.begin_transaction()
        metas = [p.send_and_wait(name, v, key="k") for v in (b"c1", b"c2")]
        assert all(m.offset is not None for m in metas)
        p.commit_transaction()
    with reader(bootstrap, name + "-rc", name, "read_committed") as c:
        got = read_until(c, lambda got: b"c2" in got)
    assert got == [b"c1", b"c2"]
    # read_uncommitted: the raw log, aborted records included (markers never).
    with reader(bootstrap, name + "-ru", name, "read_uncommitted") as c:
        got = read_until(c, lambda got: b"c2" in got)
    assert got == [b"a1", b"a2", b"c1", b"c2"]


def test_read_uncommitted_sees_an_open_transaction(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    with txn_producer(bootstrap, name) as p:
        p.init_transactions()
        p.begin_transaction()
        for v in (b"o1", b"o2"):
            p.send_and_wait(name, v)  # durable before its reply
        with reader(bootstrap, name + "-ru", name, "read_uncommitted") as c:
            assert read_until(c, lambda got: len(got) >= 2) == [b"o1", b"o2"]
        # read_committed readers stop at the last stable offset: the
        # transaction's first record.
        assert latest(bootstrap, name) == 0
        with reader(bootstrap, name + "-rc", name, "read_committed") as rc:
            p.commit_transaction()
            assert read_until(rc, lambda got: len(got) >= 2) == [b"o1", b"o2"]
    assert latest(bootstrap, name) >= 2


def test_consume_process_produce_commits_offsets_with_the_output(
    bootstrap: str, name: str
) -> None:
    source, sink, group = name + "-in", name + "-out", name + "-g"
    create(bootstrap, source)
    create(bootstrap, sink)
    with cursus.Producer(bootstrap_servers=bootstrap) as plain:
        for i in range(4):
            plain.send(source, b"in%d" % i)
    tp = cursus.TopicPartition(source, 0)
    with cursus.Consumer(
        bootstrap_servers=bootstrap, group_id=group, fetch_max_wait_ms=50
    ) as c, txn_producer(bootstrap, name) as p:
        c.subscribe(source)
        p.init_transactions()

        # Aborted: neither the output nor the offsets count.
        first = c.poll(HANG_GUARD_S, max_records=2)
        assert [m.value for m in first] == [b"in0", b"in1"]
        with pytest.raises(RuntimeError):
            with p.transaction():
                for m in first:
                    p.send(sink, m.value.upper())
                p.send_offsets_to_transaction(c)
                raise RuntimeError("processing failed")
        assert c.committed(tp) is None

        # Committed: the delivered offsets, staged with the consumer's session.
        p.begin_transaction()
        for m in first:
            p.send(sink, m.value.upper())
        p.send_offsets_to_transaction(c)
        assert c.committed(tp) is None  # staged, not committed yet
        p.commit_transaction()
        assert c.committed(tp) == 2

        # Explicit offsets (a mapping), committed by the context manager.
        rest: List[cursus.Message] = []
        while len(rest) < 2:
            rest.extend(c.poll(HANG_GUARD_S, max_records=2 - len(rest)))
        with p.transaction():
            for m in rest:
                p.send(sink, m.value.upper())
            p.send_offsets_to_transaction(c, {tp: rest[-1].offset + 1})
            assert c.committed(tp) == 2
        assert c.committed(tp) == 4

    with reader(bootstrap, name + "-check", sink, "read_committed") as out:
        got = read_until(out, lambda got: b"IN3" in got)
    assert got == [b"IN0", b"IN1", b"IN2", b"IN3"]


def test_a_second_producer_fences_the_first(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    with txn_producer(bootstrap, name) as zombie, txn_producer(bootstrap, name) as p:
        zombie.init_transactions()
        zombie.begin_transaction()
        zombie.send_and_wait(name, b"zombie1")
        p.init_transactions()  # fences the zombie, aborts its transaction
        with pytest.raises(cursus.FencingError) as send:
            zombie.send_and_wait(name, b"zombie2")
        assert send.value.code == "producer_fenced"
        with pytest.raises(cursus.FencingError) as commit:
            zombie.commit_transaction()
        assert commit.value.code == "producer_fenced"
        # Fenced for good: every later call fails the same way.
        with pytest.raises(cursus.FencingError) as again:
            zombie.begin_transaction()
        assert again.value.code == "producer_fenced"
        with p.transaction():
            p.send(name, b"live")
    with reader(bootstrap, name + "-rc", name, "read_committed") as c:
        got = read_until(c, lambda got: b"live" in got)
    assert got == [b"live"]


def test_context_manager_commits_or_aborts(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    with txn_producer(bootstrap, name) as p:
        p.init_transactions()
        with p.transaction() as same:
            assert same is p
            p.send(name, b"kept1")
        with pytest.raises(KeyError):
            with p.transaction():
                p.send(name, b"dropped")
                raise KeyError("boom")
        with p.transaction():
            p.send(name, b"kept2")
    with reader(bootstrap, name + "-rc", name, "read_committed") as c:
        got = read_until(c, lambda got: b"kept2" in got)
    assert got == [b"kept1", b"kept2"]


def test_a_failed_abort_does_not_hide_the_exception(
    bootstrap: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    create(bootstrap, name)
    with txn_producer(bootstrap, name) as zombie, txn_producer(bootstrap, name) as p:
        zombie.init_transactions()
        with caplog.at_level(logging.WARNING, logger="cursus"):
            with pytest.raises(ZeroDivisionError) as raised:
                with zombie.transaction():
                    zombie.send_and_wait(name, b"zombie")
                    p.init_transactions()  # fences: the abort will fail
                    1 / 0
        notes: Optional[List[str]] = getattr(raised.value, "__notes__", None)
        if hasattr(raised.value, "add_note"):  # Python 3.11+
            assert notes is not None and "producer_fenced" in notes[0]
        assert any("producer_fenced" in r.getMessage() for r in caplog.records)
        # Fenced for good: entering another transaction raises.
        with pytest.raises(cursus.FencingError):
            with zombie.transaction():
                pass


def test_a_failed_commit_raises_from_the_block(bootstrap: str, name: str) -> None:
    create(bootstrap, name)
    with txn_producer(bootstrap, name) as zombie, txn_producer(bootstrap, name) as p:
        zombie.init_transactions()
        with pytest.raises(cursus.FencingError) as commit:
            with zombie.transaction():
                zombie.send_and_wait(name, b"zombie")
                p.init_transactions()  # fences: the commit fails
        assert commit.value.code == "producer_fenced"


def test_a_transaction_the_broker_aborted_fails_its_commit(name: str) -> None:
    broker = Broker("--transaction-timeout-ms", "300")
    try:
        create(broker.addr, name)
        with txn_producer(broker.addr, name) as p:
            p.init_transactions()
            with pytest.raises(cursus.ConflictError) as commit:
                with p.transaction():
                    p.send_and_wait(name, b"too-slow")
                    # The broker aborts it past its deadline: the abort
                    # marker moves the last stable offset past the record.
                    deadline = time.monotonic() + HANG_GUARD_S
                    while latest(broker.addr, name) < 1:
                        assert time.monotonic() < deadline, "hang guard: never aborted"
                        time.sleep(0.05)
            assert commit.value.code == "transaction_aborted"
            # Nothing was left open: no note, and the next transaction works.
            assert not getattr(commit.value, "__notes__", None)
            with p.transaction():
                p.send(name, b"in-time")
        with reader(broker.addr, name + "-rc", name, "read_committed") as c:
            got = read_until(c, lambda got: b"in-time" in got)
        assert got == [b"in-time"]
    finally:
        broker.stop()
