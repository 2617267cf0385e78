"""The browser check (tools/docs/browser_check.py) against a small site made
here, in headless Chromium (`make docs-check` runs this before it checks the
real site): each kind of fault it must find, found once, on its page; a
redirect followed; the screenshots written."""

from __future__ import annotations

import pathlib
import subprocess
import sys
from typing import Dict

HERE = pathlib.Path(__file__).resolve().parent
CHECK = HERE.parent / "browser_check.py"


def page(title: str, body: str = "", head: str = "") -> str:
    return f"<!DOCTYPE html><html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def write(root: pathlib.Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run(site: pathlib.Path, screens: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(CHECK), str(site), "--screens", str(screens)],
                          capture_output=True, text=True, timeout=600)


def test_each_fault_is_found_on_its_page(tmp_path: pathlib.Path) -> None:
    site = tmp_path / "site"
    write(site, {
        "index.html": page("Home", '<a href="ok.html#here">ok</a> <a href="moved.html">moved</a>'),
        "ok.html": page("Fine", '<h2 id="here">Here</h2><a href="index.html">home</a>'),
        # Found by the browser only: they happen when scripts run.
        "console.html": page("Console", "<script>console.error('injected error')</script>"),
        "throws.html": page("Throws", "<script>throw new Error('injected exception')</script>"),
        "fetches.html": page("Fetches", "<script>fetch('http://192.0.2.1/x').catch(() => {})</script>"),
        "late-id.html": page("Late", "<script>document.body.append(Object.assign("
                                     "document.createElement('p'), {id: 'made'}))</script>"),
        # Found from what the page has.
        "untitled.html": page("", "nothing"),
        "links.html": page("Links", '<a href="gone.html">gone</a> <a href="ok.html#nowhere">x</a> '
                                    '<a href="late-id.html#made">made by a script: good</a>'),
        "moved.html": '<html><head><meta http-equiv="refresh" content="0; url=ok.html">'
                      "<title>Moved</title></head></html>",
        # The pages the screenshots are of.
        "docs/transactions.html": page("Guide"),
        "api/rust/cursus/index.html": page("API"),
    })
    result = run(site, tmp_path / "screens")
    assert result.returncode == 1, result.stdout + result.stderr
    problems = [line.removeprefix("browser-check: ") for line in result.stdout.splitlines()]
    found = {p.split(": ", 1)[0] for p in problems if p.endswith(".html") or ".html: " in p}

    def on(name: str, text: str) -> bool:
        return any(p.startswith(f"{name}: ") and text in p for p in problems)

    assert on("console.html", "console.error: injected error"), problems
    assert on("throws.html", "exception: Error: injected exception"), problems
    assert on("fetches.html", "network request to http://192.0.2.1/x"), problems
    assert on("untitled.html", "no title"), problems
    assert on("links.html", "gone.html: broken link"), problems
    assert on("links.html", "no id 'nowhere' in ok.html"), problems
    # Nothing else: the good pages, the redirect and the id a script made pass.
    assert found == {"console.html", "throws.html", "fetches.html", "untitled.html", "links.html"}, problems
    assert "1 of them redirects" in result.stdout
    # A site that is not mdBook's has no search: both searches fail.
    assert "search for 'transaction' found nothing" in problems and "search for 'rebalance' found nothing" in problems
    shots = sorted(p.name for p in (tmp_path / "screens").iterdir())
    assert shots == sorted(f"{n}-{v}.png" for n in ("home", "guide", "api") for v in ("desktop", "phone"))
    assert all((tmp_path / "screens" / s).read_bytes().startswith(b"\x89PNG") for s in shots)
