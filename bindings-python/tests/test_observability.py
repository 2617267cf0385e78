"""Statistics (on demand and periodic), the error callback, and the engine
log level following the `cursus` logger."""

from __future__ import annotations

import json
import logging
import threading
from typing import List

import pytest

import cursus


def test_statistics_on_demand(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    with cursus.Producer(bootstrap_servers=bootstrap, client_id="stats-p") as p:
        for i in range(5):
            p.send(name, b"%d" % i)
        p.flush()
        s = p.statistics()
    assert isinstance(s, cursus.Statistics)
    assert (s.kind, s.client_id, s.records_sent) == ("producer", "stats-p", 5)
    assert s.batches_sent >= 1 and s.bytes_sent >= 5 and s.requests >= 1
    assert isinstance(s.produce_latency, cursus.Latency) and s.produce_latency.count >= 1
    assert s.partitions == [] and s.errors == {}
    assert s.to_dict() == json.loads(s.to_json())
    assert s.to_dict()["records_sent"] == 5
    assert "records_sent=5" in repr(s)

    with cursus.Consumer(bootstrap_servers=bootstrap, group_id=name, auto_offset_reset="earliest") as c:
        c.subscribe(name)
        got: List[cursus.Message] = []
        for _ in range(100):
            got += c.poll(0.1)
            if len(got) >= 5:
                break
        s = c.statistics()
    assert s.kind == "consumer" and s.records_received >= 5
    [lag] = s.partitions
    assert isinstance(lag, cursus.PartitionLag)
    assert (lag.topic, lag.partition, lag.position, lag.end_offset, lag.lag) == (name, 0, 5, 5, 0)
    assert s.to_dict()["partitions"][0]["lag"] == 0


def test_periodic_statistics_and_a_failing_callback(
    bootstrap: str, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    seen: List[cursus.Statistics] = []
    twice = threading.Event()

    def stats_cb(s: cursus.Statistics) -> None:
        seen.append(s)
        if len(seen) == 1:
            raise RuntimeError("stats_cb failed on purpose")
        twice.set()

    with caplog.at_level(logging.ERROR, logger="cursus"):
        with cursus.Producer(bootstrap_servers=bootstrap, stats_cb=stats_cb, statistics_interval_ms=20):
            assert twice.wait(30)  # called again after raising
    assert all(s.kind == "producer" for s in seen)
    assert any("stats_cb" in r.getMessage() and r.exc_info for r in caplog.records)

    with pytest.raises(cursus.ValidationError):
        cursus.Consumer(bootstrap_servers=bootstrap, group_id=name, stats_cb=stats_cb)  # no interval
    with pytest.raises(TypeError):
        cursus.Producer(bootstrap_servers=bootstrap, error_cb="not callable")


def test_error_callback_gets_background_errors(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1, auth_policy="deny_write")
    errors: List[cursus.CursusError] = []
    got = threading.Event()

    def error_cb(e: cursus.CursusError) -> None:
        errors.append(e)
        got.set()

    with cursus.Producer(bootstrap_servers=bootstrap, error_cb=error_cb, retries=0) as p:
        with pytest.raises(cursus.AuthorizationError):
            p.send_and_wait(name, b"refused")
        assert got.wait(30)
    assert isinstance(errors[0], cursus.AuthorizationError)
    assert errors[0].fields.get("topic") == name


def test_engine_log_level_follows_the_cursus_logger() -> None:
    logger = logging.getLogger("cursus")
    old = logger.level
    try:
        logger.setLevel(logging.CRITICAL)
        assert cursus.sync_log_level() == "off"  # an off level: nothing formatted
        logger.setLevel(logging.WARNING)
        assert cursus.sync_log_level() == "warn"
        child = logging.getLogger("cursus.consumer.group")
        child.setLevel(logging.DEBUG)  # a descendant asks for more
        try:
            assert cursus.sync_log_level() == "debug"
        finally:
            child.setLevel(logging.NOTSET)
        logger.setLevel(logging.INFO)
        assert cursus.sync_log_level() == "info"
    finally:
        logger.setLevel(old)
        cursus.sync_log_level()
