from __future__ import annotations

import asyncio
import inspect
from typing import List

import pytest

import cursus
import cursus.aio


def test_async_admin_produce_consume(bootstrap: str, name: str) -> None:
    async def main() -> None:
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            info = await admin.create_topic(name, partitions=2)
            assert info.partitions == 2
            assert name in await admin.list_topics()
            with pytest.raises(cursus.NotFoundError):
                await admin.describe_topic(name + "-missing")

        async with cursus.aio.Producer(bootstrap_servers=bootstrap, linger_ms=1) as producer:
            metas = await asyncio.gather(
                *(producer.send(name, b"m%d" % i, key=b"k%d" % i) for i in range(50))
            )
            assert all(m.offset is not None for m in metas)
            await producer.flush(10)

        consumer = await cursus.aio.Consumer.connect(
            bootstrap_servers=bootstrap, group_id=name, fetch_max_wait_ms=50
        )
        try:
            await consumer.subscribe([name])
            assert await consumer.member_id() is None  # joins on the first poll
            got: List[cursus.Message] = []
            async for message in consumer:
                got.append(message)
                if len(got) == 50:
                    break
            assert sorted(m.payload for m in got) == sorted(b"m%d" % i for i in range(50))
            await consumer.commit()
            assert {tp.partition for tp in await consumer.assignment()} == {0, 1}
            committed = [await consumer.committed(tp) for tp in await consumer.assignment()]
            assert sum(c or 0 for c in committed) == 50
            async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
                status = await admin.group_status(name)
            assert await consumer.member_id() == status.members[0].member_id
        finally:
            await consumer.close()

    asyncio.run(main())


def test_cancelling_an_async_poll(bootstrap: str, name: str) -> None:
    async def main() -> None:
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topic(name, partitions=1)
        async with cursus.aio.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
            await consumer.subscribe(name)
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(consumer.poll(), 0.5)
            # The consumer is still usable after the cancellation.
            assert await consumer.poll(0.1) == []

    asyncio.run(main())


def test_async_errors_and_timeouts(bootstrap: str, name: str) -> None:
    async def main() -> None:
        with pytest.raises(cursus.AvailabilityError):
            await cursus.aio.AdminClient.connect(bootstrap_servers="127.0.0.1:1", retries=0)
        with pytest.raises(cursus.ValidationError):
            await cursus.aio.Producer.connect(bootstrap_servers="bad")
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topic(name, partitions=1)
        async with cursus.aio.Producer(bootstrap_servers=bootstrap, linger_ms=60000) as p:
            pending = asyncio.ensure_future(p.send(name, b"x"))
            # Once the record is queued (linger 60 s), a zero flush times out.
            timed_out = None
            for _ in range(500):
                try:
                    await p.flush(0)
                except TimeoutError as e:
                    timed_out = e
                    break
                await asyncio.sleep(0.01)
            assert isinstance(timed_out, cursus.TimeoutError)
            await p.flush(10)
            assert (await pending).offset == 0

    asyncio.run(main())


def test_async_sends_keep_call_order_and_flush_covers_them(bootstrap: str, name: str) -> None:
    # Sends started together (tasks, not awaited one by one) must reach the
    # partition in call order, and a flush must cover every send made
    # before it, even ones whose task has not run yet.
    async def main() -> None:
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topic(name, partitions=1)
            async with cursus.aio.Producer(bootstrap_servers=bootstrap) as producer:
                sends = [asyncio.ensure_future(producer.send(name, b"%d" % i)) for i in range(500)]
                await producer.flush(30)
                [offsets] = await admin.list_offsets(name, 0)
                assert offsets.latest == 500
                metas = await asyncio.gather(*sends)
                assert [m.offset for m in metas] == list(range(500))

    asyncio.run(main())


def test_asyncio_send_keeps_call_order_without_awaiting(bootstrap: str, name: str) -> None:
    async def main() -> List[int]:
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topic(name, partitions=1)
        async with cursus.aio.Producer(bootstrap_servers=bootstrap, linger_ms=1) as producer:
            # Handed over in call order; awaited afterwards, in reverse.
            futures = [producer.send(name, str(i).encode()) for i in range(1000)]
            return [(await f).offset or 0 for f in reversed(futures)][::-1]

    assert asyncio.run(main()) == list(range(1000))


def test_asyncio_rejects_bad_options_at_construction() -> None:
    with pytest.raises(cursus.ValidationError, match='unknown producer option "lingerms"'):
        cursus.aio.Producer(bootstrap_servers="127.0.0.1:1", lingerms=5)
    with pytest.raises(TypeError, match="linger_ms: expected an int"):
        cursus.aio.Producer(bootstrap_servers="127.0.0.1:1", linger_ms=True)
    with pytest.raises(cursus.ValidationError, match="group_id"):
        cursus.aio.Consumer(bootstrap_servers="127.0.0.1:1")


def test_flush_and_close_default_to_the_librarys_marker(bootstrap: str) -> None:
    # The default is the library's marker, not a number of Python's own;
    # the library says what it stands for.
    assert cursus.DEFAULT_TIMEOUT.seconds == 30.0
    assert repr(cursus.DEFAULT_TIMEOUT) == "cursus.DEFAULT_TIMEOUT"
    # pyo3 shows a default that is not a literal as `...`.
    for native in (cursus.Producer.flush, cursus.Producer.close):
        assert inspect.signature(native).parameters["timeout"].default is ..., native
    for wrapper in (cursus.aio.Producer.flush, cursus.aio.Producer.close):
        assert inspect.signature(wrapper).parameters["timeout"].default is cursus.DEFAULT_TIMEOUT
    producer = cursus.Producer(bootstrap_servers=bootstrap)
    producer.flush()
    producer.flush(cursus.DEFAULT_TIMEOUT)
    with pytest.raises(TypeError):
        producer.flush("soon")  # type: ignore[arg-type]
    producer.close()


def test_none_means_no_limit(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    producer = cursus.Producer(bootstrap_servers=bootstrap)
    delivery = producer.send(name, b"sync")
    producer.flush(timeout=None)
    assert delivery.done()
    producer.close(timeout=None)
    assert producer.closed

    async def main() -> int:
        p = await cursus.aio.Producer.connect(bootstrap_servers=bootstrap)
        sent = p.send(name, b"async")
        await p.flush(None)
        assert sent.done()
        await p.close(None)
        return (await sent).offset or 0

    assert asyncio.run(main()) == 1


def test_asyncio_clients_not_connected_or_closed_raise_closed_errors() -> None:
    producer = cursus.aio.Producer(bootstrap_servers="127.0.0.1:1")
    with pytest.raises(cursus.ClosedError) as info:
        producer.send("t", b"x")
    assert info.value.code == "not_connected"
    assert str(info.value) == (
        "not_connected (validation): producer is not connected; use 'async with' or await connect()"
    )

    async def closed_then_started() -> None:
        await producer.close()
        await producer.start()

    with pytest.raises(cursus.ClosedError, match=r"^closed \(validation\): producer is closed$"):
        asyncio.run(closed_then_started())


def test_asyncio_wakeup_and_max_records(bootstrap: str, name: str) -> None:
    async def main() -> List[int]:
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topic(name, partitions=1)
        async with cursus.aio.Producer(bootstrap_servers=bootstrap) as producer:
            for i in range(5):
                await producer.send(name, str(i).encode())
        async with cursus.aio.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
            await consumer.subscribe(name)
            taken: List[int] = []
            while len(taken) < 2:
                taken += [m.offset for m in await consumer.poll(10, max_records=2 - len(taken))]
            await consumer.commit()
            rest: List[int] = []
            while len(rest) < 3:
                rest += [m.offset for m in await consumer.poll(10)]
            # A poll with nothing left to read returns [] once woken.
            pending = asyncio.ensure_future(consumer.poll(None))
            await asyncio.sleep(0)
            consumer.wakeup()
            assert await asyncio.wait_for(pending, 30) == []
            committed = await consumer.committed(cursus.TopicPartition(name, 0))
            return taken + [committed or -1]

    assert asyncio.run(main()) == [0, 1, 2]
