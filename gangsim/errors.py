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

from dataclasses import dataclass

MAX_VALUE_CHARS = 80  # a user value echoed in a message is cut to this many characters, with "…"
MAX_MESSAGE_CHARS = 1000  # a whole one-line message is cut to this many characters, with "…"
ELLIPSIS = "…"


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
        if self.has_value:
            return f"{self.field}: {self.type}: {_render_value(self.value)}: {self.detail}"
        if self.detail:
            return f"{self.field}: {self.type}: {self.detail}" if self.type else f"{self.field}: {self.detail}"
        return f"{self.field}: {self.type}"


def go_quote(s: str) -> str:
    """Go's ``%q`` of a string (``strconv.Quote``) for the printable ASCII names gangsim accepts,
    as upstream messages print names."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _render_value(value: object) -> str:
    if isinstance(value, str):
        return f'"{cut(value)}"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return cut(str(value))


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
        parts: list[str] = []
        if self.file:
            parts.append(f"{self.file}:{self.line}" if self.line else self.file)
        if self.obj:
            parts.append(cut(self.obj))
        parts.append(str(self.detail))
        return cut(": ".join(parts).replace("\n", " "), MAX_MESSAGE_CHARS)

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
