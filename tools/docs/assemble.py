#!/usr/bin/env python3
"""Lays out the mdBook source of the documentation site (`make docs`).

    python3 tools/docs/assemble.py --generated DIR --out SRC_DIR

Reads docs/site/SUMMARY.md and writes every chapter it lists into SRC_DIR at
the same relative path. A chapter's file is looked up, in this order, in
DIR/pages/ (pages made at build time: the Go package reference), in
docs/site/ (the site's own pages) and in the repository (the guides and the
READMEs, at their repository paths, so that their relative links to each
other keep working). docs/site/book.toml and docs/site/theme/ are copied
next to SRC_DIR, and the other files of DIR/pages/ (images) into SRC_DIR.

Directives, expanded in every chapter outside code blocks:

    {{#first-program README LANG}}  the README's first program, as
                                    tools/readme-block.sh extracts it for
                                    make test-install (one source, no copy)
    {{#source PATH LANG}}           a whole repository file as a code block
    {{#generated NAME}}             DIR/fragments/NAME (tables made at build time)

Links in repository Markdown to files that are not pages of the site (source
files, scripts) become the path in code, since the site cannot link into the
repository; links to http(s), anchors and pages of the site stay.
Fails (exit 1) on a missing chapter, include or fragment.
"""

from __future__ import annotations

import argparse
import pathlib
import posixpath
import re
import shutil
import subprocess
import sys
from typing import Dict, Iterable, List, Optional

REPO = pathlib.Path(__file__).resolve().parents[2]
SITE = REPO / "docs" / "site"

SUMMARY_LINK = re.compile(r"\]\(([^)]+\.md)\)")
DIRECTIVE = re.compile(r"\{\{#(first-program|source|generated)\s+([^}]*)\}\}")
# [text](target) not preceded by '!' (images are copied, not rewritten).
LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)\)")
FENCE = re.compile(r"^\s*(```+|~~~+)")


class AssemblyError(Exception):
    """A chapter, include or fragment the site needs is missing."""


def chapters(summary: str) -> List[str]:
    """The chapter paths of SUMMARY.md, in order, without duplicates."""
    seen: Dict[str, None] = {}
    for line in summary.splitlines():
        if line.lstrip().startswith("<!--"):
            continue
        for path in SUMMARY_LINK.findall(line):
            seen.setdefault(path, None)
    return list(seen)


def find_chapter(path: str, generated: pathlib.Path) -> pathlib.Path:
    """The file a chapter path names (see the module doc for the order)."""
    for root in (generated / "pages", SITE, REPO):
        candidate = root / path
        if candidate.is_file():
            return candidate
    raise AssemblyError(f"SUMMARY.md lists {path}, which is neither generated, in docs/site/ nor in the repository")


def fenced(body: str, lang: str) -> str:
    fence = "````" if "```" in body else "```"
    return f"{fence}{lang}\n{body.rstrip(chr(10))}\n{fence}"


def expand(kind: str, args: str, generated: pathlib.Path) -> str:
    """The text a directive stands for."""
    parts = args.split()
    if kind == "generated":
        fragment = generated / "fragments" / args.strip()
        if not fragment.is_file():
            raise AssemblyError(f"no generated fragment {fragment}")
        return fragment.read_text().rstrip("\n")
    if len(parts) != 2:
        raise AssemblyError(f"{{{{#{kind} {args}}}}}: expected a path and a language")
    path, lang = parts
    file = REPO / path
    if not file.is_file():
        raise AssemblyError(f"{{{{#{kind}}}}}: no file {path}")
    if kind == "source":
        return fenced(file.read_text(), lang)
    program = subprocess.run(
        [str(REPO / "tools" / "readme-block.sh"), str(file)], check=True, capture_output=True, text=True
    ).stdout
    if not program.strip():
        raise AssemblyError(f"{path} has no first program (no <!-- first-program marker and code block)")
    return fenced(program, lang)


def outside_fences(lines: Iterable[str]) -> Iterable[tuple[bool, str]]:
    """Each line with whether it is prose (outside a fenced code block)."""
    fence: Optional[str] = None
    for line in lines:
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            yield False, line
        elif fence is not None:
            if m and m.group(1).startswith(fence[0]) and len(m.group(1)) >= len(fence) and line.strip() == m.group(1):
                fence = None
            yield False, line
        else:
            yield True, line


def rewrite_link(text: str, target: str, page: str, pages: set[str]) -> str:
    """The Markdown for one link of repository page `page` (see module doc)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return f"[{text}]({target})"
    path = target.split("#", 1)[0]
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    if resolved in pages or resolved.startswith("api/"):
        return f"[{text}]({target})"
    if not (REPO / resolved).exists():
        raise AssemblyError(f"{page}: link to {target}, which does not exist")
    shown = text.strip("`")
    return f"`{resolved}`" if shown in (path, resolved, posixpath.basename(resolved)) else f"{text} (`{resolved}`)"


def render(source: str, page: str, pages: set[str], generated: pathlib.Path, from_repo: bool) -> str:
    out: List[str] = []
    for prose, line in outside_fences(source.splitlines()):
        if prose:
            line = DIRECTIVE.sub(lambda m: expand(m.group(1), m.group(2), generated), line)
            if from_repo:
                line = LINK.sub(lambda m: rewrite_link(m.group(1), m.group(2), page, pages), line)
        out.append(line)
    return "\n".join(out) + "\n"


def assemble(generated: pathlib.Path, out: pathlib.Path) -> int:
    summary = (SITE / "SUMMARY.md").read_text()
    paths = chapters(summary)
    pages = set(paths)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / "SUMMARY.md").write_text(summary)
    for path in paths:
        source = find_chapter(path, generated)
        from_repo = not (source.is_relative_to(SITE) or source.is_relative_to(generated))
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(source.read_text(), path, pages, generated, from_repo))
    # Files the generated pages show (the charts' SVGs).
    for asset in (generated / "pages").rglob("*"):
        if asset.is_file() and asset.suffix != ".md":
            target = out / asset.relative_to(generated / "pages")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(asset, target)
    book = out.parent
    shutil.copy(SITE / "book.toml", book / "book.toml")
    if (SITE / "theme").is_dir():
        shutil.copytree(SITE / "theme", book / "theme", dirs_exist_ok=True)
    return len(paths)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=pathlib.Path, required=True, help="pages/ and fragments/ made at build time")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="the mdBook src directory to write")
    args = parser.parse_args(argv)
    try:
        count = assemble(args.generated.resolve(), args.out.resolve())
    except (AssemblyError, subprocess.CalledProcessError) as e:
        print(f"assemble: {e}", file=sys.stderr)
        return 1
    print(f"assemble: {count} chapters into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
