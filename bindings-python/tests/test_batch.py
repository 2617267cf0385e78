"""The batch send: one call into the engine per batch, one result per record."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, List

import pytest

import cursus
import cursus.aio

if TYPE_CHECKING:  # type aliases of the stubs only
    from cursus._cursus import BatchRecord, BatchResult


def _create(bootstrap: str, name: str) -> None:
    admin = cursus.AdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topic(name, partitions=1)
    finally:
        admin.close()


def test_send_batch_results_in_order_one_failure_alone(bootstrap: str, name: str) -> None:
    _create(bootstrap, name)
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        records: List[BatchRecord] = [b"v0", (b"k1", b"v1"), ("k2", "v2"), bytearray(b"v3")]
        delivery = producer.send_batch(name, records, partition=0, timestamp=1234)
        results = delivery.result(30)
        assert delivery.done()
        assert len(results) == 4
        for i, r in enumerate(results):
            assert isinstance(r, cursus.RecordMetadata), r
            assert (r.topic, r.partition, r.offset, r.timestamp) == (name, 0, i, 1234)

        # Partition 9 does not exist: every record of that batch fails, one
        # result each; a later batch is unaffected.
        bad = producer.send_batch(name, [b"x", b"y"], partition=9).result(30)
        assert len(bad) == 2
        for r in bad:
            assert isinstance(r, cursus.ValidationError) and r.kind == "invalid_argument", r
        ok = producer.send_batch(name, [b"z"]).result(30)
        assert isinstance(ok[0], cursus.RecordMetadata) and ok[0].offset == 4

        # The batch rule: one topic (named once), each record its own
        # partition; `partition` is the default of those without one.
        own = producer.send_batch(name, [(None, b"p0", 0), (b"k", b"p9", 9), b"d"], partition=0).result(30)
        assert isinstance(own[0], cursus.RecordMetadata) and own[0].partition == 0
        assert isinstance(own[1], cursus.ValidationError), own[1]  # partition 9 alone fails
        assert isinstance(own[2], cursus.RecordMetadata) and own[2].partition == 0

        with pytest.raises(TypeError):
            producer.send_batch(name, [(b"k", b"v", 0, b"extra")])  # type: ignore[list-item]
        with pytest.raises(TypeError):
            producer.send_batch(name, [(b"k", b"v", b"not a partition")])  # type: ignore[list-item]

    with pytest.raises(cursus.ClosedError):
        producer.send_batch(name, [b"late"])


def test_send_batch_calls_back_once_per_batch(bootstrap: str, name: str) -> None:
    _create(bootstrap, name)
    calls: List[List[BatchResult]] = []
    threads: List[str] = []
    def on_delivery(results: List[BatchResult]) -> None:
        calls.append(results)
        threads.append(threading.current_thread().name)

    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        for _ in range(3):
            sent = producer.send_batch(name, [b"a", b"b", b"c"], on_delivery=on_delivery)
            assert sent is None
        producer.flush(30)  # waits for the callbacks
        assert len(calls) == 3
        offsets = [r.offset for batch in calls for r in batch if isinstance(r, cursus.RecordMetadata)]
        assert offsets == list(range(9))
        assert all(t != threading.current_thread().name for t in threads)


def test_async_send_batch_is_one_awaitable(bootstrap: str, name: str) -> None:
    _create(bootstrap, name)

    async def main() -> None:
        async with cursus.aio.Producer(bootstrap_servers=bootstrap) as producer:
            first = producer.send(name, b"single", partition=0)
            batch = producer.send_batch(name, [b"b0", (b"k", b"b1")], partition=0)
            assert isinstance(batch, asyncio.Future)
            results = await batch
            assert (await first).offset == 0
            assert [r.offset for r in results if isinstance(r, cursus.RecordMetadata)] == [1, 2]
            bad = await producer.send_batch(name, [b"x"], partition=7)
            assert isinstance(bad[0], cursus.ValidationError) and bad[0].kind == "invalid_argument"

    asyncio.run(main())
