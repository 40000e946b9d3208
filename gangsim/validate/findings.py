"""What ``gangsim validate`` reports: the ``Finding`` type, its codes, how findings are collected,
ordered and rendered, and the CLI's exit code.

Exit-code contract for the CLI (INTERFACE: ``validate`` exits 1 when problems are found):
``exit_code(findings)`` is 1 when there is an error, else 0 — warnings are advice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gangsim.api.objects import Source
from gangsim.errors import MAX_LINE_CHARS, FieldError, InputError, cut, fit

ERROR = "error"
WARNING = "warning"

WARNING_CODES = (
    "pod-before-podgroup",
    "podgroup-missing",
    "priority-mismatch",
    "preemption-policy-mismatch",
    "mixed-scheduler-name",
    "unknown-scheduler",
    "heterogeneous-group",
    "intra-group-affinity",
    "initially-scheduled-monotonic",
    "min-count-unreachable",
    "parallelism-below-min-count",
    "podgroup-unused",
    "workload-template-unused",
    "workload-missing",
    "workload-template-missing",
    "podgroup-template-mismatch",
    "podgroup-before-workload",
    "large-gang",
    "job-without-podgroup",
    "scheduling-gated",
    "loader-note",
)
ERROR_CODES = (
    "syntax",
    "invalid",
    "required",
    "unsupported-value",
    "unknown-field",
    "duplicate",
    "too-many",
    "forbidden",
    "immutable",
    "not-found",
    "no-such-file",
    "input",
)


@dataclass(frozen=True, slots=True)
class Finding:
    severity: str  # "error" | "warning"
    code: str  # short stable id, e.g. "pod-before-podgroup"
    where: str  # "file:line" (or file; "" when no file is involved)
    obj: str  # "Pod ml/train-3" ("" when the problem is not about one object)
    message: str  # one line


def exit_code(findings: Iterable[Finding]) -> int:
    """The CLI's exit code: 1 when any finding is an error, else 0 (warnings are advice)."""
    return 1 if any(f.severity == ERROR for f in findings) else 0


def render_findings(findings: Sequence[Finding]) -> str:
    """One line per finding, ``<where>: <severity>: <obj>: <message> [<code>]``, then ``N errors, M warnings``."""
    lines = []
    for f in findings:
        parts = [p for p in (f.where, f.severity, f.obj, f.message) if p]
        lines.append(f"{': '.join(parts)} [{f.code}]")
    errors = sum(1 for f in findings if f.severity == ERROR)
    warnings = len(findings) - errors
    lines.append(f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')}")
    return "\n".join(lines) + "\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


_TYPE_CODES = {
    "Invalid value": "invalid",
    "Required value": "required",
    "Unsupported value": "unsupported-value",
    "Unsupported field": "unknown-field",
    "Duplicate value": "duplicate",
    "Too many": "too-many",
    "Forbidden": "forbidden",
}


def error_code(detail: object) -> str:
    """The ``ERROR_CODES`` entry of a loader error's detail (a ``FieldError`` or a message)."""
    if isinstance(detail, FieldError):
        if detail.detail == "field is immutable":
            return "immutable"
        return _TYPE_CODES.get(detail.type, "invalid")
    text = str(detail)
    if text.startswith(("invalid YAML", "invalid JSON", "not UTF-8")):
        return "syntax"
    if text.startswith("not found"):
        return "not-found"
    if text == "no such file or directory":
        return "no-such-file"
    return "input"


MAX_WARNING_CHARS = 1000


class Findings:
    """Findings as they are found, sorted at the end by file (command-line order), line, then errors
    before warnings; an identical finding is kept once."""

    def __init__(self) -> None:
        self._found: list[tuple[tuple, Finding]] = []
        self._file_rank: dict[str, int] = {}

    def rank_file(self, file: str) -> None:
        """Give ``file`` the next rank, unless it has one (files sort in the order they are ranked)."""
        self._file_rank.setdefault(file, len(self._file_rank))

    def add(self, severity: str, code: str, file: str | None, line: int | None, obj: str, message: str | FieldError) -> None:
        where = f"{file}:{line}" if file and line else (file or "")
        rank = self._file_rank.get(file or "", -1 if not file else len(self._file_rank))
        key = (rank, line or 0, 0 if severity == ERROR else 1, len(self._found))
        # errors: the same bounds as ``InputError.__str__`` (``run``), the object cut like a value and
        # the whole line as ``render_findings`` prints it within MAX_LINE_CHARS; warnings are gangsim's
        # own advice (a few sentences), only kept to one line and capped
        obj = cut(obj)
        if severity == ERROR:
            printed = sum(len(p) + 2 for p in (where, severity, obj) if p) + len(code) + 3
            message = fit(message, MAX_LINE_CHARS - printed)
        else:
            message = cut(" ".join(str(message).split("\n")), MAX_WARNING_CHARS)
        self._found.append((key, Finding(severity, code, where, obj, message)))

    def error(self, exc: InputError) -> None:
        self.add(ERROR, error_code(exc.detail), exc.file, exc.line, exc.obj or "", exc.detail)

    def warn(self, code: str, source: Source | None, obj: str, message: str) -> None:
        self.add(WARNING, code, source.file if source else None, source.line if source else None, obj, message)

    def result(self) -> list[Finding]:
        out: list[Finding] = []
        seen: set[Finding] = set()
        for _, f in sorted(self._found, key=lambda kf: kf[0]):
            if f not in seen:
                seen.add(f)
                out.append(f)
        return out


__all__ = ["ERROR", "ERROR_CODES", "WARNING", "WARNING_CODES", "Finding", "Findings", "error_code", "exit_code", "render_findings"]
