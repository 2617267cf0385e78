"""Aggregate replay topics and transactional stream appends through the
asyncio API (cursus.aio): the same engine calls as test_replay.py, so these
cover the coroutines: event ids and exact retries, proofs (and a failed
proof's ``.proof``), range reads, and ``Producer.append_stream`` committed
or aborted."""

from __future__ import annotations

import asyncio

import pytest

import cursus
import cursus.aio


async def create(bootstrap: str, topic: str, replay: bool) -> None:
    async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
        if replay:
            info = await admin.create_topic(
                topic, partitions=2, event_sourcing=True, idempotent=True, aggregate_replay=True
            )
            assert info.aggregate_replay
        else:
            await admin.create_topic(topic, partitions=1, event_sourcing=True)


def test_ids_retries_proofs_and_ranges(bootstrap: str, name: str) -> None:
    async def main() -> None:
        await create(bootstrap, name, replay=True)
        async with cursus.aio.EventStore(bootstrap_servers=bootstrap) as store:
            first = await store.append(name, "m", 0, "kickoff", event_type="Started", event_id="m-1")
            assert await store.append(
                name, "m", 0, "kickoff", event_type="Started", event_id="m-1"
            ) == first
            with pytest.raises(cursus.CursusError) as info:
                await store.append(name, "m", 0, "changed", event_type="Started", event_id="m-1")
            assert info.value.code == "aggregate_identity_conflict"
            # Two aggregates at once, one with a generated id.
            second, other = await asyncio.gather(
                store.append(name, "m", 1, "goal", event_type="Scored", event_id="m-2"),
                store.append(name, "n", 0, "kickoff"),
            )
            assert (second.version, other.version) == (2, 1)

            proof = await store.replay_proof(name, "m", expected_last_sequence=2)
            assert proof.complete
            assert (proof.event_count, proof.first_event_id, proof.last_event_id) == (2, "m-1", "m-2")
            assert (proof.first_offset, proof.last_offset) == (first.offset, second.offset)

            with pytest.raises(cursus.InternalError) as failed:
                await store.replay_proof(name, "m", expected_last_sequence=3)
            assert failed.value.code == "aggregate_proof_proof_unavailable"
            assert failed.value.proof is not None
            assert failed.value.proof.status == "proof_unavailable"
            assert failed.value.proof.event_count == 2

            range_proof, events = await store.event_range(name, "m", 1, 2)
            assert range_proof.complete
            assert [(e.event_sequence, e.event_id, e.payload) for e in events] == [
                (1, "m-1", "kickoff"),
                (2, "m-2", "goal"),
            ]
            with pytest.raises(cursus.CursusError) as info:
                await store.event_range(name, "m", 2, 5)
            assert info.value.code == "aggregate_range_incomplete"

            with pytest.raises(cursus.ValidationError):
                await store.append(name, "m", 2, "x", event_id="a b")

    asyncio.run(main())


def test_append_stream_commit_and_abort(bootstrap: str, name: str) -> None:
    async def main() -> None:
        await create(bootstrap, name, replay=False)
        async with cursus.aio.EventStore(bootstrap_servers=bootstrap) as store, cursus.aio.Producer(
            bootstrap_servers=bootstrap, transactional_id=name, linger_ms=1
        ) as p:
            await store.append(name, "acct", 0, "open", event_type="Opened")
            await p.init_transactions()

            with pytest.raises(RuntimeError):
                async with p.transaction():
                    appended = await p.append_stream(name, "acct", 1, "never", event_type="Credited")
                    assert appended.version == 2
                    with pytest.raises(cursus.CursusError) as info:
                        await store.append(name, "acct", 1, "race")
                    assert info.value.code == "stream_version_reserved"
                    raise RuntimeError("processing failed")
            assert await store.stream_version(name, "acct") == 1

            async with p.transaction():
                credited = await p.append_stream(
                    name, "acct", 1, "credit", event_type="Credited", event_id="c-1"
                )
                assert await store.stream_version(name, "acct") == 1
            assert credited.version == 2
            assert await store.stream_version(name, "acct") == 2
            reader = await store.read_stream(name, "acct")
            assert [(e.version, e.text) async for e in reader] == [(1, "open"), (2, "credit")]

    asyncio.run(main())
