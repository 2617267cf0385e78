from __future__ import annotations

import threading
from typing import List

import cursus


def test_the_gil_is_released_while_polling(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
        consumer.subscribe(name)
        consumer.poll(0.1)
        polling = threading.Event()
        ticks = 0

        def poll() -> None:
            polling.set()
            consumer.poll(1.0)

        t = threading.Thread(target=poll)
        t.start()
        polling.wait()
        while t.is_alive():  # runs only if poll() released the GIL
            ticks += 1
            t.join(0.01)
        assert ticks > 0


def test_one_producer_shared_by_threads(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=2)
    errors: List[BaseException] = []
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:

        def work(n: int) -> None:
            try:
                for i in range(50):
                    producer.send(name, b"%d-%d" % (n, i))
                producer.flush()
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        assert sum(o.latest for o in admin.list_offsets(name)) == 200
