"""A first Cursus program, as a user writes it from the README: create a
topic, send one record, read it back through a consumer group."""

import os

import cursus

bootstrap = os.environ.get("CURSUS_TEST_BROKER", "127.0.0.1:9000")
with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
    admin.create_topic("first-python", partitions=1)

with cursus.Producer(bootstrap_servers=bootstrap) as producer:
    stored = producer.send_and_wait("first-python", b"hello", key=b"k")

got = []
with cursus.Consumer(bootstrap_servers=bootstrap, group_id="first-python") as consumer:
    consumer.subscribe(["first-python"])
    for _ in range(100):
        got.extend(consumer.poll(timeout=0.2))
        if got:
            break
    consumer.commit()

assert got and got[0].value == b"hello", got
print(f"python: sent to partition {stored.partition} offset {stored.offset}, read back {got[0].value!r}")
