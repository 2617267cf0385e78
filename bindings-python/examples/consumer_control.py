"""Consumer control, logging and statistics: a rebalance listener that
replays each assigned partition from the start and commits before letting
go, periodic statistics, background errors, and engine logs at DEBUG.

    python examples/consumer_control.py 127.0.0.1:9000 [topic] [group]
"""

from __future__ import annotations

import logging
import sys
from typing import List

import cursus
from cursus import TopicPartition


class ReplayFromStart(cursus.RebalanceListener):
    """Seeks every assigned partition to offset 0; commits on revocation.
    A loss (session expired) calls on_partitions_revoked by default."""

    def __init__(self, consumer: cursus.Consumer) -> None:
        self.consumer = consumer

    def on_partitions_assigned(self, partitions: List[TopicPartition]) -> None:
        for tp in partitions:
            self.consumer.seek(tp, 0)

    def on_partitions_revoked(self, partitions: List[TopicPartition]) -> None:
        self.consumer.commit()


def print_stats(s: cursus.Statistics) -> None:
    lag = {f"{p.topic}:{p.partition}": p.lag for p in s.partitions}
    print(f"received={s.records_received} fetch p99={s.fetch_latency.p99_us}us lag={lag}")


def main(bootstrap: str, topic: str, group: str) -> None:
    logging.basicConfig(level=logging.INFO)
    logging.getLogger("cursus").setLevel(logging.DEBUG)  # the engine logs DEBUG and up
    with cursus.Consumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        statistics_interval_ms=2000,
        stats_cb=print_stats,
        error_cb=lambda e: print("background error:", e),
    ) as consumer:
        consumer.set_rebalance_listener(ReplayFromStart(consumer))
        consumer.subscribe([topic])
        for _ in range(10):
            for m in consumer.poll(timeout=1.0):
                print(m.partition, m.offset, m.key, m.value, m.timestamp, m.event_type)
        print("position:", {tp.partition: consumer.position(tp) for tp in consumer.assignment()})
        print("committed:", consumer.committed(consumer.assignment()))
        print(consumer.statistics().to_json())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9000",
         sys.argv[2] if len(sys.argv) > 2 else "quickstart",
         sys.argv[3] if len(sys.argv) > 3 else "control-group")
