from __future__ import annotations

import asyncio

import pytest

import cursus
import cursus.aio


def test_closed_objects_raise_and_close_is_idempotent(bootstrap: str, name: str) -> None:
    admin = cursus.AdminClient(bootstrap_servers=bootstrap)
    admin.create_topic(name, partitions=1)
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        delivery = producer.send(name, b"x")
    assert producer.closed
    assert delivery.result(timeout=10).offset == 0
    with pytest.raises(cursus.ClosedError) as e:
        producer.send(name, b"late")
    assert e.value.code == "closed"
    assert isinstance(e.value, cursus.ValidationError)
    with pytest.raises(cursus.ClosedError):
        producer.flush()
    producer.close()  # closing twice does nothing

    consumer = cursus.Consumer(bootstrap_servers=bootstrap, group_id=name)
    consumer.subscribe(name)
    consumer.close()
    consumer.close()
    for call in (lambda: consumer.poll(0.1), consumer.commit, consumer.assignment,
                 lambda: consumer.subscribe(name)):
        with pytest.raises(cursus.ClosedError):
            call()

    admin.close()
    assert admin.closed
    with pytest.raises(cursus.ClosedError):
        admin.list_topics()
    admin.close()


def test_closed_async_objects_raise(bootstrap: str) -> None:
    async def main() -> None:
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.list_topics()
        with pytest.raises(cursus.ClosedError):
            await admin.list_topics()
        await admin.close()
        producer = cursus.aio.Producer(bootstrap_servers=bootstrap)
        with pytest.raises(cursus.ClosedError):
            await producer.send("t", b"not connected")

    asyncio.run(main())
