"""Progress of a long command on stderr (``produce``, ``consume``): records,
records/s and bytes, with a bar and a percentage when the total is known
(the bytes of ``--file``, the records of ``--count``).

Three modes: ``bar`` (stderr is a terminal: one line redrawn in place at
most ten times a second, left on screen at the end), ``lines`` (asked for
with ``--progress`` while stderr is not a terminal: a plain line at most
every second, for logs) and ``off`` (anything else: nothing is written)."""

from __future__ import annotations

import os
import time
from typing import IO, Callable, Optional

BAR = "bar"
LINES = "lines"
OFF = "off"

_BAR_EVERY_S = 0.1
_LINE_EVERY_S = 1.0
_BAR_WIDTH = 24


def choose_mode(stream: IO[str], quiet: bool, asked: bool, screen_free: bool = True) -> str:
    """The mode for a command: ``bar`` on a terminal (when the screen is not
    also where the command's output goes: ``screen_free``), ``lines`` when
    asked for elsewhere, else ``off``; nothing with ``quiet``."""
    if quiet:
        return OFF
    if stream.isatty() and screen_free:
        return BAR
    return LINES if asked else OFF


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB'."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{n} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"


class Progress:
    """Draws the progress of one command on ``stream`` in ``mode``.

    ``update`` is cheap enough to call once per record: it reads the clock
    and draws only when the mode's interval has passed. ``total`` is what
    ``done`` (given to ``update``) counts up to (bytes, records)."""

    def __init__(
        self,
        stream: IO[str],
        mode: str,
        verb: str,
        total: Optional[int] = None,
    ) -> None:
        self.stream = stream
        self.mode = mode
        self.verb = verb
        self.total = total if total else None
        self.line_open = False
        self.start = time.monotonic()
        self.next_draw = self.start + (_BAR_EVERY_S if mode == BAR else _LINE_EVERY_S)

    def update(self, records: int, size: int, done: int = 0, extra: Optional[Callable[[], str]] = None) -> None:
        """Draws if it is time: ``records`` and ``size`` (bytes) so far,
        ``done`` toward ``total``, and what ``extra`` returns (e.g. the
        deliveries), asked only when drawing."""
        if self.mode == OFF:
            return
        now = time.monotonic()
        if now < self.next_draw:
            return
        self.next_draw = now + (_BAR_EVERY_S if self.mode == BAR else _LINE_EVERY_S)
        self._draw(now, records, size, done, extra)

    def finish(self, records: int, size: int, done: int = 0, extra: Optional[Callable[[], str]] = None) -> None:
        """Draws the final state (a bar ends its line); nothing if nothing
        was drawn in ``lines`` mode, where the summary says it all."""
        if self.mode == BAR:
            self._draw(time.monotonic(), records, size, done, extra)
            self.close()

    def close(self) -> None:
        """Ends a bar's line, so that what follows (an error) starts on
        its own; does nothing if no bar line is open."""
        if self.line_open:
            self.stream.write("\n")
            self.stream.flush()
            self.line_open = False

    def _draw(self, now: float, records: int, size: int, done: int, extra: Optional[Callable[[], str]]) -> None:
        elapsed = max(now - self.start, 1e-9)
        figures = f"{records:,} records {self.verb}, {records / elapsed:,.0f} records/s, {human_bytes(size)}"
        if extra is not None:
            figures += f", {extra()}"
        if self.mode == LINES:
            self.stream.write(f"{figures}, {elapsed:.1f} s\n")
            self.stream.flush()
            return
        line = figures
        if self.total is not None:
            fraction = min(max(done / self.total, 0.0), 1.0)
            filled = int(fraction * _BAR_WIDTH)
            line = f"[{'#' * filled}{'-' * (_BAR_WIDTH - filled)}] {fraction * 100:3.0f}% {figures}"
        width = _columns(self.stream)
        if len(line) >= width:
            line = line[: width - 1]
        # Back to the line's start, the line, then clear what a longer
        # previous line left to its right.
        self.stream.write(f"\r{line}\x1b[K")
        self.stream.flush()
        self.line_open = True


def _columns(stream: IO[str]) -> int:
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        columns = 0
    return columns if columns > 0 else 80
