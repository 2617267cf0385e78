"""Charts of the benchmark figures (SVG, matplotlib), for `make bench`'s
report (tools/bench-report.py) and the site's performance page
(tools/docs/fragments.py, from docs/figures/performance.json).

Both read the same shapes: a dict of file stem -> parsed JSON, as
`make bench` writes them to target/bench/*.json (engine, latency, cluster,
soak, memory, peer, and one file per binding: python, java, go, ffi,
ffi-rust). `charts(files)` returns every chart, each with its SVG or, when
its figures are missing, None and the reason ("not measured: ...").
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import matplotlib

matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402

plt.rcParams.update(
    {
        "svg.fonttype": "none",  # text stays text: searchable, crisp, small
        "svg.hashsalt": "cursus",  # stable ids: the same figures give the same file
        "font.family": "sans-serif",
        "font.size": 10,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
    }
)

# Languages as the binding files name them, in the order shown.
BINDINGS: Sequence[Tuple[str, str]] = (
    ("ffi-rust", "C ABI from Rust"),
    ("ffi", "C"),
    ("go", "Go"),
    ("python", "Python"),
    ("java", "Java"),
)
RATIOS: Sequence[Tuple[str, str]] = (
    ("ratio_produce_batch", "batch produce"),
    ("ratio_produce_per_record", "one send per record"),
    ("ratio_consume", "consume"),
)
COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1")


@dataclass
class Chart:
    """One chart: its SVG, or None with the reason in `note`."""

    key: str
    title: str
    svg: Optional[str]
    note: str


def num(value: Any) -> Optional[float]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def get(node: Any, *path: Any) -> Any:
    for key in path:
        if isinstance(node, dict):
            node = node.get(key)
        elif isinstance(node, list) and isinstance(key, int) and -len(node) <= key < len(node):
            node = node[key]
        else:
            return None
    return node


def svg_of(fig: Any) -> str:
    out = io.StringIO()
    fig.savefig(out, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = out.getvalue()
    # Inline in HTML: no XML prologue or DOCTYPE.
    return text[text.index("<svg") :]


def missing(key: str, title: str, what: str) -> Chart:
    return Chart(key, title, None, f"not measured: {what}")


def bindings_chart(files: Dict[str, Any]) -> Chart:
    """Each language ÷ the engine, per path, with the spread of the runs."""
    key, title = "bindings", "Each language ÷ the engine (median of the runs, bars: min–max)"
    present = [(stem, name) for stem, name in BINDINGS if isinstance(files.get(stem), dict)]
    if not any(num(get(files, stem, r)) is not None for stem, _ in present for r, _ in RATIOS):
        return missing(key, title, "no binding file (python.json, java.json, go.json, ffi.json, ffi-rust.json)")
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(RATIOS)
    for i, (ratio, label) in enumerate(RATIOS):
        xs, ys, lo, hi = [], [], [], []
        for j, (stem, _) in enumerate(present):
            v = num(get(files, stem, ratio))
            if v is None:
                continue
            vmin = num(get(files, stem, f"{ratio}_min"))
            vmax = num(get(files, stem, f"{ratio}_max"))
            xs.append(j + (i - 1) * width)
            ys.append(v)
            lo.append(v - vmin if vmin is not None else 0)
            hi.append(vmax - v if vmax is not None else 0)
        ax.bar(xs, ys, width, label=label, color=COLORS[i], yerr=[lo, hi], capsize=3, ecolor="#333")
    ax.axhline(1.0, color="#333", lw=0.8, ls="--")
    ax.set_xticks(range(len(present)), [name for _, name in present])
    ax.set_ylabel("records/s ÷ engine's")
    ax.legend(loc="upper left", ncols=3, fontsize=8, frameon=False, bbox_to_anchor=(0, 1.12))
    return Chart(key, title, svg_of(fig), "1.0 = the Rust engine's rate on the same broker, measured just before")


def peer_chart(files: Dict[str, Any]) -> Chart:
    """Ours ÷ Kafka per workload (higher is better for us)."""
    key, title = "peer", "Ours vs Apache Kafka, per workload (>1: ours better)"
    rows = [r for r in get(files, "peer", "rows") or [] if isinstance(r, dict)]
    if not rows:
        return missing(key, title, "peer.json (make bench-peer)")
    labels, series = [], {"kafka": [], "kafka_sync": []}
    for r in rows:
        ratios = {t: r.get(f"ours_vs_{t}") for t in series}
        count = max(len(v) if isinstance(v, list) else 1 for v in ratios.values())
        for i in range(count):
            suffix = ""
            if count > 1:
                suffix = f" ({'p50' if i == 0 else 'p99'})" if "ms" in str(r.get("unit")) else f" [{i}]"
            labels.append(short_workload(str(r.get("workload", "?"))) + suffix)
            for t, v in ratios.items():
                item = v[i] if isinstance(v, list) and i < len(v) else (v if i == 0 else None)
                series[t].append(num(item) or 0.0)
    fig, ax = plt.subplots(figsize=(8, 0.42 * len(labels) + 1.0))
    ys = range(len(labels))
    h = 0.38
    ax.barh([y - h / 2 for y in ys], series["kafka"], h, label="vs Kafka (default)", color=COLORS[0])
    ax.barh([y + h / 2 for y in ys], series["kafka_sync"], h, label="vs Kafka, flush every record", color=COLORS[1])
    ax.axvline(1.0, color="#333", lw=0.8, ls="--")
    ax.set_yticks(list(ys), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ours ÷ Kafka (for times: Kafka's ÷ ours)")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return Chart(key, title, svg_of(fig), "")


def short_workload(label: str) -> str:
    """A row of peer.json, named short enough for the chart's axis: the
    language and workload, without the clients compared or the unit."""
    label = re.sub(r": [^,:]+ vs [^,]+(?=,)", "", label)  # ": Java client vs Rust engine"
    label = label.replace(", records/s", "").replace(": p50 / p99, ms", "")
    return label.split(",")[0] if " per call" in label else label


def latency_chart(files: Dict[str, Any]) -> Chart:
    """p50 / p99 / p999 per offered rate and path."""
    key, title = "latency", "Latency at a fixed offered rate: p50, p99, p999 (ms)"
    rows = [r for r in get(files, "latency", "rows") or [] if isinstance(r, dict)]
    groups: List[Tuple[str, List[Optional[float]]]] = []
    for r in rows:
        rate = num(r.get("rate"))
        name = f"{rate / 1000:.0f}k/s" if rate else "?"
        if r.get("offered") is False:
            name += " (not reached)"
        for path, label in (("ack_us", "produce→ack"), ("consume_us", "produce→consume")):
            qs = [num(get(r, path, q)) for q in ("p50", "p99", "p999")]
            if any(q is not None for q in qs):
                groups.append((f"{name}\n{label}", [None if q is None else q / 1000 for q in qs]))
    if not groups:
        return missing(key, title, "latency.json (cargo bench -p cursus --bench latency)")
    fig, ax = plt.subplots(figsize=(8, 3.4))
    width = 0.26
    for i, q in enumerate(("p50", "p99", "p999")):
        xs = [j + (i - 1) * width for j, (_, v) in enumerate(groups) if v[i] is not None]
        ys = [v[i] for _, v in groups if v[i] is not None]
        ax.bar(xs, ys, width, label=q, color=COLORS[i])
    ax.set_xticks(range(len(groups)), [g for g, _ in groups], fontsize=8)
    ax.set_ylabel("ms")
    ax.legend(fontsize=8, frameon=False)
    return Chart(key, title, svg_of(fig), "")


def soak_chart(files: Dict[str, Any]) -> Chart:
    """The broker's RSS over the soak run."""
    key, title = "soak", "Soak: broker RSS over time"
    samples = [s for s in get(files, "soak", "samples") or [] if isinstance(s, list) and len(s) == 2]
    points = [(num(t), num(r)) for t, r in samples]
    points = [(t, r) for t, r in points if t is not None and r is not None]
    if not points:
        return missing(key, title, "soak.json (cursus-chaos soak)")
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([t for t, _ in points], [r / 1024 for _, r in points], color=COLORS[0], lw=1.5)
    ax.set_xlabel("seconds")
    ax.set_ylabel("RSS, MiB")
    ax.set_ylim(bottom=0)
    produce, consume = num(get(files, "soak", "produce_per_s")), num(get(files, "soak", "consume_per_s"))
    note = ""
    if produce is not None and consume is not None:
        note = f"sustained {produce:,.0f} records/s produced, {consume:,.0f} consumed"
    return Chart(key, title, svg_of(fig), note)


def cluster_chart(files: Dict[str, Any]) -> Chart:
    """acks=all produce on three brokers (rf=3) next to one."""
    key, title = "cluster", "Three-broker cluster (rf=3) vs a single broker, acks=all"
    single, cluster = get(files, "cluster", "single"), get(files, "cluster", "cluster")
    rates = [num(get(single, "produce_records_per_s")), num(get(cluster, "produce_records_per_s"))]
    if any(r is None for r in rates):
        return missing(key, title, "cluster.json (cargo bench -p cursus --bench cluster)")
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3))
    names = ["single broker", "cluster"]
    left.bar(names, [r / 1e3 for r in rates if r is not None], color=[COLORS[0], COLORS[1]])
    left.set_ylabel("thousand records/s")
    left.set_title("produce rate", fontsize=9)
    width = 0.38
    for i, (node, name) in enumerate(((single, names[0]), (cluster, names[1]))):
        qs = [num(get(node, "ack_us", q)) for q in ("p50", "p99")]
        right.bar([j + (i - 0.5) * width for j in range(2)], [0 if q is None else q / 1000 for q in qs], width,
                  label=name, color=COLORS[i])
    right.set_xticks(range(2), ["p50", "p99"])
    right.set_ylabel("ms")
    right.set_title("produce→ack", fontsize=9)
    right.legend(fontsize=8, frameon=False)
    ratio = num(get(files, "cluster", "cluster_vs_single"))
    return Chart(key, title, svg_of(fig), "" if ratio is None else f"cluster ÷ single broker: {ratio:.2f}")


def memory_chart(files: Dict[str, Any]) -> Chart:
    """Idle client RSS per language."""
    key, title = "memory", "Idle client RSS per language (MiB)"
    values: List[Tuple[str, float]] = []
    rust = num(get(files, "memory", "rust_client_process_rss_kib"))
    if rust is not None:
        values.append(("Rust", rust / 1024))
    for stem, name in BINDINGS:
        v = num(get(files, stem, "idle_client_rss_kib"))
        if v is not None:
            values.append((name, v / 1024))
    if not values:
        return missing(key, title, "memory.json and the binding files' idle_client_rss_kib")
    fig, ax = plt.subplots(figsize=(8, 2.6))
    ax.bar([n for n, _ in values], [v for _, v in values], color=COLORS[0])
    ax.set_ylabel("MiB")
    return Chart(key, title, svg_of(fig), "")


def charts(files: Dict[str, Any]) -> List[Chart]:
    """Every chart, in the report's order."""
    return [
        bindings_chart(files),
        peer_chart(files),
        latency_chart(files),
        soak_chart(files),
        cluster_chart(files),
        memory_chart(files),
    ]
