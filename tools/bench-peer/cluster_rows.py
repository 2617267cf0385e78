"""The cluster rows of `make bench-peer` (issue #31): acks=all produce to
three brokers, a topic of 4 partitions replicated three times with
min in-sync replicas 2, 100-byte records.

Kafka: three combined controller + broker KRaft nodes (a three-voter
quorum) on free loopback ports, each JVM with a 512 MiB heap and its own
temp dir, at Kafka's defaults (no "Kafka sync" run: see the README); the
Kafka Java client (java/KafkaClusterBench.java). Ours: three release
`cursus-broker` processes started with --node-id, --cluster-peers and
--internal-auth-token, each with its own temp dir; the Rust engine
(core/examples/bench_cluster.rs). Each cluster is ready when every node
says so (Kafka: its metadata lists three brokers; ours: every member's
/ready answers 200), polled; the workload then awaits one record per
partition before its timed run (leaders elected). Every node started is
stopped, and its temp dir removed, whatever happens (run.py's Broker and
STARTED).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Dict, List, Optional

NODES = 3
READY_S = 180


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cluster-bin", type=Path, required=True,
                        help="the release core/examples/bench_cluster")
    parser.add_argument("--cluster-records", type=int, default=500_000)


def free_ports(peer: ModuleType, n: int) -> List[int]:
    ports: List[int] = []
    while len(ports) < n:
        port = peer.free_port()
        if port not in ports:
            ports.append(port)
    return ports


def stop_nodes(peer: ModuleType, nodes: List[Any]) -> None:
    """SIGTERM to every node first (so that none waits on a peer already
    gone for long), then each one's stop (kill after 20 s, temp dir removed)."""
    for node in nodes:
        if node.alive():
            node.proc.terminate()
    for node in nodes:
        node.stop()
        if node in peer.STARTED:
            peer.STARTED.remove(node)
    peer.log(f"stopped {len(nodes)} cluster nodes")


def start_kafka_cluster(peer: ModuleType, lib: Path, nodes: List[Any]) -> str:
    every = free_ports(peer, NODES * 2)
    ports, cports = every[:NODES], every[NODES:]
    voters = ",".join(f"{i}@127.0.0.1:{p}" for i, p in enumerate(cports, start=1))
    cluster = peer.new_kafka_cluster_id()
    for i in range(1, NODES + 1):
        port, cport = ports[i - 1], cports[i - 1]
        node = peer.start_kraft_node(lib, f"kafka cluster node {i}", cluster, i, voters,
                                     port, cport, "512m", {})
        nodes.append(node)
    bootstrap = ",".join(n.bootstrap for n in nodes)
    wait_kafka_cluster(peer, nodes, ports, bootstrap)
    return bootstrap


def wait_until(nodes: List[Any], what: str, check: Callable[[], bool]) -> None:
    """Polls `check` until it holds; fails when a node exits or after READY_S."""
    deadline = time.monotonic() + READY_S
    while not check():
        for node in nodes:
            if not node.alive():
                node.fail(f"exited before {what}")
        if time.monotonic() > deadline:
            nodes[0].fail(f"not {what} after {READY_S} s")
        time.sleep(0.1)


def wait_kafka_cluster(peer: ModuleType, nodes: List[Any], ports: List[int], bootstrap: str) -> None:
    """Every port accepts, then the metadata lists every broker."""
    from confluent_kafka.admin import AdminClient

    def listening() -> bool:
        return all(peer.port_open(p) for p in ports)

    wait_until(nodes, "listening", listening)
    admin = AdminClient({"bootstrap.servers": bootstrap})

    def registered() -> bool:
        try:
            return len(admin.list_topics(timeout=2).brokers) == NODES
        except Exception:
            return False

    wait_until(nodes, "registered (metadata lists every broker)", registered)


def http_status(addr: str, path: str) -> Optional[int]:
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


def start_our_cluster(peer: ModuleType, broker_bin: Path, nodes: List[Any]) -> str:
    cports = free_ports(peer, NODES)
    peers = ",".join(f"{i}=127.0.0.1:{p}" for i, p in enumerate(cports, start=1))
    token = uuid.uuid4().hex
    health: List[str] = []
    for i in range(1, NODES + 1):
        tmp = Path(tempfile.mkdtemp(prefix=f"cursus-peer-ours-cluster-{i}-"))
        (tmp / "data").mkdir()
        node = peer.Broker(f"ours cluster node {i}",
                           [str(broker_bin), "--listen", "127.0.0.1:0",
                            "--health-listen", "127.0.0.1:0", "--data-dir", str(tmp / "data"),
                            "--node-id", str(i), "--cluster-peers", peers,
                            "--internal-auth-token", token],
                           tmp, stdout=subprocess.PIPE)
        peer.STARTED.append(node)
        nodes.append(node)
        line = node.proc.stdout.readline().decode(errors="replace")  # addr= once listening
        fields = dict(p.split("=", 1) for p in line.split() if "=" in p)
        if "addr" not in fields or "health" not in fields:
            node.fail(f"did not start: {line!r}")
        node.bootstrap = fields["addr"]
        health.append(fields["health"])

    def ready() -> bool:
        return all(http_status(h, "/ready") == 200 for h in health)

    wait_until(nodes, "ready (/ready on every member)", ready)
    return ",".join(n.bootstrap for n in nodes)


def run(peer: ModuleType, args: argparse.Namespace, results: Dict[str, Dict[str, Any]]) -> None:
    """Runs the cluster workload on a Kafka cluster, then on ours; stores
    each side's figures under results[side]["cluster"]."""
    java = ["java", "-Xmx1g", f"-Dlog4j.configuration=file:{peer.HERE / 'log4j.properties'}",
            "-cp", f"{args.classes}:{args.kafka_lib}/*", "KafkaClusterBench"]
    sides = [("kafka", lambda nodes: start_kafka_cluster(peer, args.kafka_lib, nodes), java),
             ("ours", lambda nodes: start_our_cluster(peer, args.broker_bin, nodes),
              [str(args.cluster_bin)])]
    for key, start, argv in sides:
        nodes: List[Any] = []
        try:
            bootstrap = start(nodes)
            peer.log(f"{key} cluster up at {bootstrap}")
            topic = f"peer-cluster-{uuid.uuid4().hex[:8]}"
            results[key]["cluster"] = peer.run_json(
                argv + [bootstrap, topic, str(args.cluster_records)], timeout=1800,
                env={"RUST_LOG": "warn"})
            peer.log(f"{key} cluster: {json.dumps(results[key]['cluster'])}")
        finally:
            stop_nodes(peer, nodes)


def specs(peer: ModuleType, args: argparse.Namespace) -> List[Any]:
    """The cluster rows, in build_rows' form; Kafka sync has none ("—")."""
    n = args.cluster_records
    return [
        (f"Cluster (3 brokers, rf=3, acks=all, min ISR 2) produce {n:,}: "
         "Java client vs Rust engine, records/s", "records/s", True,
         [lambda r: r["cluster"]["records_per_s"]], peer.fmt_rate),
        ("Cluster produce→ack, loaded (in the produce run): p50 / p99, ms", "ms", False,
         [lambda r: r["cluster"]["ack_p50_ms"], lambda r: r["cluster"]["ack_p99_ms"]],
         lambda v: f"{v:.2f}"),
        ("Cluster produce→ack, one at a time: p50 / p99, ms", "ms", False,
         [lambda r: r["cluster"]["one_p50_ms"], lambda r: r["cluster"]["one_p99_ms"]],
         lambda v: f"{v:.2f}"),
    ]


def meta(args: argparse.Namespace) -> Dict[str, Any]:
    """What peer.json says of the cluster rows."""
    return {"cluster": {
        "records": args.cluster_records, "brokers": NODES, "partitions": 4,
        "replication_factor": 3, "min_in_sync_replicas": 2, "acks": "all", "linger_ms": 5,
        "kafka": "3 combined controller + broker KRaft nodes, -Xmx512m each, defaults "
                 "(no Kafka sync run)",
        "ours": "3 cursus-broker members (--cluster-peers), default config",
    }}
