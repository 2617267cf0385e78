"""Conformance driver for the Python binding: the synchronous API of ``cursus``,
or with ``--asyncio`` the asyncio API of ``cursus.aio``.

``python driver.py [--asyncio] <bootstrap> <plan>`` runs each plan step through
the public API and prints one JSON line per step. The contract is conformance/PROTOCOL.md;
the harness compares the results.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple, TypeVar

import cursus
import cursus.aio

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
    """Runs steps through the synchronous API (``cursus``) or, with
    ``asyncio=True``, the asyncio API (``cursus.aio``). The two have the same
    method names, so one set of ops serves both: `call` awaits what the
    asyncio API returns and passes the synchronous API's values through."""

    def __init__(self, bootstrap: str, asyncio: bool) -> None:
        self.bootstrap = bootstrap
        self.asyncio = asyncio
        self.admins: Dict[str, Any] = {}
        self.producers: Dict[str, Any] = {}
        self.consumers: Dict[str, Any] = {}
        self.stores: Dict[str, Any] = {}
        # What each consumer's rebalance listener was told (rebalance_listen).
        self.rebalance_events: Dict[str, List[Dict[str, Any]]] = {}

    def options(self, step: Step) -> Dict[str, Any]:
        return {"bootstrap_servers": self.bootstrap, **step.config}

    async def open(self, kind: str, options: Dict[str, Any]) -> Any:
        """A connected AdminClient, Producer or Consumer of the chosen API."""
        if self.asyncio:
            return await getattr(cursus.aio, kind).connect(**options)
        return getattr(cursus, kind)(**options)

    async def admin(self, step: Step) -> Any:
        name = step.args.get("admin", "")
        if name == "" and "" not in self.admins:
            self.admins[""] = await self.open("AdminClient", {"bootstrap_servers": self.bootstrap})
        return lookup(self.admins, name, "admin")

    def producer(self, step: Step) -> Any:
        return lookup(self.producers, step.arg("producer"), "producer")

    def consumer(self, step: Step) -> Any:
        return lookup(self.consumers, step.arg("consumer"), "consumer")

    def store(self, step: Step) -> Any:
        return lookup(self.stores, step.arg("store"), "event store")

    async def run(self, step: Step) -> Dict[str, Any]:
        handler: Callable[[Step], Awaitable[Dict[str, Any]]] = getattr(self, "op_" + step.op)
        return await handler(step)

    # -- admin
    async def op_admin_open(self, step: Step) -> Dict[str, Any]:
        self.admins[step.arg("name")] = await self.open("AdminClient", self.options(step))
        return {}

    async def op_admin_close(self, step: Step) -> Dict[str, Any]:
        await call(lookup(self.admins, step.arg("name"), "admin").close())
        return {}

    async def op_create_topic(self, step: Step) -> Dict[str, Any]:
        extra: Dict[str, Any] = {}
        if "auth_policy" in step.args:
            extra["auth_policy"] = step.args["auth_policy"]
        # Principals of an `acl` topic: comma-separated in the plan, a list in Python.
        for acl in ("read_acl", "write_acl"):
            if acl in step.args:
                extra[acl] = step.args[acl].split(",")
        if "replication_factor" in step.args:
            extra["replication_factor"] = step.num("replication_factor")
        if "retention_bytes" in step.args:
            extra["retention_bytes"] = step.num("retention_bytes")
        if "idempotent" in step.args:
            extra["idempotent"] = step.args["idempotent"] == "true"
        if "event_sourcing" in step.args:
            extra["event_sourcing"] = step.args["event_sourcing"] == "true"
        if "aggregate_replay" in step.args:
            extra["aggregate_replay"] = step.args["aggregate_replay"] == "true"
        admin = await self.admin(step)
        info = await call(admin.create_topic(step.arg("topic"), partitions=step.num("partitions"), **extra))
        return {"partitions": info.partitions}

    async def op_delete_topic(self, step: Step) -> Dict[str, Any]:
        admin = await self.admin(step)
        out = await call(admin.delete_topic(step.arg("topic"), if_exists=step.args.get("if_exists") == "true"))
        return {"deleted": out.deleted}

    async def op_truncate_topic(self, step: Step) -> Dict[str, Any]:
        admin = await self.admin(step)
        out = await call(admin.truncate_topic(step.arg("topic"), step.num("expected_revision")))
        return {"revision": out.revision}

    async def op_alter_topic(self, step: Step) -> Dict[str, Any]:
        minimum = step.num("min_in_sync_replicas")
        admin = await self.admin(step)
        await call(admin.alter_topic_config(step.arg("topic"), minimum if minimum >= 0 else None))
        return {}

    async def op_cluster_status(self, step: Step) -> Dict[str, Any]:
        admin = await self.admin(step)
        status = await call(admin.cluster_status())
        return {
            "brokers": len(status.brokers),
            "partitions": len(status.partitions),
            "raft_leader": status.raft_leader,
            "leaderless": status.leaderless,
            "under_replicated": status.under_replicated,
            "led_by": {
                f"{p.topic}/{p.partition}": p.leader for p in status.partitions if p.leader is not None
            },
            "voters": list(status.voters),
            "learners": list(status.learners),
            "transaction_coordinator_shards": status.transaction_coordinator_shards,
            "producers": {f"{p.topic}/{p.partition}": p.producers for p in status.partitions},
        }

    async def op_elect_leader(self, step: Step) -> Dict[str, Any]:
        admin = await self.admin(step)
        out = await call(
            admin.elect_leader(step.arg("topic"), step.num("partition"), step.arg("broker"))
        )
        return {
            "previous_leader": out.previous_leader,
            "leader": out.leader,
            "leader_epoch": out.leader_epoch,
            "changed": out.changed,
        }

    async def op_reassign_partition(self, step: Step) -> Dict[str, Any]:
        admin = await self.admin(step)
        out = await call(
            admin.reassign_partition(
                step.arg("topic"), step.num("partition"), step.arg("replicas").split(",")
            )
        )
        return {
            "done": out.done,
            "replicas": list(out.replicas),
            "isr": list(out.isr),
            "leader": out.leader,
            "target": list(out.target),
        }

    async def op_list_cluster(self, step: Step) -> Dict[str, Any]:
        admin = await self.admin(step)
        brokers = await call(admin.list_cluster())
        return {"brokers": [b.id for b in brokers]}

    async def op_list_topics(self, step: Step) -> Dict[str, Any]:
        return {"topics": await call((await self.admin(step)).list_topics())}

    async def op_describe_topic(self, step: Step) -> Dict[str, Any]:
        description = await call((await self.admin(step)).describe_topic(step.arg("topic")))
        return {"partitions": len(description.partitions)}

    async def offsets(self, step: Step) -> Tuple[int, int]:
        partition = step.num("partition")
        for o in await call((await self.admin(step)).list_offsets(step.arg("topic"), partition)):
            if o.partition == partition:
                return o.earliest, o.latest
        raise DriverError(f"list_offsets: no partition {partition} in the reply")

    async def op_list_offsets(self, step: Step) -> Dict[str, Any]:
        earliest, latest = await self.offsets(step)
        return {"earliest": earliest, "latest": latest}

    async def op_await_earliest(self, step: Step) -> Dict[str, Any]:
        deadline = time.monotonic() + step.num("timeout_ms") / 1000
        while True:
            earliest, _ = await self.offsets(step)
            if earliest >= step.num("min") or time.monotonic() >= deadline:
                return {"earliest": earliest}
            await asyncio.sleep(0.05)

    # -- producer
    async def op_producer_open(self, step: Step) -> Dict[str, Any]:
        self.producers[step.arg("name")] = await self.open("Producer", self.options(step))
        return {}

    async def op_produce(self, step: Step) -> Dict[str, Any]:
        value = step.data("value")
        if value is None:
            fill = step.data("value_fill") or b""
            if len(fill) != 1:
                raise DriverError("produce: no value")
            value = fill * step.num("value_len")
        partition = step.num("partition") if "partition" in step.args else None
        timestamp = step.num("timestamp") if "timestamp" in step.args else None
        producer, topic, key = self.producer(step), step.arg("topic"), step.data("key")
        metadata = text(step, "metadata") if "metadata" in step.args else None
        context = cursus.TraceContext(step.args["traceparent"], step.args.get("tracestate")) \
            if "traceparent" in step.args else None
        if self.asyncio:
            meta = await producer.send(topic, value, key=key, partition=partition, timestamp=timestamp,
                                       metadata=metadata, trace_context=context)
        else:
            meta = producer.send_and_wait(topic, value, key=key, partition=partition, timestamp=timestamp,
                                          metadata=metadata, trace_context=context)
        return {"partition": meta.partition, "offset": meta.offset, "timestamp": meta.timestamp}

    async def op_produce_many(self, step: Step) -> Dict[str, Any]:
        producer, topic = self.producer(step), step.arg("topic")
        value_prefix = step.data("value_prefix") or b""
        key_prefix = step.data("key_prefix")
        pending = []
        for i in range(step.num("count")):
            suffix = str(i).encode()
            key = key_prefix + suffix if key_prefix is not None else None
            send = producer.send(topic, value_prefix + suffix, key=key)
            # asyncio: start each send now (a task), await them after flush.
            pending.append(asyncio.ensure_future(send) if self.asyncio else send)
        await call(producer.flush())
        if self.asyncio:
            metas = await asyncio.gather(*pending)
        else:
            metas = [d.result() for d in pending]
        return {"count": len(metas), "partitions": [m.partition for m in metas]}

    async def op_flush(self, step: Step) -> Dict[str, Any]:
        await call(self.producer(step).flush())
        return {}

    async def op_producer_close(self, step: Step) -> Dict[str, Any]:
        await call(lookup(self.producers, step.arg("name"), "producer").close())
        return {}

    # -- transactions (a producer opened with config.transactional_id)
    async def op_txn_init(self, step: Step) -> Dict[str, Any]:
        await call(self.producer(step).init_transactions())
        return {}

    async def op_txn_begin(self, step: Step) -> Dict[str, Any]:
        await call(self.producer(step).begin_transaction())
        return {}

    async def op_txn_send_offsets(self, step: Step) -> Dict[str, Any]:
        # Without explicit offsets: what the consumer has delivered, with its
        # group session (send_consumer_offsets).
        await call(self.producer(step).send_offsets_to_transaction(self.consumer(step)))
        return {}

    async def op_txn_append_stream(self, step: Step) -> Dict[str, Any]:
        extra: Dict[str, Any] = {}
        if "event_type" in step.args:
            extra["event_type"] = step.args["event_type"]
        if "event_id" in step.args:
            extra["event_id"] = step.args["event_id"]
        appended = await call(self.producer(step).append_stream(
            step.arg("topic"), text(step, "key"), step.num("expected_version"), step.data("value") or b"", **extra))
        return {"version": appended.version, "offset": appended.offset, "partition": appended.partition}

    async def op_txn_commit(self, step: Step) -> Dict[str, Any]:
        await call(self.producer(step).commit_transaction())
        return {}

    async def op_txn_abort(self, step: Step) -> Dict[str, Any]:
        await call(self.producer(step).abort_transaction())
        return {}

    # -- consumer
    async def op_consumer_open(self, step: Step) -> Dict[str, Any]:
        self.consumers[step.arg("name")] = await self.open("Consumer", self.options(step))
        return {}

    async def op_subscribe(self, step: Step) -> Dict[str, Any]:
        if "pattern" in step.args:
            await call(self.consumer(step).subscribe_pattern(step.args["pattern"]))
        else:
            await call(self.consumer(step).subscribe(step.arg("topics").split(",")))
        return {}

    async def op_poll(self, step: Step) -> Dict[str, Any]:
        return await self.receive(step, exact=False)

    async def op_take(self, step: Step) -> Dict[str, Any]:
        return await self.receive(step, exact=True)

    async def receive(self, step: Step, exact: bool) -> Dict[str, Any]:
        """`poll` (at least `count`) and `take` (exactly `count`: each poll
        asks for at most the records still wanted)."""
        consumer, want = self.consumer(step), max(step.num("count"), 1)
        deadline = time.monotonic() + step.num("timeout_ms") / 1000
        records: List[Dict[str, Any]] = []
        while True:
            left = max(deadline - time.monotonic(), 0.0)
            wanted = want - len(records) if exact else None
            records += [record_json(m) for m in await call(consumer.poll(left, max_records=wanted))]
            if len(records) >= want or time.monotonic() >= deadline:
                return {"records": records}

    async def op_poll_once(self, step: Step) -> Dict[str, Any]:
        """One call of poll: empty before its deadline only when woken."""
        timeout = step.num("timeout_ms") / 1000
        start = time.monotonic()
        polled = await call(self.consumer(step).poll(timeout))
        early_empty = not polled and time.monotonic() - start < timeout
        return {"records": [record_json(m) for m in polled], "early_empty": early_empty}

    async def op_wakeup(self, step: Step) -> Dict[str, Any]:
        await call(self.consumer(step).wakeup())
        return {}

    async def op_commit(self, step: Step) -> Dict[str, Any]:
        await call(self.consumer(step).commit())
        return {}

    async def op_commit_offsets(self, step: Step) -> Dict[str, Any]:
        tp = cursus.TopicPartition(step.arg("topic"), step.num("partition"))
        await call(self.consumer(step).commit_offsets({tp: step.num("offset")}))
        return {}

    async def op_committed(self, step: Step) -> Dict[str, Any]:
        tp = cursus.TopicPartition(step.arg("topic"), step.num("partition"))
        return {"offset": await call(self.consumer(step).committed(tp))}

    async def op_assignment(self, step: Step) -> Dict[str, Any]:
        partitions = await call(self.consumer(step).assignment())
        return {"partitions": [f"{tp.topic}:{tp.partition}" for tp in partitions]}

    async def op_seek(self, step: Step) -> Dict[str, Any]:
        tp = cursus.TopicPartition(step.arg("topic"), step.num("partition"))
        await call(self.consumer(step).seek(tp, step.num("offset")))
        return {}

    async def op_position(self, step: Step) -> Dict[str, Any]:
        tp = cursus.TopicPartition(step.arg("topic"), step.num("partition"))
        return {"offset": await call(self.consumer(step).position(tp))}

    async def op_pause(self, step: Step) -> Dict[str, Any]:
        await call(self.consumer(step).pause(partition_list(step.arg("partitions"))))
        return {}

    async def op_resume(self, step: Step) -> Dict[str, Any]:
        await call(self.consumer(step).resume(partition_list(step.arg("partitions"))))
        return {}

    async def op_paused(self, step: Step) -> Dict[str, Any]:
        paused = await call(self.consumer(step).paused())
        return {"partitions": sorted(tp_name(tp) for tp in paused)}

    async def op_committed_list(self, step: Step) -> Dict[str, Any]:
        partitions = partition_list(step.arg("partitions"))
        committed = await call(self.consumer(step).committed(partitions))
        return {"committed": [committed[tp] for tp in partitions]}

    async def op_rebalance_listen(self, step: Step) -> Dict[str, Any]:
        """Installs the binding's listener: a cursus.RebalanceListener
        (plain methods, on the listener thread) or, asyncio, a
        cursus.aio.RebalanceListener (coroutines, on the loop)."""
        name = step.arg("consumer")
        consumer = self.consumer(step)
        seek_to = step.num("seek_to") if "seek_to" in step.args else None
        commit = step.args.get("commit_on_revoke") == "true"
        events = self.rebalance_events.setdefault(name, [])

        def entry(kind: str, partitions: List[cursus.TopicPartition]) -> Dict[str, Any]:
            return {"kind": kind, "partitions": sorted(tp_name(tp) for tp in partitions)}

        listener: Any
        if self.asyncio:
            class AsyncListener(cursus.aio.RebalanceListener):
                async def on_partitions_assigned(self, partitions: List[cursus.TopicPartition]) -> None:
                    if seek_to is not None:
                        for tp in partitions:
                            await consumer.seek(tp, seek_to)
                    events.append(entry("assigned", partitions))

                async def on_partitions_revoked(self, partitions: List[cursus.TopicPartition]) -> None:
                    event = entry("revoked", partitions)
                    if commit:
                        try:
                            await consumer.commit()
                        except cursus.CursusError as e:
                            event["commit_error"] = e.code
                    events.append(event)

                async def on_partitions_lost(self, partitions: List[cursus.TopicPartition]) -> None:
                    events.append(entry("lost", partitions))

            listener = AsyncListener()
        else:
            class Listener(cursus.RebalanceListener):
                def on_partitions_assigned(self, partitions: List[cursus.TopicPartition]) -> None:
                    if seek_to is not None:
                        for tp in partitions:
                            consumer.seek(tp, seek_to)
                    events.append(entry("assigned", partitions))

                def on_partitions_revoked(self, partitions: List[cursus.TopicPartition]) -> None:
                    event = entry("revoked", partitions)
                    if commit:
                        try:
                            consumer.commit()
                        except cursus.CursusError as e:
                            event["commit_error"] = e.code
                    events.append(event)

                def on_partitions_lost(self, partitions: List[cursus.TopicPartition]) -> None:
                    events.append(entry("lost", partitions))

            listener = Listener()
        consumer.set_rebalance_listener(listener)
        return {}

    async def op_rebalance_events(self, step: Step) -> Dict[str, Any]:
        events = lookup(self.rebalance_events, step.arg("consumer"), "rebalance listener of")
        return {"events": list(events)}

    async def op_consumer_close(self, step: Step) -> Dict[str, Any]:
        await call(lookup(self.consumers, step.arg("name"), "consumer").close())
        return {}

    # -- event store (text arguments arrive as hex of their UTF-8 bytes)
    async def op_es_open(self, step: Step) -> Dict[str, Any]:
        self.stores[step.arg("name")] = await self.open("EventStore", self.options(step))
        return {}

    async def op_es_close(self, step: Step) -> Dict[str, Any]:
        await call(lookup(self.stores, step.arg("name"), "event store").close())
        return {}

    async def op_es_append(self, step: Step) -> Dict[str, Any]:
        return await self.es_append(step, None)

    async def op_es_append_id(self, step: Step) -> Dict[str, Any]:
        return await self.es_append(step, step.arg("event_id"))

    async def es_append(self, step: Step, event_id: Optional[str]) -> Dict[str, Any]:
        extra: Dict[str, Any] = {}
        if event_id is not None:
            extra["event_id"] = event_id
        if "event_type" in step.args:
            extra["event_type"] = step.args["event_type"]
        if "metadata" in step.args:
            extra["metadata"] = step.data("metadata")
        if "schema_version" in step.args:
            extra["schema_version"] = step.num("schema_version")
        appended = await call(self.store(step).append(
            step.arg("topic"), text(step, "key"), step.num("expected_version"), step.data("value") or b"", **extra))
        return {"version": appended.version, "offset": appended.offset, "partition": appended.partition}

    async def op_es_replay_proof(self, step: Step) -> Dict[str, Any]:
        proof = await call(self.store(step).replay_proof(
            step.arg("topic"), text(step, "key"), opt_num(step, "expected_last_sequence")))
        return {"status": proof.status, "event_count": proof.event_count,
                "earliest_sequence": proof.earliest_retained_sequence,
                "latest_sequence": proof.latest_retained_sequence,
                "first_event_id": proof.first_event_id, "last_event_id": proof.last_event_id,
                "sequence_complete": proof.sequence_complete,
                "retention_complete": proof.retention_complete_from_sequence_one}

    async def op_es_event_range(self, step: Step) -> Dict[str, Any]:
        proof, events = await call(self.store(step).event_range(
            step.arg("topic"), text(step, "key"), step.num("from_sequence"), step.num("to_sequence"),
            opt_num(step, "max_records")))
        return {"status": proof.status, "records": [{
            "offset": e.offset, "version": e.event_sequence, "event_id": e.event_id,
            "event_type": e.event_type, "value": e.payload.encode().hex(),
        } for e in events]}

    async def op_es_stream_version(self, step: Step) -> Dict[str, Any]:
        return {"version": await call(self.store(step).stream_version(step.arg("topic"), text(step, "key")))}

    async def op_es_save_snapshot(self, step: Step) -> Dict[str, Any]:
        await call(self.store(step).save_snapshot(
            step.arg("topic"), text(step, "key"), step.num("version"), step.data("state") or b""))
        return {}

    async def op_es_read_snapshot(self, step: Step) -> Dict[str, Any]:
        return {"snapshot": snapshot_json(await call(self.store(step).read_snapshot(step.arg("topic"), text(step, "key"))))}

    async def pages(self, reader: Any) -> List[Any]:
        """Every page of a reader (the first was read when it was made)."""
        if self.asyncio:
            return [page async for page in reader.pages()]
        return list(reader.pages())

    async def op_es_read_stream(self, step: Step) -> Dict[str, Any]:
        reader = await call(self.store(step).read_stream(
            step.arg("topic"), text(step, "key"), step.num("from_version"), max_events=opt_num(step, "max_events")))
        pages = await self.pages(reader)
        return {"snapshot": snapshot_json(reader.snapshot), "records": events_json(pages), "pages": len(pages)}

    async def op_es_history(self, step: Step) -> Dict[str, Any]:
        reader = await call(self.store(step).history(
            step.arg("topic"), text(step, "key"), step.num("from_version"), opt_num(step, "to_version"),
            max_records=opt_num(step, "max_records")))
        pages = await self.pages(reader)
        return {"records": events_json(pages), "completeness": reader.completeness,
                "head_version": reader.head_version, "pages": len(pages)}

    async def op_es_browse(self, step: Step) -> Dict[str, Any]:
        reader = await call(self.store(step).browse(
            step.arg("topic"), step.num("partition"), step.num("from_offset"), opt_num(step, "to_offset"),
            max_records=opt_num(step, "max_records")))
        pages = await self.pages(reader)
        return {"records": events_json(pages), "pages": len(pages)}

    async def op_es_aggregate(self, step: Step) -> Dict[str, Any]:
        """The aggregate cycle with a counter as state (PROTOCOL.md)."""
        aggregate = await call(self.store(step).load_aggregate(
            step.arg("topic"), text(step, "key"), 0, lambda state, _event: state + 1,
            deserialize=int, serialize=str, snapshot_every=step.num("snapshot_every")))
        loaded = aggregate.loaded_snapshot
        prefix = step.data("value_prefix") or b""
        id_prefix = step.args.get("event_id_prefix")
        last_offset = None
        for i in range(step.num("appends")):
            event_id = None if id_prefix is None else f"{id_prefix}{i}"
            stored = await call(aggregate.append("Counted", prefix + str(i).encode(), event_id=event_id))
            last_offset = stored.offset
        return {"version": aggregate.version, "state": aggregate.state,
                "loaded_snapshot_version": loaded.version if loaded is not None else None,
                "loaded_events": aggregate.loaded_events, "last_offset": last_offset}


def partition_list(text: str) -> List[cursus.TopicPartition]:
    """`topic:p,topic:p` as TopicPartitions."""
    out = []
    for item in text.split(","):
        topic, sep, partition = item.rpartition(":")
        if not sep:
            raise DriverError(f"not a topic:partition: {item}")
        out.append(cursus.TopicPartition(topic, int(partition)))
    return out


def tp_name(tp: cursus.TopicPartition) -> str:
    return f"{tp.topic}:{tp.partition}"


def text(step: Step, name: str) -> str:
    """A byte-string argument holding UTF-8 text (aggregate keys)."""
    return (step.data(name) or b"").decode()


def opt_num(step: Step, name: str) -> Optional[int]:
    return step.num(name) if name in step.args else None


def snapshot_json(snapshot: Optional[cursus.Snapshot]) -> Optional[Dict[str, Any]]:
    if snapshot is None:
        return None
    return {"version": snapshot.version, "state": snapshot.state.encode().hex()}


def events_json(pages: List[cursus.Page]) -> List[Dict[str, Any]]:
    return [{
        "topic": e.topic, "partition": e.partition, "offset": e.offset, "key": e.key.hex() if e.key else None,
        "value": e.payload.hex(), "version": e.version, "event_type": e.event_type,
        "schema_version": e.schema_version, "metadata": e.metadata.encode().hex(),
    } for page in pages for e in page.events]


async def call(value: Any) -> Any:
    """The value itself (synchronous API) or what it resolves to (asyncio API)."""
    return await value if inspect.isawaitable(value) else value


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


async def run_plan(driver: Driver, lines: List[str]) -> None:
    for n, line in enumerate(lines):
        try:
            report: Dict[str, Any] = {"step": n, "ok": True, "result": await driver.run(Step(line))}
        except Exception as e:  # noqa: BLE001 - every failure becomes a reported step
            report = {"step": n, "ok": False, "error": error_json(e)}
        print(json.dumps(report), flush=True)


def record_json(m: Any) -> Dict[str, Any]:
    """A polled message as the protocol's record object."""
    context = m.trace_context
    return {
        "topic": m.topic, "partition": m.partition, "offset": m.offset,
        "key": m.key.hex() if m.key is not None else None, "value": m.value.hex(),
        "timestamp": m.timestamp,
        "metadata": m.metadata.encode().hex() if m.metadata is not None else None,
        # The context as the binding reads it, never parsed here.
        "traceparent": context.traceparent if context is not None else None,
        "tracestate": context.tracestate if context is not None else None,
        "event_type": m.event_type, "aggregate_version": m.aggregate_version,
    }


def main() -> int:
    args = sys.argv[1:]
    use_asyncio = bool(args) and args[0] == "--asyncio"
    if use_asyncio:
        args = args[1:]
    if len(args) != 2:
        print(f"usage: {sys.argv[0]} [--asyncio] <bootstrap host:port> <plan file>", file=sys.stderr)
        return 2
    with open(args[1], encoding="utf-8") as f:
        lines = [ln.strip() for ln in f if ln.strip() and not ln.lstrip().startswith("#")]
    asyncio.run(run_plan(Driver(args[0], use_asyncio), lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
