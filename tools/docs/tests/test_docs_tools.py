"""The documentation tools on small inputs made here (`make docs` runs these
before it builds the site): the assembler's directives and link rewriting,
the settings table's reading of clap's help, the link checker's findings,
and the benchmark report's charts and "not measured"."""

from __future__ import annotations

import importlib
import json
import pathlib
import subprocess
import sys
from typing import Any, Dict

import pytest

HERE = pathlib.Path(__file__).resolve().parent
TOOLS = HERE.parents[1]
sys.path[:0] = [str(HERE.parent), str(TOOLS)]

import assemble  # noqa: E402
import bench_charts  # noqa: E402
import fragments  # noqa: E402
import linkcheck  # noqa: E402

REPO = TOOLS.parent


# ------------------------------------------------------------------ assemble


def test_first_program_is_what_readme_block_extracts(tmp_path: pathlib.Path) -> None:
    text = assemble.expand("first-program", "bindings-python/README.md python", tmp_path)
    block = subprocess.run(
        [str(REPO / "tools" / "readme-block.sh"), str(REPO / "bindings-python" / "README.md")],
        check=True, capture_output=True, text=True,
    ).stdout
    assert text == "```python\n" + block.rstrip("\n") + "\n```"
    assert "import cursus" in text


def test_missing_include_and_fragment_fail(tmp_path: pathlib.Path) -> None:
    with pytest.raises(assemble.AssemblyError):
        assemble.expand("source", "no/such/file.rs rust", tmp_path)
    with pytest.raises(assemble.AssemblyError):
        assemble.expand("generated", "nothing.md", tmp_path)
    # A file without a first program is refused, not shown empty.
    with pytest.raises(assemble.AssemblyError):
        assemble.expand("first-program", "LICENSE text", tmp_path)


def test_links_to_repository_files_become_paths() -> None:
    pages = {"docs/a.md", "docs/b.md"}
    rewrite = assemble.rewrite_link
    assert rewrite("b", "b.md#x", "docs/a.md", pages) == "[b](b.md#x)"
    assert rewrite("the faults", "../broker/src/faults.rs", "docs/a.md", pages) == "the faults (`broker/src/faults.rs`)"
    assert rewrite("`broker/src/faults.rs`", "../broker/src/faults.rs", "docs/a.md", pages) == "`broker/src/faults.rs`"
    assert rewrite("web", "https://example.invalid/", "docs/a.md", pages) == "[web](https://example.invalid/)"
    with pytest.raises(assemble.AssemblyError):
        rewrite("gone", "../no-such-file.md", "docs/a.md", pages)


def test_directives_in_code_blocks_are_left_alone(tmp_path: pathlib.Path) -> None:
    source = "```\n{{#generated x.md}} [a](../nowhere.rs)\n```\n"
    assert assemble.render(source, "docs/a.md", set(), tmp_path, from_repo=True) == source


# ------------------------------------------------------------------ fragments

HELP = """\
Cursus reference broker.

Usage: cursus-broker [OPTIONS]

Options:
      --config <FILE>
          TOML configuration file

      --listen <ADDR>
          Client listener address. Port 0 picks a free port. [default: 127.0.0.1:9000]

      --enable-sasl
          Require AUTH. [default: off]

      --mode <MODE>
          How to run

          [default: standalone]
          [possible values: standalone, cluster]

  -h, --help
          Print help
"""


def test_settings_are_read_from_clap_help() -> None:
    options = {o["flag"]: o for o in fragments.parse_help(HELP)}
    assert list(options) == ["--config", "--listen", "--enable-sasl", "--mode", "--help"]
    assert options["--listen"]["value"] == "<ADDR>"
    assert options["--listen"]["default"] == "127.0.0.1:9000"
    assert options["--listen"]["help"] == "Client listener address. Port 0 picks a free port."
    assert options["--enable-sasl"]["value"] == "" and options["--enable-sasl"]["default"] == "off"
    assert options["--mode"]["possible"] == "standalone, cluster"
    assert options["--help"]["short"] == "-h"


# ------------------------------------------------------------------ linkcheck


def write_site(root: pathlib.Path, pages: Dict[str, str]) -> None:
    for name, body in pages.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def page(title: str, body: str) -> str:
    return f"<!DOCTYPE html><html><head><title>{title}</title></head><body>{body}</body></html>"


def test_linkcheck_finds_broken_links_anchors_titles_and_remote_loads(tmp_path: pathlib.Path) -> None:
    write_site(tmp_path, {
        "index.html": page("Home", '<a href="a.html#here">ok</a> <a href="a.html#gone">bad anchor</a>'
                                   '<a href="missing.html">missing</a> <a href="https://example.invalid/">followed later</a>'),
        "a.html": page("A", '<h2 id="here">Here</h2><script src="https://cdn.example.invalid/x.js"></script>'),
        "untitled.html": "<html><body><a href='index.html'>home</a></body></html>",
    })
    problems, pages, internal, external, _ = linkcheck.check(tmp_path)
    assert pages == 3 and external == 2
    assert sorted(problems) == sorted([
        "index.html: a.html#gone: no id 'gone' in a.html",
        "index.html: missing.html: broken link",
        "a.html: <script> loads https://cdn.example.invalid/x.js from outside the site",
        "untitled.html: no title",
    ])


def test_linkcheck_follows_redirect_pages(tmp_path: pathlib.Path) -> None:
    write_site(tmp_path, {
        "index.html": page("Home", '<a href="old.html#m">m</a>'),
        "old.html": '<html><head><meta http-equiv="refresh" content="0;URL=new.html"><title>R</title></head></html>',
        "new.html": page("New", '<div id="m"></div>'),
    })
    assert linkcheck.check(tmp_path)[0] == []


# ------------------------------------------------------------------ bench charts


def test_every_chart_says_not_measured_without_files() -> None:
    charts = bench_charts.charts({})
    assert [c.key for c in charts] == ["bindings", "peer", "latency", "soak", "cluster", "memory"]
    assert all(c.svg is None and c.note.startswith("not measured: ") for c in charts)


def test_charts_draw_what_is_there() -> None:
    files: Dict[str, Any] = {
        "python": {"ratio_consume": 0.8, "ratio_consume_min": 0.7, "ratio_consume_max": 0.9},
        "soak": {"samples": [[0.0, 1024], [1.0, 2048]], "produce_per_s": 10, "consume_per_s": 9},
    }
    charts = {c.key: c for c in bench_charts.charts(files)}
    assert charts["bindings"].svg is not None and "Python" in charts["bindings"].svg
    assert charts["soak"].svg is not None and "10 records/s produced" in charts["soak"].note
    assert charts["latency"].svg is None and charts["cluster"].svg is None


def test_report_is_written_after_a_partial_run(tmp_path: pathlib.Path) -> None:
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "latency.json").write_text(json.dumps(
        {"rows": [{"rate": 10000, "ack_us": {"p50": 600, "p99": 1200, "p999": 2100}}]}))
    (bench / "broken.json").write_text("{not json")
    result = subprocess.run([sys.executable, str(TOOLS / "bench-report.py"), str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    report = (bench / "report.html").read_text()
    assert report.count("<svg") == 1 and report.count("not measured: ") == 5
    # Nothing is fetched: no remote script, stylesheet, image or font.
    assert 'src="http' not in report and 'href="http' not in report and "url(http" not in report


def test_report_from_the_figures_of_record(tmp_path: pathlib.Path) -> None:
    record = REPO / "docs" / "figures" / "performance.json"
    result = subprocess.run([sys.executable, str(TOOLS / "bench-report.py"), str(tmp_path), "--from-record", str(record)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    report = (tmp_path / "bench" / "report.html").read_text()
    # The record has every chart's figures but the soak's and the cluster's.
    assert report.count("<svg") == 4 and report.count("not measured: ") == 2, result.stdout
    assert str(record) in report
    (tmp_path / "bad.json").write_text("[1, 2]")
    bad = subprocess.run([sys.executable, str(TOOLS / "bench-report.py"), str(tmp_path), "--from-record",
                          str(tmp_path / "bad.json")], capture_output=True, text=True)
    assert bad.returncode == 1 and "not a figures-of-record file" in bad.stderr


# ------------------------------------------------------------------ pdoc


def test_pdoc_is_shown_the_docstrings_pdoc_alone_misses(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pdoc.doc
    import pdoc.doc_ast
    import pdoc_build

    package = tmp_path / "docpkg"
    package.mkdir()
    (package / "__init__.py").write_text('"""A package."""\nfrom ._impl import Alias, Failure\n__all__ = ["Alias", "Failure"]\n')
    (package / "_impl.py").write_text(
        "from typing import List\n\n"
        "#: A list of names,\n#: in order.\nAlias = List[str]\n\n\n"
        'class Failure(Exception):\n    """A failure."""\n\n    kind: str = "x"\n    """Its kind."""\n\n\n'
        'Failure.__module__ = "docpkg"\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(pdoc.doc_ast, "walk_tree", pdoc.doc_ast.walk_tree)  # restored after the test
    module = importlib.import_module("docpkg")
    assert sorted(pdoc_build.tally(pdoc.doc.Module(module))["undocumented"]) == ["docpkg.Alias", "docpkg.Failure.kind"]
    pdoc_build.read_comment_docs("docpkg")
    seen = pdoc_build.tally(pdoc.doc.Module(module))
    assert seen["undocumented"] == [] and {"docpkg.Alias", "docpkg.Failure.kind"} <= set(seen["documented"])
    assert pdoc.doc.Module(module).get("Alias").docstring == "A list of names, in order."  # type: ignore[union-attr]
