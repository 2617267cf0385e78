#!/usr/bin/env python3
"""The site in a real browser (`make docs-check`): headless Chromium (Debian's
/usr/bin/chromium), driven over the DevTools protocol (websocket-client,
pinned in tools/docs/requirements.txt), opens every page of the built site
from file:// and fails on

- a console error, an uncaught exception or a resource that does not load;
- a page without a title;
- a link to a file of the site that does not exist, or to an anchor that is
  not on the page it names (ids as the browser sees them, after scripts ran);
- a link that leaves file:// for the network from a page's own resources
  (the site must work offline; links a reader may follow are allowed).

Then it searches the site for "transaction" and "rebalance" (mdBook's own
index, in the page) and expects results, and writes screenshots of the home
page, a guide and an API page at desktop and phone widths.

    python tools/docs/browser_check.py SITE_DIR --screens DIR [--pages GLOB ...]

Every HTML file is a page, except the files the API tools generate for
their own machinery (rustdoc's source view, Doxygen's search frames), which
tools/docs/linkcheck.py still checks statically.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from typing import Any, Dict, List, Optional, Set, Tuple

import websocket

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import linkcheck  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# The flags the machine's closed network needs (no background connections),
# plus a fresh profile per run.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--remote-debugging-port=0",
    # file:// pages may load each other's scripts (rustdoc, Doxygen search).
    "--allow-file-access-from-files",
]
SCREENS = [("home", "index.html"), ("guide", "docs/transactions.html"), ("api", "api/rust/cursus/index.html")]
VIEWPORTS = [("desktop", 1280, 900, False), ("phone", 390, 844, True)]
SEARCHES = ["transaction", "rebalance"]
PAGE_TIMEOUT = 30.0
# Redirects a page may make (rustdoc's pages of re-exported items, javadoc's
# and pdoc's index pages: a meta refresh or location.replace).
MAX_REDIRECTS = 3
# Events by which the tab's main frame starts going to another document.
NAVIGATION_EVENTS = ("Page.frameRequestedNavigation", "Page.frameStartedLoading", "Page.frameNavigated")

# Collected in the page once it has loaded: title, ids, and every link.
PAGE_FACTS = """(() => {
  const ids = [...document.querySelectorAll('[id]')].map(e => e.id)
    .concat([...document.querySelectorAll('a[name]')].map(e => e.name));
  const links = [...document.querySelectorAll('a[href]')].map(a => a.href);
  return JSON.stringify({url: location.href, title: document.title, ids, links});
})()"""


class CheckError(Exception):
    """The browser could not be driven (not a finding about the site)."""


class Navigated(CheckError):
    """The page went on to another one (a redirect) while it was asked
    something: ask the page it went to."""


class Browser:
    """One headless Chromium and one tab, over the DevTools protocol."""

    def __init__(self, profile: pathlib.Path) -> None:
        self.proc = subprocess.Popen(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        url = self._devtools_url()
        self.ws = websocket.create_connection(url, timeout=PAGE_TIMEOUT, suppress_origin=True)
        self.next_id = 0
        self.events: List[Dict[str, Any]] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.main_frame = self.call("Page.getFrameTree", session=True)["frameTree"]["frame"]["id"]

    def _devtools_url(self) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + PAGE_TIMEOUT
        seen: List[str] = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                return m.group(1)
        raise CheckError("chromium did not start:\n" + "".join(seen[-20:]))

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, session: bool = False) -> Dict[str, Any]:
        self.next_id += 1
        message: Dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        self.ws.send(json.dumps(message))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    message = str(reply["error"].get("message", ""))
                    gone = ("navigated or closed", "context was destroyed", "Cannot find context")
                    kind = Navigated if any(g in message for g in gone) else CheckError
                    raise kind(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_for(self, method: str, timeout: float = PAGE_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event["method"] == method:
                    # Only this one: the events before it (a console error
                    # of an inline script, a request) are the page's too.
                    del self.events[i]
                    return
            left = deadline - time.monotonic()
            if left <= 0:
                raise CheckError(f"timed out waiting for {method}")
            self.ws.settimeout(left)
            self.events.append(json.loads(self.ws.recv()))

    def evaluate(self, expression: str) -> Any:
        params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        result = self.call("Runtime.evaluate", params, session=True)
        if "exceptionDetails" in result:
            raise CheckError(f"evaluate: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def open(self, url: str) -> List[str]:
        """Loads url; returns the errors it logged while loading."""
        return self.visit(url, "0")[0]

    def visit(self, url: str, expression: str) -> Tuple[List[str], Any]:
        """Loads url, follows the redirects it makes, and evaluates
        expression in the page it ends on once that page's scripts ran;
        returns the errors logged on the way and the expression's value."""
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self.loaded()
        for _ in range(MAX_REDIRECTS + 1):
            try:
                # Let the page's own scripts finish what the load started
                # (a frame, then a task; the timer in case no frame comes).
                self.call(
                    "Runtime.evaluate",
                    {
                        "expression": "new Promise(r => { requestAnimationFrame(() => setTimeout(r, 0)); "
                        "setTimeout(r, 500); })",
                        "awaitPromise": True,
                    },
                    session=True,
                )
                if self.navigating():  # a redirect began: ask the next page
                    self.loaded()
                    continue
                value = self.evaluate(expression)
                if self.navigating():  # it began while asked: the value may be of either
                    self.loaded()
                    continue
                return self.drain_errors(), value
            except Navigated:
                self.loaded()
        raise CheckError(f"{url}: more than {MAX_REDIRECTS} redirects")

    def loaded(self) -> None:
        """Waits for the main frame's document to load; forgets how it
        started loading (navigating() then tells of the next document)."""
        self.wait_for("Page.loadEventFired")
        self.events = [e for e in self.events if e["method"] not in NAVIGATION_EVENTS]

    def navigating(self) -> bool:
        """Whether the main frame started for another document since it
        last loaded (a meta refresh, a location.replace)."""
        for event in self.events:
            params = event.get("params", {})
            frame = params.get("frameId") or params.get("frame", {}).get("id")
            if event["method"] in NAVIGATION_EVENTS and frame == self.main_frame:
                return True
        return False

    def drain_errors(self) -> List[str]:
        errors = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                d = params.get("exceptionDetails", {})
                errors.append(f"exception: {d.get('exception', {}).get('description') or d.get('text')}")
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                args = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                errors.append(f"console.{params['type']}: {args}")
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}".strip())
            elif method == "Network.requestWillBeSent":
                url = params.get("request", {}).get("url", "")
                if url.startswith(("http:", "https:", "ws:", "wss:")):
                    errors.append(f"network request to {url} (the site must work offline)")
        self.events.clear()
        return errors

    def screenshot(self, url: str, out: pathlib.Path, width: int, height: int, mobile: bool) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
            session=True,
        )
        self.open(url)
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        out.write_bytes(base64.b64decode(data))
        self.call("Emulation.clearDeviceMetricsOverride", session=True)

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def pages_of(site: pathlib.Path, only: List[str]) -> List[pathlib.Path]:
    pages = []
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        if linkcheck.machinery(rel):
            continue
        if only and not any(fnmatch.fnmatch(rel, p) for p in only):
            continue
        pages.append(path)
    return pages


def check_links(site: pathlib.Path, facts: Dict[pathlib.Path, Dict[str, Any]]) -> Tuple[List[str], int]:
    """Links between pages, by the rules of tools/docs/linkcheck.py, with
    the ids each page had in the browser (after its scripts ran)."""
    checker = linkcheck.Site(site)
    checker.dom_ids = {p: set(f["ids"]) for p, f in facts.items()}
    problems, foreign = [], 0
    for page, f in facts.items():
        rel = page.relative_to(site)
        for href in f["links"]:
            parts = urllib.parse.urlsplit(href)
            if parts.scheme != "file":
                continue
            target = pathlib.Path(urllib.parse.unquote(parts.path))
            raw_path = os.path.relpath(parts.path, page.parent.as_posix())
            problem = checker.link_problem(page, target, raw_path, parts.fragment)
            if problem == linkcheck.FOREIGN:
                foreign += 1
            elif problem:
                problems.append(f"{rel}: {href}: {problem}")
    return problems, foreign


# Resolves with the number of mdBook's search results once its header says
# how many there are (it fills the list in the same task), or -1 when the
# page has no search.
SEARCH_RESULTS = """new Promise(resolve => {
  const header = document.querySelector('#mdbook-searchresults-header, #searchresults-header');
  if (!header) return resolve(-1);
  const count = () => document.querySelectorAll('#mdbook-searchresults li, #searchresults li').length;
  if (header.textContent.trim()) return resolve(count());
  const seen = new MutationObserver(() => {
    if (header.textContent.trim()) { seen.disconnect(); resolve(count()); }
  });
  seen.observe(header, {childList: true, characterData: true, subtree: true});
  setTimeout(() => { seen.disconnect(); resolve(count()); }, %d);
})"""


def search(browser: Browser, site: pathlib.Path, term: str) -> Tuple[int, List[str]]:
    """Results of mdBook's search for term (its ?search= parameter; 0 when
    the site has no search) and the errors the page logged."""
    url = (site / "index.html").as_uri() + "?search=" + urllib.parse.quote(term)
    errors, found = browser.visit(url, SEARCH_RESULTS % (PAGE_TIMEOUT * 500))
    return max(int(found or 0), 0), errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=pathlib.Path)
    parser.add_argument("--screens", type=pathlib.Path, required=True)
    parser.add_argument("--pages", nargs="*", default=[], help="only these pages (globs relative to the site)")
    args = parser.parse_args()
    site = args.site.resolve()
    if not (site / "index.html").is_file():
        print(f"browser-check: no site at {site} (make docs)", file=sys.stderr)
        return 2
    pages = pages_of(site, args.pages)
    problems: List[str] = []
    facts: Dict[pathlib.Path, Dict[str, Any]] = {}
    found: List[Tuple[str, int]] = []
    foreign = redirects = 0
    started = time.monotonic()
    profile = pathlib.Path(tempfile.mkdtemp(prefix="cursus-docs-chromium-"))
    browser = Browser(profile)
    try:
        for page in pages:
            rel = page.relative_to(site)
            try:
                errors, value = browser.visit(page.as_uri(), PAGE_FACTS)
            except CheckError as e:
                raise CheckError(f"{rel}: {e}") from e
            problems += [f"{rel}: {error}" for error in errors]
            f = json.loads(value)
            if not f["title"].strip():
                problems.append(f"{rel}: no title")
            # A redirect's facts are those of the page it went to.
            landed = pathlib.Path(urllib.parse.unquote(urllib.parse.urlsplit(f["url"]).path))
            redirects += landed != page
            if landed.is_relative_to(site):
                facts[landed] = f
            else:
                problems.append(f"{rel}: redirects out of the site, to {f['url']}")
        link_problems, foreign = check_links(site, facts)
        problems += link_problems
        for term in SEARCHES:
            n, errors = search(browser, site, term)
            found.append((term, n))
            problems += [f"search for {term!r} found nothing"] if n == 0 else []
            problems += [f"search {term!r}: {e}" for e in errors + browser.drain_errors()]
        if args.screens.exists():
            shutil.rmtree(args.screens)
        args.screens.mkdir(parents=True)
        shots = []
        for name, rel_page in SCREENS:
            for view, width, height, mobile in VIEWPORTS:
                out = args.screens / f"{name}-{view}.png"
                browser.screenshot((site / rel_page).as_uri(), out, width, height, mobile)
                shots.append(out.name)
    except (CheckError, websocket.WebSocketException, OSError) as e:
        print(f"browser-check: {e}", file=sys.stderr)
        return 2
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    for p in problems:
        print(f"browser-check: {p}")
    links = sum(len(f["links"]) for f in facts.values())
    print(f"browser-check: {foreign} unresolved intra-doc links of dependencies' docs (rustdoc, not checked)")
    print(
        f"browser-check: {len(pages)} pages opened ({redirects} of them redirects) in "
        f"{time.monotonic() - started:.0f} s, {links} links, "
        + ", ".join(f"search {t!r}: {n} results" for t, n in found)
        + f"; screenshots in {args.screens}: {', '.join(shots)}; {len(problems)} problems"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
