"""Transaction context managers: ``with producer.transaction():`` (the
synchronous :class:`cursus.Producer`) and ``async with
producer.transaction():`` (:class:`cursus.aio.Producer`).

Both follow one policy:

- entering begins a transaction (``begin_transaction``);
- a block that ends normally commits it (``commit_transaction``). If the
  commit fails with an error that is not retryable (a send of the
  transaction failed, the broker aborted it, ...), the transaction is
  aborted if still open (and the producer not fenced), and the commit error
  raised. A retryable commit error means the outcome is still unknown: the
  transaction is left open, so that ``commit_transaction()`` may be called
  again (or ``abort_transaction()``);
- a block that raises (any exception, ``KeyboardInterrupt`` and
  cancellation included) aborts the transaction, and the block's exception
  propagates. An abort that fails too never replaces it: the abort error is
  attached to it as a note (Python 3.11+) and logged on the ``cursus``
  logger.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import TYPE_CHECKING, Generic, Optional, Protocol, Type, TypeVar

from ._errors import CursusError

if TYPE_CHECKING:
    from ._cursus import Producer

__all__ = ["Transaction", "AsyncTransaction"]

_log = logging.getLogger("cursus")


def _abort_failed(original: BaseException, abort_error: CursusError) -> None:
    """Reports an abort that failed while ``original`` propagates."""
    note = f"abort_transaction() failed as well: {abort_error}"
    add_note = getattr(original, "add_note", None)  # Python 3.11+
    if add_note is not None:
        add_note(note)
    _log.warning("transaction: %s (while handling %r)", note, original)


def _nothing_open(abort_error: CursusError) -> bool:
    """The abort found no open transaction (the failed commit ended it)."""
    return abort_error.code == "invalid_transaction_state"


def _abort_after_commit(commit_error: CursusError) -> bool:
    """True when a failed commit leaves a transaction that should be
    aborted: the outcome is known (not retryable) and the producer is not
    fenced (a fenced producer can do nothing more)."""
    return not commit_error.retryable and commit_error.error_class != "fencing"


class Transaction:
    """One transaction of a synchronous transactional producer, as a context
    manager: ``with producer.transaction(): ...`` begins, commits when the
    block ends normally and aborts when it raises (see the module for the
    details). ``__enter__`` returns the producer."""

    def __init__(self, producer: Producer) -> None:
        self._producer = producer

    def __enter__(self) -> Producer:
        self._producer.begin_transaction()
        return self._producer

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        if exc is None:
            try:
                self._producer.commit_transaction()
            except CursusError as commit_error:
                if _abort_after_commit(commit_error):
                    try:
                        self._producer.abort_transaction()
                    except CursusError as abort_error:
                        if not _nothing_open(abort_error):
                            _abort_failed(commit_error, abort_error)
                raise
            return
        try:
            self._producer.abort_transaction()
        except CursusError as abort_error:
            _abort_failed(exc, abort_error)
        # Returning None (falsy): the block's exception propagates.


class _AsyncTransactional(Protocol):
    """What :class:`AsyncTransaction` needs of the producer."""

    async def begin_transaction(self) -> None: ...
    async def commit_transaction(self) -> None: ...
    async def abort_transaction(self) -> None: ...


_P = TypeVar("_P", bound=_AsyncTransactional)


class AsyncTransaction(Generic[_P]):
    """One transaction of a :class:`cursus.aio.Producer`, as an asynchronous
    context manager: ``async with producer.transaction(): ...`` begins,
    commits when the block ends normally and aborts when it raises or is
    cancelled (see the module for the details). ``__aenter__`` returns the
    producer."""

    def __init__(self, producer: _P) -> None:
        self._producer = producer

    async def __aenter__(self) -> _P:
        await self._producer.begin_transaction()
        return self._producer

    async def __aexit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        ops = self._producer
        if exc is None:
            try:
                await ops.commit_transaction()
            except CursusError as commit_error:
                if _abort_after_commit(commit_error):
                    try:
                        await ops.abort_transaction()
                    except CursusError as abort_error:
                        if not _nothing_open(abort_error):
                            _abort_failed(commit_error, abort_error)
                raise
            return
        try:
            await ops.abort_transaction()
        except CursusError as abort_error:
            _abort_failed(exc, abort_error)


# Public as `cursus.Transaction`: shown so, as the error classes are.
Transaction.__module__ = "cursus"
