#!/usr/bin/env python3
"""The benchmark report with charts: target/bench/report.html (`make bench`,
`make bench-peer`).

    python tools/bench-report.py [TARGET_DIR]                 # default: target
    python tools/bench-report.py TARGET_DIR --save-record docs/figures/performance.json
    python tools/bench-report.py TARGET_DIR --from-record docs/figures/performance.json

Reads whatever target/bench/*.json exist (tools/bench-table.py says which
harness writes which) and writes one self-contained HTML page (inline SVG,
nothing fetched) with: each language ÷ the engine with the spread of its
runs; ours vs Kafka per workload; latency percentiles per rate and path;
the soak's broker RSS over time; the cluster vs a single broker; idle
client RSS. A chart whose files are missing says "not measured", so the
report works after a partial run.

--from-record draws the report from a figures-of-record file instead of
target/bench/*.json: the checked-in figures as charts without running a
benchmark (`make bench-report BENCH_RECORD=docs/figures/performance.json`).

--save-record also copies the files the charts read into one JSON file: the
figures of record the site's performance page draws (after a quiet
`make bench` and `make bench-peer`; docs/figures/README.md).
Needs matplotlib (the docs tools' venv, tools/docs/requirements.txt).
"""

from __future__ import annotations

import argparse
import datetime
import html
import json
import pathlib
import sys
from typing import Any, Dict, List

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import bench_charts  # noqa: E402

# The files the charts read, by stem.
RECORD_STEMS = ("engine", "latency", "cluster", "soak", "memory", "peer") + tuple(s for s, _ in bench_charts.BINDINGS)


def load(bench: pathlib.Path) -> Dict[str, Any]:
    """Every readable *.json of the bench directory, by stem."""
    files: Dict[str, Any] = {}
    for path in sorted(bench.glob("*.json")):
        try:
            files[path.stem] = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            print(f"bench-report: skipping {path}: {e}", file=sys.stderr)
    return files


def load_record(record: pathlib.Path) -> Dict[str, Any]:
    """The files of a figures-of-record file (stem -> parsed JSON), as
    --save-record wrote them; keys with a leading underscore (`_about`) are
    notes, not files."""
    data = json.loads(record.read_text())
    files = {k: v for k, v in data.items() if not k.startswith("_")} if isinstance(data, dict) else None
    if not files or not all(isinstance(v, (dict, list)) for v in files.values()):
        raise ValueError(f"{record}: not a figures-of-record file (an object of file stem -> figures)")
    return files


def page(charts: List[bench_charts.Chart], files: Dict[str, Any], source: str) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Cursus benchmark report</title>",
        "<style>body{font-family:sans-serif;max-width:62rem;margin:1.5rem auto;padding:0 1rem;color:#222}"
        "svg{max-width:100%;height:auto}section{margin:2rem 0}.note{color:#555}"
        ".missing{padding:1.5rem;background:#f4f4f4;border:1px dashed #aaa;color:#666}</style>",
        "</head><body>",
        "<h1>Cursus benchmark report</h1>",
        f"<p>From <code>{html.escape(source)}</code>, "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Files: "
        f"{html.escape(', '.join(f'{s}.json' for s in sorted(files)) or 'none')}. "
        "The table with every figure is <code>tools/bench-table.py</code>'s output.</p>",
    ]
    for c in charts:
        parts.append(f'<section id="{c.key}"><h2>{html.escape(c.title)}</h2>')
        if c.svg is None:
            parts.append(f'<div class="missing">{html.escape(c.note)}</div>')
        else:
            parts.append(c.svg)
            if c.note:
                parts.append(f'<p class="note">{html.escape(c.note)}</p>')
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", default="target", type=pathlib.Path)
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--save-record", type=pathlib.Path, metavar="FILE",
                        help="also write the charts' input files into FILE (the figures of record)")
    source.add_argument("--from-record", type=pathlib.Path, metavar="FILE",
                        help="draw the figures of record in FILE instead of TARGET_DIR/bench/*.json")
    args = parser.parse_args()
    bench = args.target / "bench"
    try:
        files = load_record(args.from_record) if args.from_record else load(bench)
    except (OSError, ValueError) as e:
        print(f"bench-report: {e}", file=sys.stderr)
        return 1
    charts = bench_charts.charts(files)
    bench.mkdir(parents=True, exist_ok=True)
    out = bench / "report.html"
    out.write_text(page(charts, files, str(args.from_record or bench)))
    drawn = sum(c.svg is not None for c in charts)
    rest = "" if drawn == len(charts) else "; the rest say not measured"
    print(f"bench-report: {out} ({drawn} of {len(charts)} charts{rest})")
    if args.save_record:
        record = {s: files[s] for s in RECORD_STEMS if s in files}
        args.save_record.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
        print(f"bench-report: figures of record -> {args.save_record} ({', '.join(record)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
