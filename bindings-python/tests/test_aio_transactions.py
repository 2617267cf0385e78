"""Transactions of the asyncio API (``cursus.aio``) against the real broker:
the same contract as test_transactions.py, with coroutines and
``async with producer.transaction():``."""

from __future__ import annotations

import asyncio
import time
from typing import Callable, List

import pytest

import cursus
import cursus.aio

from conftest import Broker

HANG_GUARD_S = 60.0


async def create(bootstrap: str, topic: str) -> None:
    async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.create_topic(topic, partitions=1)


def txn_producer(bootstrap: str, transactional_id: str) -> cursus.aio.Producer:
    return cursus.aio.Producer(
        bootstrap_servers=bootstrap, transactional_id=transactional_id, linger_ms=1
    )


async def read_until(
    bootstrap: str, group: str, topic: str, isolation: str, done: Callable[[List[bytes]], bool]
) -> List[bytes]:
    """Values read by a new member of `group` until `done(values so far)`;
    the deadline is a hang guard only."""
    got: List[bytes] = []
    deadline = time.monotonic() + HANG_GUARD_S
    async with cursus.aio.Consumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        isolation_level=isolation,
        fetch_max_wait_ms=50,
    ) as c:
        await c.subscribe(topic)
        while not done(got):
            assert time.monotonic() < deadline, f"hang guard: got {got}"
            got.extend(m.value for m in await c.poll(0.5))
    return got


def test_async_commit_abort_and_isolation(bootstrap: str, name: str) -> None:
    async def main() -> None:
        await create(bootstrap, name)
        async with txn_producer(bootstrap, name) as p:
            assert p.transactional_id == name
            with pytest.raises(cursus.ValidationError) as begin:
                await p.begin_transaction()
            assert begin.value.code == "invalid_transaction_state"
            await p.init_transactions()
            await p.begin_transaction()
            aborted = [p.send(name, v) for v in (b"a1", b"a2")]
            await p.abort_transaction()
            # abort waited for the sends: their futures are resolved.
            assert all(f.done() for f in aborted)
            await p.begin_transaction()
            committed = [p.send(name, v, key="k") for v in (b"c1", b"c2")]
            await p.commit_transaction()
            assert all(f.done() and f.result().offset is not None for f in committed)
            # An open transaction: read_uncommitted sees it.
            await p.begin_transaction()
            await p.send(name, b"open")
            ru = await read_until(
                bootstrap, name + "-ru", name, "read_uncommitted", lambda g: b"open" in g
            )
            assert ru == [b"a1", b"a2", b"c1", b"c2", b"open"]
            await p.commit_transaction()
        rc = await read_until(
            bootstrap, name + "-rc", name, "read_committed", lambda g: b"open" in g
        )
        assert rc == [b"c1", b"c2", b"open"]

    asyncio.run(main())


def test_async_context_manager_and_consumer_offsets(bootstrap: str, name: str) -> None:
    source, sink = name + "-in", name + "-out"

    async def main() -> None:
        await create(bootstrap, source)
        await create(bootstrap, sink)
        async with cursus.aio.Producer(bootstrap_servers=bootstrap) as plain:
            await asyncio.gather(*(plain.send(source, b"in%d" % i) for i in range(3)))
        tp = cursus.TopicPartition(source, 0)
        async with cursus.aio.Consumer(
            bootstrap_servers=bootstrap, group_id=name, fetch_max_wait_ms=50
        ) as c, txn_producer(bootstrap, name) as p:
            await c.subscribe(source)
            await p.init_transactions()
            first = await c.poll(HANG_GUARD_S, max_records=1)
            assert [m.value for m in first] == [b"in0"]
            with pytest.raises(ValueError):
                async with p.transaction() as same:
                    assert same is p
                    p.send(sink, b"dropped")
                    await p.send_offsets_to_transaction(c)
                    raise ValueError("processing failed")
            assert await c.committed(tp) is None
            async with p.transaction():
                p.send(sink, b"OUT0")
                await p.send_offsets_to_transaction(c)
                assert await c.committed(tp) is None
            assert await c.committed(tp) == 1
            rest: List[cursus.Message] = []
            while len(rest) < 2:
                rest.extend(await c.poll(HANG_GUARD_S, max_records=2 - len(rest)))
            async with p.transaction():
                for m in rest:
                    p.send(sink, m.value.upper())
                await p.send_offsets_to_transaction(c, [(tp, rest[-1].offset + 1)])
            assert await c.committed(tp) == 3
        got = await read_until(
            bootstrap, name + "-check", sink, "read_committed", lambda g: b"IN2" in g
        )
        assert got == [b"OUT0", b"IN1", b"IN2"]

    asyncio.run(main())


def test_async_zombie_is_fenced(bootstrap: str, name: str) -> None:
    async def main() -> None:
        await create(bootstrap, name)
        async with txn_producer(bootstrap, name) as zombie, txn_producer(bootstrap, name) as p:
            await zombie.init_transactions()
            await zombie.begin_transaction()
            await zombie.send(name, b"zombie1")
            await p.init_transactions()
            with pytest.raises(cursus.FencingError) as send:
                await zombie.send(name, b"zombie2")
            assert send.value.code == "producer_fenced"
            with pytest.raises(cursus.FencingError) as commit:
                await zombie.commit_transaction()
            assert commit.value.code == "producer_fenced"
            with pytest.raises(cursus.FencingError):
                async with zombie.transaction():
                    pass
            # Fenced inside a block that raises: the abort fails, the
            # block's exception propagates (with the abort error as a note).
            async with txn_producer(bootstrap, name) as z2:
                await z2.init_transactions()
                with pytest.raises(LookupError) as raised:
                    async with z2.transaction():
                        await z2.send(name, b"zombie3")
                        await p.init_transactions()
                        raise LookupError("boom")
                if hasattr(raised.value, "add_note"):  # Python 3.11+
                    assert "producer_fenced" in getattr(raised.value, "__notes__")[0]
            async with p.transaction():
                p.send(name, b"live")
        got = await read_until(
            bootstrap, name + "-rc", name, "read_committed", lambda g: b"live" in g
        )
        assert got == [b"live"]

    asyncio.run(main())


def test_async_cancelled_block_aborts(bootstrap: str, name: str) -> None:
    async def main() -> None:
        await create(bootstrap, name)
        async with txn_producer(bootstrap, name) as p:
            await p.init_transactions()
            entered = asyncio.Event()

            async def work() -> None:
                async with p.transaction():
                    await p.send(name, b"cancelled")
                    entered.set()
                    await asyncio.Event().wait()  # until cancelled

            task = asyncio.ensure_future(work())
            await entered.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # Aborted: the producer can begin the next transaction at once.
            async with p.transaction():
                p.send(name, b"after")
        got = await read_until(
            bootstrap, name + "-rc", name, "read_committed", lambda g: b"after" in g
        )
        assert got == [b"after"]

    asyncio.run(main())


def test_async_a_transaction_the_broker_aborted_fails_its_commit(name: str) -> None:
    broker = Broker("--transaction-timeout-ms", "300")

    async def latest() -> int:
        async with cursus.aio.AdminClient(bootstrap_servers=broker.addr) as admin:
            (offsets,) = await admin.list_offsets(name, 0)
        return offsets.latest

    async def main() -> None:
        await create(broker.addr, name)
        async with txn_producer(broker.addr, name) as p:
            await p.init_transactions()
            with pytest.raises(cursus.ConflictError) as commit:
                async with p.transaction():
                    await p.send(name, b"too-slow")
                    # Aborted past its deadline: the abort marker moves the
                    # last stable offset past the record.
                    deadline = time.monotonic() + HANG_GUARD_S
                    while await latest() < 1:
                        assert time.monotonic() < deadline, "hang guard: never aborted"
                        await asyncio.sleep(0.05)
            assert commit.value.code == "transaction_aborted"
            assert not getattr(commit.value, "__notes__", None)
            async with p.transaction():
                p.send(name, b"in-time")
        got = await read_until(
            broker.addr, name + "-rc", name, "read_committed", lambda g: b"in-time" in g
        )
        assert got == [b"in-time"]

    try:
        asyncio.run(main())
    finally:
        broker.stop()
