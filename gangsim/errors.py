"""The one exception tree of gangsim.

::

    GangsimError                 base; str() is always one line
    ├── InputError               a trace, config or command-line value is wrong (exit 2)
    │                            carries file, line, object and field
    ├── UsageError               the command line is wrong (exit 2)
    └── OutputError              the environment refused a write (disk full, read-only, permission,
                                 --out is a file, …) (exit 2); names the path and the OS error

Scheduling failures are never exceptions: they are ``Status`` values and event-log rows.
Anything else that escapes is a bug (exit 3 with a traceback).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_VALUE_CHARS = 80  # a user value echoed in a message is cut to this many characters, with "…"
MAX_LINE_CHARS = 300  # a whole error line as printed (``gangsim: error: …`` or validate's line)
ERROR_PREFIX = "gangsim: error: "  # how the CLI prints an error line
MAX_MESSAGE_CHARS = MAX_LINE_CHARS - len(ERROR_PREFIX)  # ``str(InputError)``: the line without the prefix
MIN_VALUE_CHARS = 24  # a value is never cut shorter than this to make a line fit
OBJECT_CHARS_WHEN_LONG = 40  # the object ("Pod ns/name") in a line that would not fit otherwise
ELLIPSIS = "…"
# apimachinery's regex hint at the end of a detail, ``… (e.g. 'example.com', regex used for validation
# is '…')``: kept when the line has room, the first thing dropped when it has not
_EXAMPLE_HINT = re.compile(r" \(e\.g\. .*\)$")


def cut(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    """``text`` cut to ``limit`` characters (the last one "…") when longer: the one helper for
    user values shown in messages (a 52 MB pod name must still give a short line)."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


class GangsimError(Exception):
    """Base class; ``str(err)`` is the one line shown to the user."""


@dataclass(frozen=True, slots=True)
class FieldError:
    """An apimachinery-style field error: ``<field>: <type>: <detail>``."""

    field: str
    detail: str
    type: str = "Invalid value"
    value: object = None
    has_value: bool = False

    def __str__(self) -> str:
        return self.render()

    def render(self, value_chars: int = MAX_VALUE_CHARS, detail: str | None = None) -> str:
        """The error with its value cut to ``value_chars`` and (for ``fit``) another detail text."""
        detail = self.detail if detail is None else detail
        if self.has_value:
            return f"{self.field}: {self.type}: {_render_value(self.value, value_chars)}: {detail}"
        if detail:
            return f"{self.field}: {self.type}: {detail}" if self.type else f"{self.field}: {detail}"
        return f"{self.field}: {self.type}"


def _render_value(value: object, limit: int = MAX_VALUE_CHARS) -> str:
    if isinstance(value, str):
        return f'"{cut(value, limit)}"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return cut(str(value), limit)


def fit(message: "str | FieldError", budget: int) -> str:
    """``message`` on one line of at most ``budget`` characters, shortened in this order until it
    fits: the echoed value cut further (not below ``MIN_VALUE_CHARS``), apimachinery's trailing
    ``(e.g. …, regex used for validation is …)`` hint dropped, the end cut with "…". Field path,
    error type and the rule's own words survive the first two steps, so a long value or hint never
    hides what is wrong (issue 17: no error line over 300 characters)."""
    budget = max(budget, 1)
    if isinstance(message, FieldError):
        details = [message.detail]
        if _EXAMPLE_HINT.search(message.detail):
            details.append(_EXAMPLE_HINT.sub("", message.detail))
        for detail in details:
            text = message.render(MAX_VALUE_CHARS, detail).replace("\n", " ")
            if len(text) > budget and message.has_value:
                over = len(text) - budget
                text = message.render(max(MIN_VALUE_CHARS, MAX_VALUE_CHARS - over), detail).replace("\n", " ")
            if len(text) <= budget:
                break
    else:
        text = message.replace("\n", " ")
        if len(text) > budget:
            text = _EXAMPLE_HINT.sub("", text)
    return cut(text, budget)


def invalid(field: str, value: object, detail: str) -> FieldError:
    return FieldError(field, detail, "Invalid value", value, True)


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(field, detail, "Required value")


def unsupported(field: str, detail: str) -> FieldError:
    return FieldError(field, detail, "Unsupported field")


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(field, detail, "Forbidden")


class InputError(GangsimError):
    """Bad input: one line naming file (and line), object and field."""

    def __init__(
        self,
        message: str | FieldError,
        *,
        file: str | None = None,
        line: int | None = None,
        obj: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.obj = obj
        self.detail = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = (f"{self.file}:{self.line}: " if self.line else f"{self.file}: ") if self.file else ""
        head = where + (f"{cut(self.obj)}: " if self.obj else "")
        if self.obj and len(head) + len(str(self.detail)) > MAX_MESSAGE_CHARS:
            head = where + f"{cut(self.obj, OBJECT_CHARS_WHEN_LONG)}: "  # the object's name is often the long value again
        return head.replace("\n", " ") + fit(self.detail, MAX_MESSAGE_CHARS - len(head))

    def located(self, *, file: str | None = None, line: int | None = None, obj: str | None = None) -> "InputError":
        """The same error with missing location parts filled in."""
        return InputError(
            self.detail,
            file=self.file or file,
            line=self.line or line,
            obj=self.obj or obj,
        )


class UsageError(GangsimError):
    """The command line itself is wrong (bad option value, bad expression)."""


class OutputError(GangsimError):
    """Writing ``--out DIR`` failed for a reason of the environment, not a bug:
    ``cannot write report to out/: [Errno 28] No space left on device``."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"cannot write report to {path}: {reason}".replace("\n", " "))

    @classmethod
    def from_os_error(cls, path: str, exc: OSError) -> "OutputError":
        reason = f"[Errno {exc.errno}] {exc.strerror}" if exc.errno is not None and exc.strerror else str(exc)
        return cls(path, reason)
