"""Cluster administration against the standalone test broker, which refuses
every call with ``distribution_not_enabled`` (class validation)."""

from __future__ import annotations

import asyncio
from typing import Callable, List

import pytest

import cursus
import cursus.aio


def _check_not_enabled(err: cursus.CursusError) -> None:
    assert isinstance(err, cursus.ValidationError)
    assert err.code == "distribution_not_enabled"
    assert err.error_class == "validation"


def test_cluster_admin_needs_distributed_mode(bootstrap: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        calls: List[Callable[[], object]] = [
            admin.cluster_status,
            lambda: admin.elect_leader("orders", 0, "broker-1"),
            lambda: admin.reassign_partition("orders", 0, ["broker-1"]),
            admin.list_cluster,
        ]
        for call in calls:
            with pytest.raises(cursus.ValidationError) as info:
                call()
            _check_not_enabled(info.value)
    with pytest.raises(cursus.ClosedError):
        admin.cluster_status()


def test_async_cluster_admin_needs_distributed_mode(bootstrap: str) -> None:
    async def main() -> None:
        async with cursus.aio.AdminClient(bootstrap_servers=bootstrap) as admin:
            with pytest.raises(cursus.ValidationError) as a:
                await admin.cluster_status()
            _check_not_enabled(a.value)
            with pytest.raises(cursus.ValidationError) as b:
                await admin.elect_leader("orders", 0, "broker-1")
            _check_not_enabled(b.value)
            with pytest.raises(cursus.ValidationError) as c:
                await admin.list_cluster()
            _check_not_enabled(c.value)
            with pytest.raises(cursus.ValidationError) as d:
                await admin.reassign_partition("orders", 0, ["broker-1"])
            _check_not_enabled(d.value)

    asyncio.run(main())


def test_cluster_types_are_exported() -> None:
    for name in (
        "ClusterStatus",
        "ClusterBroker",
        "ClusterPartition",
        "LeaderElection",
        "PartitionReassignment",
    ):
        assert name in cursus.__all__
        assert getattr(cursus, name).__module__ == "cursus"
