from __future__ import annotations

from typing import Any, Dict, Set

import pytest

import cursus


def partitions(c: cursus.Consumer) -> Set[int]:
    return {tp.partition for tp in c.assignment()}


def test_two_members_split_partitions_and_rebalance(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=4)
    config: Dict[str, Any] = dict(bootstrap_servers=bootstrap, group_id=name, fetch_max_wait_ms=50,
                                  heartbeat_interval_ms=100)
    a = cursus.Consumer(**config)
    b = cursus.Consumer(**config)
    try:
        a.subscribe(name)
        assert a.member_id() is None  # joins on the first poll
        a.poll(0.1)
        assert partitions(a) == {0, 1, 2, 3}
        b.subscribe(name)
        # Both members poll until the group has settled into a split.
        for _ in range(300):
            a.poll(0.05)
            b.poll(0.05)
            pa, pb = partitions(a), partitions(b)
            if pa and pb and not (pa & pb) and pa | pb == {0, 1, 2, 3}:
                break
        pa, pb = partitions(a), partitions(b)
        assert pa and pb and not (pa & pb) and pa | pb == {0, 1, 2, 3}

        with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
            status = admin.group_status(name)
            assert status.group_name == name
            assert status.member_count == 2
            assert {m.member_id for m in status.members} == {a.member_id(), b.member_id()}
            assert name in admin.list_groups()

        # Records produced to every partition are consumed exactly once
        # across the two members.
        with cursus.Producer(bootstrap_servers=bootstrap) as producer:
            for i in range(40):
                producer.send(name, b"%d" % i, partition=i % 4)
        seen = []
        for _ in range(300):
            seen += [m.payload for m in a.poll(0.05)]
            seen += [m.payload for m in b.poll(0.05)]
            if len(seen) >= 40:
                break
        assert sorted(seen) == sorted(b"%d" % i for i in range(40))

        # When one member leaves, the other takes every partition.
        b.close()
        with pytest.raises(cursus.ClosedError):
            b.member_id()
        for _ in range(300):
            a.poll(0.05)
            if partitions(a) == {0, 1, 2, 3}:
                break
        assert partitions(a) == {0, 1, 2, 3}
    finally:
        a.close()
        b.close()
