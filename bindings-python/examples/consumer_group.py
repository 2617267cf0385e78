"""Consume a topic as a member of a consumer group; commit after each poll.
Run it twice with the same group to see the partitions split. Ctrl-C, or
SIGTERM (which calls ``wakeup()``), stops it.

    python examples/consumer_group.py 127.0.0.1:9000 [topic] [group]
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from types import FrameType
from typing import Optional

import cursus


def main(bootstrap: str, topic: str, group: str) -> None:
    logging.basicConfig(level=logging.INFO)  # engine logs arrive as logger "cursus.*"
    stop = threading.Event()
    with cursus.Consumer(
        bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest"
    ) as consumer:

        def request_stop(signum: int, frame: Optional[FrameType]) -> None:
            stop.set()
            consumer.wakeup()  # the poll blocked below returns [] at once

        signal.signal(signal.SIGTERM, request_stop)
        consumer.subscribe([topic])
        try:
            while not stop.is_set():
                # No time limit: returns with at most 100 records, or [] after
                # wakeup(). Only the records returned count as delivered, so
                # the commit below covers exactly these.
                messages = consumer.poll(timeout=None, max_records=100)
                for m in messages:
                    key = m.key.decode() if m.key is not None else None
                    print(f"{m.topic}/{m.partition}@{m.offset} key={key} {m.payload!r}")
                if messages:
                    consumer.commit()
        except KeyboardInterrupt:
            print("interrupted")
        except cursus.FencingError as e:
            print(f"fenced ({e.code}); rejoining on the next poll")
        print("stopping; assignment was", [str(tp) for tp in consumer.assignment()])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9000",
         sys.argv[2] if len(sys.argv) > 2 else "quickstart",
         sys.argv[3] if len(sys.argv) > 3 else "quickstart-group")
