#!/usr/bin/env python3
"""Runs every binding's conformance driver on every scenario against a fresh
reference broker, prints the binding x scenario matrix and writes
target/conformance/report.json.

Scenarios (conformance/scenarios/*.json) are data; drivers only execute plans
and report (see conformance/PROTOCOL.md). This file owns the comparison, so
that "what passes" is decided once for every language.

Usage: harness.py [--bindings all|rust,c,...] [--scenarios glob]
                  [--modes plain,secure,cluster] [--cluster-scenarios core|all] [--jobs N]

Modes: `plain` runs every scenario against a broker on plain TCP; `secure`
runs the scenarios that list it in their "modes" against a broker with TLS,
mutual TLS and token authentication on, every client configured with the CA,
a client certificate and a principal's token (SECURE_USERS); `cluster` runs
the cluster core set (conformance/cluster-core.txt, or every scenario with
`--cluster-scenarios all`) against three data brokers and a `--no-replicas`
gateway, the driver bootstrapped from the gateway so that every partition
is reached through a redirect.

A cross-binding scenario ("cross_binding": true) runs once per mode for all
the bindings on one broker: each binding produces, every other consumes
what it wrote (run_cross; conformance/README.md, "Cross-binding scenarios").

Exit status: 0 when every (binding, scenario) passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "conformance" / "scenarios"
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()
# `python-asyncio` is the Python binding driven through its asyncio API.
BINDINGS = ["rust", "c", "cpp", "go", "python", "python-asyncio", "java"]
DRIVER_TIMEOUT_S = 180
BROKER_START_TIMEOUT_S = 30
# A cluster member is ready (/ready is 200) once a Raft leader is known and
# it is registered and active.
CLUSTER_READY_TIMEOUT_S = 60
# Cluster mode: data brokers (replicas, leaders) and gateways (--no-replicas).
# The scenarios test behaviour, not failover timing (restart_broker restarts
# every member): a session longer than the broker's 2 s default keeps a live
# member that a loaded CI machine starves of CPU for a moment from being
# declared inactive, which would move its groups mid-scenario
# (member_not_found).
CLUSTER_SESSION_TIMEOUT_MS = 10000
# Cluster mode replicates group membership, so a whole-cluster restart
# (restart_broker) restores the members of before it - also a consumer
# whose driver process ended without leaving - each with a fresh session
# that the coordinator then expires. The phase after the restart has the
# scenario's poll timeouts (20 s) to get every partition back: with the
# broker's 30 s default the dead member would hold its partitions past
# them, with 10 s it is expired and the group rebalanced within them.
# (Standalone loses membership in a restart, so plain mode keeps 30 s.)
CLUSTER_GROUP_SESSION_TIMEOUT_MS = 10000
CLUSTER_DATA_BROKERS = 3
CLUSTER_GATEWAYS = 1
# The scenarios that must pass in cluster mode, one name a line.
CLUSTER_CORE = ROOT / "conformance" / "cluster-core.txt"

# Each op's own arguments (PROTOCOL.md, "Ops"); on the ops that open an
# object, any other argument is configuration, written `config.<option>`.
OP_ARGS = {
    "admin_open": {"name"},
    "admin_close": {"name"},
    "create_topic": {"topic", "partitions", "replication_factor", "admin", "auth_policy", "read_acl", "write_acl", "retention_bytes", "idempotent", "event_sourcing", "aggregate_replay"},
    "delete_topic": {"topic", "if_exists", "admin"},
    "truncate_topic": {"topic", "expected_revision", "admin"},
    "alter_topic": {"topic", "min_in_sync_replicas", "admin"},
    "list_topics": {"admin"},
    "cluster_status": {"admin"},
    "elect_leader": {"topic", "partition", "broker", "admin"},
    "list_cluster": {"admin"},
    "reassign_partition": {"topic", "partition", "replicas", "admin"},
    "describe_topic": {"topic", "admin"},
    "list_offsets": {"topic", "partition", "admin"},
    "await_earliest": {"topic", "partition", "min", "timeout_ms", "admin"},
    "producer_open": {"name"},
    "produce": {"producer", "topic", "key", "value", "value_fill", "value_len", "partition", "timestamp", "metadata",
                "traceparent", "tracestate"},
    "produce_many": {"producer", "topic", "count", "key_prefix", "value_prefix"},
    "flush": {"producer"},
    "producer_close": {"name"},
    "consumer_open": {"name"},
    "subscribe": {"consumer", "topics", "pattern"},
    "poll": {"consumer", "count", "timeout_ms"},
    "take": {"consumer", "count", "timeout_ms"},
    "poll_once": {"consumer", "timeout_ms"},
    "wakeup": {"consumer"},
    "commit": {"consumer"},
    "commit_offsets": {"consumer", "topic", "partition", "offset"},
    "committed": {"consumer", "topic", "partition"},
    "assignment": {"consumer"},
    "seek": {"consumer", "topic", "partition", "offset"},
    "position": {"consumer", "topic", "partition"},
    "pause": {"consumer", "partitions"},
    "resume": {"consumer", "partitions"},
    "paused": {"consumer"},
    "committed_list": {"consumer", "partitions"},
    "rebalance_listen": {"consumer", "seek_to", "commit_on_revoke"},
    "rebalance_events": {"consumer"},
    "consumer_close": {"name"},
    "txn_init": {"producer"},
    "txn_begin": {"producer"},
    "txn_send_offsets": {"producer", "consumer"},
    "txn_commit": {"producer"},
    "txn_abort": {"producer"},
    "es_open": {"name"},
    "es_close": {"name"},
    "es_append": {"store", "topic", "key", "expected_version", "value", "event_type", "metadata", "schema_version"},
    "es_stream_version": {"store", "topic", "key"},
    "es_save_snapshot": {"store", "topic", "key", "version", "state"},
    "es_read_snapshot": {"store", "topic", "key"},
    "es_read_stream": {"store", "topic", "key", "from_version", "max_events"},
    "es_history": {"store", "topic", "key", "from_version", "to_version", "max_records"},
    "es_browse": {"store", "topic", "partition", "from_offset", "to_offset", "max_records"},
    "es_aggregate": {"store", "topic", "key", "appends", "snapshot_every", "value_prefix", "event_id_prefix"},
    "es_append_id": {"store", "topic", "key", "expected_version", "value", "event_type", "metadata", "schema_version", "event_id"},
    "es_replay_proof": {"store", "topic", "key", "expected_last_sequence"},
    "es_event_range": {"store", "topic", "key", "from_sequence", "to_sequence", "max_records"},
    "txn_append_stream": {"producer", "topic", "key", "expected_version", "value", "event_type", "event_id"},
}
OPEN_OPS = {"admin_open", "producer_open", "consumer_open", "es_open"}
BYTE_ARGS = {"key", "value", "key_prefix", "value_prefix", "metadata", "state"}
STEP_KEYS = {"op", "id", "expect", "expect_error", "expect_any", "expect_one_failed", "note", "client_certificate",
             "until_ms"}
MODES = ["plain", "secure", "cluster"]
# A cross-binding scenario's marker between its produce phase (run by each
# binding) and its consume phase (run by every other binding); done by the
# harness, like restart_broker.
SWITCH_BINDING = "switch_binding"
# Placeholders of a cross-binding scenario, replaced in every string of a
# step (arguments and expectations) by the binding names of the run.
PRODUCER, CONSUMER = "{producer}", "{consumer}"

# The principals of the secure-mode broker: name -> (token, permissions).
# Objects a scenario opens act as `admin` unless the step names another
# `principal` (a configuration option); the harness adds the token.
SECURE_USERS = {
    "admin": ("admin-token", ["*"]),
    "reader": ("reader-token", ["topic.read", "group"]),
    "writer": ("writer-token", ["topic.write"]),
    "other": ("other-token", ["topic.read", "topic.write", "group"]),
}


class ScenarioError(Exception):
    """A scenario file that does not follow the format (a bug in the data)."""


# ---------------------------------------------------------------- scenarios


def to_bytes(value: Any, what: str) -> bytes:
    """Scenario byte strings: "text" (UTF-8), {"hex": ".."} or {"fill": "a", "len": n}."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, dict) and set(value) == {"hex"}:
        return bytes.fromhex(value["hex"])
    if isinstance(value, dict) and set(value) == {"fill", "len"}:
        fill: bytes = str(value["fill"]).encode("utf-8")
        if len(fill) != 1:
            raise ScenarioError(f"{what}: fill must be one byte")
        return fill * int(value["len"])
    raise ScenarioError(f"{what}: not a byte string: {value!r}")


def plan_line(step: dict[str, Any], where: str) -> str:
    """Renders one scenario step as a plan line (PROTOCOL.md, "Plan file")."""
    op = step["op"]
    if op not in OP_ARGS:
        raise ScenarioError(f"{where}: unknown op {op!r}")
    parts = [op]
    for name, value in step.items():
        if name in STEP_KEYS:
            continue
        if name in BYTE_ARGS:
            if name == "value" and isinstance(value, dict) and "fill" in value:
                fill = to_bytes({"fill": value["fill"], "len": 1}, where)
                parts += [f"value_fill={fill.hex()}", f"value_len={int(value['len'])}"]
                continue
            rendered = to_bytes(value, f"{where}.{name}").hex()
        elif isinstance(value, bool):
            rendered = "true" if value else "false"
        elif isinstance(value, list):
            rendered = ",".join(str(v) for v in value)
        else:
            rendered = str(value)
        if any(c.isspace() for c in rendered) or not name.replace("_", "").replace(".", "").isalpha():
            raise ScenarioError(f"{where}: argument {name}={rendered!r} cannot be written in a plan")
        if name not in OP_ARGS[op]:
            if op not in OPEN_OPS:
                raise ScenarioError(f"{where}: {op} takes no argument {name!r}")
            name = "config." + name  # configuration of the object the op opens
        parts.append(f"{name}={rendered}")
    return " ".join(parts)


@dataclass
class Scenario:
    name: str
    description: str
    broker_args: list[str]
    # Phases are separated by broker restarts and by `until_ms` steps (a
    # phase of their own, repeated); each is a list of (global index, step).
    phases: list[list[tuple[int, dict[str, Any]]]]
    # Per phase: whether the broker restarts before it.
    restarts: list[bool]
    # The modes the file lists (default plain). Cluster mode runs the
    # scenarios of the core set, or with --cluster-scenarios all those that
    # list plain or cluster (runs_in); never a standalone_only one.
    modes: list[str]
    # Expectations that only a standalone broker meets (e.g. the cluster ops'
    # distribution_not_enabled): never run in cluster mode.
    standalone_only: bool = False
    # A cross-binding scenario: phases[0] is the produce phase, phases[1]
    # the consume phase (see run_cross).
    cross_binding: bool = False

    @staticmethod
    def load(path: Path) -> "Scenario":
        data = json.loads(path.read_text())
        if data.get("cross_binding"):
            return Scenario.load_cross(path, data)
        phases: list[list[tuple[int, dict[str, Any]]]] = [[]]
        restarts = [False]
        for i, step in enumerate(data["steps"]):
            if step["op"] == "restart_broker":
                phases.append([])
                restarts.append(True)
                continue
            plan_line(step, f"{path.name} step {i}")  # validate early
            if "until_ms" in step:
                # A step that waits for the brokers: a phase of its own, run
                # again in a new driver until it passes or time is up.
                phases += [[(i, step)], []]
                restarts += [False, False]
                continue
            phases[-1].append((i, step))
        return Scenario(
            name=path.stem,
            description=data.get("description", ""),
            broker_args=[str(a) for a in data.get("broker_args", [])],
            phases=phases,
            restarts=restarts,
            modes=Scenario.check_modes(data.get("modes", ["plain"]), path.name),
            standalone_only=bool(data.get("standalone_only", False)),
        )

    @staticmethod
    def load_cross(path: Path, data: dict[str, Any]) -> "Scenario":
        """A cross-binding scenario: the steps before its one
        `switch_binding` are the produce phase, those after it the consume
        phase; neither restarts the broker or waits (`until_ms`)."""
        steps = list(enumerate(data["steps"]))
        switches = [i for i, step in steps if step["op"] == SWITCH_BINDING]
        if len(switches) != 1:
            raise ScenarioError(f"{path.name}: a cross_binding scenario has exactly one {SWITCH_BINDING} step")
        produce, consume = steps[: switches[0]], steps[switches[0] + 1:]
        for i, step in steps:
            if step["op"] == SWITCH_BINDING:
                continue
            if step["op"] == "restart_broker" or "until_ms" in step:
                raise ScenarioError(f"{path.name} step {i}: a cross_binding scenario neither restarts nor waits")
            if i < switches[0] and CONSUMER in json.dumps(step):
                raise ScenarioError(f"{path.name} step {i}: {CONSUMER} in the produce phase")
            plan_line(fill_in(step, "rust", "go"), f"{path.name} step {i}")  # validate early
        return Scenario(
            name=path.stem,
            description=data.get("description", ""),
            broker_args=[str(a) for a in data.get("broker_args", [])],
            phases=[produce, consume],
            restarts=[False, False],
            modes=Scenario.check_modes(data.get("modes", ["plain"]), path.name),
            standalone_only=bool(data.get("standalone_only", False)),
            cross_binding=True,
        )

    @staticmethod
    def check_modes(modes: Any, where: str) -> list[str]:
        if not isinstance(modes, list) or not modes or any(m not in MODES for m in modes):
            raise ScenarioError(f"{where}: modes must be a non-empty list of {MODES}")
        return [str(m) for m in modes]


def fill_in(value: Any, producer: str, consumer: str | None = None) -> Any:
    """A cross-binding step with its placeholders replaced by the bindings
    of the run (in every string, arguments and expectations alike)."""
    if isinstance(value, str):
        value = value.replace(PRODUCER, producer)
        return value if consumer is None else value.replace(CONSUMER, consumer)
    if isinstance(value, list):
        return [fill_in(v, producer, consumer) for v in value]
    if isinstance(value, dict):
        return {k: fill_in(v, producer, consumer) for k, v in value.items()}
    return value


def load_scenarios(pattern: str) -> list[Scenario]:
    paths = sorted(p for p in SCENARIOS.glob("*.json") if fnmatch.fnmatch(p.stem, pattern))
    return [Scenario.load(p) for p in paths]


def load_cluster_core(path: Path = CLUSTER_CORE) -> set[str]:
    """The cluster core set: one scenario name a line, `#` starts a comment
    (the pending scenarios are listed there commented out)."""
    names = set()
    for n, raw in enumerate(path.read_text().splitlines(), start=1):
        name = raw.split("#", 1)[0].strip()
        if not name:
            continue
        scenario = SCENARIOS / f"{name}.json"
        if not scenario.is_file():
            raise ScenarioError(f"{path.name} line {n}: no scenario {name!r}")
        if Scenario.load(scenario).standalone_only:
            raise ScenarioError(f"{path.name} line {n}: {name} is standalone_only")
        names.add(name)
    return names


def runs_in(scenario: Scenario, mode: str, cluster_set: set[str] | None) -> bool:
    """Whether a scenario runs in a mode: plain and secure as its file lists;
    cluster when it is in the cluster set (None: every scenario that runs
    plain or lists cluster) and not standalone_only."""
    if mode != "cluster":
        return mode in scenario.modes
    if scenario.standalone_only:
        return False
    if cluster_set is None:
        return "plain" in scenario.modes or "cluster" in scenario.modes
    return scenario.name in cluster_set


# ------------------------------------------------------------ expectations


def hexed(value: Any) -> Any:
    return None if value is None else to_bytes(value, "expectation").hex()


def check_result(step: dict[str, Any], line: dict[str, Any], saved: dict[str, dict[str, Any]]) -> str | None:
    """Returns why a driver's output line does not meet the step's expectation.

    `saved` holds the output lines of earlier steps that have an `id`."""
    if step.get("expect_any"):
        return None
    if "expect_one_failed" in step:
        # Exactly one of this step and an earlier one failed, with this error.
        want = step["expect_one_failed"]
        other = saved.get(want["with"])
        if other is None:
            return f"expect_one_failed: no earlier step with id {want['with']!r}"
        failed = [ln for ln in (line, other) if not ln.get("ok")]
        if len(failed) != 1:
            return f"expected exactly one of this step and {want['with']} to fail, {len(failed)} did"
        return error_problem(want["error"], failed[0])
    if "expect_error" in step:
        return error_problem(step["expect_error"], line)
    if not line.get("ok"):
        return f"unexpected error {short(line.get('error'))}"
    result = line.get("result") or {}
    for key, want in step.get("expect", {}).items():
        if key == "union_with":
            problem = check_union(want, result, saved)
        elif isinstance(want, dict) and "same_as" in want:
            problem = check_relative(key, want, result, saved)
        else:
            problem = check_expectation(key, want, result)
        if problem:
            return problem
    return None


def error_problem(want: dict[str, Any], line: dict[str, Any]) -> str | None:
    if line.get("ok"):
        return f"expected error {want}, got success {short(line.get('result'))}"
    err = line.get("error") or {}
    for key in ("code", "class", "retryable"):
        if key in want and err.get(key) != want[key]:
            return f"expected error {key}={want[key]!r}, got {short(err)}"
    for name, value in want.get("fields", {}).items():
        if (err.get("fields") or {}).get(name) != value:
            return f"expected error field {name}={value!r}, got {short(err)}"
    return None


def check_expectation(key: str, want: Any, result: dict[str, Any]) -> str | None:
    records = result.get("records") or []
    if key == "count":  # number of records polled, or of records produced
        got = len(records) if "records" in result else result.get("count")
        return None if got == want else f"expected {want} records, got {got}"
    if key == "values":  # polled values, in order within each partition
        want_hex = [hexed(v) for v in want]
        got = [r["value"] for r in records]
        if sorted(got) != sorted(want_hex):
            return f"expected values {short(want)}, got {short(decode_all(got))}"
        return order_problem(records, want_hex)
    if key == "keys":
        got = sorted((r["key"] or "") for r in records)
        return None if got == sorted(hexed(v) or "" for v in want) else f"expected keys {short(want)}, got {short(got)}"
    if key == "value_sizes":
        got = [len(r["value"]) // 2 for r in records]
        return None if got == want else f"expected value sizes {want}, got {got}"
    if key == "versions":  # event versions, in the order returned
        got = [r.get("version") for r in records]
        return None if got == want else f"expected versions {want}, got {got}"
    if key == "event_types":  # event types, in the order returned
        got = [r.get("event_type") for r in records]
        return None if got == want else f"expected event types {want}, got {got}"
    if key == "snapshot":  # es_read_snapshot / es_read_stream: {"version", "state"} or null
        got = result.get("snapshot")
        if want is None or got is None:
            return None if got == want else f"expected snapshot {want}, got {got}"
        exp = {"version": want["version"], "state": hexed(want["state"])}
        return None if got == exp else f"expected snapshot {want}, got {short(got)}"
    if key == "offsets":  # offsets polled, as a sorted list
        got = sorted(r["offset"] for r in records)
        return None if got == sorted(want) else f"expected offsets {want}, got {got}"
    if key == "record_partitions":  # distinct partitions the polled records came from
        got = sorted({r["partition"] for r in records})
        return None if got == sorted(want) else f"expected partitions {want}, got {got}"
    if key == "same_partition":  # every produced record landed on one partition
        parts = set(result.get("partitions", []))
        ok = (len(parts) == 1) == bool(want)
        return None if ok else f"expected same_partition={want}, got partitions {sorted(parts)}"
    if key == "topics_include":
        got = set(result.get("topics", []))
        missing = [t for t in want if t not in got]
        return None if not missing else f"topics {missing} missing from {sorted(got)}"
    if key == "topics_exclude":
        got = set(result.get("topics", []))
        present = [t for t in want if t in got]
        return None if not present else f"topics {present} should be gone, got {sorted(got)}"
    if key == "partitions" and isinstance(want, list) and "partitions" in result:
        got = result["partitions"]
        if got and isinstance(got[0], str):  # assignment: compare as sets
            return None if sorted(got) == sorted(want) else f"expected assignment {want}, got {got}"
        return None if got == want else f"expected partitions {want}, got {got}"
    if key.startswith("len:"):
        got = result.get(key[4:])
        n = len(got) if isinstance(got, list) else None
        return None if n == want else f"expected {want} {key[4:]}, got {got}"
    if key.endswith("_at_least"):
        name = key[: -len("_at_least")]
        got = len(records) if name == "count" and "records" in result else result.get(name)
        return None if isinstance(got, int) and got >= want else f"expected {name} >= {want}, got {got}"
    if key == "record_fields":  # per record, in order: only the fields named
        if len(records) != len(want):
            return f"expected {len(want)} records, got {len(records)}"
        for i, (w, r) in enumerate(zip(want, records)):
            for name, value in w.items():
                exp = hexed(value) if name in ("key", "value", "metadata") and value is not None else value
                if name not in r:  # a driver that leaves a field out does not report it as null
                    return f"record {i}: the driver reports no {name!r}: {short(r)}"
                if r.get(name) != exp:
                    got = r.get(name)
                    if name in ("key", "value", "metadata") and got is not None:
                        got = decode_all([got])[0]
                    return f"record {i} ({short(r.get('topic'))}:{r.get('partition')}@{r.get('offset')}): " \
                           f"expected {name}={value!r}, got {got!r}"
        return None
    if key in ("event_kinds", "event_sizes"):  # rebalance_events, in order
        events = result.get("events") or []
        got = [e["kind"] if key == "event_kinds" else len(e["partitions"]) for e in events]
        return None if got == want else f"expected {key} {want}, got {short(events)}"
    if key.endswith("_not_null"):  # e.g. offset_not_null, raft_leader_not_null
        name = key[: -len("_not_null")]
        ok = (result.get(name) is not None) == bool(want)
        return None if ok else f"expected {key}={want}, got {name}={result.get(name)!r}"
    got = result.get(key)
    return None if got == want else f"expected {key}={want!r}, got {got!r}"


def check_relative(key: str, want: dict[str, Any], result: dict[str, Any],
                   saved: dict[str, dict[str, Any]]) -> str | None:
    """`{"same_as": id, "plus": n}`: the field equals the same field of
    earlier step `id`'s result, plus `n` (default 0), e.g. a leader epoch
    one above the previous election's."""
    other = saved.get(want["same_as"])
    if other is None or not other.get("ok"):
        return f"{key}: no earlier successful step with id {want['same_as']!r}"
    base = (other.get("result") or {}).get(key)
    plus = want.get("plus", 0)
    if plus and not isinstance(base, int):
        return f"{key}: step {want['same_as']!r} reported {base!r}, not a number"
    expected = base + plus if plus else base
    got = result.get(key)
    return None if got == expected else f"expected {key}={expected!r} ({want['same_as']}'s + {plus}), got {got!r}"


def check_union(want: dict[str, Any], result: dict[str, Any], saved: dict[str, dict[str, Any]]) -> str | None:
    """This step's records (or assignment) together with those of earlier
    steps (`step`, or a list in `steps`): pairwise disjoint, and `count`
    items (or exactly the `partitions` listed) in all."""
    names = [want["step"]] if "step" in want else list(want["steps"])
    label = ",".join(names)

    def items(r: dict[str, Any]) -> list[Any]:
        if "records" in r:
            return [(x["topic"], x["partition"], x["offset"]) for x in r["records"]]
        return list(r.get("partitions", []))

    union: set[Any] = set(items(result))
    seen = len(items(result))
    for name in names:
        line = saved.get(name)
        if line is None or not line.get("ok"):
            return f"union_with: no earlier successful step with id {name!r}"
        theirs = items(line.get("result") or {})
        overlap = union & set(theirs)
        if overlap:
            return f"union_with {name}: overlapping items {sorted(overlap)[:5]}"
        union |= set(theirs)
        seen += len(theirs)
    if seen != len(union):
        return f"union_with {label}: duplicate items within one step"
    if "count" in want and len(union) != want["count"]:
        return f"union_with {label}: expected {want['count']} items in all, got {len(union)}"
    if "partitions" in want and sorted(union) != sorted(want["partitions"]):
        return f"union_with {label}: expected {sorted(want['partitions'])}, got {sorted(union)}"
    return None


def order_problem(records: list[dict[str, Any]], want_hex: list[str]) -> str | None:
    """Records of one partition must arrive in the order they were expected
    (records without topic and partition, e.g. a range read's events, all
    belong to one aggregate and so to one partition)."""
    rank = {v: i for i, v in enumerate(want_hex)}
    last: dict[tuple[str, int], int] = {}
    for r in records:
        tp = (str(r.get("topic", "")), int(r.get("partition", 0)))
        pos = rank.get(r["value"], -1)
        if pos < last.get(tp, -1):
            return f"records of {tp[0]}:{tp[1]} arrived out of order"
        last[tp] = pos
    return None


def decode_all(values: list[str]) -> list[str]:
    out = []
    for v in values:
        raw = bytes.fromhex(v)
        try:
            out.append(raw.decode("utf-8") if len(raw) <= 64 else f"<{len(raw)} bytes>")
        except UnicodeDecodeError:
            out.append("hex:" + v[:64])
    return out


def short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit] + "..."


# ------------------------------------------------------------------ secure mode


@dataclass
class Secure:
    """The secure mode's certificates (made once per harness run by
    cursus-test-pki) and the broker configuration that uses them."""

    pki: Path

    @staticmethod
    def create(pki_bin: Path, work: Path) -> "Secure":
        pki = work / "pki"
        subprocess.run([str(pki_bin), str(pki)], check=True, stdout=subprocess.DEVNULL)
        return Secure(pki)

    def broker_config(self) -> str:
        lines = [
            'tls_listen = "127.0.0.1:0"',
            f'tls_cert_file = "{self.pki / "server.pem"}"',
            f'tls_key_file = "{self.pki / "server.key"}"',
            f'tls_client_ca_file = "{self.pki / "ca.pem"}"',
            "enable_sasl = true",
        ]
        for principal, (token, permissions) in SECURE_USERS.items():
            perms = ", ".join(f'"{p}"' for p in permissions)
            lines += ["", "[[users]]", f'principal = "{principal}"', f'token = "{token}"',
                      f"permissions = [{perms}]"]
        return "\n".join(lines) + "\n"

    def client_options(self, step: dict[str, Any]) -> dict[str, Any]:
        """What an open step of a secure run adds: CA, client certificate
        (unless `client_certificate: false`) and the principal's token,
        never overriding what the step sets itself."""
        principal = step.get("principal", "admin")
        options: dict[str, Any] = {"tls_ca_file": str(self.pki / "ca.pem"), "principal": principal}
        if step.get("client_certificate", True):
            options["tls_cert_file"] = str(self.pki / "client.pem")
            options["tls_key_file"] = str(self.pki / "client.key")
        if principal in SECURE_USERS:
            options["token"] = SECURE_USERS[principal][0]
        return {k: v for k, v in options.items() if k not in step}


def secure_step(step: dict[str, Any], secure: Secure | None) -> dict[str, Any]:
    """The step as a run in this mode executes it."""
    if secure is None:
        return step
    if step["op"] in OPEN_OPS:
        return {**step, **secure.client_options(step)}
    if "admin" in OP_ARGS[step["op"]] and "admin" not in step:
        # The drivers' implicit admin has only bootstrap_servers: use the
        # explicitly opened, secured one that secure_prelude adds.
        return {**step, "admin": SECURE_ADMIN}
    return step


SECURE_ADMIN = "secure-admin"


def secure_prelude(secure: Secure | None) -> list[dict[str, Any]]:
    """Steps a secure run puts before each phase (their output is checked
    to succeed, not reported as the scenario's)."""
    if secure is None:
        return []
    return [secure_step({"op": "admin_open", "name": SECURE_ADMIN}, secure)]


# ------------------------------------------------------------------ broker


class Broker:
    """A reference broker process with its own data directory and ports.

    Every mode starts its brokers through this class: a standalone broker,
    or a cluster member (`args` then carry the cluster flags)."""

    def __init__(self, binary: Path, data_dir: Path, args: list[str], secure: Secure | None = None,
                 log: Path | None = None):
        self.binary, self.data_dir, self.args = binary, data_dir, args
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.proc: subprocess.Popen[str] | None = None
        self.addr = "127.0.0.1:0"
        self.health = "127.0.0.1:0"
        self.tls_addr = "127.0.0.1:0"
        self.log = open(log or data_dir.parent / "broker.log", "a")
        self.config: Path | None = None
        if secure is not None:
            self.config = data_dir.parent / "broker.toml"
            self.config.write_text(secure.broker_config())

    @property
    def client_addr(self) -> str:
        """Where clients connect: the TLS listener when there is one."""
        return self.tls_addr if self.config else self.addr

    def start(self) -> None:
        # A secure broker listens on TLS only, so that every address it
        # hands out (METADATA leaders, coordinators) is a TLS one. A restart
        # keeps the ports.
        listen = ["--listen", "off", "--tls-listen", self.tls_addr, "--config", str(self.config)] \
            if self.config else ["--listen", self.addr]
        cmd = [str(self.binary), *listen, "--health-listen", self.health,
               "--data-dir", str(self.data_dir), *self.args]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True)
        banner = read_line(self.proc, BROKER_START_TIMEOUT_S)
        if not banner or "listening" not in banner:
            self.stop()
            raise RuntimeError(f"broker did not start: {banner!r} (log: {self.log.name})")
        fields = dict(t.split("=", 1) for t in banner.split() if "=" in t)
        self.addr, self.health = fields["addr"], fields["health"]
        if self.config:
            self.tls_addr = fields["tls_addr"]
        # Keep draining stdout so the broker never blocks on a full pipe.
        threading.Thread(target=lambda p=self.proc: [None for _ in p.stdout], daemon=True).start()

    def wait_ready(self, timeout: float) -> None:
        """Waits until the health listener answers `/ready` with 200."""
        deadline = time.monotonic() + timeout
        while http_status(self.health, "/ready") != 200:
            if self.proc is None or self.proc.poll() is not None:
                raise RuntimeError(f"broker exited before it was ready (log: {self.log.name})")
            if time.monotonic() > deadline:
                raise RuntimeError(f"broker not ready within {timeout}s (log: {self.log.name})")
            time.sleep(0.05)  # /ready is polled: the broker has no readiness event to wait on

    def log_text(self) -> str:
        """What the broker logged so far (it writes the file itself)."""
        return Path(self.log.name).read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: the restart scenarios check that acknowledged data survives a crash."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


def http_status(addr: str, path: str) -> int | None:
    """The status code of `GET path` on `addr`, None when not reachable."""
    host, port = addr.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=1) as s:
            s.settimeout(2)
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n".encode())
            reply = b""
            while chunk := s.recv(4096):
                reply += chunk
    except OSError:
        return None
    parts = reply.split(maxsplit=2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def fixed_port() -> int:
    """A free loopback port for a listener whose address peers need up front.

    Picked below the kernel's ephemeral range, so that the port-0 listeners
    and outgoing connections of the other runs cannot take it between the
    pick and the broker's bind (which happened with ports picked by binding
    port 0); only another pick here can, and Cluster.start retries that."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(100):
        port = random.randrange(10000, max(low, 10001))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


class Standalone:
    """One broker: plain or secure mode."""

    def __init__(self, binary: Path, run_dir: Path, args: list[str], secure: Secure | None):
        self.broker = Broker(binary, run_dir / "data", args, secure)

    @property
    def bootstrap(self) -> str:
        return self.broker.client_addr

    def start(self) -> None:
        self.broker.start()

    def restart(self) -> None:
        """`restart_broker`: SIGKILL, then the same ports and data directory."""
        self.broker.kill()
        self.broker.start()

    def stop(self) -> None:
        self.broker.stop()


class Cluster:
    """Cluster mode: CLUSTER_DATA_BROKERS brokers that hold the replicas and
    CLUSTER_GATEWAYS `--no-replicas` members (they lead nothing) under one
    root, with one internal token. Cluster listeners are on fixed ports
    picked free up front (every member needs its peers' addresses), client and
    health listeners on port 0 (kept across restarts). Drivers bootstrap
    from the first gateway, so every partition is reached by a redirect.
    The scenario's broker_args go to every member."""

    def __init__(self, binary: Path, run_dir: Path, args: list[str]):
        self.binary, self.run_dir, self.args = binary, run_dir, args
        self.root = run_dir / "cluster"
        self.members: list[Broker] = []

    def create_members(self) -> None:
        n = CLUSTER_DATA_BROKERS + CLUSTER_GATEWAYS
        ports: list[int] = []
        while len(ports) < n:
            port = fixed_port()
            if port not in ports:
                ports.append(port)
        peers = ",".join(f"{i}=127.0.0.1:{port}" for i, port in enumerate(ports, start=1))
        token = secrets.token_hex(16)
        self.members = [
            Broker(self.binary, self.root / f"node-{i}",
                   [*self.args, "--node-id", str(i), "--cluster-peers", peers, "--internal-auth-token", token,
                    "--broker-session-timeout-ms", str(CLUSTER_SESSION_TIMEOUT_MS),
                    "--group-session-timeout-ms", str(CLUSTER_GROUP_SESSION_TIMEOUT_MS)]
                   + (["--no-replicas"] if i > CLUSTER_DATA_BROKERS else []),
                   log=self.run_dir / f"broker-{i}.log")
            for i in range(1, n + 1)
        ]

    @property
    def gateway(self) -> Broker:
        return self.members[CLUSTER_DATA_BROKERS]

    @property
    def bootstrap(self) -> str:
        return self.gateway.client_addr

    def start(self) -> None:
        """Starts a new cluster; when a member cannot bind its cluster port
        (taken since it was picked), once more on other ports."""
        for attempt in range(2):
            self.create_members()
            try:
                self.start_members()
                return
            except RuntimeError:
                if attempt == 1 or not any("Address already in use" in m.log_text() for m in self.members):
                    raise
                self.stop()

    def start_members(self) -> None:
        # Every member first (a Raft leader needs a majority), then /ready on each.
        for m in self.members:
            m.start()
        for m in self.members:
            m.wait_ready(CLUSTER_READY_TIMEOUT_S)

    def restart(self) -> None:
        """`restart_broker`: the whole cluster is SIGKILLed and restarted on
        the same ports and data directories (what a scenario says of "the
        broker" - acknowledged data and state survive a crash - is said of
        the service, not of one member; killing one member is failover,
        which broker/tests/cluster.rs and the chaos tests cover)."""
        for m in self.members:
            m.kill()
        self.start_members()

    def stop(self) -> None:
        for m in self.members:
            m.kill()
            m.log.close()
        shutil.rmtree(self.root, ignore_errors=True)  # data only; logs stay in the run directory


def read_line(proc: subprocess.Popen[str], timeout: float) -> str | None:
    box: list[str] = []
    out = proc.stdout
    assert out is not None, "started with stdout=PIPE"
    t = threading.Thread(target=lambda: box.append(out.readline()), daemon=True)
    t.start()
    t.join(timeout)
    return box[0] if box else None


# ------------------------------------------------------------------- runs


@dataclass
class Outcome:
    binding: str
    scenario: str
    status: str
    detail: str = ""
    seconds: float = 0.0
    steps: list[dict[str, Any]] = field(default_factory=list)
    saved: dict[str, dict[str, Any]] = field(default_factory=dict)  # output lines by step id


def driver_command(binding: str) -> list[str]:
    return [str(TARGET / "conformance" / "bin" / binding)]


def run_one(binding: str, scenario: Scenario, mode: str, broker_bin: Path, work: Path,
            secure: Secure | None) -> Outcome:
    started = time.monotonic()
    name = run_name(scenario, mode)
    run_dir = Path(tempfile.mkdtemp(prefix=f"{binding}-{name.replace('@', '-')}-", dir=work))
    secure = secure if mode == "secure" else None
    outcome = Outcome(binding, name, "pass")
    brokers: Standalone | Cluster | None = None
    try:
        brokers = new_brokers(scenario, mode, broker_bin, run_dir, secure)
        brokers.start()
        for n, phase in enumerate(scenario.phases):
            if scenario.restarts[n]:
                brokers.restart()
            problem = run_until(binding, scenario, n, phase, brokers.bootstrap, run_dir, outcome, secure)
            if problem:
                outcome.status, outcome.detail = "fail", problem
                break
    except Exception as e:  # noqa: BLE001 - any harness trouble fails the run, visibly
        outcome.status, outcome.detail = "fail", f"harness: {e}"
    finally:
        if brokers is not None:
            brokers.stop()
    outcome.seconds = round(time.monotonic() - started, 2)
    if outcome.status == "pass":
        shutil.rmtree(run_dir, ignore_errors=True)
    else:
        outcome.detail += f" (logs: {run_dir})"
    return outcome


def new_brokers(scenario: Scenario, mode: str, broker_bin: Path, run_dir: Path,
                secure: Secure | None) -> Standalone | Cluster:
    """The broker (or cluster) a run of `scenario` in `mode` talks to, not started."""
    if mode == "cluster":
        return Cluster(broker_bin, run_dir, scenario.broker_args)
    return Standalone(broker_bin, run_dir, scenario.broker_args, secure)


def run_cross(bindings: list[str], scenario: Scenario, mode: str, broker_bin: Path, work: Path,
              secure: Secure | None) -> list[Outcome]:
    """A cross-binding scenario on one broker (or cluster): every binding
    runs the produce phase ({producer} = itself), then every binding runs,
    in one driver process, the consume phase once per other binding whose
    produce phase passed ({producer} = that binding, {consumer} = itself).
    A binding's cell fails when its produce phase failed ("as producer")
    or when it did not read what another binding wrote ("reading <P>'s
    records"); each producer's steps are checked on their own, so the
    detail names every producer it failed on. Two driver starts per
    binding: the cost grows with the number of bindings, not of pairs."""
    name = run_name(scenario, mode)
    run_dir = Path(tempfile.mkdtemp(prefix=f"cross-{name.replace('@', '-')}-", dir=work))
    secure = secure if mode == "secure" else None
    outcomes = {b: Outcome(b, name, "pass") for b in bindings}
    problems: dict[str, list[str]] = {b: [] for b in bindings}
    seconds = dict.fromkeys(bindings, 0.0)
    produce_phase, consume_phase = scenario.phases
    brokers: Standalone | Cluster | None = None
    try:
        brokers = new_brokers(scenario, mode, broker_bin, run_dir, secure)
        brokers.start()
        produced = []
        for p in bindings:
            started = time.monotonic()
            phase = [(i, fill_in(step, p)) for i, step in produce_phase]
            problem = run_phase(p, scenario, f"produce-{p}", phase, brokers.bootstrap, run_dir, outcomes[p], secure) \
                if phase else None
            seconds[p] += time.monotonic() - started
            if problem:
                problems[p].append(f"as producer: {problem}")
            else:
                produced.append(p)
        for c in bindings:
            blocks = [(p, [(i, fill_in(step, p, c)) for i, step in consume_phase]) for p in produced if p != c]
            if not blocks:
                continue
            started = time.monotonic()
            ran = drive(c, scenario, f"consume-{c}", [step for _, block in blocks for _, step in block],
                        brokers.bootstrap, run_dir, secure)
            seconds[c] += time.monotonic() - started
            if isinstance(ran, str):
                problems[c].append(f"as consumer: {ran}")
                continue
            first = 0
            for p, block in blocks:
                problem = check_lines(block, ran, first, outcomes[c].steps, {})
                if problem:
                    problems[c].append(f"reading {p}'s records: {problem}")
                first += len(block)
            if ran.returncode != 0 and not problems[c]:
                problems[c].append(f"as consumer: driver exited {ran.returncode} after its last step")
    except Exception as e:  # noqa: BLE001 - any harness trouble fails the run, visibly
        for b in bindings:
            problems[b].append(f"harness: {e}")
    finally:
        if brokers is not None:
            brokers.stop()
    failed = any(problems.values())
    for b, o in outcomes.items():
        o.seconds = round(seconds[b], 2)
        if problems[b]:
            o.status, o.detail = "fail", "; ".join(problems[b]) + f" (logs: {run_dir})"
        elif len(bindings) < 2:
            o.detail = "no other binding selected: only the produce phase ran"
    if not failed:
        shutil.rmtree(run_dir, ignore_errors=True)
    return list(outcomes.values())


def run_name(scenario: Scenario, mode: str) -> str:
    """A scenario's name in the matrix: `name` in plain mode, `name@secure`, `name@cluster`."""
    return scenario.name if mode == "plain" else f"{scenario.name}@{mode}"


def run_until(binding: str, scenario: Scenario, n: int, phase: list[tuple[int, dict[str, Any]]],
              bootstrap: str, run_dir: Path, outcome: Outcome, secure: Secure | None) -> str | None:
    """Runs a phase; a phase of one `until_ms` step again until it passes or
    its time is up (what the brokers converge to, not how fast)."""
    until_ms = phase[0][1].get("until_ms") if len(phase) == 1 else None
    deadline = time.monotonic() + (until_ms or 0) / 1000
    steps = len(outcome.steps)
    while True:
        problem = run_phase(binding, scenario, f"phase{n}", phase, bootstrap, run_dir, outcome, secure)
        if problem is None or until_ms is None or time.monotonic() >= deadline:
            return problem if until_ms is None or problem is None else f"{problem} (for {until_ms} ms)"
        del outcome.steps[steps:]
        time.sleep(0.2)


def run_phase(binding: str, scenario: Scenario, label: str, phase: list[tuple[int, dict[str, Any]]],
              bootstrap: str, run_dir: Path, outcome: Outcome, secure: Secure | None) -> str | None:
    if not phase:
        return None
    ran = drive(binding, scenario, label, [step for _, step in phase], bootstrap, run_dir, secure)
    if isinstance(ran, str):
        return ran
    problem = check_lines(phase, ran, 0, outcome.steps, outcome.saved)
    if problem is None and ran.returncode != 0:
        return f"driver exited {ran.returncode} after its last step"
    return problem


@dataclass
class Ran:
    """A driver's output: the lines answering the plan's own steps (after
    the secure prelude, which `base` lines answered) and its exit status."""

    lines: list[str]
    base: int
    returncode: int


def drive(binding: str, scenario: Scenario, label: str, steps: list[dict[str, Any]], bootstrap: str,
          run_dir: Path, secure: Secure | None) -> Ran | str:
    """Runs `steps` in one driver process (plan, stdout and stderr saved as
    `<label>.*` in the run directory): the output lines of the steps and
    the driver's exit status, or what went wrong (a timeout, a driver that
    did not start, a secure prelude that failed)."""
    plan = run_dir / f"{label}.plan"
    prelude = secure_prelude(secure)
    steps = prelude + [secure_step(step, secure) for step in steps]
    plan.write_text("".join(plan_line(step, scenario.name) + "\n" for step in steps))
    cmd = [*driver_command(binding), bootstrap, str(plan)]
    with open(run_dir / f"{label}.stderr", "w") as err:
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                                  timeout=DRIVER_TIMEOUT_S)
        except subprocess.TimeoutExpired as e:
            # The partial output is bytes even with text=True (a known
            # quirk of subprocess.run's timeout): keep it, and show its end.
            partial = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            (run_dir / f"{label}.stdout").write_text(partial)
            return f"driver timed out after {DRIVER_TIMEOUT_S}s (partial output: {short(partial[-200:])})"
        except OSError as e:
            return f"driver could not start: {e}"
    (run_dir / f"{label}.stdout").write_text(proc.stdout)
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    for k, step in enumerate(prelude):
        if k >= len(lines) or not json.loads(lines[k]).get("ok"):
            got = lines[k][:200] if k < len(lines) else "no output"
            return f"secure prelude step {k} ({step['op']}) failed: {got}"
    return Ran(lines[len(prelude):], len(prelude), proc.returncode)


def check_lines(phase: list[tuple[int, dict[str, Any]]], ran: Ran, first: int,
                log: list[dict[str, Any]], saved: dict[str, dict[str, Any]]) -> str | None:
    """Checks the output of `phase`, whose steps are the plan's steps
    `first`, `first + 1`, ... (after the prelude): the first problem, or None."""
    for k, (index, step) in enumerate(phase, start=first):
        if k >= len(ran.lines):
            return f"step {index} ({step['op']}): no output (driver exit {ran.returncode})"
        try:
            line = json.loads(ran.lines[k])
        except json.JSONDecodeError:
            return f"step {index} ({step['op']}): not JSON: {ran.lines[k][:200]!r}"
        if line.get("step") != ran.base + k:
            return f"step {index} ({step['op']}): output for step {line.get('step')} out of order"
        log.append({"step": index, "op": step["op"], "ok": bool(line.get("ok"))})
        problem = check_result(step, line, saved)
        if "id" in step:
            saved[step["id"]] = line
        if problem:
            return f"step {index} ({step['op']}): {problem}"
    return None


# ------------------------------------------------------------------ report


def print_matrix(bindings: list[str], runs: list[str], results: dict[tuple[str, str], Outcome]) -> None:
    width = max(len(r) for r in runs)
    cell = {b: max(len(b), 6) for b in bindings}
    print("\n" + "scenario".ljust(width) + "  " + "  ".join(b.center(cell[b]) for b in bindings))
    for r in runs:
        cells = []
        for b in bindings:
            o = results.get((b, r))
            cells.append(("pass" if o and o.status == "pass" else "FAIL").center(cell[b]))
        print(r.ljust(width) + "  " + "  ".join(cells))
    failed = [o for o in results.values() if o.status != "pass"]
    for o in failed:
        print(f"FAIL {o.binding} {o.scenario}: {o.detail}")
    total = len(results)
    secure = sum(1 for r in runs if r.endswith("@secure"))
    cluster = sum(1 for r in runs if r.endswith("@cluster"))
    print(f"\nconformance: {total - len(failed)} passed, {len(failed)} failed "
          f"({len(bindings)} bindings x {len(runs)} scenario runs: "
          f"{len(runs) - secure - cluster} plain, {secure} secure, {cluster} cluster)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bindings", default=",".join(BINDINGS), help="comma-separated, or all")
    ap.add_argument("--scenarios", default="*", help="glob on scenario names")
    ap.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 2))
    ap.add_argument("--modes", default=",".join(MODES), help="some of plain, secure, cluster")
    ap.add_argument("--cluster-scenarios", choices=["core", "all"], default="core",
                    help=f"cluster mode runs the core set ({CLUSTER_CORE.name}) or every scenario")
    ap.add_argument("--cluster-core", default=str(CLUSTER_CORE),
                    help="the core set's file (another list, e.g. to try pending scenarios)")
    ap.add_argument("--broker", default=str(TARGET / "debug" / "cursus-broker"))
    ap.add_argument("--pki-tool", default=str(TARGET / "debug" / "cursus-test-pki"),
                    help="cursus-test-pki, which writes the secure mode's certificates")
    ap.add_argument("--report", default=str(TARGET / "conformance" / "report.json"))
    ap.add_argument("--runs", default=str(TARGET / "conformance" / "runs"),
                    help="working directory of the runs (emptied first); give concurrent harnesses their own")
    args = ap.parse_args()

    bindings = BINDINGS if args.bindings == "all" else [b for b in args.bindings.split(",") if b]
    unknown = [b for b in bindings if b not in BINDINGS]
    if unknown:
        ap.error(f"unknown bindings {unknown}; known: {BINDINGS}")
    scenarios = load_scenarios(args.scenarios)
    if not scenarios:
        ap.error(f"no scenario matches {args.scenarios!r} in {SCENARIOS}")
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in MODES for m in modes):
        ap.error(f"--modes must name some of {MODES}")
    broker_bin = Path(args.broker)
    if not broker_bin.is_file():
        ap.error(f"no broker binary at {broker_bin} (cargo build -p cursus-broker)")
    pki_bin = Path(args.pki_tool)
    if "secure" in modes and not pki_bin.is_file():
        ap.error(f"no {pki_bin} (cargo build -p cursus-testkit --bin cursus-test-pki)")

    work = Path(args.runs)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    secure = Secure.create(pki_bin, work) if "secure" in modes else None
    cluster_set = load_cluster_core(Path(args.cluster_core)) \
        if "cluster" in modes and args.cluster_scenarios == "core" else None
    runs = [(s, m) for s in scenarios for m in modes if runs_in(s, m, cluster_set)]
    if not runs:
        ap.error(f"no scenario matching {args.scenarios!r} runs in modes {modes}")
    run_names = [run_name(s, m) for s, m in runs]
    results: dict[tuple[str, str], Outcome] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # A cross-binding scenario is one job for every binding (one broker);
        # submitted first, as it is the longest.
        futures = [pool.submit(run_cross, bindings, s, m, broker_bin, work, secure)
                   for s, m in runs if s.cross_binding]

        def one(b: str, s: Scenario, m: str) -> list[Outcome]:
            return [run_one(b, s, m, broker_bin, work, secure)]

        futures += [pool.submit(one, b, s, m) for b in bindings for s, m in runs if not s.cross_binding]
        for fut in concurrent.futures.as_completed(futures):
            for o in fut.result():
                results[(o.binding, o.scenario)] = o
                mark = "ok  " if o.status == "pass" else "FAIL"
                print(f"{mark} {o.binding:<6} {o.scenario} ({o.seconds}s)" + (f": {o.detail}" if o.detail else ""),
                      flush=True)

    print_matrix(bindings, run_names, results)
    report = {
        "bindings": bindings,
        "scenarios": run_names,
        "results": [
            {"binding": b, "scenario": r, "status": results[(b, r)].status,
             "detail": results[(b, r)].detail, "seconds": results[(b, r)].seconds}
            for b in bindings for r in run_names
        ],
    }
    Path(args.report).parent.mkdir(parents=True, exist_ok=True)
    Path(args.report).write_text(json.dumps(report, indent=1) + "\n")
    print(f"report: {args.report}")
    return 0 if all(o.status == "pass" for o in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
