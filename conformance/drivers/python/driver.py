"""Conformance driver for the Python binding (the synchronous API of ``cursus``).

``python driver.py <bootstrap> <plan>`` runs each plan step through the public
API and prints one JSON line per step. The contract is conformance/PROTOCOL.md;
the harness compares the results.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

import cursus

# Arguments named config.<option> are configuration (PROTOCOL.md, "Plan file").
CONFIG_PREFIX = "config."


class DriverError(Exception):
    """A fault of the plan or the driver, not of the binding."""


class Step:
    def __init__(self, line: str) -> None:
        words = line.split()
        self.op = words[0]
        self.args: Dict[str, str] = {}
        self.config: Dict[str, str] = {}
        for word in words[1:]:
            name, sep, value = word.partition("=")
            if not sep:
                raise DriverError(f"argument without '=': {word}")
            if name.startswith(CONFIG_PREFIX):
                self.config[name[len(CONFIG_PREFIX):]] = value
            else:
                self.args[name] = value

    def arg(self, name: str) -> str:
        if name not in self.args:
            raise DriverError(f"{self.op}: missing argument {name}")
        return self.args[name]

    def num(self, name: str) -> int:
        return int(self.arg(name))

    def data(self, name: str) -> Optional[bytes]:
        return bytes.fromhex(self.args[name]) if name in self.args else None


class Driver:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admins: Dict[str, cursus.AdminClient] = {}
        self.producers: Dict[str, cursus.Producer] = {}
        self.consumers: Dict[str, cursus.Consumer] = {}

    def options(self, step: Step) -> Dict[str, Any]:
        return {"bootstrap_servers": self.bootstrap, **step.config}

    def admin(self, step: Step) -> cursus.AdminClient:
        name = step.args.get("admin", "")
        if name == "" and "" not in self.admins:
            self.admins[""] = cursus.AdminClient(bootstrap_servers=self.bootstrap)
        return lookup(self.admins, name, "admin")

    def producer(self, step: Step) -> cursus.Producer:
        return lookup(self.producers, step.arg("producer"), "producer")

    def consumer(self, step: Step) -> cursus.Consumer:
        return lookup(self.consumers, step.arg("consumer"), "consumer")

    def run(self, step: Step) -> Dict[str, Any]:
        handler: Callable[[Step], Dict[str, Any]] = getattr(self, "op_" + step.op)
        return handler(step)

    # -- admin
    def op_admin_open(self, step: Step) -> Dict[str, Any]:
        self.admins[step.arg("name")] = cursus.AdminClient(**self.options(step))
        return {}

    def op_admin_close(self, step: Step) -> Dict[str, Any]:
        lookup(self.admins, step.arg("name"), "admin").close()
        return {}

    def op_create_topic(self, step: Step) -> Dict[str, Any]:
        extra: Dict[str, Any] = {}
        if "auth_policy" in step.args:
            extra["auth_policy"] = step.args["auth_policy"]
        if "retention_bytes" in step.args:
            extra["retention_bytes"] = step.num("retention_bytes")
        if "idempotent" in step.args:
            extra["idempotent"] = step.args["idempotent"] == "true"
        info = self.admin(step).create_topic(step.arg("topic"), partitions=step.num("partitions"), **extra)
        return {"partitions": info.partitions}

    def op_delete_topic(self, step: Step) -> Dict[str, Any]:
        out = self.admin(step).delete_topic(step.arg("topic"), if_exists=step.args.get("if_exists") == "true")
        return {"deleted": out.deleted}

    def op_truncate_topic(self, step: Step) -> Dict[str, Any]:
        out = self.admin(step).truncate_topic(step.arg("topic"), step.num("expected_revision"))
        return {"revision": out.revision}

    def op_alter_topic(self, step: Step) -> Dict[str, Any]:
        minimum = step.num("min_in_sync_replicas")
        self.admin(step).alter_topic_config(step.arg("topic"), minimum if minimum >= 0 else None)
        return {}

    def op_list_topics(self, step: Step) -> Dict[str, Any]:
        return {"topics": self.admin(step).list_topics()}

    def op_describe_topic(self, step: Step) -> Dict[str, Any]:
        return {"partitions": len(self.admin(step).describe_topic(step.arg("topic")).partitions)}

    def offsets(self, step: Step) -> Tuple[int, int]:
        partition = step.num("partition")
        for o in self.admin(step).list_offsets(step.arg("topic"), partition):
            if o.partition == partition:
                return o.earliest, o.latest
        raise DriverError(f"list_offsets: no partition {partition} in the reply")

    def op_list_offsets(self, step: Step) -> Dict[str, Any]:
        earliest, latest = self.offsets(step)
        return {"earliest": earliest, "latest": latest}

    def op_await_earliest(self, step: Step) -> Dict[str, Any]:
        deadline = time.monotonic() + step.num("timeout_ms") / 1000
        while True:
            earliest, _ = self.offsets(step)
            if earliest >= step.num("min") or time.monotonic() >= deadline:
                return {"earliest": earliest}
            time.sleep(0.05)

    # -- producer
    def op_producer_open(self, step: Step) -> Dict[str, Any]:
        self.producers[step.arg("name")] = cursus.Producer(**self.options(step))
        return {}

    def op_produce(self, step: Step) -> Dict[str, Any]:
        value = step.data("value")
        if value is None:
            fill = step.data("value_fill") or b""
            if len(fill) != 1:
                raise DriverError("produce: no value")
            value = fill * step.num("value_len")
        partition = step.num("partition") if "partition" in step.args else None
        meta = self.producer(step).send_and_wait(step.arg("topic"), value, key=step.data("key"), partition=partition)
        return {"partition": meta.partition, "offset": meta.offset}

    def op_produce_many(self, step: Step) -> Dict[str, Any]:
        producer, topic = self.producer(step), step.arg("topic")
        value_prefix = step.data("value_prefix") or b""
        key_prefix = step.data("key_prefix")
        deliveries = []
        for i in range(step.num("count")):
            suffix = str(i).encode()
            key = key_prefix + suffix if key_prefix is not None else None
            deliveries.append(producer.send(topic, value_prefix + suffix, key=key))
        producer.flush()
        partitions = [d.result().partition for d in deliveries]
        return {"count": len(partitions), "partitions": partitions}

    def op_flush(self, step: Step) -> Dict[str, Any]:
        self.producer(step).flush()
        return {}

    def op_producer_close(self, step: Step) -> Dict[str, Any]:
        lookup(self.producers, step.arg("name"), "producer").close()
        return {}

    # -- consumer
    def op_consumer_open(self, step: Step) -> Dict[str, Any]:
        self.consumers[step.arg("name")] = cursus.Consumer(**self.options(step))
        return {}

    def op_subscribe(self, step: Step) -> Dict[str, Any]:
        if "pattern" in step.args:
            self.consumer(step).subscribe_pattern(step.args["pattern"])
        else:
            self.consumer(step).subscribe(step.arg("topics").split(","))
        return {}

    def op_poll(self, step: Step) -> Dict[str, Any]:
        consumer, want = self.consumer(step), max(step.num("count"), 1)
        deadline = time.monotonic() + step.num("timeout_ms") / 1000
        records: List[Dict[str, Any]] = []
        while True:
            for m in consumer.poll(max(deadline - time.monotonic(), 0.0)):
                records.append({
                    "topic": m.topic, "partition": m.partition, "offset": m.offset,
                    "key": m.key.hex() if m.key else None, "value": m.value.hex(),
                })
            if len(records) >= want or time.monotonic() >= deadline:
                return {"records": records}

    def op_commit(self, step: Step) -> Dict[str, Any]:
        self.consumer(step).commit()
        return {}

    def op_commit_offsets(self, step: Step) -> Dict[str, Any]:
        tp = cursus.TopicPartition(step.arg("topic"), step.num("partition"))
        self.consumer(step).commit_offsets({tp: step.num("offset")})
        return {}

    def op_committed(self, step: Step) -> Dict[str, Any]:
        tp = cursus.TopicPartition(step.arg("topic"), step.num("partition"))
        return {"offset": self.consumer(step).committed(tp)}

    def op_assignment(self, step: Step) -> Dict[str, Any]:
        return {"partitions": [f"{tp.topic}:{tp.partition}" for tp in self.consumer(step).assignment()]}

    def op_consumer_close(self, step: Step) -> Dict[str, Any]:
        lookup(self.consumers, step.arg("name"), "consumer").close()
        return {}


H = TypeVar("H")


def lookup(handles: Dict[str, H], name: str, kind: str) -> H:
    if name not in handles:
        raise DriverError(f"no {kind} named {name!r}")
    return handles[name]


def error_json(e: BaseException) -> Dict[str, Any]:
    if isinstance(e, cursus.CursusError):
        return {"code": e.code, "class": e.error_class, "retryable": e.retryable, "fields": dict(e.fields)}
    print(f"driver error: {e!r}", file=sys.stderr)
    return {"code": "driver_error", "class": "internal", "retryable": False, "fields": {}}


def main() -> int:
    if len(sys.argv) != 3:
        print(f"usage: {sys.argv[0]} <bootstrap host:port> <plan file>", file=sys.stderr)
        return 2
    driver = Driver(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        lines = [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    for n, line in enumerate(lines):
        try:
            report: Dict[str, Any] = {"step": n, "ok": True, "result": driver.run(Step(line))}
        except Exception as e:  # noqa: BLE001 - every failure becomes a reported step
            report = {"step": n, "ok": False, "error": error_json(e)}
        print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
