"""Aggregate replay topics and transactional stream appends of the
synchronous API against the real broker (docs/aggregate-replay.md): event
ids, an exact retry answered with the original offset, identity conflicts,
replay proofs (complete, and failed with ``.proof``), range reads, and
``Producer.append_stream`` committed with a publish and consumer offsets
or aborted, with the aggregate reserved meanwhile."""

from __future__ import annotations

import time
from typing import Iterator, List

import pytest

import cursus

HANG_GUARD_S = 60.0


def create_replay_topic(bootstrap: str, topic: str, partitions: int = 2) -> cursus.TopicInfo:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        info = admin.create_topic(
            topic,
            partitions=partitions,
            event_sourcing=True,
            idempotent=True,
            aggregate_replay=True,
        )
    return info


def create(bootstrap: str, topic: str, event_sourcing: bool = False) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(topic, partitions=1, event_sourcing=event_sourcing)


@pytest.fixture
def store(bootstrap: str) -> Iterator[cursus.EventStore]:
    with cursus.EventStore(bootstrap_servers=bootstrap) as s:
        yield s


@pytest.fixture
def replay_topic(bootstrap: str, name: str) -> str:
    info = create_replay_topic(bootstrap, name)
    assert info.aggregate_replay and info.event_sourcing and info.idempotent
    return name


def test_the_policy_is_reported(bootstrap: str, replay_topic: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        assert admin.describe_topic(replay_topic).definition.aggregate_replay
        assert admin.metadata(replay_topic).topic.aggregate_replay
        plain = admin.create_topic(name + "-plain", partitions=1, event_sourcing=True)
        assert not plain.aggregate_replay


def test_an_exact_retry_returns_the_original_offset(
    bootstrap: str, store: cursus.EventStore, replay_topic: str
) -> None:
    first = store.append(replay_topic, "m1", 0, "kickoff", event_type="Started", event_id="ev-1")
    assert first.version == 1
    again = store.append(replay_topic, "m1", 0, "kickoff", event_type="Started", event_id="ev-1")
    assert again == first
    assert store.stream_version(replay_topic, "m1") == 1
    events = list(store.read_stream(replay_topic, "m1"))
    assert [(e.version, e.offset, e.text) for e in events] == [(1, first.offset, "kickoff")]

    # Without an event id the engine gives each append its own.
    second = store.append(replay_topic, "m1", 1, "half time")
    third = store.append(replay_topic, "m1", 2, "full time")
    assert (second.version, third.version) == (2, 3)

    # Plain publishes are refused: every record of the topic is an event.
    with cursus.Producer(bootstrap_servers=bootstrap) as p:
        with pytest.raises(cursus.InternalError) as info:
            p.send_and_wait(replay_topic, b"plain")
    assert info.value.code == "aggregate_publish_requires_append_stream"


def test_reusing_an_identity_is_a_conflict(store: cursus.EventStore, replay_topic: str) -> None:
    store.append(replay_topic, "m2", 0, "kickoff", event_type="Started", event_id="ev-a")
    # The same version and id with another payload.
    with pytest.raises(cursus.ConflictError) as info:
        store.append(replay_topic, "m2", 0, "other payload", event_type="Started", event_id="ev-a")
    assert info.value.code == "aggregate_identity_conflict"
    assert info.value.fields.get("sequence") == "1"
    assert info.value.proof is None
    # The same version and payload with another id.
    with pytest.raises(cursus.ConflictError) as info:
        store.append(replay_topic, "m2", 0, "kickoff", event_type="Started", event_id="ev-b")
    assert info.value.code == "aggregate_identity_conflict"
    # An id already used, at the next version.
    with pytest.raises(cursus.ConflictError) as info:
        store.append(replay_topic, "m2", 1, "second", event_id="ev-a")
    assert info.value.code == "aggregate_identity_conflict"
    assert info.value.fields.get("event_id") == "ev-a"
    assert store.stream_version(replay_topic, "m2") == 1


def append_goals(store: cursus.EventStore, topic: str, key: str, n: int) -> List[cursus.Appended]:
    return [
        store.append(topic, key, i, f"goal-{i + 1}", event_type="Scored", event_id=f"{key}-{i + 1}")
        for i in range(n)
    ]


def test_a_complete_proof(store: cursus.EventStore, replay_topic: str) -> None:
    appended = append_goals(store, replay_topic, "m3", 5)
    proof = store.replay_proof(replay_topic, "m3")
    assert isinstance(proof, cursus.ReplayProof)
    assert proof.complete and proof.status == "complete"
    assert (proof.topic, proof.partition, proof.match_id) == (
        replay_topic,
        appended[0].partition,
        "m3",
    )
    assert (proof.earliest_retained_sequence, proof.latest_retained_sequence) == (1, 5)
    assert proof.event_count == 5
    assert (proof.first_offset, proof.last_offset) == (appended[0].offset, appended[-1].offset)
    assert (proof.first_event_id, proof.last_event_id) == ("m3-1", "m3-5")
    assert proof.sequence_complete and proof.retention_complete_from_sequence_one
    assert proof.proof_hwm > proof.last_offset
    assert proof.diagnostic == ""
    assert "complete" in repr(proof)
    assert store.replay_proof(replay_topic, "m3", expected_last_sequence=5) == proof
    with pytest.raises(cursus.ValidationError) as info:  # the engine's rule: 0 is no sequence
        store.replay_proof(replay_topic, "m3", expected_last_sequence=0)
    assert info.value.code == "invalid_argument"


def test_a_failed_proof_carries_the_proof(store: cursus.EventStore, replay_topic: str) -> None:
    append_goals(store, replay_topic, "m4", 2)
    with pytest.raises(cursus.InternalError) as info:
        store.replay_proof(replay_topic, "m4", expected_last_sequence=9)
    e = info.value
    assert e.code == "aggregate_proof_proof_unavailable"
    assert not e.retryable
    assert isinstance(e.proof, cursus.ReplayProof)
    assert e.proof.status == "proof_unavailable" and not e.proof.complete
    assert (e.proof.match_id, e.proof.event_count, e.proof.latest_retained_sequence) == ("m4", 2, 2)
    assert e.proof.diagnostic != ""

    # Class by the registry's fallback: a code ending in _not_found.
    with pytest.raises(cursus.NotFoundError) as missing:
        store.replay_proof(replay_topic, "nobody")
    assert missing.value.code == "aggregate_proof_not_found"
    assert missing.value.proof is not None and missing.value.proof.status == "not_found"
    assert missing.value.proof.event_count == 0


def test_range_reads(store: cursus.EventStore, replay_topic: str) -> None:
    appended = append_goals(store, replay_topic, "m5", 5)
    proof, events = store.event_range(replay_topic, "m5", 2, 4)
    assert proof.complete and proof.event_count == 5
    assert all(isinstance(e, cursus.RangeEvent) for e in events)
    assert [(e.offset, e.match_id, e.event_sequence, e.version, e.event_id, e.event_type, e.payload)
            for e in events] == [
        (appended[i - 1].offset, "m5", i, i, f"m5-{i}", "Scored", f"goal-{i}") for i in (2, 3, 4)
    ]
    # At most max_records of them.
    _, first_two = store.event_range(replay_topic, "m5", 1, 5, max_records=2)
    assert [e.event_sequence for e in first_two] == [1, 2]
    # Payload text is kept as stored (spaces included).
    store.append(replay_topic, "m5", 5, "a b  c", event_id="m5-6")
    _, (last,) = store.event_range(replay_topic, "m5", 6, 6)
    assert last.payload == "a b  c"

    with pytest.raises(cursus.InternalError) as info:
        store.event_range(replay_topic, "m5", 4, 9)
    assert info.value.code == "aggregate_range_incomplete"
    with pytest.raises(cursus.NotFoundError) as missing:
        store.event_range(replay_topic, "nobody", 1, 1)
    assert missing.value.code == "aggregate_range_not_found"
    assert missing.value.proof is not None and missing.value.proof.status == "not_found"


def test_event_ids_on_other_topics_and_bad_ids(
    bootstrap: str, store: cursus.EventStore, name: str
) -> None:
    create(bootstrap, name, event_sourcing=True)
    a = store.append(name, "k", 0, "one", event_id="given-id")
    assert a.version == 1
    for bad in ("", "a b", "tab\there"):
        with pytest.raises(cursus.ValidationError) as info:
            store.append(name, "k", 1, "two", event_id=bad)
        assert info.value.kind == "invalid_argument"
    assert store.stream_version(name, "k") == 1


def test_value_types() -> None:
    p = cursus.ReplayProof(status="sequence_gap", event_count=2, diagnostic="gap at 2")
    assert not p.complete
    assert p == cursus.ReplayProof(status="sequence_gap", event_count=2, diagnostic="gap at 2")
    assert p != cursus.ReplayProof(status="complete")
    e = cursus.RangeEvent(offset=4, match_id="m", event_sequence=1, event_id="e1", payload="x")
    assert e.version == 1 and e.event_type == ""
    assert cursus.CursusError("x").proof is None


# -- transactional stream appends


def txn_producer(bootstrap: str, transactional_id: str) -> cursus.Producer:
    return cursus.Producer(
        bootstrap_servers=bootstrap, transactional_id=transactional_id, linger_ms=1
    )


def test_append_stream_commits_with_a_publish_and_offsets(
    bootstrap: str, store: cursus.EventStore, name: str
) -> None:
    ledger, source, sink = name + "-ledger", name + "-in", name + "-out"
    create(bootstrap, ledger, event_sourcing=True)
    create(bootstrap, source)
    create(bootstrap, sink)
    with cursus.Producer(bootstrap_servers=bootstrap) as plain:
        for i in range(3):
            plain.send_and_wait(source, b"cmd-%d" % i)
    opened = store.append(ledger, "acct", 0, "open", event_type="Opened")
    tp = cursus.TopicPartition(source, 0)
    with cursus.Consumer(
        bootstrap_servers=bootstrap, group_id=name + "-g", fetch_max_wait_ms=50
    ) as c, txn_producer(bootstrap, name) as p:
        c.subscribe(source)
        got: List[cursus.Message] = []
        deadline = time.monotonic() + HANG_GUARD_S
        while len(got) < 3:
            assert time.monotonic() < deadline, "hang guard"
            got.extend(c.poll(0.5, max_records=3 - len(got)))
        p.init_transactions()
        p.begin_transaction()
        credited = p.append_stream(
            ledger, "acct", 1, "credit 3", event_type="Credited", metadata="m", event_id="txn-ev-1"
        )
        assert credited.version == 2
        assert credited.partition == opened.partition
        assert credited.offset > opened.offset
        p.send(sink, b"receipt")
        p.send_offsets_to_transaction(c)

        # Not visible before the commit, and the aggregate is reserved.
        assert store.stream_version(ledger, "acct") == 1
        with pytest.raises(cursus.ConflictError) as info:
            store.append(ledger, "acct", 1, "race", event_type="Debited")
        assert info.value.code == "stream_version_reserved"
        assert info.value.fields.get("transactional_id") == name
        assert c.committed(tp) is None

        p.commit_transaction()
        assert c.committed(tp) == 3

    assert store.stream_version(ledger, "acct") == 2
    events = list(store.read_stream(ledger, "acct"))
    assert [(e.version, e.text, e.event_type) for e in events] == [
        (1, "open", "Opened"),
        (2, "credit 3", "Credited"),
    ]
    assert (events[1].offset, events[1].metadata) == (credited.offset, "m")
    with cursus.Consumer(
        bootstrap_servers=bootstrap, group_id=name + "-r", fetch_max_wait_ms=50
    ) as out:
        out.subscribe(sink)
        values: List[bytes] = []
        deadline = time.monotonic() + HANG_GUARD_S
        while not values:
            assert time.monotonic() < deadline, "hang guard"
            values.extend(m.value for m in out.poll(0.5))
    assert values == [b"receipt"]


def test_an_aborted_append_stream_leaves_no_version(
    bootstrap: str, store: cursus.EventStore, name: str
) -> None:
    create(bootstrap, name, event_sourcing=True)
    store.append(name, "acct", 0, "open", event_type="Opened")
    with txn_producer(bootstrap, name) as p:
        p.init_transactions()
        with pytest.raises(RuntimeError):
            with p.transaction():
                assert p.append_stream(name, "acct", 1, "never").version == 2
                raise RuntimeError("processing failed")
        # The aggregate is free again: the next writer takes version 2.
        assert store.stream_version(name, "acct") == 1
        after = store.append(name, "acct", 1, "after", event_type="Debited")
        assert after.version == 2
        # A later transaction appends after it.
        with p.transaction():
            assert p.append_stream(name, "acct", 2, "third").version == 3
    assert [e.text for e in store.read_stream(name, "acct")] == ["open", "after", "third"]


def test_append_stream_needs_an_open_transaction(bootstrap: str, name: str) -> None:
    create(bootstrap, name, event_sourcing=True)
    with txn_producer(bootstrap, name) as p:
        with pytest.raises(cursus.ValidationError) as info:
            p.append_stream(name, "k", 0, "x")
        assert info.value.code == "invalid_transaction_state"
        p.init_transactions()
        with pytest.raises(cursus.ValidationError) as info:
            p.append_stream(name, "k", 0, "x")
        assert info.value.code == "invalid_transaction_state"
        p.begin_transaction()
        with pytest.raises(cursus.ValidationError):
            p.append_stream(name, "k", 0, "x", event_id="bad id")
        p.abort_transaction()
    with cursus.Producer(bootstrap_servers=bootstrap) as plain:
        with pytest.raises(cursus.CursusError):
            plain.append_stream(name, "k", 0, "x")
