"""The Python binding's figures next to the engine's, same broker, same run.

Starts a private broker, runs the engine's reference (``bench_send engine``,
ffi-c/examples/bench_send.rs, given by ``CURSUS_ENGINE_BENCH_BIN``) against it,
then the same workload from Python: N records of 100 B to 4 partitions (the
partitioner choosing), acks=1, batch_size 256 KiB, produced one ``send`` at a
time and in ``send_batch`` calls of 1000, then consumed by one group member
(``poll``, up to 10,000 records a call). Also the cost of one ``send`` call
and the RSS of the process with a connected producer and consumer. Writes
``<target>/bench/python.json`` (with the ratios to the engine) and prints it.

    python bench/bench.py [--records N] [--size BYTES] [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import cursus  # noqa: E402
from conftest import Broker  # noqa: E402

BATCH = 1000
OPTIONS: Dict[str, Any] = {"acks": 1, "batch_size": 262144}


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def engine_reference(addr: str, records: int) -> Dict[str, Any]:
    binary = os.environ.get("CURSUS_ENGINE_BENCH_BIN")
    if not binary:
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "engine.json"
        subprocess.run([binary, "engine", addr, str(records), str(out)], check=True)
        result: Dict[str, Any] = json.loads(out.read_text())
        return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    n = args.records
    broker = Broker()
    try:
        engine = engine_reference(broker.addr, n)
        rss_start = rss_kib()
        with cursus.AdminClient(bootstrap_servers=broker.addr) as admin:
            admin.create_topic("bench-record", partitions=4)
            admin.create_topic("bench-batch", partitions=4)
        payload = b"x" * args.size
        with cursus.Producer(bootstrap_servers=broker.addr, **OPTIONS) as producer, cursus.Consumer(
            bootstrap_servers=broker.addr, group_id="bench", fetch_max_records=8192,
            max_poll_records=10_000,
        ) as consumer:
            consumer.subscribe("bench-batch")
            rss_idle = rss_kib()

            start = time.perf_counter()
            send = producer.send
            for _ in range(n):
                send("bench-record", payload)
            call_us = (time.perf_counter() - start) * 1e6 / n
            producer.flush(None)
            per_record = n / (time.perf_counter() - start)

            batch = [payload] * BATCH
            start = time.perf_counter()
            sent = 0
            while sent < n:
                count = min(BATCH, n - sent)
                producer.send_batch("bench-batch", batch if count == BATCH else batch[:count])
                sent += count
            producer.flush(None)
            batched = n / (time.perf_counter() - start)

            got = 0
            start = time.perf_counter()
            while got < n:
                got += len(consumer.poll(5.0))
            consume = n / (time.perf_counter() - start)

        ep = float(engine.get("engine_produce_records_per_s", 0))
        ec = float(engine.get("engine_consume_records_per_s", 0))

        def ratio(a: float, b: float) -> float:
            return round(a / b, 3) if b else 0.0

        result = {
            "binding": "python",
            "command": " ".join([sys.executable, *sys.argv]),
            "records": n,
            "payload_bytes": args.size,
            "partitions": 4,
            "batch_records": BATCH,
            "engine_produce_records_per_s": ep,
            "engine_consume_records_per_s": ec,
            "produce_batch_records_per_s": round(batched),
            "produce_per_record_records_per_s": round(per_record),
            # Kept for readers of the older file: the per-record path.
            "produce_records_per_s": round(per_record),
            "send_call_us": round(call_us, 3),
            "consume_records_per_s": round(consume),
            "rss_before_clients_kib": rss_start,
            "idle_client_rss_kib": rss_idle,
            "ratio_produce_batch": ratio(batched, ep),
            "ratio_produce_per_record": ratio(per_record, ep),
            "ratio_consume": ratio(consume, ec),
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
