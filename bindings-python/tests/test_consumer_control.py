"""Consumer control (seek, position, pause/resume, committed offsets of many
partitions), the rebalance listener, and every field of a record."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

import cursus
from cursus import TopicPartition


def produce(bootstrap: str, topic: str, per_partition: Dict[int, int]) -> None:
    with cursus.Producer(bootstrap_servers=bootstrap) as p:
        for partition, count in per_partition.items():
            for i in range(count):
                p.send(topic, b"%d-%d" % (partition, i), partition=partition)


def take(consumer: cursus.Consumer, count: int, rounds: int = 200) -> List[cursus.Message]:
    got: List[cursus.Message] = []
    for _ in range(rounds):
        got += consumer.poll(0.1, max_records=count - len(got))
        if len(got) >= count:
            break
    return got


def test_seek_position_pause_resume_and_committed(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=3)
    produce(bootstrap, name, {0: 10, 1: 10})
    tp0, tp1, tp2 = (TopicPartition(name, p) for p in range(3))
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name, auto_offset_reset="earliest",
                         enable_auto_commit=False) as c:
        # seek inside on_assign: partition 0 starts at offset 5.
        c.subscribe(name, on_assign=lambda parts: c.seek(tp0, 5) if tp0 in parts else None)
        got = take(c, 15)
        assert sorted((m.partition, m.offset) for m in got) == (
            [(0, o) for o in range(5, 10)] + [(1, o) for o in range(10)]
        )
        assert c.position(tp0) == 10 and c.position(tp1) == 10

        # Seek back: the records are returned again.
        c.seek(tp1, 8)
        assert [(m.partition, m.offset) for m in take(c, 2)] == [(1, 8), (1, 9)]

        # Paused partitions return nothing until resumed; positions are kept.
        c.pause([tp1])
        c.pause([tp1])  # harmless
        assert c.paused() == [tp1]
        produce(bootstrap, name, {0: 2, 1: 2})
        assert {m.partition for m in take(c, 2)} == {0}
        assert c.poll(0.3) == []
        c.resume([tp1])
        assert c.paused() == []
        assert [(m.partition, m.offset) for m in take(c, 2)] == [(1, 10), (1, 11)]

        # committed() of a list: a dict in the order asked, None where none.
        assert c.committed([tp2, tp0]) == {tp2: None, tp0: None}
        c.commit()
        committed = c.committed([tp0, tp1, tp2])
        assert list(committed) == [tp0, tp1, tp2]
        assert committed == {tp0: 12, tp1: 12, tp2: None}
        assert c.committed(tp0) == 12  # one partition: the offset itself

        # Only assigned partitions can be sought.
        with pytest.raises(cursus.ValidationError) as e:
            c.seek(TopicPartition(name, 7), 0)
        assert e.value.code == "partition_not_assigned"
        with pytest.raises(TypeError):
            c.pause(tp0)  # type: ignore[arg-type]
    with pytest.raises(cursus.ClosedError):
        c.position(tp0)


class Recorder(cursus.RebalanceListener):
    """Records events and the thread they ran on; polls from inside."""

    def __init__(self, consumer: cursus.Consumer) -> None:
        self.consumer = consumer
        self.events: List[Tuple[str, List[TopicPartition]]] = []
        self.threads: List[str] = []
        self.poll_error: Optional[BaseException] = None
        self.commit_error: Optional[BaseException] = None

    def _thread(self) -> str:
        return Path(f"/proc/self/task/{threading.get_native_id()}/comm").read_text().strip()

    def on_partitions_assigned(self, partitions: List[TopicPartition]) -> None:
        self.events.append(("assigned", sorted(partitions, key=lambda tp: tp.partition)))
        self.threads.append(self._thread())
        try:
            self.consumer.poll(0)
        except cursus.ValidationError as e:
            self.poll_error = e

    def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None:
        self.events.append(("revoked", sorted(partitions, key=lambda tp: tp.partition)))
        try:
            self.consumer.commit()
        except cursus.CursusError as e:
            self.commit_error = e


def test_rebalance_listener_commits_at_close_and_refuses_poll(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=2)
    produce(bootstrap, name, {0: 3, 1: 3})
    c = cursus.Consumer(bootstrap_servers=bootstrap, group_id=name, auto_offset_reset="earliest",
                        enable_auto_commit=False)
    recorder = Recorder(c)
    c.set_rebalance_listener(recorder)
    c.subscribe(name)
    assert len(take(c, 6)) == 6
    tps = [TopicPartition(name, 0), TopicPartition(name, 1)]
    assert recorder.events == [("assigned", tps)]
    # The listener ran on the consumer's listener thread, not an I/O thread,
    # and poll from inside it failed.
    assert recorder.threads == ["cursus-rebalance"[:15]]  # comm: 15 characters
    assert isinstance(recorder.poll_error, cursus.ValidationError)
    c.close()  # revoked: the listener commits
    assert recorder.events[-1] == ("revoked", tps)
    assert recorder.commit_error is None
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as other:
        assert other.committed(tps) == {tps[0]: 3, tps[1]: 3}


def test_a_listener_that_raises_is_logged_and_the_consumer_goes_on(
    bootstrap: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    produce(bootstrap, name, {0: 2})
    revoked: List[List[TopicPartition]] = []

    def boom(partitions: List[TopicPartition]) -> None:
        raise RuntimeError("listener failed on purpose")

    with caplog.at_level(logging.ERROR, logger="cursus"):
        with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name,
                             auto_offset_reset="earliest") as c:
            c.subscribe([name], on_assign=boom, on_revoke=revoked.append)
            assert len(take(c, 2)) == 2
    assert revoked == [[TopicPartition(name, 0)]]
    failures = [r for r in caplog.records if "on_assign" in r.getMessage()]
    assert failures and failures[0].name == "cursus"
    assert failures[0].exc_info is not None and "on purpose" in str(failures[0].exc_info[1])


def test_bad_listeners_are_refused(bootstrap: str, name: str) -> None:
    # (A loss without on_partitions_lost: see
    # test_a_loss_is_told_as_a_revocation_without_on_partitions_lost.)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as c:
        with pytest.raises(TypeError):
            c.set_rebalance_listener(object())  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            c.subscribe(name, on_assign=42)  # type: ignore[arg-type]
        c.set_rebalance_listener(None)


def test_records_carry_every_field(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
        admin.create_topic(name + "-es", partitions=1, event_sourcing=True)
    with cursus.Producer(bootstrap_servers=bootstrap) as p:
        stamped = p.send_and_wait(name, b"stamped", key=b"k", timestamp=1234567)
        assert stamped.timestamp == 1234567
        now = p.send_and_wait(name, b"nokey")
        empty = p.send_and_wait(name, b"emptykey", key=b"")
    with cursus.EventStore(bootstrap_servers=bootstrap) as store:
        store.append(name + "-es", "agg-1", 0, "{}", event_type="Opened",
                     metadata='{"by":"py"}', schema_version=2)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name, auto_offset_reset="earliest") as c:
        c.subscribe([name, name + "-es"])
        got = sorted(take(c, 4), key=lambda m: (m.topic, m.offset))
    plain, event = got[:3], got[3]
    assert [(m.key, m.value) for m in plain] == [(b"k", b"stamped"), (None, b"nokey"), (None, b"emptykey")]
    # The delivery report's timestamp is what consumers read.
    assert [m.timestamp for m in plain] == [1234567, now.timestamp, empty.timestamp]
    for m in plain:
        assert (m.metadata, m.event_type, m.schema_version, m.aggregate_version, m.event_id) == (
            None, None, None, None, None)
    assert event.key == b"agg-1"
    assert (event.event_type, event.schema_version, event.aggregate_version) == ("Opened", 2, 1)
    assert event.metadata == '{"by":"py"}'
    assert "event_type='Opened'" in repr(event) or 'event_type="Opened"' in repr(event)


def test_a_loss_is_told_as_a_revocation_without_on_partitions_lost(tmp_path: Path, name: str) -> None:
    # Heartbeats far apart and a short session: the broker expires the
    # member before its next heartbeat, which then learns it is gone.
    from conftest import Broker

    config = tmp_path / "broker.toml"
    config.write_text("group_session_timeout_ms = 300\n")
    broker = Broker("--config", str(config))
    try:
        with cursus.AdminClient(bootstrap_servers=broker.addr) as admin:
            admin.create_topic(name, partitions=1)
        told: List[str] = []

        class WithoutLost(cursus.RebalanceListener):
            def on_partitions_assigned(self, partitions: List[TopicPartition]) -> None:
                told.append("assigned")

            def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None:
                told.append(f"revoked {[p.partition for p in partitions]}")

        with cursus.Consumer(bootstrap_servers=broker.addr, group_id=name, heartbeat_interval_ms=1500) as c:
            c.set_rebalance_listener(WithoutLost())
            c.subscribe(name)
            for _ in range(400):
                if len(told) >= 3:
                    break
                c.poll(0.05)
        assert told[:3] == ["assigned", "revoked [0]", "assigned"]
    finally:
        broker.stop()
