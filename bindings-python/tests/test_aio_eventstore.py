"""The asyncio event store (cursus.aio.EventStore) against the real broker:
the same engine calls as the synchronous store (test_eventstore.py), so
these cover the asyncio surface: coroutines, ``async for`` over events and
pages, the aggregate's coroutines, and the client lifecycle."""

from __future__ import annotations

import asyncio
from typing import List

import pytest

import cursus
import cursus.aio


def create(bootstrap: str, topic: str, event_sourcing: bool = True) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(topic, partitions=3, event_sourcing=event_sourcing)


def count(state: int, event: cursus.StoredEvent) -> int:
    return state + 1


def test_append_read_back_and_conflict(bootstrap: str, name: str) -> None:
    create(bootstrap, name)

    async def main() -> None:
        async with cursus.aio.EventStore(bootstrap_servers=bootstrap) as store:
            assert await store.stream_version(name, "a") == 0
            first = await store.append(
                name, "a", 0, "one", event_type="Made", metadata="m", schema_version=3
            )
            assert first.version == 1
            # Appends of two aggregates at once.
            await asyncio.gather(store.append(name, "a", 1, b"two"), store.append(name, "b", 0, "b1"))
            with pytest.raises(cursus.ConflictError) as info:
                await store.append(name, "a", 1, "late")
            assert info.value.code == "version_conflict"
            assert info.value.fields["current"] == "2"

            reader = await store.read_stream(name, "a")
            assert reader.snapshot is None
            events = [e async for e in reader]
            assert [(e.version, e.text) for e in events] == [(1, "one"), (2, "two")]
            e1 = events[0]
            assert (e1.key, e1.partition, e1.offset) == (b"a", first.partition, first.offset)
            assert (e1.event_type, e1.metadata, e1.schema_version) == ("Made", "m", 3)
            assert e1.timestamp > 0

    asyncio.run(main())


def test_snapshots_and_paged_reads(bootstrap: str, name: str) -> None:
    create(bootstrap, name)

    async def main() -> None:
        async with cursus.aio.EventStore(bootstrap_servers=bootstrap) as store:
            for v in range(5):
                await store.append(name, "p", v, f"e{v + 1}")
            assert await store.read_snapshot(name, "p") is None
            await store.save_snapshot(name, "p", 2, "s2")
            assert await store.read_snapshot(name, "p") == cursus.Snapshot(2, "s2")

            reader = await store.read_stream(name, "p", max_events=2)
            assert reader.snapshot == cursus.Snapshot(2, "s2")
            pages: List[cursus.Page] = [p async for p in reader.pages()]
            assert [[e.version for e in p.events] for p in pages] == [[3, 4], [5]]
            assert not reader.has_more

            history = await store.history(name, "p", 2, max_records=2)
            assert [e.version async for e in history] == [2, 3, 4, 5]
            assert (history.completeness, history.head_version, history.pages_read) == ("complete", 5, 2)

            browse = await store.browse(name, pages[0].partition, max_records=3)
            assert [e.text async for e in browse] == ["e1", "e2", "e3", "e4", "e5"]
            assert browse.readable_end_offset == 5

    asyncio.run(main())


def test_aggregate_cycle(bootstrap: str, name: str) -> None:
    create(bootstrap, name)

    async def main() -> None:
        async with cursus.aio.EventStore(bootstrap_servers=bootstrap) as store:
            agg = await store.load_aggregate(
                name, "ctr", 0, count, deserialize=int, serialize=str, snapshot_every=3
            )
            other = await store.load_aggregate(name, "ctr", 0, count, deserialize=int)
            for i in range(7):
                await agg.append("Counted", f"tick-{i}")
            assert (agg.state, agg.version, agg.snapshot_version) == (7, 7, 6)
            assert await store.read_snapshot(name, "ctr") == cursus.Snapshot(6, "6")

            with pytest.raises(cursus.ConflictError):
                await other.append("Counted", "stale")
            await other.reload()
            assert other.loaded_snapshot == cursus.Snapshot(6, "6")
            assert (other.state, other.version, other.loaded_events) == (7, 7, 1)
            await other.append("Counted", "fresh")
            assert (other.state, other.version) == (8, 8)
            assert isinstance(other, cursus.aio.Aggregate)

    asyncio.run(main())


def test_errors_and_lifecycle(bootstrap: str, name: str) -> None:
    create(bootstrap, name, event_sourcing=False)

    async def main() -> None:
        store = cursus.aio.EventStore(bootstrap_servers=bootstrap)
        with pytest.raises(cursus.ClosedError) as info:
            await store.append(name, "k", 0, "x")
        assert info.value.code == "not_connected"
        await store.start()
        with pytest.raises(cursus.ValidationError) as err:
            await store.append(name, "k", 0, "x")
        assert err.value.code == "event_sourcing_not_enabled"
        with pytest.raises(cursus.ValidationError) as err:
            await store.read_stream(name, "k")
        assert err.value.code == "event_sourcing_not_enabled"
        await store.close()
        await store.close()
        assert store.closed
        with pytest.raises(cursus.ClosedError):
            await store.stream_version(name, "k")

    asyncio.run(main())


def test_unknown_option_fails_at_construction() -> None:
    with pytest.raises(cursus.ValidationError):
        cursus.aio.EventStore(bootstrap_servers="127.0.0.1:1", no_such_option=1)
