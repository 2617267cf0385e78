#!/usr/bin/env python3
"""`make bench-peer`: the same workloads against Apache Kafka and our broker.

Starts a single-node KRaft Kafka (combined controller + broker, loopback,
free ports, its own temp dir) at its defaults, then again with
`log.flush.interval.messages=1` ("Kafka sync"), then our reference broker
(release build, default config: it syncs before acknowledging). Against
each, every language against its own Kafka client: Python (py_workloads.py:
confluent-kafka / cursus), native (java/KafkaBench.java: the Kafka Java
client / bench_native: the Rust engine), C (c/bench_peer.c: librdkafka /
libcursus), C++ (cpp/bench_peer.cpp: librdkafka++ / cursus++), Go
(go/main.go: franz-go / our Go package) and Java (KafkaBench / CursusBench:
the Kafka Java client / our jar); then the transactional rows (txn_rows.py:
transactional produce and the exactly-once loop, java/KafkaTxnBench.java /
bench_txn: the Kafka Java client / the Rust engine; py_txn.py, the loop
alone: confluent-kafka / cursus; acks=all on both sides); then the cluster
rows (cluster_rows.py): a three-node KRaft Kafka against three of our
brokers, acks=all, rf=3, min in-sync 2 (java/KafkaClusterBench.java /
bench_cluster); and the event-store rows (eventstore_rows.py:
bench_eventstore against a broker of ours, set against our own idempotent
produce and consume, as Kafka has no event store). Prints one table, then
the event-store table, and writes them, with every raw figure, to
target/bench/peer.json. Every broker it started is stopped, and its temp dir
removed, whatever happens (also on SIGINT / SIGTERM).

Run by tools/bench-peer/build.mk; see tools/bench-peer/README.md.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import py_workloads  # noqa: E402  (topics for the C, C++ and Go harnesses)
import txn_rows  # noqa: E402  (the transactional rows)
import cluster_rows  # noqa: E402
import eventstore_rows  # noqa: E402

SYSTEMS = [("kafka", "Kafka"), ("kafka_sync", "Kafka sync"), ("ours", "Ours")]


def log(msg: str) -> None:
    print(f"bench-peer: {msg}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


class Broker:
    """A broker process this run started, with its temp dir."""

    def __init__(self, name: str, argv: List[str], tmp: Path, cwd: Optional[Path] = None,
                 stdout: Any = None) -> None:
        self.name = name
        self.tmp = tmp
        self.log_path = tmp / "broker.log"
        self.log = open(self.log_path, "wb")
        try:
            self.proc = subprocess.Popen(argv, cwd=cwd, stdout=stdout or self.log,
                                         stderr=self.log, stdin=subprocess.DEVNULL)
        except OSError:
            self.log.close()
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self.bootstrap = ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def fail(self, why: str) -> None:
        tail = self.log_path.read_text(errors="replace")[-4000:]
        raise RuntimeError(f"{self.name}: {why}\n--- its log (tail) ---\n{tail}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


STARTED: List[Broker] = []


def stop_all() -> None:
    while STARTED:
        b = STARTED.pop()
        try:
            b.stop()
            log(f"stopped {b.name}")
        except Exception as e:  # keep stopping the others
            log(f"stopping {b.name}: {e}")


def new_kafka_cluster_id() -> str:
    """A KRaft cluster id (what `kafka-storage.sh random-uuid` prints)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def start_kraft_node(lib: Path, name: str, cluster_id: str, node_id: int, voters: str,
                     port: int, cport: int, heap: str, extra: Dict[str, str]) -> Broker:
    """Formats and starts one combined controller + broker KRaft node on
    loopback (`port` for clients, `cport` for the controller quorum
    `voters`), in a temp dir of its own, with `extra` server properties;
    the node is in STARTED (stopped whatever happens) and not yet awaited."""
    tmp = Path(tempfile.mkdtemp(prefix=f"cursus-peer-kafka-{node_id}-"))
    props = {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        "controller.quorum.voters": voters,
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(tmp / "data"),
        "num.partitions": "4",
        "group.initial.rebalance.delay.ms": "0",
        **extra,
    }
    conf = tmp / "server.properties"
    conf.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    java = ["java", f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC",
            f"-Dlog4j2.configurationFile={HERE / 'log4j2.properties'}",
            f"-Dlog4j.configuration=file:{HERE / 'log4j.properties'}",
            "-cp", f"{lib}/*"]
    fmt = subprocess.run(java + ["kafka.tools.StorageTool", "format", "-t", cluster_id,
                                 "-c", str(conf)],
                         capture_output=True, text=True, timeout=120)
    if fmt.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise RuntimeError(f"kafka storage format failed:\n{fmt.stdout}\n{fmt.stderr}")
    broker = Broker(name, java + ["kafka.Kafka", str(conf)], tmp)
    STARTED.append(broker)
    broker.bootstrap = f"127.0.0.1:{port}"
    return broker


def start_kafka(lib: Path, sync: bool) -> Broker:
    port, cport = free_port(), free_port()
    while cport == port:
        cport = free_port()
    # One node: its internal topics with one replica.
    extra = {
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
    }
    if sync:
        extra["log.flush.interval.messages"] = "1"
    broker = start_kraft_node(lib, "kafka (sync)" if sync else "kafka", new_kafka_cluster_id(),
                              1, f"1@127.0.0.1:{cport}", port, cport, "1g", extra)
    wait_kafka_ready(broker, port)
    return broker


def wait_kafka_ready(broker: Broker, port: int) -> None:
    """Polls the port, then the metadata (a broker listed by the cluster)."""
    from confluent_kafka.admin import AdminClient

    deadline = time.monotonic() + 180
    while not port_open(port):
        if not broker.alive():
            broker.fail("exited before listening")
        if time.monotonic() > deadline:
            broker.fail("not listening after 180 s")
        time.sleep(0.1)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    while True:
        try:
            if admin.list_topics(timeout=2).brokers:
                return
        except Exception:
            pass
        if not broker.alive():
            broker.fail("exited before serving metadata")
        if time.monotonic() > deadline:
            broker.fail("no metadata after 180 s")


def start_ours(broker_bin: Path) -> Broker:
    tmp = Path(tempfile.mkdtemp(prefix="cursus-peer-ours-"))
    (tmp / "data").mkdir()
    broker = Broker("ours", [str(broker_bin), "--listen", "127.0.0.1:0",
                             "--health-listen", "127.0.0.1:0",
                             "--data-dir", str(tmp / "data")],
                    tmp, stdout=subprocess.PIPE)
    STARTED.append(broker)
    assert broker.proc.stdout is not None
    line = broker.proc.stdout.readline().decode(errors="replace")  # says addr= once listening
    fields = dict(p.split("=", 1) for p in line.split() if "=" in p)
    if "addr" not in fields:
        broker.fail(f"did not start: {line!r}")
    broker.bootstrap = fields["addr"]
    return broker


def run_json(argv: List[str], timeout: float, env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Runs one workload process; its last stdout line is a JSON object."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])}… failed ({proc.returncode}):\n"
                           f"{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# The C, C++ and Go harnesses: one program per language, both clients in
# it, chosen by the first argument (the Kafka side's, then ours).
HARNESS_CLIENTS = {"c": ("rdkafka", "cursus"), "cpp": ("rdkafka", "cursus"),
                   "go": ("franz", "cursus")}


def run_harnesses(broker: Broker, kafka: bool, args: argparse.Namespace,
                  result: Dict[str, Any]) -> None:
    """The C, C++ and Go rows: a fresh topic each, produced by a cold
    producer, then read back by one group member."""
    admin = py_workloads.Kafka(broker.bootstrap) if kafka else py_workloads.Cursus(broker.bootstrap)
    for lang, (theirs, ours) in HARNESS_CLIENTS.items():
        topic = f"peer-{lang}-{uuid.uuid4().hex[:8]}"
        admin.create_topic(topic)
        result[lang] = {}
        for mode in ("produce", "consume"):
            result[lang][mode] = run_json(
                [str(getattr(args, f"{lang}_bin")), theirs if kafka else ours, mode,
                 broker.bootstrap, topic, str(args.native_records)], timeout=1800,
                env={"RUST_LOG": "warn"})
            log(f"{broker.name}: {lang} {mode} {json.dumps(result[lang][mode])}")


def run_java(broker: Broker, kafka: bool, args: argparse.Namespace, result: Dict[str, Any]) -> None:
    """The native rows (the Kafka Java client against the Rust engine) and
    the Java rows (the Kafka Java client against our jar)."""
    java = ["java", "-Xmx1g", f"-Dlog4j.configuration=file:{HERE / 'log4j.properties'}"]
    kafka_bench = java + ["-cp", f"{args.classes}:{args.kafka_lib}/*", "KafkaBench"]
    cursus_bench = java + ["-cp", f"{args.classes}:{args.cursus_jar}", "CursusBench"]
    n = str(args.native_records)
    runs = {"native": kafka_bench if kafka else [str(args.native_bin)]}
    if not kafka:  # the Kafka side of the Java rows is the native rows' run
        runs["java"] = cursus_bench
    for name, argv in runs.items():
        topic = f"peer-{name}-{uuid.uuid4().hex[:8]}"
        for mode in ("produce", "consume"):
            result[f"{name}_{mode}"] = run_json(argv + [mode, broker.bootstrap, topic, n],
                                                timeout=1800, env={"RUST_LOG": "warn"})
            log(f"{broker.name}: {name} {mode} {json.dumps(result[f'{name}_{mode}'])}")
    if kafka:
        result["java_produce"], result["java_consume"] = (result["native_produce"],
                                                          result["native_consume"])
    result["java_calls"] = run_json(
        (kafka_bench if kafka else cursus_bench)
        + ["calls", broker.bootstrap, f"peer-calls-{uuid.uuid4().hex[:8]}", n],
        timeout=1800, env={"RUST_LOG": "warn"})
    log(f"{broker.name}: java calls {json.dumps(result['java_calls'])}")


def run_system(key: str, args: argparse.Namespace) -> Dict[str, Any]:
    kafka = key != "ours"
    broker = start_kafka(args.kafka_lib, key == "kafka_sync") if kafka else start_ours(args.broker_bin)
    log(f"{broker.name} up at {broker.bootstrap}")
    try:
        result: Dict[str, Any] = {}
        result["python"] = run_json(
            [sys.executable, str(HERE / "py_workloads.py"), "--client",
             "kafka" if kafka else "cursus", "--bootstrap", broker.bootstrap,
             "--records", str(args.records), "--roundtrips", str(args.roundtrips)],
            timeout=1800, env={"RUST_LOG": "warn"})
        log(f"{broker.name}: python {json.dumps(result['python'])}")
        run_java(broker, kafka, args, result)
        run_harnesses(broker, kafka, args, result)
        txn_rows.run(broker, kafka, args, result, run_json, log)
        return result
    finally:
        broker.stop()
        if broker in STARTED:
            STARTED.remove(broker)
        log(f"stopped {broker.name}")


# --- the table ---------------------------------------------------------------

def fmt_rate(v: float) -> str:
    if v >= 1e6:
        return f"{v / 1e6:.2f}M"
    if v >= 1e3:
        return f"{v / 1e3:.0f}k"
    return f"{v:.0f}"


def ratio(ours: float, theirs: float, higher_better: bool) -> Optional[float]:
    """Ours against theirs, above 1 when ours is better."""
    if not ours or not theirs or math.isnan(ours) or math.isnan(theirs):
        return None
    return ours / theirs if higher_better else theirs / ours


def fmt_ratio(r: Optional[float]) -> str:
    return "n/a" if r is None else f"{r:.2f}"


def build_rows(res: Dict[str, Dict[str, Any]], n: int, native_n: int,
               extra: List[Any]) -> List[Dict[str, Any]]:
    def get(sys_key: str, path: Callable[[Dict[str, Any]], float]) -> Optional[float]:
        try:
            return float(path(res[sys_key]))
        except (KeyError, TypeError, ValueError):
            return None

    specs = [
        (f"Python produce {n:,}, records/s", "records/s", True,
         [lambda r: r["python"]["produce"]["records_per_s"]], fmt_rate),
        (f"Python consume {n:,} (group), records/s", "records/s", True,
         [lambda r: r["python"]["consume"]["records_per_s"]], fmt_rate),
        ("Python per call, produce() vs send(), µs", "us", False,
         [lambda r: r["python"]["produce"]["per_call_us"]], lambda v: f"{v:.2f} µs"),
        ("Round trip, linger 5: p50 / p99, ms", "ms", False,
         [lambda r: r["python"]["round_trip_linger_5"]["p50_ms"],
          lambda r: r["python"]["round_trip_linger_5"]["p99_ms"]], lambda v: f"{v:.2f}"),
        ("Round trip, linger 0: p50 / p99, ms", "ms", False,
         [lambda r: r["python"]["round_trip_linger_0"]["p50_ms"],
          lambda r: r["python"]["round_trip_linger_0"]["p99_ms"]], lambda v: f"{v:.2f}"),
        (f"Native produce {native_n:,}: Java client vs Rust engine, records/s", "records/s", True,
         [lambda r: r["native_produce"]["records_per_s"]], fmt_rate),
        (f"Native consume {native_n:,}: Java client vs Rust engine, records/s", "records/s", True,
         [lambda r: r["native_consume"]["records_per_s"]], fmt_rate),
        (f"C produce {native_n:,}: librdkafka vs libcursus, records/s", "records/s", True,
         [lambda r: r["c"]["produce"]["records_per_s"]], fmt_rate),
        (f"C consume {native_n:,} (group), records/s", "records/s", True,
         [lambda r: r["c"]["consume"]["records_per_s"]], fmt_rate),
        ("C per call, rd_kafka_produce() vs cursus_producer_send_cb(), µs", "us", False,
         [lambda r: r["c"]["produce"]["per_call_us"]], lambda v: f"{v:.2f} µs"),
        (f"C++ produce {native_n:,}: librdkafka++ vs cursus++, records/s", "records/s", True,
         [lambda r: r["cpp"]["produce"]["records_per_s"]], fmt_rate),
        (f"C++ consume {native_n:,} (group), records/s", "records/s", True,
         [lambda r: r["cpp"]["consume"]["records_per_s"]], fmt_rate),
        (f"Go produce {native_n:,}: franz-go vs cursus (cgo), records/s", "records/s", True,
         [lambda r: r["go"]["produce"]["records_per_s"]], fmt_rate),
        (f"Go consume {native_n:,} (group), records/s", "records/s", True,
         [lambda r: r["go"]["consume"]["records_per_s"]], fmt_rate),
        (f"Java produce {native_n:,}: Java client vs our jar, records/s", "records/s", True,
         [lambda r: r["java_produce"]["records_per_s"]], fmt_rate),
        (f"Java consume {native_n:,} (group), records/s", "records/s", True,
         [lambda r: r["java_consume"]["records_per_s"]], fmt_rate),
        ("Java per call (JIT warmed), send() vs send(), µs", "us", False,
         [lambda r: r["java_calls"]["per_call_us"]], lambda v: f"{v:.2f} µs"),
    ] + extra
    rows = []
    for label, unit, higher, paths, fmt in specs:
        row: Dict[str, Any] = {"workload": label, "unit": unit,
                               "higher_is_better": higher}
        cells = {}
        for key, _ in SYSTEMS:
            vals = [get(key, p) for p in paths]
            row[key] = vals[0] if len(vals) == 1 else vals
            cells[key] = " / ".join("—" if v is None else fmt(v) for v in vals)
        for theirs in ("kafka", "kafka_sync"):
            rs = [ratio(o, t, higher) if o is not None and t is not None else None
                  for o, t in zip(*(row[k] if isinstance(row[k], list) else [row[k]]
                                    for k in ("ours", theirs)))]
            row[f"ours_vs_{theirs}"] = rs[0] if len(rs) == 1 else rs
            cells[f"r_{theirs}"] = " / ".join(fmt_ratio(r) for r in rs)
        row["cells"] = cells
        rows.append(row)
    return rows


def print_table(rows: List[Dict[str, Any]]) -> str:
    head = ["Workload", "Kafka", "Kafka sync", "Ours", "ours/Kafka", "ours/Kafka sync"]
    return markdown_table(head, [[r["workload"], r["cells"]["kafka"], r["cells"]["kafka_sync"],
                                  r["cells"]["ours"], r["cells"]["r_kafka"],
                                  r["cells"]["r_kafka_sync"]] for r in rows])


def markdown_table(head: List[str], body: List[List[str]]) -> str:
    widths = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(line, widths)) + " |"
             for line in [head] + body]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kafka-lib", type=Path, required=True)
    parser.add_argument("--classes", type=Path, required=True)
    parser.add_argument("--broker-bin", type=Path, required=True)
    parser.add_argument("--native-bin", type=Path, required=True)
    parser.add_argument("--cursus-jar", type=Path, required=True)
    parser.add_argument("--c-bin", type=Path, required=True)
    parser.add_argument("--cpp-bin", type=Path, required=True)
    parser.add_argument("--go-bin", type=Path, required=True)
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--native-records", type=int, default=2_000_000)
    parser.add_argument("--roundtrips", type=int, default=2_000)
    txn_rows.add_args(parser)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--command", default="make bench-peer")
    cluster_rows.add_args(parser)
    eventstore_rows.add_args(parser)
    args = parser.parse_args()

    def on_signal(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    try:
        args.classes.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-nowarn", "-d", str(args.classes),
                        "-cp", f"{args.kafka_lib}/*:{args.cursus_jar}",
                        *(str(f) for f in sorted((HERE / "java").glob("*.java")))], check=True)
        results: Dict[str, Dict[str, Any]] = {}
        for key, _ in SYSTEMS:
            results[key] = run_system(key, args)
        cluster_rows.run(sys.modules[__name__], args, results)
        eventstore_rows.run(sys.modules[__name__], args, results)
    finally:
        stop_all()
    rows = build_rows(results, args.records, args.native_records,
                      txn_rows.specs(args.txn_records, fmt_rate)
                      + cluster_rows.specs(sys.modules[__name__], args))
    eventstore = eventstore_rows.report(sys.modules[__name__], results)
    table = print_table(rows)
    python = results["kafka"]["python"]
    out = {
        "command": args.command,
        "records": args.records,
        "native_records": args.native_records,
        "txn_records": args.txn_records,
        "roundtrips": args.roundtrips,
        "payload_bytes": 100,
        "acks": 1,
        "kafka": "4.1.1 (single-node KRaft, Maven Central)",
        "confluent_kafka": python.get("confluent_kafka"),
        "librdkafka": python.get("librdkafka"),
        "librdkafka_c": results["kafka"]["c"]["produce"].get("version"),
        "franz_go": results["kafka"]["go"]["produce"].get("version"),
        "kafka_java_client": "4.1.1",
        "ratio": "ours/Kafka: above 1 means ours is better (records/s: ours ÷ Kafka; "
                 "µs and ms: Kafka ÷ ours)",
        "rows": [{k: v for k, v in r.items() if k != "cells"} for r in rows],
        "raw": results,
        "table": table,
        **cluster_rows.meta(args),
        "eventstore": eventstore,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print()
    print(f"Side by side with Apache Kafka 4.1.1 (Python: librdkafka {out['librdkafka']} via "
          f"confluent-kafka {out['confluent_kafka']}; C, C++: librdkafka {out['librdkafka_c']} "
          f"(Debian); Go: {out['franz_go']}; native, Java: Kafka Java client 4.1.1), "
          f"100 B records, acks=1 (transactional and cluster rows: acks=all), linger 5 ms, "
          f"cold producers, "
          f"one machine, one run")
    print(table)
    print("ratios: above 1 means ours is better (records/s: ours ÷ Kafka; µs/ms: Kafka ÷ ours); "
          "the cluster rows have no Kafka sync run (—)")
    for failed in txn_rows.failures(results):
        print(f"failed (its cell is empty): {failed}")
    print()
    print(eventstore["title"])
    print(eventstore["table"])
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
