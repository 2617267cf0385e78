from __future__ import annotations

import cursus


def test_topic_lifecycle(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        info = admin.create_topic(name, partitions=3)
        assert isinstance(info, cursus.TopicInfo)
        assert info.name == name
        assert info.partitions == 3
        assert name in admin.list_topics()

        desc = admin.describe_topic(name)
        assert desc.topic == name
        assert len(desc.partitions) == 3
        assert desc.definition.partitions == 3
        assert desc.definition.name == name

        md = admin.metadata(name)
        assert md.topic.name == name
        assert len(md.leaders) == 3

        offsets = admin.list_offsets(name)
        assert [o.partition for o in offsets] == [0, 1, 2]
        assert all(o.latest == 0 for o in offsets)
        assert len(admin.list_offsets(name, 1)) == 1

        truncated = admin.truncate_topic(name, info.revision)
        assert truncated.revision >= info.revision

        assert admin.help()
        assert isinstance(admin.list_groups(), list)

        out = admin.delete_topic(name)
        assert out.deleted
        assert not admin.delete_topic(name, if_exists=True).deleted
        assert name not in admin.list_topics()


def test_options_tables_name_the_engine_defaults() -> None:
    producer = {n: d for n, d, _ in cursus.producer_options()}
    assert producer["acks"] == "all"
    assert producer["linger_ms"] == "5"
    assert producer["bootstrap_servers"] == "127.0.0.1:9000"
    consumer = {n: d for n, d, _ in cursus.consumer_options()}
    assert consumer["auto_offset_reset"] == "earliest"
    assert "group_id" in consumer
    assert {n for n, _, _ in cursus.client_options()} <= set(consumer)


def test_create_topic_options_and_unknown_keyword(bootstrap: str, name: str) -> None:
    import pytest

    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        info = admin.create_topic(
            name,
            partitions=2,
            idempotent=True,
            cleanup_policy="delete",
            retention_hours=5,
            retention_bytes=4096,
            partitioner="round_robin",
            auth_policy="deny_read",
            read_acl=["a", "b"],
            write_acl=[],
            min_in_sync_replicas=None,  # None leaves a field unset
        )
        assert (info.partitions, info.idempotent, info.partitioner) == (2, True, "round_robin")
        assert (info.retention_hours, info.retention_bytes) == (5, 4096)
        assert (info.auth_policy, info.read_acl, info.write_acl) == ("deny_read", ["a", "b"], [])
        with pytest.raises(TypeError, match="unexpected keyword argument 'partition'"):
            admin.create_topic(name, partition=3)  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="partitions: expected an int"):
            admin.create_topic(name, partitions=3.0)  # type: ignore[arg-type]
        with pytest.raises(cursus.ValidationError, match="partitions: expected an unsigned integer"):
            admin.create_topic(name, partitions="three")  # type: ignore[arg-type]
