"""The asyncio consumer's control calls, rebalance listener (plain and
coroutine callbacks) and statistics."""

from __future__ import annotations

import asyncio
import threading
from typing import List, Tuple

import pytest

import cursus
import cursus.aio
from cursus import TopicPartition


async def take(c: cursus.aio.Consumer, count: int) -> List[cursus.Message]:
    got: List[cursus.Message] = []
    for _ in range(200):
        got += await c.poll(0.1, max_records=count - len(got))
        if len(got) >= count:
            break
    return got


def test_aio_control_and_coroutine_listener(bootstrap: str, name: str) -> None:
    async def main() -> None:
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topic(name, partitions=2)
        async with cursus.aio.Producer(bootstrap_servers=bootstrap) as p:
            for i in range(4):
                await p.send(name, b"%d" % i, partition=i % 2)
            assert p.statistics().records_sent == 4
        tp0, tp1 = TopicPartition(name, 0), TopicPartition(name, 1)
        events: List[Tuple[str, int]] = []
        poll_errors: List[BaseException] = []
        loop_thread = threading.get_ident()
        on_loop: List[bool] = []
        c = cursus.aio.Consumer(bootstrap_servers=bootstrap, group_id=name,
                                auto_offset_reset="earliest", enable_auto_commit=False)
        await c.start()

        async def on_assign(parts: List[TopicPartition]) -> None:
            on_loop.append(threading.get_ident() == loop_thread)
            events.append(("assigned", len(parts)))
            await c.seek(tp0, 1)  # a coroutine listener awaits the consumer
            try:
                await c.poll(0)
            except cursus.ValidationError as e:
                poll_errors.append(e)

        async def on_revoke(parts: List[TopicPartition]) -> None:
            events.append(("revoked", len(parts)))
            await c.commit()  # still counts at close

        await c.subscribe(name, on_assign=on_assign, on_revoke=on_revoke)
        got = await take(c, 3)
        assert sorted((m.partition, m.offset) for m in got) == [(0, 1), (1, 0), (1, 1)]
        assert on_loop == [True] and len(poll_errors) == 1
        assert await c.position(tp1) == 2
        await c.pause([tp1])
        assert await c.paused() == [tp1]
        await c.resume([tp1])
        assert await c.paused() == []
        assert await c.committed([tp0, tp1]) == {tp0: None, tp1: None}
        s = await c.statistics()
        assert s.kind == "consumer" and len(s.partitions) == 2
        await c.close()
        assert events == [("assigned", 2), ("revoked", 2)]
        async with cursus.aio.Consumer(bootstrap_servers=bootstrap, group_id=name) as other:
            assert await other.committed([tp0, tp1]) == {tp0: 2, tp1: 2}
            assert await other.committed(tp0) == 2

    asyncio.run(main())


def test_aio_listener_object_and_error_and_stats_callbacks(bootstrap: str, name: str) -> None:
    async def main() -> None:
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            await admin.create_topic(name, partitions=1)
        told: List[str] = []
        stats = asyncio.Event()
        errors: List[cursus.CursusError] = []

        class Listener(cursus.aio.RebalanceListener):
            async def on_partitions_assigned(self, partitions: List[TopicPartition]) -> None:
                told.append(f"assigned {len(partitions)}")

            async def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None:
                told.append(f"revoked {len(partitions)}")

        async def stats_cb(s: cursus.Statistics) -> None:  # a coroutine: run on the loop
            stats.set()

        async with cursus.aio.Consumer(bootstrap_servers=bootstrap, group_id=name,
                                       stats_cb=stats_cb, statistics_interval_ms=20,
                                       error_cb=errors.append) as c:
            c.set_rebalance_listener(Listener())
            await c.subscribe(name)
            await c.poll(0.5)
            await asyncio.wait_for(stats.wait(), 30)
            with pytest.raises(cursus.ValidationError):
                await c.seek(TopicPartition(name, 5), 0)
        assert told == ["assigned 1", "revoked 1"]
        assert errors == []

    asyncio.run(main())


def test_the_listener_tells_the_engine_whether_it_has_a_lost_callback() -> None:
    # Without an on_partitions_lost of its own, the adapter has none either,
    # and the engine tells a loss as a revocation.
    from cursus.aio import _ThreadedLostListener, _threaded_listener

    class Plain(cursus.aio.RebalanceListener):
        async def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None: ...

    class WithLost(Plain):
        async def on_partitions_lost(self, partitions: List[TopicPartition]) -> None: ...

    class SyncWithLost(cursus.RebalanceListener):
        def on_partitions_lost(self, partitions: List[TopicPartition]) -> None: ...

    loop = asyncio.new_event_loop()
    try:
        assert not isinstance(_threaded_listener(loop, Plain()), _ThreadedLostListener)
        assert not isinstance(_threaded_listener(loop, cursus.RebalanceListener()), _ThreadedLostListener)
        assert isinstance(_threaded_listener(loop, WithLost()), _ThreadedLostListener)
        assert isinstance(_threaded_listener(loop, SyncWithLost()), _ThreadedLostListener)
    finally:
        loop.close()
