#!/usr/bin/env python3
"""`make cluster`: a three-broker cluster of the reference broker on loopback,
in the foreground, until Ctrl-C.

    python3 tools/cluster.py --broker-bin target/debug/cursus-broker [options]

Broker N (1-based) listens for clients on CLIENT_PORT+N-1, serves /live and
/ready on HEALTH_PORT+N-1 and talks to its peers (Raft, heartbeats,
replication) on CLUSTER_PORT+N-1, all on HOST, with its data in
DATA_DIR/node-N and its log in DATA_DIR/node-N.log. The data is kept from one
run to the next (topics and records survive); --fresh starts from empty
directories, and so must a run whose ports or broker count differ from the
previous one's (the peers are recorded in the data).

Waits until every broker answers /ready with 200 (a Raft leader is known and
the broker is registered), prints the bootstrap list and an example, then
waits. A broker that exits meanwhile (say, killed to watch a failover) is
reported and the others keep running. Ctrl-C (or SIGTERM/SIGHUP) stops every
broker: SIGTERM, then SIGKILL after 10 s; the brokers also get SIGTERM if this
script dies first (Linux parent-death signal), so none is left behind.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import List, Optional

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()
STOP_GRACE_S = 10.0


def parent_death_signal() -> None:
    """In the child before exec: SIGTERM when the parent (this script) dies."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: Ctrl-C still stops the brokers


def port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def ready(health: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://{health}/ready", timeout=1) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


class Broker:
    def __init__(self, node: int, host: str, args: argparse.Namespace, peers: str) -> None:
        self.node = node
        self.addr = f"{host}:{args.client_port + node - 1}"
        self.health = f"{host}:{args.health_port + node - 1}"
        self.cluster = f"{host}:{args.cluster_port + node - 1}"
        self.data = Path(args.data_dir) / f"node-{node}"
        self.log = Path(args.data_dir) / f"node-{node}.log"
        self.peers = peers
        self.proc: Optional[subprocess.Popen] = None
        self.reported = False

    def start(self, args: argparse.Namespace) -> None:
        self.data.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.setdefault("RUST_LOG", "info")
        with open(self.log, "a") as log:
            log.write(f"==== started {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
            log.flush()
            self.proc = subprocess.Popen(
                [args.broker_bin, "--listen", self.addr, "--health-listen", self.health,
                 "--data-dir", str(self.data), "--node-id", str(self.node),
                 "--cluster-peers", self.peers, "--cluster-listen", self.cluster,
                 "--internal-auth-token", args.token],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                preexec_fn=parent_death_signal)

    def exited(self) -> Optional[int]:
        return None if self.proc is None else self.proc.poll()


def stop(brokers: List[Broker]) -> None:
    running = [b for b in brokers if b.exited() is None and b.proc is not None]
    for b in running:
        try:
            b.proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_GRACE_S
    for b in running:
        try:
            b.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            print(f"cluster: broker {b.node} did not stop within {STOP_GRACE_S:.0f} s; killing it",
                  flush=True)
            b.proc.kill()
            b.proc.wait()


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--broker-bin", default=str(TARGET / "debug" / "cursus-broker"))
    ap.add_argument("--brokers", type=int, default=3)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--client-port", type=int, default=9101)
    ap.add_argument("--health-port", type=int, default=9181)
    ap.add_argument("--cluster-port", type=int, default=7101)
    ap.add_argument("--data-dir", default=str(TARGET / "cluster"))
    ap.add_argument("--token", default="cursus-local-cluster",
                    help="internal auth token shared by the brokers")
    ap.add_argument("--fresh", action="store_true", help="empty the data directories first")
    ap.add_argument("--ready-timeout", type=float, default=60.0)
    args = ap.parse_args()

    if not os.access(args.broker_bin, os.X_OK):
        sys.exit(f"cluster: no broker binary at {args.broker_bin} "
                 "(cargo build -p cursus-broker --bin cursus-broker)")
    peers = ",".join(f"{n}={args.host}:{args.cluster_port + n - 1}"
                     for n in range(1, args.brokers + 1))
    brokers = [Broker(n, args.host, args, peers) for n in range(1, args.brokers + 1)]
    taken = [a for b in brokers for a in (b.addr, b.health, b.cluster)
             if not port_free(args.host, int(a.rsplit(":", 1)[1]))]
    if taken:
        sys.exit(f"cluster: address in use: {', '.join(taken)} "
                 "(another `make cluster`? other ports: make cluster CLUSTER_CLIENT_PORT=…)")
    if args.fresh:
        for b in brokers:
            subprocess.run(["rm", "-rf", str(b.data), str(b.log)], check=True)

    # Ctrl-C reaches the brokers too (same process group); SIGTERM and
    # SIGHUP reach only this script: each ends up in stop(). SIGINT is set
    # explicitly: a shell without job control starts background commands
    # with it ignored, and Python keeps an inherited SIG_IGN.
    def terminate(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, terminate)
    try:
        for b in brokers:
            b.start(args)
        print(f"cluster: starting {len(brokers)} brokers, data and logs in {args.data_dir}",
              flush=True)
        deadline = time.monotonic() + args.ready_timeout
        waiting = list(brokers)
        while waiting:
            for b in list(waiting):
                code = b.exited()
                if code is not None:
                    print(f"cluster: broker {b.node} exited with {code} while starting; "
                          f"{b.log}:\n{tail(b.log)}", file=sys.stderr, flush=True)
                    stop(brokers)
                    return 1
                if ready(b.health):
                    waiting.remove(b)
            if waiting and time.monotonic() > deadline:
                names = ", ".join(f"{b.node} ({b.log})" for b in waiting)
                print(f"cluster: not ready within {args.ready_timeout:.0f} s: {names}",
                      file=sys.stderr, flush=True)
                stop(brokers)
                return 1
            time.sleep(0.1)
        bootstrap = ",".join(b.addr for b in brokers)
        for b in brokers:
            print(f"  broker {b.node}: client {b.addr}  health http://{b.health}/ready  "
                  f"cluster {b.cluster}  pid {b.proc.pid}", flush=True)
        print(f"cluster: ready. Bootstrap: {bootstrap}", flush=True)
        # The examples take one address; any broker will do (the client
        # learns the others from METADATA and follows NOT_LEADER).
        first = brokers[0].addr
        print(f"  try:  cargo run -q -p cursus --example admin -- {first} orders && "
              f"cargo run -q -p cursus --example producer -- {first} orders 1000", flush=True)
        print("cluster: Ctrl-C stops every broker", flush=True)
        while any(b.exited() is None for b in brokers):
            for b in brokers:
                code = b.exited()
                if code is not None and not b.reported:
                    b.reported = True
                    print(f"cluster: broker {b.node} exited with {code} (log {b.log}); "
                          "the others keep running", flush=True)
            time.sleep(0.2)
        print("cluster: every broker has exited", flush=True)
        return 1
    except KeyboardInterrupt:
        print("\ncluster: stopping", flush=True)
        stop(brokers)
        print("cluster: stopped", flush=True)
        return 0
    finally:
        stop(brokers)


if __name__ == "__main__":
    sys.exit(main())
