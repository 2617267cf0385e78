"""The synchronous event store against the real broker
(docs/event-sourcing.md): appends with every field read back, version
conflicts, snapshots, paged stream/history/browse reads, the aggregate
cycle with automatic snapshots, and the errors of a topic without event
sourcing, a closed store and bad arguments."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, Iterator, List

import pytest

import cursus


@pytest.fixture
def topic(bootstrap: str, name: str) -> str:
    """An event-sourcing topic with three partitions."""
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        info = admin.create_topic(name, partitions=3, event_sourcing=True)
    assert info.event_sourcing
    return name


@pytest.fixture
def store(bootstrap: str) -> Iterator[cursus.EventStore]:
    with cursus.EventStore(bootstrap_servers=bootstrap) as s:
        yield s


def append_n(store: cursus.EventStore, topic: str, key: str, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        store.append(topic, key, i, f"e{i + 1}", event_type="Counted")


def test_append_and_read_back_every_field(store: cursus.EventStore, topic: str) -> None:
    assert store.stream_version(topic, "order-1") == 0
    first = store.append(
        topic,
        "order-1",
        0,
        '{"total": 5}',
        event_type="OrderCreated",
        metadata='{"user": "ann"}',
        schema_version=2,
    )
    assert first.version == 1
    second = store.append(topic, "order-1", 1, "caf\u00e9".encode(), event_type="Renamed")
    assert second == cursus.Appended(2, second.offset, first.partition)
    assert second.offset > first.offset
    assert store.stream_version(topic, "order-1") == 2

    reader = store.read_stream(topic, "order-1")
    assert reader.snapshot is None
    assert reader.partition == first.partition
    events = list(reader)
    assert [e.version for e in events] == [1, 2]
    e1, e2 = events
    assert (e1.topic, e1.partition, e1.offset, e1.key) == (topic, first.partition, first.offset, b"order-1")
    assert e1.event_type == "OrderCreated"
    assert e1.schema_version == 2
    assert e1.metadata == '{"user": "ann"}'
    assert e1.payload == e1.value == b'{"total": 5}'
    assert json.loads(e1.text) == {"total": 5}
    assert e1.timestamp > 0
    assert (e2.offset, e2.event_type, e2.schema_version, e2.metadata) == (second.offset, "Renamed", 1, "")
    assert e2.text == "caf\u00e9"
    assert "OrderCreated" in repr(e1)


def test_version_conflict(store: cursus.EventStore, topic: str) -> None:
    store.append(topic, "acct", 0, "open", event_type="Opened")
    store.append(topic, "acct", 1, "first writer")
    with pytest.raises(cursus.ConflictError) as info:
        store.append(topic, "acct", 1, "second writer")
    e = info.value
    assert e.code == "version_conflict"
    assert e.error_class == "conflict"
    assert not e.retryable
    assert e.fields["current"] == "2"
    assert "expected" in e.fields
    # Nothing was appended; appending at the current version works.
    assert store.stream_version(topic, "acct") == 2
    assert store.append(topic, "acct", 2, "second writer").version == 3
    assert [e.text for e in store.read_stream(topic, "acct")] == ["open", "first writer", "second writer"]


def test_appending_to_a_new_aggregate_at_a_later_version_conflicts(store: cursus.EventStore, topic: str) -> None:
    with pytest.raises(cursus.ConflictError) as info:
        store.append(topic, "fresh", 3, "x")
    assert info.value.fields["current"] == "0"


def test_snapshots(store: cursus.EventStore, topic: str) -> None:
    assert store.read_snapshot(topic, "s") is None
    append_n(store, topic, "s", 5)
    store.save_snapshot(topic, "s", 3, "state@3")
    assert store.read_snapshot(topic, "s") == cursus.Snapshot(3, "state@3")

    # The stream read starts after the snapshot.
    reader = store.read_stream(topic, "s")
    assert reader.snapshot == cursus.Snapshot(3, "state@3")
    assert [e.version for e in reader] == [4, 5]
    # From a version after the snapshot: no snapshot, the events from there.
    reader = store.read_stream(topic, "s", 4)
    assert reader.snapshot is None
    assert [e.version for e in reader] == [4, 5]

    # A later snapshot replaces it (bytes holding UTF-8 are text too).
    store.save_snapshot(topic, "s", 5, "\u00e9tat@5".encode())
    assert store.read_snapshot(topic, "s") == cursus.Snapshot(5, "\u00e9tat@5")
    assert list(store.read_stream(topic, "s")) == []

    with pytest.raises(cursus.ConflictError) as info:
        store.save_snapshot(topic, "s", 6, "ahead of the stream")
    assert info.value.code == "snapshot_version_exceeds_stream"


def test_read_snapshot_of_a_state_with_whitespace(store: cursus.EventStore, topic: str) -> None:
    append_n(store, topic, "ws", 1)
    store.save_snapshot(topic, "ws", 1, '{"balance": 5}')
    # The stream read carries the snapshot in its JSON envelope: intact.
    assert store.read_stream(topic, "ws").snapshot == cursus.Snapshot(1, '{"balance": 5}')
    assert store.read_snapshot(topic, "ws") == cursus.Snapshot(1, '{"balance": 5}')


def test_text_is_kept_except_surrounding_whitespace(store: cursus.EventStore, topic: str) -> None:
    """Payload and metadata are the trailing text of a command line: inner
    spaces and newlines are kept, surrounding whitespace is not, and an
    empty payload is refused."""
    store.append(topic, "t", 0, "a b\nc", metadata="x y\nz")
    store.append(topic, "t", 1, "  padded  ", metadata=" ")
    events = list(store.read_stream(topic, "t"))
    assert [(e.text, e.metadata) for e in events] == [("a b\nc", "x y\nz"), ("padded", "")]
    with pytest.raises(cursus.ValidationError) as info:
        store.append(topic, "t", 2, "")
    assert info.value.code == "missing_message"


def test_read_stream_pages(store: cursus.EventStore, topic: str) -> None:
    append_n(store, topic, "paged", 5)
    reader = store.read_stream(topic, "paged", max_events=2)
    assert reader.pages_read == 1  # the first page is read at the call
    assert reader.has_more
    pages = list(reader.pages())
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [p.has_more for p in pages] == [True, True, False]
    assert [e.version for p in pages for e in p.events] == [1, 2, 3, 4, 5]
    assert reader.pages_read == 3
    assert not reader.has_more
    assert list(reader) == []

    # Iterating events reads the pages as it goes.
    reader = store.read_stream(topic, "paged", 2, max_events=2)
    assert [e.version for e in reader] == [2, 3, 4, 5]
    assert reader.pages_read == 2


def test_history(store: cursus.EventStore, topic: str) -> None:
    append_n(store, topic, "h", 6)
    store.save_snapshot(topic, "h", 4, "ignored by history")
    reader = store.history(topic, "h", max_records=4)
    assert reader.snapshot is None
    assert [e.version for e in reader] == [1, 2, 3, 4, 5, 6]
    assert reader.pages_read == 2
    assert reader.completeness == "complete"
    assert reader.head_version == 6

    reader = store.history(topic, "h", 2, 4)
    pages = list(reader.pages())
    assert [e.text for p in pages for e in p.events] == ["e2", "e3", "e4"]
    assert pages[-1].completeness == "complete"
    assert pages[-1].head_version == 6


def test_browse(bootstrap: str, store: cursus.EventStore, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    with cursus.Producer(bootstrap_servers=bootstrap, linger_ms=1) as producer:
        for i in range(9):
            producer.send(name, b"r%d" % i, key=b"k" if i == 0 else None)
        producer.flush()

    reader = store.browse(name, 0, max_records=4)
    records = list(reader)
    assert [r.offset for r in records] == list(range(9))
    assert [r.payload for r in records] == [b"r%d" % i for i in range(9)]
    assert reader.pages_read == 3
    assert reader.readable_end_offset == 9
    assert reader.earliest_offset == 0
    first, other = records[0], records[1]
    assert (first.key, first.version, first.event_type) == (b"k", 0, "")
    assert other.key == b""

    pages = list(store.browse(name, 0, 2, 7, max_records=3).pages())
    assert [[r.offset for r in p.events] for p in pages] == [[2, 3, 4], [5, 6]]
    assert [p.readable_end_offset for p in pages] == [7, 7]  # lowered to to_offset
    assert list(store.browse(name, 0, 9)) == []


def test_browse_an_event_sourcing_topic(store: cursus.EventStore, topic: str) -> None:
    appended = store.append(topic, "b", 0, "only", event_type="Made", metadata="m")
    events = list(store.browse(topic, appended.partition))
    assert [(e.key, e.version, e.event_type, e.metadata, e.text) for e in events] == [
        (b"b", 1, "Made", "m", "only")
    ]


def count(state: int, event: cursus.StoredEvent) -> int:
    return state + 1


def test_aggregate_cycle_with_automatic_snapshots(store: cursus.EventStore, topic: str) -> None:
    agg = store.load_aggregate(topic, "ctr", 0, count, deserialize=int, serialize=str, snapshot_every=3)
    assert (agg.state, agg.version, agg.loaded_snapshot, agg.loaded_events) == (0, 0, None, 0)
    for i in range(7):
        appended = agg.append("Counted", f"tick-{i}")
        assert appended.version == i + 1
    assert (agg.state, agg.version, agg.snapshot_version) == (7, 7, 6)
    assert not agg.snapshot_due
    assert store.read_snapshot(topic, "ctr") == cursus.Snapshot(6, "6")

    again = store.load_aggregate(topic, "ctr", 0, count, deserialize=int, serialize=str, snapshot_every=3)
    assert again.loaded_snapshot == cursus.Snapshot(6, "6")
    assert (again.state, again.version, again.loaded_events) == (7, 7, 1)
    again.append("Counted", "more-0")
    again.append("Counted", "more-1")
    assert store.read_snapshot(topic, "ctr") == cursus.Snapshot(9, "9")


def test_aggregate_folds_the_events_it_appends(store: cursus.EventStore, topic: str) -> None:
    def apply(state: Dict[str, int], event: cursus.StoredEvent) -> Dict[str, int]:
        amount = json.loads(event.text)["amount"]
        sign = 1 if event.event_type == "Deposited" else -1
        return {"balance": state["balance"] + sign * amount, "events": state["events"] + 1}

    agg = store.load_aggregate(topic, "acct", {"balance": 0, "events": 0}, apply)
    agg.append("Deposited", json.dumps({"amount": 10}), metadata="m", schema_version=2)
    agg.append("Withdrawn", json.dumps({"amount": 3}))
    assert agg.state == {"balance": 7, "events": 2}
    assert agg.snapshot_every == cursus._eventstore.DEFAULT_SNAPSHOT_EVERY
    assert store.read_snapshot(topic, "acct") is None  # no serialize: no snapshots

    loaded = store.load_aggregate(topic, "acct", {"balance": 0, "events": 0}, apply)
    assert (loaded.state, loaded.version) == (agg.state, 2)
    with pytest.raises(ValueError):
        loaded.save_snapshot()  # needs serialize


def test_aggregate_conflict_and_retry(store: cursus.EventStore, topic: str) -> None:
    a = store.load_aggregate(topic, "shared", 0, count)
    b = store.load_aggregate(topic, "shared", 0, count)
    a.append("Counted", "a")
    with pytest.raises(cursus.ConflictError) as info:
        b.append("Counted", "b")
    assert info.value.code == "version_conflict"
    assert info.value.fields["current"] == "1"
    assert (b.state, b.version) == (0, 0)  # unchanged by the failed append

    # The documented pattern: reload and decide again.
    b.reload()
    assert (b.state, b.version) == (1, 1)
    b.append("Counted", "b")
    assert (b.state, b.version) == (2, 2)
    assert [e.text for e in store.read_stream(topic, "shared")] == ["a", "b"]


def test_aggregate_with_a_snapshot_needs_deserialize(store: cursus.EventStore, topic: str) -> None:
    append_n(store, topic, "snap", 2)
    store.save_snapshot(topic, "snap", 2, "2")
    with pytest.raises(ValueError, match="deserialize"):
        store.load_aggregate(topic, "snap", 0, count)
    agg = store.load_aggregate(topic, "snap", 0, count, deserialize=int)
    assert (agg.state, agg.version, agg.loaded_events) == (2, 2, 0)


def test_a_failed_automatic_snapshot_is_logged_and_the_append_stands(
    store: cursus.EventStore, topic: str, caplog: pytest.LogCaptureFixture
) -> None:
    def serialize(state: int) -> str:
        raise RuntimeError("cannot serialise")

    agg = store.load_aggregate(topic, "failing", 0, count, deserialize=int, serialize=serialize, snapshot_every=1)
    with caplog.at_level(logging.WARNING, logger="cursus"):
        stored = agg.append("Counted", "x")
        assert cursus._cursus._flush_logs(30.0)  # the engine logged it (warn)
    assert stored.version == 1
    assert (agg.state, agg.version, agg.snapshot_version) == (1, 1, 0)
    assert agg.snapshot_due  # tried again after the next append
    assert "cannot serialise" in caplog.text
    assert "automatic snapshot failed" in caplog.text
    assert store.stream_version(topic, "failing") == 1


def test_aggregate_append_keeps_the_event_id_and_returns_the_stored_event(
    store: cursus.EventStore, topic: str
) -> None:
    folded: List[cursus.StoredEvent] = []

    def apply(state: int, event: cursus.StoredEvent) -> int:
        folded.append(event)
        return state + 1

    append_n(store, topic, "neighbour", 1)
    agg = store.load_aggregate(topic, "ids", 0, apply)
    stored = agg.append("Opened", "x", metadata="m", schema_version=2, event_id="caller-1")
    (read,) = list(store.read_stream(topic, "ids"))
    assert folded == [stored]  # folded once the append succeeded
    assert (stored.offset, stored.partition, stored.version, stored.key) == (
        read.offset, read.partition, 1, read.key)
    assert (stored.metadata, stored.schema_version, stored.timestamp) == ("m", 2, 0)
    with pytest.raises(cursus.ValidationError) as info:
        agg.append("Opened", "y", event_id="two words")  # the engine's rule
    assert info.value.code == "invalid_argument"
    assert (agg.version, len(folded)) == (1, 1)


def test_topic_without_event_sourcing(bootstrap: str, store: cursus.EventStore, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    calls: Dict[str, Callable[[], object]] = {
        "append": lambda: store.append(name, "k", 0, "x"),
        "stream_version": lambda: store.stream_version(name, "k"),
        "save_snapshot": lambda: store.save_snapshot(name, "k", 1, "s"),
        "read_snapshot": lambda: store.read_snapshot(name, "k"),
        "read_stream": lambda: store.read_stream(name, "k"),
        "history": lambda: store.history(name, "k"),
    }
    for call_name, call in calls.items():
        with pytest.raises(cursus.ValidationError) as info:
            call()
        assert info.value.code == "event_sourcing_not_enabled", call_name
        assert info.value.fields.get("topic") == name, call_name
    # Browsing reads any topic.
    assert list(store.browse(name, 0)) == []


def test_missing_topic(store: cursus.EventStore, name: str) -> None:
    with pytest.raises(cursus.NotFoundError):
        store.append(name, "k", 0, "x")


def test_bad_arguments(store: cursus.EventStore, topic: str) -> None:
    for key in ("", "two words", "tab\there"):
        with pytest.raises(cursus.ValidationError) as info:
            store.append(topic, key, 0, "x")
        assert info.value.kind == "invalid_argument"
    with pytest.raises(cursus.ValidationError):
        store.append(topic, "k", 0, b"\xff\xfe not UTF-8")
    with pytest.raises(TypeError):
        store.append(topic, "k", 0, 42)  # type: ignore[arg-type]
    with pytest.raises(OverflowError):
        store.append(topic, "k", -1, "x")
    with pytest.raises(cursus.ValidationError) as err:
        store.read_stream(topic, "k", 0)
    assert err.value.code == "invalid_from_version"
    with pytest.raises(cursus.ValidationError) as err:
        store.read_stream(topic, "k", max_events=0)
    assert err.value.code == "invalid_max_events"


def test_closed_store(bootstrap: str, topic: str) -> None:
    store = cursus.EventStore(bootstrap_servers=bootstrap)
    append_n(store, topic, "c", 3)
    reader = store.read_stream(topic, "c", max_events=1)
    assert not store.closed
    store.close()
    store.close()  # idempotent
    assert store.closed
    with pytest.raises(cursus.ClosedError):
        store.append(topic, "c", 3, "late")
    with pytest.raises(cursus.ClosedError):
        store.read_stream(topic, "c")
    # A reader's next page needs the store.
    assert next(reader).version == 1
    with pytest.raises(cursus.ClosedError):
        next(reader)


def test_stored_event_can_be_built_for_tests_of_fold_functions() -> None:
    event = cursus.StoredEvent(
        topic="t", partition=0, offset=7, key="k", version=3, event_type="Counted", payload="p"
    )
    assert (event.key, event.payload, event.schema_version, event.metadata, event.timestamp) == (
        b"k",
        b"p",
        1,
        "",
        0,
    )
    assert count(41, event) == 42


def test_public_names() -> None:
    names: List[str] = [
        "EventStore",
        "EventReader",
        "Aggregate",
        "Appended",
        "Snapshot",
        "StoredEvent",
        "Page",
    ]
    for n in names:
        assert n in cursus.__all__
        assert getattr(cursus, n).__module__ == "cursus"


def test_example_runs(bootstrap: str, name: str) -> None:
    """examples/event_sourcing.py, twice: the second run loads the first's
    snapshot and events."""
    example = Path(__file__).resolve().parents[1] / "examples" / "event_sourcing.py"
    outputs = [
        subprocess.run(
            [sys.executable, str(example), bootstrap, name, "acct"],
            capture_output=True,
            text=True,
            timeout=120,  # hang guard only
            check=True,
        ).stdout
        for _ in range(2)
    ]
    assert "withdraw 50: done" in outputs[0]
    assert "withdraw 500: refused" in outputs[0]
    assert "loaded acct: Account(balance=115, transactions=4) at version 4" in outputs[1]
    assert "(complete, head version 8)" in outputs[1]
