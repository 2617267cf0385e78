"""The asyncio API: produce concurrently, then consume with ``async for``.

    python examples/asyncio_example.py 127.0.0.1:9000 [topic]
"""

from __future__ import annotations

import asyncio
import sys
from typing import List

import cursus
import cursus.aio


async def main(bootstrap: str, topic: str) -> None:
    async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
        await admin.create_topic(topic, partitions=2)

    # Options are checked here, at construction (not at connect).
    async with cursus.aio.Producer(bootstrap_servers=bootstrap) as producer:
        # send() hands each record over at the call, so they keep this order
        # per partition even though they are awaited together afterwards.
        sends = [producer.send(topic, b"async %d" % i) for i in range(10)]
        await producer.flush()  # at most 30 s by default; flush(None): no limit
        metas: List[cursus.RecordMetadata] = await asyncio.gather(*sends)
        print("acknowledged offsets:", sorted(m.offset or 0 for m in metas))
    # Leaving the block closes the producer (close(timeout=30.0) by default).

    async with cursus.aio.Consumer(bootstrap_servers=bootstrap, group_id=topic + "-g") as consumer:
        await consumer.subscribe(topic)
        # At most 4 records per poll; only what is returned counts as
        # delivered (and is committed below).
        taken = 0
        while taken < 10:
            messages = await consumer.poll(timeout=10.0, max_records=4)
            if not messages:
                print("no more records within 10 s")
                break
            for message in messages:
                print(message.partition, message.offset, message.payload)
            taken += len(messages)
        await consumer.commit()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9000",
                     sys.argv[2] if len(sys.argv) > 2 else "quickstart-async"))
