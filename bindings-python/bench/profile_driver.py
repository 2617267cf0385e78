"""One phase of the Python bench per process, for profilers (issue #20).

Starts a private broker (tests/conftest.py's ``Broker``; set
``CURSUS_BROKER_BIN``), then runs ONE path so a profile of the process shows
only it: ``send`` (N ``Producer.send`` calls of 100 B, no callback),
``batch`` (``send_batch`` of 1000) or ``consume`` (the records are produced
first, then one group member polls up to 10,000 a call). Each of ``ROUNDS``
rounds prints its rate and the CPU time of the calling thread
(``time.thread_time``), which other processes on a busy machine disturb
less than wall time.

    python bench/profile_driver.py {send,batch,consume} [N] [ROUNDS]
    perf record -F 1999 --call-graph dwarf,32768 -o out.data \\
        python bench/profile_driver.py consume 200000 3
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import cursus  # noqa: E402
from conftest import Broker  # noqa: E402


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "consume"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    broker = Broker()
    try:
        with cursus.AdminClient(bootstrap_servers=broker.addr) as admin:
            admin.create_topic("t", partitions=4)
        payload = b"x" * 100
        batch = [payload] * 1000
        with cursus.Producer(bootstrap_servers=broker.addr, acks=1, batch_size=262144) as p:
            if mode == "consume":
                for _ in range(n // 1000):
                    p.send_batch("t", batch)
                p.flush(None)
            for r in range(rounds):
                start, cpu = time.perf_counter(), time.thread_time()
                if mode == "send":
                    send = p.send
                    for _ in range(n):
                        send("t", payload)
                    wall, used = time.perf_counter() - start, time.thread_time() - cpu
                    p.flush(None)
                    print(f"send call {wall * 1e6 / n:.3f} us (cpu {used * 1e6 / n:.3f} us)")
                elif mode == "batch":
                    for _ in range(n // 1000):
                        p.send_batch("t", batch)
                    p.flush(None)
                    wall, used = time.perf_counter() - start, time.thread_time() - cpu
                    print(f"batch {n / wall:.0f} records/s (cpu {used * 1e9 / n:.0f} ns/record)")
                else:
                    with cursus.Consumer(
                        bootstrap_servers=broker.addr, group_id=f"g{r}",
                        fetch_max_records=8192, max_poll_records=10_000,
                        auto_offset_reset="earliest",
                    ) as c:
                        c.subscribe("t")
                        got = 0
                        start, cpu = time.perf_counter(), time.thread_time()
                        while got < n:
                            got += len(c.poll(5.0))
                        wall, used = time.perf_counter() - start, time.thread_time() - cpu
                    print(f"consume {n / wall:.0f} records/s "
                          f"(polling thread cpu {used * 1e9 / n:.0f} ns/record)")
                sys.stdout.flush()
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
