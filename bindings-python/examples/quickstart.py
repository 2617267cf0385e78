"""Quickstart: create a topic, produce 1,000 records, read them back through a
consumer group and commit. ``make demo`` runs this against a local broker.

    python examples/quickstart.py 127.0.0.1:9000
"""

from __future__ import annotations

import sys
import time

import cursus

TOPIC = "quickstart-python"
GROUP = "quickstart-python"
RECORDS = 1000


def main(bootstrap: str) -> None:
    started = time.monotonic()
    # CREATE on an existing topic is a no-op patch, so reruns are fine.
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(TOPIC, partitions=3)

    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        deliveries = [
            producer.send(TOPIC, f"python record {i}".encode(), key=f"key-{i}")
            for i in range(RECORDS)
        ]
        producer.flush()
        for delivery in deliveries:
            delivery.result()  # raises if that record failed

    with cursus.Consumer(
        bootstrap_servers=bootstrap, group_id=GROUP, auto_offset_reset="earliest"
    ) as consumer:
        consumer.subscribe(TOPIC)
        deadline = time.monotonic() + 60
        consumed = 0
        while consumed < RECORDS:
            if time.monotonic() > deadline:
                raise SystemExit(f"only {consumed} of {RECORDS} records arrived within 60 s")
            consumed += len(consumer.poll(timeout=0.5))
        consumer.commit()

    elapsed = int((time.monotonic() - started) * 1000)
    print(f"python: produced {RECORDS}, consumed {consumed} through group {GROUP}, "
          f"committed ({elapsed} ms)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9000")
