from __future__ import annotations

import asyncio
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
