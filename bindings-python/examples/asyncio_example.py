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

    async with cursus.aio.Producer(bootstrap_servers=bootstrap) as producer:
        metas: List[cursus.RecordMetadata] = await asyncio.gather(
            *(producer.send(topic, b"async %d" % i) for i in range(10))
        )
        print("acknowledged offsets:", sorted(m.offset or 0 for m in metas))

    async with cursus.aio.Consumer(bootstrap_servers=bootstrap, group_id=topic + "-g") as consumer:
        await consumer.subscribe(topic)
        count = 0
        try:
            async for message in consumer:
                print(message.partition, message.offset, message.payload)
                count += 1
                if count == 10:
                    break
        except cursus.TimeoutError:
            print("timed out")
        await consumer.commit()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9000",
                     sys.argv[2] if len(sys.argv) > 2 else "quickstart-async"))
