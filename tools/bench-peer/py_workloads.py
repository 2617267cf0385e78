"""The Python workloads of `make bench-peer`, against one broker.

Runs in the repository's venv, which has both clients: `confluent-kafka`
(librdkafka) for a Kafka broker and `cursus` for ours. Prints one JSON object.

    python py_workloads.py --client kafka|cursus --bootstrap HOST:PORT \
        --records N --roundtrips M [--size BYTES]

Workloads (100-byte records, acks=1, 4 partitions, a fresh topic each):

* produce: a cold producer (no send before the measured ones: the first
  records of a new producer are what users see) makes N fire-and-forget
  calls (`produce()` / `send()`), then one flush. Gives records/s (calls +
  flush) and the per-call cost in µs (the calls alone: queueing, no flush;
  both queues hold every record, so no call fails or waits for space).
* consume: one group member reads the N records back; records/s from the
  first record received to the last (the group join is reported apart).
* round trip: M times, one record sent and its acknowledgement awaited
  (`produce()` + `flush()` / `send_and_wait()`), with linger 5 ms and 0 ms;
  p50 / p99 in ms.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from typing import Any, Callable, Dict, List

PARTITIONS = 4


def percentile(sorted_values: List[float], q: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, int(round(q * len(sorted_values) + 0.5)) - 1))
    return sorted_values[rank]


def room_for(records: int) -> int:
    """Bytes of producer buffer that hold `records` records of 100 B (ours;
    librdkafka's queue is sized in records)."""
    return min(64 * 1024 * 1024 + records * 256, 2**32 - 1)


def round_trip_ms(one: Callable[[], None], count: int) -> Dict[str, float]:
    """Runs `one` (send a record, await its acknowledgement) `count` times."""
    for _ in range(min(20, count)):  # connections and metadata warm
        one()
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        one()
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    return {"p50_ms": percentile(samples, 0.50), "p99_ms": percentile(samples, 0.99),
            "count": count}


class Kafka:
    """librdkafka through confluent-kafka."""

    def __init__(self, bootstrap: str) -> None:
        import confluent_kafka
        from confluent_kafka.admin import AdminClient

        self.ck = confluent_kafka
        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})
        self.version = confluent_kafka.__version__
        self.librdkafka = confluent_kafka.libversion()[0]

    def create_topic(self, topic: str) -> None:
        from confluent_kafka.admin import NewTopic

        futures = self.admin.create_topics([NewTopic(topic, PARTITIONS, 1)])
        for f in futures.values():
            f.result(30)

    def producer(self, linger_ms: int, queue: int) -> Any:
        return self.ck.Producer({
            "bootstrap.servers": self.bootstrap, "acks": 1, "linger.ms": linger_ms,
            # Room for every record of the run: the calls are timed alone.
            "queue.buffering.max.messages": max(queue, 100_000),
            "queue.buffering.max.kbytes": 2_097_151,
        })

    def produce(self, topic: str, records: int, payload: bytes) -> Dict[str, float]:
        p = self.producer(5, records + 1000)
        produce = p.produce
        start = time.perf_counter()
        for _ in range(records):
            produce(topic, payload)
        calls = time.perf_counter() - start
        left = p.flush(120)
        total = time.perf_counter() - start
        if left:
            raise RuntimeError(f"{left} records not delivered")
        return {"records_per_s": records / total, "per_call_us": calls / records * 1e6}

    def consume(self, topic: str, records: int) -> Dict[str, float]:
        c = self.ck.Consumer({
            "bootstrap.servers": self.bootstrap, "group.id": f"g-{topic}",
            "auto.offset.reset": "earliest", "enable.auto.commit": True,
        })
        c.subscribe([topic])
        joined = time.perf_counter()
        got, first, start = 0, 0, 0.0
        deadline = time.monotonic() + 300
        while got < records and time.monotonic() < deadline:
            # consume() waits for num_messages or the timeout: never ask
            # for more than is left, or the last call waits out the timeout.
            batch = c.consume(num_messages=min(10_000, records - got), timeout=1.0)
            n = sum(1 for m in batch if m.error() is None)
            if n and not got:
                start, first = time.perf_counter(), n
                join_s = start - joined
            got += n
        elapsed = time.perf_counter() - start
        c.close()
        if got < records:
            raise RuntimeError(f"consumed {got} of {records}")
        return {"records_per_s": (records - first) / elapsed, "group_join_s": join_s}

    def round_trip(self, topic: str, linger_ms: int, count: int, payload: bytes) -> Dict[str, float]:
        p = self.producer(linger_ms, 1000)

        def one() -> None:
            p.produce(topic, payload, partition=0)
            if p.flush(30):
                raise RuntimeError("round trip not acknowledged")

        return round_trip_ms(one, count)


class Cursus:
    """Our Python binding."""

    def __init__(self, bootstrap: str) -> None:
        import cursus

        self.cursus = cursus
        self.bootstrap = bootstrap
        self.version = getattr(cursus, "__version__", "?")

    def create_topic(self, topic: str) -> None:
        with self.cursus.AdminClient(bootstrap_servers=self.bootstrap) as admin:
            admin.create_topic(topic, partitions=PARTITIONS)

    def produce(self, topic: str, records: int, payload: bytes) -> Dict[str, float]:
        with self.cursus.Producer(bootstrap_servers=self.bootstrap, linger_ms=5, acks=1,
                                  buffer_memory=room_for(records)) as p:
            send = p.send
            start = time.perf_counter()
            for _ in range(records):
                send(topic, payload)
            calls = time.perf_counter() - start
            p.flush(120)
            total = time.perf_counter() - start
        return {"records_per_s": records / total, "per_call_us": calls / records * 1e6}

    def consume(self, topic: str, records: int) -> Dict[str, float]:
        with self.cursus.Consumer(
            bootstrap_servers=self.bootstrap, group_id=f"g-{topic}",
            fetch_max_records=8192, max_poll_records=10_000,
        ) as c:
            joined = time.perf_counter()
            c.subscribe(topic)
            got, first, start = 0, 0, 0.0
            deadline = time.monotonic() + 300
            while got < records and time.monotonic() < deadline:
                n = len(c.poll(1.0))
                if n and not got:
                    start, first = time.perf_counter(), n
                    join_s = start - joined
                got += n
            elapsed = time.perf_counter() - start
        if got < records:
            raise RuntimeError(f"consumed {got} of {records}")
        return {"records_per_s": (records - first) / elapsed, "group_join_s": join_s}

    def round_trip(self, topic: str, linger_ms: int, count: int, payload: bytes) -> Dict[str, float]:
        with self.cursus.Producer(bootstrap_servers=self.bootstrap, linger_ms=linger_ms,
                                  acks=1) as p:
            return round_trip_ms(lambda: p.send_and_wait(topic, payload, partition=0), count)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--client", choices=["kafka", "cursus"], required=True)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--roundtrips", type=int, default=2_000)
    parser.add_argument("--size", type=int, default=100)
    args = parser.parse_args()
    client = Kafka(args.bootstrap) if args.client == "kafka" else Cursus(args.bootstrap)
    payload = b"x" * args.size
    run = uuid.uuid4().hex[:8]
    topic = f"peer-py-{run}"
    client.create_topic(topic)
    result: Dict[str, Any] = {"client": args.client, "records": args.records}
    if isinstance(client, Kafka):
        result["confluent_kafka"] = client.version
        result["librdkafka"] = client.librdkafka
    else:
        result["cursus"] = client.version
    result["produce"] = client.produce(topic, args.records, payload)
    result["consume"] = client.consume(topic, args.records)
    for linger in (5, 0):
        rt_topic = f"peer-rt{linger}-{run}"
        client.create_topic(rt_topic)
        result[f"round_trip_linger_{linger}"] = client.round_trip(
            rt_topic, linger, args.roundtrips, payload)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
