"""Records/s produced and consumed from Python through the binding.

Starts a private broker, produces N records (fire-and-forget `send`, then one
`flush`), then consumes them all with one group member. Writes the result to
`<target>/bench/python.json` and prints it.

    python bench/bench.py [--records N] [--size BYTES] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import cursus  # noqa: E402
from conftest import Broker  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    broker = Broker()
    try:
        topic = "bench"
        with cursus.AdminClient(bootstrap_servers=broker.addr) as admin:
            admin.create_topic(topic, partitions=4)
        payload = b"x" * args.size
        with cursus.Producer(bootstrap_servers=broker.addr, linger_ms=5, acks=1) as producer:
            start = time.perf_counter()
            send = producer.send
            for _ in range(args.records):
                send(topic, payload)
            producer.flush()
            produce_s = time.perf_counter() - start
        with cursus.Consumer(
            bootstrap_servers=broker.addr, group_id="bench", fetch_max_records=8192,
            max_poll_records=10_000,
        ) as consumer:
            consumer.subscribe(topic)
            got = 0
            start = time.perf_counter()
            while got < args.records:
                got += len(consumer.poll(5.0))
            consume_s = time.perf_counter() - start
        result = {
            "binding": "python",
            "records": args.records,
            "payload_bytes": args.size,
            "produce_records_per_s": round(args.records / produce_s),
            "consume_records_per_s": round(args.records / consume_s),
            "build": os.environ.get("CURSUS_BUILD_PROFILE", "debug"),
        }
        print(json.dumps(result))
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
