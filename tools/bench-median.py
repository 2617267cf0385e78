#!/usr/bin/env python3
"""Merges repeated runs of the binding benches into one file each: the median.

One run of a binding harness (bench-ffi, bench-python, bench-java) compares
the binding with the engine measured against the same broker seconds before;
on a two-core machine shared by client and broker, one such ratio moves by
±20 % from run to run (the engine's own figure does by ±12 %). `make
bench-bindings BENCH_RUNS=N` keeps each run's files under
target/bench/runs/<i>/ and this script writes, for every file name found
there, target/bench/<name>: every numeric field as the median of the runs
(each run's ratio is computed within that run, so the median ratio compares
like with like), plus `<field>_min` / `<field>_max` for the ratios, `runs`,
and the command.

Usage: bench-median.py <target/bench> <run dir>...
"""

import json
import statistics
import sys
from pathlib import Path
from typing import Any, Dict, List


def merge(runs: List[Dict[str, Any]], command: str) -> Dict[str, Any]:
    out: Dict[str, Any] = dict(runs[-1])
    for key in runs[-1]:
        values = [r[key] for r in runs if isinstance(r.get(key), (int, float))
                  and not isinstance(r.get(key), bool)]
        if len(values) != len(runs):
            continue
        out[key] = statistics.median(values)
        if key.startswith("ratio"):
            out[f"{key}_min"] = min(values)
            out[f"{key}_max"] = max(values)
    out["runs"] = len(runs)
    out["run_commands"] = sorted({str(r.get("command", "")) for r in runs})
    out["command"] = command
    return out


def main(argv: List[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    target, dirs = Path(argv[1]), [Path(d) for d in argv[2:]]
    names = sorted({p.name for d in dirs for p in d.glob("*.json")})
    for name in names:
        runs = []
        for d in dirs:
            f = d / name
            if f.exists():
                runs.append(json.loads(f.read_text()))
        if not runs:
            continue
        merged = merge(runs, f"make bench-bindings BENCH_RUNS={len(dirs)} (median of {len(runs)} runs)")
        (target / name).write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
        ratios = ", ".join(
            f"{k[len('ratio_'):]} {merged[k]:.2f} [{merged[k + '_min']:.2f}-{merged[k + '_max']:.2f}]"
            for k in sorted(merged) if k.startswith("ratio_") and not k.endswith(("_min", "_max")))
        print(f"{name}: median of {len(runs)} runs" + (f": {ratios}" if ratios else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
