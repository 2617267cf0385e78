#!/usr/bin/env python3
"""One summary table of every figure in target/bench/*.json (`make bench`).

    python3 tools/bench-table.py [TARGET_DIR]      # default: target

Reads whatever result files exist (each harness writes its own: engine.json,
broker.json, python.json, soak.json, rust.json, peer.json, …) and prints:

* the figures issue #20 tracks, with the ratios it asks for: the engine's
  produce ÷ the broker's ingest (its own bench client, 100 B records), and
  each binding ÷ the engine for produce and consume; "not measured" where a
  file or a field is missing;
* then every other figure of every file, raw (unknown files too), so that
  nothing measured is left out.

Also writes the rows to TARGET_DIR/bench/summary.json (never read back).
Uses only the standard library; never fails on a missing or odd file.
"""

from __future__ import annotations

import json
import math
import pathlib
import sys
from typing import Any, Dict, Iterator, List, Optional, Tuple

NOT_MEASURED = "not measured"
# Files whose figures the known rows below already show in full.
SKIP = {"summary.json"}
# Files of one binding each: the language name is the file's stem (or its
# "binding" field). The engine's own file is engine.json.
BINDING_STEMS = ("python", "java", "go", "c", "cpp", "ffi", "node", "dotnet")
# Time series, not figures.
SERIES = {"samples"}
# Numeric fields that describe a run rather than measure it.
PARAMETERS = {
    "records", "payload_bytes", "partitions", "batch_size", "linger_ms", "record_bytes",
    "connections", "batch_records", "in_flight_per_connection", "acks", "cores",
    "records_per_transaction", "roundtrips", "native_records", "count", "produced",
    "consumed", "seconds", "allowed_growth", "pass", "brokers", "replication_factor",
}


def load(bench: pathlib.Path) -> Dict[str, Any]:
    files: Dict[str, Any] = {}
    for path in sorted(bench.glob("*.json")):
        if path.name in SKIP:
            continue
        try:
            files[path.stem] = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            files[path.stem] = {"_unreadable": str(e)}
    return files


def num(value: Any) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def field(files: Dict[str, Any], stem: str, *path: str) -> Optional[float]:
    node: Any = files.get(stem)
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return num(node)


def first(files: Dict[str, Any], stem: str, *keys: str) -> Optional[float]:
    """The first of `keys` present in `stem`'s file."""
    for key in keys:
        v = field(files, stem, key)
        if v is not None:
            return v
    return None


def broker_ingest(files: Dict[str, Any], partitions: Optional[float]) -> Tuple[Optional[float], str, Optional[float]]:
    """The broker's publish rate of 100 B records in broker.json for the
    engine bench's partition count (the same workload; the best rate when
    that case is missing), its case, and the broker's CPU µs per record."""
    best: Tuple[Optional[float], str, Optional[float]] = (None, "", None)
    best_matches = False
    results = files.get("broker", {}).get("results") if isinstance(files.get("broker"), dict) else None
    for r in results or []:
        if not isinstance(r, dict) or r.get("op") != "publish" or r.get("record_bytes") != 100:
            continue
        rate = num(r.get("records_per_s"))
        if rate is None:
            continue
        matches = partitions is not None and num(r.get("partitions")) == partitions
        if best[0] is None or (matches and not best_matches) or (matches == best_matches and rate > best[0]):
            cpu = num(r.get("broker_cpu_seconds"))
            count = num(r.get("records"))
            best = (rate, f"{r.get('connections')} conn, {r.get('partitions')} part",
                    cpu * 1e6 / count if cpu is not None and count else None)
            best_matches = matches
    return best


def rate(v: Optional[float]) -> str:
    if v is None:
        return NOT_MEASURED
    if v >= 1e6:
        return f"{v / 1e6:.2f}M/s"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k/s"
    return f"{v:.0f}/s"


def plain(v: Optional[float], unit: str = "") -> str:
    if v is None:
        return NOT_MEASURED
    text = f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"
    return f"{text}{unit}"


def div(a: Optional[float], b: Optional[float]) -> Optional[float]:
    return a / b if a is not None and b else None


def fmt_ratio(r: Optional[float], goal: Optional[float] = None) -> str:
    if r is None:
        return "—"
    mark = "" if goal is None else (" ok" if r >= goal else " below")
    return f"{r:.2f}{mark}"


Row = Dict[str, Any]


def known_rows(files: Dict[str, Any], shown: set) -> List[Row]:
    """The figures issue #20 tracks, with their ratios; marks each
    (file stem, top-level key) it shows in `shown`."""
    rows: List[Row] = []

    def add(figure: str, value: Optional[float], text: str, source: str,
            ratio: Optional[float] = None, ratio_of: str = "", goal: Optional[float] = None) -> None:
        rows.append({"figure": figure, "value": value, "shown": text, "source": source,
                     "ratio": ratio, "ratio_of": ratio_of, "goal": goal})

    def take(stem: str, *path: str) -> Optional[float]:
        shown.add((stem, path[0]))
        return field(files, stem, *path)

    ingest, case, ingest_cpu = broker_ingest(files, field(files, "engine", "partitions"))
    add("Broker ingest, 100 B, its own bench client", ingest, rate(ingest),
        f"broker.json ({case})" if case else "broker.json")
    engine_p = take("engine", "produce_records_per_s")
    engine_c = take("engine", "consume_records_per_s")
    add("Rust engine produce, 100 B", engine_p, rate(engine_p), "engine.json",
        div(engine_p, ingest), "engine ÷ broker ingest", 0.8)
    client_cpu = take("engine", "produce_client_cpu_us_per_record")
    broker_cpu = take("engine", "produce_broker_cpu_us_per_record")
    take("engine", "consume_client_cpu_us_per_record")
    take("engine", "consume_broker_cpu_us_per_record")
    if client_cpu is not None or ingest_cpu is not None:
        add("CPU per record produced: engine client / broker (broker in its own bench)",
            client_cpu, f"{plain(client_cpu, ' µs')} / {plain(broker_cpu, ' µs')} ({plain(ingest_cpu, ' µs')})",
            "engine.json, broker.json")
    add("Rust engine consume, 100 B", engine_c, rate(engine_c), "engine.json")
    for key in ("tls_produce_records_per_s", "tls_consume_records_per_s"):
        v = take("engine", key)
        if v is not None:
            add(f"Rust engine {key.split('_')[1]} over TLS", v, rate(v), "engine.json")
    engine = files.get("engine") if isinstance(files.get("engine"), dict) else {}
    sends = sorted(k for k in engine if k.endswith("_queue_ns_per_record"))
    for key in sends or ["send_queue_ns_per_record"]:
        v = take("engine", key)
        what = key[: -len("_queue_ns_per_record")]
        add(f"Rust engine {what}, queue only, per call", v,
            plain(None if v is None else v / 1e3, " µs"), "engine.json",
            div(500.0, v), "0.5 µs ÷ this", 1.0)

    # Bindings: files with a "binding" field (or named after a language).
    # Each is measured against the engine on the same broker just before when
    # its file has the engine's figures (engine_*_records_per_s); else
    # against engine.json.
    bindings = [s for s in files if isinstance(files[s], dict) and s != "engine"
                and ("binding" in files[s] or s in BINDING_STEMS)]
    for stem in sorted(bindings, key=lambda s: (s not in ("python", "java"), s)):
        data = files[stem]
        name = str(data.get("binding", stem))
        goal = 0.7 if name == "python" else 0.85
        ref_p = take(stem, "engine_produce_records_per_s")
        ref_c = take(stem, "engine_consume_records_per_s")
        if name == "engine":  # an engine reference run another file compares with
            add(f"Engine reference run ({stem}) produce / consume", ref_p,
                f"{rate(ref_p)} / {rate(ref_c)}", f"{stem}.json")
            continue
        same_run = ref_p is not None
        ref = "engine (same run)" if same_run else "engine.json"
        ref_p = ref_p if same_run else engine_p
        ref_c = ref_c if ref_c is not None else engine_c
        src = f"{stem}.json"
        batch = take(stem, "produce_batch_records_per_s")
        per_record = take(stem, "produce_per_record_records_per_s")
        plain_p = take(stem, "produce_records_per_s")
        if per_record is None:
            per_record = plain_p
        consume = take(stem, "consume_records_per_s")
        if same_run:
            add(f"{name}: engine reference produce / consume", ref_p,
                f"{rate(ref_p)} / {rate(ref_c)}", src)
        runs = num(data.get("runs"))

        def ratio(key: str, computed: Optional[float]) -> Tuple[Optional[float], str]:
            """The file's own ratio when it has one (with repeated runs, the
            median of each run's ratio, and their spread), else `computed`."""
            r = num(data.get(key))
            if r is None:
                return computed, f"{name} ÷ {ref}"
            lo, hi = num(data.get(f"{key}_min")), num(data.get(f"{key}_max"))
            spread = f", median of {runs:.0f} runs [{lo:.2f}–{hi:.2f}]" if runs and lo is not None and hi is not None else ""
            return r, f"{name} ÷ {ref}{spread}"

        if batch is not None:
            add(f"{name} produce, batch send", batch, rate(batch), src,
                *ratio("ratio_produce_batch", div(batch, ref_p)), goal)
        add(f"{name} produce" + (", one send per record" if batch is not None else ""),
            per_record, rate(per_record), src,
            *ratio("ratio_produce_per_record", div(per_record, ref_p)), goal)
        add(f"{name} consume", consume, rate(consume), src,
            *ratio("ratio_consume", div(consume, ref_c)), goal)
        for key in sorted(data):
            v = num(data.get(key))
            if v is None or (stem, key) in shown:
                continue
            if key.endswith("_us") or "_us_" in key:
                shown.add((stem, key))
                add(f"{name} {key}", v, plain(v, " µs"), src)
            elif key.endswith("_ns") or "_ns_" in key:
                shown.add((stem, key))
                add(f"{name} {key}", v, plain(v / 1e3, " µs"), src)
            elif "rss" in key:
                shown.add((stem, key))
                add(f"{name} {key}", v, plain(v / 1024, " MiB"), src)
            elif key.startswith("ratio") or key == "runs":
                shown.add((stem, key))  # shown above
    for stem in ("python", "java", "ffi", "go"):
        if stem not in files:
            add(f"{stem} produce / consume", None, NOT_MEASURED, f"{stem}.json")

    latency = files.get("latency")
    if isinstance(latency, dict) and isinstance(latency.get("rows"), list):
        shown.add(("latency", "rows"))
        for r in latency["rows"]:
            if not isinstance(r, dict):
                continue
            offered = "" if r.get("offered", True) else " (rate NOT offered)"
            for what, label in (("ack_us", "produce→ack"), ("consume_us", "produce→consume")):
                q = r.get(what) if isinstance(r.get(what), dict) else {}
                p50, p99, p999 = (num(q.get(k)) for k in ("p50", "p99", "p999"))
                text = " / ".join(plain(None if v is None else v / 1e3) for v in (p50, p99, p999))
                goal_ms = what == "ack_us" and num(r.get("rate")) == 10_000
                add(f"Latency at {plain(num(r.get('rate')))}/s, {label}, p50/p99/p999 ms{offered}",
                    p99, text, "latency.json",
                    div(2000.0, p99) if goal_ms else None,
                    "2 ms ÷ p99" if goal_ms else "", 1.0 if goal_ms else None)
    else:
        add("Latency percentiles at a fixed rate", None, NOT_MEASURED, "latency.json")

    # cluster.json: acks=all produce on three brokers (rf=3) next to one.
    if isinstance(files.get("cluster"), dict):
        single_p = take("cluster", "single", "produce_records_per_s")
        cluster_p = take("cluster", "cluster", "produce_records_per_s")
        take("cluster", "cluster_vs_single")
        add("acks=all produce, 100 B: 3-broker cluster (rf=3) / single broker", cluster_p,
            f"{rate(cluster_p)} / {rate(single_p)}", "cluster.json",
            div(cluster_p, single_p), "cluster ÷ single broker")
        ms = {case: [field(files, "cluster", case, "ack_us", q) for q in ("p50", "p99")]
              for case in ("cluster", "single")}
        text = " vs ".join("/".join(plain(None if v is None else v / 1e3) for v in ms[case])
                           for case in ("cluster", "single"))
        add("acks=all produce→ack p50/p99 ms: 3-broker cluster vs single broker",
            ms["cluster"][1], text, "cluster.json")
        one = {case: [field(files, "cluster", case, "one_at_a_time_ack_us", q)
                      for q in ("p50", "p99")] for case in ("cluster", "single")}
        text = " vs ".join("/".join(plain(None if v is None else v / 1e3) for v in one[case])
                           for case in ("cluster", "single"))
        add("acks=all produce→ack one at a time, p50/p99 ms: 3-broker cluster vs single broker",
            one["cluster"][1], text, "cluster.json")
    else:
        add("acks=all produce on a 3-broker cluster vs a single broker", None, NOT_MEASURED,
            "cluster.json")

    # otel.json: produce and consume with the tracing layer (issue #34),
    # sampled out and sampled in, next to the plain clients of the same run
    # and to plain clients whose records carry a context (the bytes alone).
    if isinstance(files.get("otel"), dict):
        for op in ("produce", "consume"):
            off = take("otel", f"off_{op}_records_per_s")
            add(f"Rust {op}, tracing off (otel bench)", off, rate(off), "otel.json")
            for mode, label in (("carried", "off, records carrying a context"),
                                ("sampled_out", "sampled out"), ("sampled_in", "sampled in")):
                v = take("otel", f"{mode}_{op}_records_per_s")
                add(f"Rust {op}, tracing {label}", v, rate(v), "otel.json",
                    div(v, off), "÷ tracing off")
    else:
        add("Produce / consume with tracing (sampled out, in)", None, NOT_MEASURED, "otel.json")

    memory = files.get("memory")
    if isinstance(memory, dict):
        for key in sorted(memory):
            v = num(memory.get(key))
            if v is not None and key.endswith("_kib"):
                shown.add(("memory", key))
                add(f"Memory: {key[:-4]}", v, plain(v / 1024, " MiB"), "memory.json")
    else:
        add("Memory (idle client RSS, broker per 1,000 connections)", None, NOT_MEASURED,
            "memory.json")

    soak = files.get("soak")
    if isinstance(soak, dict):
        for key in ("produce_per_s", "consume_per_s"):
            v = take("soak", key)
            add(f"Soak {key.split('_')[0]}, sustained", v, rate(v), "soak.json")
        for key in ("start", "max", "end"):
            v = take("soak", "rss_kib", key)
            add(f"Soak broker RSS, {key}", v, plain(None if v is None else v / 1024, " MiB"),
                "soak.json")
    else:
        add("Soak (sustained rate, RSS)", None, NOT_MEASURED, "soak.json")
    peer = files.get("peer")
    shown.add(("peer", "rows"))
    if isinstance(peer, dict) and isinstance(peer.get("rows"), list):
        for r in peer["rows"]:
            if not isinstance(r, dict):
                continue
            ours = r.get("ours")
            for theirs, label in (("kafka", "Kafka"), ("kafka_sync", "Kafka sync")):
                rv = r.get(f"ours_vs_{theirs}")
                ratios = rv if isinstance(rv, list) else [rv]
                pair = [ours, r.get(theirs)]
                fmt = rate if r.get("unit") == "records/s" else plain
                text = " vs ".join(
                    " / ".join(fmt(num(x)) for x in (v if isinstance(v, list) else [v]))
                    for v in pair)
                # Issue #20: at least 1.0 on every row against Kafka with
                # syncs, and on every throughput row against Kafka's default.
                goal = 1.0 if theirs == "kafka_sync" or r.get("unit") == "records/s" else None
                add(f"Kafka table: {r.get('workload')}: ours vs {label}", num(ratios[0]), text,
                    "peer.json", num(ratios[0]), f"ours/{label} (>1: ours better)", goal)
                if len(ratios) > 1:
                    rows[-1]["shown_ratio"] = " / ".join(
                        fmt_ratio(num(x), goal) for x in ratios)
    else:
        add("Side by side with Kafka (make bench-peer)", None, NOT_MEASURED, "peer.json")
    return rows


def numbers(node: Any, prefix: str = "") -> Iterator[Tuple[str, float]]:
    """Every numeric leaf of a JSON value as (dotted key, value); long lists
    of plain values (time series) are summarised by their length only."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from numbers(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(node, list):
        if len(node) > 20 and not any(isinstance(x, dict) for x in node):
            return
        for i, v in enumerate(node):
            label = str(i)
            if isinstance(v, dict):
                label = str(v.get("id") or "/".join(
                    f"{v[k]}" for k in ("op", "record_bytes", "connections", "partitions", "workload")
                    if k in v) or i)
            yield from numbers(v, f"{prefix}[{label}]")
    else:
        v = num(node)
        if v is not None:
            yield prefix, v


def raw_rows(files: Dict[str, Any], shown: set) -> List[Tuple[str, str, str]]:
    """Every other figure, per file: those the rows above do not show and
    that measure rather than describe the run."""
    out = []
    for stem, data in files.items():
        if stem == "peer":  # its own table; its ratios are above
            continue
        if isinstance(data, dict) and "_unreadable" in data:
            out.append((f"{stem}.json", "unreadable", str(data["_unreadable"])[:60]))
            continue
        for key, v in numbers(data):
            top = key.split(".", 1)[0].split("[", 1)[0]
            leaf = key.rsplit(".", 1)[-1]
            if (stem, top) in shown or leaf in PARAMETERS or top in SERIES:
                continue
            out.append((f"{stem}.json", key, plain(v)))
    return out


def table(head: List[str], body: List[List[str]]) -> str:
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in [head] + body]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def main() -> None:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target")
    bench = root / "bench"
    files = load(bench)
    shown: set = set()
    rows = known_rows(files, shown)
    body = [[r["figure"], r["shown"],
             r.get("shown_ratio") or (fmt_ratio(r["ratio"], r["goal"]) if r["ratio_of"] else ""),
             r["ratio_of"] + (f" (goal ≥ {r['goal']})" if r["ratio_of"] and r["goal"] else ""),
             r["source"]] for r in rows]
    for source, key, value in raw_rows(files, shown):
        body.append([key, value, "", "", source])
    print(f"Summary of {bench}/*.json ({len(files)} files: {', '.join(sorted(files)) or 'none'})")
    print(table(["Figure", "Value", "Ratio", "Ratio of", "Source"], body))
    if bench.is_dir():
        summary = {"command": "python3 tools/bench-table.py", "files": sorted(files),
                   "rows": [{k: v for k, v in r.items()} for r in rows]}
        (bench / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        print(f"wrote {bench / 'summary.json'}")


if __name__ == "__main__":
    main()
