"""Exactly-once consume-process-produce: read a topic as a member of a
consumer group, write an upper-cased copy of each record to another topic,
and commit the consumed offsets in the same transaction as the output. A
crash between the two can neither lose nor duplicate output: an unfinished
transaction is aborted, and the group resumes where the last committed
transaction left it. Ctrl-C stops it.

    python examples/transactions.py 127.0.0.1:9000 [source] [sink] [group]
"""

from __future__ import annotations

import sys

import cursus


def main(bootstrap: str, source: str, sink: str, group: str) -> None:
    with cursus.Consumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        isolation_level="read_committed",  # only committed input (the default)
    ) as consumer, cursus.Producer(
        bootstrap_servers=bootstrap,
        # One transactional id per input partition set / instance: a restarted
        # instance with the same id fences the old one (a "zombie").
        transactional_id=f"{group}-upper",
    ) as producer:
        consumer.subscribe([source])
        producer.init_transactions()
        try:
            while True:
                messages = consumer.poll(timeout=1.0, max_records=100)
                if not messages:
                    continue
                # Commits on success; aborts if the block raises (and the
                # exception propagates).
                with producer.transaction():
                    for m in messages:
                        # Transactional records are text (TXN_PUBLISH).
                        producer.send(sink, m.payload.upper(), key=m.key)
                    # The offsets after these records, fenced by the
                    # consumer's group session.
                    producer.send_offsets_to_transaction(consumer)
                print(f"copied {len(messages)} records")
        except KeyboardInterrupt:
            print("interrupted")
        except cursus.FencingError as e:
            print(f"fenced ({e.code}): another instance took over")


if __name__ == "__main__":
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    main(
        args[0],
        args[1] if len(args) > 1 else "orders",
        args[2] if len(args) > 2 else "orders-upper",
        args[3] if len(args) > 3 else "upper",
    )
