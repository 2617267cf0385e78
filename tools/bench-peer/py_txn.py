"""The Python exactly-once row of `make bench-peer`, against one broker.

Runs in the repository's venv: `confluent-kafka` (librdkafka) for a Kafka
broker, `cursus` for ours. Prints one JSON object.

    python py_txn.py --client kafka|cursus --bootstrap HOST:PORT \
        --topic TOPIC --records N --per-txn K

Fills TOPIC-in (4 partitions, 100-byte records round-robin) with a plain
producer, untimed; then the exactly-once loop: a read_committed group member
consumes, every record is transformed (its bytes reversed) and produced to
TOPIC-out on the same partition by a transactional producer (acks=all,
idempotent, linger 5 ms; `init_transactions` untimed), and the consumed
offsets are committed in the transaction (`send_offsets_to_transaction`).
Exactly K records per transaction (what a poll returns beyond that waits
for the next one). Records/s from the first record consumed to the last
transaction committed. The same loop as core/examples/bench_txn.rs and
java/KafkaTxnBench.java.
"""

from __future__ import annotations

import argparse
import collections
import json
import time
from typing import Any, Callable, Deque, Dict, List, Tuple

PARTITIONS = 4
PAYLOAD = bytes(ord("a") + i % 26 for i in range(100))
LOOP_LIMIT_S = 600.0


class Kafka:
    """librdkafka through confluent-kafka."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        import confluent_kafka
        from confluent_kafka.admin import AdminClient, NewTopic

        self.ck = confluent_kafka
        self.bootstrap = bootstrap
        self.topic = topic
        admin = AdminClient({"bootstrap.servers": bootstrap})
        futures = admin.create_topics([NewTopic(f"{topic}-{s}", PARTITIONS, 1)
                                       for s in ("in", "out")])
        for f in futures.values():
            f.result(30)

    def fill(self, records: int) -> None:
        p = self.ck.Producer({"bootstrap.servers": self.bootstrap, "acks": 1, "linger.ms": 5,
                              "queue.buffering.max.messages": max(records + 1000, 100_000)})
        for i in range(records):
            p.produce(f"{self.topic}-in", PAYLOAD, partition=i % PARTITIONS)
        if p.flush(120):
            raise RuntimeError("the input topic was not filled")

    def eos(self, records: int, per_txn: int) -> Tuple[float, int]:
        ck = self.ck
        consumer = ck.Consumer({
            "bootstrap.servers": self.bootstrap, "group.id": f"g-{self.topic}",
            "auto.offset.reset": "earliest", "enable.auto.commit": False,
            "isolation.level": "read_committed",
        })
        producer = ck.Producer({
            "bootstrap.servers": self.bootstrap, "transactional.id": f"eos-{self.topic}",
            "acks": "all", "enable.idempotence": True, "linger.ms": 5,
        })
        producer.init_transactions(30)
        consumer.subscribe([f"{self.topic}-in"])
        output = f"{self.topic}-out"

        def poll(n: int) -> List[Any]:
            batch = consumer.consume(num_messages=n, timeout=1.0)
            for m in batch:
                if m.error() is not None:
                    raise RuntimeError(f"consume: {m.error()}")
            return batch

        def produce_txn(batch: List[Any]) -> None:
            producer.begin_transaction()
            offsets: Dict[Tuple[str, int], int] = {}
            for m in batch:
                producer.produce(output, m.value()[::-1], partition=m.partition())
                offsets[(m.topic(), m.partition())] = m.offset() + 1
            producer.send_offsets_to_transaction(
                [ck.TopicPartition(t, p, o) for (t, p), o in offsets.items()],
                consumer.consumer_group_metadata())
            producer.commit_transaction()

        try:
            return run_loop(records, per_txn, poll, produce_txn)
        finally:
            consumer.close()


class Cursus:
    """Our Python binding."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        import cursus

        self.cursus = cursus
        self.bootstrap = bootstrap
        self.topic = topic
        with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
            for s in ("in", "out"):
                admin.create_topic(f"{topic}-{s}", partitions=PARTITIONS)

    def fill(self, records: int) -> None:
        with self.cursus.Producer(bootstrap_servers=self.bootstrap, acks=1, linger_ms=5,
                                  buffer_memory=64 * 1024 * 1024 + records * 256) as p:
            for i in range(records):
                p.send(f"{self.topic}-in", PAYLOAD, partition=i % PARTITIONS)
            p.flush(120)

    def eos(self, records: int, per_txn: int) -> Tuple[float, int]:
        c = self.cursus
        output = f"{self.topic}-out"
        with c.Consumer(bootstrap_servers=self.bootstrap, group_id=f"g-{self.topic}",
                        auto_offset_reset="earliest", enable_auto_commit=False,
                        isolation_level="read_committed", max_poll_records=per_txn) as consumer, \
             c.Producer(bootstrap_servers=self.bootstrap, transactional_id=f"eos-{self.topic}",
                        acks="all", enable_idempotence=True, linger_ms=5,
                        batch_size=262_144) as producer:
            producer.init_transactions()
            consumer.subscribe(f"{self.topic}-in")

            def produce_txn(batch: List[Any]) -> None:
                producer.begin_transaction()
                offsets: Dict[Any, int] = {}
                for m in batch:
                    producer.send(output, m.value[::-1], partition=m.partition)
                    offsets[c.TopicPartition(m.topic, m.partition)] = m.offset + 1
                producer.send_offsets_to_transaction(consumer, offsets)
                producer.commit_transaction()

            return run_loop(records, per_txn, lambda n: consumer.poll(1.0, max_records=n),
                            produce_txn)


def run_loop(records: int, per_txn: int, poll: Callable[[int], List[Any]],
             produce_txn: Callable[[List[Any]], None]) -> Tuple[float, int]:
    """The loop both clients share: `poll(n)` returns up to n records,
    `produce_txn(batch)` is one transaction. Returns (records/s from the
    first record consumed to the last commit, transactions)."""
    pending: Deque[Any] = collections.deque()
    deadline = time.monotonic() + LOOP_LIMIT_S
    start = 0.0
    done = transactions = 0
    while done < records:
        want = min(per_txn, records - done)
        while len(pending) < want:
            if time.monotonic() > deadline:
                raise RuntimeError(f"consumed {done + len(pending)} of {records}")
            batch = poll(per_txn)
            if batch and not start:
                start = time.perf_counter()
            pending.extend(batch)
        produce_txn([pending.popleft() for _ in range(want)])
        done += want
        transactions += 1
    return records / (time.perf_counter() - start), transactions


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--client", choices=["kafka", "cursus"], required=True)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--records", type=int, required=True)
    parser.add_argument("--per-txn", type=int, required=True)
    args = parser.parse_args()
    client = (Kafka if args.client == "kafka" else Cursus)(args.bootstrap, args.topic)
    client.fill(args.records)
    rate, transactions = client.eos(args.records, args.per_txn)
    print(json.dumps({"mode": "eos", "client": args.client, "records": args.records,
                      "per_txn": args.per_txn, "transactions": transactions,
                      "records_per_s": rate}))


if __name__ == "__main__":
    main()
