from __future__ import annotations

import builtins

import pytest

import cursus

from conftest import Broker
from cursus._errors import _from_engine

CLASSES = {
    "validation": cursus.ValidationError,
    "authorization": cursus.AuthorizationError,
    "routing": cursus.RoutingError,
    "availability": cursus.AvailabilityError,
    "conflict": cursus.ConflictError,
    "fencing": cursus.FencingError,
    "not_found": cursus.NotFoundError,
    "internal": cursus.InternalError,
}


@pytest.mark.parametrize("error_class", sorted(CLASSES))
def test_every_class_maps_to_its_subclass(error_class: str) -> None:
    err = _from_engine(error_class, "broker", "some_code", error_class, True, "msg", {"a": "b"}, "text")
    assert type(err) is CLASSES[error_class]
    assert isinstance(err, cursus.CursusError)
    assert (err.code, err.error_class, err.retryable, err.message, err.fields, err.status) == (
        "some_code", error_class, True, "msg", {"a": "b"}, error_class)
    assert str(err) == "text"


@pytest.mark.parametrize("status, cls", [
    ("timeout", cursus.TimeoutError),
    ("closed", cursus.ClosedError),
    ("invalid_argument", cursus.ValidationError),
    # The status, not the kind or the class, picks the exception.
    ("internal", cursus.InternalError),
])
def test_the_bridge_status_picks_the_exception(status: str, cls: type) -> None:
    err = _from_engine(status, "protocol", "c", "availability", False, "m", {}, "t")
    assert type(err) is cls and err.status == status


def test_local_errors_carry_the_status_of_the_bridge(bootstrap: str) -> None:
    producer = cursus.Producer(bootstrap_servers=bootstrap)
    producer.close()
    with pytest.raises(cursus.ClosedError) as closed:
        producer.send("t", b"x")
    assert (closed.value.status, closed.value.kind, closed.value.code) == ("closed", "closed", "closed")
    assert str(closed.value) == "closed (validation): producer is closed"
    with pytest.raises(cursus.ValidationError) as bad:
        cursus.Producer(bootstrap_servers=bootstrap, linger_ms="soon")
    assert (bad.value.status, bad.value.kind) == ("invalid_argument", "invalid_argument")


def test_timeouts_are_builtin_timeouts_too() -> None:
    assert issubclass(cursus.TimeoutError, builtins.TimeoutError)
    assert issubclass(cursus.TimeoutError, cursus.AvailabilityError)
    err = _from_engine("timeout", "timeout", "timeout", "availability", True, "late", {}, "timeout: late")
    assert isinstance(err, builtins.TimeoutError) and isinstance(err, cursus.CursusError)


def test_configuration_errors_are_validation_errors() -> None:
    with pytest.raises(cursus.ValidationError) as e:
        cursus.Producer(bootstrap_servers="not-an-address")
    assert e.value.code == "invalid_argument"
    with pytest.raises(cursus.ValidationError, match="unknown producer option"):
        cursus.Producer(no_such_option=1)
    with pytest.raises(cursus.ValidationError, match="group_id"):
        cursus.Consumer(bootstrap_servers="127.0.0.1:9000")
    with pytest.raises(cursus.ValidationError, match="acks"):
        cursus.Producer(enable_idempotence=True, acks=1)


def test_connection_refused_is_a_retryable_availability_error() -> None:
    with pytest.raises(cursus.AvailabilityError) as e:
        cursus.AdminClient(bootstrap_servers="127.0.0.1:1", connect_timeout_ms=2000, retries=0)
    assert e.value.retryable
    assert e.value.kind == "io"


def test_broker_errors_by_class(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        with pytest.raises(cursus.NotFoundError) as nf:
            admin.describe_topic(name)
        assert nf.value.code == "topic_not_found"
        assert nf.value.fields == {"topic": name}
        assert not nf.value.retryable
        assert nf.value.kind == "broker"

        with pytest.raises(cursus.ValidationError) as bad:
            admin.create_topic(name, partitions=0)
        assert bad.value.code == "invalid_partitions"

        info = admin.create_topic(name, partitions=1)
        with pytest.raises(cursus.ConflictError) as conflict:
            admin.truncate_topic(name, info.revision + 100)
        assert conflict.value.fields["current"] == str(info.revision)


def test_flush_timeout_raises_a_timeout_error(private_broker: Broker, name: str) -> None:
    bootstrap = private_broker.addr
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1)
    producer = cursus.Producer(bootstrap_servers=bootstrap, linger_ms=60000)
    producer.send(name, b"warm")
    producer.flush(timeout=10)  # connected, metadata cached
    producer.send(name, b"x")
    # A stopped broker cannot acknowledge: the flush must time out.
    private_broker.pause()
    try:
        with pytest.raises(TimeoutError) as e:
            producer.flush(timeout=0.2)
        assert isinstance(e.value, cursus.TimeoutError)
        assert e.value.code == "timeout" and e.value.retryable
    finally:
        private_broker.resume()
    producer.close()


def test_payload_must_be_bytes_like(bootstrap: str) -> None:
    with cursus.Producer(bootstrap_servers=bootstrap) as producer:
        with pytest.raises(TypeError):
            producer.send("t", "text")  # type: ignore[call-overload]
        with pytest.raises(TypeError):
            producer.send("t", 5)  # type: ignore[call-overload]


def test_authorization_errors(bootstrap: str, name: str) -> None:
    with cursus.AdminClient(bootstrap_servers=bootstrap) as admin:
        admin.create_topic(name, partitions=1, auth_policy="deny_write")
    with cursus.Producer(bootstrap_servers=bootstrap, retries=0) as producer:
        with pytest.raises(cursus.AuthorizationError) as e:
            producer.send_and_wait(name, b"refused")
    assert e.value.error_class == "authorization"
    assert e.value.fields.get("topic") == name
    assert not e.value.retryable
