"""One error tree for the whole platform.

Every error a user can see derives from :class:`LineageError`. Each phase has its own subclass so callers
can catch what they can handle. Errors carry a ``hint`` that says what to do next, and a ``transient``
mark that tells bulk jobs whether a retry may help (transient) or the record belongs in the dead-letter
side file (terminal).
"""

from __future__ import annotations


class LineageError(Exception):
    """Root of all platform errors."""

    transient: bool = False

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(LineageError):
    """A setting is missing or malformed."""


class GraphError(LineageError):
    """Any failure of the graph layer."""


class GremlinSyntaxError(GraphError):
    """Gremlin text that cannot be turned into bytecode; carries the position."""

    def __init__(self, message: str, *, line: int, column: int, text: str = "", hint: str | None = None):
        super().__init__(f"{message} at line {line}, column {column}", hint=hint)
        self.line = line
        self.column = column
        self.text = text


class UnsupportedStepError(GraphError):
    """A traversal uses a step the embedded engine does not implement."""


class TraversalError(GraphError):
    """A traversal failed while executing (wrong argument types, bad values, ...)."""


class FailStepError(TraversalError):
    """A traverser reached a ``fail()`` step (Gremlin Server answers it with status 595)."""


class TraversalInterrupted(GraphError):
    """A traversal was stopped before it finished: cancelled, or past its evaluation timeout."""


class TraversalTooLarge(GraphError):
    """A traversal would hold more items at once than its execution's budget allows (a request's memory limit)."""


class GraphBusyError(GraphError):
    """The graph stayed locked by another transaction longer than the lock timeout; retrying may succeed."""

    transient = True


class ConstraintViolation(GraphError):
    """A write would break a schema constraint (e.g. a duplicate unique qualifiedName)."""


class StoreError(GraphError):
    """The durable store cannot be opened or written."""


class StoreLockedError(StoreError):
    """Another process holds the embedded store."""

    transient = True


class StoreCorruptError(StoreError):
    """The durable store is damaged beyond the torn tail a crash may leave."""


class SqlError(LineageError):
    """A statement could not be parsed or traced."""


class IngestError(LineageError):
    """A record could not be ingested."""


class SecurityError(LineageError):
    """Permission, masking, key management or decryption failure."""


def as_lineage_error(exc: BaseException) -> LineageError:
    """The platform error to show a user for any exception a command let escape.

    Platform errors stay as they are; the failures a user's input or environment can cause (missing or
    unwritable paths, binary files, input nested too deep, an unreachable host) get a message and a hint;
    anything else is named as a bug to report.

    >>> str(as_lineage_error(FileNotFoundError(2, "No such file or directory", "/x/y.json")))
    'cannot use /x/y.json: No such file or directory (check that the path exists and that you may read or write it)'
    """
    if isinstance(exc, LineageError):
        return exc
    if isinstance(exc, UnicodeDecodeError):
        return LineageError(
            f"input is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})",
            hint="pass a text file in UTF-8",
        )
    if isinstance(exc, RecursionError):
        return LineageError("input nested too deeply to process", hint="flatten the input or split it")
    if isinstance(exc, MemoryError):
        return LineageError("out of memory", hint="give the process more memory or the command smaller input")
    if isinstance(exc, OSError) and exc.filename is not None:
        return LineageError(
            f"cannot use {exc.filename}: {exc.strerror or exc}",
            hint="check that the path exists and that you may read or write it",
        )
    if isinstance(exc, OSError):
        return LineageError(f"{exc}", hint="check the host, port and network, then retry")
    detail = " ".join(str(exc).split())[:300]
    return LineageError(
        f"unexpected {type(exc).__name__}: {detail}",
        hint="this is a bug: rerun with LINEAGE_DEBUG=1 to see the traceback and report it",
    )
