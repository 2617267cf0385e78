#!/usr/bin/env python3
"""`make demo`: start the reference broker with a local data directory, run the
quickstart of every language against it (`make quickstart-<lang>`), print one
summary line per language and stop the broker.

Usage: demo.py [--languages rust,c,...] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target").resolve()
LANGUAGES = ["rust", "c", "cpp", "go", "python", "java"]


def start_broker(data_dir: Path) -> tuple[subprocess.Popen[str], str]:
    shutil.rmtree(data_dir, ignore_errors=True)  # every demo starts from an empty broker
    data_dir.mkdir(parents=True)
    log = open(data_dir.parent / "broker.log", "w")
    proc = subprocess.Popen(
        [str(TARGET / "debug" / "cursus-broker"), "--listen", "127.0.0.1:0",
         "--health-listen", "127.0.0.1:0", "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE, stderr=log, text=True)
    assert proc.stdout is not None
    banner = proc.stdout.readline()  # "cursus-broker listening addr=... health=..."
    fields = dict(t.split("=", 1) for t in banner.split() if "=" in t)
    if "addr" not in fields:
        proc.kill()
        sys.exit(f"demo: the broker did not start (see {log.name})")
    return proc, fields["addr"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--languages", default=",".join(LANGUAGES))
    ap.add_argument("--data-dir", default=str(TARGET / "demo" / "data"))
    args = ap.parse_args()

    broker, addr = start_broker(Path(args.data_dir))
    print(f"demo: reference broker at {addr}, data in {args.data_dir}", flush=True)
    failed = []
    try:
        for lang in args.languages.split(","):
            started = time.monotonic()
            run = subprocess.run(
                ["make", "--no-print-directory", "-s", f"quickstart-{lang}", f"DEMO_BOOTSTRAP={addr}"],
                cwd=ROOT, capture_output=True, text=True)
            summary = [ln for ln in run.stdout.splitlines() if ln.startswith(f"{lang}:")]
            if run.returncode == 0 and summary:
                print(f"  {summary[-1]}", flush=True)
            else:
                failed.append(lang)
                print(f"  {lang}: FAILED after {time.monotonic() - started:.0f} s", flush=True)
                print("    " + "\n    ".join((run.stdout + run.stderr).strip().splitlines()[-15:]))
    finally:
        broker.send_signal(signal.SIGTERM)
        broker.wait(15)
    print(f"demo: {len(args.languages.split(',')) - len(failed)} languages ok"
          + (f", failed: {', '.join(failed)}" if failed else "") + "; broker stopped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
