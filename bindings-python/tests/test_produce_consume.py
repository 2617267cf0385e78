from __future__ import annotations

import threading
from typing import Dict, List, Optional, Tuple

import cursus
from conftest import consume


def test_produce_then_consume_every_payload_kind(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=2)
    big = bytes(range(256)) * 64  # 16 KiB: the zero-copy path
    payloads = [b"plain", bytearray(b"array"), memoryview(b"view"), b"", b"\x00\xff\x00", big]
    with cursus.Producer(bootstrap_servers=bootstrap, linger_ms=1) as producer:
        first = producer.send_and_wait(name, b"first", key=b"k", partition=0)
        assert first.topic == name and first.partition == 0 and first.offset == 0
        deliveries = [producer.send(name, p, key="key") for p in payloads]
        metas = [d.result(timeout=30) for d in deliveries]
        assert all(m.offset is not None for m in metas)
        assert all(d.done() for d in deliveries)
        producer.flush(timeout=30)

    with cursus.Consumer(
        bootstrap_servers=bootstrap, group_id=name, fetch_max_wait_ms=50
    ) as consumer:
        consumer.subscribe(name)
        got = consume(consumer, 1 + len(payloads))
        assert len(got) == 1 + len(payloads)
        values = sorted(bytes(m.payload) for m in got)
        assert values == sorted([b"first"] + [bytes(p) for p in payloads])
        assert all(isinstance(m.payload, bytes) and m.value == m.payload for m in got)
        keys = {m.key for m in got}
        assert keys == {b"k", b"key"}
        consumer.commit()
        committed = {
            tp.partition: consumer.committed(tp) for tp in consumer.assignment()
        }
        per_partition: Dict[int, int] = {}
        for m in got:
            per_partition[m.partition] = max(per_partition.get(m.partition, 0), m.offset + 1)
        for partition, next_offset in per_partition.items():
            assert committed[partition] == next_offset


def test_delivery_callbacks_run_once_each(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    outcomes: List[Tuple[Optional[cursus.CursusError], Optional[cursus.RecordMetadata]]] = []
    lock = threading.Lock()
    done = threading.Event()

    def on_delivery(
        err: Optional[cursus.CursusError], meta: Optional[cursus.RecordMetadata]
    ) -> None:
        with lock:
            outcomes.append((err, meta))
            if len(outcomes) == 20:
                done.set()

    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(20):
            assert producer.send(name, b"cb%d" % i, on_delivery=on_delivery) is None
        producer.flush()
        assert done.wait(30)
    assert all(err is None and meta is not None for err, meta in outcomes)
    assert sorted(m.offset or 0 for _, m in outcomes if m is not None) == list(range(20))


def test_explicit_offsets_and_async_commit(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        for i in range(5):
            producer.send(name, b"%d" % i)
    tp = cursus.TopicPartition(name, 0)
    assert tp == cursus.TopicPartition(name, 0) and hash(tp) == hash(cursus.TopicPartition(name, 0))
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name, fetch_max_wait_ms=50) as c:
        c.subscribe([name])
        assert len(consume(c, 5)) == 5
        c.commit_offsets({tp: 2})
        assert c.committed(tp) == 2
        result: List[Optional[cursus.CursusError]] = []
        finished = threading.Event()

        def on_commit(err: Optional[cursus.CursusError]) -> None:
            result.append(err)
            finished.set()

        c.commit_async(on_commit)
        assert finished.wait(30)
        assert result == [None]
        assert c.committed(tp) == 5
    # A new member of the group resumes after the committed offset.
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        producer.send(name, b"after")
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name, fetch_max_wait_ms=50) as c:
        c.subscribe(name)
        got = consume(c, 1)
        assert [m.payload for m in got] == [b"after"]


def test_poll_without_records_returns_empty(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as c:
        c.subscribe(name)
        assert c.poll(0.3) == []


def test_messages_of_several_topics_keep_their_own_topic(bootstrap: str, name: str) -> None:
    # A poll's messages share one `str` per topic (issue #20): records of
    # several topics, interleaved in the polls, must each keep their own.
    topics = [name + "-a", name + "-b", name + "-c"]
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        for t in topics:
            admin.create_topic(t, partitions=2)
    with cursus.Producer(bootstrap_servers=bootstrap, linger_ms=5) as producer:
        for i in range(60):
            t = topics[i % 3]
            producer.send(t, ("%s|%d" % (t, i)).encode(), key=b"k%d" % i)
        producer.flush(timeout=30)
    with cursus.Consumer(
        bootstrap_servers=bootstrap, group_id=name, auto_offset_reset="earliest"
    ) as consumer:
        consumer.subscribe(topics)
        got = consume(consumer, 60)
    assert len(got) == 60
    for m in got:
        assert type(m.topic) is str and m.topic is m.topic
        assert m.payload.decode().split("|")[0] == m.topic
        assert m.key == b"k" + m.payload.split(b"|")[1]
        assert repr(m).startswith('Message(topic="%s", partition=%d' % (m.topic, m.partition))
    assert sorted(int(m.payload.split(b"|")[1]) for m in got) == list(range(60))
