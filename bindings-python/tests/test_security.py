"""TLS, mutual TLS and token authentication against a secure broker
(docs/security.md): what works with the right credentials, the errors of the
wrong ones (raised when the object is created: it connects eagerly), and that
the token never shows in a repr, an exception or a log record."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Coroutine, Dict, List, Tuple, TypeVar

import pytest

import cursus
import cursus.aio

from conftest import Option, SecureBroker, consume

T = TypeVar("T")

# A refused handshake or AUTH fails at once, never by running into a timeout
# (docs/security.md): the clients here get a connect timeout far above this.
PROMPT_S = 10.0


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)




def refused(make: Callable[[], object], exc: type = cursus.AuthorizationError) -> Any:
    """The exception `make()` raises (an `AuthorizationError` by default),
    checking it comes promptly."""
    start = time.monotonic()
    with pytest.raises(cursus.CursusError) as info:
        make()
    assert time.monotonic() - start < PROMPT_S
    assert type(info.value) is exc, repr(info.value)
    return info.value


async def refused_async(make: Callable[[], Coroutine[Any, Any, object]]) -> Any:
    start = time.monotonic()
    with pytest.raises(cursus.CursusError) as info:
        await make()
    assert time.monotonic() - start < PROMPT_S
    assert type(info.value) is cursus.AuthorizationError, repr(info.value)
    return info.value


def assert_handshake_refused(err: cursus.CursusError, reason: str) -> None:
    assert err.code == "tls_handshake_failed", err
    assert err.error_class == "authorization" and err.status == "authorization"
    assert err.retryable is False
    assert err.fields.get("reason") == reason, err


# ---------------------------------------------------------------- sync API


def test_tls_client_certificate_and_token(secure_broker: SecureBroker, name: str) -> None:
    options = secure_broker.options("admin", connect_timeout_ms=30000)
    with cursus.AdminClient(**options) as admin:
        info = admin.create_topic(name, partitions=1)
        assert info.partitions == 1
        assert name in admin.list_topics()
    with cursus.Producer(**options) as producer:
        meta = producer.send_and_wait(name, b"over tls", key=b"k", timeout=30)
        assert (meta.partition, meta.offset) == (0, 0)
    with cursus.Consumer(**options, group_id=name, fetch_max_wait_ms=50) as consumer:
        consumer.subscribe(name)
        got = consume(consumer, 1)
        assert [(m.key, m.payload) for m in got] == [(b"k", b"over tls")]


def test_tls_server_name_verified_by_name(secure_broker: SecureBroker) -> None:
    # The certificate names localhost: asking for that name works.
    with cursus.AdminClient(**secure_broker.options(tls_server_name="localhost")) as admin:
        admin.list_topics()


def test_wrong_token_is_authentication_failed(secure_broker: SecureBroker) -> None:
    err = refused(lambda: cursus.AdminClient(**secure_broker.options(token="wrong-token")))
    assert err.code == "authentication_failed", err
    assert err.error_class == "authorization" and err.retryable is False
    assert err.fields.get("principal") == "admin"
    # Producers and consumers authenticate when they are created, too.
    err = refused(lambda: cursus.Producer(**secure_broker.options(token="wrong-token")))
    assert err.code == "authentication_failed"
    err = refused(
        lambda: cursus.Consumer(**secure_broker.options("nobody", token="t"), group_id="g")
    )
    assert (err.code, err.fields.get("principal")) == ("authentication_failed", "nobody")


def test_no_client_certificate_is_refused(secure_broker: SecureBroker) -> None:
    err = refused(lambda: cursus.AdminClient(**secure_broker.options(client_certificate=False)))
    assert_handshake_refused(err, "client_certificate_refused")
    err = refused(lambda: cursus.Producer(**secure_broker.options(client_certificate=False)))
    assert_handshake_refused(err, "client_certificate_refused")


def test_client_certificate_of_an_untrusted_ca_is_refused(secure_broker: SecureBroker) -> None:
    options = secure_broker.options(
        tls_cert_file=secure_broker.file("other-client.pem"),
        tls_key_file=secure_broker.file("other-client.key"),
    )
    err = refused(lambda: cursus.AdminClient(**options))
    assert_handshake_refused(err, "client_certificate_refused")


def test_broker_certificate_of_another_ca_is_unknown_ca(secure_broker: SecureBroker) -> None:
    options = secure_broker.options(tls_ca_file=secure_broker.file("other-ca.pem"))
    err = refused(lambda: cursus.AdminClient(**options))
    assert_handshake_refused(err, "unknown_ca")
    assert "tls_handshake_failed" in str(err)


def test_broker_certificate_for_another_name_is_name_mismatch(secure_broker: SecureBroker) -> None:
    options = secure_broker.options(tls_server_name="not-the-broker.example")
    err = refused(lambda: cursus.AdminClient(**options))
    assert_handshake_refused(err, "name_mismatch")


def test_tls_client_on_a_plain_port_fails_with_a_hint(secure_broker: SecureBroker, bootstrap: str) -> None:
    # docs/security.md: the plain listener closes on the TLS hello, which a
    # broker restarting mid-handshake also does, so this stays a retryable
    # io error; its message asks whether the address is a TLS listener.
    options = secure_broker.options(bootstrap_servers=bootstrap)
    start = time.monotonic()
    with pytest.raises(cursus.CursusError) as info:
        cursus.AdminClient(**options)
    assert time.monotonic() - start < PROMPT_S
    assert info.value.kind == "io", repr(info.value)
    assert info.value.retryable is True
    assert "TLS listener" in str(info.value)


def test_plain_client_on_the_tls_port_fails_promptly_suggesting_tls(
    secure_broker: SecureBroker,
) -> None:
    start = time.monotonic()
    with pytest.raises(cursus.CursusError) as info:
        cursus.AdminClient(bootstrap_servers=secure_broker.tls_bootstrap, connect_timeout_ms=5000)
    assert time.monotonic() - start < PROMPT_S
    assert info.value.kind in ("io", "protocol"), repr(info.value)
    assert secure_broker.tls_bootstrap in str(info.value) and "tls" in str(info.value).lower()


def test_missing_permission_is_not_authorized_for_operation(
    secure_broker: SecureBroker, name: str
) -> None:
    # `reader` has topic.read only: it connects, but CREATE needs admin.
    with cursus.AdminClient(**secure_broker.options("reader")) as admin:
        err = refused(lambda: admin.create_topic(name, partitions=1))
        assert err.code == "NOT_AUTHORIZED_FOR_OPERATION", err
        assert err.retryable is False
        assert err.fields.get("command") == "CREATE"
        assert err.fields.get("permission") == "admin"
        assert name not in admin.list_topics()


# ---------------------------------------------------------------- asyncio API


def test_async_tls_client_certificate_and_token(secure_broker: SecureBroker, name: str) -> None:
    options = secure_broker.options("admin", connect_timeout_ms=30000)

    async def main() -> None:
        async with cursus.aio.AdminClient(**options) as admin:
            assert (await admin.create_topic(name, partitions=1)).partitions == 1
        async with cursus.aio.Producer(**options) as producer:
            meta = await producer.send(name, b"over tls", key=b"k")
            assert (meta.partition, meta.offset) == (0, 0)
        async with cursus.aio.Consumer(**options, group_id=name, fetch_max_wait_ms=50) as consumer:
            await consumer.subscribe(name)
            got: List[cursus.Message] = []
            for _ in range(200):
                got.extend(await consumer.poll(0.2))
                if got:
                    break
            assert [(m.key, m.payload) for m in got] == [(b"k", b"over tls")]

    run(main())


def test_async_wrong_token_is_authentication_failed(secure_broker: SecureBroker) -> None:
    async def main() -> None:
        err = await refused_async(
            lambda: cursus.aio.AdminClient.connect(**secure_broker.options(token="wrong-token"))
        )
        assert (err.code, err.retryable) == ("authentication_failed", False)
        assert err.fields.get("principal") == "admin"
        producer = cursus.aio.Producer(**secure_broker.options(token="wrong-token"))
        err = await refused_async(producer.start)
        assert err.code == "authentication_failed"

    run(main())


def test_async_no_client_certificate_is_refused(secure_broker: SecureBroker) -> None:
    async def main() -> None:
        options = secure_broker.options(client_certificate=False)
        err = await refused_async(lambda: cursus.aio.AdminClient.connect(**options))
        assert_handshake_refused(err, "client_certificate_refused")
        consumer = cursus.aio.Consumer(**options, group_id="g")
        err = await refused_async(consumer.start)
        assert_handshake_refused(err, "client_certificate_refused")

    run(main())


def test_async_broker_certificate_of_another_ca_is_unknown_ca(secure_broker: SecureBroker) -> None:
    async def main() -> None:
        options = secure_broker.options(tls_ca_file=secure_broker.file("other-ca.pem"))
        err = await refused_async(lambda: cursus.aio.Producer.connect(**options))
        assert_handshake_refused(err, "unknown_ca")

    run(main())


def test_async_missing_permission_is_not_authorized_for_operation(
    secure_broker: SecureBroker, name: str
) -> None:
    async def main() -> None:
        async with cursus.aio.AdminClient(**secure_broker.options("reader")) as admin:
            err = await refused_async(lambda: admin.create_topic(name, partitions=1))
            assert err.code == "NOT_AUTHORIZED_FOR_OPERATION", err
            assert (err.fields.get("command"), err.fields.get("permission")) == ("CREATE", "admin")

    run(main())


# ---------------------------------------------------------------- redaction


def test_token_never_in_reprs(secure_broker: SecureBroker) -> None:
    token = secure_broker.tokens["admin"]
    options = secure_broker.options()
    shown: List[str] = []
    with cursus.AdminClient(**options) as admin, cursus.Producer(**options) as producer:
        with cursus.Consumer(**options, group_id="g") as consumer:
            for obj in (admin, producer, consumer):
                shown += [repr(obj), str(obj)]
    clients: List[Any] = [
        cursus.aio.AdminClient(**options),
        cursus.aio.Producer(**options),
        cursus.aio.Consumer(**options, group_id="g"),
        cursus.aio.EventStore(**options),
    ]
    for client in clients:
        shown += [repr(client), str(client), repr(vars(client)), str(vars(client))]
        assert "token=<redacted>" in repr(client)
        assert "'token': <redacted>" in repr(vars(client)["_config"])

    async def connected() -> None:
        async with cursus.aio.Producer(**options) as producer:
            shown.append(repr(producer))
            assert repr(producer).endswith(" connected>")

    run(connected())
    assert all(token not in text for text in shown), shown


def test_token_never_in_exceptions(secure_broker: SecureBroker) -> None:
    secret = "s3cret-" + secure_broker.tokens["admin"]
    errors: List[BaseException] = []
    # Refused by the broker.
    makers: List[Callable[[], object]] = [
        lambda: cursus.AdminClient(**secure_broker.options(token=secret)),
        lambda: cursus.AdminClient(**secure_broker.options(token=secret, client_certificate=False)),
    ]
    for make in makers:
        with pytest.raises(cursus.CursusError) as info:
            make()
        errors.append(info.value)
    # Refused by the option checks (a token without a principal, an unknown
    # option next to the token, a bad value of another option).
    base: Dict[str, Option] = {"bootstrap_servers": secure_broker.tls_bootstrap, "token": secret}
    bad_options: List[Dict[str, Option]] = [
        base,
        {**base, "principal": "a", "nope": 1},
        {**base, "principal": "a", "tls": "maybe"},
    ]
    for bad in bad_options:
        with pytest.raises(cursus.ValidationError) as info:
            cursus.Producer(**bad)
        errors.append(info.value)
        with pytest.raises(cursus.ValidationError) as info:
            cursus.aio.Producer(**bad)
        errors.append(info.value)
    for e in errors:
        texts = [str(e), repr(e), repr(e.args), repr(vars(e))]
        assert all(secret not in t for t in texts), texts


def test_token_never_in_log_records(
    secure_broker: SecureBroker, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    token = secure_broker.tokens["admin"]
    # Every logger: the engine's (`cursus.*`) and its libraries' (`rustls.*`).
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="cursus")
    options = secure_broker.options(connect_timeout_ms=30000)
    with cursus.AdminClient(**options) as admin:
        admin.create_topic(name, partitions=1)
    with cursus.Producer(**options) as producer:
        producer.send_and_wait(name, b"x", timeout=30)
    with cursus.Consumer(**options, group_id=name, fetch_max_wait_ms=50) as consumer:
        consumer.subscribe(name)
        assert len(consume(consumer, 1)) == 1
    with pytest.raises(cursus.AuthorizationError):
        cursus.AdminClient(**secure_broker.options(token="wrong-" + token))
    with pytest.raises(cursus.AuthorizationError):
        cursus.AdminClient(**secure_broker.options(client_certificate=False))
    assert cursus._cursus._flush_logs(30.0)  # the log thread hands records over
    records = caplog.records
    assert any(r.name.startswith("cursus") for r in records)  # the engine did log
    for r in records:
        assert token not in r.getMessage(), r.getMessage()
        assert token not in repr(r.__dict__)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads thread names from /proc")
def test_tls_library_logs_reach_logging_on_the_log_thread(secure_broker: SecureBroker) -> None:
    # rustls logs through the `log` crate on the I/O thread doing the
    # handshake; pyo3-log would take the GIL there (and abort the process if
    # that happened during interpreter exit). They go through the log thread.
    seen: List[Tuple[str, str]] = []

    class ThreadOfEmit(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            comm = Path(f"/proc/self/task/{threading.get_native_id()}/comm").read_text().strip()
            seen.append((record.name, comm))

    handler = ThreadOfEmit(level=logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        with cursus.AdminClient(**secure_broker.options()) as admin:
            admin.list_topics()
        assert cursus._cursus._flush_logs(30.0)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    engine = [(n, t) for n, t in seen if n.startswith(("rustls", "cursus"))]
    assert any(n.startswith("rustls") for n, _ in engine), seen
    assert {t for _, t in engine} == {"cursus-log"}, engine
