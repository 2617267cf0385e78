#!/usr/bin/env python3
"""Collects criterion results (target/criterion) into target/bench/rust.json.

Each entry: benchmark id, mean time per iteration (ns) and, where the
benchmark declares a byte throughput, bytes per second.
"""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target")
results = []
for bench in sorted((root / "criterion").glob("**/new/benchmark.json")):
    meta = json.loads(bench.read_text())
    estimates = json.loads((bench.parent / "estimates.json").read_text())
    mean_ns = estimates["mean"]["point_estimate"]
    entry = {"id": meta["full_id"], "mean_ns": round(mean_ns, 1)}
    throughput = meta.get("throughput") or {}
    if "Bytes" in throughput:
        entry["bytes_per_s"] = round(throughput["Bytes"] / (mean_ns / 1e9))
        entry["mib_per_s"] = round(entry["bytes_per_s"] / (1 << 20), 1)
    if "Elements" in throughput:
        entry["elements_per_s"] = round(throughput["Elements"] / (mean_ns / 1e9))
    results.append(entry)

out = root / "bench"
out.mkdir(parents=True, exist_ok=True)
(out / "rust.json").write_text(json.dumps({"results": results}, indent=2) + "\n")
for r in results:
    rate = f"{r['mib_per_s']:>10.1f} MiB/s" if "mib_per_s" in r else ""
    print(f"{r['id']:<55} {r['mean_ns'] / 1e3:>12.1f} us {rate}")
print(f"wrote {out / 'rust.json'}")
