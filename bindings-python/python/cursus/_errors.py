"""The exception hierarchy: one class per engine error class, rooted at
:class:`CursusError`. Engine errors are raised as the subclass of their
class; timeouts also subclass the built-in :class:`TimeoutError`, and use of a
closed object (or of an object after ``fork()``) raises :class:`ClosedError`.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Dict, Optional, Type

if TYPE_CHECKING:
    from ._cursus import ReplayProof

__all__ = [
    "CursusError",
    "ValidationError",
    "AuthorizationError",
    "RoutingError",
    "AvailabilityError",
    "ConflictError",
    "FencingError",
    "NotFoundError",
    "InternalError",
    "TimeoutError",
    "ClosedError",
]


class CursusError(Exception):
    """Any error reported by the Cursus engine or broker: a code, one of eight
    classes, whether a retry may succeed, a message and structured fields
    (the attributes below).

    ``str(e)`` is the engine error's readable form, the same text in every
    language: ``code (class[, retryable]): message; field=value, ...``.
    """

    error_class: str = "internal"
    """One of the eight classes (``validation``, ``authorization``,
    ``routing``, ``availability``, ``conflict``, ``fencing``, ``not_found``,
    ``internal``); each subclass has its own."""
    proof: Optional[ReplayProof] = None
    """The :class:`cursus.ReplayProof` of a replay proof or range read that
    failed because the proof is not complete (codes
    ``aggregate_proof_<status>`` and ``aggregate_range_<status>``); ``None``
    for every other error."""

    def __init__(
        self,
        message: str = "",
        *,
        code: str = "",
        retryable: bool = False,
        fields: Optional[Dict[str, str]] = None,
        kind: str = "broker",
        text: Optional[str] = None,
    ) -> None:
        super().__init__(text if text is not None else message)
        self.code = code
        """Machine-readable code (the broker's, e.g. ``topic_not_found``, or a
        local one such as ``timeout``, ``closed``, ``used_after_fork``)."""
        self.retryable = retryable
        """Whether the same operation may be attempted again."""
        self.message = message
        """Human-readable detail."""
        self.fields: Dict[str, str] = dict(fields or {})
        """Structured details (e.g. ``leader``)."""
        self.kind = kind
        """Where the error comes from (``broker``, ``io``, ``tls``,
        ``timeout``, ``protocol``, ``closed``, ``invalid_argument``,
        ``internal``). A failed TLS handshake is kind ``tls``, code
        ``tls_handshake_failed``, an :class:`AuthorizationError` with
        ``fields["reason"]``."""
        self.status = self.error_class
        """What picked the exception class, the same status C returns and
        C++/Java use: the class name, or ``timeout``, ``closed``,
        ``invalid_argument`` for local failures."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.message


class ValidationError(CursusError):
    """The request or an argument is invalid."""

    error_class = "validation"


class AuthorizationError(CursusError):
    """Authentication or authorization failed."""

    error_class = "authorization"


class RoutingError(CursusError):
    """Sent to the wrong broker."""

    error_class = "routing"


class AvailabilityError(CursusError):
    """Temporarily unavailable (network, overload, timeout)."""

    error_class = "availability"


class ConflictError(CursusError):
    """The request conflicts with the current state."""

    error_class = "conflict"


class FencingError(CursusError):
    """A newer generation, owner or epoch has fenced this one."""

    error_class = "fencing"


class NotFoundError(CursusError):
    """The named resource does not exist."""

    error_class = "not_found"


class InternalError(CursusError):
    """The broker or the engine failed internally."""

    error_class = "internal"


class TimeoutError(AvailabilityError, builtins.TimeoutError):  # noqa: A001
    """A deadline passed (also a built-in :class:`TimeoutError`)."""

    error_class = "availability"


class ClosedError(ValidationError):
    """The object is closed, or was created before ``fork()``."""

    error_class = "validation"


# The classes are part of the public package: show them as `cursus.X`
# (tracebacks, repr), not as the private module that defines them.
for _cls in (
    CursusError,
    ValidationError,
    AuthorizationError,
    RoutingError,
    AvailabilityError,
    ConflictError,
    FencingError,
    NotFoundError,
    InternalError,
    TimeoutError,
    ClosedError,
):
    _cls.__module__ = "cursus"
del _cls

# The exception class of each status of the bridge (`cursus_bridge::error::
# Status`, the value C returns and C++/Java pick their exceptions by): the
# eight classes, then the local kinds that take precedence over the class.
_BY_STATUS: Dict[str, Type[CursusError]] = {
    "validation": ValidationError,
    "authorization": AuthorizationError,
    "routing": RoutingError,
    "availability": AvailabilityError,
    "conflict": ConflictError,
    "fencing": FencingError,
    "not_found": NotFoundError,
    "internal": InternalError,
    "timeout": TimeoutError,
    "closed": ClosedError,
    "invalid_argument": ValidationError,
}


def _from_engine(
    status: str,
    kind: str,
    code: str,
    error_class: str,
    retryable: bool,
    message: str,
    fields: Dict[str, str],
    text: str,
) -> CursusError:
    """Builds the exception for an engine error (called by the native module):
    the class is the one of the bridge's ``status``; ``text`` is the engine
    error's readable form, which ``str()`` returns."""
    cls = _BY_STATUS.get(status, CursusError)
    err = cls(message, code=code, retryable=retryable, fields=fields, kind=kind, text=text)
    err.status = status
    if err.error_class != error_class:
        err.error_class = error_class
    return err
