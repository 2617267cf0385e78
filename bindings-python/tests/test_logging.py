from __future__ import annotations

import logging

import pytest

import cursus


def test_engine_logs_reach_python_logging(
    bootstrap: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="cursus")
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name) as consumer:
        consumer.subscribe(name)
        consumer.poll(0.1)  # joins the group; the engine logs it
    records = [r for r in caplog.records if r.name.startswith("cursus")]
    assert any("joined group" in r.getMessage() for r in records), records
