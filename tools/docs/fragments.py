#!/usr/bin/env python3
"""Tables and charts the site makes at build time (`make docs`), written as
Markdown fragments that docs/site pages include with {{#generated NAME}}
(tools/docs/assemble.py):

    fragments.py --generated DIR --api API_DIR --broker BIN --figures FILE

- broker-settings.md: every setting from `cursus-broker --help` (flag,
  file key, value, default, help), so the page is the binary's own list;
- api-table.md: per language, the tool, what it covers and the number of
  documented public items, counted from the generated reference;
- performance-charts.md and pages/reference/figures/*.svg: the figures of
  record (FILE, docs/figures/performance.json) drawn by tools/bench_charts.py.
"""

from __future__ import annotations

import argparse
import html
import json
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import bench_charts  # noqa: E402

OPTION = re.compile(r"^\s{2,}(?:(-\w), )?(--[\w-]+)(?:[ =](<[^>]+>(?:\.\.\.)?|\[<[^>]+>\](?:\.\.\.)?))?(?:\s{2,}(.*))?$")
DEFAULT = re.compile(r"\s*\[default: ([^\]]*)\]")
POSSIBLE = re.compile(r"\s*\[possible values: ([^\]]*)\]")


class FragmentError(Exception):
    """A table could not be made from what the tools produced."""


def parse_help(text: str) -> List[Dict[str, str]]:
    """The options of a clap `--help` text, in order: flag, short, value,
    default, possible values, help (one paragraph)."""
    options: List[Dict[str, str]] = []
    current: Optional[Dict[str, str]] = None
    in_options = False
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            in_options = line.strip().lower() in ("options:", "arguments:") or line.strip().endswith("options:")
            current = None
            continue
        if not in_options:
            continue
        m = OPTION.match(line)
        if m:
            current = {"short": m.group(1) or "", "flag": m.group(2), "value": m.group(3) or "", "help": m.group(4) or ""}
            options.append(current)
        elif current is not None and line.strip():
            current["help"] = (current["help"] + " " + line.strip()).strip()
        elif current is not None and current["help"]:
            current["help"] += "\n"
    for o in options:
        text = " ".join(o["help"].split())
        d = DEFAULT.search(text)
        p = POSSIBLE.search(text)
        o["default"] = d.group(1) if d else ""
        o["possible"] = p.group(1) if p else ""
        o["help"] = POSSIBLE.sub("", DEFAULT.sub("", text)).strip()
    return options


def cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|")


def settings_table(broker: pathlib.Path) -> Tuple[str, int]:
    out = subprocess.run([str(broker), "--help"], check=True, capture_output=True, text=True).stdout
    options = [o for o in parse_help(out) if o["flag"] not in ("--help", "--version")]
    if len(options) < 5:
        raise FragmentError(f"{broker} --help lists {len(options)} options: not the help text this expects")
    # Three columns, to fit a page: the file key is the flag's name with
    # '_' for '-', as the page says.
    rows = ["| Setting | Default | What it sets |", "|---|---|---|"]
    for o in options:
        flag = f"`{o['flag']}" + (f" {o['value']}" if o["value"] else "") + "`"
        if o["short"]:
            flag += f" (`{o['short']}`)"
        help_text = cell(o["help"])
        if o["possible"]:
            help_text += f" One of: {cell(o['possible'])}."
        rows.append(f"| {flag} | {cell(o['default'])} | {help_text} |")
    note = (
        f"\n\n{len(options)} settings, from `cursus-broker --help` of this build. A key that only the "
        "file has (a list, for instance) is not a flag and so not in this table; `broker/src/config.rs` "
        "and the cluster section declare them all.\n"
    )
    return "\n".join(rows) + note, len(options)


def count_rust(api: pathlib.Path) -> int:
    """Items listed by each crate's all.html, plus the inherent methods,
    associated items and fields/variants of every item page."""
    total = 0
    for all_html in sorted(api.glob("rust/*/all.html")):
        text = all_html.read_text()
        total += len(re.findall(r'<li><a href="[^"]+\.html">', text))
        for page in all_html.parent.rglob("*.html"):
            body = page.read_text()
            inherent = body.split('id="trait-implementations"', 1)[0]
            total += len(re.findall(r'id="(?:method|associatedconstant|associatedtype|structfield|variant)\.[^"]+"', inherent))
    return total


def count_java(api: pathlib.Path) -> int:
    """Entries of javadoc's index: classes, constructors, methods, fields."""
    index = api / "java" / "index-all.html"
    if not index.is_file():
        raise FragmentError(f"no {index}")
    return len(re.findall(r"<dt>", index.read_text()))


def count_doxygen(xml_dir: pathlib.Path) -> Tuple[int, int]:
    """Documented C items (of cursus.h) and C++ items (namespace cursus),
    from Doxygen's XML index; undocumented ones fail the build before."""
    root = ET.parse(xml_dir / "index.xml").getroot()
    c, cpp = set(), set()
    for compound in root.iter("compound"):
        kind, name = compound.get("kind"), compound.findtext("name") or ""
        if kind in ("struct", "class", "union") and not name.startswith("cursus::"):
            c.add(compound.get("refid"))
        if kind in ("struct", "class") and name.startswith("cursus::"):
            cpp.add(compound.get("refid"))
        for member in compound.iter("member"):
            if kind == "file" and name == "cursus.h":
                c.add(member.get("refid"))
            elif kind in ("namespace", "class", "struct") and name.startswith("cursus"):
                if kind == "struct" and not name.startswith("cursus::"):
                    c.add(member.get("refid"))
                else:
                    cpp.add(member.get("refid"))
    return len(c), len(cpp)


def api_table(api: pathlib.Path, counts: pathlib.Path) -> str:
    python = json.loads((counts / "python.json").read_text())
    go = json.loads((counts / "go.json").read_text())
    c, cpp = count_doxygen(api / "doxygen" / "xml")
    undocumented = python.get("undocumented", 0)
    py_note = f" ({undocumented} more public names have no docstring of their own)" if undocumented else ""
    rows = [
        ("Rust", "[cursus, cursus-wire, cursus-bridge](../api/rust/index.html)", "rustdoc, `-D warnings` (every public item documented: `missing_docs`)",
         f"{count_rust(api)} items, methods and fields"),
        ("Python", "[cursus, cursus.aio, cursus.otel](../api/python/cursus.html)", "pdoc over the installed wheel (signatures and docstrings of the native module, type aliases from its `.pyi` stub); a warning or a public name without a docstring fails",
         f"{python['documented']} documented names{py_note}"),
        ("Java", "[io.cursus](../api/java/index.html)", "javadoc (Maven javadoc plugin, doclint, warnings fail)",
         f"{count_java(api)} index entries (classes, constructors, methods, fields)"),
        ("Go", "[package cursus](api-go.md)", "`go/doc` (tools/docs/godoc); an exported item without a doc comment fails",
         f"{go['documented']} documented items (constants, variables, functions, types, methods)"),
        ("C", "[cursus.h](../api/c/cursus_8h.html)", "Doxygen, warnings (undocumented items included) fail",
         f"{c} documented items (functions, types, fields, enumerators, macros)"),
        ("C++", "[classes of namespace cursus](../api/c/annotated.html)", "Doxygen, as for C",
         f"{cpp} documented items (classes, members)"),
    ]
    lines = ["| Language | Reference | Tool | Documented public items |", "|---|---|---|---|"]
    lines += [f"| {' | '.join(r)} |" for r in rows]
    return "\n".join(lines) + "\n"


def sentence(text: str) -> str:
    """text with its first letter in capitals (the rest as it is)."""
    return text[:1].upper() + text[1:]


def performance_charts(figures: pathlib.Path, generated: pathlib.Path) -> str:
    record = json.loads(figures.read_text())
    out_dir = generated / "pages" / "reference" / "figures"
    out_dir.mkdir(parents=True, exist_ok=True)
    parts: List[str] = []
    for chart in bench_charts.charts(record):
        parts.append(f"## {chart.title}\n")
        if chart.svg is None:
            parts.append(f"*{sentence(chart.note)} in the figures of record.*\n")
            continue
        (out_dir / f"{chart.key}.svg").write_text(chart.svg)
        parts.append(f"![{chart.title}](figures/{chart.key}.svg)\n")
        if chart.note:
            parts.append(f"{sentence(chart.note)}.\n")
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=pathlib.Path, required=True)
    parser.add_argument("--api", type=pathlib.Path, required=True)
    parser.add_argument("--broker", type=pathlib.Path, required=True)
    parser.add_argument("--figures", type=pathlib.Path, required=True)
    args = parser.parse_args()
    fragments = args.generated / "fragments"
    fragments.mkdir(parents=True, exist_ok=True)
    try:
        settings, count = settings_table(args.broker)
        (fragments / "broker-settings.md").write_text(settings)
        (fragments / "api-table.md").write_text(api_table(args.api, args.generated / "counts"))
        (fragments / "performance-charts.md").write_text(performance_charts(args.figures, args.generated))
    except (FragmentError, OSError, ValueError, KeyError, subprocess.CalledProcessError) as e:
        print(f"fragments: {e}", file=sys.stderr)
        return 1
    print(f"fragments: {count} broker settings, API table, performance charts -> {fragments}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
