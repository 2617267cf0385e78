"""The transactional rows of `make bench-peer` (issue #31), run by run.py.

Against each broker, for 100 and 1,000 records per transaction, a fresh
topic (or input/output pair) each, one process per run:

* transactional produce: the Kafka Java client (java/KafkaTxnBench.java)
  vs the Rust engine (core/examples/bench_txn.rs), `produce` mode;
* exactly-once loop (consume → transform → produce, the offsets committed
  in the transaction): the same two, `eos` mode, and confluent-kafka vs our
  Python binding (py_txn.py).

Every run prints one JSON object with `records_per_s`; they land in the
result under `txn`, e.g. result["txn"]["native_eos_100"].
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, List, Protocol, Tuple

PER_TXN = (100, 1_000)
# (result key prefix, mode) of the Java client / Rust engine runs.
NATIVE_RUNS = (("native_produce", "produce"), ("native_eos", "eos"))

# run.py's row spec: label, unit, higher is better, value paths, format.
Spec = Tuple[str, str, bool, List[Callable[[Any], Any]], Callable[[Any], str]]


class Started(Protocol):
    """What run.py's Broker gives: a name and a bootstrap address."""

    name: str
    bootstrap: str


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--txn-bin", type=Path, required=True)
    parser.add_argument("--txn-records", type=int, default=200_000)


def run(broker: Started, kafka: bool, args: argparse.Namespace, result: Dict[str, Any],
        run_json: Callable[..., Dict[str, Any]], log: Callable[[str], None]) -> None:
    """Every transactional run against `broker`, into result["txn"]."""
    here = Path(__file__).resolve().parent
    java = ["java", "-Xmx1g", f"-Dlog4j.configuration=file:{here / 'log4j.properties'}",
            "-cp", f"{args.classes}:{args.kafka_lib}/*", "KafkaTxnBench"]
    n = str(args.txn_records)
    txn: Dict[str, Any] = result.setdefault("txn", {})

    def attempt(key: str, label: str, argv: List[str]) -> None:
        """Runs one workload into txn[key]. A Kafka-side run that fails
        (Kafka 4.1.1's transactional producer has been seen to abort with
        InvalidTxnStateException in a run of back-to-back transactions) is
        tried once more, then recorded as failed, its cell left empty and
        the failure printed under the table; a failure of ours stops the
        run."""
        for tries_left in (1, 0):
            try:
                txn[key] = run_json(argv, timeout=1800, env={"RUST_LOG": "warn"})
                log(f"{broker.name}: {label} {json.dumps(txn[key])}")
                return
            except RuntimeError as e:
                if not kafka:
                    raise
                reason = next((line for line in str(e).splitlines() if "Exception" in line),
                              str(e).splitlines()[0])
                log(f"{broker.name}: {label} failed: {reason}"
                    + ("; once more" if tries_left else ""))
                txn[key] = {"failed": reason}

    for k in PER_TXN:
        for prefix, mode in NATIVE_RUNS:
            topic = f"peer-txn-{mode}{k}-{uuid.uuid4().hex[:8]}"
            argv = (java if kafka else [str(args.txn_bin)]) + [mode, broker.bootstrap, topic, n,
                                                               str(k)]
            attempt(f"{prefix}_{k}", f"{prefix} {k}/txn", argv)
        topic = f"peer-txn-py{k}-{uuid.uuid4().hex[:8]}"
        attempt(f"python_eos_{k}", f"python_eos {k}/txn",
                [sys.executable, str(here / "py_txn.py"), "--client", "kafka" if kafka else "cursus",
                 "--bootstrap", broker.bootstrap, "--topic", topic, "--records", n,
                 "--per-txn", str(k)])


def failures(results: Dict[str, Dict[str, Any]]) -> List[str]:
    """The transactional runs recorded as failed, one line each."""
    return [f"{system}: {key}: {run['failed']}"
            for system, result in results.items()
            for key, run in result.get("txn", {}).items() if "failed" in run]


def specs(txn_n: int, fmt_rate: Callable[[float], str]) -> List[Spec]:
    """The table rows, in run.py's spec shape."""

    def path(key: str) -> Callable[[Any], Any]:
        return lambda r: r["txn"][key]["records_per_s"]

    rows: List[Spec] = []
    for k in PER_TXN:
        rows.append((f"Txn produce {txn_n:,}, {k:,}/txn: Java client vs Rust engine, records/s",
                     "records/s", True, [path(f"native_produce_{k}")], fmt_rate))
    for k in PER_TXN:
        rows.append((f"Exactly-once loop {txn_n:,}, {k:,}/txn: Java client vs Rust engine, "
                     "records/s", "records/s", True, [path(f"native_eos_{k}")], fmt_rate))
    for k in PER_TXN:
        rows.append((f"Exactly-once loop {txn_n:,}, {k:,}/txn: confluent-kafka vs cursus "
                     "(Python), records/s", "records/s", True, [path(f"python_eos_{k}")],
                     fmt_rate))
    return rows
