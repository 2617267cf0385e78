"""Produce records: one acknowledged at a time, then a batch with a flush.

    python examples/producer.py 127.0.0.1:9000 [topic]
"""

from __future__ import annotations

import sys
from typing import List, Optional

import cursus


def main(bootstrap: str, topic: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(topic, partitions=3)

    with cursus.Producer(bootstrap_servers=bootstrap, linger_ms=5, compression="lz4") as producer:
        meta = producer.send_and_wait(topic, b"hello", key=b"greeting")
        print(f"hello -> partition {meta.partition} offset {meta.offset}")

        deliveries: List[cursus.Delivery] = [
            producer.send(topic, f"record {i}".encode(), key=str(i % 3)) for i in range(100)
        ]
        failures: List[cursus.CursusError] = []

        def on_delivery(
            err: Optional[cursus.CursusError], meta: Optional[cursus.RecordMetadata]
        ) -> None:
            if err is not None:
                failures.append(err)

        # on_delivery runs on the producer's callback thread (never an engine
        # I/O thread); it may call the producer again.
        producer.send(topic, memoryview(b"from a buffer"), on_delivery=on_delivery)
        # Waits until everything sent so far is acknowledged and its callback
        # has returned: at most 30 s by default, timeout=None for no limit.
        producer.flush()
        offsets = [d.result().offset for d in deliveries]
        print(f"sent {len(offsets)} records, {len(failures)} failures")
    # Leaving the block closes the producer: it flushes for at most 30 s
    # (producer.close(timeout=None) waits without limit), then fails what is left.


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9000",
         sys.argv[2] if len(sys.argv) > 2 else "quickstart")
