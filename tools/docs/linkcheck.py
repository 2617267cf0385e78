#!/usr/bin/env python3
"""Checks the built site offline (`make docs`): every HTML file has a
non-empty <title>, and every internal link (a, link, script, img, iframe,
source) names a file of the site and, with a #fragment, an id or name of
that page. External links (http:, https:, mailto:) are counted, not
fetched: the site must work offline, so no page may load one (a stylesheet,
script or image from elsewhere fails).

    python tools/docs/linkcheck.py SITE_DIR

Prints one line per problem and a summary; exit 1 on any problem.
"""

from __future__ import annotations

import fnmatch
import os
import pathlib
import re
import sys
import urllib.parse
from html.parser import HTMLParser
from typing import Dict, List, Optional, Set, Tuple

LINK_ATTRS = {"a": "href", "link": "href", "script": "src", "img": "src", "iframe": "src", "source": "src"}
# What the page loads by itself (not what a reader may follow).
LOADED = {"link", "script", "img", "iframe", "source"}
EXTERNAL = ("http:", "https:", "mailto:", "ftp:", "data:", "javascript:")
# Files the API tools generate for their own machinery, not pages a reader
# opens: they need no title (the browser check skips them too).
MACHINERY = ["toc.html", "api/c/search/*.html", "api/rust/src/*"]
# Line anchors (#12, #12-20) of rustdoc's source view: its script scrolls to
# them; they are no element ids.
SOURCE_LINES = re.compile(r"^\d+(-\d+)?$")


class Page(HTMLParser):
    """The ids, links and title of one HTML file."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: Set[str] = set()
        self.links: List[Tuple[str, str]] = []  # (tag, url)
        self.title: Optional[str] = None
        self.refresh: Optional[str] = None  # a redirect page's target
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        values = dict(attrs)
        if tag == "meta" and (values.get("http-equiv") or "").lower() == "refresh":
            m = re.search(r"url=([^;]+)", values.get("content") or "", re.I)
            self.refresh = m.group(1).strip() if m else None
        for key in ("id", "name"):
            if values.get(key) and (key == "id" or tag == "a"):
                self.ids.add(values[key] or "")
        attr = LINK_ATTRS.get(tag)
        if attr and values.get(attr) is not None:
            if tag == "link" and (values.get("rel") or "") in ("canonical", "alternate"):
                return
            self.links.append((tag, values[attr] or ""))
        if tag == "title" and self.title is None:
            self._in_title = True
            self.title = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title = (self.title or "") + data


def parse(path: pathlib.Path, cache: Dict[pathlib.Path, Page]) -> Page:
    if path not in cache:
        page = Page()
        page.feed(path.read_text(errors="replace"))
        cache[path] = page
    return cache[path]


def machinery(rel: str) -> bool:
    return any(fnmatch.fnmatch(rel, p) for p in MACHINERY)


STD_DOCS = ("std/", "core/", "alloc/")


def foreign_intra_doc_link(rel: str, path: str, target_rel: str = "") -> bool:
    """A link of a dependency's docs that rustdoc shows in our pages and
    cannot resolve without that dependency's own docs: an intra-doc link
    on a blanket implementation (`super::Span::current()`, `dispatcher#...`,
    not a file path), or a relative link into the standard library's docs
    (`../../std/error/index.html`, in the methods of `Result` that rustdoc's
    script adds to a type alias)."""
    if not rel.startswith("api/rust/"):
        return False
    if target_rel.startswith(STD_DOCS) or target_rel.startswith(tuple("api/rust/" + d for d in STD_DOCS)):
        return True
    return not path.endswith((".html", "/")) and "." not in path.rsplit("/", 1)[-1].replace("()", "")


FOREIGN = "foreign"


class Site:
    """The built site's files, parsed once each, and the rules by which a
    link into it is good. `dom_ids` overrides a page's ids with those the
    browser saw (tools/docs/browser_check.py)."""

    def __init__(self, root: pathlib.Path) -> None:
        self.root = root.resolve()
        self.cache: Dict[pathlib.Path, Page] = {}
        self.dom_ids: Dict[pathlib.Path, Set[str]] = {}

    def page(self, path: pathlib.Path) -> Page:
        return parse(path, self.cache)

    def ids(self, path: pathlib.Path) -> Set[str]:
        return self.dom_ids.get(path) or self.page(path).ids

    def link_problem(self, source: pathlib.Path, target: pathlib.Path, raw_path: str, fragment: str) -> Optional[str]:
        """What is wrong with a link from page `source` to file `target`
        (resolved; `raw_path` as written) and `fragment` (as written): None
        when it is good, FOREIGN for a dependency's unresolved rustdoc link."""
        rel = source.relative_to(self.root).as_posix()
        if raw_path.endswith("/") or target.is_dir():
            target = target / "index.html"
        if not target.is_relative_to(self.root):
            return "leaves the site"
        if not target.exists():
            target_rel = os.path.relpath(target, self.root)
            return FOREIGN if foreign_intra_doc_link(rel, raw_path, target_rel) else "broken link"
        if not fragment or target.suffix != ".html":
            return None
        redirect = self.page(target).refresh
        if redirect:  # rustdoc's page for a re-exported item's private path
            target = (target.parent / urllib.parse.unquote(urllib.parse.urlsplit(redirect).path)).resolve()
        ids = self.ids(target)
        if fragment in ids or urllib.parse.unquote(fragment) in ids:
            return None
        target_rel = target.relative_to(self.root).as_posix()
        if fnmatch.fnmatch(target_rel, "api/rust/src/*") and SOURCE_LINES.match(fragment):
            return None
        return f"no id {urllib.parse.unquote(fragment)!r} in {target_rel}"


def check(root: pathlib.Path) -> Tuple[List[str], int, int, int, int]:
    site = Site(root)
    problems: List[str] = []
    foreign = internal = external = 0
    pages = sorted(site.root.rglob("*.html"))
    for path in pages:
        rel = path.relative_to(site.root)
        page = site.page(path)
        if not (page.title or "").strip() and not machinery(rel.as_posix()):
            problems.append(f"{rel}: no title")
        for tag, url in page.links:
            if url.startswith(EXTERNAL) or url.startswith("//"):
                external += 1
                if tag in LOADED and not url.startswith(("data:", "javascript:")):
                    problems.append(f"{rel}: <{tag}> loads {url} from outside the site")
                continue
            internal += 1
            parts = urllib.parse.urlsplit(url)
            target = path if not parts.path else (path.parent / urllib.parse.unquote(parts.path)).resolve()
            # Fragments of stylesheets and scripts are not anchors.
            problem = site.link_problem(path, target, parts.path, parts.fragment if tag == "a" else "")
            if problem == FOREIGN:
                foreign += 1
            elif problem:
                problems.append(f"{rel}: {url}: {problem}")
    return problems, len(pages), internal, external, foreign


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    site = pathlib.Path(sys.argv[1]).resolve()
    problems, pages, internal, external, foreign = check(site)
    for p in problems:
        print(f"linkcheck: {p}")
    print(f"linkcheck: {pages} pages, {internal} internal links checked, {external} external links not "
          f"followed, {foreign} unresolved intra-doc links of dependencies' docs on rustdoc's blanket "
          f"implementations, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
