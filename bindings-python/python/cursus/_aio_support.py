"""Resolves asyncio futures on their loop (called via call_soon_threadsafe)."""

from __future__ import annotations

import asyncio
from typing import Any


def _resolve(fut: "asyncio.Future[Any]", ok: bool, value: Any) -> None:
    if fut.done():  # cancelled meanwhile
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)
